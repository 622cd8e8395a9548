/* The daemon's saved state as a run file (see runstate.h). */
#include "config.h"

#include "lib/run/runstate.h"
#include "lib/agg/agg_impl.h"
#include "lib/run/run.h"
#include "proto/protocol.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static int cmp_serial(const void *pa, const void *pb)
{
    const struct hra_key *x = *(struct hra_key *const *)pa;
    const struct hra_key *y = *(struct hra_key *const *)pb;

    return (x->serial > y->serial) - (x->serial < y->serial);
}

int hrr_runstate_fill(struct hra_agg *a, Hostrange__RunState *s)
{
    struct hra_key **ks = malloc((a->nkeys + 1) * sizeof *ks);

    hostrange__run_state__init(s);
    s->node_ranks = a->node_ranks;
    s->range_ranks = a->range_ranks;
    s->strings = a->str.s;
    s->n_strings = a->str.n;
    s->ranks = a->str.rank;
    s->n_ranks = a->str.n;
    s->path_parent = a->path.parent;
    s->n_path_parent = a->path.n;
    s->path_range = a->path.range;
    s->n_path_range = a->path.n;
    s->paths_too_deep = a->paths_too_deep;
    s->paths_table_full = a->paths_table_full;
    /* The keys go to the file in creation order (hrr_put_agg). */
    s->key_clock_paths = malloc((a->nkeys + 1) * sizeof *s->key_clock_paths);
    if (ks == NULL || s->key_clock_paths == NULL) {
        free(ks);
        hrr_runstate_clear(s);
        return -ENOMEM;
    }
    if (a->nkeys != 0)
        memcpy(ks, a->keys, a->nkeys * sizeof *ks);
    qsort(ks, a->nkeys, sizeof *ks, cmp_serial);
    for (uint32_t i = 0; i < a->nkeys; i++)
        s->key_clock_paths[i] = ks[i]->clock_paths;
    s->n_key_clock_paths = a->nkeys;
    free(ks);
    return 0;
}

void hrr_runstate_clear(Hostrange__RunState *s)
{
    free(s->key_clock_paths);
    s->key_clock_paths = NULL;
    s->n_key_clock_paths = 0;
}

int hrr_runstate_write(const char *path, struct hra_agg *a,
                       const Hostrange__RunState *s, Hostrange__RunEnd *e,
                       char *err, size_t errlen)
{
    Hostrange__RunHeader h = HOSTRANGE__RUN_HEADER__INIT;
    struct hrr_writer w;
    struct timespec now;
    char host[256];
    int rc;

    hrr_hostname(host, sizeof host);
    clock_gettime(CLOCK_REALTIME, &now);
    h.format = HRR_FORMAT_EVENTS;
    h.host = host;
    h.time_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
    h.version = PACKAGE_VERSION;
    rc = hrr_create(&w, path, &h, err, errlen);
    if (rc != 0)
        return rc;
    /* The daemon's own, as its journals are. */
    if (fchmod(w.file.fd, 0600) != 0) {
        rc = -errno;
        snprintf(err, errlen, "%s: cannot set its mode: %s", path,
                 strerror(-rc));
        hrr_abort(&w);
        return rc;
    }
    if ((rc = hrr_put_state(&w, s, err, errlen)) != 0 ||
        (rc = hrr_put_agg(&w, a, HRR_FORMAT_EVENTS, err,
                              errlen)) != 0) {
        hrr_abort(&w);
        return rc;
    }
    return hrr_commit(&w, e, err, errlen);
}

/* The limits of an aggregation, lifted while a snapshot is read. */
struct limits {
    uint64_t exact_cap;
    size_t max_bytes;
    uint32_t max_paths, max_depth;
};

/* Makes a's string and path tables and ranks those of s (a is empty).
 * Returns 0, or -EINVAL (err) when s does not hold together, -ENOMEM. */
static int tables(struct hra_agg *a, const Hostrange__RunState *s,
                  const char *path, char *err, size_t errlen)
{
    if (s->n_ranks != s->n_strings || s->n_path_range != s->n_path_parent) {
        snprintf(err, errlen, "%s: damaged (its state's tables do not "
                 "match)", path);
        return -EINVAL;
    }
    for (size_t i = 0; i < s->n_strings; i++) {
        uint32_t id;

        if (strlen(s->strings[i]) > HRP_MAX_STRING) {
            snprintf(err, errlen, "%s: damaged (string %zu of its state is "
                     "too long)", path, i + 1);
            return -EINVAL;
        }
        if ((id = hra_str(a, s->strings[i])) == 0)
            goto nomem;
        if (id != i + 1) {
            snprintf(err, errlen, "%s: damaged (string %zu of its state "
                     "comes twice)", path, i + 1);
            return -EINVAL;
        }
        a->str.rank[i] = s->ranks[i];
    }
    a->node_ranks = s->node_ranks;
    a->range_ranks = s->range_ranks;
    a->paths_too_deep = s->paths_too_deep;
    a->paths_table_full = s->paths_table_full;
    for (size_t i = 0; i < s->n_path_parent; i++) {
        uint32_t parent = s->path_parent[i], range = s->path_range[i];
        uint32_t id;

        if (parent > i || range == 0 || range > s->n_strings) {
            snprintf(err, errlen, "%s: damaged (path %zu of its state is "
                     "out of order)", path, i + 1);
            return -EINVAL;
        }
        id = hra_path(a, parent, range);
        if (id == 0)
            goto nomem;
        if (id != i + 1) {
            snprintf(err, errlen, "%s: damaged (path %zu of its state comes "
                     "twice or is too deep)", path, i + 1);
            return -EINVAL;
        }
    }
    return 0;
nomem:
    snprintf(err, errlen, "%s: out of memory", path);
    return -ENOMEM;
}

/* Reads the keys and the end of r into l's aggregation, each key given
 * its clock paths from s. Returns 0 or a negative errno (err). */
static int keys(struct hrr_reader *r, struct hrr_runload *l,
                const Hostrange__RunState *s, Hostrange__RunEnd **ep,
                struct hrr_runstate_loaded *out, char *err, size_t errlen)
{
    struct hra_agg *a = l->a;
    Hostrange__RunEnd *e = NULL;
    Hostrange__RunKey *k;
    char why[300];
    int rc;

    for (;;) {
        uint32_t before = a->nkeys;

        k = NULL;
        rc = hrr_next(r, &k, &e, err, errlen);
        if (rc < 0)
            return rc;
        if (rc == 2)
            break;
        rc = hrr_runload_key(l, k, why, sizeof why);
        hostrange__run_key__free_unpacked(k, NULL);
        if (rc == -EINVAL || (rc == 0 && a->nkeys != before + 1)) {
            snprintf(err, errlen, "%s: damaged (key %llu: %s)", r->path,
                     (unsigned long long)out->keys + 1,
                     rc != 0 ? why : "it comes twice");
            return -EINVAL;
        }
        if (rc != 0) {
            snprintf(err, errlen, "%s: out of memory", r->path);
            return rc;
        }
        if (out->keys < s->n_key_clock_paths)
            a->keys[before]->clock_paths =
                (uint8_t)(s->key_clock_paths[out->keys] & HRP_PATHS_ALL);
        out->keys++;
    }
    rc = e->keys == out->keys && s->n_key_clock_paths == out->keys
             ? 0
             : -EINVAL;
    if (rc != 0) {
        snprintf(err, errlen, "%s: damaged (%llu keys where its end says "
                 "%llu)", r->path, (unsigned long long)out->keys,
                 (unsigned long long)e->keys);
        hostrange__run_end__free_unpacked(e, NULL);
        return rc;
    }
    *ep = e;
    return 0;
}

int hrr_runstate_read(const char *path, struct hra_agg *a,
                      Hostrange__RunState **s, Hostrange__RunEnd **e,
                      struct hrr_runstate_loaded *out, char *err,
                      size_t errlen)
{
    struct limits was = { a->exact_cap, a->max_bytes, a->max_paths,
                          a->max_depth };
    Hostrange__RunHeader *h = NULL;
    struct hrr_reader r;
    struct hrr_runload l;
    int rc;

    memset(out, 0, sizeof *out);
    *s = NULL;
    *e = NULL;
    rc = hrr_open(&r, path, &h, err, errlen);
    if (rc != 0)
        return rc;
    hostrange__run_header__free_unpacked(h, NULL);
    rc = hrr_read_state(&r, s, err, errlen);
    if (rc == 0) {
        snprintf(err, errlen, "%s: a run without a daemon's state", path);
        rc = -EINVAL;
    }
    if (rc < 0) {
        hrr_close(&r);
        return rc;
    }
    /* The file holds what was kept under the limits it was written with:
     * all of it is taken whatever the limits now. */
    hrr_runload_init_reader(&l, a);
    a->max_bytes = SIZE_MAX;
    rc = tables(a, *s, path, err, errlen);
    if (rc == 0)
        rc = keys(&r, &l, *s, e, out, err, errlen);
    /* What was read shares the events of keys seen through one path, as
     * it did before it was written. */
    hra_paths_share(a);
    hrr_runload_fini(&l);
    a->exact_cap = was.exact_cap;
    a->max_bytes = was.max_bytes;
    a->max_paths = was.max_paths;
    a->max_depth = was.max_depth;
    hrr_close(&r);
    out->complete = rc == 0;
    return rc;
}
