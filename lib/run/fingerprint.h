/*
 * The machine fingerprint of a run (RunFingerprint in hostrange.proto):
 * what a saved run was measured on, so that runs of different machines
 * are not compared silently (hostrangectl diff warns, and refuses with
 * --strict). It holds the host name, the CPU model, the CPUs online, the
 * kernel, the hostrange version, and the clock: its path (fast or ordered,
 * decided in one place, hrr_fingerprint_clock_path), how the clients
 * ordered their reads, and the largest step they observed.
 *
 * The machine's part is probed where the run is saved (hostrangectl talks
 * to a daemon on the same host); the clock's comes from the daemon's
 * clients. A user may name the machine ($HOSTRANGE_MACHINE, --machine):
 * the name is kept in the fingerprint beside what was probed.
 *
 * What makes two runs comparable is their machine: the name the user
 * gave, else the CPU model and the number of cores; and their clock: its
 * path, how its reads were ordered, and its step. Never the host name,
 * which a CI runner changes every job, nor the kernel or the hostrange
 * version, which change under a machine every few weeks: those are kept
 * and shown, never compared. Two fingerprints are the same when those
 * fields are equal and the clock steps are within a factor of
 * HRR_FINGERPRINT_STEP_FACTOR of each other: a step is measured (the
 * smallest gap a client saw between two readings of its clock), and the
 * same clock on the same machine gives 5 ns in one run and 10 in the next;
 * a clock of another kind differs by more.
 */
#ifndef HOSTRANGE_FINGERPRINT_H
#define HOSTRANGE_FINGERPRINT_H

#include <stddef.h>

#include "proto/hostrange.pb-c.h"

/* Steps within this factor of each other are the same step. */
#define HRR_FINGERPRINT_STEP_FACTOR 4.0

/* The variable that names the machine, and the longest name (bytes). */
#define HRR_MACHINE_ENV "HOSTRANGE_MACHINE"
#define HRR_MACHINE_MAX 255

/* A fingerprint and the text its message points to. */
struct hrr_fingerprint {
    Hostrange__RunFingerprint m;
    char host[256];
    char cpu[256];
    char kernel[256];
    char clock_path[64];
    char clock_order[1024];
    char machine[HRR_MACHINE_MAX + 1];
};

/* Fills fp with this machine: host name, CPU model, CPUs online, kernel
 * and version, and the name $HOSTRANGE_MACHINE gives (none when it is
 * unset, empty or longer than HRR_MACHINE_MAX; hostrangectl refuses such
 * a name before it saves anything); the clock as
 * no client has said anything of it (hrr_fingerprint_clients then fills
 * it in). */
void hrr_fingerprint_probe(struct hrr_fingerprint *fp);

/* Sets fp's clock from the run's n clients (the daemon's stats): their
 * clock path, their distinct clock orders, and their largest step. */
void hrr_fingerprint_clients(struct hrr_fingerprint *fp,
                             Hostrange__ClientStats *const *clients,
                             size_t n);

/*
 * The clock path of a run, written to buf: the one its clients report
 * (fast, ordered, or mixed when they differ); else the one $HOSTRANGE_CLOCK
 * of this process names (the run's own when hostrangectl record started
 * it); else "fast", the default.
 */
void hrr_fingerprint_clock_path(Hostrange__ClientStats *const *clients,
                                size_t n, char *buf, size_t len);

/*
 * The machine of a run, as its series in the history are keyed, written
 * to buf: the name the user gave, else "CPU, N cores; clock PATH" (the
 * clock path is part of it: a series is never fed by two paths).
 */
void hrr_fingerprint_machine(const Hostrange__RunFingerprint *f, char *buf,
                             size_t len);

/*
 * Compares a with b on what makes two runs comparable (see above). Returns the number of fields that differ, and writes
 * them to buf ("cpu_model 'A' vs 'B'; cores 2 vs 4"; truncated to len).
 */
size_t hrr_fingerprint_diff(const Hostrange__RunFingerprint *a,
                            const Hostrange__RunFingerprint *b, char *buf,
                            size_t len);

/* Writes f as one line: "HOST: CPU, N cores, KERNEL; clock PATH (ORDER,
 * step S ns); hostrange VERSION", with "; machine NAME" after it when the
 * user named the machine. */
void hrr_fingerprint_format(const Hostrange__RunFingerprint *f, char *buf,
                            size_t len);

/* The fingerprint the n runs of a merge share (headers h), or NULL when
 * one has none or two differ. */
Hostrange__RunFingerprint *hrr_fingerprint_common(Hostrange__RunHeader *const *h,
                                                  size_t n);

#endif
