/*
 * hostrangectl plot (ctl.h): SVG pictures of the calling-context tree
 * (ctl_paths.c), one per node, with an index.html when there are several;
 * plot --diff colours each box by the significance of its change
 * (signif.h).
 */
#include "config.h"

#include "ctl/ctl.h"
#include "lib/agg/agg_impl.h"
#include "lib/util/atomic.h"
#include "lib/view/flame.h"
#include "lib/view/svg.h"
#include "lib/run/run.h"
#include "lib/stat/signif.h"
#include "proto/protocol.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- plot --diff: significance per path ---------------------------------- */

/* A key's inclusive population as a weighted sample (signif.h), bucketed
 * like a histogram when `bucketed`. The arrays are allocated. */
struct wpop {
    double *v;
    uint64_t *w;
    size_t n;
    uint64_t total;
    int hist;
};

static int wpop_of(struct hrd_agg *a, const struct hrd_key *k,
                   struct wpop *p)
{
    memset(p, 0, sizeof *p);
    if (k->exact) {
        size_t all = k->pairs + k->records, ni, ns;
        uint64_t *incl = malloc((all + 1) * sizeof *incl);
        uint64_t *self = malloc((k->pairs + 1) * sizeof *self);
        uint64_t *tmp = malloc((all + 1) * sizeof *tmp);

        p->v = malloc((all + 1) * sizeof *p->v);
        p->w = malloc((all + 1) * sizeof *p->w);
        if (incl == NULL || self == NULL || tmp == NULL || p->v == NULL ||
            p->w == NULL) {
            free(incl);
            free(self);
            free(tmp);
            return -ENOMEM;
        }
        hrd_agg_key_values(k, incl, &ni, self, &ns);
        hrd_sort_u64(incl, ni, tmp);
        p->n = hrd_signif_collapse(incl, ni, p->v, p->w);
        p->total = ni;
        free(incl);
        free(self);
        free(tmp);
        (void)a;
        return 0;
    }
    p->hist = 1;
    p->v = malloc((k->incl->nb + 1) * sizeof *p->v);
    p->w = malloc((k->incl->nb + 1) * sizeof *p->w);
    if (p->v == NULL || p->w == NULL)
        return -ENOMEM;
    for (uint32_t b = hrd_hist_next(k->incl, 0, &p->w[0]);
         b < HRD_HIST_BUCKETS; b = hrd_hist_next(k->incl, b + 1, &p->w[p->n])) {
        p->v[p->n++] = hrd_hist_value(b);
    }
    p->total = k->incl->n;
    return 0;
}

/* Puts an exact population's values into histogram buckets. */
static void wpop_bucket(struct wpop *p)
{
    if (p->hist)
        return;
    p->n = hrd_hist_bucket_weighted(p->v, p->w, p->n);
    p->hist = 1;
}

static void wpop_free(struct wpop *p)
{
    free(p->v);
    free(p->w);
}

/* Compares every path key of `new` with the same (labels, path) of `base`
 * and puts the outcome on the nodes of t, a change being significant when
 * p < alpha. Returns 0 or -ENOMEM. */
static int compare(struct hrd_agg *base, struct hrd_agg *new,
                   struct hrd_ptree *t, double alpha)
{
    const char *names[HRD_MAX_DEPTH_LIMIT];

    for (uint32_t i = 0; i < new->nkeys; i++) {
        const struct hrd_key *k = new->keys[i];

        for (const struct hrd_key *pp = k->paths; pp != NULL; pp = pp->pnext) {
            struct hrd_key tmp;
            const struct hrd_key *p = hrd_agg_path_view(k, pp, &tmp);
            uint32_t depth = hrd_agg_path_names(new, p->path, names);
            const char *node = hrd_agg_str_get(new, p->node);
            const char *op = hrd_agg_str_get(new, p->op);
            const char *be = hrd_agg_str_get(new, p->backend);
            struct hrd_pnode *n = hrd_ptree_find(t, node, op, be, p->phase,
                                                 names, depth);
            uint32_t bn, bo, bb, br, id = 0;
            struct hrd_key *bk, *bp;
            struct wpop x, y;
            struct hrd_signif s;
            int rc;

            if (n == NULL || p->pairs == 0)
                continue;
            /* The same key in the base (created empty when it has none:
             * the base aggregation is this comparison's own). */
            bn = hrd_agg_str(base, node);
            bo = hrd_agg_str(base, op);
            bb = hrd_agg_str(base, be);
            br = hrd_agg_str(base, hrd_agg_str_get(new, p->range));
            if (bn == 0 || bo == 0 || bb == 0 || br == 0)
                return -ENOMEM;
            bk = hrd_agg_key(base, bn, bo, bb, p->phase, br);
            for (uint32_t j = 0; j < depth && id != HRD_PATH_TOO_DEEP; j++) {
                uint32_t r = hrd_agg_str(base, names[j]);
                if (r == 0)
                    return -ENOMEM;
                id = hrd_agg_path(base, id, r);
                if (id == 0)
                    return -ENOMEM;
            }
            if (bk == NULL || id == HRD_PATH_TOO_DEEP)
                continue;
            bp = hrd_agg_path_key(base, bk, id);
            if (bp == NULL)
                return -ENOMEM;
            if (bp->pairs == 0)
                continue; /* not in the base: grey */
            memset(&y, 0, sizeof y);
            if (wpop_of(base, bp, &x) != 0 || wpop_of(new, p, &y) != 0) {
                wpop_free(&x);
                wpop_free(&y);
                return -ENOMEM;
            }
            if (x.hist || y.hist) {
                wpop_bucket(&x);
                wpop_bucket(&y);
            }
            rc = hrd_signif_compare(
                &(struct hrd_wsample){ x.v, x.w, x.n, x.total },
                &(struct hrd_wsample){ y.v, y.w, y.n, y.total }, &s);
            if (rc == 0) {
                double bm = hrd_signif_median(
                    &(struct hrd_wsample){ x.v, x.w, x.n, x.total });

                n->diff_known = 1;
                n->diff_p = s.p;
                n->diff_shift = s.shift;
                n->diff_base_median = bm;
                n->diff_rel = bm > 0 ? s.shift / bm : 0;
                n->diff = s.p < alpha && s.shift != 0
                              ? (s.shift > 0 ? 1 : -1)
                              : 0;
            }
            wpop_free(&x);
            wpop_free(&y);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}

/* --- plot ---------------------------------------------------------------- */

static const char usage_plot[] =
    "Usage: hostrangectl plot -o FILE.svg [FILTER]... [--from=RUN]\n"
    "       hostrangectl plot -o FILE.svg [FILTER]... [--alpha=P] --diff BASE NEW\n"
    "Draw where the time goes: per node, a self-contained SVG picture (no\n"
    "script needed; every box has a tooltip) of its cold and warm calling\n"
    "contexts side by side, each an icicle whose box width is the inclusive\n"
    "median per call of the box's parent, and beside it a bar per range of\n"
    "its self median per call of the top range. The figures are the\n"
    "daemon's, or those of run file RUN.\n"
    "\n"
    "  -o, --output=FILE    the picture, when one node is plotted; with\n"
    "                       several, FILE without its .svg suffix is made a\n"
    "                       directory holding one picture per node\n"
    "                       (node-001.svg, ...) and an index.html of them\n"
    "      --from=RUN       plot run file RUN (hostrangectl save, merge)\n"
    "                       instead of asking the daemon\n"
    "      --diff           compare run file BASE with run file NEW (the two\n"
    "                       arguments): the boxes are NEW's, coloured by the\n"
    "                       change of their inclusive times (Mann-Whitney U,\n"
    "                       p < ALPHA): red slower, blue faster (deeper for\n"
    "                       a larger shift), grey not significant or not in\n"
    "                       BASE\n"
    "  -a, --alpha=P        the significance level of --diff (default "
    HRD_STR(HRD_SIGNIF_ALPHA) ",\n"
    "                       as diff's)\n"
    HRD_CTL_FILTER_HELP
    "  -h, --help           show this help and exit\n"
    "\n"
    "On a terminal, reading run files shows progress on stderr.\n";

/* Writes the picture of `node` to path atomically. Returns 0, or
 * HRD_CTL_TOLD after printing why. */
static int write_svg(const char *path, const struct hrd_ptree *t,
                     const char *node, int diff)
{
    struct hrd_atomic file;
    int rc = hrd_atomic_open(&file, path, 1);

    if (rc == 0) {
        rc = hrd_svg_write(file.f, t, node, diff, NULL);
        if (rc == 0)
            rc = hrd_atomic_commit(&file);
        else
            hrd_atomic_abort(&file);
    }
    if (rc != 0) {
        fprintf(stderr, "hostrangectl plot: cannot write %s: %s\n", path,
                strerror(rc < 0 ? -rc : EIO));
        return HRD_CTL_TOLD;
    }
    return 0;
}

/* Writes dir/index.html, the page of the n nodes' pictures. Returns 0,
 * or HRD_CTL_TOLD after printing why. */
static int write_index(const char *dir, const char *const *nodes, size_t n,
                       int diff)
{
    char path[PATH_MAX + 32];
    FILE *f;

    snprintf(path, sizeof path, "%s/index.html", dir);
    f = fopen(path, "w");
    if (f == NULL)
        goto fail;
    fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            "<title>hostrange: where the time goes</title>\n<style>body{"
            "font-family:sans-serif;margin:1em}li{margin:.2em 0}img{"
            "max-width:100%%;border:1px solid #ccc;margin:.5em 0 2em}"
            "</style></head><body>\n<h1>Where the time goes%s</h1>\n"
            "<p>%zu nodes; each picture shows the cold and warm calling "
            "contexts of one node (hover a box for its figures).</p>\n<ol>\n",
            diff ? ": changes" : "", n);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "<li><a href=\"#n%zu\">", i + 1);
        hrd_xml_escape(f, nodes[i]);
        fputs("</a></li>\n", f);
    }
    fputs("</ol>\n", f);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "<h2 id=\"n%zu\">", i + 1);
        hrd_xml_escape(f, nodes[i]);
        fprintf(f, "</h2>\n<a href=\"node-%03zu.svg\"><img src=\"node-%03zu"
                ".svg\" loading=\"lazy\" alt=\"", i + 1, i + 1);
        hrd_xml_escape(f, nodes[i]);
        fputs("\"></a>\n", f);
    }
    fputs("</body></html>\n", f);
    if (fclose(f) == 0)
        return 0;
fail:
    fprintf(stderr, "hostrangectl plot: cannot write %s: %s\n", path,
            strerror(errno));
    return HRD_CTL_TOLD;
}

/* The tree of run NEW (npath), each path coloured by its change from run
 * BASE (bpath). Returns 0, or HRD_CTL_TOLD after printing why. */
static int diff_tree(const char *bpath, const char *npath,
                     const struct hrd_filter *f, double alpha,
                     struct hrd_ptree *t)
{
    struct hrd_agg base, new;
    int rc;

    hrd_agg_init(&base);
    hrd_agg_init(&new);
    rc = hrd_ctl_load_run("plot", bpath, &base, NULL);
    if (rc == 0)
        rc = hrd_ctl_load_run("plot", npath, &new, NULL);
    if (rc == 0)
        rc = hrd_ctl_tree_from_agg(&new, f, t);
    if (rc == 0 && new.npkeys == 0)
        fprintf(stderr, "hostrangectl plot: %s holds no calling "
                "contexts: its ranges are drawn flat, uncompared\n", npath);
    else if (rc == 0)
        rc = compare(&base, &new, t, alpha);
    hrd_agg_fini(&base);
    hrd_agg_fini(&new);
    if (rc < 0) {
        fprintf(stderr, "hostrangectl plot: out of memory\n");
        rc = HRD_CTL_TOLD;
    }
    return rc;
}

/* Draws tree t to `output`, or, when it holds several nodes, to a
 * directory of pictures and an index.html named after output. Returns 0,
 * or HRD_CTL_TOLD after printing why. */
static int draw(const char *output, const struct hrd_ptree *t,
                const struct hrd_filter *f, int diff)
{
    const char **nodes;
    size_t nn = 0;
    int rc = HRD_CTL_TOLD;

    nodes = hrd_ptree_nodes(t, &nn);
    if (nn == 0) {
        fprintf(stderr, "hostrangectl plot: nothing to plot (no range "
                "samples%s)\n", f->node || f->op || f->backend || f->range ||
                                        f->phase ? " match the filters" : "");
    } else if (nn == 1) {
        rc = write_svg(output, t, nodes[0], diff);
    } else {
        char dir[PATH_MAX], path[PATH_MAX + 32];
        size_t len = strlen(output);

        snprintf(dir, sizeof dir, "%s", output);
        if (len > 4 && len < sizeof dir && strcmp(output + len - 4, ".svg") == 0)
            dir[len - 4] = '\0';
        if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "hostrangectl plot: cannot make directory %s: "
                    "%s\n", dir, strerror(errno));
            goto out;
        }
        rc = 0;
        for (size_t i = 0; i < nn && rc == 0; i++) {
            snprintf(path, sizeof path, "%s/node-%03zu.svg", dir, i + 1);
            rc = write_svg(path, t, nodes[i], diff);
        }
        if (rc == 0)
            rc = write_index(dir, nodes, nn, diff);
        if (rc == 0)
            fprintf(stderr, "hostrangectl plot: %zu nodes: %s/index.html and "
                    "%s/node-001.svg ... node-%03zu.svg\n", nn, dir, dir, nn);
    }
out:
    free(nodes);
    return rc;
}

static int run_plot(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "output", required_argument, NULL, 'o' },
        { "from", required_argument, NULL, 'I' },
        { "diff", no_argument, NULL, 'D' },
        { "alpha", required_argument, NULL, 'a' },
        { "help", no_argument, NULL, 'h' },
        HRD_CTL_FILTER_LONGOPTS,
        { NULL, 0, NULL, 0 },
    };
    struct hrd_filter f = { NULL, NULL, NULL, NULL, 0 };
    const char *output = NULL, *from = NULL;
    double alpha = HRD_SIGNIF_ALPHA;
    struct hrd_ptree t;
    char *end;
    int c, diff = 0, rc;

    while ((c = getopt_long(argc, argv, ":a:n:o:h", longopts, NULL)) != -1) {
        if (hrd_ctl_report_option("plot", c, optarg, &f, NULL))
            continue;
        switch (c) {
        case 'o':
            output = optarg;
            continue;
        case 'I':
            from = optarg;
            continue;
        case 'D':
            diff = 1;
            continue;
        case 'a':
            alpha = strtod(optarg, &end);
            if (end == optarg || *end != '\0' || !(alpha >= 0 && alpha <= 1)) {
                fprintf(stderr, "hostrangectl plot: bad --alpha '%s' (a "
                        "number from 0 to 1)\n", optarg);
                return 2;
            }
            continue;
        case 'h':
            fputs(usage_plot, stdout);
            return 0;
        default:
            hrd_ctl_die_usage("plot", c, argv[optind - 1]);
        }
    }
    if (output == NULL) {
        fprintf(stderr, "hostrangectl plot: no output file (-o FILE.svg)\n");
        return 2;
    }
    if (diff && (from != NULL || argc - optind != 2)) {
        fprintf(stderr, "hostrangectl plot: --diff takes two run files, "
                "BASE and NEW (and no --from)\n");
        return 2;
    }
    if (!diff)
        hrd_ctl_no_arguments("plot", argc, argv);
    hrd_ptree_init(&t);
    if (diff)
        rc = diff_tree(argv[optind], argv[optind + 1], &f, alpha, &t);
    else
        rc = hrd_ctl_tree_load("plot", &f, from, &t);
    if (rc == 0)
        rc = draw(output, &t, &f, diff);
    hrd_ptree_free(&t);
    return rc == 0 ? 0 : 1;
}

const struct hrd_ctl_cmd hrd_ctl_cmd_plot = {
    "plot",
    "draw each node's calling contexts, cold and warm, as an SVG\n"
    "           picture (or their changes between two run files)",
    usage_plot,
    run_plot,
};
