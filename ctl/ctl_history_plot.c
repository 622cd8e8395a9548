/* hostrangectl history plot: the history's series as one self-contained
 * HTML page, DIR/index.html (lib/view/page.h), each with the segments
 * detect finds. */
#include "config.h"

#include "ctl/ctl.h"
#include "ctl/ctl_history.h"
#include "lib/history/history.h"
#include "lib/stat/changepoint.h"
#include "lib/util/atomic.h"
#include "lib/view/page.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char hrd_ctl_history_usage_plot[] =
    "Usage: hostrangectl history plot [--db DB] -o DIR [FILTER]...\n"
    "                               [--machine GLOB] [--alpha P] [--window N]\n"
    "Write the history as one page, DIR/index.html, that opens in a browser\n"
    "with nothing else (no network, no external script or font): per node\n"
    "and phase a chart per range, its median run by run labelled with the\n"
    "short commit (the band is p10 to p90), a line per machine with a\n"
    "legend, and the segments detect finds as steps, each change point\n"
    "marked with its change. Hovering a point shows its commit, time, host,\n"
    "kernel, median, p10-p90 and count; where a line's kernel changes, a\n"
    "dashed mark says from what to what. A filter box narrows the charts\n"
    "by name. The page opens on the most changed series.\n"
    "\n"
    "      --db=DB          the history (see hostrangectl history add --help)\n"
    HRD_CTL_HISTORY_READ_HELP
    "  -o, --output=DIR     the directory to write index.html in (made when\n"
    "                       missing)\n"
    HRD_CTL_FILTER_HELP
    "      --machine=GLOB   only machines matching GLOB\n"
    "  -a, --alpha=P        detect's significance level\n"
    "  -w, --window=N       detect's fewest runs a level must last\n"
    "  -h, --help           show this help and exit\n";

enum { OPT_DB = 256, OPT_MACHINE };

/* The series read: each point's strings copied. */
struct plot {
    struct hrd_filter f;
    const char *machine;
    struct hrd_page_series *s;
    size_t n, cap;
    struct hrd_page_point *pts;   /* of the series being read */
    size_t npts, ptcap;
    int64_t key;
    char *last_machine;
};

/* Ends the series being read: its points become s[n-1]'s. */
static void plot_close_series(struct plot *p)
{
    if (p->n > 0 && p->pts != NULL) {
        p->s[p->n - 1].points = p->pts;
        p->s[p->n - 1].npoints = p->npts;
    }
    p->pts = NULL;
    p->npts = p->ptcap = 0;
}

static int plot_point(void *ctx, const struct hrd_history_point *pt)
{
    struct plot *p = ctx;
    struct hrd_page_point *q;

    if (!hrd_ctl_history_match(&p->f, p->machine, pt))
        return 0;
    if (p->n == 0 || p->key != pt->key ||
        strcmp(p->last_machine, pt->machine) != 0) {
        struct hrd_page_series *s;

        plot_close_series(p);
        if (p->n == p->cap) {
            size_t cap = p->cap ? 2 * p->cap : 64;
            struct hrd_page_series *v = realloc(p->s, cap * sizeof *v);

            if (v == NULL)
                return -ENOMEM;
            p->s = v;
            p->cap = cap;
        }
        s = &p->s[p->n++];
        memset(s, 0, sizeof *s);
        s->node = strdup(pt->node);
        s->phase = strdup(pt->phase);
        s->range = strdup(pt->range);
        s->op = strdup(pt->op);
        s->backend = strdup(pt->backend);
        s->metric = strdup(pt->metric);
        s->machine = p->last_machine = strdup(pt->machine);
        p->key = pt->key;
        if (s->node == NULL || s->phase == NULL || s->range == NULL ||
            s->op == NULL || s->backend == NULL || s->metric == NULL ||
            s->machine == NULL)
            return -ENOMEM;
    }
    if (p->npts == p->ptcap) {
        size_t cap = p->ptcap ? 2 * p->ptcap : 64;
        struct hrd_page_point *v = realloc(p->pts, cap * sizeof *v);

        if (v == NULL)
            return -ENOMEM;
        p->pts = v;
        p->ptcap = cap;
    }
    q = &p->pts[p->npts];
    q->commit = strdup(pt->commit);
    q->host = strdup(pt->host);
    q->kernel = strdup(pt->kernel);
    if (q->commit == NULL || q->host == NULL || q->kernel == NULL) {
        free((void *)q->commit);
        free((void *)q->host);
        free((void *)q->kernel);
        return -ENOMEM;
    }
    q->time = pt->time_ns / 1000000000;
    q->median = pt->median;
    q->p10 = pt->p10;
    q->p90 = pt->p90;
    q->count = pt->count;
    p->npts++;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* Series s's segments from detect's change points. Returns 0 or
 * -ENOMEM. */
static int segment(struct hrd_page_series *s, const struct hrd_cp_opts *o)
{
    size_t n = s->npoints;
    double *x = malloc((n + 1) * sizeof *x);
    struct hrd_cp *cp = malloc((n + 1) * sizeof *cp);
    struct hrd_page_segment *seg = malloc((n + 1) * sizeof *seg);
    int k;

    if (x == NULL || cp == NULL || seg == NULL) {
        free(x);
        free(cp);
        free(seg);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        x[i] = s->points[i].median;
    k = n > 0 ? hrd_cp_detect(x, n, o, cp, n) : 0;
    if (k < 0) {
        free(x);
        free(cp);
        free(seg);
        return k;
    }
    if (k == 0 && n > 0) {
        qsort(x, n, sizeof *x, cmp_double);
        seg[0] = (struct hrd_page_segment){ 0, n - 1,
                                            n % 2 ? x[n / 2]
                                                  : (x[n / 2 - 1] +
                                                     x[n / 2]) / 2 };
    }
    for (int i = 0; i < k; i++) {
        seg[i] = (struct hrd_page_segment){ i ? cp[i - 1].at : 0,
                                            cp[i].at - 1, cp[i].before };
        seg[i + 1] = (struct hrd_page_segment){ cp[i].at, n - 1,
                                                cp[i].after };
    }
    s->segments = seg;
    s->nsegments = n == 0 ? 0 : (size_t)k + 1;
    free(x);
    free(cp);
    return 0;
}

static void plot_fini(struct plot *p)
{
    plot_close_series(p);
    for (size_t i = 0; i < p->n; i++) {
        struct hrd_page_series *s = &p->s[i];

        for (size_t j = 0; j < s->npoints; j++) {
            free((void *)s->points[j].commit);
            free((void *)s->points[j].host);
            free((void *)s->points[j].kernel);
        }
        free((void *)s->points);
        free((void *)s->segments);
        free((void *)s->node);
        free((void *)s->phase);
        free((void *)s->range);
        free((void *)s->op);
        free((void *)s->backend);
        free((void *)s->metric);
        free((void *)s->machine);
    }
    free(p->s);
}

int hrd_ctl_history_plot(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "db", required_argument, NULL, OPT_DB },
        { "output", required_argument, NULL, 'o' },
        HRD_CTL_FILTER_LONGOPTS,
        { "machine", required_argument, NULL, OPT_MACHINE },
        { "alpha", required_argument, NULL, 'a' },
        { "window", required_argument, NULL, 'w' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *cmd = "history plot", *db = NULL, *out = NULL;
    struct hrd_cp_opts cp = { .alpha = HRD_CP_ALPHA_DEFAULT,
                              .window = HRD_CP_WINDOW_DEFAULT,
                              .min_change = HRD_CP_MIN_CHANGE_DEFAULT };
    struct plot p;
    struct hrd_history *h;
    struct hrd_atomic a;
    char err[4096], name[1024], title[1100], path[4096];
    int c, rc;

    memset(&p, 0, sizeof p);
    while ((c = getopt_long(argc, argv, ":o:n:a:w:h", longopts, NULL)) !=
           -1) {
        if (c == OPT_DB) {
            db = hrd_ctl_history_dsn(cmd, optarg);
        } else if (c == 'o') {
            out = optarg;
        } else if (c == OPT_MACHINE) {
            p.machine = optarg;
        } else if (c == 'a' || c == 'w') {
            if (hrd_ctl_history_cp_option(cmd, c, optarg, &cp) != 0)
                return HRD_CTL_HISTORY_USAGE;
        } else if (c == 'h') {
            fputs(hrd_ctl_history_usage_plot, stdout);
            return 0;
        } else if (!hrd_ctl_report_option(cmd, c, optarg, &p.f, NULL)) {
            hrd_ctl_die_usage(cmd, c, argv[optind - 1]);
        }
    }
    if (out == NULL || optind < argc) {
        fprintf(stderr, "hostrangectl %s: %s (see --help)\n", cmd,
                out == NULL ? "give the directory to write in, -o DIR"
                            : "unexpected argument");
        return HRD_CTL_HISTORY_USAGE;
    }
    snprintf(path, sizeof path, "%s/index.html", out);
    /* The history first: a missing one makes no directory either. */
    db = hrd_ctl_history_db(db);
    if ((rc = hrd_ctl_history_open(cmd, db, HRD_HISTORY_READ, &h)) != 0)
        return rc;
    if (mkdir(out, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "hostrangectl %s: cannot make %s: %s\n", cmd, out,
                strerror(errno));
        hrd_history_close(h);
        return HRD_CTL_HISTORY_FAILED;
    }
    rc = hrd_history_points(h, plot_point, &p, err, sizeof err);
    hrd_history_close(h);
    plot_close_series(&p);
    for (size_t i = 0; rc == 0 && i < p.n; i++)
        rc = segment(&p.s[i], &cp);
    if (rc == 0) {
        hrd_history_name(db, name, sizeof name);
        snprintf(title, sizeof title, "hostrange history: %s", name);
        rc = hrd_atomic_open(&a, path, 1);
        if (rc == 0) {
            rc = hrd_page_write(a.f, &(struct hrd_page){ title, p.s, p.n });
            if (rc == 0)
                rc = hrd_atomic_commit(&a);
            else
                hrd_atomic_abort(&a);
        }
        if (rc != 0 && rc != -ENOMEM) {
            fprintf(stderr, "hostrangectl %s: cannot write %s: %s\n", cmd,
                    path, strerror(-rc));
            plot_fini(&p);
            return HRD_CTL_HISTORY_FAILED;
        }
    }
    plot_fini(&p);
    if (rc == -ENOMEM) {
        fprintf(stderr, "hostrangectl %s: out of memory\n", cmd);
        return HRD_CTL_HISTORY_FAILED;
    }
    if (rc != 0) {
        hrd_history_name(db, name, sizeof name);
        fprintf(stderr, "hostrangectl %s: %s: %s\n", cmd, name, err);
        return HRD_CTL_HISTORY_UNREADABLE;
    }
    printf("wrote %s: %zu series\n", path, p.n);
    return 0;
}
