/*
 * The spool: where a process that must exit while no daemon answers leaves
 * the batches it could not deliver, for the next daemon to take. Both ends
 * obey this file: the client writes spool files (client/spool.c), hostranged
 * reads them (daemon/spool.c).
 *
 * The folder HRP_SPOOL_NAME in the runtime directory is made by hostranged:
 * writable by exactly the users who may connect (the daemon's own user, and
 * with --group the members of that group), sticky, so that no client can
 * remove or replace another's file. A process writes its file under a
 * temporary name (HRP_SPOOL_TMP_SUFFIX), syncs it, and renames it to its
 * final name (HRP_SPOOL_SUFFIX), so a reader sees whole files only. Names
 * are `PID-INSTANCE` (the instance as 16 hex digits) and a suffix; a file
 * the daemon refuses gets HRP_SPOOL_ASIDE_SUFFIX added and stays.
 *
 * A spool file is HRP_SPOOL_MAGIC, then records, each a header of
 * HRP_SPOOL_REC_HEADER bytes and a payload:
 *
 *   u32 length of the payload (little-endian)
 *   u64 check: FNV-1a (64 bits) of the length's four bytes, the type byte
 *       and the payload (little-endian)
 *   u8  type
 *
 * The first record is HRP_SPOOL_REC_INFO (a SpoolInfo message of
 * proto/hostrange.proto: the process, its final counters, and what each
 * batch holds); HRP_SPOOL_REC_BATCH records follow, one Batch each, in the
 * order SpoolInfo lists them. A record whose check fails, whose length is
 * over its type's limit, or that ends early is damage: what comes before it
 * is good, nothing after it is read.
 */
#ifndef HOSTRANGE_SPOOL_H
#define HOSTRANGE_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "proto/protocol.h"

#define HRP_SPOOL_NAME "spool"
#define HRP_SPOOL_SUFFIX ".spool"
#define HRP_SPOOL_TMP_SUFFIX ".tmp"
#define HRP_SPOOL_ASIDE_SUFFIX ".rejected"

#define HRP_SPOOL_MAGIC "HRSPOOL\n"
#define HRP_SPOOL_MAGIC_LEN 8u
#define HRP_SPOOL_VERSION 1u
#define HRP_SPOOL_REC_HEADER 13u
#define HRP_SPOOL_REC_INFO 'I'
#define HRP_SPOOL_REC_BATCH 'B'
/* The largest payloads: a SpoolInfo, and a batch (as on the socket). */
#define HRP_SPOOL_INFO_MAX (16u * 1024u * 1024u)
#define HRP_SPOOL_BATCH_MAX HRP_MAX_INGEST_BYTES

/* The most a process writes to the spool by default, in MiB
 * (HOSTRANGE_SPOOL_MB): batches past it are dropped and counted lost. */
#define HRP_SPOOL_MB_DEFAULT 64u

/* The mode of the folder: with a group that may connect, the group may
 * add files but not list or read the folder (setgid, so that files get
 * the group and the daemon can read them); without, the daemon's user
 * only. */
#define HRP_SPOOL_DIR_MODE 01700
#define HRP_SPOOL_DIR_MODE_GROUP 03730

/* The longest file name: "PID-INSTANCE" and the longest suffix. */
#define HRP_SPOOL_FILE_NAME_MAX 64u

/*
 * Writes the name of the spool file of process (pid, instance) with
 * `suffix` (HRP_SPOOL_SUFFIX or HRP_SPOOL_TMP_SUFFIX) to buf. Returns 0 or
 * -ENAMETOOLONG.
 */
int hrp_spool_file_name(char *buf, size_t len, uint32_t pid,
                        uint64_t instance, const char *suffix);

/* 1 when `name` is a spool file's final name (PID-INSTANCE.spool), with
 * the pid and instance it names in *pid and *instance; 0 otherwise. */
int hrp_spool_file_parse(const char *name, uint32_t *pid,
                         uint64_t *instance);

/* The check of a record of `type` with payload p[0..len). */
uint64_t hrp_spool_check(uint8_t type, const void *p, uint32_t len);

/* Writes the header of a record of `type` with payload p[0..len) to h. */
void hrp_spool_rec_header(uint8_t h[HRP_SPOOL_REC_HEADER], uint8_t type,
                          const void *p, uint32_t len);

/* Reads a record header: its type, payload length and check. */
void hrp_spool_rec_parse(const uint8_t h[HRP_SPOOL_REC_HEADER],
                         uint8_t *type, uint32_t *len, uint64_t *check);

/* The largest payload of a record of `type`, 0 for an unknown type. */
uint32_t hrp_spool_rec_max(uint8_t type);

#endif
