/* Snapshots of the daemon's state as run files (see snapshot.h). */
#include "config.h"

#include "daemon/snapshot.h"
#include "daemon/save.h"
#include "lib/agg/agg_impl.h"
#include "lib/run/runstate.h"
#include "proto/protocol.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The client table as StateClient messages, oldest first, pointing into
 * in and a; everything in one allocation (free it with free). */
struct table {
    Hostrange__StateClient **ptr;
    Hostrange__StateClient *sc;
    Hostrange__ClientStats *cs;
    char **nodes;
    Hostrange__StateLost **lptr;
    Hostrange__StateLost *lost;
};

static int table_make(const struct hra_agg *a, const struct hrd_ingest *in,
                      struct table *t)
{
    size_t n = in->nclients, nlost = 0, i = n, j = 0;
    const struct hrd_client *c;

    for (c = in->clients; c != NULL; c = c->next)
        nlost += c->nlost;
    t->ptr = calloc(n + 1, sizeof *t->ptr);
    t->sc = calloc(n + 1, sizeof *t->sc);
    t->cs = calloc(n + 1, sizeof *t->cs);
    t->nodes = calloc((n + 1) * HRD_CLIENT_NODES, sizeof *t->nodes);
    t->lptr = calloc(nlost + 1, sizeof *t->lptr);
    t->lost = calloc(nlost + 1, sizeof *t->lost);
    if (t->ptr == NULL || t->sc == NULL || t->cs == NULL ||
        t->nodes == NULL || t->lptr == NULL || t->lost == NULL)
        return -ENOMEM;
    for (c = in->clients; c != NULL; c = c->next) {
        Hostrange__StateClient *s = &t->sc[--i];

        hostrange__state_client__init(s);
        hrd_ingest_client_stats(&t->cs[i], c);
        hrd_ingest_client_nodes(&t->cs[i], c, a,
                                &t->nodes[i * HRD_CLIENT_NODES]);
        s->stats = &t->cs[i];
        s->max_seq = c->max_seq;
        s->refused_seq = c->refused_seq;
        s->lost = &t->lptr[j];
        s->n_lost = c->nlost;
        for (uint32_t k = 0; k < c->nlost; k++, j++) {
            const struct hrd_lost *l = &c->lost_by[k];
            Hostrange__StateLost *m = &t->lost[j];

            hostrange__state_lost__init(m);
            m->node_id = (char *)hra_str_get(a, l->node);
            m->operator_ = (char *)hra_str_get(a, l->op);
            m->backend = (char *)hra_str_get(a, l->backend);
            m->phase = l->phase;
            m->count = l->count;
            t->lptr[j] = m;
        }
        t->ptr[i] = s;
    }
    return 0;
}

static void table_free(struct table *t)
{
    free(t->ptr);
    free(t->sc);
    free(t->cs);
    free(t->nodes);
    free(t->lptr);
    free(t->lost);
}

int hrd_snapshot_write(const char *path, struct hra_agg *a,
                       const struct hrd_ingest *in, uint64_t covers,
                       char *err, size_t errlen)
{
    struct table t = { 0 };
    Hostrange__RunState s;
    Hostrange__RunEnd *e = NULL;
    int rc = hrr_runstate_fill(a, &s);

    if (rc == 0 && (rc = table_make(a, in, &t)) == 0 &&
        (e = hrd_save_end(a, in, 0)) == NULL)
        rc = -ENOMEM;
    if (rc == 0) {
        s.covers = covers;
        s.clients = t.ptr;
        s.n_clients = in->nclients;
        rc = hrr_runstate_write(path, a, &s, e, err, errlen);
    } else {
        snprintf(err, errlen, "%s: out of memory", path);
    }
    hrd_save_end_free(e);
    table_free(&t);
    hrr_runstate_clear(&s);
    return rc;
}

/* The string id of a name the state's string table holds, or 0. */
static uint32_t known(struct hra_agg *a, const char *s, uint32_t nstrings)
{
    uint32_t id;

    if (strlen(s) > HRP_MAX_STRING)
        return 0;
    id = hra_str(a, s);
    return id <= nstrings ? id : 0;
}

/* Adds client m to in's table. Returns 0 or -EBADMSG (no memory reads
 * the same: the load stops there, keeping what came before). */
static int client_load(struct hra_agg *a, struct hrd_ingest *in,
                       const Hostrange__StateClient *m, uint32_t nstrings)
{
    const Hostrange__ClientStats *x = m->stats;
    struct hrd_client *c;

    if (x == NULL || strlen(x->process_label) > HRP_MAX_STRING ||
        strlen(x->clock) > HRP_MAX_STRING ||
        hrd_ingest_client_find(in, x->pid, x->instance) != NULL ||
        (c = hrd_ingest_client(in, x->pid, x->instance, x->process_label,
                               x->clock)) == NULL)
        return -EBADMSG;
    if (hrd_ingest_client_restore(in, c, x) != 0)
        return -EBADMSG;
    c->max_seq = m->max_seq;
    c->refused_seq = m->refused_seq;
    for (size_t i = 0; i < m->n_lost; i++) {
        const Hostrange__StateLost *l = m->lost[i];
        uint32_t node = known(a, l->node_id, nstrings);
        uint32_t op = known(a, l->operator_, nstrings);
        uint32_t backend = known(a, l->backend, nstrings);

        if (node == 0 || op == 0 || backend == 0 ||
            hrp_phase_name(l->phase) == NULL ||
            hrd_ingest_lost_set(in, c, node, op, backend, l->phase,
                                l->count) != 0)
            return -EBADMSG;
    }
    return 0;
}

/* Loads a snapshot of the run format. */
static int load_run(const char *path, struct hra_agg *a,
                    struct hrd_ingest *in, struct hrd_snapshot_loaded *out)
{
    struct hrr_runstate_loaded got;
    Hostrange__RunState *s = NULL;
    Hostrange__RunEnd *e = NULL;
    int rc = hrr_runstate_read(path, a, &s, &e, &got, out->why,
                               sizeof out->why);

    /* The clients are taken also when the keys were damaged: the
     * journals replayed then are told from the batches already held. */
    if (s != NULL) {
        out->covers = s->covers;
        for (size_t i = 0; i < s->n_clients; i++) {
            if (client_load(a, in, s->clients[i], (uint32_t)s->n_strings)) {
                snprintf(out->why, sizeof out->why, "%s: damaged (client "
                         "%zu of its state does not hold together)", path,
                         i + 1);
                rc = -EBADMSG;
                break;
            }
            out->clients++;
        }
        hostrange__run_state__free_unpacked(s, NULL);
    }
    /* The lost counts per node id are those of the end, also those of
     * batches refused, which no client's table holds. */
    for (size_t i = 0; rc == 0 && e != NULL && i < e->n_lost; i++) {
        uint32_t id = strlen(e->lost[i]->node_id) <= HRP_MAX_STRING
                          ? hra_str(a, e->lost[i]->node_id)
                          : 0;

        if (id == 0) {
            snprintf(out->why, sizeof out->why, "%s: damaged (a lost "
                     "count of its end does not hold together)", path);
            rc = -EBADMSG;
            break;
        }
        hra_lost_add(a, id, (int64_t)e->lost[i]->lost -
                                    (int64_t)a->str.lost[id - 1]);
    }
    if (e != NULL)
        hostrange__run_end__free_unpacked(e, NULL);
    out->keys = got.keys;
    if (rc == -EINVAL)
        rc = -EBADMSG;
    out->complete = rc == 0;
    return rc;
}

int hrd_snapshot_load(const char *path, struct hra_agg *a,
                      struct hrd_ingest *in, struct hrd_snapshot_loaded *out)
{
    struct hrr_recreader r;
    char magic[8];
    ssize_t n;
    int fd, rc;

    memset(out, 0, sizeof *out);
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        rc = -errno;
        snprintf(out->why, sizeof out->why, "%s", strerror(-rc));
        return rc;
    }
    n = read(fd, magic, sizeof magic);
    close(fd);
    if (n != (ssize_t)sizeof magic ||
        memcmp(magic, HRR_SNAPSHOT_MAGIC, sizeof magic) != 0)
        return load_run(path, a, in, out);
    rc = hrr_recreader_open(&r, AT_FDCWD, path, HRR_SNAPSHOT_MAGIC);
    if (rc == 0)
        rc = hrd_snapshot_legacy_load(&r, a, in, out);
    else
        snprintf(out->why, sizeof out->why, "%s",
                 rc == -EBADMSG ? r.why : strerror(-rc));
    hrr_recreader_close(&r);
    /* What was read (all of it, or the good part of a damaged file)
     * shares the events of keys seen through one path, as it did before
     * the snapshot was written. */
    hra_paths_share(a);
    out->legacy = 1;
    return rc;
}
