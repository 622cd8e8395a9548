/*
 * Interning of range names and label sets. Both tables are arrays indexed by
 * id (1-based, in order of first use) with an open-addressing hash index by
 * content; they only grow, and they are only touched under `lock`, which the
 * hot path never takes (a site's id is cached in its descriptor).
 */
#include "config.h"

#include "client/client.h"
#include "proto/protocol.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct label {
    char *node_id;
    char *op;
    char *backend;
    unsigned phase;
};

struct table {
    void *items;      /* char *names[] or struct label[] (index id - 1) */
    uint32_t n;
    uint32_t cap;
    uint32_t *index;  /* hash slot -> id, 0 = empty */
    uint32_t slots;   /* a power of two, > 2 n */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct table sites, labels;

static uint64_t hash_str(uint64_t h, const char *s)
{
    for (; *s != '\0'; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return (h ^ 0xff) * 0x100000001b3ull;
}

static uint64_t hash_label(const char *node_id, const char *op,
                           const char *backend, unsigned phase)
{
    uint64_t h = 0xcbf29ce484222325ull;

    h = hash_str(h, node_id);
    h = hash_str(h, op);
    h = hash_str(h, backend);
    return (h ^ phase) * 0x100000001b3ull;
}

/* Makes room for one more item of `size` bytes; rebuilds the index with
 * `rehash` when it gets half full. Returns 0 or -ENOMEM. */
static int table_grow(struct table *t, size_t size,
                      uint64_t (*rehash)(uint32_t id))
{
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 64;
        void *items = realloc(t->items, cap * size);
        if (items == NULL)
            return -1;
        t->items = items;
        t->cap = cap;
    }
    if (2 * (t->n + 1) >= t->slots) {
        uint32_t slots = t->slots ? t->slots * 2 : 256;
        uint32_t *index = calloc(slots, sizeof *index);
        if (index == NULL)
            return -1;
        for (uint32_t id = 1; id <= t->n; id++) {
            uint32_t i = (uint32_t)rehash(id) & (slots - 1);
            while (index[i] != 0)
                i = (i + 1) & (slots - 1);
            index[i] = id;
        }
        free(t->index);
        t->index = index;
        t->slots = slots;
    }
    return 0;
}

static uint64_t rehash_site(uint32_t id)
{
    return hash_str(0xcbf29ce484222325ull, ((char **)sites.items)[id - 1]);
}

static uint64_t rehash_label(uint32_t id)
{
    struct label *l = &((struct label *)labels.items)[id - 1];
    return hash_label(l->node_id, l->op, l->backend, l->phase);
}

/* Returns the id of range name `name`, adding it when new; 0 on ENOMEM.
 * Past HR__MAX_SITES - 2 names, a new one is given the id of
 * HR__NAMES_FULL (counted), unless `reserved` (the two names of the
 * library's own: HR__NAMES_FULL and HR_CONTEXTS_FULL). */
static uint32_t site_id_locked(const char *name, int reserved)
{
    uint64_t h = hash_str(0xcbf29ce484222325ull, name);
    char **names;
    uint32_t i;

    if (table_grow(&sites, sizeof(char *), rehash_site) != 0)
        return 0;
    names = sites.items;
    for (i = (uint32_t)h & (sites.slots - 1); sites.index[i] != 0;
         i = (i + 1) & (sites.slots - 1)) {
        if (strcmp(names[sites.index[i] - 1], name) == 0)
            return sites.index[i];
    }
    if (sites.n >= HR__MAX_SITES - (reserved ? 0 : 2)) {
        if (reserved)
            return 0;
        atomic_fetch_add(&hr__g_contexts_full, 1);
        return site_id_locked(HR__NAMES_FULL, 1);
    }
    names[sites.n] = strdup(name);
    if (names[sites.n] == NULL)
        return 0;
    sites.index[i] = ++sites.n;
    return sites.n;
}

int hr__name_check(const char *name)
{
    size_t n;

    if (name == NULL)
        return -EINVAL;
    n = strnlen(name, HRP_MAX_STRING + 1);
    if (n > HRP_MAX_STRING)
        return -ENAMETOOLONG;
    return hrp_name_ok(name, n) ? 0 : -EINVAL;
}

uint32_t hr__site_intern(hr_site *site)
{
    uint32_t id;

    pthread_mutex_lock(&lock);
    id = __atomic_load_n(&site->id, __ATOMIC_RELAXED);
    if (id == 0) {
        /* The one check of a range name, at its first use: a refused
         * name's scopes find HR__SITE_BAD and never reach the rings. */
        id = hr__name_check(site->name) != 0
                 ? HR__SITE_BAD
                 : site_id_locked(site->name, 0);
        __atomic_store_n(&site->id, id, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lock);
    return id;
}

uint32_t hr__label_intern(const char *node_id, const char *op,
                          const char *backend, unsigned phase)
{
    uint64_t h = hash_label(node_id, op, backend, phase);
    struct label *ls, *l;
    uint32_t i, id = 0;

    pthread_mutex_lock(&lock);
    if (table_grow(&labels, sizeof(struct label), rehash_label) != 0)
        goto out;
    ls = labels.items;
    for (i = (uint32_t)h & (labels.slots - 1); labels.index[i] != 0;
         i = (i + 1) & (labels.slots - 1)) {
        l = &ls[labels.index[i] - 1];
        if (l->phase == phase && strcmp(l->node_id, node_id) == 0 &&
            strcmp(l->op, op) == 0 && strcmp(l->backend, backend) == 0) {
            id = labels.index[i];
            goto out;
        }
    }
    l = &ls[labels.n];
    l->node_id = strdup(node_id);
    l->op = strdup(op);
    l->backend = strdup(backend);
    l->phase = phase;
    if (l->node_id == NULL || l->op == NULL || l->backend == NULL) {
        free(l->node_id);
        free(l->op);
        free(l->backend);
        goto out;
    }
    labels.index[i] = ++labels.n;
    id = labels.n;
out:
    pthread_mutex_unlock(&lock);
    return id;
}

void hr__intern_lock(void)
{
    pthread_mutex_lock(&lock);
}

void hr__intern_unlock(void)
{
    pthread_mutex_unlock(&lock);
}

void hr__intern_fork_prepare(void)
{
    pthread_mutex_lock(&lock);
}

void hr__intern_fork_parent(void)
{
    pthread_mutex_unlock(&lock);
}

void hr__intern_fork_child(void)
{
    /* A child is a process of its own: its first samples are cold. The
     * tables stay: ids already given stay valid in the child. */
    memset(hr__g_ctx_seen, 0, sizeof hr__g_ctx_seen);
    pthread_mutex_unlock(&lock);
}

const char *hr__site_name(uint32_t id)
{
    return (id >= 1 && id <= sites.n) ? ((char **)sites.items)[id - 1] : NULL;
}

uint32_t hr__site_count(void)
{
    return sites.n;
}

uint32_t hr__label_count(void)
{
    return labels.n;
}

int hr__label_get(uint32_t id, const char **node_id, const char **op,
                  const char **backend, unsigned *phase)
{
    struct label *l;

    if (id < 1 || id > labels.n)
        return -1;
    l = &((struct label *)labels.items)[id - 1];
    *node_id = l->node_id;
    *op = l->op;
    *backend = l->backend;
    *phase = l->phase;
    return 0;
}

/*
 * Calling contexts. A context is (parent context, site id); its id is its
 * index + 1 in two arrays allocated once at their full size, so that a
 * reader (the shipper) can look an entry up without the lock: an entry is
 * written before the count that publishes it. New entries are made under
 * the lock; a hash index by content finds existing ones.
 */
#define CTX_CAP HR__CTX_CAP
#define CTX_SLOTS (4u * CTX_CAP)

static uint32_t *ctx_parent, *ctx_site, *ctx_index;
static _Atomic uint32_t ctx_n;
static uint32_t ctx_roots;
/* The root context of HR_CONTEXTS_FULL, made at the first overflow. */
static _Atomic uint32_t ctx_full_root;
static _Atomic uint64_t ctx_dropped;
_Atomic uint64_t hr__g_ctx_seen[(HR__CTX_IDS + 63) / 64];

static uint32_t ctx_hash(uint32_t parent, uint32_t site)
{
    uint64_t h = ((uint64_t)parent << 32 | site) * 0x9e3779b97f4a7c15ull;

    return (uint32_t)(h >> 40);
}

/* The context (parent, site), made when new and room is left (or, with
 * `force`, in the one entry kept for HR_CONTEXTS_FULL); 0 when not (lock
 * held). */
static uint32_t ctx_intern_locked(uint32_t parent, uint32_t site, int force)
{
    uint32_t n = atomic_load_explicit(&ctx_n, memory_order_relaxed), i;

    if (ctx_index == NULL) {
        ctx_parent = malloc(HR__CTX_OVER_BASE * sizeof *ctx_parent);
        ctx_site = malloc(HR__CTX_OVER_BASE * sizeof *ctx_site);
        ctx_index = calloc(CTX_SLOTS, sizeof *ctx_index);
        if (ctx_parent == NULL || ctx_site == NULL || ctx_index == NULL) {
            free(ctx_parent);
            free(ctx_site);
            free(ctx_index);
            ctx_parent = ctx_site = ctx_index = NULL;
            return 0;
        }
    }
    for (i = ctx_hash(parent, site) & (CTX_SLOTS - 1); ctx_index[i] != 0;
         i = (i + 1) & (CTX_SLOTS - 1)) {
        uint32_t id = ctx_index[i];
        if (ctx_parent[id - 1] == parent && ctx_site[id - 1] == site)
            return id;
    }
    if (force ? n >= HR__CTX_OVER_BASE
              : parent != 0 ? n - ctx_roots >= HR__MAX_CONTEXTS
                            : ctx_roots >= HR__MAX_ROOT_CONTEXTS)
        return 0;
    ctx_parent[n] = parent;
    ctx_site[n] = site;
    ctx_index[i] = n + 1;
    ctx_roots += parent == 0;
    atomic_store_explicit(&ctx_n, n + 1, memory_order_release);
    return n + 1;
}

/* The overflow context of site `id` (HR_CONTEXTS_FULL, then its name),
 * counted; 0 when even that cannot be made (no memory). Lock held. */
static uint32_t ctx_overflow_locked(uint32_t id)
{
    uint32_t root = atomic_load_explicit(&ctx_full_root, memory_order_relaxed);

    if (ctx_index == NULL || id > HR__MAX_SITES)
        return 0;
    if (root == 0) {
        uint32_t s = site_id_locked(HR_CONTEXTS_FULL, 1);

        if (s == 0 || (root = ctx_intern_locked(0, s, 1)) == 0)
            return 0;
        atomic_store_explicit(&ctx_full_root, root, memory_order_release);
    }
    atomic_fetch_add(&hr__g_contexts_full, 1);
    return HR__CTX_OVER_BASE + id;
}

uint32_t hr__ctx_slow(struct hr__thread *t, hr_site *site, uint32_t id,
                      uint32_t parent)
{
    uint64_t key = (uint64_t)parent << 32 | id;
    uint32_t slot = ctx_hash(parent, id) & (HR__CTX_CACHE - 1), ctx;

    if (t != NULL && t->ctx_key[slot] == key && t->ctx_val[slot] != 0) {
        ctx = t->ctx_val[slot];
    } else {
        if (HR__UNLIKELY(id == HR__SITE_BAD)) {
            /* A refused name: never cached (no context has its id), so
             * every scope of it comes here, past the thread's cache, and
             * no other site's lookup pays for the check. */
            if (t != NULL)
                hr__bump(&t->c.bad_name);
            return 0;
        }
        /* Interning takes the lock, and the first contexts write pages of
         * the tables for the first time (a few us in all): the library's
         * own work, measured and left out of the thread's open ranges
         * (their begin times move later by as much), so that the cold call
         * of a new calling path is not charged with it. */
        uint64_t s0 = hr__clock_now();

        pthread_mutex_lock(&lock);
        ctx = ctx_intern_locked(parent, id, 0);
        if (ctx == 0 && parent != 0) {
            /* No room: the range is kept under its name alone. */
            atomic_fetch_add(&ctx_dropped, 1);
            ctx = ctx_intern_locked(0, id, 0);
        }
        if (ctx == 0)
            ctx = ctx_overflow_locked(id);
        pthread_mutex_unlock(&lock);
        hr__leave_out(t, s0);
        if (ctx == 0)
            return 0;
        if (t != NULL) {
            t->ctx_key[slot] = key;
            t->ctx_val[slot] = ctx;
        }
    }
    __atomic_store_n(&site->ctx, (uint64_t)parent << 32 | ctx, __ATOMIC_RELEASE);
    return ctx;
}

void hr__ctx_get(uint32_t ctx, uint32_t *parent, uint32_t *site)
{
    if (ctx > HR__CTX_OVER_BASE) {
        *parent = atomic_load_explicit(&ctx_full_root, memory_order_acquire);
        *site = ctx - HR__CTX_OVER_BASE;
        return;
    }
    *parent = ctx_parent[ctx - 1];
    *site = ctx_site[ctx - 1];
}

uint64_t hr__ctx_dropped(void)
{
    return atomic_load(&ctx_dropped);
}
