/* Run files (see run.h). */
#include "config.h"

#include "lib/run/run.h"
#include "lib/agg/agg_impl.h"
#include "lib/run/recfile.h"
#include "proto/protocol.h"
#include "proto/unpack.h"

#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* No record of a run file is larger than this. */
#define RUN_REC_MAX ((size_t)1 << 30)

/* --- writing -------------------------------------------------------------- */

/* The bytes gathered before they are written. A write to a file costs
 * far more than its system call besides the copy, so records are copied
 * into this buffer and written in large pieces. A record that does not fit
 * in it is written at once, with what is gathered before it. */
#define OUT_CAP ((size_t)1 << 20)
/* The most pieces of one record. */
#define OUT_PIECES 5

static int put_record(struct hrr_writer *w, uint8_t type, const void *p,
                      size_t len, char *err, size_t errlen);
static int room(struct hrr_writer *w, size_t len, char *err,
                size_t errlen);

/* Writes the n pieces of iov, the first of them what is gathered, which is
 * then empty. Returns 0, or a negative errno with err set. */
static int out_write(struct hrr_writer *w, struct iovec *iov, int n,
                     char *err, size_t errlen)
{
    int rc = hrp_write_all(w->file.fd, iov, n);

    if (rc != 0) {
        snprintf(err, errlen, "%s: cannot write: %s", w->file.path,
                 strerror(-rc));
        return rc;
    }
    w->out_len = 0;
    return 0;
}

/* Writes what is gathered. Returns 0, or a negative errno with err set. */
static int out_flush(struct hrr_writer *w, char *err, size_t errlen)
{
    struct iovec iov = { w->out, w->out_len };

    return w->out_len != 0 ? out_write(w, &iov, 1, err, errlen) : 0;
}

/* Puts the n pieces of piece (total bytes in all) in the file after what
 * went before: gathered, or written at once with what is gathered when
 * they do not fit in the buffer. Returns 0, or a negative errno with err
 * set. */
static int out_put(struct hrr_writer *w, const struct iovec *piece,
                   int n, size_t total, char *err, size_t errlen)
{
    struct iovec iov[OUT_PIECES + 1];
    int rc;

    if (total <= OUT_CAP) {
        if (w->out_len + total > OUT_CAP &&
            (rc = out_flush(w, err, errlen)) != 0)
            return rc;
        for (int i = 0; i < n; i++) {
            if (piece[i].iov_len != 0)
                memcpy(w->out + w->out_len, piece[i].iov_base,
                       piece[i].iov_len);
            w->out_len += piece[i].iov_len;
        }
        return 0;
    }
    iov[0].iov_base = w->out;
    iov[0].iov_len = w->out_len;
    memcpy(iov + 1, piece, (size_t)n * sizeof *piece);
    return out_write(w, iov, n + 1, err, errlen);
}

int hrr_create(struct hrr_writer *w, const char *path,
                   const Hostrange__RunHeader *h, char *err, size_t errlen)
{
    size_t len;
    int rc;

    memset(w, 0, sizeof *w);
    w->file.fd = -1;
    /* Its pages are made at once: one fault each would cost more. */
    w->out = mmap(NULL, OUT_CAP, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (w->out == MAP_FAILED) {
        w->out = NULL;
        snprintf(err, errlen, "%s: out of memory", path);
        rc = -ENOMEM;
        goto fail;
    }
    rc = hru_atomic_open(&w->file, path, 0);
    if (rc != 0) {
        snprintf(err, errlen, "%s: cannot create a temporary file next to "
                 "it: %s", path, strerror(-rc));
        goto fail;
    }
    memcpy(w->out, HRR_MAGIC, 8);
    w->out_len = 8;
    w->bytes = 8;
    len = hostrange__run_header__get_packed_size(h);
    if ((rc = room(w, len + 1, err, errlen)) != 0)
        goto fail;
    hostrange__run_header__pack(h, w->buf);
    if ((rc = put_record(w, 'H', w->buf, len, err, errlen)) != 0)
        goto fail;
    return 0;
fail:
    hrr_abort(w);
    return rc;
}

int hrr_put_state(struct hrr_writer *w, const Hostrange__RunState *s,
                      char *err, size_t errlen)
{
    size_t len = hostrange__run_state__get_packed_size(s);
    int rc = room(w, len + 1, err, errlen);

    if (rc != 0)
        return rc;
    hostrange__run_state__pack(s, w->buf);
    return put_record(w, HRR_REC_STATE, w->buf, len, err, errlen);
}

/* The framing of a record of `type` whose payload is the n pieces at
 * piece (len bytes in all) into hd. Returns 0, or -EMSGSIZE with err set
 * when the record is too large. */
static int record_head_make(const struct hrr_writer *w, uint8_t *hd,
                            uint8_t type, const struct iovec *piece, int n,
                            size_t len, char *err, size_t errlen)
{
    if (len > RUN_REC_MAX) {
        snprintf(err, errlen, "%s: a record of %zu bytes is too large",
                 w->file.path, len);
        return -EMSGSIZE;
    }
    hrr_rec_head_put(hd, type, (uint32_t)len,
                     hrr_rec_crc(type, (uint32_t)len, piece, n));
    return 0;
}

/* Writes one record of `type` whose payload is the n pieces at piece
 * (len bytes in all; at most OUT_PIECES - 1 pieces). Returns 0, or a
 * negative errno with err set. */
static int put_pieces(struct hrr_writer *w, uint8_t type,
                      const struct iovec *piece, int n, size_t len,
                      char *err, size_t errlen)
{
    struct iovec all[OUT_PIECES];
    uint8_t hd[HRR_REC_HEADER];
    int rc = record_head_make(w, hd, type, piece, n, len, err, errlen);

    if (rc != 0)
        return rc;
    all[0].iov_base = hd;
    all[0].iov_len = sizeof hd;
    memcpy(all + 1, piece, (size_t)n * sizeof *piece);
    rc = out_put(w, all, n + 1, sizeof hd + len, err, errlen);
    if (rc != 0)
        return rc;
    w->bytes += sizeof hd + len;
    return 0;
}

/* Writes one record of `type` holding len bytes at p. */
static int put_record(struct hrr_writer *w, uint8_t type, const void *p,
                      size_t len, char *err, size_t errlen)
{
    struct iovec piece = { (void *)p, len };

    return put_pieces(w, type, &piece, 1, len, err, errlen);
}

/* Makes the writer's buffer hold len bytes. Returns 0, or -ENOMEM with err
 * set. */
static int room(struct hrr_writer *w, size_t len, char *err,
                size_t errlen)
{
    uint8_t *p;

    if (len <= w->cap)
        return 0;
    p = realloc(w->buf, len);
    if (p == NULL) {
        snprintf(err, errlen, "%s: out of memory", w->file.path);
        return -ENOMEM;
    }
    w->buf = p;
    w->cap = len;
    return 0;
}

int hrr_put_key(struct hrr_writer *w, const Hostrange__RunKey *k,
                    char *err, size_t errlen)
{
    size_t len = hostrange__run_key__get_packed_size(k);
    int rc = room(w, len + 1, err, errlen);

    if (rc != 0)
        return rc;
    hostrange__run_key__pack(k, w->buf);
    rc = put_record(w, 'K', w->buf, len, err, errlen);
    if (rc != 0)
        return rc;
    w->keys++;
    return 0;
}

int hrr_put_packed(struct hrr_writer *w, const void *p, size_t len,
                       char *err, size_t errlen)
{
    int rc = put_record(w, 'K', p, len, err, errlen);

    if (rc != 0)
        return rc;
    w->keys++;
    return 0;
}

int hrr_put_packed_keys(struct hrr_writer *w, const struct iovec *key,
                            size_t n, char *err, size_t errlen)
{
    /* Keys a write takes: two pieces each, and what is gathered. */
    enum { BATCH = 256 };
    uint8_t hd[BATCH][HRR_REC_HEADER];
    struct iovec iov[2 * BATCH + 1];

    for (size_t i = 0; i < n; i += BATCH) {
        size_t m = n - i < BATCH ? n - i : BATCH, bytes = 0;
        int k = 0, rc;

        iov[k].iov_base = w->out;
        iov[k++].iov_len = w->out_len;
        for (size_t j = 0; j < m; j++) {
            rc = record_head_make(w, hd[j], 'K', &key[i + j], 1,
                                  key[i + j].iov_len, err, errlen);
            if (rc != 0)
                return rc;
            iov[k].iov_base = hd[j];
            iov[k++].iov_len = HRR_REC_HEADER;
            iov[k++] = key[i + j];
            bytes += HRR_REC_HEADER + key[i + j].iov_len;
        }
        rc = hrp_write_all(w->file.fd, iov, k);
        if (rc != 0) {
            snprintf(err, errlen, "%s: cannot write: %s", w->file.path,
                     strerror(-rc));
            return rc;
        }
        w->out_len = 0;
        w->bytes += bytes;
        w->keys += m;
    }
    return 0;
}

int hrr_put_copied(struct hrr_writer *w, const void *p, size_t len,
                       uint32_t crc, char *err, size_t errlen)
{
    struct iovec piece[2];
    uint8_t hd[HRR_REC_HEADER];
    int rc;

    if (len > RUN_REC_MAX) {
        snprintf(err, errlen, "%s: a record of %zu bytes is too large",
                 w->file.path, len);
        return -EMSGSIZE;
    }
    hrr_rec_head_put(hd, 'K', (uint32_t)len, crc);
    piece[0].iov_base = hd;
    piece[0].iov_len = sizeof hd;
    piece[1].iov_base = (void *)p;
    piece[1].iov_len = len;
    rc = out_put(w, piece, 2, sizeof hd + len, err, errlen);
    if (rc != 0)
        return rc;
    w->bytes += sizeof hd + len;
    w->keys++;
    return 0;
}

int hrr_put_spliced(struct hrr_writer *w, const void *p, size_t len,
                        size_t from, size_t to, const void *mid,
                        size_t midlen, char *err, size_t errlen)
{
    const uint8_t *b = p;
    struct iovec piece[3] = {
        { (void *)b, from },
        { (void *)mid, midlen },
        { (void *)(b + to), len - to },
    };
    int rc = put_pieces(w, 'K', piece, 3, from + midlen + (len - to), err,
                        errlen);

    if (rc != 0)
        return rc;
    w->keys++;
    return 0;
}

int hrr_put_agg_key(struct hrr_writer *w, struct hra_agg *a,
                        const struct hra_key *k, int format, char *err,
                        size_t errlen)
{
    Hostrange__RunKey m;
    int rc = 1;

    if (format < HRR_FORMAT_EVENTS) {
        /* Written into the writer's buffer. */
        struct hrr_pbuf b = { w->buf, 0, w->cap };

        rc = hrr_runput_key(a, k, 0, &b, &w->kt);
        w->buf = b.p;
        w->cap = b.cap;
        if (rc == 0)
            return hrr_put_packed(w, w->buf, b.len, err, errlen);
    }
    if (rc < 0 || hrr_runkey_from(a, k, format, &m) != 0) {
        snprintf(err, errlen, "%s: out of memory", w->file.path);
        return -ENOMEM;
    }
    rc = hrr_put_key(w, &m, err, errlen);
    hrr_runkey_clear(&m);
    return rc;
}

static int cmp_serial(const void *pa, const void *pb)
{
    const struct hra_key *x = *(struct hra_key *const *)pa;
    const struct hra_key *y = *(struct hra_key *const *)pb;

    return (x->serial > y->serial) - (x->serial < y->serial);
}

int hrr_put_agg(struct hrr_writer *w, struct hra_agg *a, int format,
                    char *err, size_t errlen)
{
    struct hra_key **ks = malloc((a->nkeys + 1) * sizeof *ks);
    int rc = 0;

    if (ks == NULL) {
        snprintf(err, errlen, "%s: out of memory", w->file.path);
        return -ENOMEM;
    }
    if (a->nkeys != 0) /* (no key array yet in an empty aggregation) */
        memcpy(ks, a->keys, a->nkeys * sizeof *ks);
    qsort(ks, a->nkeys, sizeof *ks, cmp_serial);
    for (uint32_t i = 0; i < a->nkeys && rc == 0; i++)
        rc = hrr_put_agg_key(w, a, ks[i], format, err, errlen);
    free(ks);
    return rc;
}

int hrr_commit(struct hrr_writer *w, Hostrange__RunEnd *e,
                   char *err, size_t errlen)
{
    size_t len;
    int rc;

    e->keys = w->keys;
    len = hostrange__run_end__get_packed_size(e);
    if ((rc = room(w, len + 1, err, errlen)) != 0)
        goto fail;
    hostrange__run_end__pack(e, w->buf);
    if ((rc = put_record(w, 'E', w->buf, len, err, errlen)) != 0 ||
        (rc = out_flush(w, err, errlen)) != 0)
        goto fail;
    rc = hru_atomic_commit(&w->file);
    if (rc != 0) {
        snprintf(err, errlen, "%s: cannot write: %s", w->file.path,
                 strerror(-rc));
        goto fail;
    }
    hrr_abort(w);
    return 0;
fail:
    hrr_abort(w);
    return rc;
}

void hrr_abort(struct hrr_writer *w)
{
    /* A writer never created, committed or aborted has no temporary
     * file. */
    hru_atomic_abort(&w->file);
    free(w->buf);
    if (w->out != NULL)
        munmap(w->out, OUT_CAP);
    hrr_runput_tmp_fini(&w->kt);
    memset(w, 0, sizeof *w);
    w->file.fd = -1;
}

/* --- reading -------------------------------------------------------------- */

/* The bytes a reader asks for at least when it reads on through a file,
 * so that the records after a small one, or the framing of the next one,
 * come with a read; and when it reads records again, whole, one after the
 * other (as a merge writes the keys found in one file only), so that a
 * read brings several. */
#define READ_AHEAD 4096u
#define READ_ON ((size_t)256 << 10)

/*
 * Makes r->buf hold the file's bytes from offset off: at least need of
 * them, fewer only where the file ends first. When they are not all there
 * yet, want bytes (need at least) are read from off. Returns how many
 * bytes from off the buffer holds, with *p pointing at them, or a
 * negative errno when reading fails or memory runs out.
 */
static ssize_t file_bytes(struct hrr_reader *r, uint64_t off, size_t need,
                          size_t want, const uint8_t **p)
{
    size_t got = 0;

    if (r->buf != NULL && off >= r->buf_off &&
        off - r->buf_off <= r->buf_len &&
        r->buf_len - (off - r->buf_off) >= need) {
        *p = r->buf + (off - r->buf_off);
        return (ssize_t)(r->buf_len - (off - r->buf_off));
    }
    want = want < need ? need : want;
    if (want + 1 > r->cap) {
        uint8_t *nb = realloc(r->buf, want + 1);

        if (nb == NULL)
            return -ENOMEM;
        r->buf = nb;
        r->cap = want + 1;
    }
    r->buf_len = 0;
    while (got < want) {
        ssize_t n = pread(r->fd, r->buf + got, want - got,
                          (off_t)(off + got));

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            break;
        got += (size_t)n;
    }
    r->buf_off = off;
    r->buf_len = got;
    *p = r->buf;
    return (ssize_t)got;
}

/* The reason for file_bytes' failure rc, in err; returns rc. */
static int read_error(const struct hrr_reader *r, int rc, char *err,
                      size_t errlen)
{
    if (rc == -ENOMEM)
        snprintf(err, errlen, "%s: out of memory", r->path);
    else
        snprintf(err, errlen, "%s: cannot read: %s", r->path,
                 strerror(-rc));
    return rc;
}

/* Reads the framing of the record at r->offset into hd, asking for ahead
 * bytes from there: returns 1 with the payload's length in *len and the
 * checksum it gives in *crc, 0 at the end of the file, or a negative errno
 * with err set (-EINVAL: the file is cut short). */
static int record_head(struct hrr_reader *r, size_t ahead, uint8_t *hd,
                       uint32_t *len, uint32_t *crc, char *err,
                       size_t errlen)
{
    const uint8_t *p;
    ssize_t n = file_bytes(r, r->offset, HRR_REC_HEADER, ahead, &p);
    uint32_t l;
    uint8_t type;

    if (n < 0)
        return read_error(r, (int)n, err, errlen);
    if (n == 0)
        return 0;
    if (n < (ssize_t)HRR_REC_HEADER) {
        snprintf(err, errlen, "%s: truncated at byte %llu (a record "
                 "is cut short)", r->path, (unsigned long long)r->offset);
        return -EINVAL;
    }
    memcpy(hd, p, HRR_REC_HEADER);
    hrr_rec_head_get(hd, &l, crc, &type);
    if (l > RUN_REC_MAX || r->offset + HRR_REC_HEADER + l > r->size) {
        snprintf(err, errlen, "%s: truncated at byte %llu (a record of "
                 "%u bytes does not fit in the file)", r->path,
                 (unsigned long long)r->offset, l);
        return -EINVAL;
    }
    *len = l;
    return 1;
}

/* Reads the record at r->offset whole, asking for ahead bytes past its
 * framing. Returns 1 with its type and its payload (*len bytes at *p, in
 * r->buf), 0 at the end of the file, or a negative errno with err set
 * (-EINVAL: the record is damaged or cut short; -EIO: the file shrank). */
static int next_record(struct hrr_reader *r, size_t ahead, uint8_t *type,
                       const uint8_t **p, size_t *len, char *err,
                       size_t errlen)
{
    uint8_t hd[HRR_REC_HEADER];
    uint32_t l, crc, want;
    struct iovec piece;
    ssize_t n;
    int rc = record_head(r, HRR_REC_HEADER + ahead, hd, &l, &crc, err,
                         errlen);

    if (rc <= 0)
        return rc;
    n = file_bytes(r, r->offset + HRR_REC_HEADER, l,
                   (size_t)l + (ahead > l ? ahead - l : READ_AHEAD), p);
    if (n < 0)
        return read_error(r, (int)n, err, errlen);
    if ((size_t)n < l) {
        snprintf(err, errlen, "%s: cannot read: file shrank", r->path);
        return -EIO;
    }
    piece.iov_base = (void *)*p;
    piece.iov_len = l;
    want = hrr_rec_crc(hd[8], l, &piece, 1);
    if (want != crc) {
        snprintf(err, errlen, "%s: damaged at byte %llu (checksum "
                 "mismatch)", r->path, (unsigned long long)r->offset);
        return -EINVAL;
    }
    r->offset += sizeof hd + l;
    r->whole_end = r->offset;
    r->crc = crc;
    *type = hd[8];
    *len = l;
    return 1;
}

int hrr_open(struct hrr_reader *r, const char *path,
                 Hostrange__RunHeader **h, char *err, size_t errlen)
{
    const uint8_t *magic, *p;
    struct stat st;
    uint8_t type;
    size_t len;
    ssize_t n;
    int rc;

    memset(r, 0, sizeof *r);
    r->path = path;
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0) {
        rc = -errno;
        snprintf(err, errlen, "%s: %s", path, strerror(-rc));
        return rc;
    }
    rc = fstat(r->fd, &st) != 0 ? -errno : 0;
    if (rc != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        if (rc == 0)
            rc = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
        goto fail;
    }
    r->size = (uint64_t)st.st_size;
    n = file_bytes(r, 0, 8, READ_AHEAD, &magic);
    if (n < 0) {
        rc = read_error(r, (int)n, err, errlen);
        goto fail;
    }
    /* Not a run file, or of a layout or format this one does not read:
     * -EINVAL, as for a damaged one. */
    rc = -EINVAL;
    if (n < 6 || memcmp(magic, HRR_MAGIC, 6) != 0) {
        snprintf(err, errlen, "%s: not a hostrange run file%s", path,
                 n == 0 ? " (it is empty)" : "");
        goto fail;
    }
    if (n < 8 || magic[7] != '\n' || magic[6] < '1' || magic[6] > '9') {
        snprintf(err, errlen, "%s: truncated or damaged at byte 0 (its "
                 "first 8 bytes are not a run file's)", path);
        goto fail;
    }
    if (memcmp(magic, HRR_MAGIC, 8) != 0) {
        snprintf(err, errlen, "%s: written in run file layout %c, newer "
                 "than this hostrange reads (1); use a newer hostrangectl",
                 path, magic[6]);
        goto fail;
    }
    r->offset = 8;
    rc = next_record(r, READ_AHEAD, &type, &p, &len, err, errlen);
    if (rc == 0) {
        snprintf(err, errlen, "%s: truncated at byte 8 (no header)", path);
        rc = -EINVAL;
    }
    if (rc < 0)
        goto fail;
    rc = -EINVAL;
    if (type == 'H')
        *h = hrp_unpack(&hostrange__run_header__descriptor, len, p, &rc);
    if (rc == -ENOMEM) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto fail;
    }
    if (rc != 0) {
        snprintf(err, errlen, "%s: damaged at byte 8 (its first record is "
                 "not a run header)", path);
        goto fail;
    }
    rc = -EINVAL;
    if ((*h)->format < HRR_FORMAT_SORTED ||
        (*h)->format > HRR_FORMAT_NEWEST) {
        snprintf(err, errlen, "%s: written in run format %u, %s this "
                 "hostrange reads (1 to %u)%s", path, (*h)->format,
                 (*h)->format > HRR_FORMAT_NEWEST ? "newer than those"
                                                      : "not one",
                 HRR_FORMAT_NEWEST,
                 (*h)->format > HRR_FORMAT_NEWEST
                     ? "; use a newer hostrangectl"
                     : "");
        hostrange__run_header__free_unpacked(*h, NULL);
        *h = NULL;
        goto fail;
    }
    return 0;
fail:
    hrr_close(r);
    return rc;
}

int hrr_read_state(struct hrr_reader *r, Hostrange__RunState **s,
                       char *err, size_t errlen)
{
    uint64_t at = r->offset;
    const uint8_t *p;
    uint8_t type;
    size_t len;
    int rc = next_record(r, READ_AHEAD, &type, &p, &len, err, errlen);

    if (rc <= 0 || type != HRR_REC_STATE) {
        if (rc >= 0)
            r->offset = at; /* another record: left for the next read */
        return rc < 0 ? rc : 0;
    }
    *s = hrp_unpack(&hostrange__run_state__descriptor, len, p, &rc);
    if (rc == 0)
        return 1;
    if (rc == -ENOMEM) {
        snprintf(err, errlen, "%s: out of memory", r->path);
        return rc;
    }
    snprintf(err, errlen, "%s: damaged at byte %llu (a record of type "
             "0x%02x that does not decode)", r->path,
             (unsigned long long)at, HRR_REC_STATE);
    return -EINVAL;
}

int hrr_next_packed(struct hrr_reader *r, const uint8_t **p,
                        size_t *len, Hostrange__RunEnd **e, char *err,
                        size_t errlen)
{
    uint64_t at = r->offset;
    const uint8_t *q;
    uint8_t type;
    int rc = next_record(r, READ_AHEAD, &type, &q, len, err, errlen);

    while (rc > 0 && type == HRR_REC_STATE) {
        /* A daemon's state: not part of the run. */
        at = r->offset;
        rc = next_record(r, READ_AHEAD, &type, &q, len, err, errlen);
    }
    if (rc < 0)
        return rc;
    if (rc == 0) {
        snprintf(err, errlen, "%s: truncated at byte %llu (its final record "
                 "is missing)", r->path, (unsigned long long)at);
        return -EINVAL;
    }
    if (type == 'K') {
        *p = q;
        return 1;
    }
    if (type == 'E') {
        *e = hrp_unpack(&hostrange__run_end__descriptor, *len, q, &rc);
        if (rc == -ENOMEM) {
            snprintf(err, errlen, "%s: out of memory", r->path);
            return rc;
        }
        if (rc == 0) {
            if (r->offset != r->size) {
                snprintf(err, errlen, "%s: damaged at byte %llu (data after "
                         "the final record)", r->path,
                         (unsigned long long)r->offset);
                hostrange__run_end__free_unpacked(*e, NULL);
                *e = NULL;
                return -EINVAL;
            }
            return 2;
        }
    }
    snprintf(err, errlen, "%s: damaged at byte %llu (a record of type "
             "0x%02x that does not decode)", r->path,
             (unsigned long long)at, type);
    return -EINVAL;
}

int hrr_unpack_key(const struct hrr_reader *r, const uint8_t *p,
                       size_t len, Hostrange__RunKey **k, char *err,
                       size_t errlen)
{
    int rc;

    *k = hrp_unpack(&hostrange__run_key__descriptor, len, p, &rc);

    if (rc == 0)
        return 0;
    if (rc == -ENOMEM) {
        snprintf(err, errlen, "%s: out of memory", r->path);
        return rc;
    }
    snprintf(err, errlen, "%s: damaged at byte %llu (a record of type "
             "0x%02x that does not decode)", r->path,
             (unsigned long long)(r->offset - HRR_REC_HEADER - len), 'K');
    return -EINVAL;
}

int hrr_next(struct hrr_reader *r, Hostrange__RunKey **k,
                 Hostrange__RunEnd **e, char *err, size_t errlen)
{
    const uint8_t *p;
    size_t len;
    int rc = hrr_next_packed(r, &p, &len, e, err, errlen);

    if (rc != 1)
        return rc;
    rc = hrr_unpack_key(r, p, len, k, err, errlen);
    return rc == 0 ? 1 : rc;
}

/* The buffer a reader keeps after hrr_reader_trim. */
#define READER_KEEP (4u << 10)

void hrr_reader_trim(struct hrr_reader *r)
{
    if (r->cap > READER_KEEP) {
        free(r->buf);
        r->buf = NULL;
        r->cap = r->buf_len = 0;
    }
}

void hrr_close(struct hrr_reader *r)
{
    /* A reader never opened has no path. */
    if (r->path != NULL && r->fd >= 0)
        close(r->fd);
    free(r->buf);
    r->fd = -1;
    r->buf = NULL;
    r->cap = r->buf_len = 0;
}

int hrr_next_raw(struct hrr_reader *r, uint8_t *type,
                     const uint8_t **p, size_t *len, char *err,
                     size_t errlen)
{
    return next_record(r, READ_AHEAD, type, p, len, err, errlen);
}

int hrr_skim(struct hrr_reader *r, size_t want, uint8_t *type,
                 size_t *len, const uint8_t **p, size_t *got, char *err,
                 size_t errlen)
{
    uint8_t hd[HRR_REC_HEADER];
    uint32_t l, crc;
    ssize_t n;
    int rc = record_head(r, HRR_REC_HEADER + want, hd, &l, &crc, err,
                         errlen);

    if (rc <= 0)
        return rc;
    want = want < l ? want : l;
    n = file_bytes(r, r->offset + HRR_REC_HEADER, want, want, p);
    if (n < 0)
        return read_error(r, (int)n, err, errlen);
    if ((size_t)n < want) {
        snprintf(err, errlen, "%s: cannot read: file shrank", r->path);
        return -EIO;
    }
    r->offset += HRR_REC_HEADER + l;
    r->crc = crc;
    *type = hd[8];
    *len = l;
    *got = want;
    return 1;
}

int hrr_reread(struct hrr_reader *r, uint64_t offset, size_t len,
                   uint32_t crc, uint8_t *type, const uint8_t **p,
                   char *err, size_t errlen)
{
    size_t n = 0;
    int rc;

    /* The record is read whole with its framing, in one read; with the
     * records after it when it follows the last one read whole. */
    r->offset = offset;
    rc = next_record(r, offset == r->whole_end && len < READ_ON ? READ_ON
                                                                : len,
                     type, p, &n, err, errlen);
    if (rc < 0)
        return rc;
    if (rc == 0 || n != len || r->crc != crc) {
        snprintf(err, errlen, "%s: changed while it was read (the record "
                 "at byte %llu)", r->path, (unsigned long long)offset);
        return -EIO;
    }
    return 0;
}

int hrr_load(struct hrr_runload *l, const char *path,
                 Hostrange__RunHeader **hp, Hostrange__RunEnd **ep,
                 hrr_progress_fn progress, void *ctx, char *err,
                 size_t errlen)
{
    struct hrr_reader r;
    Hostrange__RunHeader *h = NULL;
    Hostrange__RunEnd *e = NULL;
    uint64_t keys = 0, next_report = 0;
    char why[512];
    int rc;

    rc = hrr_open(&r, path, &h, err, errlen);
    if (rc != 0)
        return rc;
    for (;;) {
        Hostrange__RunKey *k = NULL;
        uint64_t at = r.offset;

        rc = hrr_next(&r, &k, &e, err, errlen);
        if (rc < 0)
            goto fail;
        if (rc == 2)
            break;
        rc = hrr_runload_key(l, k, why, sizeof why);
        hostrange__run_key__free_unpacked(k, NULL);
        if (rc == -EINVAL) {
            snprintf(err, errlen, "%s: damaged at byte %llu (%s)", path,
                     (unsigned long long)at, why);
            goto fail;
        }
        if (rc != 0) {
            snprintf(err, errlen, "%s: out of memory", path);
            rc = -ENOMEM;
            goto fail;
        }
        keys++;
        if (progress != NULL && r.offset >= next_report) {
            progress(ctx, r.offset, r.size);
            next_report = r.offset + (4u << 20);
        }
    }
    if (e->keys != keys) {
        snprintf(err, errlen, "%s: damaged (its end counts %llu keys, it "
                 "holds %llu)", path, (unsigned long long)e->keys,
                 (unsigned long long)keys);
        rc = -EINVAL;
        goto fail;
    }
    if (hrr_runload_end(l, e) != 0) {
        snprintf(err, errlen, "%s: out of memory", path);
        rc = -ENOMEM;
        goto fail;
    }
    if (progress != NULL)
        progress(ctx, r.size, r.size);
    hrr_close(&r);
    if (hp != NULL)
        *hp = h;
    else
        hostrange__run_header__free_unpacked(h, NULL);
    if (ep != NULL)
        *ep = e;
    else
        hostrange__run_end__free_unpacked(e, NULL);
    return 0;
fail:
    hrr_close(&r);
    if (h != NULL)
        hostrange__run_header__free_unpacked(h, NULL);
    if (e != NULL)
        hostrange__run_end__free_unpacked(e, NULL);
    return rc;
}

void hrr_hostname(char *buf, size_t len)
{
    if (gethostname(buf, len) != 0 || buf[0] == '\0')
        snprintf(buf, len, "unknown");
    buf[len - 1] = '\0';
}

void hrr_provenance(Hostrange__RunHeader *h, unsigned format, char *host,
                        size_t hostlen, Hostrange__RunMeta **meta,
                        size_t nmeta)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    hrr_hostname(host, hostlen);
    h->format = format;
    h->host = host;
    h->time_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    h->version = PACKAGE_VERSION;
    h->meta = meta;
    h->n_meta = nmeta;
}

int hrr_read(const char *path, struct hra_agg *agg,
                 Hostrange__RunEnd **end, hrr_progress_fn progress,
                 void *ctx, char *err, size_t errlen)
{
    struct hrr_runload l;
    int rc;

    hra_init(agg);
    agg->max_bytes = SIZE_MAX / 2;
    hrr_runload_init_reader(&l, agg);
    rc = hrr_load(&l, path, NULL, end, progress, ctx, err, errlen);
    if (rc == 0 && hrr_runload_finish(&l) != 0) {
        snprintf(err, errlen, "out of memory");
        rc = -ENOMEM;
        if (end != NULL) {
            hostrange__run_end__free_unpacked(*end, NULL);
            *end = NULL;
        }
    }
    hrr_runload_fini(&l);
    return rc;
}

int hrr_read_whole(struct hrr_whole *r, const char *path,
                       hrr_progress_fn progress, void *ctx, char *err,
                       size_t errlen)
{
    r->end = NULL;
    return hrr_read(path, r->agg, &r->end, progress, ctx, err, errlen);
}

void hrr_whole_fini(struct hrr_whole *r)
{
    if (r->end != NULL)
        hostrange__run_end__free_unpacked(r->end, NULL);
    r->end = NULL;
    hra_fini(r->agg);
}
