/*
 * The rule over all the series of one look at a history: Benjamini and
 * Hochberg's false discovery rate (1995). Each series tested gives one
 * p-value (its strongest change's; 1 when it has none); sorted, p(1) <=
 * ... <= p(N), the series of the k smallest are changed for the largest k
 * with p(k) <= k q / N. Of the series reported changed, the expected share
 * that did not change is then at most q (for independent series, or
 * series positively dependent, as the layers of one node are); when no
 * series changed, the chance of reporting any is at most q. Pure logic.
 */
#ifndef HOSTRANGE_FDR_H
#define HOSTRANGE_FDR_H

#include <stddef.h>

/*
 * The level of Benjamini and Hochberg's rule at rate q over ntests
 * p-values, given the np of them that may pass (p[0..np), those of at
 * most q, sorted in place; the others count in ntests only): the largest
 * p(k) with p(k) <= k q / ntests, or -1 when none passes (a level no
 * p-value is at or below). A series passes when its p is at most the
 * level.
 */
double hrs_fdr_level(double *p, size_t np, size_t ntests, double q);

#endif
