/*
 * Loader tests: every refusal the loader promises (missing file, not a shared object, no entry
 * symbol, ABI major / pointer width / struct sizes, malformed descriptors, init failing, names
 * taken), each with its exact one-sentence message, plus what it accepts (older and newer minor
 * versions) and how ks__loader_load_config_plugins names configuration fields.
 *
 * The fixture modules are built from the sources in fixtures/ by CMakeLists.txt; their paths arrive
 * as FIX_...
 * compile definitions. The host table is the real one (core/sched/host_api.c), as kubesched hands
 * it over.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "sched/host_api.h"
#include "sched/loader.h"
#include "config/registry.h"
#include "harness.h"

static const ks_host_api *host;

static void setup(void)
{
    ks__host_init();
    host = ks__host_api();
}

TestSuite(loader_open, .init = setup);
TestSuite(loader_config, .init = setup);
TestSuite(loader_schema, .init = setup);

static char err[2048];
static char want[2048];

/* Opens path expecting failure; returns the code and leaves the message in err. */
static int open_fails(const char *path)
{
    ks_loaded_module *mod = (ks_loaded_module *)1;
    int rc = ks__loader_open(path, host, &mod, err, sizeof(err));
    cr_assert_neq(rc, 0, "%s loaded but should not have", path);
    cr_assert_null(mod, "a failed open must leave *out NULL");
    return rc;
}

#define expect_message(...)                                                                        \
    do {                                                                                           \
        snprintf(want, sizeof(want), __VA_ARGS__);                                                 \
        cr_assert_str_eq(err, want);                                                               \
    } while (0)

/* ---- ks__loader_open: what it accepts -------------------------------------------------------- */

Test(loader_open, loads_good_module_and_runs_init)
{
    ks_loaded_module *mod = NULL;
    const ks_plugin_desc *const *descs;
    const ks_host_api *(*host_of)(void);
    void *handle;
    int64_t score = 0;

    cr_assert_eq(ks__loader_open(FIX_GOOD, host, &mod, err, sizeof(err)), 0, "%s", err);
    cr_assert_str_eq(err, "");
    cr_assert_str_eq(ks__loaded_module_path(mod), FIX_GOOD);
    cr_assert_eq(ks__loaded_module_plugins(mod, &descs), 2);
    cr_assert_str_eq(descs[0]->name, "LoaderGoodFilter");
    cr_assert_str_eq(descs[1]->name, "LoaderGoodScore");
    cr_assert_eq(descs[0]->size, sizeof(ks_plugin_desc));
    cr_assert_not_null(descs[0]->filter);
    cr_assert_null(descs[0]->score);
    cr_assert_eq(descs[0]->filter(NULL, NULL, NULL, NULL, NULL), KS_UNSCHEDULABLE);
    cr_assert_eq(descs[1]->score(NULL, NULL, NULL, NULL, &score, NULL), KS_SUCCESS);
    cr_assert_eq(score, 42);

    /* init() stored our host table in the module's own (hidden) ks_host. */
    handle = dlopen(FIX_GOOD, RTLD_NOW | RTLD_NOLOAD);
    cr_assert_not_null(handle);
    *(void **)&host_of = dlsym(handle, "loader_good_host");
    cr_assert_not_null(host_of);
    cr_assert_eq(host_of(), host);
    /* Hidden visibility: nothing but the entry symbol (and the helper above) is exported. */
    cr_assert_null(dlsym(handle, "ks_host"));
    dlclose(handle);
    ks__loader_close(mod);
}

Test(loader_open, older_descriptor_slots_read_as_null)
{
    ks_loaded_module *mod = NULL;
    const ks_plugin_desc *const *descs;
    cr_assert_eq(ks__loader_open(FIX_OLD_DESC, host, &mod, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ks__loaded_module_plugins(mod, &descs), 1);
    cr_assert_eq(descs[0]->size, sizeof(ks_plugin_desc));
    cr_assert_not_null(descs[0]->pre_filter, "slots inside the plugin's size are copied");
    cr_assert_null(descs[0]->filter, "slots past the plugin's size must read as NULL");
    cr_assert_null(descs[0]->score);
    ks__loader_close(mod);
}

Test(loader_open, newer_minor_is_accepted_and_its_tail_ignored)
{
    ks_loaded_module *mod = NULL;
    const ks_plugin_desc *const *descs;
    cr_assert_eq(ks__loader_open(FIX_NEWER_MINOR, host, &mod, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ks__loaded_module_plugins(mod, &descs), 1);
    cr_assert_str_eq(descs[0]->name, "LoaderFixture");
    cr_assert_not_null(descs[0]->score);
    cr_assert_eq(descs[0]->size, sizeof(ks_plugin_desc));
    ks__loader_close(mod);
}

Test(loader_open, close_null_is_noop)
{
    ks__loader_close(NULL);
    ks__loader_close_all(NULL);
}

/* ---- ks__loader_open: what it refuses -------------------------------------------------------- */

Test(loader_open, missing_file)
{
    cr_assert_eq(open_fails(FIX_DIR "/no-such-plugin.so"), KS_ENOTFOUND);
    expect_message("%s/no-such-plugin.so: cannot open plugin shared object: No such file or "
                   "directory",
                   FIX_DIR);
}

Test(loader_open, bare_name_is_a_file_not_a_library_search)
{
    /* Without a slash dlopen would find the system's libc; the loader must look in the cwd. */
    cr_assert_eq(chdir(FIX_DIR), 0);
    open_fails("libc.so.6");
    cr_assert_str_eq(err, "libc.so.6: cannot open plugin shared object: No such file or directory");
}

Test(loader_open, bare_name_in_cwd_loads)
{
    ks_loaded_module *mod = NULL;
    const char *slash = strrchr(FIX_GOOD, '/');
    char dir[1024];
    snprintf(dir, sizeof(dir), "%.*s", (int)(slash - FIX_GOOD), FIX_GOOD);
    cr_assert_eq(chdir(dir), 0);
    cr_assert_eq(ks__loader_open(slash + 1, host, &mod, err, sizeof(err)), 0, "%s", err);
    ks__loader_close(mod);
}

Test(loader_open, directory)
{
    open_fails(FIX_DIR);
    expect_message("%s: is a directory, not a plugin shared object", FIX_DIR);
}

Test(loader_open, text_file_is_not_a_shared_object)
{
    cr_assert_eq(open_fails(FIX_NOT_ELF), KS_EIO);
    expect_message("%s: cannot load as a shared object: invalid ELF header", FIX_NOT_ELF);
}

Test(loader_open, empty_file_is_not_a_shared_object)
{
    open_fails(FIX_EMPTY);
    expect_message("%s: cannot load as a shared object: file too short", FIX_EMPTY);
}

Test(loader_open, missing_entry_symbol)
{
    cr_assert_eq(open_fails(FIX_NO_SYMBOL), KS_ENOTFOUND);
    expect_message("%s: does not export ks_module_info; define the module with "
                   "KS_DEFINE_MODULE(...)",
                   FIX_NO_SYMBOL);
}

Test(loader_open, entry_symbol_is_a_function)
{
    cr_assert_eq(open_fails(FIX_FUNC_SYMBOL), KS_EABI);
    expect_message("%s: ks_module_info is a function, not the data object that "
                   "KS_DEFINE_MODULE(...) defines; define the module with KS_DEFINE_MODULE(...)",
                   FIX_FUNC_SYMBOL);
}

Test(loader_open, entry_symbol_too_small_for_a_header)
{
    cr_assert_eq(open_fails(FIX_TINY_SYMBOL), KS_EABI);
    expect_message("%s: its ks_module_info is 8 bytes, too small for a kubesched module header; "
                   "define the module with KS_DEFINE_MODULE(...)",
                   FIX_TINY_SYMBOL);
}

Test(loader_open, abi_major_mismatch_names_both_versions)
{
    cr_assert_eq(open_fails(FIX_ABI_MAJOR), KS_EABI);
    expect_message("%s: built for kubesched plugin ABI %d.0, this kubesched provides ABI %d.%d; "
                   "rebuild the plugin against this kubesched's SDK",
                   FIX_ABI_MAJOR, KS_ABI_MAJOR + 1, KS_ABI_MAJOR, KS_ABI_MINOR);
}

Test(loader_open, pointer_width_mismatch)
{
    cr_assert_eq(open_fails(FIX_POINTER_SIZE), KS_EABI);
    expect_message("%s: built for 32-bit pointers (kubesched plugin ABI %d.%d), this kubesched "
                   "uses %zu-bit pointers (ABI %d.%d); rebuild the plugin for this platform "
                   "against this kubesched's SDK",
                   FIX_POINTER_SIZE, KS_ABI_MAJOR, KS_ABI_MINOR, sizeof(void *) * 8, KS_ABI_MAJOR,
                   KS_ABI_MINOR);
}

Test(loader_open, module_size_too_small)
{
    cr_assert_eq(open_fails(FIX_SMALL_MODULE), KS_EABI);
    expect_message("%s: its ks_module_info is 16 bytes but ABI %d.0 needs at least %zu (built for "
                   "kubesched plugin ABI %d.%d, this kubesched provides ABI %d.%d); rebuild the "
                   "plugin against this kubesched's SDK",
                   FIX_SMALL_MODULE, KS_ABI_MAJOR, sizeof(ks_module), KS_ABI_MAJOR, KS_ABI_MINOR,
                   KS_ABI_MAJOR, KS_ABI_MINOR);
}

Test(loader_open, module_size_larger_than_symbol)
{
    cr_assert_eq(open_fails(FIX_CLAIMS_MORE), KS_EABI);
    expect_message("%s: its ks_module_info claims 4096 bytes but the symbol is %zu bytes; define "
                   "the module with KS_DEFINE_MODULE(...)",
                   FIX_CLAIMS_MORE, sizeof(ks_module));
}

Test(loader_open, no_plugins)
{
    open_fails(FIX_NO_PLUGINS);
    expect_message("%s: its module defines no plugins; list them in KS_DEFINE_MODULE(...)",
                   FIX_NO_PLUGINS);
}

Test(loader_open, null_descriptor)
{
    open_fails(FIX_NULL_DESC);
    expect_message("%s: plugin descriptor 2 of 2 is NULL", FIX_NULL_DESC);
}

Test(loader_open, descriptor_too_small)
{
    cr_assert_eq(open_fails(FIX_SMALL_DESC), KS_EABI);
    expect_message("%s: plugin descriptor 1 of 1 is 4 bytes but ABI %d.0 needs at least %zu "
                   "(built for kubesched plugin ABI %d.%d, this kubesched provides ABI %d.%d); "
                   "rebuild the plugin against this kubesched's SDK",
                   FIX_SMALL_DESC, KS_ABI_MAJOR, offsetof(ks_plugin_desc, name) + sizeof(char *),
                   KS_ABI_MAJOR, KS_ABI_MINOR, KS_ABI_MAJOR, KS_ABI_MINOR);
}

Test(loader_open, descriptor_without_name)
{
    open_fails(FIX_NO_NAME);
    expect_message("%s: plugin descriptor 2 of 2 has no name", FIX_NO_NAME);
}

Test(loader_open, duplicate_name_in_one_module)
{
    cr_assert_eq(open_fails(FIX_DUP_NAMES), KS_EEXIST);
    expect_message("%s: defines plugin \"LoaderFixture\" twice (descriptors 1 and 2 of 2)",
                   FIX_DUP_NAMES);
}

Test(loader_open, init_failure_carries_its_message)
{
    open_fails(FIX_INIT_FAIL);
    expect_message("%s: module init failed: cannot read /nonexistent/fixture.conf (host ABI %d.%d)",
                   FIX_INIT_FAIL, KS_ABI_MAJOR, KS_ABI_MINOR);
}

Test(loader_open, init_failure_without_message)
{
    open_fails(FIX_INIT_SILENT);
    expect_message("%s: module init failed (returned 7) without a message", FIX_INIT_SILENT);
}

Test(loader_open, truncates_long_messages_safely)
{
    char small[24];
    ks_loaded_module *mod = NULL;
    memset(small, 'x', sizeof(small));
    cr_assert_neq(ks__loader_open(FIX_ABI_MAJOR, host, &mod, small, sizeof(small)), 0);
    cr_assert_eq(strlen(small), sizeof(small) - 1);
}

/* ---- ks__loader_load_config_plugins -------------------------------------------------------- */

/* A configuration with up to 2 profiles of up to 3 pluginConfig entries, built by hand so these
 * tests depend on nothing but config.h's structs. */
struct fake_config {
    ks_config cfg;
    ks_profile_config profiles[2];
    ks_plugin_config pcs[2][3];
};

static void fake_add(struct fake_config *fc, size_t profile, const char *name, const char *so,
                     const char *field)
{
    ks_profile_config *p = &fc->profiles[profile];
    ks_plugin_config *pc = &fc->pcs[profile][p->nplugin_configs++];
    fc->cfg.path = (char *)"/etc/kubesched/config.yaml";
    fc->cfg.profiles = fc->profiles;
    if (fc->cfg.nprofiles <= profile)
        fc->cfg.nprofiles = profile + 1;
    p->plugin_configs = fc->pcs[profile];
    pc->name = (char *)name;
    pc->so_path = (char *)so;
    pc->field = (char *)field;
}

Test(loader_config, loads_each_file_once_and_registers_all_its_plugins)
{
    struct fake_config fc = {0};
    ks_registry *reg = th_registry_new();
    ks_loaded_module **mods = NULL;
    size_t before = ks__registry_count(reg);

    fake_add(&fc, 0, "NodeResourcesFit", NULL, "profiles[0].pluginConfig[0]");
    fake_add(&fc, 0, "LoaderGoodFilter", FIX_GOOD, "profiles[0].pluginConfig[1]");
    fake_add(&fc, 1, "LoaderGoodScore", FIX_GOOD, "profiles[1].pluginConfig[0]");
    cr_assert_eq(ks__loader_load_config_plugins(&fc.cfg, reg, host, &mods, err, sizeof(err)), 0,
                 "%s", err);
    cr_assert_not_null(mods);
    cr_assert_not_null(mods[0]);
    cr_assert_null(mods[1], "the same file is loaded once");
    cr_assert_eq(ks__registry_count(reg), before + 2);
    cr_assert_not_null(ks__registry_find(reg, "LoaderGoodFilter"));
    cr_assert_not_null(ks__registry_find(reg, "LoaderGoodScore")->score);
    cr_assert_str_eq(ks__registry_origin(reg, "LoaderGoodScore"), FIX_GOOD);
    ks__registry_free(reg);
    ks__loader_close_all(mods);
}

Test(loader_config, no_plugin_paths_gives_empty_list)
{
    struct fake_config fc = {0};
    ks_registry *reg = th_registry_new();
    ks_loaded_module **mods = NULL;
    fake_add(&fc, 0, "NodeResourcesFit", NULL, "profiles[0].pluginConfig[0]");
    cr_assert_eq(ks__loader_load_config_plugins(&fc.cfg, reg, host, &mods, err, sizeof(err)), 0);
    cr_assert_not_null(mods);
    cr_assert_null(mods[0]);
    ks__loader_close_all(mods);
    ks__registry_free(reg);
}

Test(loader_config, open_error_is_prefixed_with_the_field_path)
{
    struct fake_config fc = {0};
    ks_registry *reg = th_registry_new();
    ks_loaded_module **mods = NULL;
    fake_add(&fc, 0, "LoaderGoodFilter", FIX_GOOD, "profiles[0].pluginConfig[0]");
    fake_add(&fc, 1, "LoaderFixture", FIX_ABI_MAJOR, NULL); /* field computed from indices */
    cr_assert_eq(ks__loader_load_config_plugins(&fc.cfg, reg, host, &mods, err, sizeof(err)),
                 KS_EABI);
    cr_assert_null(mods);
    expect_message("/etc/kubesched/config.yaml: profiles[1].pluginConfig[0].args."
                   "kubeschedPluginPath: %s: built for kubesched plugin ABI %d.0, this kubesched "
                   "provides ABI %d.%d; rebuild the plugin against this kubesched's SDK",
                   FIX_ABI_MAJOR, KS_ABI_MAJOR + 1, KS_ABI_MAJOR, KS_ABI_MINOR);
    cr_assert_null(ks__registry_find(reg, "LoaderGoodFilter"), "nothing added on failure");
    ks__registry_free(reg);
}

Test(loader_config, plugin_name_must_be_defined_by_the_file)
{
    struct fake_config fc = {0};
    ks_registry *reg = th_registry_new();
    ks_loaded_module **mods = NULL;
    fake_add(&fc, 0, "LoaderGoodFilter", FIX_GOOD, "profiles[0].pluginConfig[0]");
    fake_add(&fc, 0, "LoaderGodScore", FIX_GOOD, "profiles[0].pluginConfig[1]");
    cr_assert_eq(ks__loader_load_config_plugins(&fc.cfg, reg, host, &mods, err, sizeof(err)),
                 KS_ENOTFOUND);
    expect_message("/etc/kubesched/config.yaml: profiles[0].pluginConfig[1].args."
                   "kubeschedPluginPath: %s defines no plugin named \"LoaderGodScore\" (it "
                   "defines LoaderGoodFilter, LoaderGoodScore); set kubeschedPluginPath in the "
                   "pluginConfig entry of a plugin that file defines",
                   FIX_GOOD);
    ks__registry_free(reg);
}

Test(loader_config, clash_with_in_tree_plugin_is_the_registry_error)
{
    struct fake_config fc = {0};
    ks_registry *reg = th_registry_new();
    ks_loaded_module **mods = NULL;
    size_t before = ks__registry_count(reg);
    fake_add(&fc, 0, "LoaderGoodFilter", FIX_GOOD, "profiles[0].pluginConfig[0]");
    fake_add(&fc, 0, "NodeName", FIX_CLASH_INTREE, "profiles[0].pluginConfig[1]");
    cr_assert_eq(ks__loader_load_config_plugins(&fc.cfg, reg, host, &mods, err, sizeof(err)),
                 KS_EEXIST);
    expect_message("/etc/kubesched/config.yaml: profiles[0].pluginConfig[1].args."
                   "kubeschedPluginPath: %s: duplicate plugin name \"NodeName\" (already "
                   "registered by in-tree)",
                   FIX_CLASH_INTREE);
    cr_assert_eq(ks__registry_count(reg), before, "the registry is unchanged after a clash");
    cr_assert_str_eq(ks__registry_origin(reg, "NodeName"), "in-tree");
    ks__registry_free(reg);
}

Test(loader_config, clash_between_two_files)
{
    struct fake_config fc = {0};
    ks_registry *reg = th_registry_new();
    ks_loaded_module **mods = NULL;
    fake_add(&fc, 0, "LoaderGoodFilter", FIX_GOOD, "profiles[0].pluginConfig[0]");
    fake_add(&fc, 1, "LoaderGoodFilter", FIX_CROSS_DUP, "profiles[1].pluginConfig[0]");
    cr_assert_eq(ks__loader_load_config_plugins(&fc.cfg, reg, host, &mods, err, sizeof(err)),
                 KS_EEXIST);
    expect_message("/etc/kubesched/config.yaml: profiles[1].pluginConfig[0].args."
                   "kubeschedPluginPath: %s: duplicate plugin name \"LoaderGoodFilter\" (already "
                   "registered by %s)",
                   FIX_CROSS_DUP, FIX_GOOD);
    cr_assert_null(ks__registry_find(reg, "LoaderGoodFilter"));
    ks__registry_free(reg);
}

Test(loader_config, missing_file_names_config_and_field)
{
    struct fake_config fc = {0};
    ks_registry *reg = th_registry_new();
    ks_loaded_module **mods = NULL;
    fake_add(&fc, 0, "X", "/nonexistent/libx.so", "profiles[0].pluginConfig[0]");
    cr_assert_eq(ks__loader_load_config_plugins(&fc.cfg, reg, host, &mods, err, sizeof(err)),
                 KS_ENOTFOUND);
    cr_assert_str_eq(err, "/etc/kubesched/config.yaml: profiles[0].pluginConfig[0].args."
                          "kubeschedPluginPath: /nonexistent/libx.so: cannot open plugin shared "
                          "object: No such file or directory");
    ks__registry_free(reg);
}

/* ---- args schemas (ABI 1.3) ---------------------------------------------------------------- */

/* A configuration naming `so` for the plugin LoaderSchema with `args` (YAML flow mapping), loaded,
 * its plugins loaded, then its args checked. Returns the check's result; *cfg stays for the
 * caller to read (free with the registry and modules via schema_done). */
struct schema_run {
    ks_config *cfg;
    ks_registry *reg;
    ks_loaded_module **mods;
};

static int schema_check(struct schema_run *r, const char *so, const char *args)
{
    char yaml[1024];
    snprintf(yaml, sizeof(yaml),
             "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
             "profiles:\n- pluginConfig:\n  - name: LoaderSchema\n"
             "    args: {kubeschedPluginPath: %s%s%s}\n",
             so, args[0] ? ", " : "", args);
    memset(r, 0, sizeof(*r));
    r->reg = th_registry_new();
    cr_assert_eq(ks__config_load_string(r->reg, yaml, "cfg.yaml", &r->cfg, err, sizeof(err)), 0,
                 "%s", err);
    cr_assert_eq(ks__loader_load_config_plugins(r->cfg, r->reg, host, &r->mods, err, sizeof(err)),
                 0, "%s", err);
    return ks__config_check_plugin_args(r->cfg, r->reg, err, sizeof(err));
}

/* What err must be: `rest` at line 6, column of the byte `offset` of the args that
 * schema_check(so, ...) wrote after "    args: {kubeschedPluginPath: <so>, " (the fixture's path,
 * so the column, depends on the build folder). */
static void expect_err_at(const char *so, size_t offset, const char *rest)
{
    char expected[1024];
    size_t col =
        strlen("    args: {kubeschedPluginPath: ") + strlen(so) + strlen(", ") + offset + 1;
    snprintf(expected, sizeof(expected), "cfg.yaml:6:%zu: %s", col, rest);
    cr_assert_str_eq(err, expected);
}

static void schema_done(struct schema_run *r)
{
    ks__registry_free(r->reg);
    ks__loader_close_all(r->mods);
    ks__config_free(r->cfg);
}

static char *schema_args_json(const struct schema_run *r)
{
    return cJSON_PrintUnformatted(r->cfg->profiles[0].plugin_configs[0].args);
}

Test(loader_schema, descriptor_schema_is_copied_for_abi_1_3)
{
    ks_loaded_module *mod = NULL;
    const ks_plugin_desc *const *descs;
    cr_assert_eq(ks__loader_open(FIX_ARGS_SCHEMA, host, &mod, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ks__loaded_module_plugins(mod, &descs), 1);
    cr_assert_not_null(descs[0]->args_schema);
    cr_assert_str_eq(descs[0]->args_schema->kind, "LoaderFixtureArgs");
    cr_assert_eq(descs[0]->args_schema->nfields, 3);
    ks__loader_close(mod);
}

Test(loader_schema, abi_1_2_descriptor_loads_without_a_schema)
{
    ks_loaded_module *mod = NULL;
    const ks_plugin_desc *const *descs;
    cr_assert_eq(ks__loader_open(FIX_ABI_1_2, host, &mod, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ks__loaded_module_plugins(mod, &descs), 1);
    cr_assert_not_null(descs[0]->filter);
    cr_assert_null(descs[0]->args_schema, "a 1.2 descriptor ends before args_schema");
    ks__loader_close(mod);
}

Test(loader_schema, unknown_key_is_refused_with_the_field_path)
{
    struct schema_run r;
    cr_assert_neq(schema_check(&r, FIX_ARGS_SCHEMA, "threshold: 3, treshold: 4"), 0);
    expect_err_at(FIX_ARGS_SCHEMA, 14,
                  "profiles[0].pluginConfig[0].args: unknown field \"treshold\" (valid: "
                  "threshold, mode, nested)");
    schema_done(&r);
}

Test(loader_schema, types_kind_and_bounds_are_checked)
{
    struct schema_run r;
    cr_assert_neq(schema_check(&r, FIX_ARGS_SCHEMA, "threshold: high"), 0);
    expect_err_at(FIX_ARGS_SCHEMA, 0,
                  "profiles[0].pluginConfig[0].args.threshold: expected an integer, got string "
                  "\"high\"");
    schema_done(&r);
    cr_assert_neq(schema_check(&r, FIX_ARGS_SCHEMA, "threshold: 11"), 0);
    expect_err_at(FIX_ARGS_SCHEMA, 0,
                  "profiles[0].pluginConfig[0].args.threshold: Invalid value: 11: not in valid "
                  "range [0, 10]");
    schema_done(&r);
    cr_assert_neq(schema_check(&r, FIX_ARGS_SCHEMA, "nested: {level: 2, depth: 1}"), 0);
    expect_err_at(FIX_ARGS_SCHEMA, 19,
                  "profiles[0].pluginConfig[0].args.nested: unknown field \"depth\" (valid: "
                  "level)");
    schema_done(&r);
    cr_assert_neq(schema_check(&r, FIX_ARGS_SCHEMA, "kind: OtherArgs"), 0);
    expect_err_at(FIX_ARGS_SCHEMA, 0,
                  "profiles[0].pluginConfig[0].args: args for plugin LoaderSchema were not of "
                  "type kubescheduler.config.k8s.io/LoaderFixtureArgs, got kind OtherArgs");
    schema_done(&r);
}

Test(loader_schema, defaults_are_filled_in_and_nulls_dropped)
{
    struct schema_run r;
    char *json;
    cr_assert_eq(schema_check(&r, FIX_ARGS_SCHEMA, "threshold: 10, mode: '', nested: ~"), 0, "%s",
                 err);
    json = schema_args_json(&r);
    cr_assert_str_eq(json, "{\"kubeschedPluginPath\":\"" FIX_ARGS_SCHEMA "\",\"threshold\":10,"
                           "\"mode\":\"fast\",\"nested\":{\"level\":1}}");
    free(json);
    schema_done(&r);
}

Test(loader_schema, abi_1_2_plugin_args_pass_unchecked)
{
    struct schema_run r;
    char *json;
    cr_assert_eq(schema_check(&r, FIX_ABI_1_2, "treshold: 4"), 0, "%s", err);
    json = schema_args_json(&r);
    cr_assert_str_eq(json, "{\"kubeschedPluginPath\":\"" FIX_ABI_1_2 "\",\"treshold\":4}");
    free(json);
    schema_done(&r);
}

/* ---- a linked module (the in-tree plugins) ------------------------------------------------- */

Test(loader_open, linked_module_gets_the_same_checks_as_a_shared_object)
{
    static const ks_plugin_desc d = {.size = sizeof(ks_plugin_desc), .name = "LinkedFilter"};
    static const ks_plugin_desc *const ds[] = {&d};
    ks_module m = {KS_ABI_MAJOR + 1, 0, sizeof(ks_module), sizeof(void *), NULL, 1, ds};
    ks_loaded_module *mod = NULL;
    const ks_plugin_desc *const *descs;
    cr_assert_eq(ks__loader_open_linked(&m, "in-tree", host, &mod, err, sizeof(err)), KS_EABI);
    snprintf(want, sizeof(want),
             "in-tree: built for kubesched plugin ABI %d.0, this kubesched provides ABI %d.%d; "
             "rebuild the plugin against this kubesched's SDK",
             KS_ABI_MAJOR + 1, KS_ABI_MAJOR, KS_ABI_MINOR);
    cr_assert_str_eq(err, want);
    cr_assert_null(mod);
    m.abi_major = KS_ABI_MAJOR;
    cr_assert_eq(ks__loader_open_linked(&m, "in-tree", host, &mod, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ks__loaded_module_plugins(mod, &descs), 1);
    cr_assert_str_eq(descs[0]->name, "LinkedFilter");
    cr_assert_str_eq(ks__loaded_module_path(mod), "in-tree");
    ks__loader_close(mod);
}
