/* Record files: writer and reader (see recfile.h). */
#include "config.h"

#include "lib/run/recfile.h"
#include "proto/protocol.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* --- writer --------------------------------------------------------------- */

uint32_t hrr_rec_crc(uint8_t type, uint32_t len, const struct iovec *piece,
                     int n)
{
    uint32_t l = htole32(len);
    uint32_t crc = hrr_crc32c(0, &l, 4);

    crc = hrr_crc32c(crc, &type, 1);
    for (int i = 0; i < n; i++)
        crc = hrr_crc32c(crc, piece[i].iov_base, piece[i].iov_len);
    return crc;
}

void hrr_rec_head_put(uint8_t h[HRR_REC_HEADER], uint8_t type, uint32_t len,
                      uint32_t crc)
{
    len = htole32(len);
    crc = htole32(crc);
    memcpy(h, &len, 4);
    memcpy(h + 4, &crc, 4);
    h[8] = type;
}

void hrr_rec_head_get(const uint8_t h[HRR_REC_HEADER], uint32_t *len,
                      uint32_t *crc, uint8_t *type)
{
    memcpy(len, h, 4);
    memcpy(crc, h + 4, 4);
    *len = le32toh(*len);
    *crc = le32toh(*crc);
    *type = h[8];
}

static void header(uint8_t h[HRR_REC_HEADER], uint8_t type, const void *p,
                   size_t len)
{
    struct iovec piece = { (void *)p, len };

    hrr_rec_head_put(h, type, (uint32_t)len,
                     hrr_rec_crc(type, (uint32_t)len, &piece, 1));
}

int hrr_recfile_open(struct hrr_recfile *f, int dirfd, const char *name,
                     const char *magic)
{
    struct stat st;
    int fd, e;

    memset(f, 0, sizeof *f);
    f->fd = -1;
    fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
                                 O_NOFOLLOW, 0600);
    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) != 0) {
        e = errno;
        close(fd);
        return -e;
    }
    if (st.st_size == 0) {
        ssize_t w = write(fd, magic, 8);
        if (w != 8) {
            e = w < 0 ? errno : ENOSPC;
            if (ftruncate(fd, 0) != 0)
                e = EIO;
            close(fd);
            return -e;
        }
        st.st_size = 8;
    }
    f->fd = fd;
    f->size = (uint64_t)st.st_size;
    return 0;
}

/* Writes iov at the end; on failure cuts the file back. */
static int write_records(struct hrr_recfile *f, struct iovec *iov, int n,
                         size_t total)
{
    int rc;

    if (f->fd < 0)
        return -EBADF;
    rc = hrp_write_all(f->fd, iov, n);
    if (rc != 0) {
        if (ftruncate(f->fd, (off_t)f->size) != 0)
            return -EIO;
        return rc;
    }
    f->size += total;
    return 0;
}

int hrr_recfile_flush(struct hrr_recfile *f)
{
    struct iovec iov = { f->buf, f->len };
    int rc;

    if (f->len == 0)
        return 0;
    rc = write_records(f, &iov, 1, f->len);
    f->len = 0;
    return rc;
}

int hrr_recfile_append(struct hrr_recfile *f, uint8_t type, const void *p,
                       size_t len)
{
    uint8_t h[HRR_REC_HEADER];
    struct iovec iov[2];
    int rc;

    if (len > HRR_REC_MAX)
        return -EFBIG;
    if ((rc = hrr_recfile_flush(f)) != 0)
        return rc;
    header(h, type, p, len);
    iov[0].iov_base = h;
    iov[0].iov_len = sizeof h;
    iov[1].iov_base = (void *)p;
    iov[1].iov_len = len;
    rc = write_records(f, iov, 2, sizeof h + len);
    if (rc == 0)
        f->records++;
    return rc;
}

#define PUT_BUFFER (1u << 20)

int hrr_recfile_put(struct hrr_recfile *f, uint8_t type, const void *p,
                    size_t len)
{
    int rc;

    if (len > HRR_REC_MAX)
        return -EFBIG;
    if (f->len + HRR_REC_HEADER + len > PUT_BUFFER &&
        (rc = hrr_recfile_flush(f)) != 0)
        return rc;
    if (HRR_REC_HEADER + len > PUT_BUFFER)
        return hrr_recfile_append(f, type, p, len);
    if (f->cap < PUT_BUFFER) {
        uint8_t *nb = realloc(f->buf, PUT_BUFFER);
        if (nb == NULL)
            return -ENOMEM;
        f->buf = nb;
        f->cap = PUT_BUFFER;
    }
    header(f->buf + f->len, type, p, len);
    memcpy(f->buf + f->len + HRR_REC_HEADER, p, len);
    f->len += HRR_REC_HEADER + len;
    f->records++;
    return 0;
}

int hrr_recfile_sync(struct hrr_recfile *f)
{
    if (f->fd < 0)
        return -EBADF;
    return fdatasync(f->fd) == 0 ? 0 : -errno;
}

void hrr_recfile_close(struct hrr_recfile *f)
{
    if (f == NULL)
        return;
    if (f->fd >= 0)
        close(f->fd);
    free(f->buf);
    f->fd = -1;
    f->buf = NULL;
    f->len = f->cap = 0;
}

/* --- reader --------------------------------------------------------------- */

/* Reads exactly n bytes; returns n, fewer at the end of the file, or
 * -errno. */
static ssize_t read_full(int fd, void *buf, size_t n)
{
    size_t got = 0;

    while (got < n) {
        ssize_t r = read(fd, (uint8_t *)buf + got, n - got);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

int hrr_recreader_open(struct hrr_recreader *r, int dirfd, const char *name,
                       const char *magic)
{
    char m[8];
    ssize_t n;

    memset(r, 0, sizeof *r);
    r->fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (r->fd < 0)
        return -errno;
    n = read_full(r->fd, m, 8);
    if (n < 0) {
        int e = (int)-n;
        hrr_recreader_close(r);
        return -e;
    }
    if (n != 8 || memcmp(m, magic, 8) != 0) {
        snprintf(r->why, sizeof r->why, "%s",
                 n == 0 ? "empty file" : "not a file of this kind (bad magic)");
        return -EBADMSG;
    }
    r->offset = 8;
    return 0;
}

int hrr_recreader_next(struct hrr_recreader *r, uint8_t *type,
                       const uint8_t **data, size_t *len)
{
    uint8_t h[HRR_REC_HEADER], t;
    uint32_t l, want;
    struct iovec piece;
    struct stat st;
    ssize_t n;

    n = read_full(r->fd, h, sizeof h);
    if (n < 0)
        return (int)n;
    if (n == 0)
        return 0;
    if ((size_t)n < sizeof h) {
        snprintf(r->why, sizeof r->why, "truncated record header");
        return -EBADMSG;
    }
    hrr_rec_head_get(h, &l, &want, &t);
    if (l > HRR_REC_MAX) {
        snprintf(r->why, sizeof r->why, "record length %u is too large",
                 (unsigned)l);
        return -EBADMSG;
    }
    /* A damaged length must not make us allocate what the file does not
     * hold: the record is truncated when the file ends before it does. */
    if (fstat(r->fd, &st) == 0 &&
        (uint64_t)st.st_size < r->offset + sizeof h + l) {
        snprintf(r->why, sizeof r->why,
                 "truncated record (%llu of %u bytes)",
                 (unsigned long long)((uint64_t)st.st_size > r->offset + sizeof h
                                          ? (uint64_t)st.st_size - r->offset -
                                                sizeof h
                                          : 0),
                 (unsigned)l);
        return -EBADMSG;
    }
    if (r->cap < (size_t)l + 1) {
        uint8_t *nb = realloc(r->buf, (size_t)l + 1);
        if (nb == NULL)
            return -ENOMEM;
        r->buf = nb;
        r->cap = (size_t)l + 1;
    }
    n = read_full(r->fd, r->buf, l);
    if (n < 0)
        return (int)n;
    if ((size_t)n < l) {
        snprintf(r->why, sizeof r->why,
                 "truncated record (%zd of %u bytes)", n, (unsigned)l);
        return -EBADMSG;
    }
    piece.iov_base = r->buf;
    piece.iov_len = l;
    if (hrr_rec_crc(t, l, &piece, 1) != want) {
        snprintf(r->why, sizeof r->why, "checksum mismatch");
        return -EBADMSG;
    }
    r->offset += sizeof h + l;
    *type = t;
    *data = r->buf;
    *len = l;
    return 1;
}

void hrr_recreader_close(struct hrr_recreader *r)
{
    if (r == NULL)
        return;
    if (r->fd >= 0)
        close(r->fd);
    free(r->buf);
    r->fd = -1;
    r->buf = NULL;
    r->cap = 0;
}
