/*
 * Aggregation: samples per key, and the order of report rows. Pure logic, no
 * I/O.
 *
 * A key is (node id, operator, backend, phase, range); each key holds two
 * populations, inclusive and self, except keys fed only by records (values
 * the program measured itself, such as end_to_end), which hold inclusive
 * only. Strings are interned in one table; node ids are ranked in first-seen
 * order and range names in the order clients first entered their scopes
 * (each batch lists its process's range names in that order).
 *
 * Exact mode. A key keeps every event exactly, as one variable-length entry
 * per event in a byte array: a header byte whose low nibble is the number of
 * bytes of the inclusive time (0..8) and whose high nibble is the number of
 * bytes of inclusive minus self time (0..8), or 15 for a record (no self
 * time), then those bytes, little-endian. An event whose inclusive time is
 * under 65536 ns and whose children took under 65536 ns costs at most 5
 * bytes, a leaf range (self == inclusive) at most 3.
 *
 * Children. Each key also keeps the sum of the numbers of direct child
 * ranges its range events had (Batch.sample_children), so that the mean
 * number of children per call, and with a calibration the observer cost in
 * its figures, is known (observer.h). It is one exact counter in both modes.
 *
 * Histogram mode. When a key reaches `exact_cap` events (range events plus
 * records), or when the memory budget `max_bytes` is exceeded and it is
 * among the largest keys, its populations move into log-linear histograms
 * (hist.h): count, mean, minimum and maximum stay exact; quantiles are then
 * estimates within 0.1%, and its rows say exact = 0. Nothing is dropped.
 * While every event of a key in histograms was a leaf (self == inclusive)
 * and it has no record, its two populations are equal and share one
 * histogram (incl == self): an event then costs one add, and the memory of
 * one histogram. The first event that is not a leaf, or a record, gives
 * self a copy of its own (hra_key_unshare). Readers see two equal
 * histograms either way.
 *
 * Rows (rows.c) come out ordered by node rank, phase (cold before warm),
 * scope ranges before record-only ranges, range rank, key creation,
 * inclusive before self.
 *
 * Calling contexts (paths.c). Besides its population per range name, each
 * range sample also goes into a population per calling context: a path
 * key, (labels, path), where a path is the chain of ranges enclosing the
 * sample's range on its thread, itself included, interned in the path
 * table (a path id is its parent's id and its innermost range; ids from
 * 1). A path key hangs off the range key of its innermost range (its
 * `paths` list), is stored like any key (exact, then histograms at the
 * exact cap or under memory pressure) and counts toward max_bytes.
 * Why two populations rather than per-path keys merged into per-range rows
 * at report time: the report per range name stays exactly what it was
 * (same values, same exact cap, same order, and every reader of range
 * keys, from the observer to run files and diff, is unchanged), while the
 * cost of paths is bounded on its own terms: at most max_paths paths, none
 * deeper than max_depth (a sample whose context is beyond either is kept
 * per range name only, and counted in paths_too_deep or paths_table_full),
 * and their samples under the same memory budget, compacted like the
 * others. The price is the samples' memory twice; the budget holds it.
 * Records (values the program measured itself) have no calling context
 * and are kept per range name only.
 *
 * This header is lib/agg's door: what the daemon, run files and views
 * call. The fields of its structs, the encoding's writers and the inline
 * fast path of adding live in lib/agg/agg_impl.h, lib/agg's own; a batch
 * a client sent is fed through hra_feed (feed.c), which keeps the
 * name and key caches, calling paths, mirrors and child counts.
 */
#ifndef HOSTRANGE_AGG_H
#define HOSTRANGE_AGG_H

#include <stddef.h>
#include <stdint.h>

#include "lib/stat/hist.h"
#include "lib/agg/rows.h"
#include "lib/stat/summary.h"
#include "proto/hostrange.pb-c.h"

/* The aggregation and its keys; their fields are lib/agg's (agg_impl.h). */
struct hra_agg;
struct hra_key;

#define HRA_EXACT_CAP_DEFAULT 1000000u
#define HRA_MAX_BYTES_DEFAULT ((size_t)1 << 30)


#define HRA_MAX_PATHS_DEFAULT 65536u
#define HRA_MAX_DEPTH_DEFAULT 64u
/* The depth cap cannot be set above this. */
#define HRA_MAX_DEPTH_LIMIT 255u
/* The most paths a table can hold (ids 0 and HRA_PATH_TOO_DEEP, and the
 * room the table needs to grow, are not paths). */
#define HRA_MAX_PATHS_LIMIT (UINT32_MAX - 3)

/* The profiler's own work the clients reported under a node id: waits for
 * room in their buffers (stalls) and wake-ups of their shippers. Kept in
 * memory since the daemon started (not in its state). */
struct hra_internal {
    uint64_t stalls, stall_ns, wakes, wake_ns;
};


/* Which keys a dump or a reset applies to; NULL or "" (0 for the phase)
 * matches anything. Strings are shell patterns (fnmatch). */
struct hra_filter {
    const char *node;
    const char *op;
    const char *backend;
    const char *range;
    unsigned phase;
};

/* Where a paged dump stands: the order of the last key it emitted. */
struct hra_cursor {
    uint32_t pos[5];
    int started;
    int done;
};

void hra_init(struct hra_agg *a);
void hra_fini(struct hra_agg *a);
/* Drops every key and sample (string tables, ranks and lost counts stay). */
void hra_reset(struct hra_agg *a);
/* Drops the keys that match f. Returns how many were dropped. */
uint32_t hra_reset_filtered(struct hra_agg *a, const struct hra_filter *f);

/* Interns a string; returns its id (>= 1) or 0 on ENOMEM. */
uint32_t hra_str(struct hra_agg *a, const char *s);
const char *hra_str_get(const struct hra_agg *a, uint32_t id);

/* Gives node id string `id` a rank when it has none. */
void hra_rank_node(struct hra_agg *a, uint32_t id);
/* Gives range name string `id` a rank when it has none. */
void hra_rank_range(struct hra_agg *a, uint32_t id);
/* Adds delta (which may be negative) to the events lost under node `id`. */
void hra_lost_add(struct hra_agg *a, uint32_t id, int64_t delta);
/* Adds to the profiler's own work under node `id`. */
void hra_internal_add(struct hra_agg *a, uint32_t id, uint64_t stalls,
                          uint64_t stall_ns, uint64_t wakes, uint64_t wake_ns);

/* Finds or creates the key. Returns NULL on ENOMEM. */
struct hra_key *hra_agg_key(struct hra_agg *a, uint32_t node, uint32_t op,
                            uint32_t backend, uint32_t phase, uint32_t range);

/* Removes a key and its samples. */
void hra_key_remove(struct hra_agg *a, struct hra_key *k);

/* Adds a range sample / a record to a key. Return 0 or -ENOMEM (the key is
 * then unchanged). Inside lib/agg, hra__add (agg_impl.h) is the same,
 * inline for the common cases. */
int hra_add(struct hra_agg *a, struct hra_key *k, uint64_t incl_ns,
                uint64_t self_ns);
int hra_add_record(struct hra_agg *a, struct hra_key *k,
                       uint64_t value_ns);

/*
 * Fills a new, empty key with events as a snapshot holds them: an exact
 * encoding (copied; it must decode to `pairs` range events and `records`
 * records, with self times not above inclusive ones), or two histograms
 * (which the key takes over on success, freeing self when it holds the
 * same values as incl, which it then shares; self may be incl; incl must
 * count pairs + records values, self pairs). Return 0, -EINVAL when the
 * data does not check out, or -ENOMEM.
 */
int hra_key_set_exact(struct hra_agg *a, struct hra_key *k,
                          const uint8_t *buf, size_t len, uint64_t pairs,
                          uint64_t records);
int hra_key_set_hist(struct hra_agg *a, struct hra_key *k,
                         struct hrs_hist *incl, struct hrs_hist *self,
                         uint64_t pairs, uint64_t records);

/* Checks an exact encoding (len bytes at buf, no slack needed past them):
 * every entry whole and valid, self times not above inclusive ones.
 * Returns 0 with the numbers of range events and records it holds, or
 * -EINVAL. */
int hra_events_check(const uint8_t *buf, size_t len, uint64_t *pairs,
                         uint64_t *records);

/* The values of an exact encoding (no slack needed past it), in order,
 * in one pass that also checks it (as hra_events_check):
 * incl[0..*nincl) and self[0..*nself); the arrays hold maxi and maxs
 * values (self one more, for a record's scratch value). Returns 0, or
 * -EINVAL for an invalid encoding or more values than room. */
int hra_events_decode(const uint8_t *buf, size_t len, uint64_t *incl,
                          size_t maxi, size_t *nincl, uint64_t *self,
                          size_t maxs, size_t *nself);

/*
 * Adds events in the exact encoding (checked by hra_events_check:
 * `pairs` range events and `records` records) to a key, in their order: an
 * exact key that stays below its cap takes the bytes as they are; else
 * they are added one by one as arriving samples are (the cap and
 * histograms apply). Records part the key from its mirror first. Returns 0
 * or -ENOMEM (the key may then hold part of the events).
 */
int hra_key_add_exact(struct hra_agg *a, struct hra_key *k,
                          const uint8_t *buf, size_t len, uint64_t pairs,
                          uint64_t records);

/* Moves a key's events into histograms. Returns 0 or -ENOMEM (the key is
 * then unchanged). */
int hra_key_to_hist(struct hra_agg *a, struct hra_key *k);

/* Gives a key in histograms whose populations share one (see above) a
 * self histogram of its own, as any change to one population alone needs
 * first; nothing to do for other keys. Returns 0 or -ENOMEM (the key is
 * then unchanged). */
int hra_key_unshare(struct hra_agg *a, struct hra_key *k);

/*
 * Keeps memory within max_bytes: when over, turns the largest exact keys
 * into histograms, largest first, until 7/8 of the budget is reached.
 * Returns how many keys it turned; sets over_budget when the budget cannot
 * be met (and clears it when it is met).
 */
uint32_t hra_enforce(struct hra_agg *a);

/* Whether a is over max_bytes with nothing left to compact, after trying
 * once more (hra_enforce): then it takes no more samples. */
int hra_full(struct hra_agg *a);

/* The exact values of a key, decoded: incl[0..*nincl) and self[0..*nself)
 * (unsorted). The arrays must hold k->pairs + k->records and k->pairs
 * values. Only for a key in exact mode. */
void hra_key_values(const struct hra_key *k, uint64_t *incl,
                        size_t *nincl, uint64_t *self, size_t *nself);

/* The summaries of a key's populations (self is empty for a key of
 * records only). Returns 0 or -ENOMEM. */
int hra_key_summaries(struct hra_agg *a, const struct hra_key *k,
                          struct hrs_summary *incl, struct hrs_summary *self);

/*
 * Matching keys against a filter (rows.c): each pattern is tried on each
 * string once per match, not once per key. init returns 0 or -ENOMEM;
 * hra_match_key returns 1 when k matches.
 */
struct hra_match {
    const struct hra_filter *f;
    uint8_t *bits;
};

int hra_match_init(struct hra_match *m, const struct hra_agg *a,
                   const struct hra_filter *f);
int hra_match_key(struct hra_match *m, const struct hra_agg *a,
                  const struct hra_key *k);
void hra_match_fini(struct hra_match *m);

/* Called with each row, in report order; a non-zero return stops. */
typedef int (*hra_row_fn)(const struct hra_row *row, void *ctx);

/*
 * Produces the rows of the keys that match f (NULL for all) and come after
 * *cur in report order, in that order, until the values of the keys handled
 * (and 64 for each key) reach `budget` (at least one key is handled; 0
 * means no limit). Updates
 * *cur; cur->done is set when no key is left. Returns 0, the callback's
 * non-zero value, or -ENOMEM.
 */
int hra_rows_page(struct hra_agg *a, const struct hra_filter *f,
                      struct hra_cursor *cur, uint64_t budget, hra_row_fn fn,
                      void *ctx);

/* Every row of the keys whose node id matches node_glob (NULL or "" for
 * all). Returns 0, the callback's non-zero value, or -ENOMEM. */
int hra_rows(struct hra_agg *a, const char *node_glob, hra_row_fn fn,
                 void *ctx);

/* --- Calling contexts (paths.c) ---------------------------------------- */

/* What hra_path gives for a context deeper than max_depth (a child of
 * such a context is one too); 0 is a context the table had no room for. */
#define HRA_PATH_TOO_DEEP UINT32_MAX

/*
 * The id of the path (parent, range): parent 0 for a range at the top of
 * its stack, HRA_PATH_TOO_DEEP or 0 propagate (the child of a path not kept
 * is not kept either). Returns the id, HRA_PATH_TOO_DEEP, or 0 (the table
 * is full, or ENOMEM).
 */
uint32_t hra_path(struct hra_agg *a, uint32_t parent, uint32_t range);

/* Writes the range names of path id, outermost first, to names[0..depth)
 * and returns the depth (names must hold HRA_MAX_DEPTH_LIMIT). */
uint32_t hra_path_names(const struct hra_agg *a, uint32_t id,
                            const char **names);

/* The path key of range key k and path id (whose innermost range is
 * k->range), found or created; NULL on ENOMEM. */
struct hra_key *hra_path_key(struct hra_agg *a, struct hra_key *k,
                                 uint32_t path);

/*
 * As hra_path_key, for the samples of a live daemon: the first path key
 * of a range key with no event yet is made a mirror of it (see struct
 * hra_key), which costs no work per sample while the key has one path.
 * Making a second path key first fills the mirror with its own copy.
 */
struct hra_key *hra_path_key_live(struct hra_agg *a, struct hra_key *k,
                                      uint32_t path);

/* Gives range key k's mirror path key (if it has one) its own copy of k's
 * events, so that k may take events the path does not. Returns 0 or
 * -ENOMEM (k and its path key are then unchanged). */
int hra_path_unmirror(struct hra_agg *a, struct hra_key *k);

/* Makes mirrors of the path keys that hold the same events as their range
 * keys, as a key seen through one path has after a snapshot or a run file
 * was loaded. Returns how many it made. */
uint32_t hra_paths_share(struct hra_agg *a);

/* Path key p of range key k as readers must see it: p itself, or, for a
 * mirror, *tmp filled as a shallow copy of k's events under p's path. */
const struct hra_key *hra_path_view(const struct hra_key *k,
                                        const struct hra_key *p,
                                        struct hra_key *tmp);

/* Adds a range sample to a path key (as hra_add; a->events counts the
 * samples once, by their range keys). Returns 0 or -ENOMEM. */
int hra_path_add(struct hra_agg *a, struct hra_key *pk, uint64_t incl_ns,
                     uint64_t self_ns);

/* Adds range events in the exact encoding to a path key (as
 * hra_key_add_exact, no records; a->events as hra_path_add). */
int hra_path_add_exact(struct hra_agg *a, struct hra_key *pk,
                           const uint8_t *buf, size_t len, uint64_t pairs);

/* Fills a new, empty path key as hra_key_set_exact / _hist do (pairs
 * only). */
int hra_path_set_exact(struct hra_agg *a, struct hra_key *pk,
                           const uint8_t *buf, size_t len, uint64_t pairs);
int hra_path_set_hist(struct hra_agg *a, struct hra_key *pk,
                          struct hrs_hist *incl, struct hrs_hist *self,
                          uint64_t pairs);

/*
 * As hra_rows_page, but with by_path set the rows are those of the
 * path keys of the matching range keys (row.path and row.depth set), the
 * path keys of one range key together, in creation order.
 */
int hra_rows_page_by(struct hra_agg *a, const struct hra_filter *f,
                         struct hra_cursor *cur, uint64_t budget,
                         int by_path, hra_row_fn fn, void *ctx);

/* --- Feeding a batch (feed.c) ------------------------------------------ */

/*
 * The scratch of feeding batches (the key and path key of each (label
 * set, context) pair of a batch, the path of each context), kept from one
 * batch to the next; heap-allocated, freed by hra_feed_free (NULL
 * accepted).
 */
struct hra_feed;

/* Returns a new feed for aggregation a, or NULL on ENOMEM. */
struct hra_feed *hra_feed_new(struct hra_agg *a);
void hra_feed_free(struct hra_feed *f);

/*
 * What feeding one batch did. The string ids of the batch's label sets
 * (node[i], op[i], backend[i] for Batch.labels[i]) stay valid until the
 * next hra_feed of the same feed.
 */
struct hra_fed {
    uint64_t pairs;        /* range samples added */
    uint64_t records;      /* records added */
    uint64_t too_deep;     /* range samples kept without their path: deeper
                              than the depth cap (also in the
                              aggregation's paths_too_deep) */
    uint64_t table_full;   /* ... the path table was full */
    const uint32_t *node, *op, *backend;
};

/*
 * Feeds batch b, which must be valid (the daemon's ingest checks every
 * field first): interns its names (ranking range names in the batch's
 * order and node ids as their samples arrive), adds its samples to their
 * keys and to the keys of their calling paths (mirroring, child counts),
 * and the profiler's own work of its label sets; then keeps the memory
 * budget (hra_enforce). Lost counts are the caller's (they are per
 * client). Returns 0 with *out filled, or -ENOMEM with part of the batch
 * added (*out then says how much).
 */
int hra_feed(struct hra_feed *f, const Hostrange__Batch *b,
                 struct hra_fed *out);

/*
 * Where the events of a run's key go when it joins key k (run files): a
 * key whose events all came through one calling path `path` (0: not so,
 * or not known) keeps them once, k's path key of `path` a mirror of k,
 * when k has no event and no path yet, or when that mirror is all it has;
 * then *mirrored is set (that path needs no events of its own). Otherwise
 * k's mirror, if any, gets its own copy first. Returns 0 or -ENOMEM.
 */
int hra_key_join(struct hra_agg *a, struct hra_key *k, uint32_t path,
                     int *mirrored);

/* Counts n range samples kept without their calling path, whose path
 * lookup (hra_path) gave `id` (HRA_PATH_TOO_DEEP, or 0: the table was
 * full). */
void hra_paths_skipped(struct hra_agg *a, uint32_t id, uint64_t n);

#endif
