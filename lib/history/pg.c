/* The PostgreSQL backend of the run history (see backend.h), through
 * libpq: a connection string (a postgresql:// URL or key=value pairs) as
 * libpq reads it, with a connect timeout of HRH_PG_CONNECT_TIMEOUT
 * seconds unless it or PGCONNECT_TIMEOUT sets one; every parameter bound
 * with its type, names as bytea (sent and read as their bytes); adds
 * serialized by a transaction-scoped advisory lock. A database opened to
 * read runs read-only transactions only (default_transaction_read_only). A
 * connection lost is an error, never tried again. */
#include "config.h"

#include "lib/history/backend.h"
#include "lib/history/history.h"

#include <dlfcn.h>
#include <errno.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The advisory lock that serializes the history's writers. */
#define PG_LOCK_KEY "7243583137"

/* The default connect timeout as the text libpq reads. */
#define TEXT_OF_(x) #x
#define TEXT_OF(x) TEXT_OF_(x)
#define CONNECT_TIMEOUT TEXT_OF(HRH_PG_CONNECT_TIMEOUT)

/* Type OIDs of the parameters (pg_type.h). */
#define PG_BYTEAOID 17
#define PG_INT8OID 20
#define PG_TEXTOID 25
#define PG_FLOAT8OID 701

/*
 * libpq, loaded when a PostgreSQL database is first opened rather than
 * linked: hostrangectl then starts without it and the libraries it brings
 * (TLS, Kerberos, LDAP), which every other command would map for nothing.
 */
static struct {
    void *lib;
    PGconn *(*connectdbParams)(const char *const *keywords,
                               const char *const *values, int expand_dbname);
    ConnStatusType (*status)(const PGconn *conn);
    char *(*errorMessage)(const PGconn *conn);
    void (*finish)(PGconn *conn);
    PQnoticeProcessor (*setNoticeProcessor)(PGconn *conn, PQnoticeProcessor proc, void *arg);
    int (*sendQueryParams)(PGconn *conn, const char *command, int nParams,
                           const Oid *paramTypes, const char *const *paramValues,
                           const int *paramLengths, const int *paramFormats,
                           int resultFormat);
    int (*setSingleRowMode)(PGconn *conn);
    PGresult *(*getResult)(PGconn *conn);
    ExecStatusType (*resultStatus)(const PGresult *res);
    int (*nfields)(const PGresult *res);
    int (*getisnull)(const PGresult *res, int tup_num, int field_num);
    char *(*getvalue)(const PGresult *res, int tup_num, int field_num);
    int (*getlength)(const PGresult *res, int tup_num, int field_num);
    Oid (*ftype)(const PGresult *res, int field_num);
    void (*clear)(PGresult *res);
    char *(*resultErrorField)(const PGresult *res, int fieldcode);
    char *(*resultErrorMessage)(const PGresult *res);
    PGresult *(*exec)(PGconn *conn, const char *query);
} pq;

/* The name of the library loaded: libpq's soname. */
#define PQ_LIBRARY "libpq.so.5"

static int pq_load(char *err, size_t errlen)
{
    static const char *const names[] = {
        "PQconnectdbParams",
        "PQstatus",
        "PQerrorMessage",
        "PQfinish",
        "PQsetNoticeProcessor",
        "PQsendQueryParams",
        "PQsetSingleRowMode",
        "PQgetResult",
        "PQresultStatus",
        "PQnfields",
        "PQgetisnull",
        "PQgetvalue",
        "PQgetlength",
        "PQftype",
        "PQclear",
        "PQresultErrorField",
        "PQresultErrorMessage",
        "PQexec",
    };
    void **slot = (void **)&pq.connectdbParams;
    void *lib;

    if (pq.lib != NULL)
        return 0;
    lib = dlopen(PQ_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        snprintf(err, errlen, "PostgreSQL's client library cannot be "
                 "loaded (%s; Debian's libpq5): %s", PQ_LIBRARY, dlerror());
        return -ENOENT;
    }
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if ((slot[i] = dlsym(lib, names[i])) == NULL) {
            snprintf(err, errlen, "%s has no %s", PQ_LIBRARY, names[i]);
            dlclose(lib);
            return -ENOENT;
        }
    }
    pq.lib = lib;
    return 0;
}

struct pdb {
    PGconn *c;
    int in_tx;
    char *bytes;      /* a row's bytea values, decoded */
    size_t bytes_cap;
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
    const char *state = r != NULL ? pq.resultErrorField(r, PG_DIAG_SQLSTATE)
                                  : NULL;
    char msg[1024];
    size_t n;

    snprintf(msg, sizeof msg, "%s",
             r != NULL ? pq.resultErrorMessage(r) : pq.errorMessage(p->c));
    n = strlen(msg);
    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
        msg[--n] = '\0';
    for (char *q = msg; *q != '\0'; q++) {
        if (*q == '\n')
            *q = ' ';
    }
    snprintf(err, errlen, "%s: %s", what, msg);
    if (pq.status(p->c) != CONNECTION_OK)
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

/* The value of a hex digit, or -1. */
static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/*
 * The n columns of r's row into col: text as libpq gives it, bytea
 * (hex: \x and two digits a byte, as bytea_output is set at open)
 * decoded into p->bytes, NUL-terminated. Returns 0, -ENOMEM, or -EIO
 * for a bytea value that is not hex.
 */
static int row(struct pdb *p, PGresult *r, const char **col, int n)
{
    size_t need = 0, at = 0;

    for (int j = 0; j < n; j++) {
        if (pq.ftype(r, j) == PG_BYTEAOID && !pq.getisnull(r, 0, j))
            need += (size_t)pq.getlength(r, 0, j) / 2 + 1;
    }
    if (need > p->bytes_cap) {
        char *b = realloc(p->bytes, need);

        if (b == NULL)
            return -ENOMEM;
        p->bytes = b;
        p->bytes_cap = need;
    }
    for (int j = 0; j < n; j++) {
        const char *s;
        char *out;

        if (pq.getisnull(r, 0, j)) {
            col[j] = NULL;
            continue;
        }
        s = pq.getvalue(r, 0, j);
        if (pq.ftype(r, j) != PG_BYTEAOID) {
            col[j] = s;
            continue;
        }
        if (s[0] != '\\' || s[1] != 'x')
            return -EIO;
        out = p->bytes + at;
        for (s += 2; s[0] != '\0'; s += 2) {
            int hi = hexval(s[0]), lo = hexval(s[1]);

            if (hi < 0 || lo < 0)
                return -EIO;
            p->bytes[at++] = (char)(hi << 4 | lo);
        }
        p->bytes[at++] = '\0';
        col[j] = out;
    }
    return 0;
}

static int p_query(void *db, const char *sql, const struct hrh_hval *v,
                   int np, hrh_hrow_fn fn, void *ctx, char *err,
                   size_t errlen)
{
    struct pdb *p = db;
    const char *vals[1024];
    Oid types[1024];
    int lens[1024], formats[1024];
    char num[1024][32];
    const char *col[32];
    PGresult *r;
    int rc = 0, st;

    if (np > 1024)
        return -E2BIG;
    for (int i = 0; i < np; i++) {
        lens[i] = 0;
        formats[i] = 0;
        if (v[i].type == HRH_HVAL_INT) {
            snprintf(num[i], sizeof num[i], "%lld", (long long)v[i].i);
            vals[i] = num[i];
            types[i] = PG_INT8OID;
        } else if (v[i].type == HRH_HVAL_REAL) {
            snprintf(num[i], sizeof num[i], "%.17g", v[i].d);
            vals[i] = num[i];
            types[i] = PG_FLOAT8OID;
        } else if (v[i].type == HRH_HVAL_BYTES) {
            /* A name: its bytes as they are (binary bytea), never read
             * as text of the client's encoding. */
            vals[i] = v[i].s;
            types[i] = PG_BYTEAOID;
            lens[i] = (int)strlen(v[i].s);
            formats[i] = 1;
        } else {
            vals[i] = v[i].s;
            types[i] = PG_TEXTOID;
        }
    }
    /* Rows one at a time (single-row mode), so that a long series is
     * never held whole. */
    if (!pq.sendQueryParams(p->c, sql, np, types, vals, lens, formats, 0))
        return fail(p, NULL, "a statement", err, errlen);
    pq.setSingleRowMode(p->c);
    while ((r = pq.getResult(p->c)) != NULL) {
        st = pq.resultStatus(r);
        if (st == PGRES_SINGLE_TUPLE && fn != NULL && rc == 0) {
            int n = pq.nfields(r);

            if (n > 32)
                n = 32;
            rc = row(p, r, col, n);
            if (rc == 0)
                rc = fn(ctx, col, n);
        } else if (st != PGRES_SINGLE_TUPLE && st != PGRES_COMMAND_OK &&
                   st != PGRES_TUPLES_OK && rc == 0) {
            rc = fail(p, r, "a statement", err, errlen);
        }
        pq.clear(r);
    }
    if (rc == 0 && pq.status(p->c) != CONNECTION_OK)
        rc = fail(p, NULL, "a statement", err, errlen);
    return rc;
}

static int p_put(void *db, const char *sql, const struct hrh_hval *v, int np,
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
    pq.finish(p->c);
    free(p->bytes);
    free(p);
}

static int p_open(const char *dsn, int write, void **db, char *err,
                  size_t errlen)
{
    /* The timeout first, dsn's own pairs after it: libpq keeps the last
     * value of a key, so that a connect_timeout in dsn wins. */
    const char *env = getenv("PGCONNECT_TIMEOUT");
    const char *keys[] = { "connect_timeout", "dbname", NULL };
    const char *vals[] = { CONNECT_TIMEOUT, dsn, NULL };
    int skip = env != NULL && env[0] != '\0';
    struct pdb *p;
    int rc;

    if ((rc = pq_load(err, errlen)) != 0)
        return rc;
    if ((p = calloc(1, sizeof *p)) == NULL)
        return -ENOMEM;
    p->c = pq.connectdbParams(keys + skip, vals + skip, 1);
    if (p->c == NULL) {
        free(p);
        return -ENOMEM;
    }
    if (pq.status(p->c) != CONNECTION_OK) {
        rc = fail(p, NULL, "cannot connect", err, errlen);
        p_close(p);
        return rc;
    }
    pq.setNoticeProcessor(p->c, no_notices, NULL);
    /* Reals as the shortest text that reads back the same (the default
     * of PostgreSQL 12 and later, asked for all the same); bytea as hex,
     * which row() decodes; a reader's transactions read-only. */
    rc = exec(p, "SET extra_float_digits = 3", err, errlen);
    if (rc == 0)
        rc = exec(p, "SET bytea_output = 'hex'", err, errlen);
    if (rc == 0 && !write)
        rc = exec(p, "SET default_transaction_read_only = on", err, errlen);
    if (rc != 0) {
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
    r = pq.exec(p->c, "ROLLBACK");
    pq.clear(r);
    p->in_tx = 0;
}

/* A key's six names, each after its length, hashed: what the index of
 * key_unique holds, where a btree entry of the names themselves (up to
 * 6 x HRP_MAX_STRING bytes) is refused past about 2,700 bytes. */
#define KEY_DIGEST                                                           \
    "sha256(int4send(length(node)) || node || "                             \
    "int4send(length(operator)) || operator || "                            \
    "int4send(length(backend)) || backend || "                              \
    "int4send(length(phase)) || phase || "                                  \
    "int4send(length(range)) || range || "                                  \
    "int4send(length(metric)) || metric)"

static const char *const key_unique[] = {
    "ALTER TABLE hostrange_key DROP CONSTRAINT "
    "hostrange_key_node_operator_backend_phase_range_metric_key",
    "CREATE UNIQUE INDEX hostrange_key_names ON hostrange_key ("
    KEY_DIGEST ")",
    NULL,
};

const struct hrh_hbackend hrh_hbackend_pg = {
    "postgresql",
    "BIGSERIAL PRIMARY KEY",
    "SELECT count(*) FROM information_schema.tables "
    "WHERE table_schema = current_schema()",
    /* (A text default, such as a column added to rows that were there,
     * cannot become bytes: it goes; every insert names every name.) */
    "ALTER TABLE %1$s ALTER COLUMN %2$s DROP DEFAULT, "
    "ALTER COLUMN %2$s TYPE BYTEA "
    "USING convert_to(%2$s, pg_client_encoding())",
    "((" KEY_DIGEST "))",
    key_unique,
    p_open,
    p_close,
    p_begin,
    p_put,
    p_query,
    p_commit,
    p_rollback,
};
