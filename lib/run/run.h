/*
 * Run files (.hrs): writing and reading the layout documented in
 * proto/hostrange.proto (magic, checksummed records: RunHeader, RunKey...,
 * RunEnd; a daemon's snapshot has a RunState after the header, which the
 * readers of runs skip).
 *
 * A writer writes to a temporary file next to the target (PATH.tmp.XXXXXX)
 * and, on commit, syncs it and renames it over the target, so the target is
 * either the complete new file or untouched; abort removes the temporary
 * file. A reader refuses, with one line naming the file, a file that is
 * not a run file, is of a newer format, is damaged (a checksum that does
 * not match, a record that does not decode) or is truncated (no RunEnd).
 * Every error message starts with the file's name.
 *
 * Each function that can fail returns 0 (or a count or kind it names), or
 * a negative errno with a one-line reason in err: -EINVAL for a file that
 * is not a run file, is of a newer layout or format, or is damaged or
 * truncated; -EIO for a file that changed while it was read; -EMSGSIZE
 * for a record too large to write; -ENOMEM; or the errno of the system
 * call that failed (open, read, write, rename...).
 */
#ifndef HOSTRANGE_RUN_H
#define HOSTRANGE_RUN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/uio.h>

#include "lib/run/runkey.h"
#include "lib/run/runload.h"
#include "lib/run/runput.h"
#include "lib/util/atomic.h"
#include "proto/hostrange.pb-c.h"

#define HRR_MAGIC "HRSRUN1\n"
/* The record of a daemon's state (RunState), right after the header of a
 * state directory's snapshot (runstate.h); readers of runs skip it. */
#define HRR_REC_STATE 'S'
/* HRR_FORMAT_NEWEST: runkey.h. */

/* Records go out through out: gathered there and written a buffer at a
 * time; a record larger than the buffer is written at once with what is
 * gathered before it (one system call, no copy of its bytes). */
struct hrr_writer {
    struct hru_atomic file; /* fd -1 when closed */
    uint64_t keys;
    uint64_t bytes;
    uint8_t *buf;     /* scratch for packing a record */
    size_t cap;
    uint8_t *out;     /* bytes gathered, not yet written */
    size_t out_len;
    struct hrr_runput_tmp kt; /* hrr_put_agg_key's scratch */
};

/* Creates the temporary file and writes the magic and h. Returns 0, or a
 * negative errno with a one-line reason in err. */
int hrr_create(struct hrr_writer *w, const char *path,
                   const Hostrange__RunHeader *h, char *err, size_t errlen);
/* Writes the daemon's state s (before any key). Returns 0, or a negative
 * errno with a one-line reason in err (the writer must then be
 * aborted). */
int hrr_put_state(struct hrr_writer *w, const Hostrange__RunState *s,
                      char *err, size_t errlen);
/* Returns 0, or a negative errno with a one-line reason in err (the
 * writer must then be aborted). */
int hrr_put_key(struct hrr_writer *w, const Hostrange__RunKey *k,
                    char *err, size_t errlen);
/* The same for a key already packed (a RunKey message of len bytes at p,
 * as hostranged sends them for a save). */
int hrr_put_packed(struct hrr_writer *w, const void *p, size_t len,
                       char *err, size_t errlen);
/* The same for n packed RunKeys (key[i].iov_len bytes at key[i].iov_base)
 * written straight from the caller's memory, with what is gathered before
 * them: a write for every 256 keys, their bytes not copied. */
int hrr_put_packed_keys(struct hrr_writer *w, const struct iovec *key,
                            size_t n, char *err, size_t errlen);
/* The same for a packed RunKey read from a run file as it is, whose
 * record's checksum crc (hrr_reader.crc) is known to be right. */
int hrr_put_copied(struct hrr_writer *w, const void *p, size_t len,
                       uint32_t crc, char *err, size_t errlen);
/* The same for a packed RunKey written with a part replaced: the record
 * holds p[0, from), then mid[0, midlen), then p[to, len). */
int hrr_put_spliced(struct hrr_writer *w, const void *p, size_t len,
                        size_t from, size_t to, const void *mid,
                        size_t midlen, char *err, size_t errlen);
/* Writes key k of a, coded for run format `format` (runkey.h): the exact
 * keys of format 1 written by hand (hrr_runput_key), the others through
 * hrr_runkey_from. Returns 0, or a negative errno with a one-line reason
 * in err. */
int hrr_put_agg_key(struct hrr_writer *w, struct hra_agg *a,
                        const struct hra_key *k, int format, char *err,
                        size_t errlen);
/* Writes every key of a, in creation order, coded for run format `format`
 * (runkey.h). Returns 0, or a negative errno with a one-line reason in
 * err. */
int hrr_put_agg(struct hrr_writer *w, struct hra_agg *a, int format,
                    char *err, size_t errlen);
/* Writes e (with e->keys set to the keys written), syncs, renames. Returns
 * 0, or a negative errno with a one-line reason in err (the temporary
 * file is removed then). */
int hrr_commit(struct hrr_writer *w, Hostrange__RunEnd *e,
                   char *err, size_t errlen);
/* Removes the temporary file and frees the writer; accepts a committed or
 * never-created one. */
void hrr_abort(struct hrr_writer *w);

/* A reader reads the file at the offsets it needs (pread): buf holds the
 * bytes read last, buf_len of them from file offset buf_off, and what a
 * read returns points into it. */
struct hrr_reader {
    int fd;            /* -1 when closed */
    const char *path;
    uint64_t offset;   /* of the next record */
    uint64_t size;     /* of the file */
    uint8_t *buf;
    size_t cap;
    uint64_t buf_off;
    size_t buf_len;
    uint64_t whole_end; /* the end of the last record read whole */
    uint32_t crc;      /* of the last record read */
};

/*
 * Opens path and reads its header into *h (caller frees with
 * hostrange__run_header__free_unpacked). Returns 0, or a negative errno
 * with a one-line reason (starting with the path) in err.
 */
int hrr_open(struct hrr_reader *r, const char *path,
                 Hostrange__RunHeader **h, char *err, size_t errlen);
/* Reads the daemon's state record when it is the next record (just after
 * hrr_open): returns 1 with it in *s (caller frees with
 * hostrange__run_state__free_unpacked), 0 when the next record is another
 * (nothing is read then), or a negative errno with a one-line reason in
 * err. */
int hrr_read_state(struct hrr_reader *r, Hostrange__RunState **s,
                       char *err, size_t errlen);
/* Reads the next record: returns 1 with a key in *k, 2 with the end in *e
 * (caller frees either), or a negative errno with a one-line reason in
 * err. A state record (HRR_REC_STATE) is skipped, here and by
 * hrr_next_packed. */
int hrr_next(struct hrr_reader *r, Hostrange__RunKey **k,
                 Hostrange__RunEnd **e, char *err, size_t errlen);
/*
 * The same, with a key left packed: returns 1 with its payload (len bytes
 * at *p, in the reader's buffer, valid until the next read), for the
 * caller to read in place (runscan.h) or to unpack with
 * hrr_unpack_key, which fails as hrr_next does on a key that does
 * not decode (0, or -EINVAL or -ENOMEM with a one-line reason in err).
 */
int hrr_next_packed(struct hrr_reader *r, const uint8_t **p,
                        size_t *len, Hostrange__RunEnd **e, char *err,
                        size_t errlen);
int hrr_unpack_key(const struct hrr_reader *r, const uint8_t *p,
                       size_t len, Hostrange__RunKey **k, char *err,
                       size_t errlen);
void hrr_close(struct hrr_reader *r);
/* Gives back the reader's buffer when it is larger than a small record
 * needs (one reader per input of a merge would else each keep room for
 * its largest record, or for what it read ahead). */
void hrr_reader_trim(struct hrr_reader *r);

/*
 * Reads the next record as it is, its checksum checked: returns 1 with its
 * type and its payload (len bytes at *p, in the reader's buffer, valid
 * until the next read), 0 at the end of the file, or a negative errno with
 * a one-line reason in err. The record started at r->offset before the
 * call.
 */
int hrr_next_raw(struct hrr_reader *r, uint8_t *type,
                     const uint8_t **p, size_t *len, char *err,
                     size_t errlen);
/*
 * Reads the next record's framing and its first bytes only (at most
 * want, in *got), and moves past it: neither the rest nor the checksum is
 * read. Returns as hrr_next_raw, with r->crc the checksum the record
 * gives (hrr_reread checks it later).
 */
int hrr_skim(struct hrr_reader *r, size_t want, uint8_t *type,
                 size_t *len, const uint8_t **p, size_t *got, char *err,
                 size_t errlen);
/* Reads the record at `offset` whole, as hrr_next_raw (its checksum
 * checked; its type in *type), and checks that it is still the one of len
 * bytes and checksum crc seen there before. Returns 0, or a negative errno
 * with a one-line reason in err (-EIO when it is not the same record). */
int hrr_reread(struct hrr_reader *r, uint64_t offset, size_t len,
                   uint32_t crc, uint8_t *type, const uint8_t **p,
                   char *err, size_t errlen);

/* Called now and then while a file is read: bytes read of size. */
typedef void (*hrr_progress_fn)(void *ctx, uint64_t done, uint64_t size);

/*
 * Reads a whole run into l (its aggregation): every key, then its end. On
 * success returns 0 and, when h or e is not NULL, the header and the end
 * (caller frees). Returns a negative errno with a one-line reason in err
 * otherwise (the aggregation may then hold part of the file).
 */
int hrr_load(struct hrr_runload *l, const char *path,
                 Hostrange__RunHeader **h, Hostrange__RunEnd **e,
                 hrr_progress_fn progress, void *ctx, char *err,
                 size_t errlen);

/*
 * Reads a whole run into agg, initialized here (caller finis it either
 * way) without limits but those of the file (a reader's: dump --from,
 * plot, the history), and, when end is not NULL, its end (caller frees).
 * Returns 0, or a negative errno with a one-line reason in err.
 */
int hrr_read(const char *path, struct hra_agg *agg,
                 Hostrange__RunEnd **end, hrr_progress_fn progress,
                 void *ctx, char *err, size_t errlen);

/* A run read whole for a reader: its keys in an aggregation (the
 * caller's), its end. */
struct hrr_whole {
    struct hra_agg *agg;
    Hostrange__RunEnd *end;
};

/* hrr_read into r (r->agg initialized here; hrr_whole_fini, which
 * finis it and frees the end, is due either way). Returns 0, or a
 * negative errno with why in err. */
int hrr_read_whole(struct hrr_whole *r, const char *path,
                       hrr_progress_fn progress, void *ctx, char *err,
                       size_t errlen);
void hrr_whole_fini(struct hrr_whole *r);

/* The host name, for headers ("unknown" when it cannot be had). */
void hrr_hostname(char *buf, size_t len);

/* Sets a run header's provenance: format (HRR_FORMAT_SORTED, or
 * _EVENTS), this host (written to host[0..hostlen)), the time now, this
 * version, and the meta pairs given (borrowed). */
void hrr_provenance(Hostrange__RunHeader *h, unsigned format, char *host,
                        size_t hostlen, Hostrange__RunMeta **meta,
                        size_t nmeta);

#endif
