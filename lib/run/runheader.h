/*
 * What a run's header and end say of it, for those who print it: whether
 * its machine is known (its fingerprint), a line describing it, how two
 * runs' machines differ, how many rounds it holds, its clients' clock
 * paths and its calibrations.
 */
#ifndef HOSTRANGE_RUNHEADER_H
#define HOSTRANGE_RUNHEADER_H

#include <stddef.h>

#include "proto/hostrange.pb-c.h"

/* What hrr_machine_unknown says of a run's machine. */
enum {
    HRR_MACHINE_KNOWN = 0,  /* it has a fingerprint */
    HRR_MACHINE_NONE,       /* none (saved by an older hostrange) */
    HRR_MACHINE_MIXED,      /* a merge of runs from machines that
                                   differ (its sources' fingerprints) */
};
int hrr_machine_unknown(const Hostrange__RunHeader *h);

/* One line describing the run of header h into buf[0..len): its machine
 * (or why it is not known) and its meta pairs. */
void hrr_describe(const Hostrange__RunHeader *h, char *buf, size_t len);

/* Whether the machines of two runs, both known, differ: 0 when they do
 * not, else non-zero with how in why[0..len) (fingerprint.h). */
size_t hrr_machines_diff(const Hostrange__RunHeader *b,
                             const Hostrange__RunHeader *n, char *why,
                             size_t len);

/* NULL when the machines of runs b and n (base and new) match, else how
 * they differ in why[0..len), an unknown one included. */
const char *hrr_machines_differ(const Hostrange__RunHeader *b,
                                    const Hostrange__RunHeader *n, char *why,
                                    size_t len);

/* The rounds of the run of end e (1 for a run of one round). */
unsigned hrr_rounds(const Hostrange__RunEnd *e);

/* The clock paths of a run's clients (HRP_PATH_* bits), which stand for
 * its keys' (a run file does not keep them per key); 0 when a client's is
 * not known. */
unsigned hrr_clock_paths(const Hostrange__RunEnd *e);

/* The calibrations a run carries, *n of them (borrowed from e). */
Hostrange__Calibration *const *hrr_calibrations(const Hostrange__RunEnd *e,
                                                    size_t *n);

/* Frees a run's end (NULL: nothing). */
void hrr_end_free(Hostrange__RunEnd *e);

#endif
