/*
 * Record files: the format of the journal and of the snapshot in the state
 * directory, with a writer and a reader.
 *
 * A record file starts with an 8-byte magic naming its kind. Then come
 * records, each a 9-byte header followed by its payload:
 *
 *   u32 length of the payload (little-endian)
 *   u32 CRC-32C of the length's four bytes, the type byte and the payload
 *   u8  type
 *
 * A record whose checksum does not match, whose length is absurd, or that
 * ends before its length says is damage: a reader reports where and why,
 * and everything before it is good.
 *
 * The writer appends whole records with one write each (hrr_recfile_append)
 * or collects them in a buffer first (hrr_recfile_put, for snapshots). When
 * a write fails, the file is cut back to its last whole record, so the
 * file stays a sequence of whole records as far as the kernel will let us.
 */
#ifndef HOSTRANGE_RECFILE_H
#define HOSTRANGE_RECFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "lib/run/crc32c.h"

#define HRR_JOURNAL_MAGIC "HRJRNL1\n"
#define HRR_SNAPSHOT_MAGIC "HRSNAP1\n"
#define HRR_REC_HEADER 9u
/* No record is larger than this; a larger length is damage. */
#define HRR_REC_MAX ((size_t)1 << 31)

/*
 * The framing of a record, the one rule of every record file (journal,
 * snapshot, run file): 4 bytes of payload length and 4 of CRC-32C (both
 * little-endian), then the type byte, then the payload. The checksum
 * covers the length bytes, the type and the payload.
 */
/* The checksum of a record of `type` and payload length len, whose
 * payload is the n pieces at piece (len bytes in all). */
uint32_t hrr_rec_crc(uint8_t type, uint32_t len, const struct iovec *piece,
                     int n);
/* Writes the framing of a record of `type`, len and crc into h. */
void hrr_rec_head_put(uint8_t h[HRR_REC_HEADER], uint8_t type, uint32_t len,
                      uint32_t crc);
/* Reads the framing at h: the payload length, the checksum it gives and
 * the type. */
void hrr_rec_head_get(const uint8_t h[HRR_REC_HEADER], uint32_t *len,
                      uint32_t *crc, uint8_t *type);

/* Journal record types. */
#define HRR_REC_BATCH 'B' /* a Batch as received */
#define HRR_REC_RESET 'X' /* a ResetRequest */

struct hrr_recfile {
    int fd;
    uint64_t size;    /* bytes of whole records (and the magic) written */
    uint64_t records;
    uint8_t *buf;     /* hrr_recfile_put's buffer */
    size_t len, cap;
};

/*
 * Opens dirfd/name for appending, creating it (mode 0600) with its magic
 * when missing or empty. An existing file is appended to after its last
 * byte (the caller has checked it). Returns 0 or a negative errno.
 */
int hrr_recfile_open(struct hrr_recfile *f, int dirfd, const char *name,
                     const char *magic);

/* Appends one record with one write. Returns 0, or a negative errno with
 * the file cut back to what it was (-EIO when even that failed). */
int hrr_recfile_append(struct hrr_recfile *f, uint8_t type, const void *p,
                       size_t len);

/* Adds one record to the buffer, writing the buffer out when it is large.
 * Returns 0 or a negative errno. */
int hrr_recfile_put(struct hrr_recfile *f, uint8_t type, const void *p,
                    size_t len);

/* Writes out the buffer. Returns 0 or a negative errno. */
int hrr_recfile_flush(struct hrr_recfile *f);

/* fdatasync. Returns 0 or a negative errno. */
int hrr_recfile_sync(struct hrr_recfile *f);

/* Closes the file and frees the buffer (unwritten records are lost);
 * accepts a closed one. */
void hrr_recfile_close(struct hrr_recfile *f);

struct hrr_recreader {
    int fd;
    uint64_t offset;  /* of the next record */
    uint8_t *buf;
    size_t cap;
    char why[128];    /* what the damage is, after a negative return */
};

/* Opens dirfd/name for reading and checks its magic. Returns 0, -ENOENT,
 * -EBADMSG (not this kind of file; why says so) or another negative errno. */
int hrr_recreader_open(struct hrr_recreader *r, int dirfd, const char *name,
                       const char *magic);

/*
 * Reads the next record: returns 1 with its type and payload (valid until
 * the next call), 0 at the end of the file, or -EBADMSG at damage (why says
 * what; r->offset is where the good part ends) or another negative errno.
 */
int hrr_recreader_next(struct hrr_recreader *r, uint8_t *type,
                       const uint8_t **data, size_t *len);

void hrr_recreader_close(struct hrr_recreader *r);

#endif
