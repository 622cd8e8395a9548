/*
 * The daemon's runtime directory: created 0700 when missing, refused when
 * owned by another user or writable by group or others, and locked (flock on
 * hostranged.pid) so that a second daemon on the same directory is refused.
 */
#ifndef HOSTRANGE_RUNDIR_H
#define HOSTRANGE_RUNDIR_H

#include <stddef.h>

struct hrd_rundir {
    char path[4096];
    int lock_fd;
};

/*
 * Prepares and locks dir. On failure returns a negative errno and writes a
 * one-line reason to err: -EPERM (owner or mode), -EBUSY (another daemon,
 * whose pid is named), or the errno of the failing call.
 */
int hrd_rundir_open(struct hrd_rundir *rd, const char *dir, char *err,
                    size_t errlen);

/* Removes the sockets and the lock file, then releases the lock. */
void hrd_rundir_close(struct hrd_rundir *rd);

#endif
