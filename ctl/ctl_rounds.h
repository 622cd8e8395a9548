/*
 * What record --rounds, ab and bisect share: --rounds, running this
 * program as a helper, a merge of rounds as a process of its own, one
 * round of ab. The rounds of run files themselves are lib/run/runrounds.h.
 */
#ifndef HOSTRANGE_CTL_ROUNDS_H
#define HOSTRANGE_CTL_ROUNDS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/run/runmeta.h"
#include "lib/run/runrounds.h"

/* The most rounds record and ab run. */
#define HRC_ROUNDS_MAX 1000u

/* Option `what` (--rounds N) of command cmd: a number from 1 to HRC_ROUNDS_MAX; exits
 * with status 2 on anything else. */
unsigned hrc_parse_rounds(const char *cmd, const char *what,
                              const char *v);

/*
 * Runs this program (hostrangectl) with args (args[0] its name), its
 * standard output thrown away, as a helper child (lib/runner/cleanup.h).
 * Returns its exit status, or 1 when it cannot be run.
 */
int hrc_run_self(char **args);

/* As hrc_run_self, its standard error thrown away too, its standard
 * output written to the file `out` (created or truncated, mode 0600). */
int hrc_run_self_quiet(char **args, const char *out);

/*
 * Merges run files in[0..nin) into out as rounds (hostrangectl merge, run
 * as a process of its own), in run format `format`, with the meta pairs
 * given (meta NULL: none). Returns 0, or 1 after merge said why on stderr.
 */
int hrc_merge_rounds(const char *cmd, const char *out, unsigned format,
                         const struct hrr_meta *meta, char **in,
                         size_t nin);

/*
 * One round of hostrangectl ab (ctl_record.c): cmdv under a private daemon,
 * its standard output sent to standard error, the run saved to `save`.
 * Returns the command's exit status (as record's), 128 + N when signal N
 * stopped record, or 1 when the daemon or the save failed (said on
 * stderr). *cut is set when a signal stopped the round before its command
 * ended: the round is not complete (lib/runner/cleanup.h).
 */
int hrc_record_round(char **cmdv, const char *save, int *cut);

#endif
