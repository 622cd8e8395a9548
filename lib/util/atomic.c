/* Files written whole or not at all (see atomic.h). */
#include "config.h"

#include "lib/util/atomic.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int hru_atomic_open(struct hru_atomic *a, const char *path, int stream)
{
    mode_t mask;
    int n;

    struct stat st;

    a->fd = -1;
    a->f = NULL;
    a->in_place = 0;
    n = snprintf(a->path, sizeof a->path, "%s", path);
    if (n < 0 || (size_t)n >= sizeof a->path)
        return -ENAMETOOLONG;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return -EISDIR;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        a->in_place = 1;
        a->tmp[0] = '\0';
        a->fd = open(path, O_WRONLY | O_CLOEXEC);
        if (a->fd < 0)
            return -errno;
    } else {
        snprintf(a->tmp, sizeof a->tmp, "%s.tmp.XXXXXX", path);
        a->fd = mkstemp(a->tmp);
        if (a->fd < 0)
            return -errno;
        /* mkstemp makes the file 0600; the target gets the usual mode. */
        mask = umask(0);
        umask(mask);
        if (fchmod(a->fd, 0666 & ~mask) != 0)
            goto fail;
    }
    if (stream) {
        a->f = fdopen(a->fd, "w");
        if (a->f == NULL)
            goto fail;
    }
    return 0;
fail:
    n = -errno;
    hru_atomic_abort(a);
    return n;
}

int hru_atomic_commit(struct hru_atomic *a)
{
    int rc = 0;

    if (a->f != NULL && fflush(a->f) != 0)
        rc = -errno;
    /* A device or a pipe written in place has nothing to sync (fsync
     * refuses it with EINVAL). */
    if (rc == 0 && !a->in_place && fsync(a->fd) != 0)
        rc = -errno;
    if (a->f != NULL) {
        if (fclose(a->f) != 0 && rc == 0)
            rc = -errno;
    } else if (close(a->fd) != 0 && rc == 0) {
        rc = -errno;
    }
    a->f = NULL;
    a->fd = -1;
    if (a->in_place)
        return rc;
    if (rc == 0 && rename(a->tmp, a->path) != 0)
        rc = -errno;
    if (rc != 0)
        unlink(a->tmp);
    return rc;
}

void hru_atomic_abort(struct hru_atomic *a)
{
    if (a->fd < 0)
        return;
    if (a->f != NULL)
        fclose(a->f);
    else
        close(a->fd);
    a->f = NULL;
    a->fd = -1;
    if (!a->in_place)
        unlink(a->tmp);
}
