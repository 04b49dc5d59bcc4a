/*
 * String interning with reclaiming; the rules are in intern.h.
 *
 * Layout. id -> string slots live in chunks that are allocated once and never move, so
 * ks__sym_str is one acquire load with no lock. Everything else (the hash table, the reference
 * counts, the lists of retired symbols and free ids) is guarded by `lock`.
 *
 * Hash: open addressing with linear probing over (id + 1, hash) pairs; deletion by backward shift
 * (no tombstones), so a table that churns forever stays as short as the live set. The table grows
 * at 70% and shrinks below 12.5% full.
 *
 * A reclaimed symbol goes through two queues, each held for the grace period:
 *   visible:  out of the hash table, slot still shows the string (stale readers keep working);
 *   hidden:   slot NULL; the string is freed and the id becomes reusable when it leaves.
 */
#include "api/intern.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"

#define CHUNK_BITS 12
#define CHUNK_SIZE (1u << CHUNK_BITS)
#define MAX_CHUNKS 65536u
#define PINNED UINT32_MAX /* count of a pinned symbol */
#define MIN_TABLE 4096u

typedef struct table_slot {
    uint32_t id1;  /* id + 1; 0 = empty */
    uint32_t hash; /* low 32 bits of the string's hash */
} table_slot;

typedef struct retired {
    ks_sym id;
    char *str;     /* owned until freed */
    int64_t since; /* when it entered its current queue (monotonic ns) */
} retired;

/* A FIFO of retired symbols (a ring that doubles when full). */
typedef struct retire_queue {
    retired *items;
    size_t head, len, cap;
} retire_queue;

/* Lock-free side: written under lock, read by anyone. */
static _Atomic(char *) *chunks[MAX_CHUNKS]; /* id -> string; NULL once hidden or never used */
static atomic_uint nsyms;                   /* ids handed out (high-water mark) */

/* Guarded by lock. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t *counts[MAX_CHUNKS]; /* id -> references held by objects, or PINNED */
static table_slot *table;
static uint32_t table_cap, table_live;
static retire_queue visible_q, hidden_q;
static ks_sym *free_ids; /* ids whose string is freed: reused first (a stack) */
static size_t nfree, free_cap;
static size_t npinned, live_bytes, retired_bytes;
static int64_t grace_ns = 30LL * 1000000000LL;

static uint32_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return (uint32_t)(h ^ (h >> 32));
}

static _Atomic(char *) *slot_of(ks_sym id)
{
    return &chunks[id >> CHUNK_BITS][id & (CHUNK_SIZE - 1)];
}
static uint32_t *count_of(ks_sym id) { return &counts[id >> CHUNK_BITS][id & (CHUNK_SIZE - 1)]; }
static char *str_of(ks_sym id) { return atomic_load_explicit(slot_of(id), memory_order_relaxed); }

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (!p)
        abort(); /* interning never fails (ks_host_api.intern): out of memory is fatal */
    return p;
}

/* ---- hash table (under lock) --------------------------------------------------------------- */

static void table_put(table_slot *t, uint32_t cap, table_slot e)
{
    uint32_t i = e.hash & (cap - 1);
    while (t[i].id1)
        i = (i + 1) & (cap - 1);
    t[i] = e;
}

static void table_resize(uint32_t ncap)
{
    table_slot *nt = xcalloc(ncap, sizeof(*nt));
    for (uint32_t i = 0; i < table_cap; i++)
        if (table[i].id1)
            table_put(nt, ncap, table[i]);
    free(table);
    table = nt;
    table_cap = ncap;
}

/* Index of s in the table, or of the empty slot where it would go (*found = 0). */
static uint32_t table_find(const char *s, size_t n, uint32_t hash, int *found)
{
    uint32_t i;
    for (i = hash & (table_cap - 1); table[i].id1; i = (i + 1) & (table_cap - 1)) {
        if (table[i].hash != hash)
            continue;
        const char *t = str_of(table[i].id1 - 1);
        if (strncmp(t, s, n) == 0 && t[n] == '\0') {
            *found = 1;
            return i;
        }
    }
    *found = 0;
    return i;
}

/* Backward-shift deletion: pulls each later entry of the probe run into the hole unless its
 * home slot lies (cyclically) after the hole. */
static void table_delete_at(uint32_t hole)
{
    uint32_t mask = table_cap - 1, j = hole;
    for (;;) {
        table[hole].id1 = 0;
        for (;;) {
            j = (j + 1) & mask;
            if (!table[j].id1)
                return;
            uint32_t home = table[j].hash & mask;
            int stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
            if (!stays)
                break;
        }
        table[hole] = table[j];
        hole = j;
    }
}

/* ---- retired symbols (under lock) ---------------------------------------------------------- */

static void queue_push(retire_queue *q, retired r)
{
    if (q->len == q->cap) {
        size_t ncap = q->cap ? q->cap * 2 : 256;
        retired *n = xcalloc(ncap, sizeof(*n));
        for (size_t i = 0; i < q->len; i++)
            n[i] = q->items[(q->head + i) % q->cap];
        free(q->items);
        q->items = n;
        q->head = 0;
        q->cap = ncap;
    }
    q->items[(q->head + q->len++) % q->cap] = r;
}

/* The oldest entry when it has spent the grace period in q, else NULL. */
static retired *queue_ripe(retire_queue *q, int64_t now)
{
    if (!q->len || now - q->items[q->head].since < grace_ns)
        return NULL;
    return &q->items[q->head];
}

static void queue_pop(retire_queue *q)
{
    q->head = (q->head + 1) % q->cap;
    q->len--;
}

static void free_id_push(ks_sym id)
{
    if (nfree == free_cap) {
        size_t ncap = free_cap ? free_cap * 2 : 256;
        ks_sym *n = realloc(free_ids, ncap * sizeof(*n));
        if (!n)
            abort();
        free_ids = n;
        free_cap = ncap;
    }
    free_ids[nfree++] = id;
}

/* Moves retired symbols along once their grace period is over: visible -> hidden (slot NULL),
 * hidden -> freed (string freed, id reusable). */
static void advance_retired(void)
{
    if (!visible_q.len && !hidden_q.len)
        return;
    int64_t now = ks__clock_now_ns();
    retired *r;
    while ((r = queue_ripe(&visible_q, now))) {
        atomic_store_explicit(slot_of(r->id), NULL, memory_order_release);
        queue_push(&hidden_q, (retired){r->id, r->str, now});
        queue_pop(&visible_q);
    }
    while ((r = queue_ripe(&hidden_q, now))) {
        retired_bytes -= strlen(r->str) + 1;
        free(r->str);
        free_id_push(r->id);
        queue_pop(&hidden_q);
    }
}

/* The count reached zero: the symbol leaves the table now, its string later. */
static void reclaim(ks_sym id)
{
    char *s = str_of(id);
    size_t n = strlen(s);
    int found;
    uint32_t i = table_find(s, n, hash_bytes(s, n), &found);
    if (!found || table[i].id1 != id + 1)
        abort(); /* a counted symbol is always in the table */
    table_delete_at(i);
    table_live--;
    live_bytes -= n + 1;
    retired_bytes += n + 1;
    queue_push(&visible_q, (retired){id, s, ks__clock_now_ns()});
    if (grace_ns <= 0)
        advance_retired();
    while (table_cap > MIN_TABLE && (uint64_t)table_live * 8 < table_cap)
        table_resize(table_cap / 2);
}

/* ---- interning (under lock) ---------------------------------------------------------------- */

static ks_sym new_id(void)
{
    if (nfree)
        return free_ids[--nfree];
    uint32_t id = atomic_load_explicit(&nsyms, memory_order_relaxed);
    if (id >= MAX_CHUNKS * CHUNK_SIZE - 1)
        abort(); /* 268M live strings: not a cluster any scheduler can hold */
    if (!chunks[id >> CHUNK_BITS]) {
        chunks[id >> CHUNK_BITS] = xcalloc(CHUNK_SIZE, sizeof(*chunks[0]));
        counts[id >> CHUNK_BITS] = xcalloc(CHUNK_SIZE, sizeof(*counts[0]));
    }
    return id;
}

/* Inserts s (with no references yet) at table index i. */
static ks_sym insert_at(uint32_t i, const char *s, size_t n, uint32_t hash)
{
    ks_sym id = new_id();
    char *copy = malloc(n + 1);
    if (!copy)
        abort();
    memcpy(copy, s, n);
    copy[n] = '\0';
    *count_of(id) = 0;
    /* Publish: the slot before the id count, so a reader that sees the id sees the string. */
    atomic_store_explicit(slot_of(id), copy, memory_order_release);
    if (id == atomic_load_explicit(&nsyms, memory_order_relaxed))
        atomic_store_explicit(&nsyms, id + 1, memory_order_release);
    table[i] = (table_slot){id + 1, hash};
    table_live++;
    live_bytes += n + 1;
    if ((uint64_t)table_live * 10 > (uint64_t)table_cap * 7)
        table_resize(table_cap * 2);
    return id;
}

static void pin(ks_sym id)
{
    if (*count_of(id) != PINNED) {
        *count_of(id) = PINNED;
        npinned++;
    }
}

/* Returns the id of s, inserting it when insert; KS_SYM_ABSENT when missing and !insert. */
static ks_sym find_or_insert(const char *s, size_t n, int insert)
{
    int found;
    if (!table) {
        uint32_t empty_hash = hash_bytes("", 0);
        table_resize(MIN_TABLE);
        /* Symbol 0 is "" (KS_SYM_EMPTY), pinned, before anything else. */
        pin(insert_at(table_find("", 0, empty_hash, &found), "", 0, empty_hash));
    }
    uint32_t hash = hash_bytes(s, n);
    uint32_t i = table_find(s, n, hash, &found);
    if (found)
        return table[i].id1 - 1;
    return insert ? insert_at(i, s, n, hash) : KS_SYM_ABSENT;
}

/* One reference more on id, recorded in refs unless the symbol is pinned. Under lock. */
static int count_up(ks_sym id)
{
    uint32_t *c = count_of(id);
    if (*c == PINNED)
        return 0;
    if (++*c == PINNED - 1)
        pin(id); /* cannot overflow: a symbol held 4G times may as well live forever */
    return *c != PINNED;
}

static void refs_push(ks__symrefs *refs, ks_sym id)
{
    if (refs->n == refs->cap) {
        uint32_t ncap = refs->cap ? refs->cap * 2 : 16;
        ks_sym *n = realloc(refs->syms, ncap * sizeof(*n));
        if (!n)
            abort();
        refs->syms = n;
        refs->cap = ncap;
    }
    refs->syms[refs->n++] = id;
}

/* ---- public -------------------------------------------------------------------------------- */

ks_sym ks__intern_n(const char *s, size_t len)
{
    if (!s)
        return KS_SYM_ABSENT;
    pthread_mutex_lock(&lock);
    ks_sym id = find_or_insert(s, len, 1);
    pin(id);
    pthread_mutex_unlock(&lock);
    return id;
}

ks_sym ks__intern(const char *s) { return s ? ks__intern_n(s, strlen(s)) : KS_SYM_ABSENT; }

void ks__intern_fork_prepare(void) { pthread_mutex_lock(&lock); }
void ks__intern_fork_after(void) { pthread_mutex_unlock(&lock); }

ks_sym ks__sym_lookup(const char *s)
{
    if (!s)
        return KS_SYM_ABSENT;
    pthread_mutex_lock(&lock);
    ks_sym id = find_or_insert(s, strlen(s), 0);
    if (id != KS_SYM_ABSENT)
        pin(id);
    pthread_mutex_unlock(&lock);
    return id;
}

ks_sym ks__symrefs_intern_n(ks__symrefs *refs, const char *s, size_t len)
{
    if (!refs)
        return ks__intern_n(s, len);
    if (!s)
        return KS_SYM_ABSENT;
    pthread_mutex_lock(&lock);
    ks_sym id = find_or_insert(s, len, 1);
    int counted = count_up(id);
    pthread_mutex_unlock(&lock);
    if (counted)
        refs_push(refs, id);
    return id;
}

ks_sym ks__symrefs_intern(ks__symrefs *refs, const char *s)
{
    return s ? ks__symrefs_intern_n(refs, s, strlen(s)) : KS_SYM_ABSENT;
}

void ks__symrefs_hold(ks__symrefs *refs, ks_sym sym)
{
    if (sym == KS_SYM_ABSENT)
        return;
    pthread_mutex_lock(&lock);
    /* An id that no one holds any longer (a plugin's stale id) gets no reference: it is not in
     * the table, and counting it would bring it back half-alive. */
    int held = sym < atomic_load_explicit(&nsyms, memory_order_relaxed) && str_of(sym) &&
               *count_of(sym) != 0;
    int counted = held && count_up(sym);
    pthread_mutex_unlock(&lock);
    if (counted)
        refs_push(refs, sym);
}

void ks__symrefs_release(ks__symrefs *refs)
{
    if (!refs || !refs->cap)
        return;
    pthread_mutex_lock(&lock);
    for (uint32_t i = 0; i < refs->n; i++) {
        uint32_t *c = count_of(refs->syms[i]);
        if (*c == PINNED)
            continue; /* pinned since it was counted */
        if (*c == 0)
            abort(); /* released more often than held */
        if (--*c == 0)
            reclaim(refs->syms[i]);
    }
    advance_retired();
    pthread_mutex_unlock(&lock);
    free(refs->syms);
    *refs = (ks__symrefs){0};
}

const char *ks__sym_str(ks_sym sym)
{
    if (sym >= atomic_load_explicit(&nsyms, memory_order_acquire)) /* KS_SYM_ABSENT too */
        return sym == KS_SYM_EMPTY ? "" : NULL;
    return atomic_load_explicit(slot_of(sym), memory_order_acquire);
}

void ks__intern_stats_get(ks__intern_stats *out)
{
    pthread_mutex_lock(&lock);
    size_t ids = atomic_load(&nsyms);
    size_t chunks_used = (ids + CHUNK_SIZE - 1) / CHUNK_SIZE;
    out->live = table_live;
    out->pinned = npinned;
    out->bytes = live_bytes + retired_bytes;
    out->retired = visible_q.len + hidden_q.len;
    out->ids = ids;
    out->table_bytes = (size_t)table_cap * sizeof(table_slot) +
                       chunks_used * CHUNK_SIZE * (sizeof(char *) + sizeof(uint32_t)) +
                       (visible_q.cap + hidden_q.cap) * sizeof(retired) + free_cap * sizeof(ks_sym);
    pthread_mutex_unlock(&lock);
}

size_t ks__intern_count(void)
{
    pthread_mutex_lock(&lock);
    size_t n = table_live;
    pthread_mutex_unlock(&lock);
    return n;
}

void ks__intern_set_grace_ns(int64_t ns)
{
    pthread_mutex_lock(&lock);
    grace_ns = ns;
    advance_retired();
    pthread_mutex_unlock(&lock);
}
