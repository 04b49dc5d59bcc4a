/*
 * Helpers shared by the libFuzzer harnesses (tests/fuzz/fuzz_*.c, docs/FUZZING.md). Header-only:
 * each harness is one executable and includes this once.
 */
#ifndef KS_FUZZ_COMMON_H
#define KS_FUZZ_COMMON_H

#define _GNU_SOURCE /* memfd_create */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "api/intern.h"
#include "config/registry.h"
#include "in_tree.h"
#include "sched/host_api.h"
#include "sched/loader.h"

/* The input as a C string (the parsers take NUL-terminated text); an embedded NUL ends it, as it
 * would for a file read with fgets-like code. NULL on out of memory. Free it. */
static inline char *fz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (s) {
        memcpy(s, data, size);
        s[size] = '\0';
    }
    return s;
}

/* The input as a file: an anonymous memfd whose /proc/self/fd path goes where a file name is
 * wanted, so the harness exercises the real file-reading code without touching the disk. Returns
 * the fd (close it) and writes the path, or -1. */
static inline int fz_memfd(const uint8_t *data, size_t size, char *path, size_t pathlen)
{
    int fd = memfd_create("fuzz-input", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t off = 0;
    while (off < size) {
        ssize_t n = write(fd, data + off, size - off);
        if (n <= 0) {
            close(fd);
            return -1;
        }
        off += (size_t)n;
    }
    snprintf(path, pathlen, "/proc/self/fd/%d", fd);
    return fd;
}

/* Counted symbols (api/intern.h) are freed at once when their last holder goes rather than after
 * two 30 s grace periods, as the tests do. Else each input that interns a new string ends with
 * more allocations than frees, and libFuzzer runs a full LeakSanitizer scan after it (a 10x
 * slowdown of the harnesses that parse objects), and the memory in use depends on the clock. */
static inline void fz_intern_no_grace(void) { ks__intern_set_grace_ns(0); }

/* A registry with the in-tree plugins, as core/cli/main.c builds it. Built once per process and
 * kept (reachable from a static, so LeakSanitizer does not count it). Aborts on failure: nothing
 * can be fuzzed without it. */
static inline const ks_registry *fz_registry(void)
{
    static ks_registry *reg;
    char err[512];
    if (reg)
        return reg;
    ks__host_init();
    reg = ks__registry_new();
    if (!reg || ks__loader_register_linked(reg, &ks_in_tree_module, KS_IN_TREE_ORIGIN,
                                           ks__host_api(), err, sizeof(err)) != 0) {
        fprintf(stderr, "fuzz: cannot build the plugin registry: %s\n", reg ? err : "no memory");
        abort();
    }
    return reg;
}

#endif
