/* A run file written from the pages of a daemon's save (see runsave.h). */
#include "config.h"

#include "lib/run/runsave.h"
#include "lib/run/runfields.h"
#include "lib/util/grow.h"
#include "proto/stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

int hrr_runsave_split(const uint8_t *p, size_t n, uint32_t field,
                      struct hrr_span **spans, size_t *nspans,
                      size_t *capspans, uint8_t **rest, size_t *restlen)
{
    const uint8_t *end = p + n;

    *rest = malloc(n + 1);
    *restlen = 0;
    if (*rest == NULL)
        return -ENOMEM;
    while (p < end) {
        const uint8_t *start = p;
        uint64_t tag, v;

        if (hrp_get_varint(&p, end, &tag) != 0)
            return -EINVAL;
        switch (tag & 7) {
        case 0:
            if (hrp_get_varint(&p, end, &v) != 0)
                return -EINVAL;
            break;
        case 1:
        case 5:
            if ((size_t)(end - p) < ((tag & 7) == 1 ? 8u : 4u))
                return -EINVAL;
            p += (tag & 7) == 1 ? 8 : 4;
            break;
        case 2:
            if (hrp_get_varint(&p, end, &v) != 0 || v > (uint64_t)(end - p))
                return -EINVAL;
            if (tag >> 3 == field) {
                if (hru_grow(spans, capspans, *nspans + 1, sizeof **spans,
                             256) != 0)
                    return -ENOMEM;
                (*spans)[(*nspans)++] = (struct hrr_span){ p, (size_t)v };
                p += v;
                continue;
            }
            p += v;
            break;
        default:
            return -EINVAL;
        }
        memcpy(*rest + *restlen, start, (size_t)(p - start));
        *restlen += (size_t)(p - start);
    }
    return 0;
}

int hrr_runsave_page(struct hrr_writer *w, const char *output,
                     const struct hrr_span *keys, size_t nkeys,
                     const uint8_t *save, size_t savelen, uint8_t cursor[16],
                     size_t *cursor_len, uint64_t *saved, int *last,
                     char *err, size_t errlen)
{
    Hostrange__SaveReply *s = NULL;
    int rc = -EIO, bad = 0;

    if (save != NULL)
        s = hostrange__save_reply__unpack(NULL, savelen, save);
    if (s == NULL || s->next_cursor.len > 16 ||
        (s->next_cursor.len == 0 && s->end == NULL)) {
        hrr_abort(w);
        rc = HRR_RUNSAVE_NO_RUN;
        goto out;
    }
    /* Packed keys go to the file as they are, from the reply (a daemon
     * from before they were sent packed sends messages). */
    if (nkeys != 0) {
        struct iovec *iov = malloc(nkeys * sizeof *iov);

        for (size_t i = 0; iov != NULL && i < nkeys; i++) {
            iov[i].iov_base = (void *)keys[i].p;
            iov[i].iov_len = keys[i].len;
        }
        if (iov == NULL)
            snprintf(err, errlen, "%s: out of memory", output);
        bad = iov == NULL ||
              hrr_put_packed_keys(w, iov, nkeys, err, errlen) != 0;
        free(iov);
    }
    for (size_t i = 0; !bad && i < s->n_keys; i++)
        bad = hrr_put_key(w, s->keys[i], err, errlen) != 0;
    if (bad) {
        hrr_abort(w);
        goto out;
    }
    if (s->next_cursor.len == 0) {
        *saved = w->keys;
        if (hrr_commit(w, s->end, err, errlen) != 0)
            goto out;
        *last = 1;
        rc = 0;
        goto out;
    }
    memcpy(cursor, s->next_cursor.data, s->next_cursor.len);
    *cursor_len = s->next_cursor.len;
    rc = 0;
out:
    if (s != NULL)
        hostrange__save_reply__free_unpacked(s, NULL);
    return rc;
}

int hrr_runsave_create(struct hrr_writer *w, const char *output,
                       unsigned format, const struct hrr_meta *meta,
                       struct hrr_fingerprint *fp, char *id, char *err,
                       size_t errlen)
{
    Hostrange__RunHeader h = HOSTRANGE__RUN_HEADER__INIT;
    char host[256];

    hrr_provenance(&h, format, host, sizeof host, meta->pairs, meta->n);
    h.fingerprint = &fp->m;
    h.id = id;
    return hrr_create(w, output, &h, err, errlen) == 0 ? 0 : -EIO;
}
