/*
 * Rounds in run files (proto/hostrange.proto, RunEnd.rounds and
 * RoundKey): building a merged run's rounds from its inputs (merge, record
 * --rounds, ab), and finding a key's round medians (diff, dump --fields
 * rounds, the history).
 *
 * A round is one input of a merge, or each round of an input that has
 * rounds of its own. A key and metric that more than one round fed gets a
 * RoundKey with its count and median in every round (count 0 where a
 * round lacks it); inputs that hold different keys (shards) give none,
 * and the merged run then has no rounds.
 */
#ifndef HOSTRANGE_RUNROUNDS_H
#define HOSTRANGE_RUNROUNDS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/agg/rows.h"
#include "proto/hostrange.pb-c.h"

/* The rounds of a merged run, owned here: the messages and their
 * strings. */
struct hrr_runrounds {
    uint32_t rounds;
    Hostrange__RoundKey **keys;
    size_t n;
};

/*
 * Builds the rounds of a merge of the nin run files in[] (whose ends are
 * ends[]), reading each input's keys again when `read` is set (when keys
 * are shared between inputs); without it, only the rounds the inputs
 * carry are kept. Returns 0, -ENOMEM, or -EIO with why an input cannot
 * be read in err.
 */
int hrr_runrounds_build(struct hrr_runrounds *r, char *const *in,
                        size_t nin, Hostrange__RunEnd *const *ends, int read,
                        char *err, size_t errlen);
void hrr_runrounds_fini(struct hrr_runrounds *r);

/* Puts r's rounds into end (borrowed: r outlives end's use). */
void hrr_runrounds_put(const struct hrr_runrounds *r, Hostrange__RunEnd *end);

/*
 * A run's round medians, found by key: an index over end's RoundKeys.
 */
struct hrr_round_index {
    const Hostrange__RunEnd *end;
    Hostrange__RoundKey **sorted;
    size_t n;
};

/* Returns 0 or -ENOMEM; end may be NULL (no rounds). */
int hrr_round_index_init(struct hrr_round_index *x,
                         const Hostrange__RunEnd *end);
void hrr_round_index_fini(struct hrr_round_index *x);

/*
 * The round medians of a key and metric (phase, metric: HRP_PHASE_*,
 * HRP_METRIC_*): writes those of the rounds that hold it (count > 0) to
 * v[] (room for max) and returns how many; 0 when the run has no rounds
 * for it (a run of one round), v[] untouched then.
 */
size_t hrr_round_medians(const struct hrr_round_index *x, const char *node,
                         const char *op, const char *backend, uint32_t phase,
                         const char *range, uint32_t metric, double *v,
                         size_t max);

/*
 * The round medians of a key and metric normalized by a control of the
 * same node, operator, backend and phase (diff --normalize): each round's median
 * divided by the same round's median of range `control`, metric
 * inclusive, of the same phase.
 * Writes those of the rounds that hold both (count > 0) to v[] (room for
 * max) and returns how many; 0 when the run has no rounds for the key or
 * the control.
 */
size_t hrr_round_medians_normalized(
    const struct hrr_round_index *x, const char *node, const char *op,
    const char *backend, uint32_t phase, const char *range, uint32_t metric,
    const char *control, double *v, size_t max);

/* The doubles a row's round medians need (hrr_round_row's medians), for
 * an index of a run's end. */
size_t hrr_round_row_room(const struct hrr_round_index *x);

/* Sets row r's rounds fields (rounds, round_medians, round_spread; one
 * round, its median, when the run has no rounds for it), its medians in
 * medians[] (room from hrr_round_row_room). */
void hrr_round_row(const struct hrr_round_index *x, struct hra_row *r,
                   double *medians);

#endif
