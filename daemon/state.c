/* The state directory: journal, snapshots, loading (see state.h). */
#include "config.h"

#include "daemon/state.h"
#include "lib/agg/agg_impl.h"
#include "daemon/snapshot.h"
#include "proto/monotonic.h"
#include "lib/util/grow.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SNAPSHOT "snapshot"
/* The temporary files of snapshots being written (lib/util/atomic.h:
 * snapshot.tmp.XXXXXX; snapshot.tmp in earlier releases). */
#define SNAPSHOT_TMP "snapshot.tmp"
#define LOCK "lock"
#define JOURNAL_PREFIX "journal."
/* Least time between two attempts to open a journal, and between two log
 * lines about the same trouble. */
#define REOPEN_MS 1000u
#define RELOG_MS 60000u

static void journal_name(char *buf, size_t len, uint64_t gen)
{
    snprintf(buf, len, JOURNAL_PREFIX "%" PRIu64, gen);
}

/* The generation of a journal file name, or 0 for any other name. */
static uint64_t journal_gen(const char *name)
{
    const char *p = name + strlen(JOURNAL_PREFIX);
    char *end;
    uint64_t g;

    if (strncmp(name, JOURNAL_PREFIX, strlen(JOURNAL_PREFIX)) != 0 ||
        *p < '1' || *p > '9')
        return 0;
    errno = 0;
    g = strtoull(p, &end, 10);
    return (errno == 0 && *end == '\0') ? g : 0;
}

/* Records trouble writing the directory: the state becomes degraded. */
static void trouble(struct hrd_state *s, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static uint64_t last_trouble_log;

static void trouble(struct hrd_state *s, int err, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    uint64_t now = hrp_mono_ms();
    int was = s->info.degraded;

    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(s->info.last_error, sizeof s->info.last_error, "%s: %s", what,
             strerror(err));
    s->info.degraded = 1;
    s->info.write_errors++;
    if (!was || now - last_trouble_log >= RELOG_MS) {
        s->log(s->log_ctx, "state: %s; batches are answered `retry` and "
               "kept by their clients until it can be written",
               s->info.last_error);
        last_trouble_log = now;
    }
}

static void recovered(struct hrd_state *s)
{
    if (!s->info.degraded)
        return;
    s->info.degraded = 0;
    s->log(s->log_ctx, "state: %s/" JOURNAL_PREFIX "%" PRIu64
           " can be written again", s->info.dir, s->gen);
}

/*
 * Makes (0700) and opens the state directory and checks its owner and
 * mode. Returns 0; -EPERM with a reason in err (another owner, or writable
 * by others); or another negative errno when it cannot be made or opened
 * (noted as trouble: the state is degraded).
 */
static int dir_open(struct hrd_state *s, char *err, size_t errlen)
{
    const char *dir = s->info.dir;
    struct stat st;
    int e;

    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        e = errno;
        trouble(s, e, "cannot create the state directory %s", dir);
        return -e;
    }
    s->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (s->dirfd < 0) {
        e = errno;
        trouble(s, e, "cannot open the state directory %s", dir);
        return -e;
    }
    if (fstat(s->dirfd, &st) != 0 || st.st_uid != geteuid()) {
        snprintf(err, errlen, "state directory %s is owned by uid %u, not "
                 "by this user (uid %u); refusing to use it", dir,
                 (unsigned)st.st_uid, (unsigned)geteuid());
    } else if ((st.st_mode & 0022) != 0) {
        snprintf(err, errlen, "state directory %s has mode %04o: it must not "
                 "be group- or world-writable; refusing to use it", dir,
                 (unsigned)(st.st_mode & 07777));
    } else {
        return 0;
    }
    close(s->dirfd);
    s->dirfd = -1;
    return -EPERM;
}

/* Opens the journal of the current generation. */
static int journal_open(struct hrd_state *s)
{
    char name[64];
    int rc;

    s->last_open_ms = hrp_mono_ms();
    if (s->dirfd < 0) {
        /* A directory that could not be made at the start may be made
         * now (it held nothing to load). */
        char err[4400];
        rc = dir_open(s, err, sizeof err);
        if (rc == -EPERM)
            trouble(s, EPERM, "%s", err);
        if (rc != 0)
            return rc;
        if (s->gen == 0)
            s->gen = 1;
    }
    /* A directory that could not be written at the start was not locked:
     * lock it before writing to it. */
    if (s->lockfd < 0) {
        int fd = openat(s->dirfd, LOCK, O_RDWR | O_CREAT | O_CLOEXEC |
                                            O_NOFOLLOW, 0600);
        if (fd < 0) {
            rc = -errno;
            trouble(s, -rc, "cannot create %s/" LOCK, s->info.dir);
            return rc;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            close(fd);
            trouble(s, EBUSY, "another hostranged uses %s", s->info.dir);
            return -EBUSY;
        }
        s->lockfd = fd;
    }
    journal_name(name, sizeof name, s->gen);
    rc = hrr_recfile_open(&s->journal, s->dirfd, name, HRR_JOURNAL_MAGIC);
    if (rc != 0) {
        trouble(s, -rc, "cannot open %s/%s", s->info.dir, name);
        return rc;
    }
    s->info.journal_bytes = s->journal.size;
    recovered(s);
    return 0;
}

static void journal_close(struct hrd_state *s)
{
    if (s->journal.fd >= 0 && s->dirty)
        hrr_recfile_sync(&s->journal);
    hrr_recfile_close(&s->journal);
    s->dirty = 0;
}

/* Removes the files of the state directory that `doomed` picks: a
 * journal of a generation up to `covers`, or a snapshot's temporary file
 * (covers 0). */
static void remove_where(struct hrd_state *s,
                         int (*doomed)(const char *name, uint64_t covers),
                         uint64_t covers)
{
    DIR *d;
    struct dirent *e;
    int fd = dup(s->dirfd);

    if (fd < 0 || (d = fdopendir(fd)) == NULL) {
        if (fd >= 0)
            close(fd);
        return;
    }
    rewinddir(d);
    while ((e = readdir(d)) != NULL) {
        if (doomed(e->d_name, covers))
            unlinkat(s->dirfd, e->d_name, 0);
    }
    closedir(d);
}

static int covered_journal(const char *name, uint64_t covers)
{
    uint64_t g = journal_gen(name);

    return g != 0 && g <= covers;
}

/* A temporary file of a snapshot that was never renamed (its writer
 * died). */
static int snapshot_tmp(const char *name, uint64_t covers)
{
    (void)covers;
    return strncmp(name, SNAPSHOT_TMP, strlen(SNAPSHOT_TMP)) == 0;
}

/* Removes the journals of generations up to `covers`. */
static void remove_covered(struct hrd_state *s, uint64_t covers)
{
    remove_where(s, covered_journal, covers);
}

/* Removes the temporary files of snapshots whose writer died. */
static void remove_tmp(struct hrd_state *s)
{
    remove_where(s, snapshot_tmp, 0);
}

/* Writes the snapshot beside the old one, syncs it, renames it over it
 * and syncs the directory (so that the journals it covers can go). Used by
 * the daemon and by the compaction child. Returns 0 or a negative errno
 * (err says why). */
static int write_snapshot(struct hrd_state *s, uint64_t covers, char *err,
                          size_t errlen)
{
    char path[sizeof s->info.dir + sizeof SNAPSHOT + 1];
    int rc;

    snprintf(path, sizeof path, "%s/" SNAPSHOT, s->info.dir);
    rc = hrd_snapshot_write(path, s->agg, s->in, covers, err, errlen);
    if (rc == 0 && fsync(s->dirfd) != 0) {
        rc = -errno;
        snprintf(err, errlen, "cannot sync the directory: %s",
                 strerror(-rc));
    }
    return rc;
}

/* Waits for (block) or reaps (!block) the compaction child. */
static void reap(struct hrd_state *s, int block)
{
    int status;
    pid_t p;

    if (s->child <= 0)
        return;
    do
        p = waitpid(s->child, &status, block ? 0 : WNOHANG);
    while (p < 0 && errno == EINTR);
    if (p == 0)
        return;
    s->child = 0;
    if (p > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        remove_covered(s, s->child_covers);
        s->info.snapshots++;
        return;
    }
    /* The journals stay; the next compaction covers them too. */
    trouble(s, EIO, "the snapshot of %s could not be written", s->info.dir);
}

int hrd_state_snapshot_now(struct hrd_state *s)
{
    char err[600];
    uint64_t covers;
    int rc;

    if (s->dirfd < 0)
        return -EBADF;
    reap(s, 1);
    covers = s->gen;
    journal_close(s);
    rc = write_snapshot(s, covers, err, sizeof err);
    if (rc != 0) {
        trouble(s, -rc, "cannot write the snapshot in %s (%s)", s->info.dir,
                err);
        journal_open(s);
        return rc;
    }
    remove_covered(s, covers);
    s->info.snapshots++;
    s->last_snapshot_ms = hrp_mono_ms();
    s->gen = covers + 1;
    journal_open(s);
    return 0;
}

/* Starts a compaction in a child process. */
static void compact(struct hrd_state *s, uint64_t now_ms)
{
    struct hrr_recfile old = s->journal;
    uint64_t covers = s->gen;
    pid_t pid;

    s->gen++;
    if (journal_open(s) != 0) {
        /* Stay with the old journal; try again later. */
        s->journal = old;
        s->gen--;
        return;
    }
    if (s->dirty)
        hrr_recfile_sync(&old);
    hrr_recfile_close(&old);
    s->dirty = 0;
    s->info.journal_records = 0;
    s->last_snapshot_ms = now_ms;
    pid = fork();
    if (pid == 0) {
        char err[600];
        _exit(write_snapshot(s, covers, err, sizeof err) == 0 ? 0 : 1);
    }
    if (pid < 0) {
        s->log(s->log_ctx, "state: cannot start a compaction: %s",
               strerror(errno));
        return;
    }
    s->child = pid;
    s->child_covers = covers;
}

void hrd_state_tick(struct hrd_state *s, uint64_t now_ms)
{
    if (s->dirfd < 0) {
        if (now_ms - s->last_open_ms >= REOPEN_MS)
            journal_open(s);
        return;
    }
    if (s->dirty && now_ms - s->last_sync_ms >= s->opts.fsync_interval_ms) {
        int rc = hrr_recfile_sync(&s->journal);
        if (rc != 0 && rc != -EBADF)
            trouble(s, -rc, "cannot sync the journal in %s", s->info.dir);
        s->dirty = 0;
        s->last_sync_ms = now_ms;
    }
    reap(s, 0);
    if (s->journal.fd < 0) {
        if (now_ms - s->last_open_ms >= REOPEN_MS)
            journal_open(s);
        return;
    }
    if (s->child == 0 && s->journal.records > 0 &&
        (s->journal.size >= s->opts.journal_max_bytes ||
         now_ms - s->last_snapshot_ms >= s->opts.snapshot_interval_ms))
        compact(s, now_ms);
}

static int journal_write(struct hrd_state *s, uint8_t type,
                         const uint8_t *msg, size_t len)
{
    char name[64];
    int rc;

    if (s->journal.fd < 0 &&
        (hrp_mono_ms() - s->last_open_ms < REOPEN_MS || journal_open(s) != 0))
        return -EAGAIN;
    rc = hrr_recfile_append(&s->journal, type, msg, len);
    if (rc != 0) {
        journal_name(name, sizeof name, s->gen);
        trouble(s, -rc, "cannot write %s/%s", s->info.dir, name);
        /* Reopened later (at most once a second). When the file could not
         * be cut back to whole records, it is left as it is (a load
         * reports its damaged tail) and the next generation starts. */
        hrr_recfile_close(&s->journal);
        s->last_open_ms = hrp_mono_ms();
        if (rc == -EIO)
            s->gen++;
        return rc;
    }
    s->info.journal_records++;
    s->info.journal_bytes = s->journal.size;
    if (s->opts.fsync_interval_ms == 0) {
        rc = hrr_recfile_sync(&s->journal);
        if (rc != 0) {
            trouble(s, -rc, "cannot sync the journal in %s", s->info.dir);
            return rc;
        }
    } else {
        s->dirty = 1;
    }
    recovered(s);
    return 0;
}

int hrd_state_sync(void *ctx)
{
    struct hrd_state *s = ctx;
    int rc;

    if (!s->dirty || s->journal.fd < 0)
        return 0;
    rc = hrr_recfile_sync(&s->journal);
    if (rc != 0) {
        trouble(s, -rc, "cannot sync the journal in %s", s->info.dir);
        return rc;
    }
    s->dirty = 0;
    s->last_sync_ms = hrp_mono_ms();
    return 0;
}

int hrd_state_journal_batch(void *ctx, const uint8_t *msg, size_t len)
{
    return journal_write(ctx, HRR_REC_BATCH, msg, len);
}

int hrd_state_journal_reset(void *ctx, const uint8_t *msg, size_t len)
{
    return journal_write(ctx, HRR_REC_RESET, msg, len);
}

/* --- loading ------------------------------------------------------------- */

/* Renames a damaged file aside (never removes it) and says so. */
static void move_aside(struct hrd_state *s, const char *name, const char *why)
{
    char aside[256];
    time_t t = time(NULL);
    struct tm tm;

    gmtime_r(&t, &tm);
    snprintf(aside, sizeof aside, "%s.damaged-", name);
    strftime(aside + strlen(aside), sizeof aside - strlen(aside),
             "%Y%m%dT%H%M%SZ", &tm);
    s->info.load_problems++;
    if (renameat(s->dirfd, name, s->dirfd, aside) != 0)
        s->log(s->log_ctx, "state: %s/%s: %s; what came before was loaded; "
               "it could not be moved aside (%s)", s->info.dir, name, why,
               strerror(errno));
    else
        s->log(s->log_ctx, "state: %s/%s: %s; what came before was loaded; "
               "the file was moved to %s/%s", s->info.dir, name, why,
               s->info.dir, aside);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The generations of the journals present, ascending (caller frees). */
static uint64_t *list_journals(struct hrd_state *s, size_t *n)
{
    uint64_t *g = NULL;
    size_t cap = 0;
    struct dirent *e;
    int fd = dup(s->dirfd);
    DIR *d;

    *n = 0;
    if (fd < 0 || (d = fdopendir(fd)) == NULL) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    /* The duplicate shares the directory's offset with s->dirfd, which an
     * earlier listing left at its end. */
    rewinddir(d);
    while ((e = readdir(d)) != NULL) {
        uint64_t gen = journal_gen(e->d_name);
        if (gen == 0)
            continue;
        if (hru_grow(&g, &cap, *n + 1, sizeof *g, 16) != 0)
            break;
        g[(*n)++] = gen;
    }
    closedir(d);
    if (*n > 1)
        qsort(g, *n, sizeof *g, cmp_u64);
    return g;
}

/* Replays one journal. Returns 1 when it was damaged. */
static int replay(struct hrd_state *s, uint64_t gen)
{
    struct hrr_recreader r;
    char name[64], why[200] = "";
    const uint8_t *p;
    uint8_t type;
    size_t len;
    int rc;

    journal_name(name, sizeof name, gen);
    rc = hrr_recreader_open(&r, s->dirfd, name, HRR_JOURNAL_MAGIC);
    if (rc == -EBADMSG)
        snprintf(why, sizeof why, "%s", r.why);
    while (rc == 0) {
        uint64_t at = r.offset;

        rc = hrr_recreader_next(&r, &type, &p, &len);
        if (rc == 0)
            break; /* the end */
        if (rc == 1 && type == HRR_REC_BATCH) {
            uint8_t *ack;
            size_t ack_len;
            enum hrd_reject why_not;
            hrd_ingest_handle(s->in, p, len, &ack, &ack_len, &why_not);
            free(ack);
            rc = 0;
        } else if (rc == 1 && type == HRR_REC_RESET &&
                   hrd_control_apply_reset(s->agg, p, len) >= 0) {
            rc = 0;
        } else if (rc == 1) {
            snprintf(why, sizeof why, "unknown record at byte %llu",
                     (unsigned long long)at);
            rc = -EBADMSG;
        } else if (rc == -EBADMSG) {
            snprintf(why, sizeof why, "%s at byte %llu", r.why,
                     (unsigned long long)at);
        }
        if (rc == 0)
            s->info.replayed_records++;
    }
    hrr_recreader_close(&r);
    if (rc == 0 || rc == -ENOENT)
        return 0;
    if (rc != -EBADMSG)
        snprintf(why, sizeof why, "%s", strerror(-rc));
    move_aside(s, name, why);
    return 1;
}

/* Loads the snapshot and the journals. Returns 1 when a fresh snapshot
 * should be written (something was replayed or damaged). */
static int load(struct hrd_state *s)
{
    char path[sizeof s->info.dir + sizeof SNAPSHOT + 1];
    struct hrd_snapshot_loaded sl;
    uint64_t *gens, covers = 0;
    size_t n;
    int rc, fresh = 0, damaged = 0;

    remove_tmp(s);
    snprintf(path, sizeof path, "%s/" SNAPSHOT, s->info.dir);
    rc = hrd_snapshot_load(path, s->agg, s->in, &sl);
    if (rc != -ENOENT) {
        covers = sl.covers;
        s->info.loaded_keys = sl.keys;
        s->info.loaded_clients = sl.clients;
        /* A snapshot of an earlier release is written again at once in
         * the run format (its journals, covered, then go). */
        fresh = sl.legacy;
    }
    if (rc != 0 && rc != -ENOENT) {
        char why[600];
        snprintf(why, sizeof why, "%s (%llu keys and %llu clients read)",
                 sl.why, (unsigned long long)sl.keys,
                 (unsigned long long)sl.clients);
        move_aside(s, SNAPSHOT, why);
        damaged = fresh = 1;
    }

    gens = list_journals(s, &n);
    s->in->replaying = 1;
    for (size_t i = 0; i < n; i++) {
        /* Journals a complete snapshot covers are already in it; after
         * damage every journal is replayed (duplicates are dropped). */
        if (gens[i] <= covers && !damaged)
            continue;
        fresh = 1;
        replay(s, gens[i]);
    }
    s->in->replaying = 0;
    s->gen = covers;
    if (n > 0 && gens[n - 1] > s->gen)
        s->gen = gens[n - 1];
    free(gens);
    s->info.loaded_keys = s->agg->nkeys;
    s->info.loaded_clients = s->in->nclients;
    return fresh;
}

int hrd_state_open(struct hrd_state *s, const char *dir,
                   const struct hrd_state_opts *opts, struct hra_agg *agg,
                   struct hrd_ingest *in, hrd_log_fn log, void *log_ctx,
                   char *err, size_t errlen)
{
    int fresh, rc;

    memset(s, 0, sizeof *s);
    s->dirfd = s->lockfd = -1;
    s->journal.fd = -1;
    s->opts = *opts;
    s->agg = agg;
    s->in = in;
    s->log = log;
    s->log_ctx = log_ctx;
    s->last_sync_ms = s->last_snapshot_ms = hrp_mono_ms();
    snprintf(s->info.dir, sizeof s->info.dir, "%s", dir);

    rc = dir_open(s, err, errlen);
    if (rc == -EPERM)
        return rc;
    if (rc != 0)
        return 0;
    s->lockfd = openat(s->dirfd, LOCK, O_RDWR | O_CREAT | O_CLOEXEC |
                                            O_NOFOLLOW, 0600);
    if (s->lockfd < 0) {
        /* Unwritable: load what is there, serve it, journal nothing. */
        trouble(s, errno, "cannot create %s/" LOCK, dir);
    } else if (flock(s->lockfd, LOCK_EX | LOCK_NB) != 0) {
        snprintf(err, errlen, "another hostranged uses the state directory "
                 "%s", dir);
        close(s->lockfd);
        close(s->dirfd);
        s->dirfd = s->lockfd = -1;
        return -EBUSY;
    }
    fresh = load(s);
    if (s->lockfd < 0) {
        /* The journal opened once the directory can be written comes
         * after those loaded. */
        s->gen++;
        return 0;
    }
    if (fresh && hrd_state_snapshot_now(s) == 0)
        return 0;
    s->gen++;
    journal_open(s);
    return 0;
}

int hrd_state_close(struct hrd_state *s)
{
    int rc = 0;

    if (s == NULL || s->dirfd < 0)
        return 0;
    reap(s, 1);
    if (s->lockfd >= 0) {
        uint64_t covers = s->gen;
        char err[600];
        journal_close(s);
        rc = write_snapshot(s, covers, err, sizeof err);
        if (rc == 0) {
            remove_covered(s, covers);
            s->info.snapshots++;
        } else {
            s->log(s->log_ctx, "state: cannot write the snapshot in %s: %s; "
                   "the journals stay and are replayed at the next start",
                   s->info.dir, err);
        }
        close(s->lockfd);
    }
    hrr_recfile_close(&s->journal);
    close(s->dirfd);
    s->dirfd = s->lockfd = -1;
    return rc;
}
