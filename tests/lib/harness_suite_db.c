/* A made-up suite's history written through lib/history (see
 * harness_suite.h). */
#include "config.h"

#include "lib/history/history.h"
#include "tests/lib/harness_suite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every series' key strings and values, as the suite gives them. */
struct all {
    size_t runs, n, cap;
    char **key; /* 6 a series */
    double *x;  /* runs a series */
};

static int keep(void *ctx, const char *const *key, const double *x, size_t n)
{
    struct all *a = ctx;

    if (a->n == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 1024;
        char **k = realloc(a->key, 6 * cap * sizeof *k);
        double *v = realloc(a->x, a->runs * cap * sizeof *v);

        a->key = k != NULL ? k : a->key;
        a->x = v != NULL ? v : a->x;
        if (k == NULL || v == NULL)
            return -1;
        a->cap = cap;
    }
    for (int i = 0; i < 6; i++) {
        if ((a->key[6 * a->n + (size_t)i] = strdup(key[i])) == NULL)
            return -1;
    }
    memcpy(a->x + a->n * a->runs, x, n * sizeof *x);
    a->n++;
    return 0;
}

/* Adds run r of suite a to h, gap_ns after run r - 1: its points (p,
 * scratch of a->n). */
static int add_run(struct hrh_history *h, const struct all *a, size_t r,
                   int64_t gap_ns, struct hrh_point *p, char *err,
                   size_t errlen)
{
    char id[40], commit[32];
    struct hrh_run run;

    memset(&run, 0, sizeof run);
    snprintf(id, sizeof id, "s%031zx", r);
    snprintf(commit, sizeof commit, "c%zu", r);
    run.id = id;
    run.time_ns = (int64_t)1700000000 * 1000000000 + gap_ns * (int64_t)r;
    run.saved_ns = run.time_ns;
    run.commit = commit;
    run.machine = HARNESS_SUITE_MACHINE;
    run.host = "hostA";
    run.kernel = "Linux 6.1.0";
    run.file = "";
    run.parts = "";
    for (size_t i = 0; i < a->n; i++) {
        char *const *k = &a->key[6 * i];

        memset(&p[i], 0, sizeof p[i]);
        p[i].node = k[0];
        p[i].op = k[1];
        p[i].backend = k[2];
        p[i].phase = k[3];
        p[i].range = k[4];
        p[i].metric = k[5];
        p[i].count = strcmp(k[3], "cold") == 0 ? 1 : 1000;
        p[i].mean = p[i].median = p[i].p10 = p[i].p90 =
            a->x[i * a->runs + r];
    }
    return hrh_add(h, &run, p, a->n, err, errlen);
}

int harness_suite_write(const struct harness_suite *s, const char *dsn,
                        char *err, size_t errlen)
{
    struct all a = { s->runs, 0, 0, NULL, NULL };
    struct hrh_point *p = NULL;
    struct hrh_history *h = NULL;
    int rc = -1;

    if (harness_suite_each(s, keep, &a) != 0 ||
        (p = calloc(a.n + 1, sizeof *p)) == NULL) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if ((rc = hrh_open(dsn, HRH_WRITE, &h, err, errlen)) != 0)
        goto out;
    for (size_t r = 0; r < s->runs && rc >= 0; r++)
        rc = add_run(h, &a, r, s->gap_ns ? s->gap_ns : (int64_t)60000000000,
                     p, err, errlen);
    rc = rc < 0 ? rc : 0;
out:
    hrh_close(h);
    for (size_t i = 0; i < 6 * a.n; i++)
        free(a.key[i]);
    free(a.key);
    free(a.x);
    free(p);
    return rc;
}
