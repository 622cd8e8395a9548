/*
 * The backend table of the run history: what lib/history asks of a
 * database, and nothing more, so that SQLite (sqlite.c) and PostgreSQL
 * (pg.c) answer the same statements the same way. Statements are SQL that
 * both read, their parameters written $1, $2... and always bound, never
 * spliced into the text. A row comes back as text: integers in decimal,
 * reals as the shortest text that reads back as the same double, a name
 * (a column of bytes) as its bytes, NULL as a NULL pointer.
 *
 * Names (of keys, machines, commits, hosts, files, meta) are bytes, never
 * checked for an encoding: a backend whose text must be valid in an
 * encoding (PostgreSQL's) keeps them in columns of bytes (to_bytes), one
 * whose text holds any bytes (SQLite's) keeps them as text. Either gives
 * back the bytes it was given.
 *
 * Each function returns 0, or a negative errno with a one-line reason in
 * err (which does not name the database; the caller does): -ENOENT for
 * a database opened to read that does not exist (open never makes one
 * then), -EINVAL for a database that is not one (a file of something
 * else), -EACCES for one that cannot be read or written as asked,
 * -ECONNREFUSED for a server that cannot be reached, did not answer
 * within its connect timeout, or went away (never tried again), -EBUSY
 * for a lock not had within the busy timeout, -ENOSPC for a full disk
 * (-EFBIG past a file size limit), -ENOMEM, or -EIO for any other
 * failure.
 */
#ifndef HOSTRANGE_HISTORY_BACKEND_H
#define HOSTRANGE_HISTORY_BACKEND_H

#include <stddef.h>
#include <stdint.h>

/* A bound parameter: an integer, a real, text (ASCII: ids, numbers), or
 * a name (bytes, as given). */
enum hrh_hval_type { HRH_HVAL_INT, HRH_HVAL_REAL, HRH_HVAL_TEXT,
                     HRH_HVAL_BYTES };

struct hrh_hval {
    enum hrh_hval_type type;
    int64_t i;
    double d;
    const char *s; /* borrowed; NUL-terminated */
};

/* A parameter of each type: text (NULL: ""), a name (bytes, stored as
 * they are; NULL: ""), an integer, a real. */
static inline struct hrh_hval hrh_hval_text(const char *s)
{
    struct hrh_hval v = { HRH_HVAL_TEXT, 0, 0, s != NULL ? s : "" };
    return v;
}

static inline struct hrh_hval hrh_hval_bytes(const char *s)
{
    struct hrh_hval v = { HRH_HVAL_BYTES, 0, 0, s != NULL ? s : "" };
    return v;
}

static inline struct hrh_hval hrh_hval_int(int64_t i)
{
    struct hrh_hval v = { HRH_HVAL_INT, i, 0, NULL };
    return v;
}

static inline struct hrh_hval hrh_hval_real(double d)
{
    struct hrh_hval v = { HRH_HVAL_REAL, 0, d, NULL };
    return v;
}

/* Called with each row of a query (ncol texts, NULL for SQL NULL); a
 * non-zero return stops the query, which then returns it. */
typedef int (*hrh_hrow_fn)(void *ctx, const char *const *col, int ncol);

struct hrh_hbackend {
    const char *name;
    /* The column type of a key made by the database as rows are inserted
     * (read back with RETURNING). */
    const char *serial_key;
    /* A statement giving the number of tables the database holds (in its
     * current schema), to tell a new database from another program's. */
    const char *count_tables;
    /* A statement that turns column %2$s of table %1$s, text, into a
     * column of bytes (the same bytes), or NULL where text holds any
     * bytes already. */
    const char *to_bytes;
    /* The ON CONFLICT target of a key's six names (hostrange_key): their
     * columns, or an expression over them that schema 5's key_unique
     * indexes, where one index entry of the names themselves may outgrow
     * what the database takes. */
    const char *key_conflict;
    /* Schema 5's statements that make a key's names unique through
     * key_conflict instead of their columns' constraint, or NULL where
     * that constraint holds names of any length (HRP_MAX_STRING each). */
    const char *const *key_unique;
    /* Opens dsn: to write (write 1; a SQLite file is made when missing),
     * or only to read (write 0; nothing is ever made or changed, and a
     * missing database is -ENOENT). */
    int (*open)(const char *dsn, int write, void **db, char *err,
                size_t errlen);
    void (*close)(void *db);
    /* A transaction that writes: it holds the database's write lock from
     * its start (adds are serialized; readers go on). */
    int (*begin)(void *db, char *err, size_t errlen);
    /* A statement with no rows, or with rows passed to fn (may be NULL). */
    int (*put)(void *db, const char *sql, const struct hrh_hval *p, int np,
               char *err, size_t errlen);
    int (*query)(void *db, const char *sql, const struct hrh_hval *p, int np,
                 hrh_hrow_fn fn, void *ctx, char *err, size_t errlen);
    int (*commit)(void *db, char *err, size_t errlen);
    /* Undoes an open transaction, if any. */
    void (*rollback)(void *db);
};

extern const struct hrh_hbackend hrh_hbackend_sqlite;
extern const struct hrh_hbackend hrh_hbackend_pg;

#endif
