/*
 * An instrumented program that is correct apart from one unusual name, for
 * tests/service/test_at_limits: each mode is a row of what happens at the
 * limits. Every mode collects under node `probe/ok` (operator `op`,
 * backend `cpu`, warm) unless it says otherwise, flushes, and prints
 *
 *   rc labels=L window=W record=R flush=F
 *   counters samples=S delivered=D lost=L bad_name=N bad_label=B
 *            contexts_full=C
 *
 * (one line; L, W, R: what the calls of the unusual name returned).
 *
 * Modes:
 *   site-long   100 x ok.range, each around a scope whose range name is
 *               5,000 bytes, then a record of that name
 *   site-empty  the same with an empty range name
 *   label-long  a window labelled with a 5,000-byte node id (10 x
 *               ok.range), then a window labelled probe/short (100 x
 *               ok.range)
 *   label-empty the same with an empty node id
 *   op-long     the same with a 5,000-byte operator
 *   roots N     N distinct range names at the top of the stack (one
 *               scope each), then 100 x ok.range
 *   names N NODE
 *               N distinct range names, one scope each, under node NODE
 *   hang        100 x ok.range, flushed, then waits to be killed
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hostrange.h"

static hr_site s_ok = HR_SITE_INIT("ok.range");

static void ok_ranges(int n, hr_site *inner)
{
    for (int i = 0; i < n; i++) {
        hr_scope a = hr_begin(&s_ok);
        if (inner != NULL) {
            hr_scope b = hr_begin(inner);
            hr_end(b);
        }
        hr_end(a);
    }
}

/* The sites of the roots and names modes: the library keeps pointers to
 * them until the process exits, so they stay reachable from here (not
 * static: a store to a static nobody reads may be left out). */
hr_site *limits_sites;

static char *filled(size_t n, char c)
{
    char *s = malloc(n + 1);

    if (s == NULL)
        exit(2);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int rc_labels = 0, rc_window = 0, rc_record = 0, rc_flush;
    hr_counters k;

    if (strcmp(mode, "site-long") == 0 || strcmp(mode, "site-empty") == 0) {
        static hr_site bad;

        bad.name = mode[5] == 'l' ? filled(5000, 's') : "";
        hr_labels_set("probe/ok", "op", "cpu", HR_PHASE_WARM);
        hr_window_begin();
        ok_ranges(100, &bad);
        rc_record = hr_record(&bad, 1000);
        hr_window_end();
    } else if (strcmp(mode, "label-long") == 0 ||
               strcmp(mode, "label-empty") == 0 ||
               strcmp(mode, "op-long") == 0) {
        char *big = filled(5000, 'n');

        if (strcmp(mode, "label-long") == 0)
            rc_labels = hr_labels_set(big, "op", "cpu", HR_PHASE_WARM);
        else if (strcmp(mode, "label-empty") == 0)
            rc_labels = hr_labels_set("", "op", "cpu", HR_PHASE_WARM);
        else
            rc_labels = hr_labels_set("probe/big-op", big, "cpu",
                                      HR_PHASE_WARM);
        rc_window = hr_window_begin();
        ok_ranges(10, NULL);
        hr_window_end();
        if (hr_labels_set("probe/short", "op", "cpu", HR_PHASE_WARM) != 0 ||
            hr_window_begin() != 0)
            return 3;
        ok_ranges(100, NULL);
        hr_window_end();
        free(big); /* hr_labels_set copies what it keeps */
    } else if (strcmp(mode, "roots") == 0 && argc > 2) {
        long n = atol(argv[2]);
        hr_site *sites = limits_sites = calloc((size_t)n, sizeof *sites);

        if (sites == NULL)
            return 2;
        hr_labels_set("probe/ok", "op", "cpu", HR_PHASE_WARM);
        hr_window_begin();
        for (long i = 0; i < n; i++) {
            char name[32];

            snprintf(name, sizeof name, "step %ld", i);
            sites[i].name = strdup(name);
            hr_end(hr_begin(&sites[i]));
        }
        ok_ranges(100, NULL);
        hr_window_end();
    } else if (strcmp(mode, "names") == 0 && argc > 3) {
        long n = atol(argv[2]);
        hr_site *sites = limits_sites = calloc((size_t)n, sizeof *sites);

        if (sites == NULL)
            return 2;
        hr_labels_set(argv[3], "op", "cpu", HR_PHASE_WARM);
        hr_window_begin();
        for (long i = 0; i < n; i++) {
            char name[64];

            snprintf(name, sizeof name, "%s.name.%ld", argv[3], i);
            sites[i].name = strdup(name);
            hr_end(hr_begin(&sites[i]));
        }
        hr_window_end();
    } else if (strcmp(mode, "hang") == 0) {
        hr_labels_set("probe/hang", "op", "cpu", HR_PHASE_WARM);
        hr_window_begin();
        ok_ranges(100, NULL);
        hr_window_end();
        hr_flush(30000);
        printf("flushed\n");
        fflush(stdout);
        pause();
        return 0;
    } else {
        fprintf(stderr, "limits: unknown mode '%s'\n", mode);
        return 2;
    }
    rc_flush = hr_flush(30000);
    hr_counters_get(&k);
    printf("rc labels=%d window=%d record=%d flush=%d\n", rc_labels,
           rc_window, rc_record, rc_flush);
    printf("counters samples=%llu delivered=%llu lost=%llu bad_name=%llu "
           "bad_label=%llu contexts_full=%llu\n",
           (unsigned long long)k.samples, (unsigned long long)k.delivered,
           (unsigned long long)k.lost, (unsigned long long)k.bad_name,
           (unsigned long long)k.bad_label,
           (unsigned long long)k.contexts_full);
    return 0;
}
