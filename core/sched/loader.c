/*
 * The plugin loader: opens out-of-tree plugin shared objects, checks the module header before
 * touching anything else, normalises the plugin descriptors and hands the plugins to the registry.
 *
 * Order of the checks, and why:
 *   1. the file exists and is a regular file (stat), so a typo gets "No such file or directory"
 *      instead of dlopen's search-path wording;
 *   2. dlopen(RTLD_NOW | RTLD_LOCAL): every undefined symbol is reported now, not at the first
 *      Filter call, and two plugins never see each other's symbols (each has its own hidden
 *      `ks_host`);
 *   3. dlsym("ks_module_info"), and where the C library can tell us (dladdr1), that it is a data
 *      object at least as large as the 16-byte header we are about to read;
 *   4. the header, which has the same four uint32 fields in every ABI: abi_major first (a module of
 *      another major may lay out everything after the header differently, so its version is the
 *      one fact worth reporting), then pointer_size (the offsets of init/nplugins/plugins depend on
 *      it), then size >= the ABI 1.0 ks_module (offsetof(plugins) + sizeof(plugins));
 *   5. nplugins / plugins, and every descriptor: size >= the ABI 1.0 minimum (size and name), a
 *      non-empty name, no name twice in the module;
 *   6. only then init(host).
 * A module linked into the program (the in-tree plugins, ks__loader_open_linked) skips 1-3, which
 * are about finding it, and goes through 4-6 like any other.
 *
 * Minor versions: a module built against an older minor has a smaller descriptor; the copy made
 * here is zeroed first, so the slots it lacks read as NULL ("not implemented"). A module built
 * against a NEWER minor (abi_minor > KS_ABI_MINOR) is accepted: the descriptor tail this host does
 * not know is ignored, and the module must test KS_HOST_HAS() before calling a host function newer
 * than the host it runs in (the host table's size says which slots exist). That is the contract
 * sqlite and redis modules follow, and it lets one plugin binary serve several kubesched releases
 * of the same major version.
 */
#define _GNU_SOURCE /* dladdr1, RTLD_DL_SYMENT */

#include "sched/loader.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#if defined(__GLIBC__) /* dladdr1 and RTLD_DL_SYMENT (an enum value, not a macro) */
#include <elf.h>
#include <link.h>
#define HAVE_DLADDR1 1
#endif

#include "config/config.h"
#include "config/registry.h"

/* The smallest structs any ABI 1.x module may hand us: what ABI 1.0 defined. */
#define MODULE_HEADER_SIZE (offsetof(ks_module, init))
#define MODULE_MIN_SIZE (offsetof(ks_module, plugins) + sizeof(((ks_module *)0)->plugins))
#define DESC_MIN_SIZE (offsetof(ks_plugin_desc, name) + sizeof(((ks_plugin_desc *)0)->name))
/* More than this is a corrupted header, not a real module. */
#define MAX_PLUGINS 1024u

struct ks_loaded_module {
    char *path;   /* as given (messages, registry origin) */
    void *handle; /* dlopen */
    /* The file's identity when it was opened (shared objects only; live_files), and how many
     * "./" the name given to dlopen had (0: the path as given). */
    struct live_file *live;
    const ks_module *info;
    size_t nplugins;
    ks_plugin_desc *descs;            /* normalised full-size copies */
    const ks_plugin_desc **desc_ptrs; /* &descs[i], what ks__loaded_module_plugins hands out */
};

static int fail(char *err, size_t errlen, int code, const char *fmt, ...) KS_PRINTF(4, 5);

static int fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
    va_list ap;
    if (err && errlen) {
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* dlerror() text without the leading "<path>: " it usually repeats. */
static const char *trim_dlerror(const char *msg, const char *path)
{
    size_t n = strlen(path);
    if (!msg)
        return "unknown dynamic loader error";
    if (strncmp(msg, path, n) == 0 && msg[n] == ':') {
        msg += n + 1;
        while (*msg == ' ')
            msg++;
    }
    return msg;
}

/* Fills mod->descs from the module's descriptors after checking each one. */
static int copy_descriptors(ks_loaded_module *mod, const char *path, char *err, size_t errlen)
{
    const ks_module *m = mod->info;
    size_t n = m->nplugins;

    if (n == 0 || m->plugins == NULL)
        return fail(err, errlen, KS_EINVAL,
                    "%s: its module defines no plugins; list them in KS_DEFINE_MODULE(...)", path);
    if (n > MAX_PLUGINS)
        return fail(err, errlen, KS_EABI,
                    "%s: its module claims %zu plugins (at most %u are possible), so its "
                    "ks_module_info is not a kubesched module; define the module with "
                    "KS_DEFINE_MODULE(...)",
                    path, n, MAX_PLUGINS);
    for (size_t i = 0; i < n; i++) {
        const ks_plugin_desc *d = m->plugins[i];
        if (!d)
            return fail(err, errlen, KS_EINVAL, "%s: plugin descriptor %zu of %zu is NULL", path,
                        i + 1, n);
        if (d->size < DESC_MIN_SIZE)
            return fail(err, errlen, KS_EABI,
                        "%s: plugin descriptor %zu of %zu is %u bytes but ABI %d.0 needs at least "
                        "%zu (built for kubesched plugin ABI %u.%u, this kubesched provides ABI "
                        "%d.%d); rebuild the plugin against this kubesched's SDK",
                        path, i + 1, n, (unsigned)d->size, KS_ABI_MAJOR, DESC_MIN_SIZE,
                        (unsigned)m->abi_major, (unsigned)m->abi_minor, KS_ABI_MAJOR, KS_ABI_MINOR);
        if (!d->name || !d->name[0])
            return fail(err, errlen, KS_EINVAL, "%s: plugin descriptor %zu of %zu has no name",
                        path, i + 1, n);
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(m->plugins[i]->name, m->plugins[j]->name) == 0)
                return fail(err, errlen, KS_EEXIST,
                            "%s: defines plugin \"%s\" twice (descriptors %zu and %zu of %zu)",
                            path, m->plugins[i]->name, j + 1, i + 1, n);

    mod->descs = calloc(n, sizeof(*mod->descs));
    mod->desc_ptrs = calloc(n, sizeof(*mod->desc_ptrs));
    if (!mod->descs || !mod->desc_ptrs)
        return fail(err, errlen, KS_ENOMEM, "%s: out of memory", path);
    for (size_t i = 0; i < n; i++) {
        const ks_plugin_desc *d = m->plugins[i];
        size_t len = d->size < sizeof(ks_plugin_desc) ? d->size : sizeof(ks_plugin_desc);
        memcpy(&mod->descs[i], d, len);
        /* The copy has every slot this host knows (NULL where the plugin has none). */
        mod->descs[i].size = (uint32_t)sizeof(ks_plugin_desc);
        mod->desc_ptrs[i] = &mod->descs[i];
    }
    mod->nplugins = n;
    return 0;
}

/* Checks ks_module_info's header. sym_size is the ELF symbol size, 0 when unknown. */
static int check_module(const ks_module *m, size_t sym_size, const char *path, char *err,
                        size_t errlen)
{
    if (m->abi_major != KS_ABI_MAJOR)
        return fail(err, errlen, KS_EABI,
                    "%s: built for kubesched plugin ABI %u.%u, this kubesched provides ABI %d.%d; "
                    "rebuild the plugin against this kubesched's SDK",
                    path, (unsigned)m->abi_major, (unsigned)m->abi_minor, KS_ABI_MAJOR,
                    KS_ABI_MINOR);
    if (m->pointer_size != sizeof(void *))
        return fail(err, errlen, KS_EABI,
                    "%s: built for %u-bit pointers (kubesched plugin ABI %u.%u), this kubesched "
                    "uses %zu-bit pointers (ABI %d.%d); rebuild the plugin for this platform "
                    "against this kubesched's SDK",
                    path, (unsigned)m->pointer_size * 8u, (unsigned)m->abi_major,
                    (unsigned)m->abi_minor, sizeof(void *) * 8, KS_ABI_MAJOR, KS_ABI_MINOR);
    if (m->size < MODULE_MIN_SIZE)
        return fail(err, errlen, KS_EABI,
                    "%s: its ks_module_info is %u bytes but ABI %d.0 needs at least %zu (built for "
                    "kubesched plugin ABI %u.%u, this kubesched provides ABI %d.%d); rebuild the "
                    "plugin against this kubesched's SDK",
                    path, (unsigned)m->size, KS_ABI_MAJOR, MODULE_MIN_SIZE, (unsigned)m->abi_major,
                    (unsigned)m->abi_minor, KS_ABI_MAJOR, KS_ABI_MINOR);
    if (sym_size && sym_size < m->size)
        return fail(err, errlen, KS_EABI,
                    "%s: its ks_module_info claims %u bytes but the symbol is %zu bytes; define "
                    "the module with KS_DEFINE_MODULE(...)",
                    path, (unsigned)m->size, sym_size);
    return 0;
}

/* Everything after the module is found, the same for a shared object and a linked module: the
 * header checks, the descriptor copies, then init(host). sym_size is the ELF symbol size, 0 when
 * unknown. */
static int start_module(ks_loaded_module *mod, const ks_module *info, size_t sym_size,
                        const ks_host_api *host, char *err, size_t errlen)
{
    char msg[512];
    int rc, irc;

    mod->info = info;
    rc = check_module(mod->info, sym_size, mod->path, err, errlen);
    if (rc == 0)
        rc = copy_descriptors(mod, mod->path, err, errlen);
    if (rc != 0 || !mod->info->init)
        return rc;
    memset(msg, 0, sizeof(msg));
    irc = mod->info->init(host, msg, sizeof(msg));
    msg[sizeof(msg) - 1] = '\0';
    if (irc == 0)
        return 0;
    if (msg[0])
        return fail(err, errlen, KS_EINVAL, "%s: module init failed: %s", mod->path, msg);
    return fail(err, errlen, KS_EINVAL, "%s: module init failed (returned %d) without a message",
                mod->path, irc);
}

/* The path names a file that is not a directory (checks 1 of the list above). */
static int check_path(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (!path || !path[0])
        return fail(err, errlen, KS_EINVAL, "empty plugin shared object path");
    if (stat(path, &st) != 0)
        return fail(err, errlen, errno == ENOENT ? KS_ENOTFOUND : KS_EIO,
                    "%s: cannot open plugin shared object: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode))
        return fail(err, errlen, KS_EIO, "%s: is a directory, not a plugin shared object", path);
    return 0;
}

/* dlopen(), with "./" before a name without a slash: such a name would make dlopen search
 * LD_LIBRARY_PATH and the system directories instead of opening the file stat() just found. */
static int open_shared_object(ks_loaded_module *mod, const char *name, char *err, size_t errlen)
{
    size_t len = strlen(name) + 3;
    char *open_path = malloc(len);
    if (!open_path)
        return fail(err, errlen, KS_ENOMEM, "%s: out of memory", mod->path);
    snprintf(open_path, len, "%s%s", strchr(name, '/') ? "" : "./", name);
    dlerror();
    mod->handle = dlopen(open_path, RTLD_NOW | RTLD_LOCAL);
    if (!mod->handle)
        fail(err, errlen, KS_EIO, "%s: cannot load as a shared object: %s", mod->path,
             trim_dlerror(dlerror(), open_path));
    free(open_path);
    return mod->handle ? 0 : KS_EIO;
}

/* Where the C library can tell us (dladdr1): the symbol is a data object, at least as large as
 * the module header. *sym_size is its size, 0 when unknown. */
static int check_symbol_object(const ks_loaded_module *mod, void *sym, size_t *sym_size, char *err,
                               size_t errlen)
{
    *sym_size = 0;
#ifdef HAVE_DLADDR1
    Dl_info info;
    const ElfW(Sym) *esym = NULL;
    if (!dladdr1(sym, &info, (void **)&esym, RTLD_DL_SYMENT) || !esym || info.dli_saddr != sym)
        return 0;
    /* ELF32_ST_TYPE and ELF64_ST_TYPE are the same: the low 4 bits of st_info. */
    if (ELF64_ST_TYPE(esym->st_info) == STT_FUNC || ELF64_ST_TYPE(esym->st_info) == STT_GNU_IFUNC)
        return fail(err, errlen, KS_EABI,
                    "%s: " KS_MODULE_SYMBOL " is a function, not the data object that "
                    "KS_DEFINE_MODULE(...) defines; define the module with KS_DEFINE_MODULE(...)",
                    mod->path);
    *sym_size = (size_t)esym->st_size;
    if (*sym_size && *sym_size < MODULE_HEADER_SIZE)
        return fail(err, errlen, KS_EABI,
                    "%s: its " KS_MODULE_SYMBOL " is %zu bytes, too small for a kubesched "
                    "module header; define the module with KS_DEFINE_MODULE(...)",
                    mod->path, *sym_size);
#else
    (void)mod, (void)sym, (void)err, (void)errlen;
#endif
    return 0;
}

/* ---- Loading a replaced file again (hot reload) ----------------------------------------------
 *
 * glibc's dlopen() hands back the object it already has when the name matches one loaded (l_name,
 * compared as text) or when the file is one loaded (same device and inode). A configuration
 * reload loads its plugins while the previous configuration's modules are still open (they keep
 * scheduling until the switch, and their binding cycles drain after it), so opening a replaced
 * file under its old name would return the old code. The loader therefore remembers the identity
 * of every shared object it holds open, and when the file at a path is no longer the one open
 * under that path, opens it under a name glibc has not seen: the same path with "./" added before
 * the file name once per version open at the same time ("/plugins/./x.so", "/plugins/././x.so"),
 * which still names the file in dladdr() reports. The new inode makes it a new object. The name
 * given is always the resolved path (realpath): a file reached through a symbolic link that was
 * switched to a new target (a kubelet volume's "..data" swap) has a new resolved name, so it is
 * loaded afresh too.
 *
 * A file changed in place (same inode, another size or modification time) cannot be loaded again
 * at all, and writing into a mapped shared object may already have broken the running copy: such
 * a load is refused with a message saying to replace the file by renaming (install, mv, or a
 * kubelet volume's atomic swap). An unchanged file is opened as before and shares the loaded
 * object, as dlopen() always did.
 *
 * Guarded by live_mu: the reload thread loads while the main thread may close. */
struct live_file {
    struct live_file *next;
    char *real; /* realpath of the file opened */
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    unsigned variant; /* "./" inserted before the file name */
};
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static struct live_file *live_files;

static int same_identity(const struct live_file *f, const struct stat *st)
{
    return f->dev == st->st_dev && f->ino == st->st_ino && f->size == st->st_size &&
           f->mtime.tv_sec == st->st_mtim.tv_sec && f->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/* The name to give dlopen() for path (real: its realpath, st: what stat said of it): *variant
 * "./" before the file name, 0 when the path as given is safe. KS_EIO when the file was changed
 * in place while a module of it is open. Under live_mu. */
static int pick_variant(const char *path, const char *real, const struct stat *st,
                        unsigned *variant, char *err, size_t errlen)
{
    int renamed = 0;
    *variant = 0;
    for (const struct live_file *f = live_files; f; f = f->next) {
        if (same_identity(f, st) && strcmp(f->real, real) == 0) {
            /* Open already: glibc shares the object, which keeps the name of its first load;
             * that name is taken until the last of its users closes it. */
            *variant = f->variant;
            return 0;
        }
        if (f->dev == st->st_dev && f->ino == st->st_ino && !same_identity(f, st))
            return fail(err, errlen, KS_EIO,
                        "%s: was changed in place while kubesched has it loaded (same inode, new "
                        "size or modification time); a loaded shared object cannot be loaded "
                        "again that way, and writing into it may break the running copy: install "
                        "a new version by renaming a new file over it (install(1), mv, or the "
                        "volume's atomic update)",
                        path);
        if (strcmp(f->real, real) == 0 && !(f->dev == st->st_dev && f->ino == st->st_ino))
            renamed = 1;
    }
    if (!renamed)
        return 0;
    /* The lowest count no open version of this file uses. */
    for (unsigned v = 1; v < 64; v++) {
        int taken = 0;
        for (const struct live_file *f = live_files; f && !taken; f = f->next)
            taken = strcmp(f->real, real) == 0 && f->variant == v;
        if (!taken) {
            *variant = v;
            return 0;
        }
    }
    return fail(err, errlen, KS_EIO,
                "%s: 63 versions of this file are still loaded (binding cycles of old "
                "configurations have not drained); retry the reload later",
                path);
}

/* path with variant "./" before its last component ("x.so" -> "./././x.so"). Caller frees. */
static char *variant_name(const char *path, unsigned variant)
{
    const char *slash = strrchr(path, '/');
    size_t dir = slash ? (size_t)(slash - path) + 1 : 0;
    size_t len = strlen(path) + 2 * variant + 3;
    char *out = malloc(len);
    if (!out)
        return NULL;
    memcpy(out, path, dir);
    size_t o = dir;
    if (!slash) { /* a bare name would make dlopen search the library path */
        memcpy(out, "./", 2);
        o = 2;
    }
    for (unsigned k = 0; k < variant; k++, o += 2)
        memcpy(out + o, "./", 2);
    strcpy(out + o, path + dir);
    return out;
}

/* Records mod's file as open (after a successful dlopen). */
static int live_add(ks_loaded_module *mod, const char *real, const struct stat *st,
                    unsigned variant)
{
    struct live_file *f = calloc(1, sizeof(*f));
    if (!f || !(f->real = strdup(real))) {
        free(f);
        return KS_ENOMEM;
    }
    f->dev = st->st_dev;
    f->ino = st->st_ino;
    f->size = st->st_size;
    f->mtime = st->st_mtim;
    f->variant = variant;
    f->next = live_files;
    live_files = f;
    mod->live = f;
    return 0;
}

static void live_remove(struct live_file *gone)
{
    if (!gone)
        return;
    pthread_mutex_lock(&live_mu);
    for (struct live_file **p = &live_files; *p; p = &(*p)->next)
        if (*p == gone) {
            *p = gone->next;
            break;
        }
    pthread_mutex_unlock(&live_mu);
    free(gone->real);
    free(gone);
}

/* check_path's stat, and dlopen() under a name that gets this version of the file (see above).
 * Under live_mu from the stat to the record, so two loads of one path agree on the variant. */
static int open_current_version(ks_loaded_module *mod, char *err, size_t errlen)
{
    struct stat st;
    char *real = realpath(mod->path, NULL);
    unsigned variant = 0;
    int rc;
    pthread_mutex_lock(&live_mu);
    if (!real || stat(real, &st) != 0)
        rc = fail(err, errlen, KS_EIO, "%s: cannot open plugin shared object: %s", mod->path,
                  strerror(errno));
    else
        rc = pick_variant(mod->path, real, &st, &variant, err, errlen);
    char *name = rc == 0 && variant ? variant_name(real, variant) : NULL;
    if (rc == 0 && variant && !name)
        rc = fail(err, errlen, KS_ENOMEM, "%s: out of memory", mod->path);
    if (rc == 0)
        rc = open_shared_object(mod, name ? name : real, err, errlen);
    if (rc == 0 && live_add(mod, real, &st, variant) != 0)
        rc = fail(err, errlen, KS_ENOMEM, "%s: out of memory", mod->path);
    pthread_mutex_unlock(&live_mu);
    free(name);
    free(real);
    return rc;
}

/* A zeroed module record named `name` (the path, or the origin of a linked module). */
static ks_loaded_module *new_module(const char *name, char *err, size_t errlen)
{
    ks_loaded_module *mod = calloc(1, sizeof(*mod));
    if (mod && !(mod->path = strdup(name))) {
        free(mod);
        mod = NULL;
    }
    if (!mod)
        fail(err, errlen, KS_ENOMEM, "%s: out of memory", name);
    return mod;
}

int ks__loader_open(const char *path, const ks_host_api *host, ks_loaded_module **out, char *err,
                    size_t errlen)
{
    ks_loaded_module *mod;
    size_t sym_size = 0;
    void *sym;
    int rc;

    if (err && errlen)
        err[0] = '\0';
    *out = NULL;
    if ((rc = check_path(path, err, errlen)) != 0)
        return rc;
    if (!host)
        return fail(err, errlen, KS_EINVAL, "%s: no host API table to initialise the module with",
                    path);
    if (!(mod = new_module(path, err, errlen)))
        return KS_ENOMEM;
    if ((rc = open_current_version(mod, err, errlen)) != 0)
        goto out;
    dlerror();
    sym = dlsym(mod->handle, KS_MODULE_SYMBOL);
    if (!sym) {
        rc = fail(err, errlen, KS_ENOTFOUND,
                  "%s: does not export " KS_MODULE_SYMBOL
                  "; define the module with KS_DEFINE_MODULE(...)",
                  path);
        goto out;
    }
    if ((rc = check_symbol_object(mod, sym, &sym_size, err, errlen)) != 0)
        goto out;
    if ((rc = start_module(mod, sym, sym_size, host, err, errlen)) != 0)
        goto out;
    *out = mod;
    mod = NULL;
out:
    ks__loader_close(mod);
    return rc;
}

int ks__loader_open_linked(const ks_module *module, const char *origin, const ks_host_api *host,
                           ks_loaded_module **out, char *err, size_t errlen)
{
    ks_loaded_module *mod;
    int rc;

    if (err && errlen)
        err[0] = '\0';
    *out = NULL;
    if (!module || !host || !origin)
        return fail(err, errlen, KS_EINVAL, "%s: no module, origin or host API table",
                    origin ? origin : "linked module");
    if (!(mod = new_module(origin, err, errlen)))
        return KS_ENOMEM;
    rc = start_module(mod, module, sizeof(*module), host, err, errlen);
    if (rc != 0) {
        ks__loader_close(mod);
        return rc;
    }
    *out = mod;
    return 0;
}

/* Adds every plugin of mod to reg. Only out of memory or a taken name can fail; the registry then
 * keeps what was added before (its entries borrow mod's descriptors). */
static int add_module_plugins(ks_registry *reg, const ks_loaded_module *mod, char *err,
                              size_t errlen)
{
    for (size_t k = 0; k < mod->nplugins; k++) {
        int rc = ks__registry_add(reg, &mod->descs[k], mod->path, err, errlen);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static void release_module(void *mod) { ks__loader_close(mod); }

int ks__loader_register_linked(ks_registry *reg, const ks_module *module, const char *origin,
                               const ks_host_api *host, char *err, size_t errlen)
{
    ks_loaded_module *mod;
    int rc = ks__loader_open_linked(module, origin, host, &mod, err, errlen);
    if (rc != 0)
        return rc;
    /* The registry releases the module after the entries that borrow its descriptors. */
    if (ks__registry_keep(reg, release_module, mod) != 0) {
        ks__loader_close(mod);
        return fail(err, errlen, KS_ENOMEM, "%s: out of memory", origin);
    }
    return add_module_plugins(reg, mod, err, errlen);
}

size_t ks__loaded_module_plugins(const ks_loaded_module *mod, const ks_plugin_desc *const **out)
{
    *out = (const ks_plugin_desc *const *)mod->desc_ptrs;
    return mod->nplugins;
}

const char *ks__loaded_module_path(const ks_loaded_module *mod) { return mod->path; }

void ks__loader_close(ks_loaded_module *mod)
{
    if (!mod)
        return;
    if (mod->handle)
        dlclose(mod->handle);
    live_remove(mod->live); /* after dlclose: the name may be used again */
    free(mod->descs);
    free(mod->desc_ptrs);
    free(mod->path);
    free(mod);
}

void ks__loader_close_all(ks_loaded_module **mods)
{
    if (!mods)
        return;
    for (size_t i = 0; mods[i]; i++)
        ks__loader_close(mods[i]);
    free(mods);
}

/* ---- Loading what a configuration names ------------------------------------------------------ */

/* One loaded file and the first pluginConfig entry that named it (for messages). */
struct loaded {
    ks_loaded_module *mod;
    char *real; /* realpath, or the path as given when realpath fails */
    const ks_plugin_config *first;
};

/* The files opened so far. */
struct loaded_files {
    struct loaded *v;
    size_t n, cap;
};

static void loaded_files_free(struct loaded_files *files)
{
    for (size_t a = 0; a < files->n; a++) {
        ks__loader_close(files->v[a].mod);
        free(files->v[a].real);
    }
    free(files->v);
}

/* The field path of a pluginConfig entry: its own (set by the config parser), or one made from its
 * indices. */
static const char *entry_field(const ks_config *cfg, const ks_plugin_config *pc, char *buf,
                               size_t len)
{
    if (pc->field)
        return pc->field;
    for (size_t i = 0; i < cfg->nprofiles; i++)
        for (size_t j = 0; j < cfg->profiles[i].nplugin_configs; j++)
            if (&cfg->profiles[i].plugin_configs[j] == pc) {
                snprintf(buf, len, "profiles[%zu].pluginConfig[%zu]", i, j);
                return buf;
            }
    return "pluginConfig";
}

/* Writes "<cfg>: <field>.args.kubeschedPluginPath: " into err and points *rest / *restlen at what
 * is left of it, for the rest of the sentence. */
static void field_prefix(const ks_config *cfg, const ks_plugin_config *pc, char *err, size_t errlen,
                         char **rest, size_t *restlen)
{
    char buf[64];
    int n;
    *rest = NULL;
    *restlen = 0;
    if (!err || !errlen)
        return;
    n = snprintf(err, errlen,
                 "%s: %s.args.kubeschedPluginPath: ", cfg->path ? cfg->path : "<config>",
                 entry_field(cfg, pc, buf, sizeof(buf)));
    if (n < 0)
        n = 0;
    if ((size_t)n >= errlen)
        n = (int)(errlen - 1);
    *rest = err + n;
    *restlen = errlen - (size_t)n;
}

/* Lists a module's plugin names, ", "-separated, into buf. */
static void plugin_names(const ks_loaded_module *mod, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < mod->nplugins && off < len; k++) {
        int n = snprintf(buf + off, len - off, "%s%s", k ? ", " : "", mod->descs[k].name);
        if (n < 0)
            break;
        off += (size_t)n;
    }
}

/* The file pc names, opened once: *out is the entry of files holding it. */
static int open_once(const ks_config *cfg, const ks_plugin_config *pc, const ks_host_api *host,
                     struct loaded_files *files, struct loaded **out, char *err, size_t errlen)
{
    char *rest, *real = realpath(pc->so_path, NULL);
    size_t restlen;
    struct loaded *f;
    int rc;

    if (!real)
        real = strdup(pc->so_path);
    if (!real)
        return fail(err, errlen, KS_ENOMEM, "%s: out of memory", cfg->path);
    for (size_t k = 0; k < files->n; k++)
        if (strcmp(files->v[k].real, real) == 0) {
            free(real);
            *out = &files->v[k];
            return 0;
        }
    if (files->n == files->cap) {
        size_t ncap = files->cap ? files->cap * 2 : 4;
        struct loaded *nf = realloc(files->v, ncap * sizeof(*nf));
        if (!nf) {
            free(real);
            return fail(err, errlen, KS_ENOMEM, "%s: out of memory", cfg->path);
        }
        files->v = nf;
        files->cap = ncap;
    }
    f = &files->v[files->n];
    *f = (struct loaded){NULL, real, pc};
    field_prefix(cfg, pc, err, errlen, &rest, &restlen);
    rc = ks__loader_open(pc->so_path, host, &f->mod, rest, restlen);
    if (rc != 0) {
        free(real);
        return rc;
    }
    files->n++;
    *out = f;
    return 0;
}

/* The file f holds defines the plugin pc configures. */
static int check_defines(const ks_config *cfg, const ks_plugin_config *pc, const struct loaded *f,
                         char *err, size_t errlen)
{
    char names[512], *rest;
    size_t restlen;
    for (size_t k = 0; k < f->mod->nplugins; k++)
        if (pc->name && strcmp(f->mod->descs[k].name, pc->name) == 0)
            return 0;
    field_prefix(cfg, pc, err, errlen, &rest, &restlen);
    plugin_names(f->mod, names, sizeof(names));
    return fail(rest, restlen, KS_ENOTFOUND,
                "%s defines no plugin named \"%s\" (it defines %s); set kubeschedPluginPath in the "
                "pluginConfig entry of a plugin that file defines",
                pc->so_path, pc->name ? pc->name : "", names);
}

/* Pass 1: open every distinct file once and check that it defines the plugin naming it. */
static int open_config_files(const ks_config *cfg, const ks_host_api *host,
                             struct loaded_files *files, char *err, size_t errlen)
{
    for (size_t i = 0; i < cfg->nprofiles; i++) {
        const ks_profile_config *prof = &cfg->profiles[i];
        for (size_t j = 0; j < prof->nplugin_configs; j++) {
            const ks_plugin_config *pc = &prof->plugin_configs[j];
            struct loaded *f = NULL;
            int rc;
            if (!pc->so_path)
                continue;
            if ((rc = open_once(cfg, pc, host, files, &f, err, errlen)) != 0 ||
                (rc = check_defines(cfg, pc, f, err, errlen)) != 0)
                return rc;
        }
    }
    return 0;
}

/* Pass 2: refuse names that are taken before adding anything, so that a failure leaves the
 * registry as it was (its entries borrow the descriptors of the modules closed on failure). */
static int check_name_clashes(const ks_config *cfg, ks_registry *reg,
                              const struct loaded_files *files, char *err, size_t errlen)
{
    char *rest;
    size_t restlen;
    for (size_t a = 0; a < files->n; a++) {
        const ks_loaded_module *ma = files->v[a].mod;
        for (size_t k = 0; k < ma->nplugins; k++) {
            const char *name = ma->descs[k].name;
            field_prefix(cfg, files->v[a].first, err, errlen, &rest, &restlen);
            if (ks__registry_find(reg, name)) {
                /* The registry words the clash (and does not add on EEXIST). */
                int rc = ks__registry_add(reg, &ma->descs[k], ma->path, rest, restlen);
                return rc != 0 ? rc : KS_EEXIST; /* 0 cannot happen: the name is taken */
            }
            for (size_t b = 0; b < a; b++) {
                const ks_loaded_module *mb = files->v[b].mod;
                for (size_t q = 0; q < mb->nplugins; q++)
                    if (strcmp(mb->descs[q].name, name) == 0)
                        return fail(rest, restlen, KS_EEXIST,
                                    "%s: duplicate plugin name \"%s\" (already registered by %s)",
                                    ma->path, name, mb->path);
            }
        }
    }
    if (err && errlen)
        err[0] = '\0';
    return 0;
}

int ks__loader_load_config_plugins(const ks_config *cfg, ks_registry *reg, const ks_host_api *host,
                                   ks_loaded_module ***mods, char *err, size_t errlen)
{
    struct loaded_files files = {0};
    ks_loaded_module **result = NULL;
    int rc;

    if (err && errlen)
        err[0] = '\0';
    *mods = NULL;
    if ((rc = open_config_files(cfg, host, &files, err, errlen)) != 0 ||
        (rc = check_name_clashes(cfg, reg, &files, err, errlen)) != 0)
        goto fail;
    result = calloc(files.n + 1, sizeof(*result));
    if (!result) {
        rc = fail(err, errlen, KS_ENOMEM, "%s: out of memory", cfg->path);
        goto fail;
    }
    /* Pass 3: add. Only out of memory can fail here; the registry then holds descriptors of modules
     * closed below and may only be freed (ks__registry_free touches nothing they own). */
    for (size_t a = 0; a < files.n; a++) {
        if ((rc = add_module_plugins(reg, files.v[a].mod, err, errlen)) != 0) {
            if (rc == KS_ENOMEM)
                fail(err, errlen, rc, "%s: out of memory", cfg->path);
            goto fail;
        }
    }
    for (size_t a = 0; a < files.n; a++) {
        result[a] = files.v[a].mod;
        files.v[a].mod = NULL; /* now the caller's */
    }
    loaded_files_free(&files);
    *mods = result;
    return 0;

fail:
    free(result);
    loaded_files_free(&files);
    return rc;
}
