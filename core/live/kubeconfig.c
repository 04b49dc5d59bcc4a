/*
 * Kubeconfig files and the in-cluster config (see kubeconfig.h). The file is read with libyaml
 * into cJSON (ks__yaml_reader_next, within its limits), then the chosen context, cluster and user
 * are looked up and checked the way clientcmd's validation checks them, each failure becoming one
 * sentence that names the file, the context/cluster/user and what would be valid.
 */
#define _GNU_SOURCE /* asprintf, vasprintf */
#include "live/kubeconfig.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <yaml.h>

#include <cjson/cJSON.h>

#include "kubesched/plugin.h"
#include "util/log.h"
#include "util/clock.h"
#include "util/readfile.h"
#include "api/manifest.h"
#include "api/yaml_read.h"

#define TOKEN_RECHECK_NS (60LL * 1000000000LL) /* client-go's cached file token source period */
#define MAX_FILE_BYTES (64u << 20)

struct ks_kc_token {
    pthread_mutex_t mu; /* guards everything below and the pems' tmpfile fields */
    char *token;        /* current bearer token, or NULL */
    char *file;         /* token file re-read on change, or NULL for a static token */
    char *desc;         /* where the token comes from, for messages */
    ks_clock_fn clock;
    void *clock_ud;
    int64_t last_check;
    struct timespec mtime;
    off_t size;
    ino_t ino;
};

int64_t ks__clock_monotonic(void *ud)
{
    (void)ud;
    return ks__clock_now_ns();
}

/* --- small helpers ------------------------------------------------------------------------ */

KS_PRINTF(4, 5) static int fail(int rc, char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return rc;
}

static char *xstrdup(const char *s) { return s ? strdup(s) : NULL; }

KS_PRINTF(1, 2) static char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

/* Reads a whole file; NUL-terminated. Returns 0 or -errno (-EFBIG over MAX_FILE_BYTES). */
static int read_file(const char *path, char **out, size_t *len)
{
    return ks__read_file(path, MAX_FILE_BYTES, out, len);
}

/* Standard base64 as Go's StdEncoding (padding optional, whitespace ignored). Returns the number
 * of bytes, or -1 - offset of the first bad character. out gets a NUL after the data. */
static long b64_decode(const char *in, unsigned char **out)
{
    size_t n = strlen(in);
    unsigned char *buf = malloc(n / 4 * 3 + 4);
    if (!buf)
        return LONG_MIN;
    unsigned acc = 0;
    int bits = 0, pad = 0;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        int c = (unsigned char)in[i], v;
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
            continue;
        if (c == '=') {
            pad++;
            continue;
        }
        if (pad) /* data after padding */
            v = -1;
        else if (c >= 'A' && c <= 'Z')
            v = c - 'A';
        else if (c >= 'a' && c <= 'z')
            v = c - 'a' + 26;
        else if (c >= '0' && c <= '9')
            v = c - '0' + 52;
        else if (c == '+')
            v = 62;
        else if (c == '/')
            v = 63;
        else
            v = -1;
        if (v < 0) {
            free(buf);
            return -1 - (long)i;
        }
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            buf[o++] = (unsigned char)(acc >> bits);
        }
    }
    if (bits >= 6 || pad > 2) { /* a dangling 6-bit group cannot encode a byte */
        free(buf);
        return -1 - (long)n;
    }
    buf[o] = '\0';
    *out = buf;
    return (long)o;
}

static int has_pem(const char *text, const char *what)
{
    const char *p = strstr(text, "-----BEGIN ");
    for (; p; p = strstr(p + 1, "-----BEGIN ")) {
        const char *end = strstr(p + 11, "-----");
        if (!end)
            return 0;
        size_t l = (size_t)(end - (p + 11));
        if (!strcmp(what, "KEY")) {
            if (l >= 11 && !memcmp(end - 11, "PRIVATE KEY", 11))
                return 1;
        } else if (l == strlen(what) && !memcmp(p + 11, what, l)) {
            return 1;
        }
    }
    return 0;
}

static char *trim_dup(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        n--;
    return strndup(s, n);
}

/* `rel` against the directory of `base` (a file), made absolute as filepath.Abs would. */
static char *resolve_path(const char *base, const char *rel)
{
    if (rel[0] == '/')
        return strdup(rel);
    char cwd[PATH_MAX];
    const char *slash = strrchr(base, '/');
    if (base[0] == '/')
        return xasprintf("%.*s/%s", (int)(slash - base), base, rel);
    if (!getcwd(cwd, sizeof(cwd)))
        strcpy(cwd, ".");
    if (slash)
        return xasprintf("%s/%.*s/%s", cwd, (int)(slash - base), base, rel);
    return xasprintf("%s/%s", cwd, rel);
}

/* --- kubeconfig structure ------------------------------------------------------------------ */

/* Parse state: the file's name for messages and its document. */
typedef struct kc_parse {
    const char *path;
    cJSON *root;
    char *err;
    size_t errlen;
} kc_parse;

/* A string field: absent or null leaves *out NULL. */
static int get_str(kc_parse *p, const cJSON *obj, const char *key, const char *where,
                   const char **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = NULL;
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsString(v))
        return fail(KS_EINVAL, p->err, p->errlen,
                    "kubeconfig %s: %s.%s: expected a string, got %s (quote the value)", p->path,
                    where, key, ks__yaml_value_phrase(v));
    *out = v->valuestring;
    return 0;
}

static int get_bool(kc_parse *p, const cJSON *obj, const char *key, const char *where, int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = 0;
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsBool(v))
        return fail(KS_EINVAL, p->err, p->errlen,
                    "kubeconfig %s: %s.%s: expected true or false, got %s", p->path, where, key,
                    ks__yaml_value_phrase(v));
    *out = cJSON_IsTrue(v);
    return 0;
}

/* Finds `want` in the named list `list` ("contexts": [{name, context: {...}}]). Fills `names`
 * with every name for messages, checks shapes and duplicates. *found is the inner mapping
 * (an empty one is fine) and stays NULL when `want` is absent. *where gets "contexts[i]". */
static int find_named(kc_parse *p, const char *list, const char *inner, const char *want,
                      const cJSON **found, char *names, size_t nameslen, char *where,
                      size_t wherelen)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(p->root, list);
    *found = NULL;
    names[0] = '\0';
    if (!arr || cJSON_IsNull(arr))
        return 0;
    if (!cJSON_IsArray(arr))
        return fail(KS_EINVAL, p->err, p->errlen, "kubeconfig %s: %s: expected a list, got %s",
                    p->path, list, ks__yaml_value_phrase(arr));
    int i = 0;
    size_t used = 0;
    for (const cJSON *it = arr->child; it; it = it->next, i++) {
        if (!cJSON_IsObject(it))
            return fail(KS_EINVAL, p->err, p->errlen,
                        "kubeconfig %s: %s[%d]: expected a mapping with name and %s, got %s",
                        p->path, list, i, inner, ks__yaml_value_phrase(it));
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(it, "name");
        if (name && !cJSON_IsNull(name) && !cJSON_IsString(name))
            return fail(KS_EINVAL, p->err, p->errlen,
                        "kubeconfig %s: %s[%d].name: expected a string, got %s (quote the value)",
                        p->path, list, i, ks__yaml_value_phrase(name));
        if (!cJSON_IsString(name) || !name->valuestring[0])
            return fail(KS_EINVAL, p->err, p->errlen, "kubeconfig %s: %s[%d]: no name", p->path,
                        list, i);
        for (const cJSON *prev = arr->child; prev != it; prev = prev->next) {
            const cJSON *pn = cJSON_GetObjectItemCaseSensitive(prev, "name");
            if (!strcmp(pn->valuestring, name->valuestring))
                return fail(KS_EINVAL, p->err, p->errlen,
                            "kubeconfig %s: %s[%d]: duplicate name \"%s\"", p->path, list, i,
                            name->valuestring);
        }
        int w = used < nameslen ? snprintf(names + used, nameslen - used, "%s%s", used ? ", " : "",
                                           name->valuestring)
                                : 0;
        if (w > 0)
            used += (size_t)w;
        if (used >= nameslen && nameslen > 4)
            strcpy(names + nameslen - 4, "...");
        if (want && !strcmp(name->valuestring, want)) {
            const cJSON *in = cJSON_GetObjectItemCaseSensitive(it, inner);
            snprintf(where, wherelen, "%s[%d].%s", list, i, inner);
            if (in && !cJSON_IsNull(in) && !cJSON_IsObject(in))
                return fail(KS_EINVAL, p->err, p->errlen,
                            "kubeconfig %s: %s: expected a mapping, got %s", p->path, where,
                            ks__yaml_value_phrase(in));
            static const cJSON empty = {0};
            *found = (in && cJSON_IsObject(in)) ? in : &empty;
        }
    }
    return 0;
}

static const char *names_or_none(const char *names, char *buf, size_t len, const char *list)
{
    if (names[0])
        snprintf(buf, len, "%s: %s", list, names);
    else
        snprintf(buf, len, "the file has no %s", list);
    return buf;
}

/* Normalises a server URL: "host:port" gets https://, the scheme must be http(s), no trailing
 * slash. Returns NULL (with *why) when unusable. */
static char *normalize_server(const char *in, const char **why)
{
    char *s = trim_dup(in);
    if (!s) {
        *why = "out of memory";
        return NULL;
    }
    if (!strstr(s, "://")) {
        char *t = xasprintf("https://%s", s);
        free(s);
        s = t;
        if (!s) {
            *why = "out of memory";
            return NULL;
        }
    }
    const char *rest = NULL;
    if (!strncmp(s, "https://", 8))
        rest = s + 8;
    else if (!strncmp(s, "http://", 7))
        rest = s + 7;
    if (!rest) {
        *why = "the scheme must be https:// or http://";
        free(s);
        return NULL;
    }
    if (!*rest || *rest == '/') {
        *why = "no host";
        free(s);
        return NULL;
    }
    size_t n = strlen(s);
    while (n && s[n - 1] == '/')
        s[--n] = '\0';
    return s;
}

static ks_kubeconfig *kc_new(void)
{
    ks_kubeconfig *kc = calloc(1, sizeof(*kc));
    if (!kc)
        return NULL;
    kc->tok = calloc(1, sizeof(*kc->tok));
    if (!kc->tok) {
        free(kc);
        return NULL;
    }
    pthread_mutex_init(&kc->tok->mu, NULL);
    kc->tok->clock = ks__clock_monotonic;
    return kc;
}

static void pem_clear(ks_kc_pem *pem)
{
    if (pem->tmpfile)
        unlink(pem->tmpfile);
    free(pem->tmpfile);
    free(pem->file);
    free(pem->data);
    free(pem->desc);
    memset(pem, 0, sizeof(*pem));
}

void ks__kubeconfig_free(ks_kubeconfig *kc)
{
    if (!kc)
        return;
    free(kc->origin);
    free(kc->path);
    free(kc->context);
    free(kc->cluster);
    free(kc->user);
    free(kc->server);
    free(kc->namespace);
    free(kc->tls_server_name);
    free(kc->proxy_url);
    pem_clear(&kc->ca);
    pem_clear(&kc->cert);
    pem_clear(&kc->key);
    if (kc->tok) {
        pthread_mutex_destroy(&kc->tok->mu);
        free(kc->tok->token);
        free(kc->tok->file);
        free(kc->tok->desc);
        free(kc->tok);
    }
    free(kc);
}

/* Fills `pem` from a file field and a data field of `obj` (one of them at most). `pem_kind` is
 * what the PEM must contain ("CERTIFICATE" or "KEY"). `owner` is `cluster "c"` or `user "u"`. */
static int load_pem(kc_parse *p, const cJSON *obj, const char *where, const char *owner,
                    const char *file_key, const char *data_key, const char *pem_kind,
                    ks_kc_pem *pem)
{
    const char *file, *data;
    int rc;
    if ((rc = get_str(p, obj, file_key, where, &file)) ||
        (rc = get_str(p, obj, data_key, where, &data)))
        return rc;
    if (file && !*file)
        file = NULL;
    if (data && !*data)
        data = NULL;
    if (file && data)
        return fail(KS_EINVAL, p->err, p->errlen,
                    "kubeconfig %s: %s: both %s and %s are set; keep one", p->path, owner, file_key,
                    data_key);
    const char *expect = !strcmp(pem_kind, "KEY")
                             ? "a PEM private key (-----BEGIN ... PRIVATE KEY-----)"
                             : "a PEM certificate (-----BEGIN CERTIFICATE-----)";
    if (data) {
        long n = b64_decode(data, &pem->data);
        if (n == LONG_MIN)
            return fail(KS_ENOMEM, p->err, p->errlen, "kubeconfig %s: out of memory", p->path);
        if (n < 0)
            return fail(KS_EINVAL, p->err, p->errlen,
                        "kubeconfig %s: %s: %s: invalid base64 at offset %ld (the field holds the "
                        "base64 of the PEM file, as `base64 -w0` prints it)",
                        p->path, owner, data_key, -1 - n);
        pem->len = (size_t)n;
        pem->desc = xasprintf("%s of %s in kubeconfig %s", data_key, owner, p->path);
        if (!pem->desc)
            return fail(KS_ENOMEM, p->err, p->errlen, "kubeconfig %s: out of memory", p->path);
        if (memchr(pem->data, '\0', pem->len) || !has_pem((const char *)pem->data, pem_kind))
            return fail(KS_EINVAL, p->err, p->errlen, "kubeconfig %s: %s: %s: not %s", p->path,
                        owner, data_key, expect);
        return 0;
    }
    if (!file)
        return 0;
    pem->file = resolve_path(p->path, file);
    pem->desc = xstrdup(pem->file);
    if (!pem->file || !pem->desc)
        return fail(KS_ENOMEM, p->err, p->errlen, "kubeconfig %s: out of memory", p->path);
    char *text;
    if ((rc = read_file(pem->file, &text, NULL)) != 0)
        return fail(KS_EINVAL, p->err, p->errlen, "kubeconfig %s: %s: %s %s: %s", p->path, owner,
                    file_key, pem->file, strerror(-rc));
    int ok = has_pem(text, pem_kind);
    free(text);
    if (!ok)
        return fail(KS_EINVAL, p->err, p->errlen, "kubeconfig %s: %s: %s %s: not %s", p->path,
                    owner, file_key, pem->file, expect);
    return 0;
}

/* Reads a token file, trimmed as client-go trims it, and records what the change check needs. */
static int read_token_file(struct ks_kc_token *t, const char *file, char **out, char *why,
                           size_t whylen)
{
    struct stat st;
    char *text;
    int rc;
    if (stat(file, &st) != 0) {
        snprintf(why, whylen, "%s", strerror(errno));
        return KS_EIO;
    }
    if ((rc = read_file(file, &text, NULL)) != 0) {
        snprintf(why, whylen, "%s", strerror(-rc));
        return rc == -ENOMEM ? KS_ENOMEM : KS_EIO;
    }
    char *tok = trim_dup(text);
    free(text);
    if (!tok)
        return KS_ENOMEM;
    long ctl = ks__kubeconfig_token_ctl(tok);
    if (!*tok || ctl >= 0) {
        if (!*tok)
            snprintf(why, whylen, "is empty");
        else if (strpbrk(tok, "\r\n"))
            snprintf(why, whylen, "holds more than one line");
        else
            snprintf(why, whylen, "contains a control character (byte 0x%02x at offset %ld)",
                     (unsigned char)tok[ctl], ctl);
        free(tok);
        return KS_EINVAL;
    }
    t->mtime = st.st_mtim;
    t->size = st.st_size;
    t->ino = st.st_ino;
    *out = tok;
    return 0;
}

static int load_user(kc_parse *p, ks_kubeconfig *kc, const cJSON *u, const char *where)
{
    char owner[300];
    int rc;
    snprintf(owner, sizeof(owner), "user \"%s\"", kc->user);
    static const struct {
        const char *key, *what;
    } unsupported[] = {
        {"exec", "exec credential plugins are not supported"},
        {"auth-provider", "auth-provider plugins are not supported"},
        {"username", "basic authentication (username/password) is not supported"},
        {"password", "basic authentication (username/password) is not supported"},
        {"as", "impersonation (as) is not supported"},
    };
    for (size_t i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(u, unsupported[i].key);
        if (v && !cJSON_IsNull(v) && !(cJSON_IsString(v) && !v->valuestring[0]))
            return fail(KS_EINVAL, p->err, p->errlen,
                        "kubeconfig %s: %s: %s; use token, tokenFile or client-certificate and "
                        "client-key",
                        p->path, owner, unsupported[i].what);
    }
    if ((rc = load_pem(p, u, where, owner, "client-certificate", "client-certificate-data",
                       "CERTIFICATE", &kc->cert)) ||
        (rc = load_pem(p, u, where, owner, "client-key", "client-key-data", "KEY", &kc->key)))
        return rc;
    if ((kc->cert.desc != NULL) != (kc->key.desc != NULL))
        return fail(KS_EINVAL, p->err, p->errlen,
                    "kubeconfig %s: %s: %s is set but neither %s nor %s-data", p->path, owner,
                    kc->cert.desc ? "client-certificate" : "client-key",
                    kc->cert.desc ? "client-key" : "client-certificate",
                    kc->cert.desc ? "client-key" : "client-certificate");

    const char *token, *token_file;
    if ((rc = get_str(p, u, "token", where, &token)) ||
        (rc = get_str(p, u, "tokenFile", where, &token_file)))
        return rc;
    struct ks_kc_token *t = kc->tok;
    long ctl = token ? ks__kubeconfig_token_ctl(token) : -1;
    if (ctl >= 0)
        return fail(KS_EINVAL, p->err, p->errlen,
                    "kubeconfig %s: %s: token: contains a control character (byte 0x%02x at "
                    "offset %ld); a bearer token is one line of printable characters",
                    p->path, owner, (unsigned char)token[ctl], ctl);
    if (token && *token) {
        if (!(t->token = strdup(token)) ||
            !(t->desc = xasprintf("token of %s in kubeconfig %s", owner, p->path)))
            return fail(KS_ENOMEM, p->err, p->errlen, "kubeconfig %s: out of memory", p->path);
    }
    if (token_file && *token_file) {
        char why[256];
        char *tok = NULL;
        if (!(t->file = resolve_path(p->path, token_file)))
            return fail(KS_ENOMEM, p->err, p->errlen, "kubeconfig %s: out of memory", p->path);
        rc = read_token_file(t, t->file, &tok, why, sizeof(why));
        if (rc == KS_ENOMEM)
            return fail(rc, p->err, p->errlen, "kubeconfig %s: out of memory", p->path);
        if (rc && !t->token) /* with a token beside it, client-go falls back to that token */
            return fail(KS_EINVAL, p->err, p->errlen, "kubeconfig %s: %s: tokenFile %s: %s",
                        p->path, owner, t->file, why);
        if (tok) {
            free(t->token);
            t->token = tok;
        }
        free(t->desc);
        if (!(t->desc = xstrdup(t->file)))
            return fail(KS_ENOMEM, p->err, p->errlen, "kubeconfig %s: out of memory", p->path);
        t->last_check = t->clock(t->clock_ud);
    }
    return 0;
}

static int load_cluster(kc_parse *p, ks_kubeconfig *kc, const cJSON *c, const char *where)
{
    char owner[300];
    const char *server, *tsn, *proxy, *why;
    int rc;
    snprintf(owner, sizeof(owner), "cluster \"%s\"", kc->cluster);
    if ((rc = get_str(p, c, "server", where, &server)) ||
        (rc = get_str(p, c, "tls-server-name", where, &tsn)) ||
        (rc = get_str(p, c, "proxy-url", where, &proxy)) ||
        (rc = get_bool(p, c, "insecure-skip-tls-verify", where, &kc->insecure)))
        return rc;
    if (!server || !*server)
        return fail(KS_EINVAL, p->err, p->errlen,
                    "kubeconfig %s: %s: no server defined (cluster.server, e.g. "
                    "https://127.0.0.1:6443)",
                    p->path, owner);
    if (!(kc->server = normalize_server(server, &why)))
        return fail(KS_EINVAL, p->err, p->errlen, "kubeconfig %s: %s: server \"%s\": %s", p->path,
                    owner, server, why);
    if ((tsn && *tsn && !(kc->tls_server_name = strdup(tsn))) ||
        (proxy && *proxy && !(kc->proxy_url = strdup(proxy))))
        return fail(KS_ENOMEM, p->err, p->errlen, "kubeconfig %s: out of memory", p->path);
    if ((rc = load_pem(p, c, where, owner, "certificate-authority", "certificate-authority-data",
                       "CERTIFICATE", &kc->ca)))
        return rc;
    if (kc->insecure && kc->ca.desc)
        return fail(KS_EINVAL, p->err, p->errlen,
                    "kubeconfig %s: %s: insecure-skip-tls-verify cannot be combined with %s "
                    "(client-go refuses a root certificate with the insecure flag); drop one",
                    p->path, owner,
                    kc->ca.data ? "certificate-authority-data" : "certificate-authority");
    return 0;
}

static int parse_kubeconfig(kc_parse *p, const char *want_ctx, ks_kubeconfig *kc)
{
    char names[512], list[600], where[64];
    const char *cur = NULL, *cluster, *user, *ns;
    const cJSON *ctx, *cl, *us;
    int rc;

    if (!cJSON_IsObject(p->root))
        return fail(KS_EINVAL, p->err, p->errlen,
                    "kubeconfig %s: expected a mapping with clusters, contexts and users, got %s",
                    p->path, ks__yaml_value_phrase(p->root));
    if ((rc = get_str(p, p->root, "current-context", "(top level)", &cur)))
        return rc;
    const char *name = want_ctx && *want_ctx ? want_ctx : cur;
    if ((rc = find_named(p, "contexts", "context", name, &ctx, names, sizeof(names), where,
                         sizeof(where))))
        return rc;
    if (!name || !*name)
        return fail(KS_EINVAL, p->err, p->errlen,
                    "kubeconfig %s: no context selected: current-context is not set (%s)", p->path,
                    names_or_none(names, list, sizeof(list), "contexts"));
    if (!ctx)
        return fail(KS_ENOTFOUND, p->err, p->errlen, "kubeconfig %s: context \"%s\" not found (%s)",
                    p->path, name, names_or_none(names, list, sizeof(list), "contexts"));
    if ((rc = get_str(p, ctx, "cluster", where, &cluster)) ||
        (rc = get_str(p, ctx, "user", where, &user)) ||
        (rc = get_str(p, ctx, "namespace", where, &ns)))
        return rc;
    if (!(kc->context = strdup(name)) || (ns && *ns && !(kc->namespace = strdup(ns))))
        return fail(KS_ENOMEM, p->err, p->errlen, "kubeconfig %s: out of memory", p->path);
    if (!cluster || !*cluster)
        return fail(KS_EINVAL, p->err, p->errlen, "kubeconfig %s: context \"%s\" names no cluster",
                    p->path, name);

    if ((rc = find_named(p, "clusters", "cluster", cluster, &cl, names, sizeof(names), where,
                         sizeof(where))))
        return rc;
    if (!cl)
        return fail(KS_ENOTFOUND, p->err, p->errlen,
                    "kubeconfig %s: context \"%s\": cluster \"%s\" not found (%s)", p->path, name,
                    cluster, names_or_none(names, list, sizeof(list), "clusters"));
    if (!(kc->cluster = strdup(cluster)))
        return fail(KS_ENOMEM, p->err, p->errlen, "kubeconfig %s: out of memory", p->path);
    if ((rc = load_cluster(p, kc, cl, where)))
        return rc;

    if (!user || !*user)
        return 0; /* anonymous, as clientcmd allows */
    if ((rc =
             find_named(p, "users", "user", user, &us, names, sizeof(names), where, sizeof(where))))
        return rc;
    if (!us)
        return fail(KS_ENOTFOUND, p->err, p->errlen,
                    "kubeconfig %s: context \"%s\": user \"%s\" not found (%s)", p->path, name,
                    user, names_or_none(names, list, sizeof(list), "users"));
    if (!(kc->user = strdup(user)))
        return fail(KS_ENOMEM, p->err, p->errlen, "kubeconfig %s: out of memory", p->path);
    return load_user(p, kc, us, where);
}

/* The file's one YAML document into p->root, within the reader's limits (nesting, aliases). */
static int read_document(kc_parse *p, const char *text, size_t len)
{
    ks_yaml_reader *r = ks__yaml_reader_new(text, len, NULL);
    ks_yaml_doc doc = {0};
    char msg[512];
    int rc = r ? ks__yaml_reader_next(r, &doc, msg, sizeof(msg)) : KS_ENOMEM;
    ks__yaml_reader_free(r);
    if (rc == KS_ENOMEM)
        return fail(KS_ENOMEM, p->err, p->errlen, "kubeconfig %s: out of memory", p->path);
    if (rc < 0)
        return fail(rc, p->err, p->errlen, "kubeconfig %s:%s", p->path, msg);
    if (rc == 0 || cJSON_IsNull(doc.root)) {
        cJSON_Delete(doc.root);
        return fail(KS_EINVAL, p->err, p->errlen, "kubeconfig %s: the file is empty", p->path);
    }
    p->root = doc.root;
    return 0;
}

int ks__kubeconfig_load(const char *path, const char *context, ks_kubeconfig **out, char *err,
                        size_t errlen)
{
    char *text = NULL;
    size_t len = 0;
    int rc;
    kc_parse p = {.path = path, .err = err, .errlen = errlen};
    ks_kubeconfig *kc = NULL;

    *out = NULL;
    if ((rc = read_file(path, &text, &len)) == -EISDIR)
        return fail(KS_EIO, err, errlen, "kubeconfig %s: is a directory, not a kubeconfig file",
                    path);
    if (rc != 0)
        return fail(rc == -ENOMEM ? KS_ENOMEM : KS_EIO, err, errlen, "kubeconfig %s: %s", path,
                    strerror(-rc));
    if ((rc = read_document(&p, text, len)) != 0)
        goto out;
    if (!p.root || !(kc = kc_new()) || !(kc->path = strdup(path)) ||
        !(kc->origin = xasprintf("kubeconfig %s", path))) {
        rc = fail(KS_ENOMEM, err, errlen, "kubeconfig %s: out of memory", path);
        goto out;
    }
    if ((rc = parse_kubeconfig(&p, context, kc)) != 0)
        goto out;
    *out = kc;
    kc = NULL;
out:
    ks__kubeconfig_free(kc);
    cJSON_Delete(p.root);
    free(text);
    return rc;
}

/* --- in-cluster ---------------------------------------------------------------------------- */

int ks__kubeconfig_in_cluster(const char *sa_dir, ks_kubeconfig **out, char *err, size_t errlen)
{
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    char why[256];
    char *text = NULL, *tok = NULL;
    int rc;
    ks_kubeconfig *kc = NULL;

    *out = NULL;
    if (!sa_dir || !*sa_dir)
        sa_dir = KS_SERVICEACCOUNT_DIR;
    if (!host || !*host || !port || !*port)
        return fail(KS_EINVAL, err, errlen,
                    "in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must "
                    "be defined (they are set inside a pod; elsewhere give a kubeconfig)");
    if (!(kc = kc_new()) || !(kc->origin = strdup("in-cluster config")))
        goto nomem;
    kc->server = strchr(host, ':') ? xasprintf("https://[%s]:%s", host, port)
                                   : xasprintf("https://%s:%s", host, port);
    struct ks_kc_token *t = kc->tok;
    if (!kc->server || !(t->file = xasprintf("%s/token", sa_dir)) || !(t->desc = strdup(t->file)))
        goto nomem;
    if ((rc = read_token_file(t, t->file, &tok, why, sizeof(why))) != 0) {
        if (rc == KS_ENOMEM)
            goto nomem;
        rc = fail(KS_EINVAL, err, errlen, "in-cluster config: service account token %s: %s",
                  t->file, why);
        goto out;
    }
    t->token = tok;
    t->last_check = t->clock(t->clock_ud);

    /* client-go only logs an unreadable CA and goes on with the system roots; so do we, but the
     * TLS error messages will say why. */
    char *ca = xasprintf("%s/ca.crt", sa_dir);
    if (!ca)
        goto nomem;
    rc = read_file(ca, &text, NULL);
    if (rc == 0 && has_pem(text, "CERTIFICATE")) {
        kc->ca.file = ca;
        kc->ca.desc = strdup(ca);
    } else {
        kc->ca.desc = xasprintf("the system trust store (%s: %s)", ca,
                                rc ? strerror(-rc) : "no PEM certificate in it");
        ks__log('E', "kubeconfig", "in-cluster config: expected the root CA in %s, but: %s", ca,
                rc ? strerror(-rc) : "no PEM certificate in it");
        free(ca);
    }
    free(text);
    text = NULL;
    if (!kc->ca.desc)
        goto nomem;
    char *nsfile = xasprintf("%s/namespace", sa_dir);
    if (!nsfile)
        goto nomem;
    if (read_file(nsfile, &text, NULL) == 0) {
        kc->namespace = trim_dup(text);
        if (kc->namespace && !*kc->namespace) {
            free(kc->namespace);
            kc->namespace = NULL;
        }
    }
    free(nsfile);
    *out = kc;
    kc = NULL;
    rc = 0;
    goto out;
nomem:
    rc = fail(KS_ENOMEM, err, errlen, "in-cluster config: out of memory");
out:
    free(text);
    ks__kubeconfig_free(kc);
    return rc;
}

/* --- precedence ------------------------------------------------------------------------------ */

const char *ks__kubeconfig_pick(const ks_kubeconfig_sources *s, const char **note)
{
    const char *path;
    if (note)
        *note = NULL;
    if (s->have_config_file) {
        path = s->config_kubeconfig;
        if (note && s->flag_kubeconfig && *s->flag_kubeconfig)
            *note = "--kubeconfig is ignored because --config is given (deprecated flags are "
                    "ignored then, as upstream); set clientConnection.kubeconfig in the config "
                    "file instead";
    } else {
        path = s->flag_kubeconfig;
    }
    return path && *path ? path : NULL;
}

int ks__kubeconfig_resolve(const ks_kubeconfig_sources *s, ks_kubeconfig **out, char *err,
                           size_t errlen)
{
    const char *path = ks__kubeconfig_pick(s, NULL);
    const char *master = s->master && *s->master ? s->master : NULL;
    const char *why;
    int rc;
    *out = NULL;
    if (path) {
        if ((rc = ks__kubeconfig_load(path, s->context, out, err, errlen)) != 0) {
            size_t n = err ? strlen(err) : 0;
            if (rc == KS_EIO &&
                n + 1 < errlen) /* say where the path came from: that is what to fix */
                snprintf(err + n, errlen - n, " (the file named by %s; correct the path there)",
                         s->have_config_file ? "clientConnection.kubeconfig in the --config file"
                                             : "--kubeconfig");
            return rc;
        }
        if (master) {
            char *srv = normalize_server(master, &why);
            if (!srv) {
                ks__kubeconfig_free(*out);
                *out = NULL;
                return fail(KS_EINVAL, err, errlen, "--master \"%s\": %s", master, why);
            }
            free((*out)->server);
            (*out)->server = srv;
        }
        return 0;
    }
    if (master) {
        ks_kubeconfig *kc = kc_new();
        if (!kc || !(kc->origin = strdup("--master"))) {
            ks__kubeconfig_free(kc);
            return fail(KS_ENOMEM, err, errlen, "--master: out of memory");
        }
        if (!(kc->server = normalize_server(master, &why))) {
            ks__kubeconfig_free(kc);
            return fail(KS_EINVAL, err, errlen, "--master \"%s\": %s", master, why);
        }
        *out = kc;
        return 0;
    }
    char inner[768];
    if ((rc = ks__kubeconfig_in_cluster(s->sa_dir, out, inner, sizeof(inner))) != 0)
        return fail(rc, err, errlen, "no kubeconfig given (%s) and %s",
                    s->have_config_file
                        ? "clientConnection.kubeconfig is empty in the --config file"
                        : "neither --config with clientConnection.kubeconfig nor "
                          "--kubeconfig",
                    inner);
    return 0;
}

/* --- token and files ------------------------------------------------------------------------ */

long ks__kubeconfig_token_ctl(const char *token)
{
    for (const unsigned char *c = (const unsigned char *)token; *c; c++)
        if (*c < 0x20 || *c == 0x7f)
            return (long)(c - (const unsigned char *)token);
    return -1;
}

int ks__kubeconfig_token(ks_kubeconfig *kc, char **token)
{
    struct ks_kc_token *t = kc->tok;
    int rc = 0;
    *token = NULL;
    pthread_mutex_lock(&t->mu);
    if (t->file) {
        int64_t now = t->clock(t->clock_ud);
        if (now - t->last_check >= TOKEN_RECHECK_NS) {
            struct stat st;
            t->last_check = now;
            if (stat(t->file, &st) != 0) {
                if (t->token)
                    ks__log('W', "kubeconfig", "%s: token file %s: %s; keeping the last token",
                            kc->origin, t->file, strerror(errno));
            } else if (st.st_mtim.tv_sec != t->mtime.tv_sec ||
                       st.st_mtim.tv_nsec != t->mtime.tv_nsec || st.st_size != t->size ||
                       st.st_ino != t->ino) {
                char why[256], *fresh = NULL;
                int r = read_token_file(t, t->file, &fresh, why, sizeof(why));
                if (r == 0) {
                    free(t->token);
                    t->token = fresh;
                } else {
                    ks__log('W', "kubeconfig", "%s: token file %s: %s; keeping the last token",
                            kc->origin, t->file, why);
                }
            }
        }
    }
    if (t->token && !(*token = strdup(t->token)))
        rc = KS_ENOMEM;
    pthread_mutex_unlock(&t->mu);
    return rc;
}

const char *ks__kubeconfig_token_desc(const ks_kubeconfig *kc)
{
    return kc->tok->desc; /* set once at load, with the token or its file */
}

void ks__kubeconfig_set_clock(ks_kubeconfig *kc, ks_clock_fn fn, void *ud)
{
    pthread_mutex_lock(&kc->tok->mu);
    kc->tok->clock = fn ? fn : ks__clock_monotonic;
    kc->tok->clock_ud = ud;
    kc->tok->last_check = kc->tok->clock(ud);
    pthread_mutex_unlock(&kc->tok->mu);
}

int ks__kubeconfig_pem_path(ks_kubeconfig *kc, ks_kc_pem *pem, const char **path, char *err,
                            size_t errlen)
{
    int rc = 0;
    *path = NULL;
    if (pem->file || !pem->data) {
        *path = pem->file;
        return 0;
    }
    pthread_mutex_lock(&kc->tok->mu);
    if (!pem->tmpfile) {
        const char *dir = getenv("TMPDIR");
        char *tmpl = xasprintf("%s/kubesched-pem-XXXXXX", dir && *dir ? dir : "/tmp");
        int fd = tmpl ? mkstemp(tmpl) : -1; /* mkstemp creates the file 0600 */
        if (fd < 0) {
            rc = fail(KS_EIO, err, errlen, "%s: cannot write %s to a temporary file: %s",
                      kc->origin, pem->desc, tmpl ? strerror(errno) : "out of memory");
            free(tmpl);
        } else {
            size_t off = 0;
            while (off < pem->len) {
                ssize_t w = write(fd, pem->data + off, pem->len - off);
                if (w < 0 && errno == EINTR)
                    continue;
                if (w <= 0)
                    break;
                off += (size_t)w;
            }
            if (off < pem->len || close(fd) != 0) {
                rc = fail(KS_EIO, err, errlen, "%s: cannot write %s to %s: %s", kc->origin,
                          pem->desc, tmpl, strerror(errno));
                if (off < pem->len)
                    close(fd);
                unlink(tmpl);
                free(tmpl);
            } else {
                pem->tmpfile = tmpl;
            }
        }
    }
    *path = pem->tmpfile;
    pthread_mutex_unlock(&kc->tok->mu);
    return rc;
}
