/* Aggregation of samples per key (see agg.h). */
#include "config.h"

#include "daemon/agg.h"
#include "proto/protocol.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SLACK HRD_AGG_SLACK
#define RECORD_MARK 15u

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

void hrd_agg_init(struct hrd_agg *a)
{
    memset(a, 0, sizeof *a);
    a->exact_cap = HRD_EXACT_CAP_DEFAULT;
    a->max_bytes = HRD_MAX_BYTES_DEFAULT;
    a->max_paths = HRD_MAX_PATHS_DEFAULT;
    a->max_depth = HRD_MAX_DEPTH_DEFAULT;
}

/*
 * An exact buffer of at least MAP_MIN bytes lives in a mapping of its own,
 * which mremap grows in place (the kernel moves page tables, nothing is
 * copied); smaller ones live on the heap.
 */
#define MAP_MIN ((size_t)256 << 10)

static void buf_free(struct hrd_key *k)
{
    if (k->mapped)
        munmap(k->buf, k->cap);
    else
        free(k->buf);
    k->buf = NULL;
    k->mapped = 0;
}

/* Frees a key's events (its buffer or histograms), not its counts. */
static void key_data_free(struct hrd_agg *a, struct hrd_key *k)
{
    a->bytes -= k->cap;
    buf_free(k);
    k->len = k->cap = 0;
    if (k->self != NULL && k->self != k->incl) {
        a->bytes -= sizeof *k->self + hrd_hist_bytes(k->self);
        hrd_hist_fini(k->self);
        free(k->self);
    }
    k->self = NULL;
    if (k->incl != NULL) {
        a->bytes -= sizeof *k->incl + hrd_hist_bytes(k->incl);
        hrd_hist_fini(k->incl);
        free(k->incl);
        k->incl = NULL;
    }
}

/* Bytes of a key's histograms, a shared one once. */
static size_t hists_bytes(const struct hrd_key *k)
{
    size_t n = sizeof *k->incl + hrd_hist_bytes(k->incl);

    if (k->self != k->incl)
        n += sizeof *k->self + hrd_hist_bytes(k->self);
    return n;
}

int hrd_agg_key_unshare(struct hrd_agg *a, struct hrd_key *k)
{
    struct hrd_hist *h;

    if (k->exact || k->self != k->incl)
        return 0;
    h = malloc(sizeof *h);
    if (h == NULL)
        return -ENOMEM;
    if (hrd_hist_copy(h, k->incl) != 0) {
        free(h);
        return -ENOMEM;
    }
    k->self = h;
    a->bytes += sizeof *h + hrd_hist_bytes(h);
    return 0;
}

static void key_free(struct hrd_agg *a, struct hrd_key *k)
{
    hrd_agg_paths_free(a, k);
    a->bytes -= sizeof *k;
    key_data_free(a, k);
    if (k->path == 0) /* path keys' samples are counted by range keys */
        a->events -= 2 * k->pairs + k->records;
    free(k);
}

uint32_t hrd_agg_paths_share(struct hrd_agg *a)
{
    uint32_t shared = 0;

    for (uint32_t i = 0; i < a->nkeys; i++) {
        struct hrd_key *k = a->keys[i], *p = k->paths;

        if (p == NULL || p->pnext != NULL || p->mirror || k->records != 0 ||
            p->pairs != k->pairs || p->exact != k->exact ||
            p->children != k->children || p->descendants != k->descendants)
            continue;
        if (k->exact ? p->len != k->len ||
                           (k->len != 0 && memcmp(p->buf, k->buf, k->len))
                     : !hrd_hist_equal(p->incl, k->incl) ||
                           !hrd_hist_equal(p->self, k->self))
            continue;
        key_data_free(a, p);
        p->pairs = p->children = p->descendants = 0;
        p->exact = 1;
        p->has_scopes = 0;
        p->mirror = 1;
        shared++;
    }
    return shared;
}

void hrd_agg_paths_free(struct hrd_agg *a, struct hrd_key *k)
{
    struct hrd_key *p, *next;

    for (p = k->paths; p != NULL; p = next) {
        next = p->pnext;
        key_free(a, p);
        a->npkeys--;
    }
    k->paths = NULL;
}

void hrd_agg_reset(struct hrd_agg *a)
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
    a->bytes = hrd_agg_pathtab_bytes(a); /* the path table stays */
    a->over_budget = 0;
}

void hrd_agg_fini(struct hrd_agg *a)
{
    if (a == NULL)
        return;
    hrd_agg_reset(a);
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

uint32_t hrd_agg_str(struct hrd_agg *a, const char *s)
{
    struct hrd_strtab *t = &a->str;
    uint32_t i;

    if (t->slots != 0) {
        for (i = (uint32_t)hash_bytes(s) & (t->slots - 1); t->index[i] != 0;
             i = (i + 1) & (t->slots - 1)) {
            if (strcmp(t->s[t->index[i] - 1], s) == 0)
                return t->index[i];
        }
    }
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? 2 * t->cap : 64;
        char **ns = realloc(t->s, cap * sizeof *ns);
        if (ns == NULL)
            return 0;
        t->s = ns;
        uint32_t *nr = realloc(t->rank, cap * sizeof *nr);
        if (nr == NULL)
            return 0;
        t->rank = nr;
        uint64_t *nl = realloc(t->lost, cap * sizeof *nl);
        if (nl == NULL)
            return 0;
        t->lost = nl;
        struct hrd_internal *ni = realloc(t->internal, cap * sizeof *ni);
        if (ni == NULL)
            return 0;
        t->internal = ni;
        t->cap = cap;
    }
    if (2 * (t->n + 1) >= t->slots) {
        uint32_t slots = t->slots ? 2 * t->slots : 256;
        uint32_t *idx = calloc(slots, sizeof *idx);
        if (idx == NULL)
            return 0;
        for (uint32_t id = 1; id <= t->n; id++) {
            uint32_t j = (uint32_t)hash_bytes(t->s[id - 1]) & (slots - 1);
            while (idx[j] != 0)
                j = (j + 1) & (slots - 1);
            idx[j] = id;
        }
        free(t->index);
        t->index = idx;
        t->slots = slots;
    }
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

const char *hrd_agg_str_get(const struct hrd_agg *a, uint32_t id)
{
    return (id >= 1 && id <= a->str.n) ? a->str.s[id - 1] : "";
}

void hrd_agg_rank_node(struct hrd_agg *a, uint32_t id)
{
    if (a->str.rank[id - 1] == 0)
        a->str.rank[id - 1] = ++a->node_ranks;
}

void hrd_agg_rank_range(struct hrd_agg *a, uint32_t id)
{
    if (a->str.rank[id - 1] == 0)
        a->str.rank[id - 1] = ++a->range_ranks;
}

void hrd_agg_lost_add(struct hrd_agg *a, uint32_t id, int64_t delta)
{
    if (id >= 1 && id <= a->str.n)
        a->str.lost[id - 1] += (uint64_t)delta;
}

void hrd_agg_internal_add(struct hrd_agg *a, uint32_t id, uint64_t stalls,
                          uint64_t stall_ns, uint64_t wakes, uint64_t wake_ns)
{
    struct hrd_internal *w;

    if (id < 1 || id > a->str.n)
        return;
    w = &a->str.internal[id - 1];
    w->stalls += stalls;
    w->stall_ns += stall_ns;
    w->wakes += wakes;
    w->wake_ns += wake_ns;
}

static int kindex_build(struct hrd_agg *a, uint32_t slots)
{
    uint32_t *idx = calloc(slots, sizeof *idx);

    if (idx == NULL)
        return -ENOMEM;
    for (uint32_t k = 0; k < a->nkeys; k++) {
        const struct hrd_key *key = a->keys[k];
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

struct hrd_key *hrd_agg_key(struct hrd_agg *a, uint32_t node, uint32_t op,
                            uint32_t backend, uint32_t phase, uint32_t range)
{
    uint64_t h = hash_key(node, op, backend, phase, range);
    struct hrd_key *k;
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
    if (a->nkeys == a->capkeys) {
        uint32_t cap = a->capkeys ? 2 * a->capkeys : 256;
        struct hrd_key **nk = realloc(a->keys, cap * sizeof *nk);
        if (nk == NULL)
            return NULL;
        a->keys = nk;
        a->capkeys = cap;
    }
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

void hrd_agg_key_remove(struct hrd_agg *a, struct hrd_key *k)
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
    if (kindex_build(a, a->kslots) != 0 || hrd_agg_paths_reindex(a) != 0)
        hrd_agg_reset(a);
}

/* Makes room for `more` bytes of entries, and one more entry, in an exact
 * key. */
static int reserve_n(struct hrd_agg *a, struct hrd_key *k, size_t more)
{
    size_t cap, page;
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
        k->mapped = 1;
    }
    a->bytes += cap - k->cap;
    k->buf = nb;
    k->cap = cap;
    return 0;
}

/* Makes room for one more entry in an exact key. */
static int reserve(struct hrd_agg *a, struct hrd_key *k)
{
    return reserve_n(a, k, 0);
}

static uint64_t mask(unsigned bytes)
{
    return bytes >= 8 ? ~(uint64_t)0 : ((uint64_t)1 << (8 * bytes)) - 1;
}

static uint64_t get8(const uint8_t *p)
{
    uint64_t x;

    memcpy(&x, p, 8);
    return le64toh(x);
}

/* Adds to histograms: a range event (self != NULL) or a record. Room is
 * made first, so that either both values go in or neither does. A shared
 * histogram takes a leaf event once; anything else parts the two first. */
static int hist_add(struct hrd_agg *a, struct hrd_key *k, uint64_t incl,
                    const uint64_t *self)
{
    size_t before;
    uint64_t *si, *ss;
    int rc = 0;

    if (k->self == k->incl) {
        if (self != NULL && *self == incl) {
            before = hrd_hist_bytes(k->incl);
            rc = hrd_hist_add(k->incl, incl);
            a->bytes += hrd_hist_bytes(k->incl) - before;
            return rc;
        }
        if (hrd_agg_key_unshare(a, k) != 0)
            return -ENOMEM;
    }
    before = k->incl->bytes + k->self->bytes;
    si = hrd_hist_slot(k->incl, incl);
    ss = self != NULL ? hrd_hist_slot(k->self, *self) : NULL;

    /* Both buckets' chunks exist (nearly always): two increments. */
    if (si != NULL && (self == NULL || ss != NULL)) {
        hrd_hist_bump(k->incl, si, incl);
        if (self != NULL)
            hrd_hist_bump(k->self, ss, *self);
        return 0;
    }
    if (hrd_hist_reserve(k->incl, incl) != 0 ||
        (self != NULL && hrd_hist_reserve(k->self, *self) != 0)) {
        rc = -ENOMEM;
    } else {
        hrd_hist_add(k->incl, incl);
        if (self != NULL)
            hrd_hist_add(k->self, *self);
    }
    a->bytes += k->incl->bytes + k->self->bytes - before;
    return rc;
}

static void after_add(struct hrd_agg *a, struct hrd_key *k)
{
    if (k->exact && k->pairs + k->records >= a->exact_cap &&
        hrd_agg_key_to_hist(a, k) == 0)
        a->capped++;
}

int hrd_agg_add_slow(struct hrd_agg *a, struct hrd_key *k, uint64_t incl_ns,
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
        hrd_agg__put_pair(k, incl_ns, diff);
    }
    k->pairs++;
    k->has_scopes = 1;
    a->events += 2;
    after_add(a, k);
    return 0;
}

int hrd_agg_add_record(struct hrd_agg *a, struct hrd_key *k, uint64_t value_ns)
{
    /* Records have no path: they part a key from its mirror. */
    if (hrd_agg_path_unmirror(a, k) != 0)
        return -ENOMEM;
    if (!k->exact) {
        if (hist_add(a, k, value_ns, NULL) != 0)
            return -ENOMEM;
    } else {
        unsigned w1 = hrd_agg__width(value_ns);
        uint8_t *p;

        if (reserve(a, k) != 0)
            return -ENOMEM;
        p = k->buf + k->len;
        p[0] = (uint8_t)(w1 | RECORD_MARK << 4);
        hrd_agg__put8(p + 1, value_ns);
        k->len += 1 + w1;
    }
    k->records++;
    a->events++;
    after_add(a, k);
    return 0;
}

void hrd_agg_key_values(const struct hrd_key *k, uint64_t *incl,
                        size_t *nincl, uint64_t *self, size_t *nself)
{
    /* A key without events may have no buffer: NULL + 0 is not C. */
    const uint8_t *p = k->buf, *end = p != NULL ? p + k->len : p;
    size_t ni = 0, ns = 0;

    while (p < end) {
        unsigned w1 = p[0] & 15u, w2 = p[0] >> 4;
        uint64_t x = get8(p + 1) & mask(w1);

        incl[ni++] = x;
        if (w2 == RECORD_MARK) {
            p += 1 + w1;
            continue;
        }
        self[ns++] = x - (get8(p + 1 + w1) & mask(w2));
        p += 1 + w1 + w2;
    }
    *nincl = ni;
    *nself = ns;
}

/* Whether header byte h is valid and its entry fits in `left` bytes. */
static inline int entry_ok(uint8_t h, size_t left)
{
    unsigned w1 = h & 15u, w2 = h >> 4;

    if (w2 == RECORD_MARK)
        w2 = 0;
    return w1 <= 8 && w2 <= 8 && left >= 1u + w1 + w2;
}

/* The entry at p (whole, `left` bytes from p to the end of its buffer):
 * its inclusive time *x, children's time *d (0 for a record) and *rec;
 * returns its length. Whole words while the widest entry (17 bytes) fits
 * before the end, byte by byte near it (no slack is needed past it). */
static inline size_t entry_at(const uint8_t *p, size_t left, uint64_t *x,
                              uint64_t *d, int *rec)
{
    unsigned w1 = p[0] & 15u, w2 = p[0] >> 4;

    *rec = w2 == RECORD_MARK;
    w2 = *rec ? 0 : w2;
    if (left >= 17) {
        *x = get8(p + 1) & mask(w1);
        *d = get8(p + 1 + w1) & mask(w2);
    } else {
        *x = *d = 0;
        for (unsigned i = 0; i < w1; i++)
            *x |= (uint64_t)p[1 + i] << (8 * i);
        for (unsigned i = 0; i < w2; i++)
            *d |= (uint64_t)p[1 + w1 + i] << (8 * i);
    }
    return 1 + w1 + w2;
}

/*
 * What the events check needs of a header byte h, in tables made at
 * compile time: the masks of its inclusive time (the 8 bytes after h) and
 * of its children's time (8 bytes from h + hdr_doff[h]), and the step to
 * the next entry. A header that is not valid (a width above 8) gets masks
 * that make its "children's time" its own header byte (not 0, as a width
 * is above 8) and its inclusive time 0, so that it fails as a children's
 * time above its inclusive time does; its step is still 1 + w1 + w2, at
 * most 30, for walks that have not yet found where entries start.
 */
#define HDR_W1(h) ((h) & 15u)
#define HDR_W2(h) ((h) >> 4 == RECORD_MARK ? 0u : (h) >> 4)
#define HDR_BAD(h) (HDR_W1(h) > 8u || HDR_W2(h) > 8u)
#define HDR_MASK(w) ((w) >= 8u ? ~0ull : (1ull << (8u * ((w) & 7u))) - 1u)
#define HDR_XMASK(h) (HDR_BAD(h) ? 0ull : HDR_MASK(HDR_W1(h)))
#define HDR_DMASK(h) (HDR_BAD(h) ? 0xffull : HDR_MASK(HDR_W2(h)))
#define HDR_DOFF(h) (HDR_BAD(h) ? 0u : 1u + HDR_W1(h))
#define HDR_STEP(h) (1u + HDR_W1(h) + HDR_W2(h))
#define HDR_4(f, h) f(h), f((h) + 1u), f((h) + 2u), f((h) + 3u)
#define HDR_16(f, h) HDR_4(f, h), HDR_4(f, (h) + 4u), HDR_4(f, (h) + 8u), \
                     HDR_4(f, (h) + 12u)
#define HDR_64(f, h) HDR_16(f, h), HDR_16(f, (h) + 16u), \
                     HDR_16(f, (h) + 32u), HDR_16(f, (h) + 48u)
#define HDR_256(f) HDR_64(f, 0u), HDR_64(f, 64u), HDR_64(f, 128u), \
                   HDR_64(f, 192u)

static const uint64_t hdr_xmask[256] = { HDR_256(HDR_XMASK) };
static const uint64_t hdr_dmask[256] = { HDR_256(HDR_DMASK) };
static const uint8_t hdr_doff[256] = { HDR_256(HDR_DOFF) };
static const uint8_t hdr_step[256] = { HDR_256(HDR_STEP) };

/* The bytes past a position that a step from it may read (an inclusive
 * time of up to 15 bytes, then 8), the longest step (from a byte that is
 * not a valid header), the walkers of the check, the fewest bytes each one
 * walks, and how many entries the true walk may look for a walker's start
 * among before it gives up on that walker. */
#define WALK_MARGIN 32u
#define WALK_MAX_STEP 30u
#define WALKERS 4
#define WALK_REGION 512u
#define WALK_RESYNC 64u

/* One step of a walk from the entry at p (WALK_MARGIN bytes readable past
 * it): notes p in `bad` when the entry fails (an invalid header, or a
 * children's time above the inclusive time: rare, hence a branch), counts
 * a record in `rec`, and moves p to the next entry. */
#define WALK_STEP(p, bad, rec)                                              \
    do {                                                                    \
        unsigned h_ = (p)[0];                                               \
        uint64_t x_ = get8((p) + 1) & hdr_xmask[h_];                        \
        uint64_t d_ = get8((p) + hdr_doff[h_]) & hdr_dmask[h_];             \
                                                                            \
        if (__builtin_expect(d_ > x_, 0))                                   \
            (bad) = (p);                                                    \
        (rec) += h_ >= RECORD_MARK << 4;                                    \
        (p) += hdr_step[h_];                                                \
    } while (0)

/* Walks the entries from *pp while they start before `stop` (which is at
 * least WALK_MARGIN bytes before the buffer's end), adding them to *n and
 * the records among them to *rec. Returns 0 with *pp at the first entry
 * at or past stop, or -EINVAL at an entry that fails. */
static int walk_entries(const uint8_t **pp, const uint8_t *stop, uint64_t *n,
                        uint64_t *rec)
{
    const uint8_t *p = *pp, *bad = NULL;

    while (p < stop) {
        WALK_STEP(p, bad, *rec);
        if (bad != NULL)
            return -EINVAL;
        ++*n;
    }
    *pp = p;
    return 0;
}

/* A walk of part of a buffer (see hrd_agg_events_check). */
struct walker {
    const uint8_t *start; /* where it began: a guess, but for the first */
    const uint8_t *p;     /* its entry; at the end, the first at or past stop */
    const uint8_t *stop;  /* where the next part begins */
    const uint8_t *bad;   /* the last entry on its way that failed, or NULL */
    uint64_t n, rec;      /* the entries on its way, and the records */
};

/*
 * Walks parts of buf at once, w[j] from w[j].start to w[j].stop (the
 * stops at least WALK_MARGIN bytes before the buffer's end). Each walk is
 * a chain of dependent steps; walking several in one loop lets the
 * processor work on them side by side. Rounds of steps without a bound
 * check are as long as the shortest part allows at the longest step; the
 * last steps of each walk are taken one by one. The walks' entries and
 * records live in registers during a round; an entry that fails is noted
 * in its walker in memory (with the tables' addresses, that many
 * registers would not fit).
 */
static void walk_parts(struct walker *w)
{
    for (;;) {
        const uint8_t *p[WALKERS];
        uint64_t rec[WALKERS];
        size_t round = SIZE_MAX;

        for (int j = 0; j < WALKERS; j++) {
            size_t left = w[j].p < w[j].stop ? (size_t)(w[j].stop - w[j].p)
                                             : 0;

            if (left / WALK_MAX_STEP < round)
                round = left / WALK_MAX_STEP;
        }
        if (round == 0)
            break;
        /* Locals, so that the walks live in registers. */
#pragma GCC unroll 4
        for (int j = 0; j < WALKERS; j++) {
            p[j] = w[j].p;
            rec[j] = w[j].rec;
        }
        for (size_t i = 0; i < round; i++) {
#pragma GCC unroll 4
            for (int j = 0; j < WALKERS; j++)
                WALK_STEP(p[j], w[j].bad, rec[j]);
        }
#pragma GCC unroll 4
        for (int j = 0; j < WALKERS; j++) {
            w[j].p = p[j];
            w[j].rec = rec[j];
            w[j].n += round;
        }
    }
    for (int j = 0; j < WALKERS; j++) {
        while (w[j].p < w[j].stop) {
            WALK_STEP(w[j].p, w[j].bad, w[j].rec);
            w[j].n++;
        }
    }
}

/*
 * Joins walker w (which began at a guess) to the true walk, whose next
 * entry is *t (at or past w->start): the true walk goes on entry by entry
 * (checked, counted in *n and *rec) until it reaches an entry that w also
 * reached, found by walking w's first steps again. From there both walks
 * are the same, so w's counts past that entry are the true ones, and an
 * entry that failed there or later fails the buffer. Where none is found
 * among w's first WALK_RESYNC entries, the true walk walks w's part
 * itself. Returns 0 with *t at the first entry at or past w->stop, or
 * -EINVAL.
 */
static int walk_join(const struct walker *w, const uint8_t **t, uint64_t *n,
                     uint64_t *rec)
{
    const uint8_t *q = w->start;
    uint64_t before = 0, rec_before = 0;

    while (*t < w->stop) {
        if (q == *t) {
            if (w->bad != NULL && w->bad >= q)
                return -EINVAL;
            *n += w->n - before;
            *rec += w->rec - rec_before;
            *t = w->p;
            return 0;
        }
        if (q > *t) {
            if (walk_entries(t, *t + 1, n, rec) != 0)
                return -EINVAL;
        } else if (before < WALK_RESYNC && q < w->stop) {
            rec_before += q[0] >= RECORD_MARK << 4;
            before++;
            q += hdr_step[q[0]];
        } else {
            break;
        }
    }
    return walk_entries(t, w->stop, n, rec);
}

int hrd_agg_events_check(const uint8_t *buf, size_t len, uint64_t *pairs,
                         uint64_t *records)
{
    const uint8_t *t = buf;
    uint64_t n = 0, rec = 0;

    /*
     * Where an entry ends depends on its header byte, so walking the
     * entries is one chain of dependent steps. A long buffer is cut in
     * WALKERS parts walked side by side: the first from the buffer's
     * start, the others from where their part begins, which may be in the
     * middle of an entry. Such a walk soon meets the true one (an entry
     * both reach), as entries are short and their lengths vary; it goes
     * through bytes that are not headers until then, so it fails nothing
     * on its way, it only notes the last entry that failed. The parts are
     * then joined in order (walk_join); a walk that never meets the true
     * one costs its part walked again, not a wrong answer.
     */
    if (len >= WALKERS * WALK_REGION + WALK_MARGIN) {
        struct walker w[WALKERS];
        size_t part = (len - WALK_MARGIN) / WALKERS;

        for (int j = 0; j < WALKERS; j++) {
            w[j].start = w[j].p = buf + (size_t)j * part;
            w[j].stop = j == WALKERS - 1 ? buf + len - WALK_MARGIN
                                         : w[j].start + part;
            w[j].bad = NULL;
            w[j].n = w[j].rec = 0;
        }
        walk_parts(w);
        if (w[0].bad != NULL)
            return -EINVAL;
        n = w[0].n;
        rec = w[0].rec;
        t = w[0].p;
        for (int j = 1; j < WALKERS; j++) {
            if (walk_join(&w[j], &t, &n, &rec) != 0)
                return -EINVAL;
        }
    } else if (len > WALK_MARGIN &&
               walk_entries(&t, buf + len - WALK_MARGIN, &n, &rec) != 0) {
        return -EINVAL;
    }
    /* The last bytes, entry by entry, reading none past the end. */
    for (size_t pos = (size_t)(t - buf); pos < len;) {
        uint64_t x, d;
        int r;

        if (!entry_ok(buf[pos], len - pos))
            return -EINVAL;
        pos += entry_at(buf + pos, len - pos, &x, &d, &r);
        if (d > x)
            return -EINVAL;
        n++;
        rec += (unsigned)r;
    }
    *pairs = n - rec;
    *records = rec;
    return 0;
}

int hrd_agg_events_decode(const uint8_t *buf, size_t len, uint64_t *incl,
                          size_t maxi, size_t *nincl, uint64_t *self,
                          size_t maxs, size_t *nself)
{
    size_t pos = 0, ni = 0, ns = 0;
    uint64_t bad = 0;

    while (pos < len) {
        uint64_t x, d;
        int rec;

        if (!entry_ok(buf[pos], len - pos))
            return -EINVAL;
        pos += entry_at(buf + pos, len - pos, &x, &d, &rec);
        if (ni == maxi || (!rec && ns == maxs))
            return -EINVAL;
        incl[ni++] = x;
        /* A record's d is 0; a pair's must not exceed x. */
        bad |= (uint64_t)(d > x);
        self[ns] = x - d;
        ns += !rec;
    }
    *nincl = ni;
    *nself = ns;
    return bad ? -EINVAL : 0;
}

int hrd_agg_key_add_exact(struct hrd_agg *a, struct hrd_key *k,
                          const uint8_t *buf, size_t len, uint64_t pairs,
                          uint64_t records)
{
    const uint8_t *p = buf, *end = buf + len;
    int rc = 0;

    if (records != 0 && hrd_agg_path_unmirror(a, k) != 0)
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

        p += entry_at(p, (size_t)(end - p), &x, &d, &rec);
        rc = rec ? hrd_agg_add_record(a, k, x) : hrd_agg_add(a, k, x, x - d);
    }
    return rc;
}

int hrd_agg_key_set_exact(struct hrd_agg *a, struct hrd_key *k,
                          const uint8_t *buf, size_t len, uint64_t pairs,
                          uint64_t records)
{
    uint64_t np, nr;

    if (!k->exact || k->pairs + k->records != 0 ||
        hrd_agg_events_check(buf, len, &np, &nr) != 0 || np != pairs ||
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

int hrd_agg_key_set_hist(struct hrd_agg *a, struct hrd_key *k,
                         struct hrd_hist *incl, struct hrd_hist *self,
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
    if (self != incl && records == 0 && hrd_hist_equal(incl, self) &&
        incl->sumsq_small == self->sumsq_small &&
        incl->sumsq_big == self->sumsq_big) {
        hrd_hist_fini(self);
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
static int scratch(struct hrd_agg *a, size_t n)
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
static int sorted_values(struct hrd_agg *a, const struct hrd_key *k,
                         uint64_t **incl, size_t *ni, uint64_t **self,
                         size_t *ns)
{
    size_t all = k->pairs + k->records;

    if (scratch(a, 2 * all + k->pairs + 1) != 0)
        return -ENOMEM;
    *incl = a->scratch;
    *self = a->scratch + all;
    hrd_agg_key_values(k, *incl, ni, *self, ns);
    hrd_sort_u64(*incl, *ni, *self + *ns);
    hrd_sort_u64(*self, *ns, *self + *ns);
    return 0;
}

int hrd_agg_key_to_hist(struct hrd_agg *a, struct hrd_key *k)
{
    struct hrd_hist *hi = NULL, *hs = NULL;
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

        leaves = w2 != RECORD_MARK &&
                 (get8(q + 1 + w1) & mask(w2)) == 0;
        q += 1 + w1 + (w2 == RECORD_MARK ? 0 : w2);
    }
    hi = malloc(sizeof *hi);
    hs = leaves ? hi : malloc(sizeof *hs);
    if (hi == NULL || hs == NULL)
        goto fail;
    hrd_hist_init(hi);
    hrd_hist_init(hs);
    while (p < end) {
        unsigned w1 = p[0] & 15u, w2 = p[0] >> 4;
        uint64_t x = get8(p + 1) & mask(w1);

        if (hrd_hist_add(hi, x) != 0)
            goto fail;
        if (w2 == RECORD_MARK) {
            p += 1 + w1;
            continue;
        }
        if (!leaves && hrd_hist_add(hs, x - (get8(p + 1 + w1) & mask(w2))))
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
        hrd_hist_fini(hs);
        free(hs);
    }
    hrd_hist_fini(hi);
    free(hi);
    return -ENOMEM;
}

static int cmp_size_desc(const void *pa, const void *pb)
{
    const struct hrd_key *x = *(struct hrd_key *const *)pa;
    const struct hrd_key *y = *(struct hrd_key *const *)pb;

    return (x->cap < y->cap) - (x->cap > y->cap);
}

/* Keys below this many events are left exact: their histograms would not
 * be smaller. */
#define COMPACT_MIN_EVENTS 4096u

uint32_t hrd_agg_enforce(struct hrd_agg *a)
{
    struct hrd_key **big;
    uint32_t n = 0, done = 0;
    size_t target = a->max_bytes - a->max_bytes / 8;

    if (a->bytes <= a->max_bytes) {
        a->over_budget = 0;
        return 0;
    }
    big = malloc(((size_t)a->nkeys + a->npkeys + 1) * sizeof *big);
    if (big != NULL) {
        for (uint32_t i = 0; i < a->nkeys; i++) {
            struct hrd_key *k = a->keys[i];
            if (k->exact && k->pairs + k->records >= COMPACT_MIN_EVENTS)
                big[n++] = k;
            /* Path keys (paths.c) are compacted like the others. */
            for (struct hrd_key *p = k->paths; p != NULL; p = p->pnext) {
                if (p->exact && p->pairs >= COMPACT_MIN_EVENTS)
                    big[n++] = p;
            }
        }
        qsort(big, n, sizeof *big, cmp_size_desc);
        for (uint32_t i = 0; i < n && a->bytes > target; i++) {
            if (hrd_agg_key_to_hist(a, big[i]) == 0)
                done++;
        }
        free(big);
    }
    a->compacted += done;
    a->over_budget = a->bytes > a->max_bytes;
    return done;
}

uint32_t hrd_agg_reset_filtered(struct hrd_agg *a, const struct hrd_filter *f)
{
    struct hrd_match m;
    uint32_t kept = 0, dropped;

    if (hrd_match_init(&m, a, f) != 0)
        return 0;
    for (uint32_t i = 0; i < a->nkeys; i++) {
        struct hrd_key *k = a->keys[i];
        if (hrd_match_key(&m, a, k))
            key_free(a, k);
        else
            a->keys[kept++] = k;
    }
    hrd_match_fini(&m);
    dropped = a->nkeys - kept;
    a->nkeys = kept;
    if (dropped > 0 && (kindex_build(a, a->kslots) != 0 ||
                        hrd_agg_paths_reindex(a) != 0)) {
        /* Without an index no key can be found: fall back to none. */
        hrd_agg_reset(a);
    }
    if (a->bytes <= a->max_bytes)
        a->over_budget = 0;
    return dropped;
}

int hrd_agg_key_summaries(struct hrd_agg *a, const struct hrd_key *k,
                          struct hrd_summary *incl, struct hrd_summary *self)
{
    if (k->exact) {
        uint64_t *vi, *vs;
        size_t ni, ns;

        if (sorted_values(a, k, &vi, &ni, &vs, &ns) != 0)
            return -ENOMEM;
        hrd_summary_sorted(vi, ni, incl);
        hrd_summary_sorted(vs, ns, self);
    } else {
        hrd_summary_hist(k->incl, incl);
        hrd_summary_hist(k->self, self);
    }
    return 0;
}
