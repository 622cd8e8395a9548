/* Aggregation of samples per key (see agg.h). */
#include "config.h"

#include "lib/agg/agg_impl.h"
#include "lib/agg/events.h"
#include "proto/protocol.h"
#include "lib/util/grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SLACK HRA_SLACK

static uint64_t hash_bytes(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;

    for (; *s != '\0'; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static uint64_t hash_key(uint32_t node, uint32_t op, uint32_t backend,
                         uint32_t phase, uint32_t range)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    uint32_t v[5] = { node, op, backend, phase, range };

    for (int i = 0; i < 5; i++) {
        h ^= v[i];
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 33;
    }
    return h;
}

void hra_init(struct hra_agg *a)
{
    memset(a, 0, sizeof *a);
    a->exact_cap = HRA_EXACT_CAP_DEFAULT;
    a->max_bytes = HRA_MAX_BYTES_DEFAULT;
    a->max_paths = HRA_MAX_PATHS_DEFAULT;
    a->max_depth = HRA_MAX_DEPTH_DEFAULT;
}

/*
 * An exact buffer of at least MAP_MIN bytes lives in a mapping of its own,
 * which mremap grows in place (the kernel moves page tables, nothing is
 * copied); smaller ones live on the heap.
 */
#define MAP_MIN ((size_t)256 << 10)

static void buf_free(struct hra_key *k)
{
    if (k->mapped)
        munmap(k->buf, k->cap);
    else
        free(k->buf);
    k->buf = NULL;
    k->mapped = 0;
}

/* Frees a key's events (its buffer or histograms), not its counts. */
static void key_data_free(struct hra_agg *a, struct hra_key *k)
{
    a->bytes -= k->cap;
    buf_free(k);
    k->len = k->cap = 0;
    if (k->self != NULL && k->self != k->incl) {
        a->bytes -= sizeof *k->self + hrs_hist_bytes(k->self);
        hrs_hist_fini(k->self);
        free(k->self);
    }
    k->self = NULL;
    if (k->incl != NULL) {
        a->bytes -= sizeof *k->incl + hrs_hist_bytes(k->incl);
        hrs_hist_fini(k->incl);
        free(k->incl);
        k->incl = NULL;
    }
}

/* Bytes of a key's histograms, a shared one once. */
static size_t hists_bytes(const struct hra_key *k)
{
    size_t n = sizeof *k->incl + hrs_hist_bytes(k->incl);

    if (k->self != k->incl)
        n += sizeof *k->self + hrs_hist_bytes(k->self);
    return n;
}

int hra_key_unshare(struct hra_agg *a, struct hra_key *k)
{
    struct hrs_hist *h;

    if (k->exact || k->self != k->incl)
        return 0;
    h = malloc(sizeof *h);
    if (h == NULL)
        return -ENOMEM;
    if (hrs_hist_copy(h, k->incl) != 0) {
        free(h);
        return -ENOMEM;
    }
    k->self = h;
    a->bytes += sizeof *h + hrs_hist_bytes(h);
    return 0;
}

static void key_free(struct hra_agg *a, struct hra_key *k)
{
    hra_paths_free(a, k);
    a->bytes -= sizeof *k;
    key_data_free(a, k);
    if (k->path == 0) /* path keys' samples are counted by range keys */
        a->events -= 2 * k->pairs + k->records;
    free(k);
}

/* Whether path key p's counters are those of its range key k. */
static int counters_same(const struct hra_key *p, const struct hra_key *k)
{
    int same = 1;

#define COUNTER(name, runkey, runpath, merge, row) \
    HRA_KF_IF_PATH(runpath)(same &= p->name == k->name;)
    HRA_KEY_COUNTERS(COUNTER)
#undef COUNTER
    return same;
}

uint32_t hra_paths_share(struct hra_agg *a)
{
    uint32_t shared = 0;

    for (uint32_t i = 0; i < a->nkeys; i++) {
        struct hra_key *k = a->keys[i], *p = k->paths;

        if (p == NULL || p->pnext != NULL || p->mirror || k->records != 0 ||
            p->exact != k->exact || !counters_same(p, k))
            continue;
        if (k->exact ? p->len != k->len ||
                           (k->len != 0 && memcmp(p->buf, k->buf, k->len))
                     : !hrs_hist_equal(p->incl, k->incl) ||
                           !hrs_hist_equal(p->self, k->self))
            continue;
        key_data_free(a, p);
#define COUNTER(name, runkey, runpath, merge, row) p->name = 0;
        HRA_KEY_COUNTERS(COUNTER)
#undef COUNTER
        p->exact = 1;
        p->has_scopes = 0;
        p->mirror = 1;
        shared++;
    }
    return shared;
}

void hra_paths_free(struct hra_agg *a, struct hra_key *k)
{
    struct hra_key *p, *next;

    for (p = k->paths; p != NULL; p = next) {
        next = p->pnext;
        key_free(a, p);
        a->npkeys--;
    }
    k->paths = NULL;
}

void hra_reset(struct hra_agg *a)
{
    for (uint32_t i = 0; i < a->nkeys; i++)
        key_free(a, a->keys[i]);
    free(a->keys);
    free(a->kindex);
    a->keys = NULL;
    a->kindex = NULL;
    a->nkeys = a->capkeys = a->kslots = 0;
    free(a->pkindex);
    a->pkindex = NULL;
    a->npkeys = a->pkslots = 0;
    a->events = 0;
    a->bytes = hra_pathtab_bytes(a); /* the path table stays */
    a->over_budget = 0;
}

void hra_fini(struct hra_agg *a)
{
    if (a == NULL)
        return;
    hra_reset(a);
    for (uint32_t i = 0; i < a->str.n; i++)
        free(a->str.s[i]);
    free(a->str.s);
    free(a->str.rank);
    free(a->str.lost);
    free(a->str.internal);
    free(a->str.index);
    free(a->scratch);
    free(a->path.parent);
    free(a->path.range);
    free(a->path.depth);
    free(a->path.index);
    memset(a, 0, sizeof *a);
}

static uint32_t str_hash(const void *ctx, uint32_t id)
{
    const struct hra_strtab *t = ctx;

    return (uint32_t)hash_bytes(t->s[id - 1]);
}

uint32_t hra_str(struct hra_agg *a, const char *s)
{
    struct hra_strtab *t = &a->str;
    uint32_t i;

    if (t->slots != 0) {
        for (i = (uint32_t)hash_bytes(s) & (t->slots - 1); t->index[i] != 0;
             i = (i + 1) & (t->slots - 1)) {
            if (strcmp(t->s[t->index[i] - 1], s) == 0)
                return t->index[i];
        }
    }
    if (t->n == t->cap) {
        /* Four arrays side by side, each resized to the one new room. */
        size_t cap = hru_grow_room(t->cap, (size_t)t->n + 1,
                                   sizeof(struct hra_internal), 64);
        if (cap == 0 || cap > UINT32_MAX ||
            hru_resize(&t->s, cap, sizeof *t->s) != 0 ||
            hru_resize(&t->rank, cap, sizeof *t->rank) != 0 ||
            hru_resize(&t->lost, cap, sizeof *t->lost) != 0 ||
            hru_resize(&t->internal, cap, sizeof *t->internal) != 0)
            return 0;
        t->cap = (uint32_t)cap;
    }
    if (hra_index_room(&t->index, &t->slots, t->n, str_hash, t) != 0)
        return 0;
    t->s[t->n] = strdup(s);
    if (t->s[t->n] == NULL)
        return 0;
    t->rank[t->n] = 0;
    t->lost[t->n] = 0;
    memset(&t->internal[t->n], 0, sizeof t->internal[t->n]);
    for (i = (uint32_t)hash_bytes(s) & (t->slots - 1); t->index[i] != 0;
         i = (i + 1) & (t->slots - 1))
        ;
    t->index[i] = ++t->n;
    return t->n;
}

int hra_index_room(uint32_t **index, uint32_t *slots, uint32_t n,
                       uint32_t (*hash)(const void *ctx, uint32_t id),
                       const void *ctx)
{
    uint32_t cap, *idx;

    if (2 * (n + 1) < *slots)
        return 0;
    cap = *slots ? 2 * *slots : 256;
    idx = calloc(cap, sizeof *idx);
    if (idx == NULL)
        return -ENOMEM;
    for (uint32_t id = 1; id <= n; id++) {
        uint32_t j = hash(ctx, id) & (cap - 1);

        while (idx[j] != 0)
            j = (j + 1) & (cap - 1);
        idx[j] = id;
    }
    free(*index);
    *index = idx;
    *slots = cap;
    return 0;
}

const char *hra_str_get(const struct hra_agg *a, uint32_t id)
{
    return (id >= 1 && id <= a->str.n) ? a->str.s[id - 1] : "";
}

void hra_rank_node(struct hra_agg *a, uint32_t id)
{
    if (a->str.rank[id - 1] == 0)
        a->str.rank[id - 1] = ++a->node_ranks;
}

void hra_rank_range(struct hra_agg *a, uint32_t id)
{
    if (a->str.rank[id - 1] == 0)
        a->str.rank[id - 1] = ++a->range_ranks;
}

void hra_lost_add(struct hra_agg *a, uint32_t id, int64_t delta)
{
    if (id >= 1 && id <= a->str.n)
        a->str.lost[id - 1] += (uint64_t)delta;
}

void hra_internal_add(struct hra_agg *a, uint32_t id, uint64_t stalls,
                          uint64_t stall_ns, uint64_t wakes, uint64_t wake_ns)
{
    struct hra_internal *w;

    if (id < 1 || id > a->str.n)
        return;
    w = &a->str.internal[id - 1];
    w->stalls += stalls;
    w->stall_ns += stall_ns;
    w->wakes += wakes;
    w->wake_ns += wake_ns;
}

static int kindex_build(struct hra_agg *a, uint32_t slots)
{
    uint32_t *idx = calloc(slots, sizeof *idx);

    if (idx == NULL)
        return -ENOMEM;
    for (uint32_t k = 0; k < a->nkeys; k++) {
        const struct hra_key *key = a->keys[k];
        uint32_t j = (uint32_t)hash_key(key->node, key->op, key->backend,
                                        key->phase, key->range) &
                     (slots - 1);
        while (idx[j] != 0)
            j = (j + 1) & (slots - 1);
        idx[j] = k + 1;
    }
    free(a->kindex);
    a->kindex = idx;
    a->kslots = slots;
    return 0;
}

struct hra_key *hra_agg_key(struct hra_agg *a, uint32_t node, uint32_t op,
                            uint32_t backend, uint32_t phase, uint32_t range)
{
    uint64_t h = hash_key(node, op, backend, phase, range);
    struct hra_key *k;
    uint32_t i;

    if (2 * (a->nkeys + 1) >= a->kslots &&
        kindex_build(a, a->kslots ? 2 * a->kslots : 1024) != 0)
        return NULL;
    for (i = (uint32_t)h & (a->kslots - 1); a->kindex[i] != 0;
         i = (i + 1) & (a->kslots - 1)) {
        k = a->keys[a->kindex[i] - 1];
        if (k->node == node && k->op == op && k->backend == backend &&
            k->phase == phase && k->range == range)
            return k;
    }
    if (hru_grow32(&a->keys, &a->capkeys, (size_t)a->nkeys + 1,
                   sizeof *a->keys, 256) != 0)
        return NULL;
    k = calloc(1, sizeof *k);
    if (k == NULL)
        return NULL;
    k->node = node;
    k->op = op;
    k->backend = backend;
    k->phase = phase;
    k->range = range;
    k->serial = a->next_serial++;
    k->exact = 1;
    a->keys[a->nkeys++] = k;
    a->kindex[i] = a->nkeys;
    a->bytes += sizeof *k;
    return k;
}

void hra_key_remove(struct hra_agg *a, struct hra_key *k)
{
    uint32_t kept = 0;

    for (uint32_t i = 0; i < a->nkeys; i++) {
        if (a->keys[i] != k)
            a->keys[kept++] = a->keys[i];
    }
    if (kept == a->nkeys)
        return;
    a->nkeys = kept;
    key_free(a, k);
    if (kindex_build(a, a->kslots) != 0 || hra_paths_reindex(a) != 0)
        hra_reset(a);
}

/*
 * Makes the pages of buf[from..to) present, in one call: the events that
 * will fill them would otherwise take a page fault each 4 KiB, which costs
 * more than writing the page's events. The range is within the buffer's
 * capacity, which the memory budget counts already. Best effort: a kernel
 * without MADV_POPULATE_WRITE faults them in as they are written.
 */
static void populate(uint8_t *buf, size_t from, size_t to)
{
#ifdef MADV_POPULATE_WRITE
    size_t page = (size_t)sysconf(_SC_PAGESIZE);

    from = from / page * page;
    if (to > from)
        (void)madvise(buf + from, to - from, MADV_POPULATE_WRITE);
#else
    (void)buf;
    (void)from;
    (void)to;
#endif
}

/*
 * An exact buffer of HUGE bytes or more lives in huge pages where the
 * kernel gives them (transparent huge pages, on madvise): its mapping
 * starts on a HUGE boundary and its capacity is a multiple of HUGE, so
 * that every part of it can be one page. The kernel then zeroes and maps
 * its memory 2 MiB at a time, and filling it costs far less than in 4 KiB
 * pages (bench_agg_store). The cost in memory: a capacity rounded up to
 * 2 MiB, which the memory budget counts.
 */
#define HUGE ((size_t)2 << 20)

/* A new mapping of cap bytes (a multiple of HUGE) on a HUGE boundary,
 * advised for huge pages; MAP_FAILED when there is no room. */
static void *huge_map(size_t cap)
{
    uint8_t *raw, *at;
    size_t head;

    raw = mmap(NULL, cap + HUGE, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return MAP_FAILED;
    head = (HUGE - (uintptr_t)raw % HUGE) % HUGE;
    at = raw + head;
    if (head != 0)
        munmap(raw, head);
    munmap(at + cap, HUGE - head);
#ifdef MADV_HUGEPAGE
    (void)madvise(at, cap, MADV_HUGEPAGE);
#endif
    return at;
}

/*
 * Grows k's buffer to cap bytes (HUGE or more, a multiple of it) in huge
 * pages: in place where the addresses after it are free, else into a new
 * mapping that its pages move to (mremap moves page tables: nothing is
 * copied) or, from the heap, are copied to. Returns the buffer, its first
 * `*present` bytes present already, or MAP_FAILED.
 */
static void *grow_huge(struct hra_key *k, size_t cap, size_t *present)
{
    void *nb;

    *present = 0;
    if (k->mapped && (uintptr_t)k->buf % HUGE == 0 && k->cap % HUGE == 0) {
        nb = mremap(k->buf, k->cap, cap, 0);
        if (nb != MAP_FAILED) {
            *present = k->cap;
            return nb;
        }
    }
    nb = huge_map(cap);
    if (nb == MAP_FAILED)
        return MAP_FAILED;
    if (k->mapped) {
        if (mremap(k->buf, k->cap, k->cap, MREMAP_MAYMOVE | MREMAP_FIXED,
                   nb) == MAP_FAILED) {
            memcpy(nb, k->buf, k->len);
            munmap(k->buf, k->cap);
        } else {
            *present = k->cap;
        }
    } else {
        if (k->len != 0)
            memcpy(nb, k->buf, k->len);
        free(k->buf);
    }
    return nb;
}

/* Makes room for `more` bytes of entries, and one more entry, in an exact
 * key. */
static int reserve_n(struct hra_agg *a, struct hra_key *k, size_t more)
{
    size_t cap, page, present = 0;
    void *nb;

    if (k->len + more + SLACK <= k->cap)
        return 0;
    cap = k->cap + k->cap / 4;
    if (cap < k->len + more + SLACK)
        cap = k->len + more + SLACK;
    if (cap < 64)
        cap = 64;
    if (cap < MAP_MIN) {
        nb = realloc(k->buf, cap);
        if (nb == NULL)
            return -ENOMEM;
    } else if (cap >= HUGE && !a->small_pages) {
        cap = (cap + HUGE - 1) / HUGE * HUGE;
        nb = grow_huge(k, cap, &present);
        if (nb == MAP_FAILED)
            return -ENOMEM;
        populate(nb, present, cap);
        k->mapped = 1;
    } else {
        page = (size_t)sysconf(_SC_PAGESIZE);
        cap = (cap + page - 1) / page * page;
        if (k->mapped) {
            nb = mremap(k->buf, k->cap, cap, MREMAP_MAYMOVE);
        } else {
            nb = mmap(NULL, cap, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (nb != MAP_FAILED) {
                if (k->len != 0)
                    memcpy(nb, k->buf, k->len);
                free(k->buf);
            }
        }
        if (nb == MAP_FAILED)
            return -ENOMEM;
        populate(nb, k->mapped ? k->cap : 0, cap);
        k->mapped = 1;
    }
    a->bytes += cap - k->cap;
    k->buf = nb;
    k->cap = cap;
    return 0;
}

/* Makes room for one more entry in an exact key. */
static int reserve(struct hra_agg *a, struct hra_key *k)
{
    return reserve_n(a, k, 0);
}

/* Adds to histograms: a range event (self != NULL) or a record. Room is
 * made first, so that either both values go in or neither does. A shared
 * histogram takes a leaf event once; anything else parts the two first. */
static int hist_add(struct hra_agg *a, struct hra_key *k, uint64_t incl,
                    const uint64_t *self)
{
    size_t before;
    uint64_t *si, *ss;
    int rc = 0;

    if (k->self == k->incl) {
        if (self != NULL && *self == incl) {
            before = hrs_hist_bytes(k->incl);
            rc = hrs_hist_add(k->incl, incl);
            a->bytes += hrs_hist_bytes(k->incl) - before;
            return rc;
        }
        if (hra_key_unshare(a, k) != 0)
            return -ENOMEM;
    }
    before = k->incl->bytes + k->self->bytes;
    si = hrs_hist_slot(k->incl, incl);
    ss = self != NULL ? hrs_hist_slot(k->self, *self) : NULL;

    /* Both buckets' chunks exist (nearly always): two increments. */
    if (si != NULL && (self == NULL || ss != NULL)) {
        hrs_hist_bump(k->incl, si, incl);
        if (self != NULL)
            hrs_hist_bump(k->self, ss, *self);
        return 0;
    }
    if (hrs_hist_reserve(k->incl, incl) != 0 ||
        (self != NULL && hrs_hist_reserve(k->self, *self) != 0)) {
        rc = -ENOMEM;
    } else {
        hrs_hist_add(k->incl, incl);
        if (self != NULL)
            hrs_hist_add(k->self, *self);
    }
    a->bytes += k->incl->bytes + k->self->bytes - before;
    return rc;
}

int hra_add(struct hra_agg *a, struct hra_key *k, uint64_t incl_ns,
                uint64_t self_ns)
{
    return hra__add(a, k, incl_ns, self_ns);
}

int hra__add_more(struct hra_agg *a, struct hra_key *k, uint64_t incl_ns,
                      uint64_t self_ns)
{
    if (k->exact) {
        /* No room, at the cap, or self above incl: the general case. */
    } else if (k->self == k->incl) {
        /* A shared histogram whose bucket exists, and a leaf: one bump. */
        uint64_t *si = hrs_hist_slot(k->incl, incl_ns);

        if (si != NULL && self_ns == incl_ns) {
            hrs_hist_bump(k->incl, si, incl_ns);
            k->pairs++;
            k->has_scopes = 1;
            a->events += 2;
            return 0;
        }
    } else if (self_ns <= incl_ns) {
        /* Histograms whose buckets for both values exist: two bumps. */
        uint64_t *si = hrs_hist_slot(k->incl, incl_ns);
        uint64_t *ss = hrs_hist_slot(k->self, self_ns);

        if (si != NULL && ss != NULL) {
            hrs_hist_bump(k->incl, si, incl_ns);
            hrs_hist_bump(k->self, ss, self_ns);
            k->pairs++;
            k->has_scopes = 1;
            a->events += 2;
            return 0;
        }
    }
    return hra_add_slow(a, k, incl_ns, self_ns);
}

static void after_add(struct hra_agg *a, struct hra_key *k)
{
    if (k->exact && k->pairs + k->records >= a->exact_cap &&
        hra_key_to_hist(a, k) == 0)
        a->capped++;
}

int hra_add_slow(struct hra_agg *a, struct hra_key *k, uint64_t incl_ns,
                     uint64_t self_ns)
{
    uint64_t diff = incl_ns - self_ns;

    if (self_ns > incl_ns)
        diff = 0; /* validated earlier; never stored negative */
    if (!k->exact) {
        if (hist_add(a, k, incl_ns, &self_ns) != 0)
            return -ENOMEM;
    } else {
        if (reserve(a, k) != 0)
            return -ENOMEM;
        hra__put_pair(k, incl_ns, diff);
    }
    k->pairs++;
    k->has_scopes = 1;
    a->events += 2;
    after_add(a, k);
    return 0;
}

int hra_add_record(struct hra_agg *a, struct hra_key *k, uint64_t value_ns)
{
    /* Records have no path: they part a key from its mirror. */
    if (hra_path_unmirror(a, k) != 0)
        return -ENOMEM;
    if (!k->exact) {
        if (hist_add(a, k, value_ns, NULL) != 0)
            return -ENOMEM;
    } else {
        unsigned w1 = hra__width(value_ns);
        uint8_t *p;

        if (reserve(a, k) != 0)
            return -ENOMEM;
        p = k->buf + k->len;
        p[0] = (uint8_t)(w1 | HRA_EV_RECORD_MARK << 4);
        hra__put8(p + 1, value_ns);
        k->len += 1 + w1;
    }
    k->records++;
    a->events++;
    after_add(a, k);
    return 0;
}

int hra_key_add_exact(struct hra_agg *a, struct hra_key *k,
                          const uint8_t *buf, size_t len, uint64_t pairs,
                          uint64_t records)
{
    const uint8_t *p = buf, *end = buf + len;
    int rc = 0;

    if (records != 0 && hra_path_unmirror(a, k) != 0)
        return -ENOMEM;
    /* Below the cap, the entries are appended as they are. */
    if (k->exact && k->pairs + k->records + pairs + records < a->exact_cap) {
        if (reserve_n(a, k, len) != 0)
            return -ENOMEM;
        if (len != 0)
            memcpy(k->buf + k->len, buf, len);
        k->len += len;
        k->pairs += pairs;
        k->records += records;
        k->has_scopes |= pairs > 0;
        a->events += 2 * pairs + records;
        return 0;
    }
    /* Otherwise one at a time, so that the cap applies as to arriving
     * events. */
    while (p < end && rc == 0) {
        uint64_t x, d;
        int rec;

        p += hra_ev_entry_at(p, (size_t)(end - p), &x, &d, &rec);
        rc = rec ? hra_add_record(a, k, x) : hra__add(a, k, x, x - d);
    }
    return rc;
}

int hra_key_set_exact(struct hra_agg *a, struct hra_key *k,
                          const uint8_t *buf, size_t len, uint64_t pairs,
                          uint64_t records)
{
    uint64_t np, nr;

    if (!k->exact || k->pairs + k->records != 0 ||
        hra_events_check(buf, len, &np, &nr) != 0 || np != pairs ||
        nr != records)
        return -EINVAL;
    k->buf = malloc(len + SLACK);
    if (k->buf == NULL)
        return -ENOMEM;
    if (len != 0)
        memcpy(k->buf, buf, len);
    k->len = len;
    k->cap = len + SLACK;
    k->pairs = pairs;
    k->records = records;
    k->has_scopes = pairs > 0;
    a->bytes += k->cap;
    a->events += 2 * pairs + records;
    return 0;
}

int hra_key_set_hist(struct hra_agg *a, struct hra_key *k,
                         struct hrs_hist *incl, struct hrs_hist *self,
                         uint64_t pairs, uint64_t records)
{
    if (!k->exact || k->pairs + k->records != 0 ||
        incl->n != pairs + records || self->n != pairs)
        return -EINVAL;
    k->exact = 0;
    k->incl = incl;
    k->self = self;
    /* Two histograms holding the same values (a key of leaves: with no
     * self time above its inclusive time, equal sums mean every event was
     * one) become one. */
    if (self != incl && records == 0 && hrs_hist_equal(incl, self) &&
        incl->sumsq_small == self->sumsq_small &&
        incl->sumsq_big == self->sumsq_big) {
        hrs_hist_fini(self);
        free(self);
        k->self = incl;
    }
    k->pairs = pairs;
    k->records = records;
    k->has_scopes = pairs > 0;
    a->bytes += hists_bytes(k);
    a->events += 2 * pairs + records;
    return 0;
}

/* Makes the scratch hold at least n values. */
static int scratch(struct hra_agg *a, size_t n)
{
    uint64_t *s;

    if (n <= a->scratch_cap)
        return 0;
    s = realloc(a->scratch, n * sizeof *s);
    if (s == NULL)
        return -ENOMEM;
    a->scratch = s;
    a->scratch_cap = n;
    return 0;
}

/* Decodes and sorts a key's values into the scratch: incl at *incl, self
 * at *self. Returns 0 or -ENOMEM. */
static int sorted_values(struct hra_agg *a, const struct hra_key *k,
                         uint64_t **incl, size_t *ni, uint64_t **self,
                         size_t *ns)
{
    size_t all = k->pairs + k->records;

    if (scratch(a, 2 * all + k->pairs + 1) != 0)
        return -ENOMEM;
    *incl = a->scratch;
    *self = a->scratch + all;
    hra_key_values(k, *incl, ni, *self, ns);
    hrs_sort_u64(*incl, *ni, *self + *ns);
    hrs_sort_u64(*self, *ns, *self + *ns);
    return 0;
}

int hra_key_to_hist(struct hra_agg *a, struct hra_key *k)
{
    struct hrs_hist *hi = NULL, *hs = NULL;
    const uint8_t *p = k->buf, *end = p != NULL ? p + k->len : p;
    int leaves = 1;

    if (!k->exact)
        return 0;
    /*
     * Straight from the encoding, in any order (a histogram's buckets and
     * sums do not depend on it), with no copy of the values: a key moves
     * to histograms when memory runs short, so this must not take more.
     * First whether every event is a range without children (no record,
     * self = inclusive): then the two populations share one histogram.
     */
    for (const uint8_t *q = p; q < end && leaves;) {
        unsigned w1 = q[0] & 15u, w2 = q[0] >> 4;

        leaves = w2 != HRA_EV_RECORD_MARK &&
                 (hra_ev_get8(q + 1 + w1) & hra_ev_mask(w2)) == 0;
        q += 1 + w1 + (w2 == HRA_EV_RECORD_MARK ? 0 : w2);
    }
    hi = malloc(sizeof *hi);
    hs = leaves ? hi : malloc(sizeof *hs);
    if (hi == NULL || hs == NULL)
        goto fail;
    hrs_hist_init(hi);
    hrs_hist_init(hs);
    while (p < end) {
        unsigned w1 = p[0] & 15u, w2 = p[0] >> 4;
        uint64_t x = hra_ev_get8(p + 1) & hra_ev_mask(w1);

        if (hrs_hist_add(hi, x) != 0)
            goto fail;
        if (w2 == HRA_EV_RECORD_MARK) {
            p += 1 + w1;
            continue;
        }
        if (!leaves &&
            hrs_hist_add(hs, x - (hra_ev_get8(p + 1 + w1) &
                                  hra_ev_mask(w2))) != 0)
            goto fail;
        p += 1 + w1 + w2;
    }
    a->bytes -= k->cap;
    buf_free(k);
    k->len = k->cap = 0;
    k->incl = hi;
    k->self = hs;
    k->exact = 0;
    a->bytes += hists_bytes(k);
    return 0;
fail:
    if (hs != hi) {
        hrs_hist_fini(hs);
        free(hs);
    }
    hrs_hist_fini(hi);
    free(hi);
    return -ENOMEM;
}

static int cmp_size_desc(const void *pa, const void *pb)
{
    const struct hra_key *x = *(struct hra_key *const *)pa;
    const struct hra_key *y = *(struct hra_key *const *)pb;

    return (x->cap < y->cap) - (x->cap > y->cap);
}

/* Keys below this many events are left exact: their histograms would not
 * be smaller. */
#define COMPACT_MIN_EVENTS 4096u

uint32_t hra_enforce(struct hra_agg *a)
{
    struct hra_key **big;
    uint32_t n = 0, done = 0;
    size_t target = a->max_bytes - a->max_bytes / 8;

    if (a->bytes <= a->max_bytes) {
        a->over_budget = 0;
        return 0;
    }
    big = malloc(((size_t)a->nkeys + a->npkeys + 1) * sizeof *big);
    if (big != NULL) {
        for (uint32_t i = 0; i < a->nkeys; i++) {
            struct hra_key *k = a->keys[i];
            if (k->exact && k->pairs + k->records >= COMPACT_MIN_EVENTS)
                big[n++] = k;
            /* Path keys (paths.c) are compacted like the others. */
            for (struct hra_key *p = k->paths; p != NULL; p = p->pnext) {
                if (p->exact && p->pairs >= COMPACT_MIN_EVENTS)
                    big[n++] = p;
            }
        }
        qsort(big, n, sizeof *big, cmp_size_desc);
        for (uint32_t i = 0; i < n && a->bytes > target; i++) {
            if (hra_key_to_hist(a, big[i]) == 0)
                done++;
        }
        free(big);
    }
    a->compacted += done;
    a->over_budget = a->bytes > a->max_bytes;
    return done;
}

uint32_t hra_reset_filtered(struct hra_agg *a, const struct hra_filter *f)
{
    struct hra_match m;
    uint32_t kept = 0, dropped;

    if (hra_match_init(&m, a, f) != 0)
        return 0;
    for (uint32_t i = 0; i < a->nkeys; i++) {
        struct hra_key *k = a->keys[i];
        if (hra_match_key(&m, a, k))
            key_free(a, k);
        else
            a->keys[kept++] = k;
    }
    hra_match_fini(&m);
    dropped = a->nkeys - kept;
    a->nkeys = kept;
    if (dropped > 0 && (kindex_build(a, a->kslots) != 0 ||
                        hra_paths_reindex(a) != 0)) {
        /* Without an index no key can be found: fall back to none. */
        hra_reset(a);
    }
    if (a->bytes <= a->max_bytes)
        a->over_budget = 0;
    return dropped;
}

int hra_key_summaries(struct hra_agg *a, const struct hra_key *k,
                          struct hrs_summary *incl, struct hrs_summary *self)
{
    if (k->exact) {
        uint64_t *vi, *vs;
        size_t ni, ns;

        if (sorted_values(a, k, &vi, &ni, &vs, &ns) != 0)
            return -ENOMEM;
        hrs_summary_sorted(vi, ni, incl);
        hrs_summary_sorted(vs, ns, self);
    } else {
        hrs_summary_hist(k->incl, incl);
        hrs_summary_hist(k->self, self);
    }
    return 0;
}

int hra_full(struct hra_agg *a)
{
    return a->over_budget && hra_enforce(a) == 0 && a->over_budget;
}
