/* Record files: CRC-32C, writer and reader (see journal.h). */
#include "config.h"

#include "daemon/journal.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* --- CRC-32C ------------------------------------------------------------ */

static uint32_t table[8][256];
static int table_ready;

static void table_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1u)));
        table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++) {
        for (int t = 1; t < 8; t++)
            table[t][i] = (table[t - 1][i] >> 8) ^
                          table[0][table[t - 1][i] & 0xff];
    }
    table_ready = 1;
}

/* Slicing by eight: eight table look-ups per eight bytes. */
static uint32_t crc_sw(uint32_t crc, const uint8_t *p, size_t n)
{
    if (!table_ready)
        table_init();
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        w = le64toh(w) ^ crc;
        crc = table[7][w & 0xff] ^ table[6][(w >> 8) & 0xff] ^
              table[5][(w >> 16) & 0xff] ^ table[4][(w >> 24) & 0xff] ^
              table[3][(w >> 32) & 0xff] ^ table[2][(w >> 40) & 0xff] ^
              table[1][(w >> 48) & 0xff] ^ table[0][w >> 56];
        p += 8;
        n -= 8;
    }
    while (n-- > 0)
        crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
    return crc;
}

/*
 * Combining CRCs: the operator that appends `len` zero bytes to a CRC
 * register, as four byte-wise tables (GF(2) matrices squared up from the
 * one-bit operator, after Mark Adler's crc32c.c). Three streams of LONG
 * (or SHORT) bytes are computed side by side, then the first two are
 * shifted over the ones after them and combined.
 */
#define LONG 8192u
#define SHORT 256u

static uint32_t zeros_long[4][256], zeros_short[4][256];

static uint32_t gf2_times(const uint32_t *mat, uint32_t vec)
{
    uint32_t sum = 0;

    for (; vec != 0; vec >>= 1, mat++) {
        if (vec & 1)
            sum ^= *mat;
    }
    return sum;
}

static void gf2_square(uint32_t *square, const uint32_t *mat)
{
    for (int n = 0; n < 32; n++)
        square[n] = gf2_times(mat, mat[n]);
}

/* The operator for len zero bytes (len a power of two). */
static void zeros_op(uint32_t *even, size_t len)
{
    uint32_t odd[32], row = 1;

    odd[0] = 0x82f63b78u; /* one zero bit */
    for (int n = 1; n < 32; n++, row <<= 1)
        odd[n] = row;
    gf2_square(even, odd); /* two bits */
    gf2_square(odd, even); /* four bits */
    for (;;) {
        gf2_square(even, odd); /* one byte, then four, ... */
        len >>= 1;
        if (len == 0)
            return;
        gf2_square(odd, even);
        len >>= 1;
        if (len == 0)
            break;
    }
    memcpy(even, odd, sizeof odd);
}

static void zeros_table(uint32_t zeros[4][256], size_t len)
{
    uint32_t op[32];

    zeros_op(op, len);
    for (uint32_t n = 0; n < 256; n++) {
        for (int b = 0; b < 4; b++)
            zeros[b][n] = gf2_times(op, n << (8 * b));
    }
}

static uint32_t shift(uint32_t zeros[4][256], uint32_t crc)
{
    return zeros[0][crc & 0xff] ^ zeros[1][(crc >> 8) & 0xff] ^
           zeros[2][(crc >> 16) & 0xff] ^ zeros[3][crc >> 24];
}

#if defined(__x86_64__)
#include <nmmintrin.h>

/* The SSE 4.2 instruction, on three streams at once while the data lasts
 * (the instruction's latency is three times its throughput). */
__attribute__((target("sse4.2"))) static uint32_t
crc_hw(uint32_t crc, const uint8_t *p, size_t n)
{
    static const size_t blocks[2] = { LONG, SHORT };
    uint64_t c0 = crc;

    for (int k = 0; k < 2; k++) {
        size_t block = blocks[k];
        uint32_t (*zeros)[256] = k == 0 ? zeros_long : zeros_short;

        while (n >= 3 * block) {
            uint64_t c1 = 0, c2 = 0, w0, w1, w2;
            const uint8_t *end = p + block;

            do {
                memcpy(&w0, p, 8);
                memcpy(&w1, p + block, 8);
                memcpy(&w2, p + 2 * block, 8);
                c0 = _mm_crc32_u64(c0, w0);
                c1 = _mm_crc32_u64(c1, w1);
                c2 = _mm_crc32_u64(c2, w2);
                p += 8;
            } while (p < end);
            c0 = shift(zeros, (uint32_t)c0) ^ (uint32_t)c1;
            c0 = shift(zeros, (uint32_t)c0) ^ (uint32_t)c2;
            p += 2 * block;
            n -= 3 * block;
        }
    }
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c0 = _mm_crc32_u64(c0, w);
        p += 8;
        n -= 8;
    }
    crc = (uint32_t)c0;
    while (n-- > 0)
        crc = _mm_crc32_u8(crc, *p++);
    return crc;
}

static int have_hw(void)
{
    if (!__builtin_cpu_supports("sse4.2"))
        return 0;
    zeros_table(zeros_long, LONG);
    zeros_table(zeros_short, SHORT);
    return 1;
}
#else
static uint32_t crc_hw(uint32_t crc, const uint8_t *p, size_t n)
{
    (void)zeros_long;
    (void)zeros_short;
    (void)shift;
    (void)zeros_table;
    return crc_sw(crc, p, n);
}

static int have_hw(void)
{
    return 0;
}
#endif

uint32_t hrd_crc32c(uint32_t crc, const void *buf, size_t len)
{
    static int hw = -1;

    if (hw < 0)
        hw = have_hw();
    crc = ~crc;
    crc = hw ? crc_hw(crc, buf, len) : crc_sw(crc, buf, len);
    return ~crc;
}

/* --- writer --------------------------------------------------------------- */

static void header(uint8_t h[HRD_REC_HEADER], uint8_t type, const void *p,
                   size_t len)
{
    uint32_t l = htole32((uint32_t)len), crc;

    memcpy(h, &l, 4);
    h[8] = type;
    crc = hrd_crc32c(0, h, 4);
    crc = hrd_crc32c(crc, &type, 1);
    crc = htole32(hrd_crc32c(crc, p, len));
    memcpy(h + 4, &crc, 4);
}

int hrd_recfile_open(struct hrd_recfile *f, int dirfd, const char *name,
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

/* Writes all of iov; returns 0 or -errno (ENOSPC for a short write). */
static int write_all(int fd, struct iovec *iov, int n)
{
    while (n > 0) {
        ssize_t w = writev(fd, iov, n);

        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (w == 0)
            return -ENOSPC;
        while (n > 0 && (size_t)w >= iov->iov_len) {
            w -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (uint8_t *)iov->iov_base + w;
            iov->iov_len -= (size_t)w;
        }
    }
    return 0;
}

/* Writes iov at the end; on failure cuts the file back. */
static int write_records(struct hrd_recfile *f, struct iovec *iov, int n,
                         size_t total)
{
    int rc;

    if (f->fd < 0)
        return -EBADF;
    rc = write_all(f->fd, iov, n);
    if (rc != 0) {
        if (ftruncate(f->fd, (off_t)f->size) != 0)
            return -EIO;
        return rc;
    }
    f->size += total;
    return 0;
}

int hrd_recfile_flush(struct hrd_recfile *f)
{
    struct iovec iov = { f->buf, f->len };
    int rc;

    if (f->len == 0)
        return 0;
    rc = write_records(f, &iov, 1, f->len);
    f->len = 0;
    return rc;
}

int hrd_recfile_append(struct hrd_recfile *f, uint8_t type, const void *p,
                       size_t len)
{
    uint8_t h[HRD_REC_HEADER];
    struct iovec iov[2];
    int rc;

    if (len > HRD_REC_MAX)
        return -EFBIG;
    if ((rc = hrd_recfile_flush(f)) != 0)
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

int hrd_recfile_put(struct hrd_recfile *f, uint8_t type, const void *p,
                    size_t len)
{
    int rc;

    if (len > HRD_REC_MAX)
        return -EFBIG;
    if (f->len + HRD_REC_HEADER + len > PUT_BUFFER &&
        (rc = hrd_recfile_flush(f)) != 0)
        return rc;
    if (HRD_REC_HEADER + len > PUT_BUFFER)
        return hrd_recfile_append(f, type, p, len);
    if (f->cap < PUT_BUFFER) {
        uint8_t *nb = realloc(f->buf, PUT_BUFFER);
        if (nb == NULL)
            return -ENOMEM;
        f->buf = nb;
        f->cap = PUT_BUFFER;
    }
    header(f->buf + f->len, type, p, len);
    memcpy(f->buf + f->len + HRD_REC_HEADER, p, len);
    f->len += HRD_REC_HEADER + len;
    f->records++;
    return 0;
}

int hrd_recfile_sync(struct hrd_recfile *f)
{
    if (f->fd < 0)
        return -EBADF;
    return fdatasync(f->fd) == 0 ? 0 : -errno;
}

void hrd_recfile_close(struct hrd_recfile *f)
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

int hrd_recreader_open(struct hrd_recreader *r, int dirfd, const char *name,
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
        hrd_recreader_close(r);
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

int hrd_recreader_next(struct hrd_recreader *r, uint8_t *type,
                       const uint8_t **data, size_t *len)
{
    uint8_t h[HRD_REC_HEADER];
    uint32_t l, crc, want;
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
    memcpy(&l, h, 4);
    memcpy(&want, h + 4, 4);
    l = le32toh(l);
    want = le32toh(want);
    if (l > HRD_REC_MAX) {
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
    crc = hrd_crc32c(0, h, 4);
    crc = hrd_crc32c(crc, &h[8], 1);
    crc = hrd_crc32c(crc, r->buf, l);
    if (crc != want) {
        snprintf(r->why, sizeof r->why, "checksum mismatch");
        return -EBADMSG;
    }
    r->offset += sizeof h + l;
    *type = h[8];
    *data = r->buf;
    *len = l;
    return 1;
}

void hrd_recreader_close(struct hrd_recreader *r)
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
