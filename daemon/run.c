/* Run files (see run.h). */
#include "config.h"

#include "daemon/run.h"
#include "daemon/journal.h"

#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* No record of a run file is larger than this. */
#define RUN_REC_MAX ((size_t)1 << 30)

/* --- writing -------------------------------------------------------------- */

static int put_record(struct hrd_run_writer *w, uint8_t type, const void *p,
                      size_t len, char *err, size_t errlen);
static int room(struct hrd_run_writer *w, size_t len, char *err,
                size_t errlen);

int hrd_run_create(struct hrd_run_writer *w, const char *path,
                   const Hostrange__RunHeader *h, char *err, size_t errlen)
{
    size_t n = strlen(path), len;
    mode_t mask;
    int fd;

    memset(w, 0, sizeof *w);
    w->path = strdup(path);
    w->tmp = malloc(n + 16);
    if (w->path == NULL || w->tmp == NULL) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto fail;
    }
    snprintf(w->tmp, n + 16, "%s.tmp.XXXXXX", path);
    fd = mkstemp(w->tmp);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot create a temporary file next to "
                 "it: %s", path, strerror(errno));
        free(w->tmp);
        w->tmp = NULL;
        goto fail;
    }
    /* mkstemp makes the file 0600; a run file gets the usual mode. */
    mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    w->f = fdopen(fd, "wb");
    if (w->f == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        goto fail;
    }
    if (fwrite(HRD_RUN_MAGIC, 1, 8, w->f) != 8) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        goto fail;
    }
    w->bytes = 8;
    len = hostrange__run_header__get_packed_size(h);
    if (room(w, len + 1, err, errlen) != 0)
        goto fail;
    hostrange__run_header__pack(h, w->buf);
    if (put_record(w, 'H', w->buf, len, err, errlen) != 0)
        goto fail;
    return 0;
fail:
    hrd_run_abort(w);
    return -1;
}

/* Writes one record of `type` holding len bytes at p. */
static int put_record(struct hrd_run_writer *w, uint8_t type, const void *p,
                      size_t len, char *err, size_t errlen)
{
    uint8_t hd[HRD_REC_HEADER];
    uint32_t l = htole32((uint32_t)len), crc;

    if (len > RUN_REC_MAX) {
        snprintf(err, errlen, "%s: a record of %zu bytes is too large",
                 w->path, len);
        return -1;
    }
    memcpy(hd, &l, 4);
    hd[8] = type;
    crc = hrd_crc32c(0, hd, 4);
    crc = hrd_crc32c(crc, &hd[8], 1);
    crc = htole32(hrd_crc32c(crc, p, len));
    memcpy(hd + 4, &crc, 4);
    if (fwrite(hd, 1, sizeof hd, w->f) != sizeof hd ||
        fwrite(p, 1, len, w->f) != len) {
        snprintf(err, errlen, "%s: cannot write: %s", w->path,
                 strerror(errno));
        return -1;
    }
    w->bytes += sizeof hd + len;
    return 0;
}

/* Makes the writer's buffer hold len bytes. */
static int room(struct hrd_run_writer *w, size_t len, char *err,
                size_t errlen)
{
    uint8_t *p;

    if (len <= w->cap)
        return 0;
    p = realloc(w->buf, len);
    if (p == NULL) {
        snprintf(err, errlen, "%s: out of memory", w->path);
        return -1;
    }
    w->buf = p;
    w->cap = len;
    return 0;
}

int hrd_run_put_key(struct hrd_run_writer *w, const Hostrange__RunKey *k,
                    char *err, size_t errlen)
{
    size_t len = hostrange__run_key__get_packed_size(k);

    if (room(w, len + 1, err, errlen) != 0)
        return -1;
    hostrange__run_key__pack(k, w->buf);
    if (put_record(w, 'K', w->buf, len, err, errlen) != 0)
        return -1;
    w->keys++;
    return 0;
}

int hrd_run_put_packed(struct hrd_run_writer *w, const void *p, size_t len,
                       char *err, size_t errlen)
{
    if (put_record(w, 'K', p, len, err, errlen) != 0)
        return -1;
    w->keys++;
    return 0;
}

int hrd_run_put_spliced(struct hrd_run_writer *w, const void *p, size_t len,
                        size_t from, size_t to, const void *mid,
                        size_t midlen, char *err, size_t errlen)
{
    const uint8_t *b = p;
    uint8_t hd[HRD_REC_HEADER];
    size_t n = from + midlen + (len - to);
    uint32_t l = htole32((uint32_t)n), crc;

    if (n > RUN_REC_MAX) {
        snprintf(err, errlen, "%s: a record of %zu bytes is too large",
                 w->path, n);
        return -1;
    }
    memcpy(hd, &l, 4);
    hd[8] = 'K';
    crc = hrd_crc32c(0, hd, 4);
    crc = hrd_crc32c(crc, &hd[8], 1);
    crc = hrd_crc32c(crc, b, from);
    crc = hrd_crc32c(crc, mid, midlen);
    crc = htole32(hrd_crc32c(crc, b + to, len - to));
    memcpy(hd + 4, &crc, 4);
    if (fwrite(hd, 1, sizeof hd, w->f) != sizeof hd ||
        fwrite(b, 1, from, w->f) != from ||
        fwrite(mid, 1, midlen, w->f) != midlen ||
        fwrite(b + to, 1, len - to, w->f) != len - to) {
        snprintf(err, errlen, "%s: cannot write: %s", w->path,
                 strerror(errno));
        return -1;
    }
    w->bytes += sizeof hd + n;
    w->keys++;
    return 0;
}

int hrd_run_put_agg_key(struct hrd_run_writer *w, struct hrd_agg *a,
                        const struct hrd_key *k, int format, char *err,
                        size_t errlen)
{
    Hostrange__RunKey m;
    int rc = 1;

    if (format < HRD_RUN_FORMAT_EVENTS) {
        /* Written into the writer's buffer. */
        struct hrd_pbuf b = { w->buf, 0, w->cap };

        rc = hrd_runput_key(a, k, 0, &b, &w->kt);
        w->buf = b.p;
        w->cap = b.cap;
        if (rc == 0)
            return hrd_run_put_packed(w, w->buf, b.len, err, errlen);
    }
    if (rc < 0 || hrd_runkey_from(a, k, format, &m) != 0) {
        snprintf(err, errlen, "%s: out of memory", w->path);
        return -1;
    }
    rc = hrd_run_put_key(w, &m, err, errlen);
    hrd_runkey_clear(&m);
    return rc;
}

static int cmp_serial(const void *pa, const void *pb)
{
    const struct hrd_key *x = *(struct hrd_key *const *)pa;
    const struct hrd_key *y = *(struct hrd_key *const *)pb;

    return (x->serial > y->serial) - (x->serial < y->serial);
}

int hrd_run_put_agg(struct hrd_run_writer *w, struct hrd_agg *a, int format,
                    char *err, size_t errlen)
{
    struct hrd_key **ks = malloc((a->nkeys + 1) * sizeof *ks);
    int rc = 0;

    if (ks == NULL) {
        snprintf(err, errlen, "%s: out of memory", w->path);
        return -1;
    }
    if (a->nkeys != 0) /* (no key array yet in an empty aggregation) */
        memcpy(ks, a->keys, a->nkeys * sizeof *ks);
    qsort(ks, a->nkeys, sizeof *ks, cmp_serial);
    for (uint32_t i = 0; i < a->nkeys && rc == 0; i++)
        rc = hrd_run_put_agg_key(w, a, ks[i], format, err, errlen);
    free(ks);
    return rc;
}

int hrd_run_commit(struct hrd_run_writer *w, Hostrange__RunEnd *e,
                   char *err, size_t errlen)
{
    size_t len;
    int fd;

    e->keys = w->keys;
    len = hostrange__run_end__get_packed_size(e);
    if (room(w, len + 1, err, errlen) != 0)
        goto fail;
    hostrange__run_end__pack(e, w->buf);
    if (put_record(w, 'E', w->buf, len, err, errlen) != 0)
        goto fail;
    fd = fileno(w->f);
    if (fflush(w->f) != 0 || fsync(fd) != 0) {
        snprintf(err, errlen, "%s: cannot write: %s", w->path,
                 strerror(errno));
        goto fail;
    }
    if (fclose(w->f) != 0) {
        w->f = NULL;
        snprintf(err, errlen, "%s: cannot write: %s", w->path,
                 strerror(errno));
        goto fail;
    }
    w->f = NULL;
    if (rename(w->tmp, w->path) != 0) {
        snprintf(err, errlen, "%s: cannot rename the temporary file over "
                 "it: %s", w->path, strerror(errno));
        goto fail;
    }
    free(w->tmp);
    w->tmp = NULL;
    hrd_run_abort(w);
    return 0;
fail:
    hrd_run_abort(w);
    return -1;
}

void hrd_run_abort(struct hrd_run_writer *w)
{
    if (w->f != NULL)
        fclose(w->f);
    if (w->tmp != NULL)
        unlink(w->tmp);
    free(w->tmp);
    free(w->path);
    free(w->buf);
    hrd_runput_tmp_fini(&w->kt);
    memset(w, 0, sizeof *w);
}

/* --- reading -------------------------------------------------------------- */

/* Reads the next record's framing into hd: returns 1 with the payload's
 * length in *len and the checksum it gives in *crc, 0 at the end of the
 * file, -1 with err set. */
static int record_head(struct hrd_run_reader *r, uint8_t *hd, uint32_t *len,
                       uint32_t *crc, char *err, size_t errlen)
{
    uint32_t l;
    size_t n = fread(hd, 1, HRD_REC_HEADER, r->f);

    if (n == 0 && feof(r->f))
        return 0;
    if (n < HRD_REC_HEADER) {
        if (ferror(r->f))
            snprintf(err, errlen, "%s: cannot read: %s", r->path,
                     strerror(errno));
        else
            snprintf(err, errlen, "%s: truncated at byte %llu (a record "
                     "is cut short)", r->path,
                     (unsigned long long)r->offset);
        return -1;
    }
    memcpy(&l, hd, 4);
    memcpy(crc, hd + 4, 4);
    l = le32toh(l);
    *crc = le32toh(*crc);
    if (l > RUN_REC_MAX || r->offset + HRD_REC_HEADER + l > r->size) {
        snprintf(err, errlen, "%s: truncated at byte %llu (a record of "
                 "%u bytes does not fit in the file)", r->path,
                 (unsigned long long)r->offset, l);
        return -1;
    }
    *len = l;
    return 1;
}

/* Makes the reader's buffer hold n bytes (and one more). */
static int reader_room(struct hrd_run_reader *r, size_t n, char *err,
                       size_t errlen)
{
    uint8_t *p;

    if (n + 1 <= r->cap)
        return 0;
    p = realloc(r->buf, n + 1);
    if (p == NULL) {
        snprintf(err, errlen, "%s: out of memory", r->path);
        return -1;
    }
    r->buf = p;
    r->cap = n + 1;
    return 0;
}

/* Reads the next record. Returns 1 with its type and payload in r->buf, 0
 * at the end of the file, -1 with err set. */
static int next_record(struct hrd_run_reader *r, uint8_t *type, size_t *len,
                       char *err, size_t errlen)
{
    uint8_t hd[HRD_REC_HEADER];
    uint32_t l, crc, want;
    int rc = record_head(r, hd, &l, &crc, err, errlen);

    if (rc <= 0)
        return rc;
    if (reader_room(r, l, err, errlen) != 0)
        return -1;
    if (fread(r->buf, 1, l, r->f) != l) {
        snprintf(err, errlen, "%s: cannot read: %s", r->path,
                 ferror(r->f) ? strerror(errno) : "file shrank");
        return -1;
    }
    want = hrd_crc32c(0, hd, 4);
    want = hrd_crc32c(want, hd + 8, 1);
    want = hrd_crc32c(want, r->buf, l);
    if (want != crc) {
        snprintf(err, errlen, "%s: damaged at byte %llu (checksum "
                 "mismatch)", r->path, (unsigned long long)r->offset);
        return -1;
    }
    r->offset += sizeof hd + l;
    r->crc = crc;
    *type = hd[8];
    *len = l;
    return 1;
}

int hrd_run_open(struct hrd_run_reader *r, const char *path,
                 Hostrange__RunHeader **h, char *err, size_t errlen)
{
    char magic[8];
    struct stat st;
    uint8_t type;
    size_t len, n;
    int rc;

    memset(r, 0, sizeof *r);
    r->path = path;
    r->f = fopen(path, "rb");
    if (r->f == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (fstat(fileno(r->f), &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        goto fail;
    }
    r->size = (uint64_t)st.st_size;
    n = fread(magic, 1, 8, r->f);
    if (n < 6 || memcmp(magic, HRD_RUN_MAGIC, 6) != 0) {
        snprintf(err, errlen, "%s: not a hostrange run file%s", path,
                 n == 0 ? " (it is empty)" : "");
        goto fail;
    }
    if (n < 8 || magic[7] != '\n' || magic[6] < '1' || magic[6] > '9') {
        snprintf(err, errlen, "%s: truncated or damaged at byte 0 (its "
                 "first 8 bytes are not a run file's)", path);
        goto fail;
    }
    if (memcmp(magic, HRD_RUN_MAGIC, 8) != 0) {
        snprintf(err, errlen, "%s: written in run file layout %c, newer "
                 "than this hostrange reads (1); use a newer hostrangectl",
                 path, magic[6]);
        goto fail;
    }
    r->offset = 8;
    rc = next_record(r, &type, &len, err, errlen);
    if (rc == 0)
        snprintf(err, errlen, "%s: truncated at byte 8 (no header)", path);
    if (rc <= 0)
        goto fail;
    if (type != 'H' ||
        (*h = hostrange__run_header__unpack(NULL, len, r->buf)) == NULL) {
        snprintf(err, errlen, "%s: damaged at byte 8 (its first record is "
                 "not a run header)", path);
        goto fail;
    }
    if ((*h)->format < 1 || (*h)->format > HRD_RUN_FORMAT) {
        snprintf(err, errlen, "%s: written in run format %u, %s this "
                 "hostrange reads (1 to %u)%s", path, (*h)->format,
                 (*h)->format > HRD_RUN_FORMAT ? "newer than those" : "not one",
                 HRD_RUN_FORMAT,
                 (*h)->format > HRD_RUN_FORMAT ? "; use a newer hostrangectl"
                                               : "");
        hostrange__run_header__free_unpacked(*h, NULL);
        *h = NULL;
        goto fail;
    }
    return 0;
fail:
    hrd_run_close(r);
    return -1;
}

int hrd_run_next_packed(struct hrd_run_reader *r, const uint8_t **p,
                        size_t *len, Hostrange__RunEnd **e, char *err,
                        size_t errlen)
{
    uint64_t at = r->offset;
    uint8_t type;
    int rc = next_record(r, &type, len, err, errlen);

    if (rc < 0)
        return -1;
    if (rc == 0) {
        snprintf(err, errlen, "%s: truncated at byte %llu (its final record "
                 "is missing)", r->path, (unsigned long long)at);
        return -1;
    }
    if (type == 'K') {
        *p = r->buf;
        return 1;
    }
    if (type == 'E') {
        *e = hostrange__run_end__unpack(NULL, *len, r->buf);
        if (*e != NULL) {
            if (r->offset != r->size) {
                snprintf(err, errlen, "%s: damaged at byte %llu (data after "
                         "the final record)", r->path,
                         (unsigned long long)r->offset);
                hostrange__run_end__free_unpacked(*e, NULL);
                *e = NULL;
                return -1;
            }
            return 2;
        }
    }
    snprintf(err, errlen, "%s: damaged at byte %llu (a record of type "
             "0x%02x that does not decode)", r->path,
             (unsigned long long)at, type);
    return -1;
}

int hrd_run_unpack_key(const struct hrd_run_reader *r, const uint8_t *p,
                       size_t len, Hostrange__RunKey **k, char *err,
                       size_t errlen)
{
    *k = hostrange__run_key__unpack(NULL, len, p);
    if (*k != NULL)
        return 0;
    snprintf(err, errlen, "%s: damaged at byte %llu (a record of type "
             "0x%02x that does not decode)", r->path,
             (unsigned long long)(r->offset - HRD_REC_HEADER - len), 'K');
    return -1;
}

int hrd_run_next(struct hrd_run_reader *r, Hostrange__RunKey **k,
                 Hostrange__RunEnd **e, char *err, size_t errlen)
{
    const uint8_t *p;
    size_t len;
    int rc = hrd_run_next_packed(r, &p, &len, e, err, errlen);

    if (rc != 1)
        return rc;
    return hrd_run_unpack_key(r, p, len, k, err, errlen) == 0 ? 1 : -1;
}

void hrd_run_close(struct hrd_run_reader *r)
{
    if (r->f != NULL)
        fclose(r->f);
    free(r->buf);
    r->f = NULL;
    r->buf = NULL;
}

int hrd_run_next_raw(struct hrd_run_reader *r, uint8_t *type,
                     const uint8_t **p, size_t *len, char *err,
                     size_t errlen)
{
    int rc = next_record(r, type, len, err, errlen);

    if (rc == 1)
        *p = r->buf;
    return rc;
}

int hrd_run_skim(struct hrd_run_reader *r, size_t want, uint8_t *type,
                 size_t *len, const uint8_t **p, size_t *got, char *err,
                 size_t errlen)
{
    uint8_t hd[HRD_REC_HEADER];
    uint32_t l, crc;
    int rc = record_head(r, hd, &l, &crc, err, errlen);

    if (rc <= 0)
        return rc;
    want = want < l ? want : l;
    if (reader_room(r, want, err, errlen) != 0)
        return -1;
    if (fread(r->buf, 1, want, r->f) != want ||
        (want < l && fseeko(r->f, (off_t)(l - want), SEEK_CUR) != 0)) {
        snprintf(err, errlen, "%s: cannot read: %s", r->path,
                 ferror(r->f) ? strerror(errno) : "file shrank");
        return -1;
    }
    r->offset += HRD_REC_HEADER + l;
    r->crc = crc;
    *type = hd[8];
    *len = l;
    *p = r->buf;
    *got = want;
    return 1;
}

int hrd_run_reread(struct hrd_run_reader *r, uint64_t offset, size_t len,
                   uint32_t crc, uint8_t *type, const uint8_t **p,
                   char *err, size_t errlen)
{
    size_t n = 0;
    int rc;

    if (fseeko(r->f, (off_t)offset, SEEK_SET) != 0) {
        snprintf(err, errlen, "%s: cannot read: %s", r->path,
                 strerror(errno));
        return -1;
    }
    r->offset = offset;
    rc = next_record(r, type, &n, err, errlen);
    if (rc < 0)
        return -1;
    if (rc == 0 || n != len || r->crc != crc) {
        snprintf(err, errlen, "%s: changed while it was read (the record "
                 "at byte %llu)", r->path, (unsigned long long)offset);
        return -1;
    }
    *p = r->buf;
    return 0;
}

int hrd_run_load(struct hrd_runload *l, const char *path,
                 Hostrange__RunHeader **hp, Hostrange__RunEnd **ep,
                 hrd_run_progress_fn progress, void *ctx, char *err,
                 size_t errlen)
{
    struct hrd_run_reader r;
    Hostrange__RunHeader *h = NULL;
    Hostrange__RunEnd *e = NULL;
    uint64_t keys = 0, next_report = 0;
    char why[512];
    int rc;

    if (hrd_run_open(&r, path, &h, err, errlen) != 0)
        return -1;
    for (;;) {
        Hostrange__RunKey *k = NULL;
        uint64_t at = r.offset;

        rc = hrd_run_next(&r, &k, &e, err, errlen);
        if (rc < 0)
            goto fail;
        if (rc == 2)
            break;
        rc = hrd_runload_key(l, k, why, sizeof why);
        hostrange__run_key__free_unpacked(k, NULL);
        if (rc == -EINVAL) {
            snprintf(err, errlen, "%s: damaged at byte %llu (%s)", path,
                     (unsigned long long)at, why);
            goto fail;
        }
        if (rc != 0) {
            snprintf(err, errlen, "%s: out of memory", path);
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
        goto fail;
    }
    if (hrd_runload_end(l, e) != 0) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto fail;
    }
    if (progress != NULL)
        progress(ctx, r.size, r.size);
    hrd_run_close(&r);
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
    hrd_run_close(&r);
    if (h != NULL)
        hostrange__run_header__free_unpacked(h, NULL);
    if (e != NULL)
        hostrange__run_end__free_unpacked(e, NULL);
    return -1;
}

void hrd_run_hostname(char *buf, size_t len)
{
    if (gethostname(buf, len) != 0 || buf[0] == '\0')
        snprintf(buf, len, "unknown");
    buf[len - 1] = '\0';
}
