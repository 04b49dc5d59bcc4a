/*
 * A replaced plugin file is loaded again (hot reload, core/sched/loader.c): while the module of
 * the old file is still open (its binding cycles drain after a reload), opening the same path must
 * give the new code, not glibc's already-loaded object. Three ways a new version arrives:
 *   - renamed over the old file (install(1), mv): same path, new inode;
 *   - a symbolic link switched to a new target (a kubelet volume's "..data" swap);
 *   - written in place (same inode): refused with a message, nothing of it is loaded.
 * The two fixture builds of ReloadPrefer (fixtures/reload_prefer.c) differ in the version number
 * their create() hands back.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sched/host_api.h"
#include "sched/loader.h"

static char dir[256];

static void setup(void)
{
    ks__host_init();
    snprintf(dir, sizeof(dir), "/tmp/ks-reload-so-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

TestSuite(loader_reload, .init = setup, .fini = teardown);

/* Copies src to dst through a temporary file renamed over dst (a new inode, as install(1)). */
static void install_file(const char *src, const char *dst)
{
    char tmp[512], cmd[1200];
    snprintf(tmp, sizeof(tmp), "%s.tmp", dst);
    snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", src, tmp);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    cr_assert_eq(rename(tmp, dst), 0);
}

/* The version number of the module's ReloadPrefer build (what its create() points at). */
static int version_of(const ks_loaded_module *mod)
{
    const ks_plugin_desc *const *d;
    cr_assert_eq(ks__loaded_module_plugins(mod, &d), 1);
    cr_assert_str_eq(d[0]->name, "ReloadPrefer");
    const int *v = d[0]->create(NULL, NULL);
    return *v;
}

static ks_loaded_module *open_ok(const char *path)
{
    char err[1024] = "";
    ks_loaded_module *mod = NULL;
    cr_assert_eq(ks__loader_open(path, ks__host_api(), &mod, err, sizeof(err)), 0, "%s", err);
    return mod;
}

Test(loader_reload, a_file_renamed_over_the_loaded_one_is_loaded_again)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/plugin.so", dir);
    install_file(FIX_RELOAD_V1, path);
    ks_loaded_module *v1 = open_ok(path);
    cr_assert_eq(version_of(v1), 1);
    /* unchanged: the same loaded object, as dlopen always shared it */
    ks_loaded_module *again = open_ok(path);
    cr_expect_eq(version_of(again), 1);
    ks__loader_close(again);

    install_file(FIX_RELOAD_V2, path);
    ks_loaded_module *v2 = open_ok(path);
    cr_expect_eq(version_of(v2), 2, "the replaced file was served from the loaded object");
    cr_expect_eq(version_of(v1), 1, "the old module changed under its users");
    /* a third version while both are open */
    install_file(FIX_RELOAD_V1, path);
    ks_loaded_module *v3 = open_ok(path);
    cr_expect_eq(version_of(v3), 1);
    ks__loader_close(v1);
    ks__loader_close(v2);
    /* closed versions free their names: the next version loads again */
    install_file(FIX_RELOAD_V2, path);
    ks_loaded_module *v4 = open_ok(path);
    cr_expect_eq(version_of(v4), 2);
    ks__loader_close(v3);
    ks__loader_close(v4);
}

/* The sequence of reloads in live mode: v2 opened while v1 is open (a new name), v1 closed (its
 * set drained), v2 opened again unchanged (the shared object keeps the name of its first load),
 * then v1 installed again: it must not be served the v2 object under that name. */
Test(loader_reload, a_version_loaded_under_a_new_name_keeps_it_while_shared)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/plugin.so", dir);
    install_file(FIX_RELOAD_V1, path);
    ks_loaded_module *g1 = open_ok(path);
    install_file(FIX_RELOAD_V2, path);
    ks_loaded_module *g2 = open_ok(path);
    ks__loader_close(g1);
    ks_loaded_module *g3 = open_ok(path); /* unchanged: shares g2's object */
    cr_expect_eq(version_of(g3), 2);
    ks__loader_close(g2);
    install_file(FIX_RELOAD_V1, path);
    ks_loaded_module *g4 = open_ok(path);
    cr_expect_eq(version_of(g4), 1, "v1 installed again was served the v2 object");
    ks__loader_close(g3);
    ks__loader_close(g4);
}

Test(loader_reload, a_symlink_switched_to_a_new_target_is_loaded_again)
{
    char a[512], b[512], data[512], tmp[512], link[512];
    snprintf(a, sizeof(a), "%s/v1", dir);
    snprintf(b, sizeof(b), "%s/v2", dir);
    cr_assert_eq(mkdir(a, 0755), 0);
    cr_assert_eq(mkdir(b, 0755), 0);
    snprintf(tmp, sizeof(tmp), "%s/plugin.so", a);
    install_file(FIX_RELOAD_V1, tmp);
    snprintf(tmp, sizeof(tmp), "%s/plugin.so", b);
    install_file(FIX_RELOAD_V2, tmp);
    /* dir/..data -> v1, dir/plugin.so -> ..data/plugin.so, as kubelet lays out a volume */
    snprintf(data, sizeof(data), "%s/..data", dir);
    cr_assert_eq(symlink("v1", data), 0);
    snprintf(link, sizeof(link), "%s/lib.so", dir);
    cr_assert_eq(symlink("..data/plugin.so", link), 0);
    ks_loaded_module *v1 = open_ok(link);
    cr_assert_eq(version_of(v1), 1);
    snprintf(tmp, sizeof(tmp), "%s/..data_tmp", dir);
    cr_assert_eq(symlink("v2", tmp), 0);
    cr_assert_eq(rename(tmp, data), 0); /* the atomic swap */
    ks_loaded_module *v2 = open_ok(link);
    cr_expect_eq(version_of(v2), 2, "the new target was served from the loaded object");
    ks__loader_close(v1);
    ks__loader_close(v2);
}

Test(loader_reload, a_loaded_file_changed_in_place_is_refused)
{
    char path[512], err[1024] = "", want[1024];
    snprintf(path, sizeof(path), "%s/plugin.so", dir);
    install_file(FIX_RELOAD_V1, path);
    ks_loaded_module *v1 = open_ok(path);
    /* append a byte: same inode, new size and modification time */
    FILE *f = fopen(path, "ab");
    cr_assert_not_null(f);
    fputc(0, f);
    fclose(f);
    ks_loaded_module *mod = NULL;
    int rc = ks__loader_open(path, ks__host_api(), &mod, err, sizeof(err));
    cr_expect_neq(rc, 0, "a file changed in place was loaded (glibc serves the old object)");
    cr_expect_null(mod);
    snprintf(want, sizeof(want),
             "%s: was changed in place while kubesched has it loaded (same inode, new size or "
             "modification time); a loaded shared object cannot be loaded again that way, and "
             "writing into it may break the running copy: install a new version by renaming a "
             "new file over it (install(1), mv, or the volume's atomic update)",
             path);
    cr_expect_str_eq(err, want);
    ks__loader_close(v1);
    /* once nothing holds it, the file loads again as it is now */
    ks_loaded_module *v1b = open_ok(path);
    cr_expect_eq(version_of(v1b), 1);
    ks__loader_close(v1b);
}
