/*
 * Aggregation: samples per key, and the order of report rows. Pure logic, no
 * I/O.
 *
 * A key is (node id, operator, backend, phase, range); each key holds two
 * populations, inclusive and self, except keys fed only by records (values
 * the program measured itself, such as end_to_end), which hold inclusive
 * only. Strings are interned in one table; node ids are ranked in first-seen
 * order and range names in the order clients first entered their scopes
 * (each batch lists its process's range names in that order). Every sample is
 * kept exactly (as a uint64_t nanosecond value).
 *
 * Rows come out ordered by node rank, phase (cold before warm), scope ranges
 * before record-only ranges, range rank, key creation, inclusive before self.
 */
#ifndef HOSTRANGE_AGG_H
#define HOSTRANGE_AGG_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/report.h"

struct hrd_values {
    uint64_t *v;
    size_t n;
    size_t cap;
    uint64_t min;
    uint64_t max;
};

struct hrd_key {
    uint32_t node;    /* string id */
    uint32_t op;      /* string id */
    uint32_t backend; /* string id */
    uint32_t phase;   /* HRP_PHASE_* */
    uint32_t range;   /* string id */
    uint32_t serial;  /* creation order */
    int has_scopes;   /* fed by range samples (not only records) */
    struct hrd_values incl;
    struct hrd_values self;
};

struct hrd_strtab {
    char **s;         /* id - 1 -> string */
    uint32_t *rank;   /* id - 1 -> node or range rank + 1 (0 = none) */
    uint32_t n, cap;
    uint32_t *index;  /* open addressing: slot -> id */
    uint32_t slots;
};

struct hrd_agg {
    struct hrd_strtab str;
    uint32_t node_ranks, range_ranks;
    struct hrd_key **keys;  /* in creation order */
    uint32_t nkeys, capkeys;
    uint32_t *kindex;       /* open addressing: slot -> key index + 1 */
    uint32_t kslots;
    uint64_t events;        /* samples held (inclusive + self + records) */
    size_t bytes;           /* memory held by sample arrays */
};

void hrd_agg_init(struct hrd_agg *a);
void hrd_agg_fini(struct hrd_agg *a);
/* Drops every key and sample (string tables and ranks stay). */
void hrd_agg_reset(struct hrd_agg *a);

/* Interns a string; returns its id (>= 1) or 0 on ENOMEM. */
uint32_t hrd_agg_str(struct hrd_agg *a, const char *s);
const char *hrd_agg_str_get(const struct hrd_agg *a, uint32_t id);

/* Gives node id string `id` a rank when it has none. */
void hrd_agg_rank_node(struct hrd_agg *a, uint32_t id);
/* Gives range name string `id` a rank when it has none. */
void hrd_agg_rank_range(struct hrd_agg *a, uint32_t id);

/* Finds or creates the key. Returns NULL on ENOMEM. */
struct hrd_key *hrd_agg_key(struct hrd_agg *a, uint32_t node, uint32_t op,
                            uint32_t backend, uint32_t phase, uint32_t range);

/* Adds a range sample / a record to a key. Return 0 or -ENOMEM. */
int hrd_agg_add(struct hrd_agg *a, struct hrd_key *k, uint64_t incl_ns,
                uint64_t self_ns);
int hrd_agg_add_record(struct hrd_agg *a, struct hrd_key *k,
                       uint64_t value_ns);

/* Called with each row, in report order; a non-zero return stops. */
typedef int (*hrd_row_fn)(const struct hrd_row *row, void *ctx);

/*
 * Produces the rows of every key whose node id matches `node_glob` (fnmatch;
 * NULL or "" for all), with exact count, mean, median, min and max. Sorts the
 * key's values in place. Returns 0, the callback's non-zero value, or
 * -ENOMEM.
 */
int hrd_agg_rows(struct hrd_agg *a, const char *node_glob, hrd_row_fn fn,
                 void *ctx);

/* Exact statistics of n values, which are sorted in place. The mean is
 * the correctly rounded quotient; the median is the middle value, or the
 * mean of the two middle values when n is even. */
void hrd_stats(uint64_t *v, size_t n, double *mean, double *median);

#endif
