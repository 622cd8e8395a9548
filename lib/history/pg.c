/* The PostgreSQL backend of the run history (see backend.h), through
 * libpq: a connection string (a postgresql:// URL or key=value pairs) as
 * libpq reads it; every parameter bound with its type; adds serialized by
 * a transaction-scoped advisory lock. */
#include "config.h"

#include "lib/history/backend.h"

#include <errno.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The advisory lock that serializes the history's writers. */
#define PG_LOCK_KEY "7243583137"

/* Type OIDs of the parameters (pg_type.h). */
#define PG_INT8OID 20
#define PG_TEXTOID 25
#define PG_FLOAT8OID 701

struct pdb {
    PGconn *c;
    int in_tx;
};

static void no_notices(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

/* The errno for a failed result (or connection, when r is NULL). */
static int fail(struct pdb *p, PGresult *r, const char *what, char *err,
                size_t errlen)
{
    const char *state = r != NULL ? PQresultErrorField(r, PG_DIAG_SQLSTATE)
                                  : NULL;
    char msg[1024];
    size_t n;

    snprintf(msg, sizeof msg, "%s",
             r != NULL ? PQresultErrorMessage(r) : PQerrorMessage(p->c));
    n = strlen(msg);
    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
        msg[--n] = '\0';
    for (char *q = msg; *q != '\0'; q++) {
        if (*q == '\n')
            *q = ' ';
    }
    snprintf(err, errlen, "%s: %s", what, msg);
    if (PQstatus(p->c) != CONNECTION_OK)
        return -ECONNREFUSED;
    if (state == NULL)
        return -EIO;
    if (strncmp(state, "53", 2) == 0)
        return strcmp(state, "53200") == 0 ? -ENOMEM : -ENOSPC;
    if (strncmp(state, "08", 2) == 0 || strncmp(state, "57P", 3) == 0)
        return -ECONNREFUSED;
    if (strcmp(state, "42P01") == 0) /* undefined table */
        return -EINVAL;
    return -EIO;
}

static int p_query(void *db, const char *sql, const struct hrd_hval *v,
                   int np, hrd_hrow_fn fn, void *ctx, char *err,
                   size_t errlen)
{
    struct pdb *p = db;
    const char *vals[1024];
    Oid types[1024];
    char num[1024][32];
    const char *col[32];
    PGresult *r;
    int rc = 0, st;

    if (np > 1024)
        return -E2BIG;
    for (int i = 0; i < np; i++) {
        if (v[i].type == HRD_HVAL_INT) {
            snprintf(num[i], sizeof num[i], "%lld", (long long)v[i].i);
            vals[i] = num[i];
            types[i] = PG_INT8OID;
        } else if (v[i].type == HRD_HVAL_REAL) {
            snprintf(num[i], sizeof num[i], "%.17g", v[i].d);
            vals[i] = num[i];
            types[i] = PG_FLOAT8OID;
        } else {
            vals[i] = v[i].s;
            types[i] = PG_TEXTOID;
        }
    }
    /* Rows one at a time (single-row mode), so that a long series is
     * never held whole. */
    if (!PQsendQueryParams(p->c, sql, np, types, vals, NULL, NULL, 0))
        return fail(p, NULL, "a statement", err, errlen);
    PQsetSingleRowMode(p->c);
    while ((r = PQgetResult(p->c)) != NULL) {
        st = PQresultStatus(r);
        if (st == PGRES_SINGLE_TUPLE && fn != NULL && rc == 0) {
            int n = PQnfields(r);

            if (n > 32)
                n = 32;
            for (int j = 0; j < n; j++)
                col[j] = PQgetisnull(r, 0, j) ? NULL : PQgetvalue(r, 0, j);
            rc = fn(ctx, col, n);
        } else if (st != PGRES_SINGLE_TUPLE && st != PGRES_COMMAND_OK &&
                   st != PGRES_TUPLES_OK && rc == 0) {
            rc = fail(p, r, "a statement", err, errlen);
        }
        PQclear(r);
    }
    if (rc == 0 && PQstatus(p->c) != CONNECTION_OK)
        rc = fail(p, NULL, "a statement", err, errlen);
    return rc;
}

static int p_put(void *db, const char *sql, const struct hrd_hval *v, int np,
                 char *err, size_t errlen)
{
    return p_query(db, sql, v, np, NULL, NULL, err, errlen);
}

static int exec(struct pdb *p, const char *sql, char *err, size_t errlen)
{
    return p_query(p, sql, NULL, 0, NULL, NULL, err, errlen);
}

static void p_close(void *db)
{
    struct pdb *p = db;

    if (p == NULL)
        return;
    PQfinish(p->c);
    free(p);
}

static int p_open(const char *dsn, void **db, char *err, size_t errlen)
{
    struct pdb *p = calloc(1, sizeof *p);
    int rc;

    if (p == NULL)
        return -ENOMEM;
    p->c = PQconnectdb(dsn);
    if (p->c == NULL) {
        free(p);
        return -ENOMEM;
    }
    if (PQstatus(p->c) != CONNECTION_OK) {
        rc = fail(p, NULL, "cannot connect", err, errlen);
        p_close(p);
        return rc;
    }
    PQsetNoticeProcessor(p->c, no_notices, NULL);
    /* Reals as the shortest text that reads back the same (the default
     * of PostgreSQL 12 and later, asked for all the same). */
    if ((rc = exec(p, "SET extra_float_digits = 3", err, errlen)) != 0) {
        p_close(p);
        return rc;
    }
    *db = p;
    return 0;
}

static int p_begin(void *db, char *err, size_t errlen)
{
    struct pdb *p = db;
    int rc = exec(p, "BEGIN", err, errlen);

    if (rc != 0)
        return rc;
    p->in_tx = 1;
    return exec(p, "SELECT pg_advisory_xact_lock(" PG_LOCK_KEY ")", err,
                errlen);
}

static int p_commit(void *db, char *err, size_t errlen)
{
    struct pdb *p = db;
    int rc = exec(p, "COMMIT", err, errlen);

    if (rc == 0)
        p->in_tx = 0;
    return rc;
}

static void p_rollback(void *db)
{
    struct pdb *p = db;
    PGresult *r;

    if (!p->in_tx)
        return;
    r = PQexec(p->c, "ROLLBACK");
    PQclear(r);
    p->in_tx = 0;
}

const struct hrd_hbackend hrd_hbackend_pg = {
    "postgresql",
    "BIGSERIAL PRIMARY KEY",
    "SELECT count(*) FROM information_schema.tables "
    "WHERE table_schema = current_schema()",
    p_open,
    p_close,
    p_begin,
    p_put,
    p_query,
    p_commit,
    p_rollback,
};
