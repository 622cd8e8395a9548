/* A run file, or another tool's results, turned into a run of the
 * history (see fromrun.h). */
#include "config.h"

#include "lib/history/fromrun.h"
#include "lib/agg/agg_impl.h"
#include "lib/history/import.h"
#include "lib/run/fingerprint.h"
#include "lib/run/run.h"
#include "lib/run/runid.h"
#include "lib/run/runrounds.h"
#include "lib/util/grow.h"
#include "proto/protocol.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The largest file of another tool's results read. */
#define IMPORT_MAX_BYTES (1024L * 1024 * 1024)

/* The machine, host and kernel of run h (see hrr_fingerprint_machine);
 * a run saved before fingerprints were kept has only its host. */
static void machine_of(const Hostrange__RunHeader *h,
                       struct hrh_fromrun *r)
{
    const Hostrange__RunFingerprint *f = h->fingerprint;

    if (f == NULL)
        snprintf(r->machine, sizeof r->machine, "%s (no fingerprint)",
                 h->host);
    else
        hrr_fingerprint_machine(f, r->machine, sizeof r->machine);
    snprintf(r->host, sizeof r->host, "%s", f != NULL ? f->host : h->host);
    snprintf(r->kernel, sizeof r->kernel, "%s", f != NULL ? f->kernel : "");
}

static int set_meta(struct hrh_fromrun *r, const char *key,
                    const char *value)
{
    size_t i;
    char **k, **v;

    for (i = 0; i < r->nmeta && strcmp(r->meta_key[i], key) != 0; i++)
        ;
    if (i < r->nmeta) {
        char *nv = strdup(value);

        if (nv == NULL)
            return -ENOMEM;
        free(r->meta_value[i]);
        r->meta_value[i] = nv;
        return 0;
    }
    k = realloc(r->meta_key, (r->nmeta + 1) * sizeof *k);
    if (k != NULL)
        r->meta_key = k;
    v = realloc(r->meta_value, (r->nmeta + 1) * sizeof *v);
    if (v != NULL)
        r->meta_value = v;
    if (k == NULL || v == NULL)
        return -ENOMEM;
    k[r->nmeta] = strdup(key);
    v[r->nmeta] = strdup(value);
    if (k[r->nmeta] == NULL || v[r->nmeta] == NULL) {
        free(k[r->nmeta]);
        free(v[r->nmeta]);
        return -ENOMEM;
    }
    r->nmeta++;
    return 0;
}

static const char *get_meta(const struct hrh_fromrun *r,
                            const char *key)
{
    for (size_t i = 0; i < r->nmeta; i++) {
        if (strcmp(r->meta_key[i], key) == 0)
            return r->meta_value[i];
    }
    return NULL;
}

static int put_point(const struct hra_row *row, void *arg)
{
    struct hrh_fromrun *r = arg;
    struct hrh_point *p;

    if (hru_grow(&r->p, &r->cap, r->n + 1, sizeof *r->p, 256) != 0)
        return -ENOMEM;
    p = &r->p[r->n++];
    memset(p, 0, sizeof *p);
    p->node = row->node_id;
    p->op = row->op;
    p->backend = row->backend;
    p->phase = row->phase;
    p->range = row->range;
    p->metric = row->metric;
    p->count = row->count;
    p->mean = row->mean;
    p->median = row->median;
    p->p10 = row->p10;
    p->p90 = row->p90;
    return 0;
}

/* The ids of a merged run's parts, comma-separated (caller frees). */
static char *join_parts(const Hostrange__RunHeader *h)
{
    size_t len = 1;
    char *s;

    for (size_t i = 0; i < h->n_part_ids; i++)
        len += strlen(h->part_ids[i]) + 1;
    s = calloc(len, 1);
    for (size_t i = 0; s != NULL && i < h->n_part_ids; i++) {
        if (i > 0)
            strcat(s, ",");
        strcat(s, h->part_ids[i]);
    }
    return s;
}

/* Reads run file path whole into r->agg, its header into *h and its end
 * into r->end. Returns 0, or a negative errno with err (r->unreadable
 * set). */
static int load(struct hrh_fromrun *r, const char *path,
                Hostrange__RunHeader **h, hrr_progress_fn progress,
                void *ctx, char *err, size_t errlen)
{
    struct hrr_runload l;
    int rc;

    if ((r->agg = malloc(sizeof *r->agg)) == NULL) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    hra_init(r->agg);
    r->agg->max_bytes = SIZE_MAX / 2;
    hrr_runload_init_reader(&l, r->agg);
    rc = hrr_load(&l, path, h, &r->end, progress, ctx, err, errlen);
    if (rc == 0 && hrr_runload_finish(&l) != 0) {
        snprintf(err, errlen, "out of memory");
        rc = -ENOMEM;
    }
    hrr_runload_fini(&l);
    if (rc != 0) {
        r->unreadable = 1;
        if (*h != NULL) {
            hostrange__run_header__free_unpacked(*h, NULL);
            *h = NULL;
        }
    }
    return rc;
}

int hrh_fromrun_load(struct hrh_fromrun *r, const char *path,
                             char *const *extra, size_t nextra,
                             const char *machine,
                             hrr_progress_fn progress, void *ctx,
                             char *err, size_t errlen)
{
    Hostrange__RunHeader *h = NULL;
    struct hra_cursor cur = { { 0 }, 0, 0 };
    const char *t, *commit;
    int rc;

    memset(r, 0, sizeof *r);
    if ((rc = load(r, path, &h, progress, ctx, err, errlen)) != 0)
        return rc;
    if ((rc = hrr_runid_of_file(path, h, r->id, err, errlen)) != 0) {
        r->unreadable = 1;
        hostrange__run_header__free_unpacked(h, NULL);
        return rc;
    }
    machine_of(h, r);
    if (machine != NULL)
        snprintf(r->machine, sizeof r->machine, "%s", machine);
    r->parts = join_parts(h);
    rc = r->parts == NULL ? -ENOMEM : 0;
    for (size_t i = 0; rc == 0 && i < h->n_meta; i++)
        rc = set_meta(r, h->meta[i]->key, h->meta[i]->value);
    for (size_t i = 0; rc == 0 && i < nextra; i++) {
        char *eq = strchr(extra[i], '=');

        *eq = '\0';
        rc = set_meta(r, extra[i], eq + 1);
        *eq = '=';
    }
    if (rc == 0)
        rc = hra_rows_page_by(r->agg, NULL, &cur, 0, 0, put_point, r);
    r->run.id = r->id;
    r->run.saved_ns = (int64_t)h->time_ns;
    r->run.time_ns = (int64_t)h->time_ns;
    hostrange__run_header__free_unpacked(h, NULL);
    if (rc != 0) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    t = get_meta(r, "time");
    if (t != NULL && hrh_import_time(t, &r->run.time_ns) != 0) {
        snprintf(err, errlen, "%s: meta time '%s' is not a time ("
                 HRH_IMPORT_TIME_FORMS ")", path, t);
        return -EINVAL;
    }
    commit = get_meta(r, "commit");
    r->run.commit = commit != NULL ? commit : "";
    r->run.machine = r->machine;
    r->run.host = r->host;
    r->run.kernel = r->kernel;
    r->run.file = path;
    r->run.parts = r->parts;
    r->run.meta_key = (const char *const *)r->meta_key;
    r->run.meta_value = (const char *const *)r->meta_value;
    r->run.nmeta = r->nmeta;
    return 0;
}

int hrh_fromrun_rounds(struct hrh_fromrun *r)
{
    const Hostrange__RunEnd *end = r->end;
    size_t max = end != NULL ? end->rounds : 0;
    struct hrr_round_index idx;
    int rc;

    if (max < 2 || end->n_round_keys == 0 || r->n == 0)
        return 0;
    if ((rc = hrr_round_index_init(&idx, end)) != 0)
        return rc;
    if ((r->rounds = malloc(r->n * max * sizeof *r->rounds)) == NULL) {
        hrr_round_index_fini(&idx);
        return -ENOMEM;
    }
    for (size_t i = 0; i < r->n; i++) {
        struct hrh_point *p = &r->p[i];

        p->rounds = r->rounds + i * max;
        p->nrounds = hrr_round_medians(&idx, p->node, p->op, p->backend,
                                       hrp_phase_parse(p->phase), p->range,
                                       hrp_metric_parse(p->metric),
                                       r->rounds + i * max, max);
    }
    hrr_round_index_fini(&idx);
    return 0;
}

/* Reads the whole of file path. Returns 0 with *text (caller frees) and
 * *len, or a negative errno with a reason in err. */
static int slurp(const char *path, char **text, size_t *len, char *err,
                 size_t errlen)
{
    FILE *f = fopen(path, "rb");
    char *b = NULL;
    size_t n = 0, cap = 0;
    int e;

    if (f == NULL) {
        e = errno;
        snprintf(err, errlen, "%s: %s", path, strerror(e));
        return -e;
    }
    for (;;) {
        size_t got;

        if (n == cap) {
            size_t room = hru_grow_room(cap, n + 1, 1, 65536);
            int big = room == 0 || room > IMPORT_MAX_BYTES;

            if (big || hru_resize(&b, room, 1) != 0) {
                snprintf(err, errlen, "%s: %s", path,
                         big ? "larger than 1 GiB" : "out of memory");
                free(b);
                fclose(f);
                return big ? -EFBIG : -ENOMEM;
            }
            cap = room;
        }
        errno = 0;
        got = fread(b + n, 1, cap - n, f);
        e = errno;
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        /* Why, when read said (a directory: EISDIR). */
        if (e != 0)
            snprintf(err, errlen, "%s: cannot be read: %s", path,
                     strerror(e));
        else
            snprintf(err, errlen, "%s: cannot be read", path);
        free(b);
        fclose(f);
        return -EIO;
    }
    fclose(f);
    *text = b;
    *len = n;
    return 0;
}

int hrh_import_meta(struct hrh_import_opts *o, char *const *extra,
                            size_t nextra)
{
    const char **key = calloc(nextra + 1, sizeof *key);
    const char **value = calloc(nextra + 1, sizeof *value);

    o->meta_key = key;
    o->meta_value = value;
    o->nmeta = 0;
    if (key == NULL || value == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < nextra; i++) {
        const char *eq = strchr(extra[i], '=');
        size_t kl = (size_t)(eq - extra[i]), j;

        for (j = 0; j < o->nmeta && (strlen(key[j]) != kl ||
                                     strncmp(key[j], extra[i], kl) != 0);
             j++)
            ;
        if (j == o->nmeta) {
            if ((key[j] = strndup(extra[i], kl)) == NULL)
                return -ENOMEM;
            o->nmeta++;
        }
        value[j] = eq + 1;
        if (kl == 6 && strncmp(extra[i], "commit", 6) == 0)
            o->commit = eq + 1;
        if (kl == 4 && strncmp(extra[i], "time", 4) == 0)
            o->time = eq + 1;
    }
    return 0;
}

void hrh_import_meta_fini(struct hrh_import_opts *o)
{
    for (size_t i = 0; o->meta_key != NULL && i < o->nmeta; i++)
        free((char *)o->meta_key[i]);
    free((void *)o->meta_key);
    free((void *)o->meta_value);
    o->meta_key = o->meta_value = NULL;
    o->nmeta = 0;
}

int hrh_import_file(enum hrh_import_format fmt, const char *path,
                            const struct hrh_import_opts *o,
                            struct hrh_import **out, char *err,
                            size_t errlen)
{
    char *text = NULL;
    size_t len = 0;
    int rc = slurp(path, &text, &len, err, errlen);

    *out = NULL;
    if (rc == 0)
        rc = hrh_import_read(fmt, path, text, len, o, out, err, errlen);
    free(text);
    return rc;
}

int hrh_fromrun_import(struct hrh_fromrun *r,
                               enum hrh_import_format fmt, const char *path,
                               const char *machine, char *err, size_t errlen)
{
    /* A time is not needed: history check has no --meta time=T to give
     * one, and uses none. */
    struct hrh_import_opts o = { machine, NULL, NULL, NULL, NULL, 0, 1 };
    struct hrh_import *im = NULL;
    int rc;

    memset(r, 0, sizeof *r);
    rc = hrh_import_file(fmt, path, &o, &im, err, errlen);
    if (rc == 0 && im->nruns != 1) {
        snprintf(err, errlen, "%s: %zu runs in it (one is checked)", path,
                 im->nruns);
        rc = -EINVAL;
    }
    if (rc == 0 && (r->p = malloc((im->runs[0].n + 1) * sizeof *r->p)) ==
                       NULL) {
        snprintf(err, errlen, "out of memory");
        rc = -ENOMEM;
    }
    r->import = im;
    if (rc != 0)
        return rc;
    r->run = im->runs[0].run;
    r->n = r->cap = im->runs[0].n;
    memcpy(r->p, im->runs[0].p, r->n * sizeof *r->p);
    snprintf(r->id, sizeof r->id, "%s", r->run.id);
    snprintf(r->machine, sizeof r->machine, "%s", r->run.machine);
    snprintf(r->host, sizeof r->host, "%s", r->run.host);
    snprintf(r->kernel, sizeof r->kernel, "%s", r->run.kernel);
    return 0;
}

void hrh_fromrun_fini(struct hrh_fromrun *r)
{
    for (size_t i = 0; i < r->nmeta; i++) {
        free(r->meta_key[i]);
        free(r->meta_value[i]);
    }
    free(r->meta_key);
    free(r->meta_value);
    free(r->parts);
    free(r->p);
    free(r->rounds);
    if (r->end != NULL)
        hostrange__run_end__free_unpacked(r->end, NULL);
    hrh_import_free(r->import);
    if (r->agg != NULL) {
        hra_fini(r->agg);
        free(r->agg);
    }
    memset(r, 0, sizeof *r);
}
