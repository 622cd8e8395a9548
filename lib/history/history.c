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
    enum hrd_history_mode mode;
    int64_t version; /* of the schema (older when read, not migrated) */
};

/* Points written by one statement. */
#define BATCH 64
#define POINT_COLS 8

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

/* The password of a connection string, if any: *len bytes at the
 * returned pointer (a URL's user:password@, or password=VALUE). */
static const char *password_of(const char *dsn, size_t *len)
{
    const char *p;

    if (strstr(dsn, "://") != NULL) {
        const char *user = strstr(dsn, "://") + 3;
        const char *at = strchr(user, '@'), *slash = strchr(user, '/');
        const char *colon = strchr(user, ':');

        if (at != NULL && (slash == NULL || at < slash) && colon != NULL &&
            colon < at) {
            *len = (size_t)(at - colon - 1);
            return colon + 1;
        }
    }
    if ((p = strcasestr(dsn, "password")) != NULL) {
        p += 8;
        while (*p == ' ')
            p++;
        if (*p++ != '=')
            return NULL;
        while (*p == ' ' || *p == '\'')
            p++;
        *len = strcspn(p, " &'");
        return p;
    }
    return NULL;
}

int hrd_history_password(const char *dsn, size_t *off, size_t *len)
{
    size_t n = 0;
    const char *pw = password_of(dsn, &n);

    if (pw == NULL || n == 0)
        return 0;
    *off = (size_t)(pw - dsn);
    *len = n;
    return 1;
}

/* Replaces in s, as "***", every occurrence of the password of dsn (of 3
 * bytes or more: a shorter one cannot be told from other text), whatever
 * a library's message said of the connection string. */
static void scrub_password(const char *dsn, char *s)
{
    size_t len = 0;
    const char *pw = password_of(dsn, &len);
    char *q;

    if (pw == NULL || len < 3)
        return;
    while ((q = memmem(s, strlen(s), pw, len)) != NULL) {
        memcpy(q, "***", 3);
        memmove(q + 3, q + len, strlen(q + len) + 1);
    }
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

/* Version 3: a point's round medians (rounds_text), '' for a run of one
 * round, as every point stored before was. */
static const char *const migrate_2_3[] = {
    "ALTER TABLE hostrange_point ADD COLUMN rounds TEXT NOT NULL DEFAULT ''",
    NULL,
};

/* Version 4: names are bytes in any encoding, or none. A backend whose
 * text must be valid in the database's encoding turns these columns to
 * bytes (backend.h's to_bytes); text holds any bytes in the others. */
static const struct {
    const char *table, *column;
} name_columns[] = {
    { "hostrange_machine", "name" },
    { "hostrange_run", "commit_id" },
    { "hostrange_run", "host" },
    { "hostrange_run", "kernel" },
    { "hostrange_run", "file" },
    { "hostrange_meta", "key" },
    { "hostrange_meta", "value" },
    { "hostrange_key", "node" },
    { "hostrange_key", "operator" },
    { "hostrange_key", "backend" },
    { "hostrange_key", "phase" },
    { "hostrange_key", "range" },
    { "hostrange_key", "metric" },
};

static int names_to_bytes(struct hrd_history *h, char *err, size_t errlen)
{
    char sql[512];
    int rc = 0;

    if (h->be->to_bytes == NULL)
        return 0;
    for (size_t i = 0; rc == 0 && i < sizeof name_columns /
                                           sizeof name_columns[0]; i++) {
        snprintf(sql, sizeof sql, h->be->to_bytes, name_columns[i].table,
                 name_columns[i].column);
        rc = put0(h, sql, err, errlen);
    }
    return rc;
}

static int rekey_machines(struct hrd_history *h, char *err, size_t errlen);

/* Version 4 also keeps a run's kernel, and names a machine without its
 * host or kernel (rekey_machines). */
static const char *const migrate_3_4[] = {
    "ALTER TABLE hostrange_run ADD COLUMN kernel TEXT NOT NULL DEFAULT ''",
    NULL,
};

static int to_v4(struct hrd_history *h, char *err, size_t errlen)
{
    int rc = names_to_bytes(h, err, errlen);

    return rc != 0 ? rc : rekey_machines(h, err, errlen);
}

/* migrations[v - 1] takes version v to v + 1: statements, then a function
 * where the backends differ or the data moves. */
static const struct {
    const char *const *steps;
    int (*run)(struct hrd_history *h, char *err, size_t errlen);
} migrations[HRD_HISTORY_SCHEMA - 1] = {
    { migrate_1_2, NULL },
    { migrate_2_3, NULL },
    { migrate_3_4, to_v4 },
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

/* The schema version of a database holding `tables` tables (not 0) into
 * *version. Returns 0, or -EINVAL for a database of something else or of
 * a newer schema. */
static int schema_version(struct hrd_history *h, int64_t tables,
                          int64_t *version, char *err, size_t errlen)
{
    char why[512];
    int rc;

    *version = 0;
    rc = h->be->query(h->db, "SELECT max(version) FROM hostrange_schema",
                      NULL, 0, first_int, version, why, sizeof why);
    if (rc == -ECONNREFUSED || rc == -ENOMEM) {
        snprintf(err, errlen, "%s", why);
        return rc;
    }
    if (rc != 0 || *version < 1) {
        snprintf(err, errlen, "not a hostrange history (it holds %lld "
                 "tables of something else)", (long long)tables);
        return -EINVAL;
    }
    if (*version > HRD_HISTORY_SCHEMA) {
        snprintf(err, errlen, "a history of schema version %lld, newer "
                 "than this hostrange's (%d): use a newer hostrangectl",
                 (long long)*version, HRD_HISTORY_SCHEMA);
        return -EINVAL;
    }
    return 0;
}

/* A history opened to read: its version, read and nothing else. A
 * database without tables is no history (-ENOENT). */
static int schema_read(struct hrd_history *h, char *err, size_t errlen)
{
    int64_t tables = 0;
    int rc = h->be->query(h->db, h->be->count_tables, NULL, 0, first_int,
                          &tables, err, errlen);

    if (rc == 0 && tables == 0) {
        snprintf(err, errlen, "it holds no history");
        return -ENOENT;
    }
    if (rc == 0)
        rc = schema_version(h, tables, &h->version, err, errlen);
    return rc;
}

/* Reads the version, creating or migrating the schema as needed, in one
 * transaction. */
static int schema(struct hrd_history *h, char *err, size_t errlen)
{
    int64_t tables = 0, version = 0;
    int rc;

    if ((rc = h->be->begin(h->db, err, errlen)) != 0)
        return rc;
    rc = h->be->query(h->db, h->be->count_tables, NULL, 0, first_int,
                      &tables, err, errlen);
    if (rc == 0 && tables == 0) {
        rc = run_steps(h, schema_v1, err, errlen);
        version = 1;
    } else if (rc == 0) {
        rc = schema_version(h, tables, &version, err, errlen);
    }
    for (; rc == 0 && version < HRD_HISTORY_SCHEMA; version++) {
        if (migrations[version - 1].steps != NULL)
            rc = run_steps(h, migrations[version - 1].steps, err, errlen);
        if (rc == 0 && migrations[version - 1].run != NULL)
            rc = migrations[version - 1].run(h, err, errlen);
    }
    if (rc == 0) {
        struct hrd_hval v = { HRD_HVAL_INT, HRD_HISTORY_SCHEMA, 0, NULL };

        rc = h->be->put(h->db, "UPDATE hostrange_schema SET version = $1",
                        &v, 1, err, errlen);
    }
    if (rc == 0)
        rc = h->be->commit(h->db, err, errlen);
    if (rc != 0)
        h->be->rollback(h->db);
    h->version = HRD_HISTORY_SCHEMA;
    return rc;
}

/*
 * A history of an older schema opened to read: migrated, as an add
 * would, where this user may write it, so that its series read as an add
 * would leave them (schema 4 re-keys machines); else read as it is (its
 * machines named as its schema named them). Returns 0, or a negative
 * errno with h closed.
 */
static int migrate_to_read(struct hrd_history *h, char *err, size_t errlen)
{
    char why[512];
    int rc;

    h->be->close(h->db);
    h->db = NULL;
    if (h->be->open(h->dsn, 1, &h->db, why, sizeof why) == 0 &&
        schema(h, why, sizeof why) == 0) {
        h->be->close(h->db);
        h->db = NULL;
    } else if (h->db != NULL) {
        h->be->close(h->db);
        h->db = NULL;
    }
    /* Reopened to read, at whatever version it now has. */
    rc = h->be->open(h->dsn, 0, &h->db, err, errlen);
    return rc != 0 ? rc : schema_read(h, err, errlen);
}

int hrd_history_open(const char *dsn, enum hrd_history_mode mode,
                     struct hrd_history **out, char *err, size_t errlen)
{
    struct hrd_history *h = calloc(1, sizeof *h);
    char why[2048];
    int rc;

    if (h == NULL || (h->dsn = strdup(dsn)) == NULL) {
        free(h);
        return -ENOMEM;
    }
    h->be = hrd_history_is_pg(dsn) ? &hrd_hbackend_pg : &hrd_hbackend_sqlite;
    h->mode = mode;
    hrd_history_name(dsn, h->name, sizeof h->name);
    rc = h->be->open(h->dsn, mode == HRD_HISTORY_WRITE, &h->db, why,
                     sizeof why);
    if (rc == 0)
        rc = mode == HRD_HISTORY_WRITE ? schema(h, why, sizeof why)
                                       : schema_read(h, why, sizeof why);
    if (rc == 0 && h->version < HRD_HISTORY_SCHEMA)
        rc = migrate_to_read(h, why, sizeof why);
    if (rc != 0) {
        /* The reasons of the backends and of the schema do not name the
         * database: its name (without a password) is said here. */
        snprintf(err, errlen, "%s: %s", h->name, why);
        mask_password_pairs(err, errlen);
        scrub_password(dsn, err);
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

/* A name: bytes, stored as they are. */
static struct hrd_hval bytes(const char *s)
{
    struct hrd_hval v = { HRD_HVAL_BYTES, 0, 0, s != NULL ? s : "" };
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

static int keymap_load(struct hrd_history *h, struct keymap *m, char *err,
                       size_t errlen)
{
    return h->be->query(h->db, "SELECT id, node, operator, backend, phase, "
                        "range, metric FROM hostrange_key", NULL, 0, key_row,
                        m, err, errlen);
}

/* The id of the key of p, made when new. */
static int key_id(struct hrd_history *h, struct keymap *m,
                  const struct hrd_history_point *p, int64_t *id, char *err,
                  size_t errlen)
{
    const char *f[6] = { p->node, p->op, p->backend, p->phase, p->range,
                         p->metric };
    struct hrd_hval v[6] = { bytes(p->node), bytes(p->op),
                             bytes(p->backend), bytes(p->phase),
                             bytes(p->range), bytes(p->metric) };
    char buf[8192];
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
    rc = h->be->query(h->db, "SELECT id FROM hostrange_key WHERE node = $1 "
                      "AND operator = $2 AND backend = $3 AND phase = $4 "
                      "AND range = $5 AND metric = $6", v, 6, first_int, id,
                      err, errlen);
    if (rc == 0 && *id == 0)
        rc = h->be->query(h->db, "INSERT INTO hostrange_key (node, "
                          "operator, backend, phase, range, metric) VALUES "
                          "($1, $2, $3, $4, $5, $6) RETURNING id", v, 6,
                          first_int, id, err, errlen);
    if (rc == 0 && len > 0)
        rc = keymap_put(m, buf, len, *id);
    return rc;
}

static int machine_id(struct hrd_history *h, const char *name, int64_t *id,
                      char *err, size_t errlen)
{
    struct hrd_hval v = bytes(name);
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

/* The machines of a history, as read by rekey_machines. */
struct machines {
    int64_t *id;
    char **name;
    size_t n, cap;
};

static int machine_row(void *ctx, const char *const *col, int n)
{
    struct machines *m = ctx;

    if (n < 2 || col[0] == NULL || col[1] == NULL)
        return -EIO;
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 16;
        int64_t *id = realloc(m->id, cap * sizeof *id);
        char **name;

        if (id == NULL)
            return -ENOMEM;
        m->id = id;
        if ((name = realloc(m->name, cap * sizeof *name)) == NULL)
            return -ENOMEM;
        m->name = name;
        m->cap = cap;
    }
    if ((m->name[m->n] = strdup(col[1])) == NULL)
        return -ENOMEM;
    m->id[m->n++] = strtoll(col[0], NULL, 10);
    return 0;
}

/* The last occurrence of needle in s[0..len), or NULL. */
static const char *last_of(const char *s, size_t len, const char *needle)
{
    size_t n = strlen(needle);

    for (size_t i = len >= n ? len - n + 1 : 0; i-- > 0;) {
        if (memcmp(s + i, needle, n) == 0)
            return s + i;
    }
    return NULL;
}

/*
 * Splits a machine named as schemas 1 to 3 named one, "HOST: CPU, N
 * cores, KERNEL; clock PATH", into its machine as schema 4 names it ("CPU,
 * N cores; clock PATH") and its kernel. Returns 1 with both written, or 0
 * for a name of another form (a machine without a fingerprint).
 */
static int old_machine(const char *name, char *machine, size_t mlen,
                       char *kernel, size_t klen)
{
    const char *clock = last_of(name, strlen(name), "; clock ");
    const char *cores, *comma, *colon;

    if (clock == NULL ||
        (cores = last_of(name, (size_t)(clock - name), " cores, ")) == NULL ||
        (comma = last_of(name, (size_t)(cores - name), ", ")) == NULL ||
        comma + 2 == cores ||
        strspn(comma + 2, "0123456789") != (size_t)(cores - comma - 2) ||
        (colon = strstr(name, ": ")) == NULL || colon >= comma)
        return 0;
    snprintf(machine, mlen, "%.*s%s", (int)(cores - colon - 2), colon + 2,
             " cores");
    snprintf(machine + strlen(machine), mlen - strlen(machine), "%s",
             clock);
    snprintf(kernel, klen, "%.*s", (int)(clock - cores - 8), cores + 8);
    return 1;
}

/*
 * Schema 4: every machine named with its host and kernel is renamed
 * without them, the kernel kept with each of its runs; the runs of
 * machines that become one (one machine's runs under several host names
 * or kernels) are joined under one machine. Returns 0 or a negative
 * errno.
 */
static int rekey_machines(struct hrd_history *h, char *err, size_t errlen)
{
    struct machines m = { NULL, NULL, 0, 0 };
    char name[2048], kernel[512];
    int rc = h->be->query(h->db, "SELECT id, name FROM hostrange_machine "
                          "ORDER BY id", NULL, 0, machine_row, &m, err,
                          errlen);

    for (size_t i = 0; rc == 0 && i < m.n; i++) {
        int64_t to = 0;

        if (!old_machine(m.name[i], name, sizeof name, kernel,
                         sizeof kernel))
            continue;
        {
            struct hrd_hval v[2] = { bytes(kernel), integer(m.id[i]) };

            rc = h->be->put(h->db, "UPDATE hostrange_run SET kernel = $1 "
                            "WHERE machine = $2", v, 2, err, errlen);
        }
        if (rc == 0)
            rc = machine_id(h, name, &to, err, errlen);
        if (rc == 0 && to != m.id[i]) {
            struct hrd_hval v[2] = { integer(to), integer(m.id[i]) };

            rc = h->be->put(h->db, "UPDATE hostrange_run SET machine = $1 "
                            "WHERE machine = $2", v, 2, err, errlen);
            if (rc == 0)
                rc = h->be->put(h->db, "DELETE FROM hostrange_machine "
                                "WHERE id = $1", &v[1], 1, err, errlen);
        }
    }
    for (size_t i = 0; i < m.n; i++)
        free(m.name[i]);
    free(m.name);
    free(m.id);
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

static int add_points(struct hrd_history *h, int64_t run,
                      const struct hrd_history_point *p, size_t n,
                      char *err, size_t errlen)
{
    struct hrd_hval v[BATCH * POINT_COLS];
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
            const struct hrd_history_point *q = &p[i + j];
            struct hrd_hval *w = &v[j * POINT_COLS];
            int64_t key;

            rc = key_id(h, &m, q, &key, err, errlen);
            free(rtext[j]);
            rtext[j] = rounds_text(q->rounds, q->nrounds);
            if (rc == 0 && rtext[j] == NULL)
                rc = -ENOMEM;
            w[0] = integer(run);
            w[1] = integer(key);
            w[2] = integer((int64_t)q->count);
            w[3] = real(q->mean);
            w[4] = real(q->median);
            w[5] = real(q->p10);
            w[6] = real(q->p90);
            w[7] = text(rtext[j]);
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

int hrd_history_add(struct hrd_history *h, const struct hrd_history_run *r,
                    const struct hrd_history_point *p, size_t n, char *err,
                    size_t errlen)
{
    int64_t run = 0, machine = 0;
    int rc;

    if (h->mode != HRD_HISTORY_WRITE) {
        snprintf(err, errlen, "opened only to read");
        return -EBADF;
    }
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
        struct hrd_hval v[10] = { text(r->id), integer(r->time_ns),
                                  integer(r->saved_ns), bytes(r->commit),
                                  integer(machine), bytes(r->host),
                                  bytes(r->file), text(r->parts),
                                  integer((int64_t)n), bytes(r->kernel) };

        rc = h->be->query(h->db, "INSERT INTO hostrange_run (run_id, "
                          "time_ns, saved_ns, commit_id, machine, host, "
                          "file, parts, nkeys, kernel) VALUES ($1, $2, $3, "
                          "$4, $5, $6, $7, $8, $9, $10) RETURNING id", v, 10,
                          first_int, &run, err, errlen);
    }
    for (size_t i = 0; rc == 0 && i < r->nmeta; i++) {
        struct hrd_hval v[3] = { integer(run), bytes(r->meta_key[i]),
                                 bytes(r->meta_value[i]) };

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

int hrd_history_runs(struct hrd_history *h,
                     int (*fn)(void *ctx, const struct hrd_history_runinfo *r),
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
    int (*fn)(void *ctx, const struct hrd_history_point *p);
    void *ctx;
};

static int point_row(void *arg, const char *const *col, int n)
{
    struct points_ctx *c = arg;
    struct hrd_history_point p;
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

int hrd_history_points(struct hrd_history *h,
                       int (*fn)(void *ctx,
                                 const struct hrd_history_point *p),
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
