/*
 * The history as a page in a directory (hostrangectl history plot): its
 * series streamed, chart by chart, into the chunk files DIR/data/NNNNNN.js
 * of lib/view's page (pagedir.h) and fed to one look (look.h), the look's
 * findings and the index of every chart written last as DIR/index.html.
 * What it holds at once is the chart being read, the look's candidates,
 * and the index: each distinct string once (the runs', nodes', kinds' and
 * machines'), a chart as two numbers.
 */
#ifndef HOSTRANGE_HISTORY_PAGE_H
#define HOSTRANGE_HISTORY_PAGE_H

#include <stddef.h>

#include "lib/agg/agg.h"
#include "lib/history/history.h"
#include "lib/stat/changepoint.h"

/* What to draw: the keys filter keeps on the machines matching machine
 * (NULL: every one), written in directory dir (which exists), the page
 * titled title, the look's rule cp. */
struct hrh_page_opts {
    const struct hra_filter *filter;
    const char *machine;
    const char *dir;
    const struct hrs_cp_opts *cp;
    const char *title;
};

/* What was drawn: the series and the look's findings; write_failed when
 * the error was a file's, not the history's. */
struct hrh_page_result {
    size_t nseries, nfindings;
    int write_failed;
};

/*
 * Reads history h into the chunks of o->dir and writes its index,
 * index.html: an earlier page's index removed first, its chunks that the
 * new index does not name removed last. Returns 0, -ENOMEM, or a negative
 * errno with a reason in err (the history's, or a file's: r->write_failed).
 */
int hrh_page_write(struct hrh_history *h,
                           const struct hrh_page_opts *o,
                           struct hrh_page_result *r, char *err,
                           size_t errlen);

#endif
