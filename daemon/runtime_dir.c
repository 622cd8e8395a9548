/* The runtime directory and its lock (see runtime_dir.h). */
#include "config.h"

#include "daemon/runtime_dir.h"
#include "proto/protocol.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static void unlink_in(const char *dir, const char *name)
{
    char p[4200];

    snprintf(p, sizeof p, "%s/%s", dir, name);
    unlink(p);
}

/* Gives the directory to the group with mode 0750. */
static int share_dir(const char *dir, const struct stat *st, gid_t gid,
                     char *err, size_t errlen)
{
    if (st->st_gid != gid && chown(dir, (uid_t)-1, gid) != 0) {
        int e = errno;
        snprintf(err, errlen, "cannot give runtime directory %s to group %u: "
                 "%s", dir, (unsigned)gid, strerror(e));
        return -EPERM;
    }
    if ((st->st_mode & 07777) != 0750 && chmod(dir, 0750) != 0) {
        int e = errno;
        snprintf(err, errlen, "cannot make runtime directory %s mode 0750: "
                 "%s", dir, strerror(e));
        return -EPERM;
    }
    return 0;
}

int hrd_runtime_dir_share(struct hrd_rundir *rd, const char *name, char *err,
                     size_t errlen)
{
    struct stat st;
    char p[4200];

    if (rd->gid == (gid_t)-1)
        return 0;
    snprintf(p, sizeof p, "%s/%s", rd->path, name);
    /* chown only when needed: a service's system call filter may forbid
     * it, and a socket made by a process of the group has it already. */
    if (lstat(p, &st) != 0 ||
        (st.st_gid != rd->gid && chown(p, (uid_t)-1, rd->gid) != 0) ||
        chmod(p, 0660) != 0) {
        int e = errno;
        snprintf(err, errlen, "cannot give %s to group %u: %s", p,
                 (unsigned)rd->gid, strerror(e));
        return -e;
    }
    return 0;
}

int hrd_runtime_dir_open(struct hrd_rundir *rd, const char *dir, gid_t gid,
                    char *err, size_t errlen)
{
    struct stat st;
    char lock[4200], pid[32];
    int fd, n;

    rd->lock_fd = -1;
    rd->gid = gid;
    if (strlen(dir) >= sizeof rd->path - 32) {
        snprintf(err, errlen, "runtime directory name too long: %s", dir);
        return -ENAMETOOLONG;
    }
    snprintf(rd->path, sizeof rd->path, "%s", dir);
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        int e = errno;
        snprintf(err, errlen, "cannot create runtime directory %s: %s", dir,
                 strerror(e));
        return -e;
    }
    if (lstat(dir, &st) != 0) {
        int e = errno;
        snprintf(err, errlen, "cannot stat runtime directory %s: %s", dir,
                 strerror(e));
        return -e;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "runtime directory %s is not a directory", dir);
        return -ENOTDIR;
    }
    if (st.st_uid != geteuid()) {
        snprintf(err, errlen,
                 "runtime directory %s is owned by uid %u, not by this user "
                 "(uid %u); refusing to serve it",
                 dir, (unsigned)st.st_uid, (unsigned)geteuid());
        return -EPERM;
    }
    if ((st.st_mode & 0022) != 0) {
        snprintf(err, errlen,
                 "runtime directory %s has mode %04o: it must not be group- "
                 "or world-writable; refusing to serve it",
                 dir, (unsigned)(st.st_mode & 07777));
        return -EPERM;
    }
    snprintf(lock, sizeof lock, "%s/%s", dir, HRP_LOCK_NAME);
    fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "cannot open %s: %s", lock, strerror(e));
        return -e;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        n = (int)read(fd, pid, sizeof pid - 1);
        pid[n > 0 ? n : 0] = '\0';
        pid[strcspn(pid, "\n")] = '\0';
        close(fd);
        if (e == EWOULDBLOCK) {
            snprintf(err, errlen,
                     "another hostranged (pid %s) already serves %s",
                     pid[0] ? pid : "?", dir);
            return -EBUSY;
        }
        snprintf(err, errlen, "cannot lock %s: %s", lock, strerror(e));
        return -e;
    }
    n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
        int e = errno;
        snprintf(err, errlen, "cannot write %s: %s", lock, strerror(e));
        close(fd);
        return -e;
    }
    if (gid != (gid_t)-1 && share_dir(dir, &st, gid, err, errlen) != 0) {
        close(fd);
        return -EPERM;
    }
    rd->lock_fd = fd;
    /* Sockets left by a daemon that died are stale: we hold the lock. */
    unlink_in(dir, HRP_INGEST_NAME);
    unlink_in(dir, HRP_CONTROL_NAME);
    return 0;
}

void hrd_runtime_dir_close(struct hrd_rundir *rd)
{
    if (rd == NULL || rd->lock_fd < 0)
        return;
    unlink_in(rd->path, HRP_INGEST_NAME);
    unlink_in(rd->path, HRP_CONTROL_NAME);
    unlink_in(rd->path, HRP_LOCK_NAME);
    close(rd->lock_fd);
    rd->lock_fd = -1;
}
