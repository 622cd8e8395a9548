/*
 * pprof profiles (dump --format pprof): a calling-context tree (flame.h)
 * written as the `Profile` message of pprof's profile.proto, gzipped, as
 * `go tool pprof`, Perfetto's UI and speedscope read it. Pure logic: the
 * message is built in memory and written, compressed, to a FILE * it is
 * given.
 *
 * The profile. Each range name is one function, and one location (whose
 * one line names that function) stands for it; a mapping (id 1, with
 * has_functions set) holds every location, so that readers do not try to
 * symbolize addresses. Each path of the tree that has a row becomes one
 * sample: its locations leaf first (the innermost range, then its caller,
 * up to the outermost), and two values, sample types `calls/count` (the
 * path's calls) and `self/nanoseconds` (the exact sum of its self times,
 * the value folded stacks carry by default; it is the default sample
 * type). pprof's flat value of a function is then its self time, and its
 * cumulative value its inclusive time. Every sample carries four string
 * labels: `nodeid`, `operator`, `backend` and `phase` (`cold` or `warm`);
 * an empty label value is left out. So the totals of a profile are those
 * of the folded stacks of the same tree, path for path.
 *
 * String table entry 0 is "", as the format requires; every other string
 * is stored once. Numbers of the format (field numbers, wire types) are
 * named in pprof.c.
 */
#ifndef HOSTRANGE_PPROF_H
#define HOSTRANGE_PPROF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/view/flame.h"

/* The label keys of a sample. */
#define HRV_PPROF_LABEL_NODE "nodeid"
#define HRV_PPROF_LABEL_OPERATOR "operator"
#define HRV_PPROF_LABEL_BACKEND "backend"
#define HRV_PPROF_LABEL_PHASE "phase"

/*
 * Encodes t as an uncompressed Profile message, with `comment` (or none
 * when NULL) as its one comment. On success returns 0 with the bytes in
 * *out (caller frees) and their number in *len; returns -ENOMEM otherwise.
 */
int hrv_pprof_encode(const struct hrv_ptree *t, const char *comment,
                     uint8_t **out, size_t *len);

/* Writes t to f as a gzipped Profile (hrv_pprof_encode, then deflate with
 * a gzip header). Returns 0, -ENOMEM, or -EIO when f cannot be written. */
int hrv_pprof_write(FILE *f, const struct hrv_ptree *t, const char *comment);

#endif
