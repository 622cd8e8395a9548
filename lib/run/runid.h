/*
 * A run's identity: the id a run file carries (RunHeader.id) and the ids
 * of the runs a merged file holds (RunHeader.part_ids), so that a run is
 * counted once: merge refuses an input it holds already, and the history
 * stores a run once whatever its file's name.
 *
 * An id is HRR_RUNID_LEN characters: 32 hexadecimal digits drawn at random
 * when a run is saved; for a merge, the hash of its sorted part ids (the
 * same parts give the same id); for a file written before ids were kept,
 * "c" and 31 hexadecimal digits of the hash of the file's bytes (a 128-bit
 * FNV-1a), which no random id starts with; for a run imported from another
 * tool's results, the same of the bytes that make it. A run's parts are
 * its part_ids when it has them, else the run itself.
 */
#ifndef HOSTRANGE_RUNID_H
#define HOSTRANGE_RUNID_H

#include <stddef.h>

#include "proto/hostrange.pb-c.h"

#define HRR_RUNID_LEN 32
/* The first character of an id made from a file's content. */
#define HRR_RUNID_CONTENT 'c'

/* A new random id into id[0..HRR_RUNID_LEN], NUL-terminated. Returns 0, or
 * a negative errno when the system gives no random bytes. */
int hrr_runid_new(char *id);

/* The id of a merge of the n parts ids[0..n) (sorted here), into id. */
void hrr_runid_of_parts(char **ids, size_t n, char *id);

/* The id made from the content p[0..n) (a run imported from another
 * tool's file: lib/history/import.h), into id. */
void hrr_runid_of_bytes(const void *p, size_t n, char *id);

/*
 * The id of run file `path` whose header is h: h->id, or the hash of the
 * file's bytes when it has none (read here). Returns 0, or a negative
 * errno with a one-line reason (starting with the path) in err.
 */
int hrr_runid_of_file(const char *path, const Hostrange__RunHeader *h,
                      char *id, char *err, size_t errlen);

/* Whether s has the form of an id (either kind). */
int hrr_runid_valid(const char *s);

#endif
