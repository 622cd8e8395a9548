/*
 * lib/agg's own: the fields of the aggregation and its keys (agg.h tells
 * what they hold), the functions its files call in one another, the
 * writer of the exact encoding (events.h has its readers) and the inline
 * fast path of adding a sample. Code outside lib/agg that still reads
 * these fields includes this header by name; what it may call is in
 * agg.h.
 */
#ifndef HOSTRANGE_AGG_IMPL_H
#define HOSTRANGE_AGG_IMPL_H

#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lib/agg/agg.h"
#include "lib/agg/keyfields.h"
#include "lib/stat/hist.h"

struct hra_key {
    uint32_t node;    /* string id */
    uint32_t op;      /* string id */
    uint32_t backend; /* string id */
    uint32_t phase;   /* HRP_PHASE_* */
    uint32_t range;   /* string id */
    uint32_t serial;  /* creation order */
    uint8_t has_scopes; /* fed by range samples (not only records) */
    uint8_t exact;      /* events kept exactly (else histograms) */
    uint8_t mapped;     /* buf is a mapping of its own (agg.c) */
    uint8_t clock_paths; /* the HRP_PATH_* bits of the clients that fed it
                            (0: not known; ingest.c, snapshot.c) */
    /* Its counters (keyfields.h): pairs (range events, an inclusive and
     * a self time each), records (record values, inclusive only),
     * children (the sum of the range events' numbers of direct child
     * ranges, kept exactly in both modes), descendants (the same of all
     * their descendants), and so on. */
    HRA_KEY_COUNTER_FIELDS
    /* Exact mode: the encoded events (see above). */
    uint8_t *buf;
    size_t len;
    size_t cap;
    /* Histogram mode (self == incl: shared, see above). */
    struct hrs_hist *incl;
    struct hrs_hist *self;
    /* Calling contexts (see above): a range key's path keys, in creation
     * order; a path key's path id (0 on a range key) and the next path key
     * of its range key. */
    struct hra_key *paths;
    struct hra_key *pnext;
    uint32_t path;
    /* A path key that mirrors its range key: it holds no event of its own,
     * its events are the range key's (every sample of the range key so far
     * came through this one path). Readers see it through
     * hra_path_view; it is filled with a copy of the range key's
     * events (hra_path_unmirror) once they part: a second path, a
     * sample kept without a path, or a record. Only the first path key of
     * a key that had no event when the key was made is one. */
    uint8_t mirror;
};

/* The path table: path id - 1 -> its parent's id (0: none), its innermost
 * range (string id) and its depth (1 for a range at the top). */
struct hra_pathtab {
    uint32_t *parent;
    uint32_t *range;
    uint8_t *depth;
    uint32_t n, cap;
    uint32_t *index;  /* open addressing: slot -> id */
    uint32_t slots;
};

struct hra_strtab {
    char **s;         /* id - 1 -> string */
    uint32_t *rank;   /* id - 1 -> node or range rank + 1 (0 = none) */
    uint64_t *lost;   /* id - 1 -> events lost under this node id */
    struct hra_internal *internal; /* id - 1 -> the profiler's own work
                                      under this node id */
    uint32_t n, cap;
    uint32_t *index;  /* open addressing: slot -> id */
    uint32_t slots;
};

struct hra_agg {
    struct hra_strtab str;
    uint32_t node_ranks, range_ranks;
    struct hra_key **keys;  /* in creation order */
    uint32_t nkeys, capkeys;
    uint32_t *kindex;       /* open addressing: slot -> key index + 1 */
    uint32_t kslots;
    uint32_t next_serial;
    uint64_t events;        /* samples held (inclusive + self + records) */
    size_t bytes;           /* memory held by keys, samples, histograms */
    /* Settings (hra_init sets the defaults). */
    uint64_t exact_cap;     /* events per key kept exactly */
    size_t max_bytes;       /* the memory budget */
    int small_pages;        /* no huge pages for exact buffers (agg.c:
                               HUGE; for the benchmark's baseline) */
    /* Counters. */
    uint64_t capped;        /* keys turned into histograms at exact_cap */
    uint64_t compacted;     /* keys turned into histograms for memory */
    int over_budget;        /* over max_bytes with nothing left to compact */
    /* Scratch for decoding and sorting (owned). */
    uint64_t *scratch;
    size_t scratch_cap;
    /* Calling contexts (paths.c): the path table, the index of path keys
     * on (range key, path), their limits and counters. */
    struct hra_pathtab path;
    struct hra_key **pkindex;
    uint32_t npkeys, pkslots;
    uint32_t max_paths;      /* paths interned at most */
    uint32_t max_depth;      /* the deepest path kept */
    uint64_t paths_too_deep;   /* samples kept without their path: deeper
                                  than max_depth */
    uint64_t paths_table_full; /* ... the path table was full */
};

int hra_add_slow(struct hra_agg *a, struct hra_key *k, uint64_t incl_ns,
                     uint64_t self_ns);

/* Frees range key k's path keys (agg.c, when k goes). */
void hra_paths_free(struct hra_agg *a, struct hra_key *k);
/* Rebuilds the index of path keys after keys were removed. Returns 0 or
 * -ENOMEM. */
int hra_paths_reindex(struct hra_agg *a);
/* Bytes the path table takes (counted in a->bytes). */
size_t hra_pathtab_bytes(const struct hra_agg *a);

/*
 * The open-addressing index of a table of ids 1..n (the strings', the
 * paths'): makes room for one more id, rebuilding the index at twice its
 * slots (256 at first) when it would be half full, each id at the slot of
 * hash(ctx, id) or the next free one. Returns 0 or -ENOMEM (the index is
 * then as it was).
 */
int hra_index_room(uint32_t **index, uint32_t *slots, uint32_t n,
                       uint32_t (*hash)(const void *ctx, uint32_t id),
                       const void *ctx);

/* Room kept free at the end of an exact buffer: the widest entry (17
 * bytes) is written with two 8-byte stores, and a decoder reads 8 bytes
 * past the start of each value. */
#define HRA_SLACK 33u

/* Bytes of x without its leading zero bytes (0 for 0). */
static inline unsigned hra__width(uint64_t x)
{
    return x == 0 ? 0u : (unsigned)(71 - __builtin_clzll(x)) / 8u;
}

/* Stores x little-endian in the 8 bytes at p. */
static inline void hra__put8(uint8_t *p, uint64_t x)
{
    x = htole64(x);
    memcpy(p, &x, 8);
}

/* Appends a range event's entry (inclusive time, children's time) to an
 * exact key with the room for it. */
static inline void hra__put_pair(struct hra_key *k, uint64_t incl_ns,
                                     uint64_t diff)
{
    unsigned w1 = hra__width(incl_ns), w2 = hra__width(diff);
    uint8_t *p = k->buf + k->len;

    p[0] = (uint8_t)(w1 | w2 << 4);
    hra__put8(p + 1, incl_ns);
    hra__put8(p + 1 + w1, diff);
    k->len += 1 + w1 + w2;
}

/* hra__add's cases beyond an exact key with room (agg.c): a key in
 * histograms, else hra_add_slow. */
int hra__add_more(struct hra_agg *a, struct hra_key *k, uint64_t incl_ns,
                      uint64_t self_ns);

/* hra_add, inline for the common case, an exact key with room below
 * its cap (the rest out of line: hra__add_more, then
 * hra_add_slow). */
static inline __attribute__((always_inline)) int
hra__add(struct hra_agg *a, struct hra_key *k, uint64_t incl_ns,
             uint64_t self_ns)
{
    if (k->exact && k->len + HRA_SLACK <= k->cap && self_ns <= incl_ns &&
        k->pairs + k->records + 1 < a->exact_cap) {
        hra__put_pair(k, incl_ns, incl_ns - self_ns);
        k->pairs++;
        k->has_scopes = 1;
        a->events += 2;
        return 0;
    }
    return hra__add_more(a, k, incl_ns, self_ns);
}

#endif
