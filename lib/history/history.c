/* The run history's schema, adds and queries, on either backend (see
 * history.h, backend.h). */
#include "config.h"

#include "lib/history/history.h"
#include "lib/history/backend.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct hrd_history {
    const struct hrd_hbackend *be;
    void *db;
    char *dsn;
    char name[1024];
};

/* Points written by one statement. */
#define BATCH 64
#define POINT_COLS 7

int hrd_history_is_pg(const char *dsn)
{
    const char *eq;

    if (strncmp(dsn, "postgresql://", 13) == 0 ||
        strncmp(dsn, "postgres://", 11) == 0)
        return 1;
    /* key=value: a word of letters and underscores, then '='. */
    eq = strchr(dsn, '=');
    if (eq == NULL || eq == dsn)
        return 0;
    for (const char *p = dsn; p < eq; p++) {
        if (!isalpha((unsigned char)*p) && *p != '_' && *p != ' ')
            return 0;
    }
    return 1;
}

/* Masks, in s, the value of every password=VALUE (a URL's parameter or a
 * key=value pair, quoted or not). */
static void mask_password_pairs(char *s, size_t len)
{
    char *p = s;

    while ((p = strcasestr(p, "password")) != NULL) {
        char *v = p + 8, *end;

        while (*v == ' ')
            v++;
        if (*v != '=') {
            p += 8;
            continue;
        }
        v++;
        while (*v == ' ')
            v++;
        end = v;
        if (*end == '\'') {
            for (end++; *end != '\0' && *end != '\''; end++) {
                if (*end == '\\' && end[1] != '\0')
                    end++;
            }
            if (*end == '\'')
                end++;
        } else {
            while (*end != '\0' && *end != ' ' && *end != '&')
                end++;
        }
        if (strlen(s) - (size_t)(end - v) + 3 < len) {
            memmove(v + 3, end, strlen(end) + 1);
            memcpy(v, "***", 3);
        }
        p = v + 3;
    }
}

void hrd_history_name(const char *dsn, char *buf, size_t len)
{
    snprintf(buf, len, "%s", dsn);
    if (!hrd_history_is_pg(dsn))
        return;
    if (strstr(buf, "://") != NULL) {
        char *user = strstr(buf, "://") + 3;
        char *at = strchr(user, '@'), *slash = strchr(user, '/');
        char *colon = strchr(user, ':');

        if (at != NULL && (slash == NULL || at < slash) && colon != NULL &&
            colon < at) {
            memmove(colon + 4, at, strlen(at) + 1);
            memcpy(colon + 1, "***", 3);
        }
    }
    mask_password_pairs(buf, len);
}

/* Runs statement sql with no parameters. */
static int put0(struct hrd_history *h, const char *sql, char *err,
                size_t errlen)
{
    return h->be->put(h->db, sql, NULL, 0, err, errlen);
}

/* A row's first column as an integer, into *(int64_t *)ctx. */
static int first_int(void *ctx, const char *const *col, int n)
{
    *(int64_t *)ctx = n > 0 && col[0] != NULL ? strtoll(col[0], NULL, 10)
                                                : 0;
    return 0;
}

/* The schema: version 1's tables, then the migrations from each version
 * to the next (migrations[v - 1] takes version v to v + 1). %s is the
 * backend's serial key. */
static const char *const schema_v1[] = {
    "CREATE TABLE hostrange_schema (version INTEGER NOT NULL)",
    "CREATE TABLE hostrange_machine (id %s, name TEXT NOT NULL UNIQUE)",
    "CREATE TABLE hostrange_run (id %s, run_id TEXT NOT NULL UNIQUE, "
    "time_ns BIGINT NOT NULL, saved_ns BIGINT NOT NULL, "
    "commit_id TEXT NOT NULL, machine BIGINT NOT NULL REFERENCES "
    "hostrange_machine (id), host TEXT NOT NULL, file TEXT NOT NULL, "
    "parts TEXT NOT NULL, nkeys BIGINT NOT NULL)",
    "CREATE TABLE hostrange_meta (run BIGINT NOT NULL REFERENCES "
    "hostrange_run (id), key TEXT NOT NULL, value TEXT NOT NULL)",
    "CREATE TABLE hostrange_key (id %s, node TEXT NOT NULL, "
    "operator TEXT NOT NULL, backend TEXT NOT NULL, phase TEXT NOT NULL, "
    "range TEXT NOT NULL, metric TEXT NOT NULL, UNIQUE (node, operator, "
    "backend, phase, range, metric))",
    "CREATE TABLE hostrange_point (run BIGINT NOT NULL REFERENCES "
    "hostrange_run (id), key BIGINT NOT NULL REFERENCES hostrange_key (id), "
    "count BIGINT NOT NULL, mean DOUBLE PRECISION NOT NULL, "
    "median DOUBLE PRECISION NOT NULL, p10 DOUBLE PRECISION NOT NULL, "
    "p90 DOUBLE PRECISION NOT NULL, PRIMARY KEY (key, run))",
    "INSERT INTO hostrange_schema (version) VALUES (1)",
    NULL,
};

/* Version 2: runs found in order by an index. */
static const char *const migrate_1_2[] = {
    "CREATE INDEX hostrange_run_order ON hostrange_run (time_ns, id)",
    NULL,
};

static const char *const *const migrations[HRD_HISTORY_SCHEMA - 1] = {
    migrate_1_2,
};

static int run_steps(struct hrd_history *h, const char *const *steps,
                     char *err, size_t errlen)
{
    char sql[1024];
    int rc;

    for (size_t i = 0; steps[i] != NULL; i++) {
        snprintf(sql, sizeof sql, steps[i], h->be->serial_key,
                 h->be->serial_key, h->be->serial_key);
        if ((rc = put0(h, sql, err, errlen)) != 0)
            return rc;
    }
    return 0;
}

/* Reads the version, creating or migrating the schema as needed, in one
 * transaction. */
static int schema(struct hrd_history *h, char *err, size_t errlen)
{
    int64_t tables = 0, version = 0;
    char why[512];
    int rc;

    if ((rc = h->be->begin(h->db, err, errlen)) != 0)
        return rc;
    rc = h->be->query(h->db, h->be->count_tables, NULL, 0, first_int,
                      &tables, err, errlen);
    if (rc == 0 && tables == 0) {
        rc = run_steps(h, schema_v1, err, errlen);
        version = 1;
    } else if (rc == 0) {
        rc = h->be->query(h->db, "SELECT max(version) FROM hostrange_schema",
                          NULL, 0, first_int, &version, why, sizeof why);
        if (rc != 0 || version < 1) {
            snprintf(err, errlen, "%s: not a hostrange history (it holds "
                     "%lld tables of something else)", h->name,
                     (long long)tables);
            rc = -EINVAL;
        } else if (version > HRD_HISTORY_SCHEMA) {
            snprintf(err, errlen, "%s: a history of schema version %lld, "
                     "newer than this hostrange's (%d): use a newer "
                     "hostrangectl", h->name, (long long)version,
                     HRD_HISTORY_SCHEMA);
            rc = -EINVAL;
        }
    }
    for (; rc == 0 && version < HRD_HISTORY_SCHEMA; version++)
        rc = run_steps(h, migrations[version - 1], err, errlen);
    if (rc == 0) {
        struct hrd_hval v = { HRD_HVAL_INT, HRD_HISTORY_SCHEMA, 0, NULL };

        rc = h->be->put(h->db, "UPDATE hostrange_schema SET version = $1",
                        &v, 1, err, errlen);
    }
    if (rc == 0)
        rc = h->be->commit(h->db, err, errlen);
    if (rc != 0)
        h->be->rollback(h->db);
    return rc;
}

int hrd_history_open(const char *dsn, struct hrd_history **out, char *err,
                     size_t errlen)
{
    struct hrd_history *h = calloc(1, sizeof *h);
    char why[2048];
    int rc;

    if (h == NULL || (h->dsn = strdup(dsn)) == NULL) {
        free(h);
        return -ENOMEM;
    }
    h->be = hrd_history_is_pg(dsn) ? &hrd_hbackend_pg : &hrd_hbackend_sqlite;
    hrd_history_name(dsn, h->name, sizeof h->name);
    rc = h->be->open(h->dsn, &h->db, why, sizeof why);
    if (rc == 0)
        rc = schema(h, why, sizeof why);
    if (rc != 0) {
        /* SQLite's reasons start with the path; libpq's name no password
         * (its own message), but say which database. */
        if (h->be == &hrd_hbackend_pg)
            snprintf(err, errlen, "%s: %s", h->name, why);
        else
            snprintf(err, errlen, "%s", why);
        mask_password_pairs(err, errlen);
        hrd_history_close(h);
        return rc;
    }
    *out = h;
    return 0;
}

void hrd_history_close(struct hrd_history *h)
{
    if (h == NULL)
        return;
    if (h->db != NULL)
        h->be->close(h->db);
    free(h->dsn);
    free(h);
}

static struct hrd_hval text(const char *s)
{
    struct hrd_hval v = { HRD_HVAL_TEXT, 0, 0, s != NULL ? s : "" };
    return v;
}

static struct hrd_hval integer(int64_t i)
{
    struct hrd_hval v = { HRD_HVAL_INT, i, 0, NULL };
    return v;
}

static struct hrd_hval real(double d)
{
    struct hrd_hval v = { HRD_HVAL_REAL, 0, d, NULL };
    return v;
}

int hrd_history_has(struct hrd_history *h, const char *id, char *err,
                    size_t errlen)
{
    struct hrd_hval v = text(id);
    int64_t n = 0;
    int rc = h->be->query(h->db, "SELECT count(*) FROM hostrange_run "
                          "WHERE run_id = $1", &v, 1, first_int, &n, err,
                          errlen);

    return rc != 0 ? rc : n > 0;
}

/* The id of the key of p, made when new. */
static int key_id(struct hrd_history *h, const struct hrd_history_point *p,
                  int64_t *id, char *err, size_t errlen)
{
    struct hrd_hval v[6] = { text(p->node), text(p->op), text(p->backend),
                             text(p->phase), text(p->range),
                             text(p->metric) };
    int rc;

    *id = 0;
    rc = h->be->query(h->db, "SELECT id FROM hostrange_key WHERE node = $1 "
                      "AND operator = $2 AND backend = $3 AND phase = $4 "
                      "AND range = $5 AND metric = $6", v, 6, first_int, id,
                      err, errlen);
    if (rc == 0 && *id == 0)
        rc = h->be->query(h->db, "INSERT INTO hostrange_key (node, "
                          "operator, backend, phase, range, metric) VALUES "
                          "($1, $2, $3, $4, $5, $6) RETURNING id", v, 6,
                          first_int, id, err, errlen);
    return rc;
}

static int machine_id(struct hrd_history *h, const char *name, int64_t *id,
                      char *err, size_t errlen)
{
    struct hrd_hval v = text(name);
    int rc;

    *id = 0;
    rc = h->be->query(h->db, "SELECT id FROM hostrange_machine WHERE name "
                      "= $1", &v, 1, first_int, id, err, errlen);
    if (rc == 0 && *id == 0)
        rc = h->be->query(h->db, "INSERT INTO hostrange_machine (name) "
                          "VALUES ($1) RETURNING id", &v, 1, first_int, id,
                          err, errlen);
    return rc;
}

/* The statement that writes n points (n is 1 or BATCH), made once. */
static const char *points_sql(size_t n)
{
    static char one[512], batch[BATCH * 64 + 256];
    char *buf = n == 1 ? one : batch;
    size_t len, cap = n == 1 ? sizeof one : sizeof batch;

    if (buf[0] != '\0')
        return buf;
    len = (size_t)snprintf(buf, cap, "INSERT INTO hostrange_point (run, key, "
                           "count, mean, median, p10, p90) VALUES ");
    for (size_t i = 0; i < n; i++) {
        size_t b = i * POINT_COLS;

        len += (size_t)snprintf(buf + len, cap - len,
                                "%s($%zu, $%zu, $%zu, $%zu, $%zu, $%zu, $%zu)",
                                i ? ", " : "", b + 1, b + 2, b + 3, b + 4,
                                b + 5, b + 6, b + 7);
    }
    return buf;
}

static int add_points(struct hrd_history *h, int64_t run,
                      const struct hrd_history_point *p, size_t n,
                      char *err, size_t errlen)
{
    struct hrd_hval v[BATCH * POINT_COLS];
    size_t i = 0;
    int rc = 0;

    while (rc == 0 && i < n) {
        size_t k = n - i >= BATCH ? BATCH : 1;

        for (size_t j = 0; j < k && rc == 0; j++) {
            const struct hrd_history_point *q = &p[i + j];
            struct hrd_hval *w = &v[j * POINT_COLS];
            int64_t key;

            rc = key_id(h, q, &key, err, errlen);
            w[0] = integer(run);
            w[1] = integer(key);
            w[2] = integer((int64_t)q->count);
            w[3] = real(q->mean);
            w[4] = real(q->median);
            w[5] = real(q->p10);
            w[6] = real(q->p90);
        }
        if (rc == 0)
            rc = h->be->put(h->db, points_sql(k), v, (int)(k * POINT_COLS),
                            err, errlen);
        i += k;
    }
    return rc;
}

int hrd_history_add(struct hrd_history *h, const struct hrd_history_run *r,
                    const struct hrd_history_point *p, size_t n, char *err,
                    size_t errlen)
{
    int64_t run = 0, machine = 0;
    int rc;

    if ((rc = h->be->begin(h->db, err, errlen)) != 0)
        return rc;
    rc = hrd_history_has(h, r->id, err, errlen);
    if (rc == 1) {
        h->be->rollback(h->db);
        return 1;
    }
    if (rc == 0)
        rc = machine_id(h, r->machine, &machine, err, errlen);
    if (rc == 0) {
        struct hrd_hval v[9] = { text(r->id), integer(r->time_ns),
                                 integer(r->saved_ns), text(r->commit),
                                 integer(machine), text(r->host),
                                 text(r->file), text(r->parts),
                                 integer((int64_t)n) };

        rc = h->be->query(h->db, "INSERT INTO hostrange_run (run_id, "
                          "time_ns, saved_ns, commit_id, machine, host, "
                          "file, parts, nkeys) VALUES ($1, $2, $3, $4, $5, "
                          "$6, $7, $8, $9) RETURNING id", v, 9, first_int,
                          &run, err, errlen);
    }
    for (size_t i = 0; rc == 0 && i < r->nmeta; i++) {
        struct hrd_hval v[3] = { integer(run), text(r->meta_key[i]),
                                 text(r->meta_value[i]) };

        rc = h->be->put(h->db, "INSERT INTO hostrange_meta (run, key, "
                        "value) VALUES ($1, $2, $3)", v, 3, err, errlen);
    }
    if (rc == 0)
        rc = add_points(h, run, p, n, err, errlen);
    if (rc == 0)
        rc = h->be->commit(h->db, err, errlen);
    if (rc != 0)
        h->be->rollback(h->db);
    return rc;
}

struct runs_ctx {
    int (*fn)(void *ctx, const struct hrd_history_runinfo *r);
    void *ctx;
};

static int run_row(void *arg, const char *const *col, int n)
{
    struct runs_ctx *c = arg;
    struct hrd_history_runinfo r;

    if (n < 5)
        return -EIO;
    r.id = col[0];
    r.time_ns = strtoll(col[1], NULL, 10);
    r.commit = col[2];
    r.machine = col[3];
    r.keys = strtoll(col[4], NULL, 10);
    return c->fn(c->ctx, &r);
}

int hrd_history_runs(struct hrd_history *h,
                     int (*fn)(void *ctx, const struct hrd_history_runinfo *r),
                     void *ctx, char *err, size_t errlen)
{
    struct runs_ctx c = { fn, ctx };

    return h->be->query(h->db, "SELECT r.run_id, r.time_ns, r.commit_id, "
                        "m.name, r.nkeys FROM hostrange_run r JOIN "
                        "hostrange_machine m ON m.id = r.machine "
                        "ORDER BY r.time_ns, r.id", NULL, 0, run_row, &c,
                        err, errlen);
}

struct points_ctx {
    int (*fn)(void *ctx, const struct hrd_history_point *p);
    void *ctx;
};

static int point_row(void *arg, const char *const *col, int n)
{
    struct points_ctx *c = arg;
    struct hrd_history_point p;

    if (n < 16)
        return -EIO;
    p.key = strtoll(col[0], NULL, 10);
    p.node = col[1];
    p.op = col[2];
    p.backend = col[3];
    p.phase = col[4];
    p.range = col[5];
    p.metric = col[6];
    p.machine = col[7];
    p.time_ns = strtoll(col[8], NULL, 10);
    p.commit = col[9];
    p.run = col[10];
    p.count = strtoull(col[11], NULL, 10);
    p.mean = strtod(col[12], NULL);
    p.median = strtod(col[13], NULL);
    p.p10 = strtod(col[14], NULL);
    p.p90 = strtod(col[15], NULL);
    return c->fn(c->ctx, &p);
}

int hrd_history_points(struct hrd_history *h,
                       int (*fn)(void *ctx,
                                 const struct hrd_history_point *p),
                       void *ctx, char *err, size_t errlen)
{
    struct points_ctx c = { fn, ctx };

    return h->be->query(h->db, "SELECT k.id, k.node, k.operator, k.backend, "
                        "k.phase, k.range, k.metric, m.name, r.time_ns, "
                        "r.commit_id, r.run_id, p.count, p.mean, p.median, "
                        "p.p10, p.p90 FROM hostrange_point p "
                        "JOIN hostrange_key k ON k.id = p.key "
                        "JOIN hostrange_run r ON r.id = p.run "
                        "JOIN hostrange_machine m ON m.id = r.machine "
                        "ORDER BY k.id, r.machine, r.time_ns, r.id", NULL, 0,
                        point_row, &c, err, errlen);
}
