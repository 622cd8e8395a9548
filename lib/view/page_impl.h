/*
 * What the history page's writer (pagedir.c) takes from page.c: the
 * style and script (page_script.c), the head and tail of the page, and a
 * line of a chart as the script reads it: {"machine", "u" (the line's
 * unit, ns), "r0" (the run of its first point, when its runs are
 * consecutive) or "r" (each point's run), "m" (medians in units; null:
 * none), "lo" and "hi" (p10 and p90 as distances from the median, or one
 * distance for all), "n" (counts, or one count for all)}.
 */
#ifndef HOSTRANGE_PAGE_IMPL_H
#define HOSTRANGE_PAGE_IMPL_H

#include "lib/view/page.h"

#include <stddef.h>
#include <stdio.h>

extern const char hrv_page_style[];
extern const char hrv_page_script[];

/* Writes the page's head (its title escaped) up to the open body. */
void hrv_page_head(FILE *f, const char *title);

/* Writes the tooltip's element, the script and the page's end. */
void hrv_page_tail(FILE *f);

/* Writes runs[0..n) as the data's "runs": {"c" (commits), "t" (times),
 * "h" (hosts), "k" (kernels)}; and v[0..n) as a JSON array of strings
 * (NULL: ""). */
void hrv_page_runs(FILE *f, const struct hrv_page_run *runs, size_t n);
void hrv_page_strings(FILE *f, const char *const *v, size_t n);

/* Writes a line: machine m, points pts[0..n) at runs run[0..n) (in run
 * order). */
void hrv_page_line(FILE *f, size_t m, const size_t *run,
                   const struct hrv_page_point *pts, size_t n);

#endif
