/*
 * The spool folder of the runtime directory (proto/spool.h), as hostranged
 * keeps and reads it: the files processes left when they had to exit while
 * no daemon answered.
 *
 * hostranged makes the folder (HRP_SPOOL_DIR_MODE, or with a group
 * HRP_SPOOL_DIR_MODE_GROUP and that group), and takes every file in it at
 * start and whenever it changes, a bounded number of batches at a time so
 * that the sockets are served in between. A file is taken only when it is
 * a regular file with one link, owned by a user who may connect (the
 * daemon's own user, root, or with a group a member of it), and named after
 * the process its SpoolInfo names.
 *
 * Each batch goes through hrd_ingest_handle, as if it came from the
 * socket: the same checks, the journal, and the duplicate detection by
 * (pid, instance, sequence number), so a batch the daemon already holds
 * (its acknowledgement was lost) is not taken twice, and a file taken again
 * after a crash changes nothing. The process's last batch comes last, with
 * the events of the batches that could not be taken (rejected, damaged)
 * added to its lost counts per label set: the report's `lost` then holds
 * them under their node ids. A file is removed once all of it is journaled
 * and the journal synced (the sync hook); a damaged or foreign one is
 * renamed with HRP_SPOOL_ASIDE_SUFFIX and counted. When the journal
 * refuses a batch (ingest answers RETRY) or cannot be synced, the file is
 * left for a later look.
 */
#ifndef HOSTRANGE_DAEMON_SPOOL_H
#define HOSTRANGE_DAEMON_SPOOL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/control.h"
#include "daemon/ingest.h"
#include "daemon/state.h"

/* A temporary file older than this is a writer's that died: removed. */
#define HRD_SPOOL_TMP_AGE_S 60

struct hrd_spool_file;

struct hrd_spool {
    struct hrd_spool_info info; /* for stats */
    struct hrd_ingest *in;
    hrd_log_fn log;
    void *log_ctx;
    int dirfd;
    gid_t gid;                  /* the group that may connect, or -1 */
    char **names;               /* the files found at the last look */
    size_t nnames, next;
    struct hrd_spool_file *cur; /* the file being taken, or NULL */
    int dirty;                  /* the folder changed since the last look */
    int deferred;               /* a file waits for the journal */
    /* Makes what was journaled durable before a file's name goes (NULL:
     * nothing to do). Returns 0 or a negative errno. */
    int (*sync)(void *ctx);
    void *sync_ctx;
};

/*
 * Makes (or checks and fixes the mode of) the folder HRP_SPOOL_NAME in
 * runtime directory `rundir`, for group gid ((gid_t)-1: none), and readies
 * sp to take its files into `in`. Returns 0, or a negative errno with a
 * one-line reason in err: -EPERM when it is not a directory of the daemon's
 * user or cannot be given its mode or group.
 */
int hrd_spool_open(struct hrd_spool *sp, const char *rundir, gid_t gid,
                   struct hrd_ingest *in, hrd_log_fn log, void *log_ctx,
                   char *err, size_t errlen);

/* The folder changed (or may have): the next step looks at it again. */
void hrd_spool_poke(struct hrd_spool *sp);

/*
 * Takes up to about `budget` batches from the folder. Returns 1 when there
 * is more to do now, 0 when there is not (the folder is done, or a file
 * waits for the journal: hrd_spool_poke again later).
 */
int hrd_spool_step(struct hrd_spool *sp, unsigned budget);

/* Stops (a file being taken is left for the next daemon) and frees sp's
 * resources; accepts one never opened. */
void hrd_spool_close(struct hrd_spool *sp);

#endif
