/* The SQLite backend of the run history (see backend.h): a file, in WAL
 * mode, with a busy timeout; statements prepared once and kept. */
#include "config.h"

#include "lib/history/backend.h"
#include "lib/history/history.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Statements kept prepared, by their text (copied). */
#define CACHE 16

struct sdb {
    sqlite3 *db;
    const char *path;
    struct {
        char *sql;
        sqlite3_stmt *st;
    } cache[CACHE];
    int in_tx;
};

static int fail(struct sdb *s, int rc, const char *what, char *err,
                size_t errlen)
{
    int prim = rc & 0xff;

    snprintf(err, errlen, "%s: %s: %s", s->path, what,
             s->db != NULL ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
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

static int prepare(struct sdb *s, const char *sql, sqlite3_stmt **st,
                   char *err, size_t errlen)
{
    int rc, free_slot = -1;

    for (int i = 0; i < CACHE; i++) {
        if (s->cache[i].sql != NULL && strcmp(s->cache[i].sql, sql) == 0) {
            *st = s->cache[i].st;
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
    if (free_slot >= 0 && (s->cache[free_slot].sql = strdup(sql)) != NULL)
        s->cache[free_slot].st = *st;
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

static int bind(struct sdb *s, sqlite3_stmt *st, const struct hrd_hval *p,
                int np, char *err, size_t errlen)
{
    for (int i = 0; i < np; i++) {
        char name[16];
        int idx, rc;

        snprintf(name, sizeof name, "$%d", i + 1);
        idx = sqlite3_bind_parameter_index(st, name);
        if (idx == 0)
            continue;
        if (p[i].type == HRD_HVAL_INT)
            rc = sqlite3_bind_int64(st, idx, p[i].i);
        else if (p[i].type == HRD_HVAL_REAL)
            rc = sqlite3_bind_double(st, idx, p[i].d);
        else
            rc = sqlite3_bind_text(st, idx, p[i].s, -1, SQLITE_STATIC);
        if (rc != SQLITE_OK)
            return fail(s, rc, "binding a parameter", err, errlen);
    }
    return 0;
}

static int s_query(void *db, const char *sql, const struct hrd_hval *p,
                   int np, hrd_hrow_fn fn, void *ctx, char *err,
                   size_t errlen)
{
    struct sdb *s = db;
    sqlite3_stmt *st;
    const char *col[32];
    char num[32][32];
    int rc, stop = 0;

    if ((rc = prepare(s, sql, &st, err, errlen)) != 0)
        return rc;
    if ((rc = bind(s, st, p, np, err, errlen)) != 0) {
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

static int s_put(void *db, const char *sql, const struct hrd_hval *p, int np,
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

static int s_open(const char *dsn, void **db, char *err, size_t errlen)
{
    struct sdb *s = calloc(1, sizeof *s);
    int rc;

    if (s == NULL)
        return -ENOMEM;
    s->path = dsn;
    rc = sqlite3_open_v2(dsn, &s->db, SQLITE_OPEN_READWRITE |
                         SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        rc = fail(s, rc, "cannot open", err, errlen);
        s_close(s);
        return rc;
    }
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_timeout(s->db, HRD_HISTORY_BUSY_MS);
    /* WAL: readers never wait for the writer, and a write is one append.
     * The first statement reads the file: one that is not a database
     * fails here. */
    if ((rc = exec(s, "PRAGMA journal_mode=WAL", err, errlen)) != 0 ||
        (rc = exec(s, "PRAGMA foreign_keys=ON", err, errlen)) != 0) {
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

const struct hrd_hbackend hrd_hbackend_sqlite = {
    "sqlite",
    "INTEGER PRIMARY KEY",
    "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
    s_open,
    s_close,
    s_begin,
    s_put,
    s_query,
    s_commit,
    s_rollback,
};
