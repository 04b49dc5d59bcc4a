/*
 * String interning: every label key/value, name and resource name becomes a ks_sym once, when an
 * object is parsed, so the per-node loops compare integers.
 *
 * Two kinds of symbols, so that a long-running scheduler keeps only the strings of the cluster it
 * sees now:
 *   - pinned: interned through ks__intern / ks__sym_lookup (the host API that plugins call, the
 *     config, the framework, well-known names). Valid for the process lifetime, never reclaimed.
 *   - counted: interned for an object through ks__symrefs_intern. Each object (pod, node, shared
 *     affinity term, cache entry) records the references it holds in a ks__symrefs and releases
 *     them all when it is freed (its last reference goes, not when the informer deletes it). A
 *     symbol whose count reaches zero is reclaimed. A counted symbol that is also pinned (a plugin
 *     interned the same string) stays pinned.
 *
 * Reclaiming, and the rule for stale ids. A symbol is valid while an object that holds it is
 * held; that is what the SDK's borrowing rules already give a plugin (a pod or node is borrowed
 * for the callback or the cycle). A symbol kept longer (a plugin caching a label value of a pod it
 * no longer sees) is stale once the last holder goes:
 *   1. at once it stops being found by interning (the same string interned again gets a new id),
 *      but ks__sym_str still returns its string for the grace period (30 s);
 *   2. after the grace, ks__sym_str returns NULL (as for an unknown id);
 *   3. after a second grace period the string is freed and the id may be reused for another
 *      string. A stale id then names that other string: comparisons are wrong, as they are for
 *      any id kept past its object's lifetime, but nothing crashes: ks__sym_str of any id returns
 *      NULL or a live string.
 * Why reuse is safe: no reader can hold the string pointer of a reused id, since the slot showed
 * NULL for a whole grace period before the string was freed (time-based RCU: ks__sym_str callers
 * read a few bytes, not 30 s). Reuse keeps the id space, and so the memory, bounded by the
 * cluster rather than by every string seen since start-up.
 *
 * Threads: every function may be called from any thread. Interning and releasing take one mutex;
 * ks__sym_str is lock-free (one acquire load: symbol slots live in chunks that never move).
 */
#ifndef KS_CORE_INTERN_H
#define KS_CORE_INTERN_H

#include <stddef.h>
#include <stdint.h>

#include "kubesched/plugin.h"

/* Pinned symbols: the id of s (inserting it), valid forever. s need not be NUL-terminated for the
 * _n form. Aborts when out of memory, like every interning call. */
ks_sym ks__intern(const char *s);
ks_sym ks__intern_n(const char *s, size_t len);
/* KS_SYM_ABSENT when s is not interned now (so it cannot equal any label in the cluster); a
 * symbol found is pinned, since the caller (a plugin, through the host API) may keep it. */
ks_sym ks__sym_lookup(const char *s);
/* Borrowed: "" for KS_SYM_EMPTY, NULL for KS_SYM_ABSENT or an unknown or reclaimed id. The string
 * of a pinned symbol lives forever; that of a counted one while a holder of the symbol is held
 * (plus the grace period above). Lock-free. */
const char *ks__sym_str(ks_sym sym);

/* The references an object holds: counted symbols, released together when the object goes.
 * Owned by the object; not thread-safe (built by the thread that parses the object). A zeroed
 * struct is empty. */
typedef struct ks__symrefs {
    ks_sym *syms; /* owned; pinned symbols are not recorded */
    uint32_t n, cap;
} ks__symrefs;

/* Interns s with one reference held by refs; refs NULL pins the symbol instead (for parsers
 * shared with long-lived tables, e.g. the store). */
ks_sym ks__symrefs_intern(ks__symrefs *refs, const char *s);
ks_sym ks__symrefs_intern_n(ks__symrefs *refs, const char *s, size_t len);
/* One more reference on sym (an id some other holder has, e.g. the node name an assumed copy of
 * a pod carries), held by refs. No-op for KS_SYM_ABSENT and pinned symbols. */
void ks__symrefs_hold(ks__symrefs *refs, ks_sym sym);
/* Releases every reference in refs (one lock for all) and frees its array; refs is empty after.
 * NULL or empty: no-op. */
void ks__symrefs_release(ks__symrefs *refs);

/* Table figures (tests, memory reports). */
typedef struct ks__intern_stats {
    size_t live;        /* symbols findable by interning (pinned + counted) */
    size_t pinned;      /* of which pinned */
    size_t bytes;       /* string bytes (with NULs) of live and not yet freed symbols */
    size_t retired;     /* reclaimed symbols whose string is not freed yet (grace period) */
    size_t ids;         /* ids handed out: the high-water mark of live + retired */
    size_t table_bytes; /* the hash table, the id -> string slots and the counts */
} ks__intern_stats;
void ks__intern_stats_get(ks__intern_stats *out);
/* Number of live symbols. */
size_t ks__intern_count(void);
/* The grace period of each of the two steps above, 30 s by default. Tests set 0 so that a
 * reclaimed string is freed at once; never call it while a stale reader may run. */
void ks__intern_set_grace_ns(int64_t ns);

/* Around a fork() whose child may intern (process isolation, sched/isolation.c): prepare holds
 * the table's lock so that no other thread is inside it at the fork; after releases it, in the
 * parent and in the child alike. */
void ks__intern_fork_prepare(void);
void ks__intern_fork_after(void);

#endif
