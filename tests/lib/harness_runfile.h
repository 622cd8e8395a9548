/*
 * Run files made up for tests and benchmarks, written as hostrangectl save
 * writes them: each key an aggregation's key fed its values
 * (hra_add), coded by hrr_runkey_from and written, then dropped, so
 * that a file of any size takes the memory of one key. Keys have operator
 * "op" and backend "cpu"; node ids and range names are ranked as first
 * seen. Errors print a line and exit 1.
 */
#ifndef HOSTRANGE_TESTS_HARNESS_RUNFILE_H
#define HOSTRANGE_TESTS_HARNESS_RUNFILE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/agg/agg_impl.h"
#include "lib/run/run.h"

struct harness_runfile {
    struct hra_agg a;
    struct hrr_writer w;
    int format;
};

/* Starts a run file of run format `format` at path (written when
 * committed). */
void harness_runfile_create(struct harness_runfile *f, const char *path,
                            int format);

/* The same with header h (its format and version set here), as a run
 * saved on a machine: its id, fingerprint and meta. */
void harness_runfile_create_header(struct harness_runfile *f,
                                   const char *path, int format,
                                   Hostrange__RunHeader *h);

/* A new, empty key of node id `node`, phase and range name `range`. */
struct hra_key *harness_runfile_key(struct harness_runfile *f,
                                    const char *node, unsigned phase,
                                    const char *range);

/* Adds a range event (inclusive and self time) to key k. */
void harness_runfile_add(struct harness_runfile *f, struct hra_key *k,
                         uint64_t incl_ns, uint64_t self_ns);

/* Adds n range events to key k, each of an inclusive time drawn from
 * [lo, lo + spread) and a self time from its upper half, from the
 * xorshift generator whose state is *rng (not 0). */
void harness_runfile_add_random(struct harness_runfile *f, struct hra_key *k,
                                unsigned n, uint64_t lo, uint64_t spread,
                                uint64_t *rng);

/* Adds a range event to key k under the calling context made of the
 * `depth` range names in names (outermost first; the last is k's range),
 * which may be as deep as HRA_MAX_DEPTH_LIMIT. */
void harness_runfile_add_path(struct harness_runfile *f, struct hra_key *k,
                              const char *const *names, uint32_t depth,
                              uint64_t incl_ns, uint64_t self_ns);

/* Writes key k and drops it. */
void harness_runfile_put(struct harness_runfile *f, struct hra_key *k);

/* Writes the end of the file and renames it into place. */
void harness_runfile_commit(struct harness_runfile *f);

/* Reads every record of the run file at path, each checked and unpacked
 * (as diff and dump --from read them): its keys, the events of all of
 * them (range events and records) and how many are exact. */
void harness_runfile_count(const char *path, size_t *keys, uint64_t *events,
                           size_t *exact);

#endif
