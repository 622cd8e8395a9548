/*
 * hostrangectl's calling-context tree (ctl_paths.h): the rows of a dump by path
 * gathered into a calling-context tree (flame.h), from the daemon or a run
 * file, and dump --format folded|tree|pprof written from it. plot
 * (ctl_plot.c) draws the same tree.
 */
#include "config.h"

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_conn.h"
#include "ctl/ctl_paths.h"
#include "ctl/ctl_report.h"
#include "lib/agg/agg_impl.h"
#include "lib/view/flame.h"
#include "lib/view/pprof.h"
#include "proto/protocol.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* --- gathering the tree -------------------------------------------------- */

struct gather {
    struct hrv_ptree *t;
    int flat; /* rows per range name: one-element paths */
};

static int gather_row(const struct hra_row *r, void *arg)
{
    struct gather *g = arg;

    if (g->flat)
        return hrv_ptree_row_flat(g->t, r);
    return hrv_ptree_row(g->t, r) != NULL ? 0 : -ENOMEM;
}


/* The tree of an aggregation's path keys; of its range keys as one-element
 * paths when it has none (a run file written before paths were kept).
 * Returns 0 or -ENOMEM. */
int hrc_tree_from_agg(struct hra_agg *agg, const struct hra_filter *flt,
                          struct hrv_ptree *t)
{
    struct hra_cursor cur = { { 0 }, 0, 0 };
    struct gather g = { t, agg->npkeys == 0 };

    return hra_rows_page_by(agg, flt, &cur, 0, !g.flat, gather_row, &g);
}

/* Adds the rows of one page to the tree t (ctx). Returns 0 or -ENOMEM. */
static int tree_page(const Hostrange__DumpReply *d, void *ctx)
{
    struct hrv_ptree *t = ctx;

    for (size_t i = 0; i < d->n_rows; i++) {
        struct hra_row row;

        if (hra_row_from_message(&row, d->rows[i]) != 0 || row.depth == 0)
            continue;
        if (hrv_ptree_row(t, &row) == NULL)
            return -ENOMEM;
    }
    return 0;
}

/* The tree of the daemon's rows by path. Returns 0 or HRC_TOLD. */
static int tree_from_daemon(const char *cmd, const struct hra_filter *flt,
                            struct hrv_ptree *t)
{
    Hostrange__ControlRequest q = HOSTRANGE__CONTROL_REQUEST__INIT;
    Hostrange__DumpRequest dq = HOSTRANGE__DUMP_REQUEST__INIT;
    int rc;

    hrc_dump_request(&q, &dq, flt);
    dq.by_path = 1;
    rc = hrc_dump_pages(cmd, &q, &dq, tree_page, t);
    if (rc < 0) {
        fprintf(stderr, "hostrangectl %s: out of memory\n", cmd);
        rc = HRC_TOLD;
    }
    return rc;
}

/* The tree of the daemon's rows by path, or of run file `from` when it is
 * not NULL. Returns 0, or HRC_TOLD after printing why. */
int hrc_tree_load(const char *cmd, const struct hra_filter *flt,
                      const char *from, struct hrv_ptree *t)
{
    struct hra_agg agg;
    int rc;

    if (from == NULL)
        return tree_from_daemon(cmd, flt, t);
    if (hrc_load_run(cmd, from, &agg) != 0) {
        hra_fini(&agg);
        return HRC_TOLD;
    }
    rc = hrc_tree_from_agg(&agg, flt, t);
    hra_fini(&agg);
    if (rc != 0) {
        fprintf(stderr, "hostrangectl %s: out of memory\n", cmd);
        return HRC_TOLD;
    }
    return 0;
}

int hrc_paths_view(FILE *f, const struct hra_filter *flt,
                       const struct hrc_report *r)
{
    struct hrv_ptree t;
    int rc;

    hrv_ptree_init(&t);
    if (hrc_tree_load("dump", flt, r->from, &t) != 0) {
        hrv_ptree_free(&t);
        return HRC_TOLD;
    }
    if (r->view == HRC_VIEW_TREE)
        rc = hrv_tree_write(f, &t, 100);
    else if (r->view == HRC_VIEW_PPROF)
        rc = hrv_pprof_write(f, &t, "hostrange " PACKAGE_VERSION);
    else
        rc = hrv_folded_write(f, &t, r->value);
    hrv_ptree_free(&t);
    return rc;
}
