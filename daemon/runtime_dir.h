/*
 * The daemon's runtime directory: created 0700 when missing, refused when
 * owned by another user or writable by group or others, and locked (flock on
 * hostranged.pid) so that a second daemon on the same directory is refused.
 *
 * With a group (hostranged --group), the directory belongs to that group
 * and has mode 0750, and the sockets mode 0660, so the members of the group
 * (and no one else) may connect.
 */
#ifndef HOSTRANGE_RUNTIME_DIR_H
#define HOSTRANGE_RUNTIME_DIR_H

#include <stddef.h>

#include <sys/types.h>

struct hrd_rundir {
    char path[4096];
    int lock_fd;
    gid_t gid;       /* the group that may connect, or (gid_t)-1 */
};

/*
 * Prepares and locks dir; gid is the group that may connect, or (gid_t)-1
 * for none. On failure returns a negative errno and writes a one-line
 * reason to err: -EPERM (owner or mode, or the group cannot be set),
 * -EBUSY (another daemon, whose pid is named), or the errno of the failing
 * call.
 */
int hrd_runtime_dir_open(struct hrd_rundir *rd, const char *dir, gid_t gid,
                    char *err, size_t errlen);

/* Gives socket `name` in the directory to the group (mode 0660), when
 * there is one. Returns 0 or a negative errno with a reason in err. */
int hrd_runtime_dir_share(struct hrd_rundir *rd, const char *name, char *err,
                     size_t errlen);

/* Removes the sockets and the lock file, then releases the lock. */
void hrd_runtime_dir_close(struct hrd_rundir *rd);

#endif
