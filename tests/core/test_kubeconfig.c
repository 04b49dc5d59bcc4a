/*
 * Kubeconfig files and the in-cluster config (core/live/kubeconfig.c): contexts, files against
 * embedded data, paths relative to the kubeconfig, token files re-read on change under a fake
 * clock, the in-cluster directory, the precedence of upstream, and every refusal with its
 * message. Fixtures live in tests/fixtures/kubeconfig/; error cases write small files into a
 * private temporary directory.
 */
#include <criterion/criterion.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "live/kubeconfig.h"
#include "kubesched/plugin.h"

#define FIXDIR KS_SOURCE_DIR "/tests/fixtures/kubeconfig"
#define FIXTURE(name) FIXDIR "/" name

/* --- helpers -------------------------------------------------------------------------------- */

static char tmpdir[256];

static void tmp_setup(void)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/ks-kubeconfig-XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
}

static void tmp_teardown(void)
{
    char cmd[300];
    if (!tmpdir[0])
        return;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    cr_expect_eq(system(cmd), 0);
}

/* Writes tmpdir/name and returns its path (static buffer, one of four in rotation). */
static const char *put(const char *name, const char *text)
{
    static char paths[4][512];
    static int next;
    char *p = paths[next++ % 4];
    snprintf(p, 512, "%s/%s", tmpdir, name);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f, "%s", p);
    fputs(text, f);
    fclose(f);
    return p;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return strdup(buf);
}

static ks_kubeconfig *load_ok(const char *path, const char *ctx)
{
    char err[1024] = "";
    ks_kubeconfig *kc = NULL;
    int rc = ks__kubeconfig_load(path, ctx, &kc, err, sizeof(err));
    cr_assert_eq(rc, 0, "%s: rc %d: %s", path, rc, err);
    cr_assert_not_null(kc);
    return kc;
}

/* Loads a kubeconfig written into tmpdir and expects a failure; returns the message. */
static const char *load_fail(const char *yaml, const char *ctx, int want_rc)
{
    static char err[1024];
    const char *path = put("config", yaml);
    ks_kubeconfig *kc = (ks_kubeconfig *)1;
    err[0] = '\0';
    int rc = ks__kubeconfig_load(path, ctx, &kc, err, sizeof(err));
    cr_assert_eq(rc, want_rc, "rc %d, want %d: %s", rc, want_rc, err);
    cr_assert_null(kc);
    return err;
}

static void expect_msg(const char *got, const char *fmt_with_path)
{
    char want[1024];
    snprintf(want, sizeof(want), fmt_with_path, tmpdir);
    cr_expect_str_eq(got, want);
}

static char *token_of(ks_kubeconfig *kc)
{
    char *t = NULL;
    cr_assert_eq(ks__kubeconfig_token(kc, &t), 0);
    return t;
}

/* A fake clock the tests move by hand. */
static int64_t fake_now;
static int64_t fake_clock(void *ud)
{
    (void)ud;
    return fake_now;
}

static const char *cluster_user(const char *cluster, const char *user)
{
    static char buf[2048];
    snprintf(buf, sizeof(buf),
             "current-context: c\n"
             "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
             "clusters: [{name: k, cluster: {%s}}]\n"
             "users: [{name: u, user: {%s}}]\n",
             cluster, user);
    return buf;
}

#define SRV "server: https://127.0.0.1:6443"
#define CA_FILE FIXTURE("pki/ca.crt")

/* --- loading ------------------------------------------------------------------------------- */

Test(kubeconfig, current_context_resolves_files_against_the_kubeconfig_directory)
{
    ks_kubeconfig *kc = load_ok(FIXTURE("multi.yaml"), NULL);
    cr_expect_str_eq(kc->origin, "kubeconfig " FIXTURE("multi.yaml"));
    cr_expect_str_eq(kc->context, "prod");
    cr_expect_str_eq(kc->cluster, "prod");
    cr_expect_str_eq(kc->user, "scheduler");
    cr_expect_str_eq(kc->namespace, "kube-system");
    cr_expect_str_eq(kc->server, "https://127.0.0.1:6443", "trailing slash dropped");
    cr_expect_str_eq(kc->ca.file, FIXTURE("pki/ca.crt"));
    cr_expect_null(kc->ca.data);
    cr_expect_str_eq(kc->cert.file, FIXTURE("pki/client.crt"));
    cr_expect_str_eq(kc->key.file, FIXTURE("./pki/client.key"));
    cr_expect_eq(kc->insecure, 0);
    cr_expect_null(ks__kubeconfig_token_desc(kc));
    char *t = token_of(kc);
    cr_expect_null(t);
    ks__kubeconfig_free(kc);
}

Test(kubeconfig, explicit_context_with_embedded_ca_data_and_a_token)
{
    ks_kubeconfig *kc = load_ok(FIXTURE("multi.yaml"), "dev");
    cr_expect_str_eq(kc->context, "dev");
    cr_expect_str_eq(kc->server, "https://kube.example.test:8443", "https:// added");
    cr_expect_str_eq(kc->tls_server_name, "kubernetes.default.svc");
    cr_expect_null(kc->ca.file);
    char *pem = slurp(CA_FILE);
    cr_assert_not_null(kc->ca.data);
    cr_expect_eq(kc->ca.len, strlen(pem));
    cr_expect_str_eq((const char *)kc->ca.data, pem, "base64 decoded to the PEM file");
    cr_expect_str_eq(
        kc->ca.desc,
        "certificate-authority-data of cluster \"dev\" in kubeconfig " FIXTURE("multi.yaml"));
    char *t = token_of(kc);
    cr_expect_str_eq(t, "dev-token-0123");
    cr_expect_str_eq(ks__kubeconfig_token_desc(kc),
                     "token of user \"tokenuser\" in kubeconfig " FIXTURE("multi.yaml"));
    free(t);
    free(pem);
    ks__kubeconfig_free(kc);
}

Test(kubeconfig, token_file_is_relative_to_the_kubeconfig_and_trimmed)
{
    ks_kubeconfig *kc = load_ok(FIXTURE("multi.yaml"), "file");
    char *t = token_of(kc);
    cr_expect_str_eq(t, "fixture-token-456");
    cr_expect_str_eq(ks__kubeconfig_token_desc(kc), FIXTURE("token.txt"));
    free(t);
    ks__kubeconfig_free(kc);
}

Test(kubeconfig, context_without_user_is_anonymous)
{
    ks_kubeconfig *kc = load_ok(FIXTURE("multi.yaml"), "anon");
    cr_expect_null(kc->user);
    cr_expect_null(kc->cert.desc);
    cr_expect_null(ks__kubeconfig_token_desc(kc));
    ks__kubeconfig_free(kc);
}

Test(kubeconfig, relative_kubeconfig_path_resolves_against_the_working_directory)
{
    cr_assert_eq(chdir(FIXDIR "/pki"), 0); /* Criterion runs each test in its own process */
    ks_kubeconfig *kc = load_ok("../multi.yaml", NULL);
    cr_expect_str_eq(kc->origin, "kubeconfig ../multi.yaml");
    cr_expect_str_eq(kc->ca.file, FIXDIR "/pki/../pki/ca.crt");
    ks__kubeconfig_free(kc);
}

Test(kubeconfig, json_kubeconfig_and_insecure_flag, .init = tmp_setup, .fini = tmp_teardown)
{
    const char *p = put("k.json", "{\"current-context\":\"x\",\"contexts\":[{\"name\":\"x\","
                                  "\"context\":{\"cluster\":\"c\"}}],\"clusters\":[{\"name\":\"c\","
                                  "\"cluster\":{\"server\":\"http://10.1.2.3:8080\","
                                  "\"insecure-skip-tls-verify\":true}}]}");
    ks_kubeconfig *kc = load_ok(p, NULL);
    cr_expect_str_eq(kc->server, "http://10.1.2.3:8080");
    cr_expect_eq(kc->insecure, 1);
    cr_expect_null(kc->ca.desc);
    ks__kubeconfig_free(kc);
}

Test(kubeconfig, embedded_client_certificate_and_key, .init = tmp_setup, .fini = tmp_teardown)
{
    char user[4096], cmd[600];
    char *crt = slurp(FIXTURE("pki/client.crt")), *key = slurp(FIXTURE("pki/client.key"));
    /* base64 with line breaks (as `base64` wraps) is accepted, as Go's decoder accepts it */
    snprintf(cmd, sizeof(cmd), "base64 %s > %s/crt.b64 && base64 -w0 %s > %s/key.b64",
             FIXTURE("pki/client.crt"), tmpdir, FIXTURE("pki/client.key"), tmpdir);
    cr_assert_eq(system(cmd), 0);
    char path[300];
    snprintf(path, sizeof(path), "%s/crt.b64", tmpdir);
    char *crt64 = slurp(path);
    snprintf(path, sizeof(path), "%s/key.b64", tmpdir);
    char *key64 = slurp(path);
    for (char *c = crt64; *c; c++) /* a YAML folded scalar below would be overkill: quote it */
        if (*c == '\n')
            *c = ' ';
    snprintf(user, sizeof(user), "client-certificate-data: \"%s\", client-key-data: %s", crt64,
             key64);
    ks_kubeconfig *kc = load_ok(put("config", cluster_user(SRV, user)), NULL);
    cr_expect_str_eq((const char *)kc->cert.data, crt);
    cr_expect_str_eq((const char *)kc->key.data, key);
    cr_expect_null(kc->cert.file);
    ks__kubeconfig_free(kc);
    free(crt);
    free(key);
    free(crt64);
    free(key64);
}

/* --- errors --------------------------------------------------------------------------------- */

Test(kubeconfig, missing_file)
{
    char err[512];
    ks_kubeconfig *kc;
    cr_expect_eq(ks__kubeconfig_load("/nonexistent/kubeconfig", NULL, &kc, err, sizeof(err)),
                 KS_EIO);
    cr_expect_str_eq(err, "kubeconfig /nonexistent/kubeconfig: No such file or directory");
}

Test(kubeconfig, a_directory_is_refused, .init = tmp_setup, .fini = tmp_teardown)
{
    char err[1024] = "";
    ks_kubeconfig *kc = (ks_kubeconfig *)1;
    cr_assert_eq(ks__kubeconfig_load(tmpdir, NULL, &kc, err, sizeof(err)), KS_EIO, "%s", err);
    cr_expect_null(kc);
    expect_msg(err, "kubeconfig %s: is a directory, not a kubeconfig file");
}

Test(kubeconfig, yaml_syntax_error_names_line_and_column, .init = tmp_setup, .fini = tmp_teardown)
{
    const char *e = load_fail("clusters:\n- name: a\n  cluster: {server: [\n", NULL, KS_EPARSE);
    char want[512];
    snprintf(want, sizeof(want), "kubeconfig %s/config:4:1: ", tmpdir);
    cr_expect(strncmp(e, want, strlen(want)) == 0, "%s", e);
}

Test(kubeconfig, empty_file_and_wrong_shape, .init = tmp_setup, .fini = tmp_teardown)
{
    expect_msg(load_fail("# nothing\n", NULL, KS_EINVAL),
               "kubeconfig %s/config: the file is empty");
    expect_msg(load_fail("- a\n- b\n", NULL, KS_EINVAL),
               "kubeconfig %s/config: expected a mapping with clusters, contexts and users, got a "
               "list");
    expect_msg(load_fail("contexts: {a: b}\ncurrent-context: a\n", NULL, KS_EINVAL),
               "kubeconfig %s/config: contexts: expected a list, got a mapping");
    expect_msg(load_fail("contexts: [{context: {}}]\ncurrent-context: a\n", NULL, KS_EINVAL),
               "kubeconfig %s/config: contexts[0]: no name");
    /* YAML 1.1 as sigs.k8s.io/yaml reads it: a plain y is a boolean, not a name */
    expect_msg(load_fail("contexts: [{name: y}]\ncurrent-context: a\n", NULL, KS_EINVAL),
               "kubeconfig %s/config: contexts[0].name: expected a string, got a boolean (quote "
               "the value)");
    expect_msg(
        load_fail("contexts: [{name: a, context: [x]}]\ncurrent-context: a\n", NULL, KS_EINVAL),
        "kubeconfig %s/config: contexts[0].context: expected a mapping, got a list");
}

Test(kubeconfig, context_not_found_lists_the_contexts)
{
    char err[512];
    ks_kubeconfig *kc;
    cr_expect_eq(ks__kubeconfig_load(FIXTURE("multi.yaml"), "foo", &kc, err, sizeof(err)),
                 KS_ENOTFOUND);
    cr_expect_str_eq(err, "kubeconfig " FIXTURE("multi.yaml") ": context \"foo\" not found "
                                                              "(contexts: prod, dev, file, anon)");
}

Test(kubeconfig, no_current_context, .init = tmp_setup, .fini = tmp_teardown)
{
    expect_msg(load_fail("contexts: [{name: a, context: {cluster: c}}, {name: b, context: {}}]\n",
                         NULL, KS_EINVAL),
               "kubeconfig %s/config: no context selected: current-context is not set "
               "(contexts: a, b)");
    expect_msg(load_fail("apiVersion: v1\nkind: Config\n", NULL, KS_EINVAL),
               "kubeconfig %s/config: no context selected: current-context is not set (the "
               "file has no contexts)");
    expect_msg(load_fail("apiVersion: v1\n", "x", KS_ENOTFOUND),
               "kubeconfig %s/config: context \"x\" not found (the file has no contexts)");
}

Test(kubeconfig, missing_cluster_and_user, .init = tmp_setup, .fini = tmp_teardown)
{
    expect_msg(load_fail("current-context: a\ncontexts: [{name: a, context: {user: u}}]\n", NULL,
                         KS_EINVAL),
               "kubeconfig %s/config: context \"a\" names no cluster");
    expect_msg(load_fail("current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\n"
                         "clusters: [{name: x, cluster: {" SRV "}}, {name: z, cluster: {" SRV
                         "}}]\n",
                         NULL, KS_ENOTFOUND),
               "kubeconfig %s/config: context \"a\": cluster \"c\" not found (clusters: x, z)");
    expect_msg(load_fail("current-context: a\ncontexts: [{name: a, context: {cluster: x, user: "
                         "me}}]\nclusters: [{name: x, cluster: {" SRV "}}]\n"
                         "users: [{name: admin, user: {token: t}}]\n",
                         NULL, KS_ENOTFOUND),
               "kubeconfig %s/config: context \"a\": user \"me\" not found (users: admin)");
}

Test(kubeconfig, duplicate_names, .init = tmp_setup, .fini = tmp_teardown)
{
    expect_msg(load_fail("current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\n"
                         "clusters: [{name: c, cluster: {" SRV "}}, {name: c, cluster: {" SRV
                         "}}]\n",
                         NULL, KS_EINVAL),
               "kubeconfig %s/config: clusters[1]: duplicate name \"c\"");
}

Test(kubeconfig, server_errors, .init = tmp_setup, .fini = tmp_teardown)
{
    expect_msg(load_fail(cluster_user("insecure-skip-tls-verify: true", ""), NULL, KS_EINVAL),
               "kubeconfig %s/config: cluster \"k\": no server defined (cluster.server, e.g. "
               "https://127.0.0.1:6443)");
    expect_msg(load_fail(cluster_user("server: ftp://k:1", ""), NULL, KS_EINVAL),
               "kubeconfig %s/config: cluster \"k\": server \"ftp://k:1\": the scheme must be "
               "https:// or http://");
    expect_msg(load_fail(cluster_user("server: 6443", ""), NULL, KS_EINVAL),
               "kubeconfig %s/config: clusters[0].cluster.server: expected a string, got a "
               "number (quote the value)");
}

Test(kubeconfig, wrong_types_name_the_field, .init = tmp_setup, .fini = tmp_teardown)
{
    expect_msg(load_fail(cluster_user(SRV, "token: 12345"), NULL, KS_EINVAL),
               "kubeconfig %s/config: users[0].user.token: expected a string, got a number "
               "(quote the value)");
    expect_msg(
        load_fail(cluster_user(SRV ", insecure-skip-tls-verify: maybe", ""), NULL, KS_EINVAL),
        "kubeconfig %s/config: clusters[0].cluster.insecure-skip-tls-verify: expected "
        "true or false, got a string");
}

Test(kubeconfig, certificate_authority_errors, .init = tmp_setup, .fini = tmp_teardown)
{
    expect_msg(load_fail(cluster_user(SRV ", certificate-authority: " CA_FILE
                                          ", certificate-authority-data: eA==",
                                      ""),
                         NULL, KS_EINVAL),
               "kubeconfig %s/config: cluster \"k\": both certificate-authority and "
               "certificate-authority-data are set; keep one");
    expect_msg(load_fail(cluster_user(SRV ", insecure-skip-tls-verify: true, "
                                          "certificate-authority: " CA_FILE,
                                      ""),
                         NULL, KS_EINVAL),
               "kubeconfig %s/config: cluster \"k\": insecure-skip-tls-verify cannot be "
               "combined with certificate-authority (client-go refuses a root certificate with "
               "the insecure flag); drop one");
    expect_msg(load_fail(cluster_user(SRV ", certificate-authority: ca.pem", ""), NULL, KS_EINVAL),
               "kubeconfig %1$s/config: cluster \"k\": certificate-authority %1$s/ca.pem: No "
               "such file or directory");
    expect_msg(load_fail(cluster_user(SRV ", certificate-authority-data: 'LS0t*LS0t'", ""), NULL,
                         KS_EINVAL),
               "kubeconfig %s/config: cluster \"k\": certificate-authority-data: invalid base64 "
               "at offset 4 (the field holds the base64 of the PEM file, as `base64 -w0` prints "
               "it)");
    expect_msg(
        load_fail(cluster_user(SRV ", certificate-authority-data: aGVsbG8K", ""), NULL, KS_EINVAL),
        "kubeconfig %s/config: cluster \"k\": certificate-authority-data: not a PEM "
        "certificate (-----BEGIN CERTIFICATE-----)");
    put("notpem.crt", "hello\n");
    expect_msg(
        load_fail(cluster_user(SRV ", certificate-authority: notpem.crt", ""), NULL, KS_EINVAL),
        "kubeconfig %1$s/config: cluster \"k\": certificate-authority %1$s/notpem.crt: "
        "not a PEM certificate (-----BEGIN CERTIFICATE-----)");
}

Test(kubeconfig, client_certificate_errors, .init = tmp_setup, .fini = tmp_teardown)
{
    expect_msg(load_fail(cluster_user(SRV, "client-certificate: " FIXTURE("pki/client.crt")), NULL,
                         KS_EINVAL),
               "kubeconfig %s/config: user \"u\": client-certificate is set but neither "
               "client-key nor client-key-data");
    expect_msg(
        load_fail(cluster_user(SRV, "client-key: " FIXTURE("pki/client.key")), NULL, KS_EINVAL),
        "kubeconfig %s/config: user \"u\": client-key is set but neither "
        "client-certificate nor client-certificate-data");
    expect_msg(load_fail(cluster_user(SRV, "client-certificate: a, client-certificate-data: b"),
                         NULL, KS_EINVAL),
               "kubeconfig %s/config: user \"u\": both client-certificate and "
               "client-certificate-data are set; keep one");
    expect_msg(load_fail(cluster_user(
                             SRV, "client-certificate: " FIXTURE(
                                      "pki/client.crt") ", client-key: " FIXTURE("pki/client.crt")),
                         NULL, KS_EINVAL),
               "kubeconfig %s/config: user \"u\": client-key " FIXTURE(
                   "pki/client.crt") ": not a PEM private key (-----BEGIN ... PRIVATE KEY-----)");
}

Test(kubeconfig, token_file_errors, .init = tmp_setup, .fini = tmp_teardown)
{
    expect_msg(load_fail(cluster_user(SRV, "tokenFile: tok"), NULL, KS_EINVAL),
               "kubeconfig %1$s/config: user \"u\": tokenFile %1$s/tok: No such file or "
               "directory");
    put("tok", " \n");
    expect_msg(load_fail(cluster_user(SRV, "tokenFile: tok"), NULL, KS_EINVAL),
               "kubeconfig %1$s/config: user \"u\": tokenFile %1$s/tok: is empty");
    /* With a token beside it, an unreadable tokenFile falls back to the token (client-go). */
    ks_kubeconfig *kc =
        load_ok(put("config", cluster_user(SRV, "token: abc, tokenFile: nope")), NULL);
    char *t = token_of(kc);
    cr_expect_str_eq(t, "abc");
    free(t);
    ks__kubeconfig_free(kc);
}

Test(kubeconfig, unsupported_auth_is_refused, .init = tmp_setup, .fini = tmp_teardown)
{
    expect_msg(load_fail(cluster_user(SRV, "exec: {command: aws, apiVersion: "
                                           "client.authentication.k8s.io/v1}"),
                         NULL, KS_EINVAL),
               "kubeconfig %s/config: user \"u\": exec credential plugins are not supported; "
               "use token, tokenFile or client-certificate and client-key");
    expect_msg(load_fail(cluster_user(SRV, "username: admin, password: secret"), NULL, KS_EINVAL),
               "kubeconfig %s/config: user \"u\": basic authentication (username/password) is "
               "not supported; use token, tokenFile or client-certificate and client-key");
}

/* --- token files ---------------------------------------------------------------------------- */

static void set_mtime(const char *path, time_t sec)
{
    struct timespec ts[2] = {{sec, 0}, {sec, 0}};
    cr_assert_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
}

Test(kubeconfig, token_file_is_reread_when_it_changes_at_most_once_a_minute, .init = tmp_setup,
     .fini = tmp_teardown)
{
    const char *tok = put("tok", "first\n");
    char tokpath[512];
    snprintf(tokpath, sizeof(tokpath), "%s", tok);
    set_mtime(tokpath, 1000000);
    ks_kubeconfig *kc = load_ok(put("config", cluster_user(SRV, "tokenFile: tok")), NULL);
    fake_now = 5 * 1000000000LL;
    ks__kubeconfig_set_clock(kc, fake_clock, NULL);
    char *t = token_of(kc);
    cr_expect_str_eq(t, "first");
    free(t);

    put("tok", "second\n");
    set_mtime(tokpath, 2000000);
    fake_now += 59 * 1000000000LL; /* not yet a minute since the last check */
    t = token_of(kc);
    cr_expect_str_eq(t, "first");
    free(t);
    fake_now += 1000000000LL; /* a minute: the file is looked at and re-read */
    t = token_of(kc);
    cr_expect_str_eq(t, "second");
    free(t);

    /* Unchanged mtime/size/inode: not re-read even though the minute passed. Same size and
     * mtime restored, so only a re-read would see the new text. */
    put("tok", "third!\n");
    set_mtime(tokpath, 2000000);
    fake_now += 61 * 1000000000LL;
    t = token_of(kc);
    cr_expect_str_eq(t, "second");
    free(t);

    /* A file that went away or became empty keeps the last good token. */
    cr_assert_eq(unlink(tokpath), 0);
    fake_now += 61 * 1000000000LL;
    t = token_of(kc);
    cr_expect_str_eq(t, "second");
    free(t);
    put("tok", "\n");
    fake_now += 61 * 1000000000LL;
    t = token_of(kc);
    cr_expect_str_eq(t, "second");
    free(t);
    ks__kubeconfig_free(kc);
}

/* A CR or LF in the token would end the Authorization header line and inject another: refused at
 * load (inline or from the file), and a rotated file holding one keeps the last good token. */
Test(kubeconfig, token_with_a_control_character_is_refused, .init = tmp_setup, .fini = tmp_teardown)
{
    expect_msg(load_fail(cluster_user(SRV, "token: \"abc\\r\\nX-Injected: 1\""), NULL, KS_EINVAL),
               "kubeconfig %s/config: user \"u\": token: contains a control character (byte 0x0d "
               "at offset 3); a bearer token is one line of printable characters");
    expect_msg(load_fail(cluster_user(SRV, "token: \"abc\\tdef\""), NULL, KS_EINVAL),
               "kubeconfig %s/config: user \"u\": token: contains a control character (byte 0x09 "
               "at offset 3); a bearer token is one line of printable characters");
    put("tok", "ab\x1b[0mcd\n");
    expect_msg(load_fail(cluster_user(SRV, "tokenFile: tok"), NULL, KS_EINVAL),
               "kubeconfig %1$s/config: user \"u\": tokenFile %1$s/tok: contains a control "
               "character (byte 0x1b at offset 2)");

    const char *tok = put("tok", "good\n");
    char tokpath[512];
    snprintf(tokpath, sizeof(tokpath), "%s", tok);
    ks_kubeconfig *kc = load_ok(put("config", cluster_user(SRV, "tokenFile: tok")), NULL);
    fake_now = 5 * 1000000000LL;
    ks__kubeconfig_set_clock(kc, fake_clock, NULL);
    put("tok", "rotated\x01-with-ctl\n");
    fake_now += 61 * 1000000000LL;
    char *t = token_of(kc);
    cr_expect_str_eq(t, "good");
    free(t);
    ks__kubeconfig_free(kc);
}

/* --- in-cluster ------------------------------------------------------------------------------ */

static void sa_files(int with_ca)
{
    put("token", "sa-token-1\n");
    put("namespace", "kube-system\n");
    if (with_ca) {
        char *pem = slurp(CA_FILE);
        put("ca.crt", pem);
        free(pem);
    }
}

Test(kubeconfig, in_cluster_reads_the_service_account_directory, .init = tmp_setup,
     .fini = tmp_teardown)
{
    sa_files(1);
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    char err[512] = "", path[512];
    ks_kubeconfig *kc;
    cr_assert_eq(ks__kubeconfig_in_cluster(tmpdir, &kc, err, sizeof(err)), 0, "%s", err);
    cr_expect_str_eq(kc->origin, "in-cluster config");
    cr_expect_str_eq(kc->server, "https://10.96.0.1:443");
    cr_expect_str_eq(kc->namespace, "kube-system");
    snprintf(path, sizeof(path), "%s/ca.crt", tmpdir);
    cr_expect_str_eq(kc->ca.file, path);
    snprintf(path, sizeof(path), "%s/token", tmpdir);
    cr_expect_str_eq(ks__kubeconfig_token_desc(kc), path);
    char *t = token_of(kc);
    cr_expect_str_eq(t, "sa-token-1");
    free(t);

    /* The kubelet rotates the projected token: picked up within a minute. */
    fake_now = 0;
    ks__kubeconfig_set_clock(kc, fake_clock, NULL);
    put("token", "sa-token-2-longer\n");
    fake_now = 60 * 1000000000LL;
    t = token_of(kc);
    cr_expect_str_eq(t, "sa-token-2-longer");
    free(t);
    ks__kubeconfig_free(kc);
}

Test(kubeconfig, in_cluster_ipv6_host_and_missing_ca, .init = tmp_setup, .fini = tmp_teardown)
{
    sa_files(0);
    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "6443", 1);
    char err[512] = "", want[512];
    ks_kubeconfig *kc;
    cr_assert_eq(ks__kubeconfig_in_cluster(tmpdir, &kc, err, sizeof(err)), 0, "%s", err);
    cr_expect_str_eq(kc->server, "https://[fd00::1]:6443");
    cr_expect_null(kc->ca.file);
    snprintf(want, sizeof(want), "the system trust store (%s/ca.crt: No such file or directory)",
             tmpdir);
    cr_expect_str_eq(kc->ca.desc, want);
    ks__kubeconfig_free(kc);
}

Test(kubeconfig, in_cluster_errors, .init = tmp_setup, .fini = tmp_teardown)
{
    char err[512], want[512];
    ks_kubeconfig *kc = (ks_kubeconfig *)1;
    unsetenv("KUBERNETES_SERVICE_HOST");
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    cr_expect_eq(ks__kubeconfig_in_cluster(tmpdir, &kc, err, sizeof(err)), KS_EINVAL);
    cr_expect_null(kc);
    cr_expect_str_eq(err, "in-cluster config: KUBERNETES_SERVICE_HOST and "
                          "KUBERNETES_SERVICE_PORT must be defined (they are set inside a pod; "
                          "elsewhere give a kubeconfig)");
    setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
    cr_expect_eq(ks__kubeconfig_in_cluster(tmpdir, &kc, err, sizeof(err)), KS_EINVAL);
    snprintf(want, sizeof(want),
             "in-cluster config: service account token %s/token: No such file or directory",
             tmpdir);
    cr_expect_str_eq(err, want);
}

/* --- precedence ------------------------------------------------------------------------------ */

Test(kubeconfig, pick_follows_upstream_precedence)
{
    const char *note;
    ks_kubeconfig_sources s = {
        .have_config_file = 1, .config_kubeconfig = "/a", .flag_kubeconfig = "/b"};
    cr_expect_str_eq(ks__kubeconfig_pick(&s, &note), "/a");
    cr_expect_not_null(note, "the ignored flag is worth a warning");
    s.config_kubeconfig = "";
    cr_expect_null(ks__kubeconfig_pick(&s, &note), "with --config the flag is ignored");
    cr_expect(strstr(note, "--kubeconfig is ignored because --config is given") == note);
    s.have_config_file = 0;
    cr_expect_str_eq(ks__kubeconfig_pick(&s, &note), "/b");
    cr_expect_null(note);
    s.flag_kubeconfig = NULL;
    cr_expect_null(ks__kubeconfig_pick(&s, &note), "nothing: in-cluster");
}

Test(kubeconfig, resolve_loads_file_master_or_in_cluster, .init = tmp_setup, .fini = tmp_teardown)
{
    char err[1024] = "";
    ks_kubeconfig *kc;
    ks_kubeconfig_sources s = {.have_config_file = 1,
                               .config_kubeconfig = FIXTURE("multi.yaml"),
                               .context = "dev",
                               .master = "https://10.9.9.9:6443/"};
    cr_assert_eq(ks__kubeconfig_resolve(&s, &kc, err, sizeof(err)), 0, "%s", err);
    cr_expect_str_eq(kc->context, "dev");
    cr_expect_str_eq(kc->server, "https://10.9.9.9:6443", "--master overrides the server");
    ks__kubeconfig_free(kc);

    ks_kubeconfig_sources m = {.master = "127.0.0.1:8080"};
    cr_assert_eq(ks__kubeconfig_resolve(&m, &kc, err, sizeof(err)), 0, "%s", err);
    cr_expect_str_eq(kc->origin, "--master");
    cr_expect_str_eq(kc->server, "https://127.0.0.1:8080");
    ks__kubeconfig_free(kc);

    sa_files(1);
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    ks_kubeconfig_sources ic = {.sa_dir = tmpdir};
    cr_assert_eq(ks__kubeconfig_resolve(&ic, &kc, err, sizeof(err)), 0, "%s", err);
    cr_expect_str_eq(kc->origin, "in-cluster config");
    ks__kubeconfig_free(kc);

    unsetenv("KUBERNETES_SERVICE_HOST");
    ic.have_config_file = 1;
    cr_expect_eq(ks__kubeconfig_resolve(&ic, &kc, err, sizeof(err)), KS_EINVAL);
    cr_expect_str_eq(err, "no kubeconfig given (clientConnection.kubeconfig is empty in the "
                          "--config file) and in-cluster config: KUBERNETES_SERVICE_HOST and "
                          "KUBERNETES_SERVICE_PORT must be defined (they are set inside a pod; "
                          "elsewhere give a kubeconfig)");
    ks_kubeconfig_sources bad = {.master = "gopher://x"};
    cr_expect_eq(ks__kubeconfig_resolve(&bad, &kc, err, sizeof(err)), KS_EINVAL);
    cr_expect_str_eq(err, "--master \"gopher://x\": the scheme must be https:// or http://");

    /* A file that cannot be read: the message says which setting named it. */
    ks_kubeconfig_sources missing = {.have_config_file = 1, .config_kubeconfig = "/nonexistent/kc"};
    cr_expect_eq(ks__kubeconfig_resolve(&missing, &kc, err, sizeof(err)), KS_EIO);
    cr_expect_str_eq(err,
                     "kubeconfig /nonexistent/kc: No such file or directory (the file named by "
                     "clientConnection.kubeconfig in the --config file; correct the path there)");
    ks_kubeconfig_sources flag = {.flag_kubeconfig = "/nonexistent/kc"};
    cr_expect_eq(ks__kubeconfig_resolve(&flag, &kc, err, sizeof(err)), KS_EIO);
    cr_expect_str_eq(err,
                     "kubeconfig /nonexistent/kc: No such file or directory (the file named by "
                     "--kubeconfig; correct the path there)");
}

/* --- temp files for libcurl without blobs ---------------------------------------------------- */

Test(kubeconfig, pem_data_goes_to_a_private_temp_file_removed_on_free, .init = tmp_setup,
     .fini = tmp_teardown)
{
    setenv("TMPDIR", tmpdir, 1);
    ks_kubeconfig *kc = load_ok(FIXTURE("multi.yaml"), "dev");
    char err[256];
    const char *p1, *p2;
    cr_assert_eq(ks__kubeconfig_pem_path(kc, &kc->ca, &p1, err, sizeof(err)), 0, "%s", err);
    cr_assert_not_null(p1);
    cr_expect(strncmp(p1, tmpdir, strlen(tmpdir)) == 0, "%s", p1);
    cr_assert_eq(ks__kubeconfig_pem_path(kc, &kc->ca, &p2, err, sizeof(err)), 0);
    cr_expect_eq(p1, p2, "written once");
    struct stat st;
    cr_assert_eq(stat(p1, &st), 0);
    cr_expect_eq(st.st_mode & 0777, 0600);
    char *got = slurp(p1), *want = slurp(CA_FILE);
    cr_expect_str_eq(got, want);
    char keep[512];
    snprintf(keep, sizeof(keep), "%s", p1);
    cr_assert_eq(ks__kubeconfig_pem_path(kc, &kc->cert, &p2, err, sizeof(err)), 0);
    cr_expect_null(p2, "no client certificate in this context");
    ks__kubeconfig_free(kc);
    cr_expect_neq(stat(keep, &st), 0, "removed by ks__kubeconfig_free");
    free(got);
    free(want);

    kc = load_ok(FIXTURE("multi.yaml"), "prod");
    cr_assert_eq(ks__kubeconfig_pem_path(kc, &kc->ca, &p1, err, sizeof(err)), 0);
    cr_expect_str_eq(p1, CA_FILE, "a file stays a file");
    ks__kubeconfig_free(kc);
}

/* --- hostile files: the reader's limits ---------------------------------------------------- */

Test(kubeconfig, an_alias_bomb_is_refused_not_expanded, .init = tmp_setup, .fini = tmp_teardown)
{
    /* 586 bytes that used to expand to gigabytes through the shared YAML converter. */
    char bomb[2048];
    size_t off =
        (size_t)snprintf(bomb, sizeof(bomb), "a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n");
    for (char c = 'b'; c <= 'i'; c++)
        off += (size_t)snprintf(bomb + off, sizeof(bomb) - off,
                                "%c: &%c [*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c]\n", c, c, c - 1,
                                c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1);
    const char *e = load_fail(bomb, NULL, KS_ERANGE);
    char want[512];
    snprintf(want, sizeof(want), "kubeconfig %s/config:7:", tmpdir);
    cr_expect(strncmp(e, want, strlen(want)) == 0, "%s", e);
    cr_expect(strstr(e, "aliases copy more than 1000000 values"), "%s", e);
}

Test(kubeconfig, deep_nesting_is_refused_where_it_passes_the_limit, .init = tmp_setup,
     .fini = tmp_teardown)
{
    size_t n = 1000000;
    char *text = malloc(n + 16);
    memcpy(text, "users: ", 7);
    memset(text + 7, '[', n);
    text[7 + n] = '\0';
    expect_msg(load_fail(text, NULL, KS_ERANGE),
               "kubeconfig %s/config:1:1007: nested more than 1000 levels deep");
    free(text);
}

Test(kubeconfig, a_repeated_key_is_refused_with_both_lines, .init = tmp_setup, .fini = tmp_teardown)
{
    expect_msg(load_fail("current-context: a\nusers: []\ncurrent-context: b\n", NULL, KS_EPARSE),
               "kubeconfig %s/config:3:1: duplicate field \"current-context\" (first at line 1); "
               "is a --- missing between two objects?");
}
