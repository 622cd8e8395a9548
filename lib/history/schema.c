/* The run history's schema (see history.h): made in a new database, its
 * version read, and an older one migrated, step by step, in one
 * transaction, on either backend (backend.h). */
#include "config.h"

#include "lib/history/backend.h"
#include "lib/history/history.h"
#include "lib/history/history_impl.h"
#include "lib/util/grow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int names_to_bytes(struct hrh_history *h, char *err, size_t errlen)
{
    char sql[512];
    int rc = 0;

    if (h->be->to_bytes == NULL)
        return 0;
    for (size_t i = 0; rc == 0 && i < sizeof name_columns /
                                           sizeof name_columns[0]; i++) {
        snprintf(sql, sizeof sql, h->be->to_bytes, name_columns[i].table,
                 name_columns[i].column);
        rc = hrh__put0(h, sql, err, errlen);
    }
    return rc;
}

static int rekey_machines(struct hrh_history *h, char *err, size_t errlen);

/* Version 4 also keeps a run's kernel, and names a machine without its
 * host or kernel (rekey_machines). */
static const char *const migrate_3_4[] = {
    "ALTER TABLE hostrange_run ADD COLUMN kernel TEXT NOT NULL DEFAULT ''",
    NULL,
};

static int to_v4(struct hrh_history *h, char *err, size_t errlen)
{
    int rc = names_to_bytes(h, err, errlen);

    return rc != 0 ? rc : rekey_machines(h, err, errlen);
}

/* Version 5: a key's names are unique through the backend's key_unique
 * (PostgreSQL: an index of their digest, which takes names of any
 * length), where the constraint over their columns refused a key whose
 * names passed the limit of one index entry. */
static const char *const migrate_4_5[] = {
    NULL,
};

static int to_v5(struct hrh_history *h, char *err, size_t errlen)
{
    const char *const *q = h->be->key_unique;
    int rc = 0;

    for (size_t i = 0; rc == 0 && q != NULL && q[i] != NULL; i++)
        rc = hrh__put0(h, q[i], err, errlen);
    return rc;
}

/* migrations[v - 1] takes version v to v + 1: statements, then a function
 * where the backends differ or the data moves. */
static const struct {
    const char *const *steps;
    int (*run)(struct hrh_history *h, char *err, size_t errlen);
} migrations[HRH_SCHEMA - 1] = {
    { migrate_1_2, NULL },
    { migrate_2_3, NULL },
    { migrate_3_4, to_v4 },
    { migrate_4_5, to_v5 },
};

static int run_steps(struct hrh_history *h, const char *const *steps,
                     char *err, size_t errlen)
{
    char sql[1024];
    int rc;

    for (size_t i = 0; steps[i] != NULL; i++) {
        snprintf(sql, sizeof sql, steps[i], h->be->serial_key,
                 h->be->serial_key, h->be->serial_key);
        if ((rc = hrh__put0(h, sql, err, errlen)) != 0)
            return rc;
    }
    return 0;
}

/* The schema version of a database holding `tables` tables (not 0) into
 * *version. Returns 0, or -EINVAL for a database of something else or of
 * a newer schema. */
static int schema_version(struct hrh_history *h, int64_t tables,
                          int64_t *version, char *err, size_t errlen)
{
    char why[512];
    int rc;

    *version = 0;
    rc = h->be->query(h->db, "SELECT max(version) FROM hostrange_schema",
                      NULL, 0, hrh__first_int, version, why,
                      sizeof why);
    if (rc == -ECONNREFUSED || rc == -ENOMEM) {
        snprintf(err, errlen, "%s", why);
        return rc;
    }
    if (rc != 0 || *version < 1) {
        snprintf(err, errlen, "not a hostrange history (it holds %lld "
                 "tables of something else)", (long long)tables);
        return -EINVAL;
    }
    if (*version > HRH_SCHEMA) {
        snprintf(err, errlen, "a history of schema version %lld, newer "
                 "than this hostrange's (%d): use a newer hostrangectl",
                 (long long)*version, HRH_SCHEMA);
        return -EINVAL;
    }
    return 0;
}

/* A history opened to read: its version, read and nothing else. A
 * database without tables is no history (-ENOENT). */
int hrh__schema_read(struct hrh_history *h, char *err, size_t errlen)
{
    int64_t tables = 0;
    int rc = h->be->query(h->db, h->be->count_tables, NULL, 0,
                          hrh__first_int, &tables, err, errlen);

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
int hrh__schema(struct hrh_history *h, char *err, size_t errlen)
{
    int64_t tables = 0, version = 0;
    int rc;

    if ((rc = h->be->begin(h->db, err, errlen)) != 0)
        return rc;
    rc = h->be->query(h->db, h->be->count_tables, NULL, 0,
                      hrh__first_int, &tables, err, errlen);
    if (rc == 0 && tables == 0) {
        rc = run_steps(h, schema_v1, err, errlen);
        version = 1;
    } else if (rc == 0) {
        rc = schema_version(h, tables, &version, err, errlen);
    }
    for (; rc == 0 && version < HRH_SCHEMA; version++) {
        if (migrations[version - 1].steps != NULL)
            rc = run_steps(h, migrations[version - 1].steps, err, errlen);
        if (rc == 0 && migrations[version - 1].run != NULL)
            rc = migrations[version - 1].run(h, err, errlen);
    }
    if (rc == 0) {
        struct hrh_hval v = { HRH_HVAL_INT, HRH_SCHEMA, 0, NULL };

        rc = h->be->put(h->db, "UPDATE hostrange_schema SET version = $1",
                        &v, 1, err, errlen);
    }
    if (rc == 0)
        rc = h->be->commit(h->db, err, errlen);
    if (rc != 0)
        h->be->rollback(h->db);
    h->version = HRH_SCHEMA;
    return rc;
}

/*
 * A history of an older schema opened to read: migrated, as an add
 * would, where this user may write it, so that its series read as an add
 * would leave them (schema 4 re-keys machines); else read as it is (its
 * machines named as its schema named them). Returns 0, or a negative
 * errno (h->db then closed, or NULL).
 */
int hrh__migrate_to_read(struct hrh_history *h, char *err,
                                 size_t errlen)
{
    char why[512];
    int rc;

    h->be->close(h->db);
    h->db = NULL;
    if (h->be->open(h->dsn, 1, &h->db, why, sizeof why) == 0 &&
        hrh__schema(h, why, sizeof why) == 0) {
        h->be->close(h->db);
        h->db = NULL;
    } else if (h->db != NULL) {
        h->be->close(h->db);
        h->db = NULL;
    }
    /* Reopened to read, at whatever version it now has. */
    rc = h->be->open(h->dsn, 0, &h->db, err, errlen);
    return rc != 0 ? rc : hrh__schema_read(h, err, errlen);
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
        size_t cap = hru_grow_room(m->cap, m->n + 1, sizeof *m->id, 16);

        if (cap == 0 || hru_resize(&m->id, cap, sizeof *m->id) != 0 ||
            hru_resize(&m->name, cap, sizeof *m->name) != 0)
            return -ENOMEM;
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
static int rekey_machines(struct hrh_history *h, char *err, size_t errlen)
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
            struct hrh_hval v[2] = { hrh_hval_bytes(kernel),
                                     hrh_hval_int(m.id[i]) };

            rc = h->be->put(h->db, "UPDATE hostrange_run SET kernel = $1 "
                            "WHERE machine = $2", v, 2, err, errlen);
        }
        if (rc == 0)
            rc = hrh__machine_id(h, name, &to, err, errlen);
        if (rc == 0 && to != m.id[i]) {
            struct hrh_hval v[2] = { hrh_hval_int(to), hrh_hval_int(m.id[i]) };

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
