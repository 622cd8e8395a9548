/*
 * What the libFuzzer targets share: the report of an aggregation written in
 * every format (so that the row and number code runs on whatever the input
 * left there), a check that aborts, and the input format of fuzz_state.
 *
 * fuzz_state's input: one mode byte, then either the bytes of a record file
 * after its magic (FUZZ_STATE_RAW: checksums and lengths as they come), or
 * records to be written with valid headers and checksums (each one type
 * byte, a 16-bit little-endian payload length, cut short at the end, and
 * the payload), so that the fuzzer reaches the loaders behind the
 * checksums. FUZZ_STATE_JOURNAL makes the file the journal `journal.1` of
 * a state directory opened by hrd_state_open; FUZZ_STATE_RUN a run file
 * (each record's payload a key, type ignored, written by hrr_put_packed
 * after a header and followed by an empty end; raw: the bytes after the
 * magic) loaded by hrr_load and written again, sorted (format 1) with
 * FUZZ_STATE_SORTED; FUZZ_STATE_SNAPSHOT the bytes after the magic of a
 * snapshot (a run file with the daemon's state, lib/run/runstate.h), raw;
 * otherwise it is a snapshot of an earlier release's format (a record
 * file). Either is loaded by hrd_snapshot_load. fuzz_spool reads the same
 * format (after the spool magic) as the spool file of process
 * FUZZ_SPOOL_PID, FUZZ_SPOOL_INSTANCE.
 */
#ifndef HOSTRANGE_FUZZ_COMMON_H
#define HOSTRANGE_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "lib/agg/agg.h"
#include "lib/view/report.h"

#define FUZZ_STATE_JOURNAL 0x01u
#define FUZZ_STATE_RAW 0x02u
#define FUZZ_STATE_RUN 0x04u
#define FUZZ_STATE_SORTED 0x08u
#define FUZZ_STATE_SNAPSHOT 0x10u

/* The process whose spool file fuzz_spool reads (its seeds' batches are
 * that process's). */
#define FUZZ_SPOOL_PID 100u
#define FUZZ_SPOOL_INSTANCE (0x1234u + FUZZ_SPOOL_PID)

/* Aborts (a crash libFuzzer reports, with the input) when cond is false. */
#define FUZZ_CHECK(cond)                                                    \
    do {                                                                    \
        if (!(cond))                                                        \
            fuzz_fail(#cond, __FILE__, __LINE__);                           \
    } while (0)

void fuzz_fail(const char *what, const char *file, int line)
    __attribute__((noreturn));

/*
 * Writes every row of a in the three formats with every field, and pages
 * through it with a small page budget. Returns the text of the JSONL
 * report (caller frees), and the sum of the inclusive rows' counts in
 * *count when count is not NULL.
 */
char *fuzz_report(struct hra_agg *a, uint64_t *count);

#endif
