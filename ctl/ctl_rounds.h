/*
 * Rounds in run files (proto/hostrange.proto, RunEnd.rounds and
 * RoundKey): building a merged run's rounds from its inputs (merge, record
 * --rounds, ab), and finding a key's round medians (diff, dump --fields
 * rounds).
 *
 * A round is one input of a merge, or each round of an input that has
 * rounds of its own. A key and metric that more than one round fed gets a
 * RoundKey with its count and median in every round (count 0 where a
 * round lacks it); inputs that hold different keys (shards) give none,
 * and the merged run then has no rounds.
 */
#ifndef HOSTRANGE_CTL_ROUNDS_H
#define HOSTRANGE_CTL_ROUNDS_H

#include <stddef.h>
#include <stdint.h>

#include "proto/hostrange.pb-c.h"

/* The rounds of a merged run, owned here: the messages and their
 * strings. */
struct hrd_ctl_rounds {
    uint32_t rounds;
    Hostrange__RoundKey **keys;
    size_t n;
};

/*
 * Builds the rounds of a merge of the nin run files in[] (whose ends are
 * ends[]), reading each input's keys again when `read` is set (when keys
 * are shared between inputs); without it, only the rounds the inputs
 * carry are kept. Returns 0, -ENOMEM, or HRD_CTL_TOLD after saying why
 * an input cannot be read.
 */
int hrd_ctl_rounds_build(struct hrd_ctl_rounds *r, char *const *in,
                         size_t nin, Hostrange__RunEnd *const *ends,
                         int read);
void hrd_ctl_rounds_fini(struct hrd_ctl_rounds *r);

/* Puts r's rounds into end (borrowed: r outlives end's use). */
void hrd_ctl_rounds_put(const struct hrd_ctl_rounds *r,
                        Hostrange__RunEnd *end);

/*
 * A run's round medians, found by key: an index over end's RoundKeys.
 */
struct hrd_ctl_round_index {
    const Hostrange__RunEnd *end;
    Hostrange__RoundKey **sorted;
    size_t n;
};

/* Returns 0 or -ENOMEM; end may be NULL (no rounds). */
int hrd_ctl_round_index_init(struct hrd_ctl_round_index *x,
                             const Hostrange__RunEnd *end);
void hrd_ctl_round_index_fini(struct hrd_ctl_round_index *x);

/*
 * The round medians of a key and metric (phase, metric: HRP_PHASE_*,
 * HRP_METRIC_*): writes those of the rounds that hold it (count > 0) to
 * v[] (room for max) and returns how many; 0 when the run has no rounds
 * for it (a run of one round), v[] untouched then.
 */
size_t hrd_ctl_round_medians(const struct hrd_ctl_round_index *x,
                             const char *node, const char *op,
                             const char *backend, uint32_t phase,
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
size_t hrd_ctl_round_medians_normalized(
    const struct hrd_ctl_round_index *x, const char *node, const char *op,
    const char *backend, uint32_t phase, const char *range, uint32_t metric,
    const char *control, double *v, size_t max);

/* The most rounds record and ab run. */
#define HRD_CTL_ROUNDS_MAX 1000u

/* Option `what` (--rounds N) of command cmd: a number from 1 to HRD_CTL_ROUNDS_MAX; exits
 * with status 2 on anything else. */
unsigned hrd_ctl_parse_rounds(const char *cmd, const char *what,
                              const char *v);

/*
 * Runs this program (hostrangectl) with args (args[0] its name), its
 * standard output thrown away, as a helper child (ctl_cleanup.h).
 * Returns its exit status, or 1 when it cannot be run.
 */
int hrd_ctl_run_self(char **args);

/* As hrd_ctl_run_self, its standard error thrown away too, its standard
 * output written to the file `out` (created or truncated, mode 0600). */
int hrd_ctl_run_self_quiet(char **args, const char *out);

/*
 * Merges run files in[0..nin) into out as rounds (hostrangectl merge, run
 * as a process of its own), in run format `format`, with the meta pairs
 * given. Returns 0, or 1 after merge said why on stderr.
 */
int hrd_ctl_merge_rounds(const char *cmd, const char *out, unsigned format,
                         Hostrange__RunMeta **meta, size_t nmeta,
                         char **in, size_t nin);

/*
 * One round of hostrangectl ab (ctl_record.c): cmdv under a private daemon,
 * its standard output sent to standard error, the run saved to `save`.
 * Returns the command's exit status (as record's), 128 + N when signal N
 * stopped record, or 1 when the daemon or the save failed (said on
 * stderr). *cut is set when a signal stopped the round before its command
 * ended: the round is not complete (ctl_cleanup.h).
 */
int hrd_ctl_record_round(char **cmdv, const char *save, int *cut);

#endif
