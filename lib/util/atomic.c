/* Files written whole or not at all (see atomic.h). */
#include "config.h"

#include "lib/util/atomic.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int hrd_atomic_open(struct hrd_atomic *a, const char *path, int stream)
{
    mode_t mask;
    int n;

    a->fd = -1;
    a->f = NULL;
    n = snprintf(a->path, sizeof a->path, "%s", path);
    if (n < 0 || (size_t)n >= sizeof a->path)
        return -ENAMETOOLONG;
    snprintf(a->tmp, sizeof a->tmp, "%s.tmp.XXXXXX", path);
    a->fd = mkstemp(a->tmp);
    if (a->fd < 0)
        return -errno;
    /* mkstemp makes the file 0600; the target gets the usual mode. */
    mask = umask(0);
    umask(mask);
    if (fchmod(a->fd, 0666 & ~mask) != 0)
        goto fail;
    if (stream) {
        a->f = fdopen(a->fd, "w");
        if (a->f == NULL)
            goto fail;
    }
    return 0;
fail:
    n = -errno;
    hrd_atomic_abort(a);
    return n;
}

int hrd_atomic_commit(struct hrd_atomic *a)
{
    int rc = 0;

    if (a->f != NULL && fflush(a->f) != 0)
        rc = -errno;
    if (rc == 0 && fsync(a->fd) != 0)
        rc = -errno;
    if (a->f != NULL) {
        if (fclose(a->f) != 0 && rc == 0)
            rc = -errno;
    } else if (close(a->fd) != 0 && rc == 0) {
        rc = -errno;
    }
    a->f = NULL;
    a->fd = -1;
    if (rc == 0 && rename(a->tmp, a->path) != 0)
        rc = -errno;
    if (rc != 0)
        unlink(a->tmp);
    return rc;
}

void hrd_atomic_abort(struct hrd_atomic *a)
{
    if (a->fd < 0)
        return;
    if (a->f != NULL)
        fclose(a->f);
    else
        close(a->fd);
    a->f = NULL;
    a->fd = -1;
    unlink(a->tmp);
}
