/*
 * Files written whole or not at all: the data goes to a temporary file
 * beside the target (PATH.tmp.XXXXXX, with the mode a new file gets under
 * the umask), which is flushed, synced and renamed over the target only
 * when the writer commits. A writer that aborts, or a process that dies
 * first, leaves the target as it was. Reports, pictures and run files are
 * written this way.
 *
 * A target that exists and is not a regular file (/dev/null, a pipe,
 * /dev/stdout) is written in place instead: renaming over it would replace
 * a device node with a file. A directory is refused (-EISDIR).
 */
#ifndef HOSTRANGE_UTIL_ATOMIC_H
#define HOSTRANGE_UTIL_ATOMIC_H

#include <limits.h>
#include <stdio.h>

struct hru_atomic {
    char path[PATH_MAX];
    char tmp[PATH_MAX + 16];
    int fd;      /* the temporary file (or the target), or -1 */
    FILE *f;     /* a stream on fd, when opened with a stream */
    int in_place; /* the target itself: not a regular file */
};

/*
 * Creates the temporary file of target `path`; with `stream`, also a stdio
 * stream on it (a->f). Returns 0, or a negative errno (a is then closed).
 */
int hru_atomic_open(struct hru_atomic *a, const char *path, int stream);

/* Flushes, syncs and closes the file and renames it over the target.
 * Returns 0 or a negative errno (the temporary file is then removed). */
int hru_atomic_commit(struct hru_atomic *a);

/* Closes and removes the temporary file; the target stays as it was. Does
 * nothing on a writer that is closed already. */
void hru_atomic_abort(struct hru_atomic *a);

#endif
