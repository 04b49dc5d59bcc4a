/*
 * String interning: every label key/value, name and resource name becomes a ks_sym once, when an
 * object is parsed, so the per-node loops compare integers.
 *
 * Threads: ks__intern may be called from any thread (a mutex guards inserts); ks__sym_str is
 * lock-free (symbols live in fixed-size chunks that never move and are never freed).
 */
#ifndef KS_CORE_INTERN_H
#define KS_CORE_INTERN_H

#include <stddef.h>

#include "kubesched/plugin.h"

/* Returns the id of s (inserting it). s need not be NUL-terminated for the _n form. */
ks_sym ks__intern(const char *s);
ks_sym ks__intern_n(const char *s, size_t len);
/* KS_SYM_ABSENT when s was never interned (so it cannot equal any label in the cluster). */
ks_sym ks__sym_lookup(const char *s);
/* Borrowed forever; "" for KS_SYM_EMPTY, NULL for KS_SYM_ABSENT or an unknown id. */
const char *ks__sym_str(ks_sym sym);
/* Number of symbols interned so far (tests, memory figures). */
size_t ks__intern_count(void);

#endif
