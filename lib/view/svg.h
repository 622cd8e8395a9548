/*
 * SVG (hostrangectl plot): one picture per node id, its cold and warm
 * groups side by side, each an icicle of its calling context (the top
 * ranges in the first row, each box's children below it) and, beside it,
 * a bar per range name of its self median per call of the top. A box's
 * width is its inclusive median times its calls per call of its parent (so
 * a child called twice per parent call is as wide as both calls), children
 * scaled down together where they would overflow their parent (medians do
 * not add up). Every box has a <title> tooltip with the full path and its
 * figures. Cold is drawn in blues on a blue-grey panel, warm in oranges on
 * a sand panel. With a comparison (plot --diff), boxes are coloured by the
 * change of their inclusive population instead: red slower, blue faster
 * (deeper for a larger relative shift), grey not significant (or not in
 * the base run). The picture needs no script and no external resource;
 * every name is written by hrv_xml_escape (escape.h).
 */
#ifndef HOSTRANGE_SVG_H
#define HOSTRANGE_SVG_H

#include <stdio.h>

#include "lib/view/escape.h"
#include "lib/view/flame.h"

/* Writes the SVG picture of node id `node` (its groups in t); `diff` set
 * when the nodes carry a comparison, `subtitle` a line under the title (or
 * NULL). Returns 0 or -EIO. */
int hrv_svg_write(FILE *f, const struct hrv_ptree *t, const char *node,
                  int diff, const char *subtitle);

/* Writes the HTML page of the pictures of nodes[0..n) (node-001.svg,
 * ... beside it: hostrangectl plot of several nodes), a title, a list of
 * the nodes and each picture; `diff` set when they carry a comparison.
 * Returns 0 or -EIO. */
int hrv_svg_index_write(FILE *f, const char *const *nodes, size_t n,
                        int diff);

#endif
