/*
 * The state directory: a journal of every batch and reset, and a snapshot
 * of the whole state, so that what was acknowledged survives the daemon
 * being killed (SIGKILL) and what was aggregated survives a restart.
 *
 * Files: `snapshot` (snapshot.h), which covers the journals up to some
 * generation G; `journal.N` (recfile.h records 'B' and 'X'), generations
 * N > G, replayed in order on top of it; `lock`, flocked by the daemon that
 * uses the directory. A batch is written to the current journal (one
 * write, before it is acknowledged) and the journal is fdatasync'ed every
 * `fsync_interval_ms` (0: before every acknowledgement): a write that has
 * returned survives the death of the process; a sync bounds what a crash of
 * the machine can take.
 *
 * Compaction: a new journal generation is started, and a child process
 * (fork, so the daemon keeps serving) writes the snapshot to a temporary
 * file beside it (`snapshot.tmp.XXXXXX`, removed at the next start when
 * its writer died), fsyncs it, renames it over `snapshot` and fsyncs the
 * directory; when it has succeeded the journals it covers are removed. A
 * crash in between leaves journals the snapshot covers: they are not
 * replayed. At a clean stop the
 * snapshot is written in the daemon itself and every journal removed.
 *
 * Damage found while loading (a corrupt or truncated snapshot or journal)
 * is reported through the log function; what was read before it is kept,
 * the damaged file is renamed to NAME.damaged-TIME (never removed), and a
 * fresh snapshot is written at once.
 *
 * When the directory cannot be written (missing permission, full disk),
 * the state is "degraded": batches are answered RETRY (ingest.h) and resets
 * refused, the daemon keeps serving from memory, and the journal is tried
 * again on every batch (reopened at most once a second).
 */
#ifndef HOSTRANGE_STATE_H
#define HOSTRANGE_STATE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/control.h"
#include "daemon/ingest.h"
#include "lib/run/recfile.h"

typedef void (*hrd_log_fn)(void *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

struct hrd_state_opts {
    uint64_t fsync_interval_ms;   /* 0: sync before every acknowledgement */
    uint64_t snapshot_interval_ms; /* compact at least this often */
    uint64_t journal_max_bytes;   /* compact when the journal is larger */
};

struct hrd_state {
    struct hrd_state_info info;   /* for stats */
    struct hrd_state_opts opts;
    struct hra_agg *agg;
    struct hrd_ingest *in;
    hrd_log_fn log;
    void *log_ctx;
    int dirfd;
    int lockfd;
    struct hrr_recfile journal;   /* fd -1 when there is none */
    uint64_t gen;                 /* of the current journal */
    int dirty;                    /* written since the last sync */
    uint64_t last_sync_ms;
    uint64_t last_snapshot_ms;
    uint64_t last_open_ms;        /* of the last attempt to open a journal */
    pid_t child;                  /* compaction in progress, or 0 */
    uint64_t child_covers;        /* the generations it covers */
};

/*
 * Opens (creating it 0700 when missing) and locks dir, loads the snapshot
 * and replays the journals into agg and in (which are empty), and starts a
 * journal. Returns 0, also when the directory cannot be written (the state
 * is then degraded and info says why); or, with a one-line reason in err,
 * -EPERM (owned by another user, or writable by group or others) or -EBUSY
 * (another daemon uses it).
 */
int hrd_state_open(struct hrd_state *s, const char *dir,
                   const struct hrd_state_opts *opts, struct hra_agg *agg,
                   struct hrd_ingest *in, hrd_log_fn log, void *log_ctx,
                   char *err, size_t errlen);

/* The journal hooks of ingest (a batch) and control (a reset); ctx is the
 * struct hrd_state. Return 0 or a negative errno. */
int hrd_state_journal_batch(void *ctx, const uint8_t *msg, size_t len);
int hrd_state_journal_reset(void *ctx, const uint8_t *msg, size_t len);

/* Syncs what the journal holds now (ctx is the struct hrd_state): the
 * spool's files are removed only after their batches are synced. Returns 0
 * or a negative errno (the state then says why). */
int hrd_state_sync(void *ctx);

/* Housekeeping, to be called about once a second with the monotonic time:
 * syncs, reaps a finished compaction, starts one when due, reopens a
 * missing journal. */
void hrd_state_tick(struct hrd_state *s, uint64_t now_ms);

/* Writes the snapshot now (in this process) and removes the journals it
 * covers. Returns 0 or a negative errno (logged). */
int hrd_state_snapshot_now(struct hrd_state *s);

/* Waits for a compaction in progress, writes the final snapshot, and
 * releases the directory. Returns 0 or the negative errno of the snapshot
 * (the journals then stay, so nothing is lost). Accepts a closed state. */
int hrd_state_close(struct hrd_state *s);

#endif
