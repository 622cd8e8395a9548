/* The SQLite backend of the run history (see backend.h): a file, in WAL
 * mode, with a busy timeout; statements prepared once and kept. A
 * database opened to read is never made, turned to WAL or written: it is
 * opened query_only by a user who may write it and beside it (so that its
 * close removes the -wal and -shm files), else read-only
 * (SQLITE_OPEN_READONLY). */
#include "config.h"

#include "lib/history/backend.h"
#include "lib/history/history.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* How long to wait before trying again to turn a database to WAL. */
#define WAL_RETRY_MS 10

/* Statements kept prepared, by their text (copied). */
#define CACHE 64

struct sdb {
    sqlite3 *db;
    const char *path;
    struct {
        char *sql;
        sqlite3_stmt *st;
        int natural;
    } cache[CACHE];
    int in_tx;
};

/*
 * The errno for SQLite's result rc, with the reason in err. A write that
 * failed for want of room says so in the system's words: SQLITE_FULL,
 * and an I/O error whose system errno is ENOSPC or EFBIG (a file size
 * limit), are -ENOSPC and -EFBIG, not -EIO.
 */
static int fail(struct sdb *s, int rc, const char *what, char *err,
                size_t errlen)
{
    int prim = rc & 0xff;
    int sys = s->db != NULL ? sqlite3_system_errno(s->db) : 0;
    const char *msg = s->db != NULL ? sqlite3_errmsg(s->db)
                                    : sqlite3_errstr(rc);

    if (prim == SQLITE_FULL)
        sys = ENOSPC;
    if (prim == SQLITE_FULL ||
        (prim == SQLITE_IOERR && (sys == ENOSPC || sys == EFBIG))) {
        snprintf(err, errlen, "%s: %s (%s)", what, strerror(sys), msg);
        return -sys;
    }
    snprintf(err, errlen, "%s: %s", what, msg);
    switch (prim) {
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
    case SQLITE_CANTOPEN:
        return -EINVAL;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return -EBUSY;
    case SQLITE_FULL:
        return -ENOSPC;
    case SQLITE_NOMEM:
        return -ENOMEM;
    case SQLITE_READONLY:
    case SQLITE_PERM:
        return -EACCES;
    default:
        return -EIO;
    }
}

/* Whether parameter k of st is named $k, for every k: then $k is bound
 * by its number (a lookup by name scans the statement's names, which for
 * the hundreds of a batch of points costs more than the insert). */
static int natural_order(sqlite3_stmt *st)
{
    int n = sqlite3_bind_parameter_count(st);

    for (int k = 1; k <= n; k++) {
        const char *name = sqlite3_bind_parameter_name(st, k);
        char want[16];

        snprintf(want, sizeof want, "$%d", k);
        if (name == NULL || strcmp(name, want) != 0)
            return 0;
    }
    return 1;
}

static int prepare(struct sdb *s, const char *sql, sqlite3_stmt **st,
                   int *natural, char *err, size_t errlen)
{
    int rc, free_slot = -1;

    for (int i = 0; i < CACHE; i++) {
        if (s->cache[i].sql != NULL && strcmp(s->cache[i].sql, sql) == 0) {
            *st = s->cache[i].st;
            *natural = s->cache[i].natural;
            sqlite3_reset(*st);
            sqlite3_clear_bindings(*st);
            return 0;
        }
        if (s->cache[i].sql == NULL && free_slot < 0)
            free_slot = i;
    }
    rc = sqlite3_prepare_v2(s->db, sql, -1, st, NULL);
    if (rc != SQLITE_OK)
        return fail(s, rc, "preparing a statement", err, errlen);
    *natural = natural_order(*st);
    if (free_slot >= 0 && (s->cache[free_slot].sql = strdup(sql)) != NULL) {
        s->cache[free_slot].st = *st;
        s->cache[free_slot].natural = *natural;
    }
    return 0;
}

static void done(struct sdb *s, sqlite3_stmt *st)
{
    for (int i = 0; i < CACHE; i++) {
        if (s->cache[i].st == st) {
            sqlite3_reset(st);
            return;
        }
    }
    sqlite3_finalize(st);
}

static int bind(struct sdb *s, sqlite3_stmt *st, int natural,
                const struct hrh_hval *p, int np, char *err, size_t errlen)
{
    int count = sqlite3_bind_parameter_count(st);

    for (int i = 0; i < np; i++) {
        char name[16];
        int idx, rc;

        if (natural) {
            idx = i < count ? i + 1 : 0;
        } else {
            snprintf(name, sizeof name, "$%d", i + 1);
            idx = sqlite3_bind_parameter_index(st, name);
        }
        if (idx == 0)
            continue;
        if (p[i].type == HRH_HVAL_INT)
            rc = sqlite3_bind_int64(st, idx, p[i].i);
        else if (p[i].type == HRH_HVAL_REAL)
            rc = sqlite3_bind_double(st, idx, p[i].d);
        else
            rc = sqlite3_bind_text(st, idx, p[i].s, -1, SQLITE_STATIC);
        if (rc != SQLITE_OK)
            return fail(s, rc, "binding a parameter", err, errlen);
    }
    return 0;
}

static int s_query(void *db, const char *sql, const struct hrh_hval *p,
                   int np, hrh_hrow_fn fn, void *ctx, char *err,
                   size_t errlen)
{
    struct sdb *s = db;
    sqlite3_stmt *st;
    const char *col[32];
    char num[32][32];
    int rc, stop = 0, natural = 0;

    if ((rc = prepare(s, sql, &st, &natural, err, errlen)) != 0)
        return rc;
    if ((rc = bind(s, st, natural, p, np, err, errlen)) != 0) {
        done(s, st);
        return rc;
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int n = sqlite3_column_count(st);

        if (fn == NULL || stop)
            continue;
        if (n > 32)
            n = 32;
        for (int i = 0; i < n; i++) {
            int t = sqlite3_column_type(st, i);

            if (t == SQLITE_NULL)
                col[i] = NULL;
            else if (t == SQLITE_FLOAT) {
                snprintf(num[i], sizeof num[i], "%.17g",
                         sqlite3_column_double(st, i));
                col[i] = num[i];
            } else
                col[i] = (const char *)sqlite3_column_text(st, i);
        }
        stop = fn(ctx, col, n);
        if (stop)
            break;
    }
    if (stop) {
        done(s, st);
        return stop;
    }
    if (rc != SQLITE_DONE) {
        rc = fail(s, rc, "a statement", err, errlen);
        done(s, st);
        return rc;
    }
    done(s, st);
    return 0;
}

static int s_put(void *db, const char *sql, const struct hrh_hval *p, int np,
                 char *err, size_t errlen)
{
    return s_query(db, sql, p, np, NULL, NULL, err, errlen);
}

static int exec(struct sdb *s, const char *sql, char *err, size_t errlen)
{
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);

    return rc == SQLITE_OK ? 0 : fail(s, rc, sql, err, errlen);
}

static void s_close(void *db)
{
    struct sdb *s = db;

    if (s == NULL)
        return;
    for (int i = 0; i < CACHE; i++) {
        if (s->cache[i].st != NULL)
            sqlite3_finalize(s->cache[i].st);
        free(s->cache[i].sql);
    }
    sqlite3_close(s->db);
    free(s);
}

/*
 * The URI of path opened as immutable (file:PATH?immutable=1, with the
 * characters a URI gives meaning to escaped) into buf. Returns 0, or
 * -ENAMETOOLONG.
 */
static int immutable_uri(const char *path, char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "file:%s", path[0] == '/' ? "//"
                                                                    : "");
    const char *p = path;

    for (; *p != '\0' && n + 4 < len; p++) {
        if (*p == '%' || *p == '?' || *p == '#')
            n += (size_t)snprintf(buf + n, len - n, "%%%02X",
                                  (unsigned char)*p);
        else
            buf[n++] = *p;
    }
    if (*p != '\0' || n + sizeof "?immutable=1" > len)
        return -ENAMETOOLONG;
    memcpy(buf + n, "?immutable=1", sizeof "?immutable=1");
    return 0;
}

/* Whether the write-ahead log of path holds changes (a -wal file that is
 * not empty). */
static int wal_pending(const char *path)
{
    char wal[4096];
    struct stat st;

    snprintf(wal, sizeof wal, "%s-wal", path);
    return stat(wal, &st) == 0 && st.st_size > 0;
}

/* Whether this user may write file path and the directory it is in. */
static int may_write_beside(const char *path)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');

    if (slash == NULL)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    return access(path, W_OK) == 0 && access(dir, W_OK) == 0;
}

static int s_connect(struct sdb *s, const char *name, int flags, char *err,
                     size_t errlen)
{
    int rc = sqlite3_open_v2(name, &s->db, flags | SQLITE_OPEN_NOMUTEX,
                             NULL);

    if (rc != SQLITE_OK)
        return fail(s, rc, "cannot open", err, errlen);
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_timeout(s->db, HRH_BUSY_MS);
    return 0;
}

/*
 * Opens path only to read. A reader of a database in WAL mode shares the
 * WAL's index, a -shm file beside it, which it makes when missing: a
 * reader that may not write the directory (a read-only history of another
 * user) cannot, and SQLite refuses it. When no writer has left changes in
 * the -wal file, the database file holds the whole history, and it is
 * read as it stands (immutable=1, no index, no lock); else it is refused.
 */
static int open_read(struct sdb *s, const char *path, char *err,
                     size_t errlen)
{
    struct stat st;
    char uri[4200], why[512];
    int rc;

    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        return errno == ENOENT ? -ENOENT : -EACCES;
    }
    /* A user who may write the file and beside it reads through a
     * connection that could write, made unable to (query_only): the last
     * such connection to close folds the WAL back and removes the -wal
     * and -shm files, which a read-only one leaves beside the history. */
    if (may_write_beside(path)) {
        rc = s_connect(s, path, SQLITE_OPEN_READWRITE, err, errlen);
        if (rc == 0)
            rc = exec(s, "PRAGMA query_only=1", why, sizeof why);
        if (rc == 0)
            rc = exec(s, "SELECT count(*) FROM sqlite_master", why,
                      sizeof why);
        if (rc == 0)
            return 0;
        sqlite3_close(s->db);
        s->db = NULL;
    }
    rc = s_connect(s, path, SQLITE_OPEN_READONLY, err, errlen);
    /* The first statement reads the file (and the WAL's index). */
    if (rc == 0)
        rc = exec(s, "SELECT count(*) FROM sqlite_master", why, sizeof why);
    if (rc != -EACCES && rc != -EINVAL) {
        if (rc != 0)
            snprintf(err, errlen, "%s", why);
        return rc;
    }
    sqlite3_close(s->db);
    s->db = NULL;
    if (wal_pending(path)) {
        snprintf(err, errlen, "%s; its write-ahead log (%s-wal) holds "
                 "changes that only a user who may write beside it can "
                 "read", why, path);
        return -EACCES;
    }
    if (immutable_uri(path, uri, sizeof uri) != 0) {
        snprintf(err, errlen, "%s", why);
        return -EACCES;
    }
    rc = s_connect(s, uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, err,
                   errlen);
    if (rc == 0)
        rc = exec(s, "SELECT count(*) FROM sqlite_master", err, errlen);
    return rc;
}

static int s_open(const char *dsn, int write, void **db, char *err,
                  size_t errlen)
{
    struct sdb *s = calloc(1, sizeof *s);
    int rc;

    if (s == NULL)
        return -ENOMEM;
    s->path = dsn;
    if (!write) {
        if ((rc = open_read(s, dsn, err, errlen)) != 0) {
            s_close(s);
            return rc;
        }
        *db = s;
        return 0;
    }
    if ((rc = s_connect(s, dsn, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                        err, errlen)) != 0) {
        s_close(s);
        return rc;
    }
    /* WAL: readers never wait for the writer, and a write is one append.
     * The first statement reads the file: one that is not a database
     * fails here. Turning a new database to WAL takes it whole, and SQLite
     * does not wait for that lock (its busy handler is not called): it is
     * tried again here, within the busy timeout. */
    for (int waited = 0;; waited += WAL_RETRY_MS) {
        rc = exec(s, "PRAGMA journal_mode=WAL", err, errlen);
        if (rc != -EBUSY || waited >= HRH_BUSY_MS)
            break;
        usleep(WAL_RETRY_MS * 1000);
    }
    if (rc != 0 || (rc = exec(s, "PRAGMA foreign_keys=ON", err, errlen)) != 0) {
        s_close(s);
        return rc;
    }
    *db = s;
    return 0;
}

static int s_begin(void *db, char *err, size_t errlen)
{
    struct sdb *s = db;
    /* IMMEDIATE: the write lock from the start, waited for within the busy
     * timeout, so that two adds never deadlock upgrading a read. */
    int rc = exec(s, "BEGIN IMMEDIATE", err, errlen);

    s->in_tx = rc == 0;
    return rc;
}

static int s_commit(void *db, char *err, size_t errlen)
{
    struct sdb *s = db;
    int rc = exec(s, "COMMIT", err, errlen);

    if (rc == 0)
        s->in_tx = 0;
    return rc;
}

static void s_rollback(void *db)
{
    struct sdb *s = db;

    if (s->in_tx)
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    s->in_tx = 0;
}

const struct hrh_hbackend hrh_hbackend_sqlite = {
    "sqlite",
    "INTEGER PRIMARY KEY",
    "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
    NULL,
    "(node, operator, backend, phase, range, metric)",
    NULL,
    s_open,
    s_close,
    s_begin,
    s_put,
    s_query,
    s_commit,
    s_rollback,
};
