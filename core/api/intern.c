/*
 * String interning. Inserts take a mutex; id -> string is lock-free because symbols are stored in
 * chunks that are allocated once and never move, and a symbol is published (release store of the
 * count) only after its chunk slot is written.
 *
 * Hash: open addressing over (hash, id) pairs, rebuilt under the mutex when 70% full.
 */
#include "api/intern.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_BITS 12
#define CHUNK_SIZE (1u << CHUNK_BITS)
#define MAX_CHUNKS 65536u

static const char **chunks[MAX_CHUNKS];
static atomic_uint nsyms;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t *table;  /* id + 1, 0 = empty */
static uint32_t table_cap;

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

static const char *sym_at(uint32_t id) { return chunks[id >> CHUNK_BITS][id & (CHUNK_SIZE - 1)]; }

static int table_grow(void)
{
    uint32_t ncap = table_cap ? table_cap * 2 : 4096;
    uint32_t *nt = calloc(ncap, sizeof(*nt));
    uint32_t n = atomic_load(&nsyms);
    if (!nt)
        return -1;
    for (uint32_t id = 0; id < n; id++) {
        const char *s = sym_at(id);
        uint32_t i = (uint32_t)hash_bytes(s, strlen(s)) & (ncap - 1);
        while (nt[i])
            i = (i + 1) & (ncap - 1);
        nt[i] = id + 1;
    }
    free(table);
    table = nt;
    table_cap = ncap;
    return 0;
}

/* Under lock. Returns the id, or KS_SYM_ABSENT when missing and !insert. */
static ks_sym find_or_insert(const char *s, size_t n, int insert)
{
    uint64_t h;
    uint32_t i;
    if (!table && table_grow() != 0)
        abort();
    h = hash_bytes(s, n);
    for (i = (uint32_t)h & (table_cap - 1); table[i]; i = (i + 1) & (table_cap - 1)) {
        const char *t = sym_at(table[i] - 1);
        if (strncmp(t, s, n) == 0 && t[n] == '\0')
            return table[i] - 1;
    }
    if (!insert)
        return KS_SYM_ABSENT;
    uint32_t id = atomic_load(&nsyms);
    if (id >= MAX_CHUNKS * CHUNK_SIZE - 1)
        abort(); /* 268M distinct strings: not a cluster any scheduler can hold */
    if (!chunks[id >> CHUNK_BITS]) {
        chunks[id >> CHUNK_BITS] = calloc(CHUNK_SIZE, sizeof(const char *));
        if (!chunks[id >> CHUNK_BITS])
            abort();
    }
    char *copy = malloc(n + 1);
    if (!copy)
        abort();
    memcpy(copy, s, n);
    copy[n] = '\0';
    chunks[id >> CHUNK_BITS][id & (CHUNK_SIZE - 1)] = copy;
    table[i] = id + 1;
    atomic_store_explicit(&nsyms, id + 1, memory_order_release);
    if ((uint64_t)(id + 1) * 10 > (uint64_t)table_cap * 7 && table_grow() != 0)
        abort();
    return id;
}

static void ensure_empty_is_zero(void)
{
    /* Symbol 0 must be "": intern it first. Called under lock. */
    if (atomic_load(&nsyms) == 0)
        find_or_insert("", 0, 1);
}

ks_sym ks__intern_n(const char *s, size_t len)
{
    ks_sym id;
    if (!s)
        return KS_SYM_ABSENT;
    pthread_mutex_lock(&lock);
    ensure_empty_is_zero();
    id = find_or_insert(s, len, 1);
    pthread_mutex_unlock(&lock);
    return id;
}

ks_sym ks__intern(const char *s) { return s ? ks__intern_n(s, strlen(s)) : KS_SYM_ABSENT; }

ks_sym ks__sym_lookup(const char *s)
{
    ks_sym id;
    if (!s)
        return KS_SYM_ABSENT;
    pthread_mutex_lock(&lock);
    ensure_empty_is_zero();
    id = find_or_insert(s, strlen(s), 0);
    pthread_mutex_unlock(&lock);
    return id;
}

const char *ks__sym_str(ks_sym sym)
{
    if (sym == KS_SYM_ABSENT || sym >= atomic_load_explicit(&nsyms, memory_order_acquire))
        return sym == KS_SYM_EMPTY ? "" : NULL;
    return sym_at(sym);
}

size_t ks__intern_count(void) { return atomic_load(&nsyms); }
