/*
 * The whole-file reader with a size cap (core/util/readfile.c) that the configuration, kubeconfig
 * and cluster-file readers share: the cap is a parameter, so a small one stands in for the real
 * limits (64 MiB, 1 GiB) here.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kubesched/plugin.h"
#include "api/manifest.h"
#include "util/readfile.h"

static char tmpdir[256];

static void tmp_setup(void)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/ks-readfile-XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
}

static void tmp_teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    cr_expect_eq(system(cmd), 0);
}

/* Writes n bytes of 'a' (a YAML scalar document) to tmpdir/name; returns the path (static). */
static const char *put_n(const char *name, size_t n)
{
    static char path[512];
    snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    for (size_t i = 0; i < n; i++)
        fputc('a', f);
    fclose(f);
    return path;
}

Test(readfile, reads_up_to_the_cap_and_refuses_one_byte_more, .init = tmp_setup,
     .fini = tmp_teardown)
{
    char *buf = NULL;
    size_t len = 0;
    cr_assert_eq(ks__read_file(put_n("f", 100), 100, &buf, &len), 0);
    cr_expect_eq(len, 100);
    cr_expect_eq(buf[100], '\0');
    cr_expect_eq(strspn(buf, "a"), 100);
    free(buf);
    buf = NULL;
    cr_expect_eq(ks__read_file(put_n("f", 101), 100, &buf, &len), -EFBIG);
    cr_expect_null(buf);
    cr_assert_eq(ks__read_file(put_n("f", 0), 100, &buf, &len), 0);
    cr_expect_eq(len, 0);
    free(buf);
    cr_expect_eq(ks__read_file("/nonexistent/ks-readfile", 100, &buf, &len), -ENOENT);
}

Test(readfile, a_stream_without_a_size_stops_at_the_cap)
{
    /* /dev/zero never ends and has no size: only the cap stops it. */
    char *buf = NULL;
    size_t len = 0;
    cr_expect_eq(ks__read_file("/dev/zero", 200000, &buf, &len), -EFBIG);
    cr_expect_null(buf);
}

Test(readfile, a_cluster_file_over_the_cap_names_the_file_and_the_cap, .init = tmp_setup,
     .fini = tmp_teardown)
{
    ks_manifest m;
    char err[512], want[600];
    const char *path = put_n("cluster.yaml", 3u << 20);
    ks_manifest_opts mib = {.max_bytes = 1u << 20}, hundred = {.max_bytes = 100};
    cr_expect_eq(ks__manifest_read(path, &mib, &m, err, sizeof(err)), KS_EIO);
    snprintf(want, sizeof(want), "%s: larger than 1 MiB, the limit for a cluster file", path);
    cr_expect_str_eq(err, want);
    cr_expect_eq(ks__manifest_read("/dev/zero", &hundred, &m, err, sizeof(err)), KS_EIO);
    cr_expect_str_eq(err, "/dev/zero: larger than 100 bytes, the limit for a cluster file");
    cr_expect_eq(KS_MANIFEST_MAX_BYTES, (size_t)1 << 30);
    /* Under the cap the file is read: its one document, the scalar "aaaaaaaaaa", is then
     * refused for what it is, not for its size. */
    cr_expect_eq(ks__manifest_read(put_n("cluster.yaml", 10), &hundred, &m, err, sizeof(err)),
                 KS_EINVAL, "%s", err);
    ks__manifest_free(&m);
}

Test(readfile, a_directory_is_refused_not_read_as_empty, .init = tmp_setup, .fini = tmp_teardown)
{
    char *buf = NULL, err[512], want[600];
    size_t len = 0;
    cr_expect_eq(ks__read_file(tmpdir, 100, &buf, &len), -EISDIR);
    cr_expect_null(buf);
    ks_manifest m;
    cr_expect_eq(ks__manifest_load(tmpdir, &m, err, sizeof(err)), KS_EIO);
    snprintf(want, sizeof(want), "%s: is a directory; expected a file of manifests (YAML or JSON)",
             tmpdir);
    cr_expect_str_eq(err, want);
}
