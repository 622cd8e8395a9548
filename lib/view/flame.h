/*
 * Calling-context views of a report: folded stacks (flame graphs) and the
 * terminal tree (the SVG pictures are svg.h's), built from the rows of a
 * dump by path (rows.h: one inclusive and one self row per (labels,
 * path)). Pure logic: it writes to a FILE * it is given and does no other
 * I/O.
 *
 * The tree. Rows are grouped by (node id, operator, backend, phase), each
 * group a calling-context tree whose nodes are paths, children in the
 * order their rows came (report order: ranges as first entered). A path
 * whose parent has no row of its own (filtered out, or kept per range name
 * only) gets an empty node, so the shape stays right.
 *
 * Folded stacks: one line per path with a value, `NODE;PHASE;a;b;c VALUE`,
 * VALUE a whole number: the total self time in ns (the exact sum of the
 * path's self times, the default), the self median rounded to ns, or the
 * number of calls. This is what flamegraph.pl, inferno and speedscope read:
 * the last space of a line separates the value, `;` separates frames. So
 * that no name can break that, each frame is escaped: `%` as %25, `;` as
 * %3B, a space as %20, and every other byte below 0x20 or 0x7f as %XX.
 *
 * The tree for the terminal (dump --format tree): per group a heading,
 * then one line per path, indented by depth (2 columns a level, at most 24),
 * with count, inclusive and self medians, and the share of its parent's
 * inclusive median that the path's inclusive median is. Lines fit 100
 * columns: a name longer than its room is shortened in the middle with
 * "..". Control characters in names show as '?'.
 *
 * The SVG pictures of the same tree are svg.h's.
 */
#ifndef HOSTRANGE_FLAME_H
#define HOSTRANGE_FLAME_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/agg/rows.h"
#include "lib/stat/signif.h"

struct hrv_pnode {
    char *name;                 /* the innermost range */
    struct hrv_pnode *parent;
    struct hrv_pnode *child, *last_child, *next;
    uint32_t depth;             /* 0: the group's root (no range) */
    int has;                    /* a row was given for it */
    int has_self;
    uint64_t count;             /* calls */
    double incl_median, self_median;
    uint64_t incl_sum, self_sum;
    int exact;
    /* A comparison (plot --diff): 1 slower, -1 faster, 0 not significant;
     * diff_known 0 when the base run has no such path. */
    int diff_known;
    int diff;
    double diff_p, diff_shift, diff_rel, diff_base_median;
};

struct hrv_pgroup {
    char *node, *op, *backend;
    unsigned phase;             /* HRP_PHASE_* */
    struct hrv_pnode root;
    struct hrv_pgroup *next;
};

struct hrv_ptree {
    struct hrv_pgroup *first, *last;
    size_t ngroups;
};

enum hrv_fvalue {
    HRV_FVALUE_TOTAL,           /* total self ns */
    HRV_FVALUE_MEDIAN,          /* self median, rounded */
    HRV_FVALUE_COUNT,           /* calls */
};

/* Sets node n's comparison (plot --diff) from the test s of its inclusive
 * population against the base run's, whose median is bm: significant
 * when p < alpha and it shifted. */
void hrv_pnode_compare(struct hrv_pnode *n, const struct hrs_signif *s,
                       double bm, double alpha);

void hrv_ptree_init(struct hrv_ptree *t);
void hrv_ptree_free(struct hrv_ptree *t);

/* Adds a row of a dump by path (row->depth > 0; an inclusive row fills
 * count, inclusive median and sum, a self row the self figures). Returns
 * the path's node, or NULL on ENOMEM. */
struct hrv_pnode *hrv_ptree_row(struct hrv_ptree *t, const struct hra_row *r);

/* Adds a row per range name as a one-element path (run files written
 * before paths were kept; the sum is mean x count). Rows of recorded
 * values only are skipped. Returns 0 or -ENOMEM. */
int hrv_ptree_row_flat(struct hrv_ptree *t, const struct hra_row *r);

/* The node of `path` (depth names) in the group of (node, op, backend,
 * phase), or NULL. */
struct hrv_pnode *hrv_ptree_find(const struct hrv_ptree *t, const char *node,
                                 const char *op, const char *backend,
                                 unsigned phase, const char *const *path,
                                 uint32_t depth);

/* Parses "total", "median" or "count". Returns 0 or -1. */
int hrv_fvalue_parse(const char *s, enum hrv_fvalue *v);

/* Writes name escaped for folded stacks (see above) to out (len bytes,
 * NUL-terminated, truncated when too small). Returns the length the whole
 * escaped name needs. */
size_t hrv_folded_escape(char *out, size_t len, const char *name);

/* Joins path names with ';' escaping '%' as %25 and ';' as %3B in each
 * (the `path` field of a JSON row). Returns a new string or NULL. */
char *hrv_path_join(const char *const *names, uint32_t depth);

/* Writes the folded stacks of t. Returns 0 or -EIO. */
int hrv_folded_write(FILE *f, const struct hrv_ptree *t, enum hrv_fvalue v);

/* Shortens name to at most width columns (bytes; UTF-8 sequences are kept
 * whole), cutting the middle out and putting ".." there; control bytes
 * become '?'. out holds at least width + 1 bytes. */
void hrv_shorten_middle(char *out, size_t width, const char *name);

/* Writes the tree of t, `width` columns wide at most (100 for the
 * terminal). Returns 0 or -EIO. */
int hrv_tree_write(FILE *f, const struct hrv_ptree *t, int width);

/* The node ids of t in first-seen order: a new array of n pointers to t's
 * strings (caller frees the array), or NULL when none or ENOMEM. */
const char **hrv_ptree_nodes(const struct hrv_ptree *t, size_t *n);

/* Writes v ns with a unit that keeps it short: "512 ns", "3.20 us",
 * "1.50 ms", "2.00 s". */
void hrv_fmt_ns(char *buf, size_t len, double v);

#endif
