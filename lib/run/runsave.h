/*
 * A run file written from the pages of a daemon's save (hostrangectl
 * save): each page's packed keys go to the file straight from the
 * reply's bytes, never decoded nor copied; its other fields are decoded.
 */
#ifndef HOSTRANGE_RUNSAVE_H
#define HOSTRANGE_RUNSAVE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/run/fingerprint.h"
#include "lib/run/run.h"
#include "lib/run/runmeta.h"

/*
 * Creates the run file `output` of a save (hrr_create): a header of
 * run format `format` with this host, the time now, this version, meta's
 * pairs, the machine's fingerprint fp and the run's id. Returns 0, or
 * -EIO with why in err.
 */
int hrr_runsave_create(struct hrr_writer *w, const char *output,
                       unsigned format, const struct hrr_meta *meta,
                       struct hrr_fingerprint *fp, char *id, char *err,
                       size_t errlen);

/* Bytes of a message that hrr_runsave_split keeps in place. */
struct hrr_span {
    const uint8_t *p;
    size_t len;
};

/*
 * Splits the protocol-buffer message p[0..n) in two without decoding it:
 * the values of every occurrence of the length-delimited field `field`
 * (pointers into p, appended to *spans), and a copy of all its other
 * fields (*rest, *restlen: a message of the same type without that field;
 * caller frees). So the bulk of a reply (the keys of a save page) is never
 * copied, while its other fields are decoded as usual from *rest. Returns
 * 0, -EINVAL when the message is malformed, or -ENOMEM.
 */
int hrr_runsave_split(const uint8_t *p, size_t n, uint32_t field,
                      struct hrr_span **spans, size_t *nspans,
                      size_t *capspans, uint8_t **rest, size_t *restlen);

/* What hrr_runsave_page returns when the page holds no run. */
#define HRR_RUNSAVE_NO_RUN 1

/*
 * Writes one page of a save to w, the file `output`: the packed keys
 * keys[0..nkeys) and the other fields of its SaveReply, save[0..savelen)
 * (NULL: the reply had none). Returns 0, either with the cursor of the
 * next page in cursor[0..*cursor_len) or, after the last page, with *last
 * set (w committed; the keys written in *saved); HRR_RUNSAVE_NO_RUN when
 * the page holds no run (w aborted); or -EIO with why in err (w aborted,
 * or its commit failed).
 */
int hrr_runsave_page(struct hrr_writer *w, const char *output,
                     const struct hrr_span *keys, size_t nkeys,
                     const uint8_t *save, size_t savelen, uint8_t cursor[16],
                     size_t *cursor_len, uint64_t *saved, int *last,
                     char *err, size_t errlen);

#endif
