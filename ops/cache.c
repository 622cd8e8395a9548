/*
 * The prepared-operator cache: one open-addressing hash table per thread,
 * reached through one initial-exec thread-local pointer. An entry owns a
 * copy of its key (an array of 64-bit words, see hrops__key_build) and the
 * plan, which it frees with its implementation's destroy. Slots are probed
 * linearly; the table doubles when more than half full and only empties as
 * a whole (hrops_cache_clear, or the thread's exit).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ops.h"

struct entry {
    uint64_t hash;
    uint64_t *key;              /* NULL: the slot is free */
    size_t nwords;
    const struct hrops__impl *impl;
    void *plan;
};

struct cache {
    struct entry *slots;
    size_t cap;                 /* a power of two, or 0 */
    size_t used;
    hrops_cache_stats stats;
};

static __thread struct cache *tls_cache
    __attribute__((tls_model("initial-exec")));
static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

static void entries_free(struct cache *c)
{
    for (size_t i = 0; i < c->cap; i++) {
        struct entry *e = &c->slots[i];

        if (e->key == NULL)
            continue;
        e->impl->destroy(e->plan);
        free(e->key);
    }
    free(c->slots);
    c->slots = NULL;
    c->cap = c->used = 0;
}

/* Runs at the exit of a thread that made a cache. */
static void cache_free(void *p)
{
    struct cache *c = p;

    entries_free(c);
    free(c);
    tls_cache = NULL;
}

static void exit_key_make(void)
{
    pthread_key_create(&exit_key, cache_free);
}

/* The calling thread's cache, made on first use; NULL without memory. */
static struct cache *cache_get(void)
{
    struct cache *c = tls_cache;

    if (c != NULL)
        return c;
    c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    pthread_once(&exit_once, exit_key_make);
    pthread_setspecific(exit_key, c);
    tls_cache = c;
    return c;
}

/*
 * Writes the key of a call of impl into key[] (at most HROPS__KEY_MAX_WORDS
 * words) and returns its length: the implementation, the device, the flags,
 * and per tensor its rank, the alignment of its data (as a power of two, up
 * to 256 bytes) and its shape and strides.
 */
size_t hrops__key_build(const struct hrops__impl *impl,
                        const struct hrops__call *c, uint64_t *key)
{
    size_t n = 0;

    key[n++] = (uint64_t)(uintptr_t)impl;
    key[n++] = (uint64_t)(uint32_t)c->device.kind |
               (uint64_t)(uint32_t)c->device.index << 8 |
               (uint64_t)(uint32_t)c->flags << 40 |
               (uint64_t)(uint32_t)c->ntensors << 56;
    for (int i = 0; i < c->ntensors; i++) {
        const struct hrops_tensor *t = c->t[i];
        uintptr_t addr = (uintptr_t)t->data;
        unsigned align = addr == 0 ? 8u : (unsigned)__builtin_ctzll(addr);

        key[n++] = (uint64_t)t->ndim | (uint64_t)(align > 8 ? 8 : align) << 8;
        memcpy(key + n, t->shape, (size_t)t->ndim * sizeof(uint64_t));
        n += (size_t)t->ndim;
        memcpy(key + n, t->strides, (size_t)t->ndim * sizeof(uint64_t));
        n += (size_t)t->ndim;
    }
    return n;
}

/* A 64-bit hash of key[0..n): a multiply-xorshift per word, then a final
 * mix so that every bit of the result depends on every word. */
uint64_t hrops__key_hash(const uint64_t *key, size_t n)
{
    uint64_t h = 0x243f6a8885a308d3ull ^ (uint64_t)n;

    for (size_t i = 0; i < n; i++) {
        h = (h ^ key[i]) * 0x9e3779b97f4a7c15ull;
        h ^= h >> 32;
    }
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return h;
}

/* The slot holding the key, or the free slot where it would go. */
static struct entry *probe(const struct cache *c, const uint64_t *key,
                           size_t n, uint64_t hash)
{
    size_t mask = c->cap - 1;

    for (size_t i = (size_t)hash & mask;; i = (i + 1) & mask) {
        struct entry *e = &c->slots[i];

        if (e->key == NULL ||
            (e->hash == hash && e->nwords == n &&
             memcmp(e->key, key, n * sizeof *key) == 0))
            return e;
    }
}

/* The plan stored under the key in this thread's cache, or NULL. */
void *hrops__cache_lookup(const uint64_t *key, size_t n, uint64_t hash)
{
    struct cache *c = cache_get();
    struct entry *e;

    if (c == NULL)
        return NULL;
    c->stats.lookups++;
    if (c->cap == 0)
        return NULL;
    e = probe(c, key, n, hash);
    if (e->key == NULL)
        return NULL;
    c->stats.hits++;
    return e->plan;
}

static int grow(struct cache *c)
{
    size_t cap = c->cap == 0 ? 16 : c->cap * 2;
    struct cache bigger = { calloc(cap, sizeof(struct entry)), cap, 0,
                            c->stats };

    if (bigger.slots == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < c->cap; i++) {
        struct entry *e = &c->slots[i];

        if (e->key != NULL) {
            *probe(&bigger, e->key, e->nwords, e->hash) = *e;
            bigger.used++;
        }
    }
    free(c->slots);
    c->slots = bigger.slots;
    c->cap = cap;
    return 0;
}

/*
 * Stores plan (made by impl) under the key, which must not be there yet; the
 * cache owns the plan from then on. Returns 0, or -ENOMEM with the plan
 * still the caller's.
 */
int hrops__cache_insert(const uint64_t *key, size_t n, uint64_t hash,
                        const struct hrops__impl *impl, void *plan)
{
    struct cache *c = cache_get();
    struct entry *e;
    uint64_t *copy;

    if (c == NULL)
        return -ENOMEM;
    if ((c->used + 1) * 2 > c->cap && grow(c) != 0)
        return -ENOMEM;
    copy = malloc(n * sizeof *key);
    if (copy == NULL)
        return -ENOMEM;
    memcpy(copy, key, n * sizeof *key);
    e = probe(c, key, n, hash);
    e->hash = hash;
    e->key = copy;
    e->nwords = n;
    e->impl = impl;
    e->plan = plan;
    c->used++;
    c->stats.constructs++;
    return 0;
}

void hrops_cache_clear(void)
{
    if (tls_cache != NULL)
        entries_free(tls_cache);
}

void hrops_cache_stats_get(hrops_cache_stats *out)
{
    struct cache *c = tls_cache;

    if (c == NULL) {
        memset(out, 0, sizeof *out);
        return;
    }
    *out = c->stats;
    out->entries = c->used;
}
