/*
 * Helpers for the `simulate` end-to-end suites (tests/sim): run the built kubesched binary
 * (KS_KUBESCHED_BIN, defined by tests/CMakeLists.txt) and read its JSON decisions. Header-only,
 * so each suite's compile definitions apply.
 */
#ifndef KS_TESTS_SIMRUN_H
#define KS_TESTS_SIMRUN_H

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs kubesched with args; returns its exit status and stdout (caller frees); stderr in err. */
static inline int sim_run(const char *args, char **out, char *err, size_t errlen)
{
    char cmd[2048], errpath[] = "/tmp/ks-sim-err-XXXXXX";
    int fd = mkstemp(errpath);
    cr_assert(fd >= 0);
    close(fd);
    snprintf(cmd, sizeof(cmd), "%s %s 2>%s", KS_KUBESCHED_BIN, args, errpath);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    for (size_t r; (r = fread(buf + n, 1, cap - n - 1, p)) > 0;) {
        n += r;
        if (n + 1 >= cap)
            buf = realloc(buf, cap *= 2);
    }
    buf[n] = '\0';
    int status = pclose(p);
    FILE *e = fopen(errpath, "r");
    size_t en = e ? fread(err, 1, errlen - 1, e) : 0;
    err[en] = '\0';
    if (e)
        fclose(e);
    unlink(errpath);
    *out = buf;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static inline cJSON *sim_json(const char *args)
{
    char *out, err[4096], full[1024];
    snprintf(full, sizeof(full), "simulate --output json %s", args);
    int rc = sim_run(full, &out, err, sizeof(err));
    cr_assert_eq(rc, 0, "kubesched %s failed (%d): %s", full, rc, err);
    cJSON *doc = cJSON_Parse(out);
    cr_assert_not_null(doc, "not JSON: %s", out);
    free(out);
    return doc;
}

/* The last entry for ns/name (its outcome). */
static inline const cJSON *sim_pod_entry(const cJSON *doc, const char *ns, const char *name)
{
    const cJSON *pods = cJSON_GetObjectItem(doc, "pods"), *it, *found = NULL;
    cJSON_ArrayForEach(it, pods)
    {
        if (!strcmp(cJSON_GetObjectItem(it, "namespace")->valuestring, ns) &&
            !strcmp(cJSON_GetObjectItem(it, "name")->valuestring, name))
            found = it;
    }
    cr_assert_not_null(found, "no entry for %s/%s", ns, name);
    return found;
}

static inline const char *sim_field(const cJSON *e, const char *k)
{
    const cJSON *v = cJSON_GetObjectItem(e, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

#endif
