/*
 * What record --rounds, ab and bisect share: --rounds, this program's
 * path, a merge of rounds as a process of its own (lib/runner/spawn.h,
 * said), one round of ab. The rounds of run files themselves are
 * lib/run/runrounds.h.
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

/* This program, as the commands that run it again name it to
 * lib/runner (spawn.h). */
#define HRC_SELF "/proc/self/exe"

/* The directory this program is in, written to buf; or NULL when it
 * cannot be read. */
const char *hrc_bindir(char *buf, size_t len);

/*
 * hrx_run_self of this program: args (args[0] its name), its standard
 * output to `out` (NULL: thrown away), with `quiet` its standard error
 * thrown away. Returns its exit status, or 127 when it cannot be run
 * (said on stderr unless quiet).
 */
int hrc_run_self(char **args, int quiet, const char *out);

/*
 * hrx_merge_rounds of this program, said: merges run files in[0..nin)
 * into out as rounds, in run format `format`, with the meta pairs given
 * (meta NULL: none). Returns 0, or 1 after merge (or this function, as
 * command cmd's) said why on stderr.
 */
int hrc_merge_rounds(const char *cmd, const char *out, unsigned format,
                     const struct hrr_meta *meta, char **in, size_t nin);

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
