/* The run history's adds and queries, on either backend (see history.h,
 * backend.h); its schema is schema.c's, its connection strings dsn.c's. */
#include "config.h"

#include "lib/history/history.h"
#include "lib/history/backend.h"
#include "lib/history/history_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Points written by one statement. */
#define BATCH 64
#define POINT_COLS 8

/* Runs statement sql with no parameters. */
int hrh__put0(struct hrh_history *h, const char *sql, char *err,
                size_t errlen)
{
    return h->be->put(h->db, sql, NULL, 0, err, errlen);
}

/* A row's first column as an integer, into *(int64_t *)ctx. */
int hrh__first_int(void *ctx, const char *const *col, int n)
{
    *(int64_t *)ctx = n > 0 && col[0] != NULL ? strtoll(col[0], NULL, 10)
                                                : 0;
    return 0;
}

int hrh_open(const char *dsn, enum hrh_mode mode,
                     struct hrh_history **out, char *err, size_t errlen)
{
    struct hrh_history *h = calloc(1, sizeof *h);
    char why[2048];
    int rc;

    if (h == NULL || (h->dsn = strdup(dsn)) == NULL) {
        free(h);
        return -ENOMEM;
    }
    h->be = hrh_is_pg(dsn) ? &hrh_hbackend_pg : &hrh_hbackend_sqlite;
    h->mode = mode;
    hrh_name(dsn, h->name, sizeof h->name);
    rc = h->be->open(h->dsn, mode == HRH_WRITE, &h->db, why,
                     sizeof why);
    if (rc == 0)
        rc = mode == HRH_WRITE
                 ? hrh__schema(h, why, sizeof why)
                 : hrh__schema_read(h, why, sizeof why);
    if (rc == 0 && h->version < HRH_SCHEMA)
        rc = hrh__migrate_to_read(h, why, sizeof why);
    if (rc != 0) {
        /* The reasons of the backends and of the schema do not name the
         * database: its name (without a password) is said here. */
        snprintf(err, errlen, "%s: %s", h->name, why);
        hrh__mask_passwords(err, errlen);
        hrh__scrub_password(dsn, err);
        hrh_close(h);
        return rc;
    }
    *out = h;
    return 0;
}

void hrh_close(struct hrh_history *h)
{
    if (h == NULL)
        return;
    if (h->db != NULL)
        h->be->close(h->db);
    free(h->dsn);
    free(h);
}

int hrh_has(struct hrh_history *h, const char *id, char *err,
                    size_t errlen)
{
    struct hrh_hval v = hrh_hval_text(id);
    int64_t n = 0;
    int rc = h->be->query(h->db, "SELECT count(*) FROM hostrange_run "
                          "WHERE run_id = $1", &v, 1, hrh__first_int,
                          &n, err, errlen);

    return rc != 0 ? rc : n > 0;
}

/*
 * The keys of the history by name, read once per add (one query, not one
 * per key: a round trip each to a PostgreSQL server): an open-addressing
 * table of the six names, each with its length, and the key's id.
 */
struct keymap {
    struct keyslot {
        char *name; /* NULL: empty */
        size_t len;
        int64_t id;
    } *slot;
    size_t cap, n;
};

static void keymap_fini(struct keymap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        free(m->slot[i].name);
    free(m->slot);
    memset(m, 0, sizeof *m);
}

/* The name of a key: each field's length, then its bytes. Returns its
 * length in buf (of at least len bytes), or 0 when it does not fit. */
static size_t key_name(const char *const *f, char *buf, size_t len)
{
    size_t n = 0;

    for (int i = 0; i < 6; i++) {
        size_t l = strlen(f[i]);
        int w = snprintf(buf + n, len - n, "%zu:", l);

        if (w < 0 || n + (size_t)w + l >= len)
            return 0;
        n += (size_t)w;
        memcpy(buf + n, f[i], l);
        n += l;
    }
    return n;
}

static uint64_t hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;

    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
    return h;
}

static struct keyslot *keymap_find(struct keymap *m, const char *name,
                                   size_t len)
{
    size_t i = (size_t)hash(name, len) & (m->cap - 1);

    while (m->slot[i].name != NULL &&
           (m->slot[i].len != len || memcmp(m->slot[i].name, name, len) != 0))
        i = (i + 1) & (m->cap - 1);
    return &m->slot[i];
}

static int keymap_put(struct keymap *m, const char *name, size_t len,
                      int64_t id)
{
    struct keyslot *s;

    if (2 * (m->n + 1) > m->cap) {
        struct keymap big = { NULL, m->cap ? 2 * m->cap : 1024, 0 };

        if ((big.slot = calloc(big.cap, sizeof *big.slot)) == NULL)
            return -ENOMEM;
        for (size_t i = 0; i < m->cap; i++) {
            if (m->slot[i].name != NULL)
                *keymap_find(&big, m->slot[i].name, m->slot[i].len) =
                    m->slot[i];
        }
        big.n = m->n;
        free(m->slot);
        *m = big;
    }
    s = keymap_find(m, name, len);
    if (s->name == NULL) {
        if ((s->name = malloc(len + 1)) == NULL)
            return -ENOMEM;
        memcpy(s->name, name, len);
        s->len = len;
        m->n++;
    }
    s->id = id;
    return 0;
}

static int key_row(void *ctx, const char *const *col, int n)
{
    char buf[8192];
    size_t len;

    if (n < 7 || col[0] == NULL)
        return -EIO;
    for (int i = 1; i < 7; i++) {
        if (col[i] == NULL)
            return -EIO;
    }
    len = key_name(col + 1, buf, sizeof buf);
    if (len == 0)
        return 0; /* too long a name: looked up by a query of its own */
    return keymap_put(ctx, buf, len, strtoll(col[0], NULL, 10));
}

static int keymap_load(struct hrh_history *h, struct keymap *m, char *err,
                       size_t errlen)
{
    return h->be->query(h->db, "SELECT id, node, operator, backend, phase, "
                        "range, metric FROM hostrange_key", NULL, 0, key_row,
                        m, err, errlen);
}

/* The id of the key of p, made when new. */
static int key_id(struct hrh_history *h, struct keymap *m,
                  const struct hrh_point *p, int64_t *id, char *err,
                  size_t errlen)
{
    const char *f[6] = { p->node, p->op, p->backend, p->phase, p->range,
                         p->metric };
    struct hrh_hval v[6] = { hrh_hval_bytes(p->node), hrh_hval_bytes(p->op),
                             hrh_hval_bytes(p->backend),
                             hrh_hval_bytes(p->phase),
                             hrh_hval_bytes(p->range),
                             hrh_hval_bytes(p->metric) };
    char buf[8192], sql[1024];
    size_t len = key_name(f, buf, sizeof buf);
    int rc;

    *id = 0;
    if (len > 0) {
        struct keyslot *s = keymap_find(m, buf, len);

        if (s->name != NULL) {
            *id = s->id;
            return 0;
        }
    }
    /* Not among the keys read at the start: made, or (another add's,
     * since) found, by one statement; the update of a conflicting row
     * changes nothing but makes RETURNING give its id. */
    snprintf(sql, sizeof sql, "INSERT INTO hostrange_key (node, operator, "
             "backend, phase, range, metric) VALUES ($1, $2, $3, $4, $5, "
             "$6) ON CONFLICT %s DO UPDATE SET node = excluded.node "
             "RETURNING id", h->be->key_conflict);
    rc = h->be->query(h->db, sql, v, 6, hrh__first_int, id, err, errlen);
    if (rc == 0 && *id == 0) {
        snprintf(err, errlen, "the history gave no id for a key");
        rc = -EIO;
    }
    if (rc == 0 && len > 0)
        rc = keymap_put(m, buf, len, *id);
    return rc;
}

int hrh__machine_id(struct hrh_history *h, const char *name,
                            int64_t *id, char *err, size_t errlen)
{
    struct hrh_hval v = hrh_hval_bytes(name);
    int rc;

    *id = 0;
    rc = h->be->query(h->db, "SELECT id FROM hostrange_machine WHERE name "
                      "= $1", &v, 1, hrh__first_int, id, err, errlen);
    if (rc == 0 && *id == 0)
        rc = h->be->query(h->db, "INSERT INTO hostrange_machine (name) "
                          "VALUES ($1) RETURNING id", &v, 1,
                          hrh__first_int, id, err, errlen);
    return rc;
}

/* The statement that writes n points (n is 1 or BATCH), made once. */
static const char *points_sql(size_t n)
{
    static char one[512], batch[BATCH * 72 + 256];
    char *buf = n == 1 ? one : batch;
    size_t len, cap = n == 1 ? sizeof one : sizeof batch;

    if (buf[0] != '\0')
        return buf;
    len = (size_t)snprintf(buf, cap, "INSERT INTO hostrange_point (run, key, "
                           "count, mean, median, p10, p90, rounds) VALUES ");
    for (size_t i = 0; i < n; i++) {
        size_t b = i * POINT_COLS;

        len += (size_t)snprintf(buf + len, cap - len,
                                "%s($%zu, $%zu, $%zu, $%zu, $%zu, $%zu, $%zu, "
                                "$%zu)", i ? ", " : "", b + 1, b + 2, b + 3,
                                b + 4, b + 5, b + 6, b + 7, b + 8);
    }
    return buf;
}

/*
 * A point's round medians as stored: each as "%.15g", or with more digits
 * when that does not read back as the same double, separated by spaces;
 * "" for none.
 * Returns a string (free it), or NULL when out of memory.
 */
static char *rounds_text(const double *v, size_t n)
{
    char *s = malloc(n * 26 + 1);
    size_t len = 0;

    if (s == NULL)
        return NULL;
    s[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        int prec = 15;

        /* The fewest digits from 15 that read back exactly (%g drops
         * trailing zeros: 1000.5, not 1000.50000000000). */
        for (; prec < 17; prec++) {
            char b[32];

            snprintf(b, sizeof b, "%.*g", prec, v[i]);
            if (strtod(b, NULL) == v[i])
                break;
        }
        len += (size_t)snprintf(s + len, 26, "%s%.*g", i ? " " : "", prec,
                                v[i]);
    }
    return s;
}

/* Reads rounds_text's form into a new array (*v, free it) of *n values.
 * Returns 0, -ENOMEM, or -EIO for text that is not a list of numbers. */
static int rounds_parse(const char *s, double **v, size_t *n)
{
    size_t cap = 1;
    char *end;

    *v = NULL;
    *n = 0;
    for (const char *p = s; *p != '\0'; p++)
        cap += *p == ' ';
    if (*s == '\0')
        return 0;
    if ((*v = malloc(cap * sizeof **v)) == NULL)
        return -ENOMEM;
    while (*s != '\0') {
        double d = strtod(s, &end);

        if (end == s || (*end != ' ' && *end != '\0') || *n == cap) {
            free(*v);
            *v = NULL;
            *n = 0;
            return -EIO;
        }
        (*v)[(*n)++] = d;
        s = *end == ' ' ? end + 1 : end;
    }
    return 0;
}

static int add_points(struct hrh_history *h, int64_t run,
                      const struct hrh_point *p, size_t n,
                      char *err, size_t errlen)
{
    struct hrh_hval v[BATCH * POINT_COLS];
    char *rtext[BATCH] = { NULL };
    struct keymap m = { NULL, 0, 0 };
    size_t i = 0;
    int rc = keymap_put(&m, "", 0, 0) == 0 ? 0 : -ENOMEM;

    /* (The empty name, never a key's, makes the table.) */
    if (rc == 0)
        rc = keymap_load(h, &m, err, errlen);

    while (rc == 0 && i < n) {
        size_t k = n - i >= BATCH ? BATCH : 1;

        for (size_t j = 0; j < k && rc == 0; j++) {
            const struct hrh_point *q = &p[i + j];
            struct hrh_hval *w = &v[j * POINT_COLS];
            int64_t key;

            rc = key_id(h, &m, q, &key, err, errlen);
            free(rtext[j]);
            rtext[j] = rounds_text(q->rounds, q->nrounds);
            if (rc == 0 && rtext[j] == NULL)
                rc = -ENOMEM;
            w[0] = hrh_hval_int(run);
            w[1] = hrh_hval_int(key);
            w[2] = hrh_hval_int((int64_t)q->count);
            w[3] = hrh_hval_real(q->mean);
            w[4] = hrh_hval_real(q->median);
            w[5] = hrh_hval_real(q->p10);
            w[6] = hrh_hval_real(q->p90);
            w[7] = hrh_hval_text(rtext[j]);
        }
        if (rc == 0)
            rc = h->be->put(h->db, points_sql(k), v, (int)(k * POINT_COLS),
                            err, errlen);
        i += k;
    }
    for (size_t j = 0; j < BATCH; j++)
        free(rtext[j]);
    keymap_fini(&m);
    return rc;
}

int hrh_add(struct hrh_history *h, const struct hrh_run *r,
                    const struct hrh_point *p, size_t n, char *err,
                    size_t errlen)
{
    int64_t run = 0, machine = 0;
    int rc;

    if (h->mode != HRH_WRITE) {
        snprintf(err, errlen, "opened only to read");
        return -EBADF;
    }
    if ((rc = h->be->begin(h->db, err, errlen)) != 0)
        return rc;
    rc = hrh_has(h, r->id, err, errlen);
    if (rc == 1) {
        h->be->rollback(h->db);
        return 1;
    }
    if (rc == 0)
        rc = hrh__machine_id(h, r->machine, &machine, err, errlen);
    if (rc == 0) {
        struct hrh_hval v[10] = { hrh_hval_text(r->id),
                                  hrh_hval_int(r->time_ns),
                                  hrh_hval_int(r->saved_ns),
                                  hrh_hval_bytes(r->commit),
                                  hrh_hval_int(machine),
                                  hrh_hval_bytes(r->host),
                                  hrh_hval_bytes(r->file),
                                  hrh_hval_text(r->parts),
                                  hrh_hval_int((int64_t)n),
                                  hrh_hval_bytes(r->kernel) };

        rc = h->be->query(h->db, "INSERT INTO hostrange_run (run_id, "
                          "time_ns, saved_ns, commit_id, machine, host, "
                          "file, parts, nkeys, kernel) VALUES ($1, $2, $3, "
                          "$4, $5, $6, $7, $8, $9, $10) RETURNING id", v, 10,
                          hrh__first_int, &run, err, errlen);
    }
    for (size_t i = 0; rc == 0 && i < r->nmeta; i++) {
        struct hrh_hval v[3] = { hrh_hval_int(run),
                                 hrh_hval_bytes(r->meta_key[i]),
                                 hrh_hval_bytes(r->meta_value[i]) };

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
    int (*fn)(void *ctx, const struct hrh_runinfo *r);
    void *ctx;
};

static int run_row(void *arg, const char *const *col, int n)
{
    struct runs_ctx *c = arg;
    struct hrh_runinfo r;

    if (n < 7)
        return -EIO;
    r.id = col[0];
    r.time_ns = strtoll(col[1], NULL, 10);
    r.commit = col[2];
    r.machine = col[3];
    r.keys = strtoll(col[4], NULL, 10);
    r.host = col[5];
    r.kernel = col[6];
    return c->fn(c->ctx, &r);
}

int hrh_runs(struct hrh_history *h,
                     int (*fn)(void *ctx, const struct hrh_runinfo *r),
                     void *ctx, char *err, size_t errlen)
{
    struct runs_ctx c = { fn, ctx };
    char sql[512];

    /* A history read at schema 3 or older (not migrated) keeps no
     * kernel. */
    snprintf(sql, sizeof sql, "SELECT r.run_id, r.time_ns, r.commit_id, "
             "m.name, r.nkeys, r.host, %s FROM hostrange_run r JOIN "
             "hostrange_machine m ON m.id = r.machine ORDER BY r.time_ns, "
             "r.id", h->version >= 4 ? "r.kernel" : "''");
    return h->be->query(h->db, sql, NULL, 0, run_row, &c, err, errlen);
}

struct points_ctx {
    int (*fn)(void *ctx, const struct hrh_point *p);
    void *ctx;
};

static int point_row(void *arg, const char *const *col, int n)
{
    struct points_ctx *c = arg;
    struct hrh_point p;
    double *rounds;
    int rc;

    if (n < 19)
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
    p.host = col[17];
    p.kernel = col[18];
    if ((rc = rounds_parse(col[16] != NULL ? col[16] : "", &rounds,
                           &p.nrounds)) != 0)
        return rc;
    p.rounds = rounds;
    rc = c->fn(c->ctx, &p);
    free(rounds);
    return rc;
}

int hrh_points(struct hrh_history *h,
                       int (*fn)(void *ctx,
                                 const struct hrh_point *p),
                       void *ctx, char *err, size_t errlen)
{
    struct points_ctx c = { fn, ctx };
    /* A history read at schema 1 or 2 (not migrated) has no round
     * medians: every point is of one round. */
    const char *rounds = h->version >= 3 ? "p.rounds" : "''";
    /* Nor, before 4, a run's kernel. */
    const char *kernel = h->version >= 4 ? "r.kernel" : "''";
    char sql[1024];

    snprintf(sql, sizeof sql, "SELECT k.id, k.node, k.operator, k.backend, "
             "k.phase, k.range, k.metric, m.name, r.time_ns, r.commit_id, "
             "r.run_id, p.count, p.mean, p.median, p.p10, p.p90, %s, "
             "r.host, %s FROM hostrange_point p "
             "JOIN hostrange_key k ON k.id = p.key "
             "JOIN hostrange_run r ON r.id = p.run "
             "JOIN hostrange_machine m ON m.id = r.machine "
             "ORDER BY k.id, r.machine, r.time_ns, r.id", rounds, kernel);
    return h->be->query(h->db, sql, NULL, 0, point_row, &c, err, errlen);
}
