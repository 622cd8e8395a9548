/* The history as a page in a directory (page.h): the runs indexed, the
 * points gathered into charts and lines in run order, each chunk and the
 * index written through lib/view's page (pagedir.h), the look's findings
 * pointed at their charts. */
#include "config.h"

#include "lib/history/page.h"
#include "lib/history/history.h"

#include "lib/history/look.h"
#include "lib/history/series.h"
#include "lib/util/atomic.h"
#include "lib/util/grow.h"
#include "lib/util/strset.h"
#include "lib/view/pagedir.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A stored run: its id (its place in runs) and place among its machine's
 * runs. */
struct plot_run {
    const char *id;
    size_t run, machine, pos;
};

struct plot {
    const struct hra_filter *f;
    const char *machine;      /* --machine */
    const char *dir;
    struct hru_strset strs;   /* commits, hosts, kernels, key parts */
    struct hru_strset ids;    /* run ids: id i is run i */
    struct hru_strset machines, nodes, kinds, keys;
    struct hrv_page_run *runs; /* in the history's order */
    size_t nruns, caprun;
    size_t *run_machine, *run_pos;
    size_t caprm;
    size_t *mruns;            /* per machine, its runs in order: */
    size_t *mfirst;           /* machine m's are mruns[mfirst[m]..] */
    const char *(*kind)[5];   /* per kind: phase, range, op, backend, metric */
    size_t capkind;
    size_t *charts;           /* per chart: node, kind */
    size_t ncharts, capchart;
    size_t *chart_of;         /* per key of keys: its chart */
    size_t capkeyc;
    size_t *chunks;           /* first chart of each */
    size_t nchunks, capchunk;
    struct hru_atomic chunk;  /* the chunk being written, when open */
    int chunk_open;
    size_t chunk_series, chunk_charts, chunk_node;
    /* The chart being read: its lines' points, runs and values. */
    int64_t key;
    int in_chart;
    size_t node, kindno;
    const char *k[6];         /* node, op, backend, phase, range, metric */
    struct hrv_page_point *pts;
    size_t *prun, *ppos;
    double *x;
    uint64_t *count;
    size_t npts, cappts;
    struct hrv_page_line *lines;
    size_t *lfirst;           /* each line's first point */
    size_t nlines, caplines, caplfirst;
    size_t nseries;
    struct hrh_look *look;
    size_t nfindings;
    int write_failed;         /* the error is a file's, not the history's */
    char *err;
    size_t errlen;
};

static int add_run(void *ctx, const struct hrh_runinfo *r)
{
    struct plot *p = ctx;
    size_t c, h, k, id, m;
    int rc;

    if ((rc = hru_grow(&p->runs, &p->caprun, p->nruns + 1,
                       sizeof *p->runs, 16)) != 0 ||
        (rc = hru_strset_add(&p->strs, r->commit, &c)) != 0 ||
        (rc = hru_strset_add(&p->strs, r->host, &h)) != 0 ||
        (rc = hru_strset_add(&p->strs, r->kernel, &k)) != 0 ||
        (rc = hru_strset_add(&p->machines, r->machine, &m)) != 0 ||
        (rc = hru_strset_add(&p->ids, r->id, &id)) != 0)
        return rc;
    if (id != p->nruns)
        return 0; /* a run listed twice: it is the first */
    /* A string's address stays as it is while strs grows. */
    p->runs[p->nruns] = (struct hrv_page_run){ hrh_time_seconds(r->time_ns),
                                               p->strs.v[c], p->strs.v[h],
                                               p->strs.v[k] };
    if ((rc = hru_grow(&p->run_machine, &p->caprm, p->nruns + 1,
                       sizeof *p->run_machine, 16)) != 0)
        return rc;
    p->run_machine[p->nruns++] = m;
    return 0;
}

/* Each run's place among its machine's runs, and each machine's runs in
 * order. Returns 0 or -ENOMEM. */
static int index_runs(struct plot *p)
{
    size_t nm = p->machines.n, *seen = calloc(nm + 1, sizeof *seen);

    p->run_pos = malloc((p->nruns + 1) * sizeof *p->run_pos);
    p->mruns = malloc((p->nruns + 1) * sizeof *p->mruns);
    p->mfirst = calloc(nm + 1, sizeof *p->mfirst);
    if (seen == NULL || p->run_pos == NULL || p->mruns == NULL ||
        p->mfirst == NULL) {
        free(seen);
        return -ENOMEM;
    }
    for (size_t i = 0; i < p->nruns; i++)
        p->run_pos[i] = seen[p->run_machine[i]]++;
    for (size_t m = 1; m <= nm; m++)
        p->mfirst[m] = p->mfirst[m - 1] + seen[m - 1];
    for (size_t i = 0; i < p->nruns; i++)
        p->mruns[p->mfirst[p->run_machine[i]] + p->run_pos[i]] = i;
    free(seen);
    return 0;
}

/* Ends the chunk being written. Returns 0 or a negative errno. */
static int chunk_close(struct plot *p)
{
    int rc;

    if (!p->chunk_open)
        return 0;
    p->chunk_open = 0;
    if ((rc = hrv_page_chunk_end(p->chunk.f)) != 0)
        hru_atomic_abort(&p->chunk);
    else
        rc = hru_atomic_commit(&p->chunk);
    if (rc != 0) {
        snprintf(p->err, p->errlen, "cannot write chunk %zu: %s",
                 p->nchunks - 1, strerror(-rc));
        p->write_failed = 1;
    }
    return rc;
}

/* Ends the line being read: its points in run order, fed to the look.
 * Returns 0 or -ENOMEM. */
static int line_close(struct plot *p)
{
    struct hrv_page_line *l;
    size_t first;

    if (p->nlines == 0)
        return 0;
    l = &p->lines[p->nlines - 1];
    first = p->lfirst[p->nlines - 1];
    l->n = p->npts - first;
    /* In run order (the history gives them so; a line never runs
     * backwards whatever it gives). */
    for (size_t i = first + 1; i < p->npts; i++) {
        for (size_t j = i; j > first && p->prun[j - 1] > p->prun[j]; j--) {
            struct hrv_page_point t = p->pts[j];
            size_t r = p->prun[j], q = p->ppos[j];
            double x = p->x[j];
            uint64_t c = p->count[j];

            p->pts[j] = p->pts[j - 1];
            p->prun[j] = p->prun[j - 1];
            p->ppos[j] = p->ppos[j - 1];
            p->x[j] = p->x[j - 1];
            p->count[j] = p->count[j - 1];
            p->pts[j - 1] = t;
            p->prun[j - 1] = r;
            p->ppos[j - 1] = q;
            p->x[j - 1] = x;
            p->count[j - 1] = c;
        }
    }
    p->nseries++;
    return hrh_look_add(p->look, p->k,
                                p->machines.v[l->machine], p->x + first,
                                p->count + first, p->ppos + first, l->n);
}

/* Ends the chart being read: written into the chunk, a new chunk begun
 * when the one open holds enough and the chart's node is another. Returns
 * 0 or a negative errno. */
static int chart_close(struct plot *p)
{
    char path[4096];
    int rc;

    if (!p->in_chart)
        return 0;
    p->in_chart = 0;
    if ((rc = line_close(p)) != 0)
        return rc;
    /* The lines' points and runs: where they are now. */
    for (size_t i = 0; i < p->nlines; i++) {
        p->lines[i].points = p->pts + p->lfirst[i];
        p->lines[i].run = p->prun + p->lfirst[i];
    }
    if (p->chunk_open && p->chunk_series >= HRV_PAGE_CHUNK_SERIES &&
        p->node != p->chunk_node && (rc = chunk_close(p)) != 0)
        return rc;
    if (!p->chunk_open) {
        if ((rc = hru_grow(&p->chunks, &p->capchunk, p->nchunks + 2,
                           sizeof *p->chunks, 16)) != 0)
            return rc;
        snprintf(path, sizeof path, "%s/" HRV_PAGE_CHUNK_NAME, p->dir,
                 p->nchunks);
        if ((rc = hru_atomic_open(&p->chunk, path, 1)) != 0) {
            snprintf(p->err, p->errlen, "cannot write %s: %s", path,
                     strerror(-rc));
            p->write_failed = 1;
            return rc;
        }
        p->chunk_open = 1;
        hrv_page_chunk_begin(p->chunk.f, p->nchunks);
        p->chunks[p->nchunks++] = p->ncharts - 1;
        p->chunk_series = p->chunk_charts = 0;
    }
    hrv_page_chunk_chart(p->chunk.f, p->chunk_charts++, p->lines, p->nlines);
    p->chunk_series += p->nlines;
    p->chunk_node = p->node;
    p->npts = p->nlines = 0;
    return ferror(p->chunk.f) ? -EIO : 0;
}

/* Begins the chart of point pt's key. Returns 0 or -ENOMEM. */
static int chart_open(struct plot *p, const struct hrh_point *pt)
{
    const char *k[6] = { pt->node, pt->op, pt->backend, pt->phase,
                         pt->range, pt->metric };
    size_t idx[6], kind, key, nkinds = p->kinds.n;
    char name[64];
    char *joined;
    size_t len = 0;
    int rc;

    for (int i = 0; i < 6; i++) {
        if ((rc = hru_strset_add(&p->strs, k[i], &idx[i])) != 0)
            return rc;
        len += strlen(k[i]) + 1;
    }
    for (int i = 0; i < 6; i++)
        p->k[i] = p->strs.v[idx[i]];
    /* A kind: phase, range, op, backend and metric, joined by a byte no
     * name of a key holds. */
    if ((joined = malloc(len + 1)) == NULL)
        return -ENOMEM;
    snprintf(joined, len + 1, "%s\037%s\037%s\037%s\037%s", pt->phase,
             pt->range, pt->op, pt->backend, pt->metric);
    rc = hru_strset_add(&p->kinds, joined, &kind);
    free(joined);
    if (rc != 0 || (rc = hru_strset_add(&p->nodes, pt->node, &p->node)) != 0)
        return rc;
    if (kind == nkinds) {
        if ((rc = hru_grow(&p->kind, &p->capkind, p->kinds.n,
                           sizeof *p->kind, 16)) != 0)
            return rc;
        p->kind[kind][0] = p->k[3];
        p->kind[kind][1] = p->k[4];
        p->kind[kind][2] = p->k[1];
        p->kind[kind][3] = p->k[2];
        p->kind[kind][4] = p->k[5];
    }
    p->kindno = kind;
    snprintf(name, sizeof name, "%zu %zu", p->node, kind);
    if ((rc = hru_grow(&p->charts, &p->capchart, 2 * (p->ncharts + 1),
                       sizeof *p->charts, 16)) != 0 ||
        (rc = hru_strset_add(&p->keys, name, &key)) != 0 ||
        (rc = hru_grow(&p->chart_of, &p->capkeyc, p->keys.n,
                       sizeof *p->chart_of, 16)) != 0)
        return rc;
    p->chart_of[key] = p->ncharts;
    p->charts[2 * p->ncharts] = p->node;
    p->charts[2 * p->ncharts + 1] = kind;
    p->ncharts++;
    p->key = pt->key;
    p->in_chart = 1;
    return 0;
}

static int plot_point(void *ctx, const struct hrh_point *pt)
{
    struct plot *p = ctx;
    size_t m, run;
    int rc;

    if (!hrh_match(p->f, p->machine, pt))
        return 0;
    if (hru_strset_find(&p->ids, pt->run, &run) != 0 ||
        hru_strset_find(&p->machines, pt->machine, &m) != 0)
        return 0; /* a point of no listed run: none */
    if (!p->in_chart || p->key != pt->key) {
        if ((rc = chart_close(p)) != 0 || (rc = chart_open(p, pt)) != 0)
            return rc;
    }
    if (p->nlines == 0 || p->lines[p->nlines - 1].machine != m) {
        if ((rc = line_close(p)) != 0 ||
            (rc = hru_grow(&p->lines, &p->caplines, p->nlines + 1,
                           sizeof *p->lines, 16)) != 0 ||
            (rc = hru_grow(&p->lfirst, &p->caplfirst, p->nlines + 1,
                           sizeof *p->lfirst, 16)) != 0)
            return rc;
        /* Its points' addresses: set by chart_close. */
        p->lines[p->nlines] = (struct hrv_page_line){ m, NULL, NULL, 0 };
        p->lfirst[p->nlines++] = p->npts;
    }
    if (p->npts == p->cappts) {
        size_t cap = hru_grow_room(p->cappts, p->npts + 1, sizeof *p->pts, 64);

        if (cap == 0 || hru_resize(&p->pts, cap, sizeof *p->pts) != 0 ||
            hru_resize(&p->prun, cap, sizeof *p->prun) != 0 ||
            hru_resize(&p->ppos, cap, sizeof *p->ppos) != 0 ||
            hru_resize(&p->x, cap, sizeof *p->x) != 0 ||
            hru_resize(&p->count, cap, sizeof *p->count) != 0)
            return -ENOMEM;
        p->cappts = cap;
    }
    p->pts[p->npts] = (struct hrv_page_point){ pt->median, pt->p10, pt->p90,
                                               pt->count };
    p->prun[p->npts] = run;
    p->ppos[p->npts] = p->run_pos[run];
    p->x[p->npts] = pt->median;
    p->count[p->npts] = pt->count;
    p->npts++;
    return 0;
}

/* The chart of change ch, or -ENOENT. */
static int change_chart(const struct plot *p,
                        const struct hrh_change *ch, size_t *out)
{
    const char *const *k = ch->key;
    size_t node, kind, key, len = 0;
    char name[64], *joined;
    int rc;

    for (int i = 0; i < 6; i++)
        len += strlen(k[i]) + 1;
    if ((joined = malloc(len + 1)) == NULL)
        return -ENOMEM;
    snprintf(joined, len + 1, "%s\037%s\037%s\037%s\037%s", k[3], k[4],
             k[1], k[2], k[5]);
    rc = hru_strset_find(&p->kinds, joined, &kind);
    free(joined);
    if (rc != 0 || (rc = hru_strset_find(&p->nodes, k[0], &node)) != 0)
        return rc;
    snprintf(name, sizeof name, "%zu %zu", node, kind);
    if ((rc = hru_strset_find(&p->keys, name, &key)) != 0)
        return rc;
    *out = p->chart_of[key];
    return 0;
}

/* The run at place pos among machine m's runs (nruns: none). */
static size_t run_at(const struct plot *p, size_t m, size_t pos)
{
    size_t n = (m + 1 < p->machines.n ? p->mfirst[m + 1] : p->nruns) -
               p->mfirst[m];

    return pos < n ? p->mruns[p->mfirst[m] + pos] : p->nruns;
}

/* The findings of the look and their changes, for the page; the
 * findings' charts in *fcharts. Returns 0 or -ENOMEM. */
static int gather(const struct plot *p, struct hrv_page_finding **outf,
                  struct hrv_page_change **outc, size_t **fcharts,
                  size_t *nchanges)
{
    size_t nf = hrh_look_nfindings(p->look), total = 0, nc = 0;
    struct hrv_page_finding *f;
    struct hrv_page_change *c;
    size_t *fc;

    for (size_t i = 0; i < nf; i++) {
        struct hrh_finding g;

        hrh_look_finding(p->look, i, &g);
        total += g.nchanges;
    }
    f = calloc(nf + 1, sizeof *f);
    c = calloc(total + 1, sizeof *c);
    fc = calloc(total + 1, sizeof *fc);
    if (f == NULL || c == NULL || fc == NULL) {
        free(f);
        free(c);
        free(fc);
        return -ENOMEM;
    }
    for (size_t i = 0; i < nf; i++) {
        struct hrh_finding g;
        struct hrh_change st;
        size_t m = 0, *charts = fc + nc, n = 0;

        hrh_look_finding(p->look, i, &g);
        hrh_look_change(p->look, i, g.start, &st);
        hru_strset_find(&p->machines, g.machine, &m);
        /* The layer it starts in first, then the others in series
         * order, each chart once. */
        for (size_t t = 0; t <= g.nchanges; t++) {
            struct hrh_change ch;
            size_t j = t == 0 ? g.start : t - 1, chart, cm = 0;
            int dup = 0;

            if (t > 0 && j == g.start)
                continue;
            hrh_look_change(p->look, i, j, &ch);
            if (change_chart(p, &ch, &chart) != 0)
                continue;
            hru_strset_find(&p->machines, ch.machine, &cm);
            c[nc++] = (struct hrv_page_change){
                chart, cm, run_at(p, cm, ch.pos), ch.cp.before,
                ch.cp.after, ch.cp.change * 100 };
            for (size_t q = 0; q < n; q++)
                dup |= charts[q] == chart;
            if (!dup)
                charts[n++] = chart;
        }
        f[i] = (struct hrv_page_finding){ m, run_at(p, m, g.pos), g.nodes,
                                          g.nchanges, g.p,
                                          st.cp.change * 100, charts, n };
    }
    /* fc and c grow side by side: the findings' charts end at nc. */
    *outf = f;
    *outc = c;
    *fcharts = fc;
    *nchanges = nc;
    return 0;
}

/* Removes the chunks an earlier page left in p->dir that the new index
 * does not name: each file data/NNNNNN.js of a number from p->nchunks
 * on. */
static void remove_stale(const struct plot *p)
{
    char path[4096];
    struct dirent *e;
    DIR *d;

    snprintf(path, sizeof path, "%s/" HRV_PAGE_CHUNK_DIR, p->dir);
    if ((d = opendir(path)) == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        size_t n;
        int end = 0;

        if (strlen(e->d_name) != 9 ||
            strspn(e->d_name, "0123456789") != 6 ||
            sscanf(e->d_name, "%6zu.js%n", &n, &end) != 1 || end != 9 ||
            n < p->nchunks)
            continue;
        snprintf(path, sizeof path, "%s/" HRV_PAGE_CHUNK_NAME, p->dir, n);
        unlink(path);
    }
    closedir(d);
}

static void plot_fini(struct plot *p)
{
    if (p->chunk_open)
        hru_atomic_abort(&p->chunk);
    hru_strset_fini(&p->strs);
    hru_strset_fini(&p->ids);
    hru_strset_fini(&p->machines);
    hru_strset_fini(&p->nodes);
    hru_strset_fini(&p->kinds);
    hru_strset_fini(&p->keys);
    free(p->runs);
    free(p->run_machine);
    free(p->run_pos);
    free(p->mruns);
    free(p->mfirst);
    free(p->kind);
    free(p->charts);
    free(p->chart_of);
    free(p->chunks);
    free(p->pts);
    free(p->prun);
    free(p->ppos);
    free(p->x);
    free(p->count);
    free(p->lines);
    free(p->lfirst);
    hrh_look_free(p->look);
}

/* Reads history h into directory p->dir's chunks and writes its index,
 * index.html, titled title. Returns 0, a negative errno (err filled for
 * the history's or a file's), or -ENOMEM. */
static int plot_write(struct plot *p, struct hrh_history *h,
                      const struct hrs_cp_opts *cp, const char *title,
                      char *err, size_t errlen)
{
    struct hrv_page_finding *f = NULL;
    struct hrv_page_change *c = NULL;
    size_t *fc = NULL, nc = 0;
    struct hru_atomic a;
    char path[4096], rule[256];
    int rc;

    p->err = err;
    p->errlen = errlen;
    if ((p->look = hrh_look_new(cp)) == NULL)
        return -ENOMEM;
    if ((rc = hrh_runs(h, add_run, p, err, errlen)) != 0 ||
        (rc = index_runs(p)) != 0)
        return rc;
    /* An earlier page's index goes first: until the new one is written
     * whole, the directory holds no page, never one showing another
     * page's charts. */
    snprintf(path, sizeof path, "%s/index.html", p->dir);
    if (unlink(path) != 0 && errno != ENOENT) {
        rc = -errno;
        snprintf(err, errlen, "cannot replace %.3000s: %s", path,
                 strerror(errno));
        p->write_failed = 1;
        return rc;
    }
    snprintf(path, sizeof path, "%s/" HRV_PAGE_CHUNK_DIR, p->dir);
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
        rc = -errno;
        snprintf(err, errlen, "cannot make %.3000s: %s", path, strerror(errno));
        p->write_failed = 1;
        return rc;
    }
    if ((rc = hrh_points(h, plot_point, p, err, errlen)) != 0 ||
        (rc = chart_close(p)) != 0 || (rc = chunk_close(p)) != 0)
        return rc;
    if ((rc = hru_grow(&p->chunks, &p->capchunk, p->nchunks + 1,
                       sizeof *p->chunks, 16)) != 0)
        return rc;
    p->chunks[p->nchunks] = p->ncharts;
    if ((rc = hrh_look_finish(p->look)) != 0 ||
        (rc = gather(p, &f, &c, &fc, &nc)) != 0)
        return rc;
    hrh_look_rule(rule, sizeof rule, cp->alpha,
                          hrh_look_tested(p->look));
    snprintf(path, sizeof path, "%s/index.html", p->dir);
    if ((rc = hru_atomic_open(&a, path, 1)) == 0) {
        struct hrv_page_dir d = {
            title, rule, hrh_look_tested(p->look), p->runs,
            p->nruns, (const char *const *)p->machines.v, p->machines.n,
            (const char *const *)p->nodes.v, p->nodes.n,
            (const char *const (*)[5])p->kind, p->kinds.n, p->charts,
            p->ncharts, p->chunks, p->nchunks, f,
            hrh_look_nfindings(p->look), c, nc };

        rc = hrv_page_dir_write(a.f, &d);
        if (rc == 0)
            rc = hru_atomic_commit(&a);
        else
            hru_atomic_abort(&a);
        if (rc == 0)
            remove_stale(p);
    }
    if (rc != 0 && rc != -ENOMEM) {
        snprintf(err, errlen, "cannot write %.3000s: %s", path,
                 strerror(-rc));
        p->write_failed = 1;
    }
    p->nfindings = hrh_look_nfindings(p->look);
    free(f);
    free(c);
    free(fc);
    return rc;
}

int hrh_page_write(struct hrh_history *h,
                           const struct hrh_page_opts *o,
                           struct hrh_page_result *r, char *err,
                           size_t errlen)
{
    struct plot p;
    int rc;

    memset(&p, 0, sizeof p);
    p.f = o->filter;
    p.machine = o->machine;
    p.dir = o->dir;
    rc = plot_write(&p, h, o->cp, o->title, err, errlen);
    r->nseries = p.nseries;
    r->nfindings = p.nfindings;
    r->write_failed = p.write_failed;
    plot_fini(&p);
    return rc;
}
