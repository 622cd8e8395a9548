/*
 * hostrangectl plot (ctl_cmd.h): SVG pictures of the calling-context tree
 * (ctl_paths.c), one per node, with an index.html when there are several
 * (lib/view/svg.h); plot --diff colours each box by the significance of
 * its change (signif.h, hrv_pnode_compare of lib/view/flame.h).
 */
#include "config.h"

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_options.h"
#include "ctl/ctl_paths.h"
#include "ctl/ctl_report.h"
#include "ctl/ctl_exit.h"
#include "lib/agg/agg_impl.h"
#include "lib/util/atomic.h"
#include "lib/view/flame.h"
#include "lib/view/svg.h"
#include "lib/run/run.h"
#include "lib/run/rundiff.h"
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

/* The tree coloured by plot --diff, and its significance level. */
struct coloured {
    struct hrv_ptree *t;
    double alpha;
};

/* hrr_rundiff_paths's question: the node of the tree for a path, or NULL
 * when the tree does not hold it. */
static void *path_want(void *ctx, const char *node, const char *op,
                       const char *backend, uint32_t phase,
                       const char *const *names, uint32_t depth)
{
    const struct coloured *c = ctx;

    return hrv_ptree_find(c->t, node, op, backend, phase, names, depth);
}

/* hrr_rundiff_paths's answer for node `at`: its change from the base,
 * significant when p < alpha. */
static void path_put(void *ctx, void *at, const struct hrs_signif *s,
                     double bm)
{
    const struct coloured *c = ctx;

    hrv_pnode_compare(at, s, bm, c->alpha);
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
    HRC_STR(HRS_SIGNIF_ALPHA) ",\n"
    "                       as diff's)\n"
    HRC_FILTER_HELP
    "  -h, --help           show this help and exit\n"
    "\n"
    "On a terminal, reading run files shows progress on stderr.\n";

/* Writes the picture of `node` to path atomically. Returns 0, or
 * HRC_TOLD after printing why. */
static int write_svg(const char *path, const struct hrv_ptree *t,
                     const char *node, int diff)
{
    struct hru_atomic file;
    int rc = hru_atomic_open(&file, path, 1);

    if (rc == 0) {
        rc = hrv_svg_write(file.f, t, node, diff, NULL);
        if (rc == 0)
            rc = hru_atomic_commit(&file);
        else
            hru_atomic_abort(&file);
    }
    if (rc != 0) {
        fprintf(stderr, "hostrangectl plot: cannot write %s: %s\n", path,
                strerror(rc < 0 ? -rc : EIO));
        return HRC_TOLD;
    }
    return 0;
}

/* Writes dir/index.html, the page of the n nodes' pictures. Returns 0,
 * or HRC_TOLD after printing why. */
static int write_index(const char *dir, const char *const *nodes, size_t n,
                       int diff)
{
    char path[PATH_MAX + 32];
    FILE *f;
    int rc;

    snprintf(path, sizeof path, "%s/index.html", dir);
    f = fopen(path, "w");
    if (f == NULL)
        goto fail;
    rc = hrv_svg_index_write(f, nodes, n, diff);
    if (fclose(f) == 0 && rc == 0)
        return 0;
    if (rc != 0)
        errno = EIO;
fail:
    fprintf(stderr, "hostrangectl plot: cannot write %s: %s\n", path,
            strerror(errno));
    return HRC_TOLD;
}

/* The tree of run NEW (npath), each path coloured by its change from run
 * BASE (bpath). Returns 0, or HRC_TOLD after printing why. */
static int diff_tree(const char *bpath, const char *npath,
                     const struct hra_filter *f, double alpha,
                     struct hrv_ptree *t)
{
    struct hra_agg base, new;
    int rc;

    hra_init(&base);
    hra_init(&new);
    rc = hrc_load_run("plot", bpath, &base);
    if (rc == 0)
        rc = hrc_load_run("plot", npath, &new);
    if (rc == 0)
        rc = hrc_tree_from_agg(&new, f, t);
    if (rc == 0 && new.npkeys == 0)
        fprintf(stderr, "hostrangectl plot: %s holds no calling "
                "contexts: its ranges are drawn flat, uncompared\n", npath);
    else if (rc == 0)
        rc = hrr_rundiff_paths(&base, &new, path_want, path_put,
                               &(struct coloured){ t, alpha });
    hra_fini(&base);
    hra_fini(&new);
    if (rc < 0) {
        fprintf(stderr, "hostrangectl plot: out of memory\n");
        rc = HRC_TOLD;
    }
    return rc;
}

/* Draws tree t to `output`, or, when it holds several nodes, to a
 * directory of pictures and an index.html named after output. Returns 0,
 * or HRC_TOLD after printing why. */
static int draw(const char *output, const struct hrv_ptree *t,
                const struct hra_filter *f, int diff)
{
    const char **nodes;
    size_t nn = 0;
    int rc = HRC_TOLD;

    nodes = hrv_ptree_nodes(t, &nn);
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
        HRC_FILTER_LONGOPTS,
        { NULL, 0, NULL, 0 },
    };
    struct hra_filter f = { NULL, NULL, NULL, NULL, 0 };
    const char *output = NULL, *from = NULL;
    double alpha = HRS_SIGNIF_ALPHA;
    struct hrv_ptree t;
    char *end;
    int c, diff = 0, rc;

    while ((c = getopt_long(argc, argv, ":a:n:o:h", longopts, NULL)) != -1) {
        if (hrc_report_option("plot", c, optarg, &f, NULL))
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
                return HRC_EXIT_USAGE;
            }
            continue;
        case 'h':
            fputs(usage_plot, stdout);
            return 0;
        default:
            hrc_die_usage("plot", c, argv[optind - 1]);
        }
    }
    if (output == NULL) {
        fprintf(stderr, "hostrangectl plot: no output file (-o FILE.svg)\n");
        return HRC_EXIT_USAGE;
    }
    if (diff && (from != NULL || argc - optind != 2)) {
        fprintf(stderr, "hostrangectl plot: --diff takes two run files, "
                "BASE and NEW (and no --from)\n");
        return HRC_EXIT_USAGE;
    }
    if (!diff)
        hrc_no_arguments("plot", argc, argv);
    hrv_ptree_init(&t);
    if (diff)
        rc = diff_tree(argv[optind], argv[optind + 1], &f, alpha, &t);
    else
        rc = hrc_tree_load("plot", &f, from, &t);
    if (rc == 0)
        rc = draw(output, &t, &f, diff);
    hrv_ptree_free(&t);
    return rc == 0 ? 0 : 1;
}

const struct hrc_cmd hrc_cmd_plot = {
    "plot",
    "draw each node's calling contexts, cold and warm, as an SVG\n"
    "           picture (or their changes between two run files)",
    usage_plot,
    run_plot,
};
