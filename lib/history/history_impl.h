/*
 * What the files of lib/history share and nothing else includes: the
 * open history, and the steps its opening takes in schema.c (making,
 * reading and migrating the schema) and dsn.c (the connection string's
 * password kept out of messages). Functions return 0 or a negative errno
 * with a reason in err, as backend.h's do.
 */
#ifndef HOSTRANGE_HISTORY_IMPL_H
#define HOSTRANGE_HISTORY_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "lib/history/history.h"

struct hrh_hbackend;

struct hrh_history {
    const struct hrh_hbackend *be;
    void *db;
    char *dsn;
    char name[1024];
    enum hrh_mode mode;
    int64_t version; /* of the schema (older when read, not migrated) */
};

/* Runs statement sql, with no parameters and no rows. */
int hrh__put0(struct hrh_history *h, const char *sql, char *err,
                      size_t errlen);

/* A row callback (backend.h): the row's first column as an integer, into
 * *(int64_t *)ctx (0 for none). */
int hrh__first_int(void *ctx, const char *const *col, int n);

/* The id of machine `name`, made when new (in the open transaction). */
int hrh__machine_id(struct hrh_history *h, const char *name,
                            int64_t *id, char *err, size_t errlen);

/* schema.c. A history opened to write: its schema made (a new database)
 * or migrated to HRH_SCHEMA, in one transaction. */
int hrh__schema(struct hrh_history *h, char *err, size_t errlen);

/* schema.c. A history opened to read: its version read into h->version,
 * nothing written; -ENOENT for a database without tables. */
int hrh__schema_read(struct hrh_history *h, char *err,
                             size_t errlen);

/* schema.c. A history of an older schema opened to read, reopened and
 * migrated where this user may write it, else read as it is. */
int hrh__migrate_to_read(struct hrh_history *h, char *err,
                                 size_t errlen);

/* dsn.c. Masks, in s (of len bytes), the value of every password=VALUE. */
void hrh__mask_passwords(char *s, size_t len);

/* dsn.c. Replaces in s, as "***", every occurrence of dsn's password (of
 * 3 bytes or more). */
void hrh__scrub_password(const char *dsn, char *s);

#endif
