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
    struct hrd_ptree *t;
    int flat; /* rows per range name: one-element paths */
};

static int gather_row(const struct hrd_row *r, void *arg)
{
    struct gather *g = arg;

    if (g->flat)
        return hrd_ptree_row_flat(g->t, r);
    return hrd_ptree_row(g->t, r) != NULL ? 0 : -ENOMEM;
}


/* The tree of an aggregation's path keys; of its range keys as one-element
 * paths when it has none (a run file written before paths were kept).
 * Returns 0 or -ENOMEM. */
int hrd_ctl_tree_from_agg(struct hrd_agg *agg, const struct hrd_filter *flt,
                          struct hrd_ptree *t)
{
    struct hrd_cursor cur = { { 0 }, 0, 0 };
    struct gather g = { t, agg->npkeys == 0 };

    return hrd_agg_rows_page_by(agg, flt, &cur, 0, !g.flat, gather_row, &g);
}

/* Adds the rows of one page to the tree t (ctx). Returns 0 or -ENOMEM. */
static int tree_page(const Hostrange__DumpReply *d, void *ctx)
{
    struct hrd_ptree *t = ctx;

    for (size_t i = 0; i < d->n_rows; i++) {
        struct hrd_row row;

        if (hrd_row_from_message(&row, d->rows[i]) != 0 || row.depth == 0)
            continue;
        if (hrd_ptree_row(t, &row) == NULL)
            return -ENOMEM;
    }
    return 0;
}

/* The tree of the daemon's rows by path. Returns 0 or HRD_CTL_TOLD. */
static int tree_from_daemon(const char *cmd, const struct hrd_filter *flt,
                            struct hrd_ptree *t)
{
    Hostrange__ControlRequest q = HOSTRANGE__CONTROL_REQUEST__INIT;
    Hostrange__DumpRequest dq = HOSTRANGE__DUMP_REQUEST__INIT;
    int rc;

    hrd_ctl_dump_request(&q, &dq, flt);
    dq.by_path = 1;
    rc = hrd_ctl_dump_pages(cmd, &q, &dq, tree_page, t);
    if (rc < 0) {
        fprintf(stderr, "hostrangectl %s: out of memory\n", cmd);
        rc = HRD_CTL_TOLD;
    }
    return rc;
}

/* The tree of the daemon's rows by path, or of run file `from` when it is
 * not NULL. Returns 0, or HRD_CTL_TOLD after printing why. */
int hrd_ctl_tree_load(const char *cmd, const struct hrd_filter *flt,
                      const char *from, struct hrd_ptree *t)
{
    struct hrd_agg agg;
    int rc;

    if (from == NULL)
        return tree_from_daemon(cmd, flt, t);
    if (hrd_ctl_load_run(cmd, from, &agg) != 0) {
        hrd_agg_fini(&agg);
        return HRD_CTL_TOLD;
    }
    rc = hrd_ctl_tree_from_agg(&agg, flt, t);
    hrd_agg_fini(&agg);
    if (rc != 0) {
        fprintf(stderr, "hostrangectl %s: out of memory\n", cmd);
        return HRD_CTL_TOLD;
    }
    return 0;
}

int hrd_ctl_paths_view(FILE *f, const struct hrd_filter *flt,
                       const struct hrd_ctl_report *r)
{
    struct hrd_ptree t;
    int rc;

    hrd_ptree_init(&t);
    if (hrd_ctl_tree_load("dump", flt, r->from, &t) != 0) {
        hrd_ptree_free(&t);
        return HRD_CTL_TOLD;
    }
    if (r->view == HRD_CTL_VIEW_TREE)
        rc = hrd_tree_write(f, &t, 100);
    else if (r->view == HRD_CTL_VIEW_PPROF)
        rc = hrd_pprof_write(f, &t, "hostrange " PACKAGE_VERSION);
    else
        rc = hrd_folded_write(f, &t, r->value);
    hrd_ptree_free(&t);
    return rc;
}
