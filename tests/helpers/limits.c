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
 *   hang [NODE] 100 x ok.range (under NODE, default probe/hang),
 *               flushed, then waits to be killed
 *   chain       every name at its limit, for tests/service/
 *               test_limits_chain.sh: 10 x ok.range under each of node
 *               ids, operators and backends of exactly HR_MAX_NAME bytes,
 *               an empty operator and backend, names of bytes that are
 *               not UTF-8 and of control characters (cold and warm);
 *               range names of HR_MAX_NAME bytes nested as deep as a
 *               thread's stack goes (node probe/deep); 2,000 range names
 *               (node probe/many); then one byte over: a node id and an
 *               operator of HR_MAX_NAME + 1 bytes (labels= and window=
 *               are the first one's), a range name of HR_MAX_NAME + 1
 *               bytes (record=)
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

/* The sites of the roots, names and chain modes (limits_many: the chain's
 * 2,000 ranges): the library keeps pointers to them until the process
 * exits, so they stay reachable from here (not static: a store to a
 * static nobody reads may be left out). */
hr_site *limits_sites, *limits_many;

static char *filled(size_t n, char c)
{
    char *s = malloc(n + 1);

    if (s == NULL)
        exit(2);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

/* 10 x ok.range in a window of these labels; exits on a refusal. */
static void labelled(const char *node, const char *op, const char *backend,
                     int phase)
{
    if (hr_labels_set(node, op, backend, phase) != 0 ||
        hr_window_begin() != 0)
        exit(3);
    ok_ranges(10, NULL);
    hr_window_end();
}

/* The depth of a thread's stack (the client's HR__MAX_DEPTH). */
#define CHAIN_DEPTH 128

/* Scopes nested CHAIN_DEPTH deep from level i, 5 at the bottom. */
static void nested(hr_site *sites, int i)
{
    hr_scope s;

    if (i + 1 == CHAIN_DEPTH) {
        for (int k = 0; k < 5; k++)
            hr_end(hr_begin(&sites[i]));
        return;
    }
    s = hr_begin(&sites[i]);
    nested(sites, i + 1);
    hr_end(s);
}

/* Names that are not UTF-8, and control characters. */
static const char *const odd[] = {
    "bytes \xff\xfe \xc3( \xed\xa0\x80 end",
    "ctl \x01\x1b[31m\t\n\r\x7f end",
};

/* The labels at their limits of the chain mode, 10 x ok.range each. */
static void chain_labels(void)
{
    char *max = filled(HR_MAX_NAME, 'n');

    labelled(max, "op", "cpu", HR_PHASE_WARM);
    labelled("probe/max-op", max, max, HR_PHASE_WARM);
    labelled("probe/empty-op", "", "", HR_PHASE_WARM);
    labelled("probe/empty-op", "", "", HR_PHASE_COLD);
    labelled("probe/empty-backend", "op", "", HR_PHASE_WARM);
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        labelled(odd[i], odd[i], odd[i], HR_PHASE_WARM);
        labelled(odd[i], odd[i], odd[i], HR_PHASE_COLD);
    }
    free(max);
}

/* The chain mode (see the top); with labels_last, the labels at their
 * limits come after the deep and the many ranges. */
static void chain(int labels_last, int *rc_labels, int *rc_window,
                  int *rc_record)
{
    static hr_site over;
    char *big = filled(HR_MAX_NAME + 1, 'o');
    hr_site *sites;

    if (!labels_last)
        chain_labels();

    /* Range names of HR_MAX_NAME bytes, each level its own, and odd ones
     * at the bottom. */
    sites = limits_sites = calloc(CHAIN_DEPTH, sizeof *sites);
    if (sites == NULL)
        exit(2);
    for (int i = 0; i < CHAIN_DEPTH; i++) {
        char *name = filled(HR_MAX_NAME, 'r');

        if (i + 2 >= CHAIN_DEPTH) {
            memcpy(name, odd[i + 2 - CHAIN_DEPTH],
                   strlen(odd[i + 2 - CHAIN_DEPTH]));
        } else {
            snprintf(name, 16, "level-%03d", i);
            name[strlen(name)] = 'r'; /* snprintf's NUL */
        }
        sites[i].name = name;
    }
    hr_labels_set("probe/deep", "op", "cpu", HR_PHASE_WARM);
    hr_window_begin();
    nested(sites, 0);
    hr_window_end();

    sites = limits_many = calloc(2000, sizeof *sites);
    if (sites == NULL)
        exit(2);
    hr_labels_set("probe/many", "op", "cpu", HR_PHASE_WARM);
    hr_window_begin();
    for (int i = 0; i < 2000; i++) {
        char name[32];

        snprintf(name, sizeof name, "many.%04d", i);
        sites[i].name = strdup(name);
        hr_end(hr_begin(&sites[i]));
    }
    hr_window_end();
    if (labels_last)
        chain_labels();

    /* One byte over: refused where it enters, counted. */
    *rc_labels = hr_labels_set(big, "op", "cpu", HR_PHASE_WARM);
    *rc_window = hr_window_begin();
    if (hr_labels_set("probe/over-op", big, "cpu", HR_PHASE_WARM) !=
            -ENAMETOOLONG ||
        hr_labels_set("probe/over-backend", "op", big, HR_PHASE_WARM) !=
            -ENAMETOOLONG || hr_window_begin() != -ENAMETOOLONG)
        exit(4);
    over.name = big;
    hr_labels_set("probe/over-range", "op", "cpu", HR_PHASE_WARM);
    hr_window_begin();
    ok_ranges(10, &over);
    *rc_record = hr_record(&over, 1000);
    hr_window_end();
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
    } else if (strcmp(mode, "chain") == 0) {
        chain(argc > 2 && strcmp(argv[2], "labels-last") == 0, &rc_labels,
              &rc_window, &rc_record);
    } else if (strcmp(mode, "hang") == 0) {
        hr_labels_set(argc > 2 ? argv[2] : "probe/hang", "op", "cpu",
                      HR_PHASE_WARM);
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
