/*
 * The run history: every run added, per key (node, operator, backend,
 * phase, range, metric) its count, mean, median, p10 and p90, with the
 * run's id, place in the order, commit, machine, host, kernel and meta,
 * and its round medians when the run has rounds (schema 3), in a database:
 * SQLite by default, PostgreSQL for a fleet (backend.h). Both hold the
 * same schema, version HRH_SCHEMA, kept in table
 * hostrange_schema, and keep names (keys, machines, commits, hosts,
 * files, meta) byte for byte, in any encoding or none (schema 4:
 * PostgreSQL's name columns hold bytes), a key's names of any length up
 * to HRP_MAX_STRING each (schema 5: PostgreSQL indexes their digest). A
 * history opened to write is
 * made when missing, and an older one migrated, inside a transaction; a
 * history opened to read is never made, migrated or written (an older
 * one is read as it is). A newer one, or a database holding tables of
 * something else, is refused.
 *
 * A series is one key on one machine. The machine is a name (the user's,
 * or the CPU, cores and clock path: lib/run/fingerprint.h); host and
 * kernel are kept with each run, never part of the machine. Schema 4 made
 * them so: the machines of older databases, named "HOST: CPU, N cores,
 * KERNEL; clock PATH", are re-keyed when opened (their host and kernel
 * moved to their runs), so that one machine's series join up.
 *
 * A run is stored once per id (lib/run/runid.h), in one transaction: all
 * of it or nothing. Adds are serialized by the database; readers go on.
 *
 * Functions return 0 (or a count they name), or a negative errno with a
 * one-line reason in err (backend.h's, and -EINVAL for a database that is
 * not a hostrange history or of a newer schema). No reason holds a
 * password of the connection string: the database is named by
 * hrh_name.
 */
#ifndef HOSTRANGE_HISTORY_H
#define HOSTRANGE_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#define HRH_SCHEMA 5
/* How long SQLite waits for another writer's lock, in ms. */
#define HRH_BUSY_MS 60000
/* The database when none is named, and the variable that names one. */
#define HRH_DEFAULT "hostrange-history.db"
#define HRH_ENV "HOSTRANGE_HISTORY"
/* How long a PostgreSQL server may take to accept a connection, in
 * seconds, when neither the connection string (connect_timeout) nor
 * PGCONNECT_TIMEOUT says. */
#define HRH_PG_CONNECT_TIMEOUT 10

/* What a history is opened for: to read only (list, show, detect, check,
 * plot), or to write (add). */
enum hrh_mode { HRH_READ, HRH_WRITE };

struct hrh_history;

/* The whole second of a run's time_ns, rounded down (a time before 1970
 * with a fraction is in the second before, not after). */
static inline int64_t hrh_time_seconds(int64_t time_ns)
{
    return time_ns / 1000000000 - (time_ns % 1000000000 < 0);
}

/* A run to add (strings borrowed). */
struct hrh_run {
    const char *id;
    int64_t time_ns;  /* its place in the order */
    int64_t saved_ns; /* when it was saved */
    const char *commit;
    const char *machine;
    const char *host;
    const char *kernel;
    const char *file;
    const char *parts; /* the ids of its parts, comma-separated, or "" */
    const char *const *meta_key;
    const char *const *meta_value;
    size_t nmeta;
};

/* A point: one key of one run (strings borrowed). */
struct hrh_point {
    const char *node, *op, *backend, *phase, *range, *metric;
    uint64_t count;
    double mean, median, p10, p90;
    /* The key's medians in the run's rounds that hold it, in round order
     * (nrounds 0: a run of one round). */
    const double *rounds;
    size_t nrounds;
    /* Filled by hrh_points: the series' run. */
    const char *machine, *commit, *run, *host, *kernel;
    int64_t time_ns;
    int64_t key; /* the key's number in the history (series order) */
};

/* A stored run, as listed. */
struct hrh_runinfo {
    const char *id;
    int64_t time_ns;
    const char *commit;
    const char *machine;
    const char *host;
    const char *kernel;
    int64_t keys;
};

/* Whether dsn names a PostgreSQL database (a postgresql:// or postgres://
 * URL, or libpq's key=value pairs) rather than a SQLite file. */
int hrh_is_pg(const char *dsn);

/* The database's name for messages: dsn with any password replaced by
 * "***". */
void hrh_name(const char *dsn, char *buf, size_t len);

/* Where dsn holds a password (a URL's user:PASSWORD@, or
 * password=PASSWORD): returns 1 with its offset and length in dsn, else
 * 0. */
int hrh_password(const char *dsn, size_t *off, size_t *len);

/* Opens the history at dsn for mode: HRH_WRITE makes it when
 * missing and migrates an older schema; HRH_READ changes nothing,
 * and returns -ENOENT for a history that does not exist (no file, or a
 * database without tables). Returns 0 with *h (free with
 * hrh_close), or a negative errno. */
int hrh_open(const char *dsn, enum hrh_mode mode,
                     struct hrh_history **h, char *err, size_t errlen);
void hrh_close(struct hrh_history *h);

/* Adds run r and its n points in one transaction, to a history opened to
 * write. Returns 0 when stored, 1 when a run of its id is stored already
 * (nothing changed), or a negative errno (nothing stored; -EBADF for a
 * history opened to read). */
int hrh_add(struct hrh_history *h, const struct hrh_run *r,
                    const struct hrh_point *p, size_t n, char *err,
                    size_t errlen);

/* Whether a run of id `id` is stored: 1, 0, or a negative errno. */
int hrh_has(struct hrh_history *h, const char *id, char *err,
                    size_t errlen);

/* Calls fn with each run, in the order (time, then as added). A non-zero
 * return of fn stops and is returned. */
int hrh_runs(struct hrh_history *h,
                     int (*fn)(void *ctx, const struct hrh_runinfo *r),
                     void *ctx, char *err, size_t errlen);

/* Calls fn with every point, by key (in the order keys were first
 * stored), then machine, then run order. A non-zero return of fn stops
 * and is returned. */
int hrh_points(struct hrh_history *h,
                       int (*fn)(void *ctx,
                                 const struct hrh_point *p),
                       void *ctx, char *err, size_t errlen);

#endif
