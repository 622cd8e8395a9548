/* The readers of Google Benchmark's and pytest-benchmark's JSON results
 * (import.h), on the strict JSON reader of lib/util/json.h. */
#include "config.h"

#include "lib/history/import.h"
#include "lib/history/import_priv.h"
#include "lib/util/grow.h"
#include "lib/util/strset.h"
#include "lib/util/json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads the document, naming the file in a reason. */
static int parse(const char *file, const char *text, size_t len,
                 struct hru_json **root, char *err, size_t errlen)
{
    char why[512];
    int rc = hru_json_parse(text, len, root, why, sizeof why);

    if (rc != 0) {
        snprintf(err, errlen, "%s: not JSON: %s", file, why);
        return rc;
    }
    if ((*root)->type != HRU_JSON_OBJECT) {
        snprintf(err, errlen, "%s: not an object", file);
        hru_json_free(*root);
        return -EINVAL;
    }
    return 0;
}

/* The bytes of an id: the format's name, a NUL, then the file's. Returns
 * a buffer (caller frees) of *n bytes, or NULL. */
static char *idbytes(const char *format, const char *text, size_t len,
                     size_t *n)
{
    size_t f = strlen(format) + 1;
    char *b = malloc(f + len + 1);

    if (b != NULL) {
        memcpy(b, format, f);
        memcpy(b + f, text, len);
        *n = f + len;
    }
    return b;
}

/* Finishes run r with its id made from the file's bytes. */
static int finish(struct hrh_import *im, struct hrh_import_run *r,
                  const char *format, const char *file, const char *text,
                  size_t len, const struct hrh_import_opts *o,
                  const struct hrh__import_said *said, char *err,
                  size_t errlen)
{
    size_t n;
    char *b = idbytes(format, text, len, &n);
    int rc;

    if (b == NULL)
        return -ENOMEM;
    rc = hrh__import_run_finish(im, r, file, b, n, o, said, err, errlen);
    free(b);
    return rc;
}

/* --- Google Benchmark -------------------------------------------------- */

/* One benchmark of the file: its repetitions' times, or its median
 * aggregate. */
struct gkey {
    const char *name;
    double *real, *cpu;
    size_t n, cap;
    double med_real, med_cpu;
    uint64_t reps;
    int has_med;
};

/* The ns in one of Google Benchmark's time units, or 0. */
static double gbench_unit(const char *u)
{
    if (u == NULL || strcmp(u, "ns") == 0)
        return 1;
    if (strcmp(u, "us") == 0)
        return 1e3;
    if (strcmp(u, "ms") == 0)
        return 1e6;
    if (strcmp(u, "s") == 0)
        return 1e9;
    return 0;
}

/* The benchmarks of a file, in the order of their first results: key i
 * is k[i], its name names.v[i]. */
struct gkeys {
    struct hru_strset names;
    struct gkey *k;
    size_t cap;
};

/* The key of name `name`, added when missing, or NULL. */
static struct gkey *gkey_of(struct gkeys *ks, const char *name)
{
    size_t i, n = ks->names.n;
    struct gkey *g;

    if (hru_grow(&ks->k, &ks->cap, n + 1, sizeof *ks->k, 16) != 0 ||
        hru_strset_add(&ks->names, name, &i) != 0)
        return NULL;
    g = &ks->k[i];
    if (i == n) {
        memset(g, 0, sizeof *g);
        g->name = ks->names.v[i];
    }
    return g;
}

/* The string member `name` of object o, with its length, or NULL. */
static const char *str_of(const struct hru_json *o, const char *name,
                          size_t *len)
{
    const struct hru_json *m = hru_json_get(o, name);

    if (m == NULL || m->type != HRU_JSON_STRING)
        return NULL;
    *len = m->len;
    return m->str;
}

static int gkey_put(struct gkey *g, double real, double cpu)
{
    if (g->n == g->cap) {
        size_t cap = hru_grow_room(g->cap, g->n + 1, sizeof *g->real, 8);

        if (cap == 0 || hru_resize(&g->real, cap, sizeof *g->real) != 0 ||
            hru_resize(&g->cpu, cap, sizeof *g->cpu) != 0)
            return -ENOMEM;
        g->cap = cap;
    }
    g->real[g->n] = real;
    g->cpu[g->n++] = cpu;
    return 0;
}

/* Reads benchmark b (the i-th) into the keys. Returns 0, 1 when it is
 * left out (it reported an error), or a negative errno. */
static int gbench_one(const struct hru_json *b, size_t i, struct gkeys *ks,
                      const char *file, char *err, size_t errlen)
{
    size_t nlen = 0;
    const char *name = str_of(b, "run_name", &nlen);
    const char *type = hru_json_get_str(b, "run_type");
    const struct hru_json *e = hru_json_get(b, "error_occurred");
    double unit, real, cpu, reps;
    struct gkey *g;
    char where[48];

    if (name == NULL)
        name = str_of(b, "name", &nlen);
    if (b->type != HRU_JSON_OBJECT || name == NULL) {
        snprintf(err, errlen, "%s: benchmark %zu has no name", file, i);
        return -EINVAL;
    }
    snprintf(where, sizeof where, "benchmark %zu", i);
    if (hrh__import_name_check(file, where, "its name", name, nlen, 0, err,
                               errlen) != 0)
        return -EINVAL;
    if (e != NULL && e->type == HRU_JSON_TRUE)
        return 1;
    unit = gbench_unit(hru_json_get_str(b, "time_unit"));
    if (unit == 0) {
        snprintf(err, errlen, "%s: benchmark %s: unknown time_unit", file,
                 name);
        return -EINVAL;
    }
    if (type != NULL && strcmp(type, "aggregate") == 0) {
        const char *agg = hru_json_get_str(b, "aggregate_name");

        /* The median of the repetitions stands for them where they were
         * not reported (--benchmark_report_aggregates_only); the other
         * aggregates (mean, stddev, cv, big O) are left. */
        if (agg == NULL || strcmp(agg, "median") != 0)
            return 0;
    }
    if (hru_json_get_num(b, "real_time", &real) != 0 ||
        hru_json_get_num(b, "cpu_time", &cpu) != 0) {
        snprintf(err, errlen, "%s: benchmark %s: no real_time and cpu_time",
                 file, name);
        return -EINVAL;
    }
    if (!isfinite(real) || !isfinite(cpu) || real < 0 || cpu < 0) {
        snprintf(err, errlen, "%s: benchmark %s: real_time %g and cpu_time "
                 "%g are not both finite and at least 0", file, name, real,
                 cpu);
        return -EINVAL;
    }
    if ((g = gkey_of(ks, name)) == NULL)
        return -ENOMEM;
    if (type != NULL && strcmp(type, "aggregate") == 0) {
        g->has_med = 1;
        g->med_real = real * unit;
        g->med_cpu = cpu * unit;
        g->reps = hru_json_get_num(b, "repetitions", &reps) == 0 &&
                          reps >= 1 && reps < 1e9
                      ? (uint64_t)reps
                      : 1;
        return 0;
    }
    return gkey_put(g, real * unit, cpu * unit);
}

/* The points of key g: real_time, then cpu_time. */
static int gbench_points(struct hrh_import *im, struct hrh_import_run *r,
                         const char *op, const struct gkey *g)
{
    struct hrh__import_stats s;
    int rc;

    if (g->n == 0) {
        s.count = g->reps;
        s.mean = s.median = s.p10 = s.p90 = g->med_real;
        rc = hrh__import_point(im, r, HRH_IMPORT_NAME_GBENCH, op, g->name,
                               HRH_IMPORT_METRIC_REAL, &s, NULL, 0);
        s.mean = s.median = s.p10 = s.p90 = g->med_cpu;
        return rc != 0 ? rc : hrh__import_point(im, r, HRH_IMPORT_NAME_GBENCH,
                                                op, g->name,
                                                HRH_IMPORT_METRIC_CPU, &s,
                                                NULL, 0);
    }
    if ((rc = hrh__import_stats_of(g->real, g->n, &s)) != 0 ||
        (rc = hrh__import_point(im, r, HRH_IMPORT_NAME_GBENCH, op, g->name,
                                HRH_IMPORT_METRIC_REAL, &s, g->real,
                                g->n)) != 0 ||
        (rc = hrh__import_stats_of(g->cpu, g->n, &s)) != 0)
        return rc;
    return hrh__import_point(im, r, HRH_IMPORT_NAME_GBENCH, op, g->name,
                             HRH_IMPORT_METRIC_CPU, &s, g->cpu, g->n);
}

int hrh__import_gbench(struct hrh_import *im, const char *file,
                       const char *text, size_t len,
                       const struct hrh_import_opts *o, char *err,
                       size_t errlen)
{
    struct hrh__import_said said = { NULL, NULL, NULL, NULL, NULL };
    const struct hru_json *ctx, *bs;
    struct hrh_import_run *r;
    struct hru_json *root;
    struct gkeys ks = { { 0 }, NULL, 0 };
    size_t exelen = 0;
    const char *exe, *op = HRH_IMPORT_NONE;
    char machine[256];
    double cpus, mhz;
    int rc = parse(file, text, len, &root, err, errlen);

    if (rc != 0)
        return rc;
    ctx = hru_json_get(root, "context");
    bs = hru_json_get(root, "benchmarks");
    if (ctx == NULL || ctx->type != HRU_JSON_OBJECT || bs == NULL ||
        bs->type != HRU_JSON_ARRAY) {
        snprintf(err, errlen, "%s: not Google Benchmark's JSON (no context "
                 "and benchmarks)", file);
        hru_json_free(root);
        return -EINVAL;
    }
    for (size_t i = 0; i < bs->n; i++) {
        rc = gbench_one(bs->item[i], i, &ks, file, err, errlen);
        if (rc == 1) {
            im->skipped++;
            rc = 0;
        }
        if (rc != 0)
            break;
    }
    if (rc == 0 && ks.names.n == 0) {
        snprintf(err, errlen, "%s: no benchmark results", file);
        rc = -EINVAL;
    }
    exe = str_of(ctx, "executable", &exelen);
    if (exe != NULL && memrchr(exe, '/', exelen) != NULL) {
        const char *base = (const char *)memrchr(exe, '/', exelen) + 1;

        exelen -= (size_t)(base - exe);
        exe = base;
    }
    if (rc == 0 && exe != NULL)
        rc = hrh__import_name_check(file, "context", "its executable", exe,
                                    exelen, 1, err, errlen);
    if (exe != NULL && exe[0] != '\0')
        op = exe;
    r = rc == 0 ? hrh__import_run_new(im) : NULL;
    if (rc == 0 && r == NULL)
        rc = -ENOMEM;
    for (size_t i = 0; rc == 0 && i < ks.names.n; i++)
        rc = gbench_points(im, r, op, &ks.k[i]);
    if (rc == 0) {
        if (hru_json_get_num(ctx, "num_cpus", &cpus) == 0 &&
            hru_json_get_num(ctx, "mhz_per_cpu", &mhz) == 0 &&
            cpus >= 1 && cpus < 1e6 && mhz >= 0 && mhz < 1e7) {
            snprintf(machine, sizeof machine, "%.0f cpus, %.0f MHz", cpus,
                     mhz);
            said.machine = machine;
        }
        said.time = hru_json_get_str(ctx, "date");
        said.commit = hru_json_get_str(ctx, "commit");
        said.host = hru_json_get_str(ctx, "host_name");
        rc = finish(im, r, HRH_IMPORT_NAME_GBENCH, file, text, len, o, &said,
                    err, errlen);
    }
    if (rc == -ENOMEM)
        snprintf(err, errlen, "out of memory");
    for (size_t i = 0; i < ks.names.n; i++) {
        free(ks.k[i].real);
        free(ks.k[i].cpu);
    }
    free(ks.k);
    hru_strset_fini(&ks.names);
    hru_json_free(root);
    return rc;
}

/* --- pytest-benchmark -------------------------------------------------- */

/* A second in ns: pytest-benchmark's times are in seconds. */
#define NS_PER_S 1e9

/* Adds the key (group, name) to seen. Returns 0, -EEXIST when it was
 * there, or -ENOMEM. */
static int seen_once(struct hru_strset *seen, const char *group,
                     const char *name)
{
    size_t n = strlen(group) + strlen(name) + 24, id, before = seen->n;
    char *k = malloc(n);
    int rc;

    if (k == NULL)
        return -ENOMEM;
    snprintf(k, n, "%zu:%s%s", strlen(group), group, name);
    rc = hru_strset_add(seen, k, &id);
    free(k);
    return rc != 0 ? rc : seen->n == before ? -EEXIST : 0;
}

/* The point of benchmark b (the i-th). */
static int pytest_one(struct hrh_import *im, struct hrh_import_run *r,
                      struct hru_strset *seen, const struct hru_json *b,
                      size_t i, const char *file, char *err, size_t errlen)
{
    size_t nlen = 0, glen = 0;
    const char *name = str_of(b, "fullname", &nlen);
    const char *group = str_of(b, "group", &glen);
    const struct hru_json *st = hru_json_get(b, "stats");
    const struct hru_json *data = hru_json_get(st, "data");
    struct hrh__import_stats s;
    double rounds, q1, q3;
    char where[48];
    int rc;

    if (name == NULL)
        name = str_of(b, "name", &nlen);
    if (name == NULL || st == NULL || st->type != HRU_JSON_OBJECT) {
        snprintf(err, errlen, "%s: benchmark %zu has no fullname and stats",
                 file, i);
        return -EINVAL;
    }
    snprintf(where, sizeof where, "benchmark %zu", i);
    if (hrh__import_name_check(file, where, "its name", name, nlen, 0, err,
                               errlen) != 0 ||
        (group != NULL &&
         hrh__import_name_check(file, where, "its group", group, glen, 1,
                                err, errlen) != 0))
        return -EINVAL;
    if (group == NULL || group[0] == '\0')
        group = HRH_IMPORT_NONE;
    /* A key once: a second benchmark of the same group and name (files
     * put together) would be a second value of one key in one run. */
    if ((rc = seen_once(seen, group, name)) != 0) {
        if (rc == -EEXIST)
            snprintf(err, errlen, "%s: benchmark %zu: %s is there twice "
                     "(its group and name are an earlier benchmark's)", file,
                     i, name);
        return rc == -EEXIST ? -EINVAL : rc;
    }
    if (data != NULL && data->type == HRU_JSON_ARRAY && data->n > 0) {
        double *v = malloc(data->n * sizeof *v);

        if (v == NULL)
            return -ENOMEM;
        for (size_t j = 0; j < data->n; j++) {
            if (data->item[j]->type != HRU_JSON_NUMBER ||
                !isfinite(data->item[j]->num)) {
                snprintf(err, errlen, "%s: benchmark %s: data point %zu is "
                         "not a number", file, name, j);
                free(v);
                return -EINVAL;
            }
            v[j] = data->item[j]->num * NS_PER_S;
        }
        rc = hrh__import_stats_of(v, data->n, &s);
        free(v);
        if (rc != 0)
            return rc;
    } else {
        if (hru_json_get_num(st, "rounds", &rounds) != 0 ||
            hru_json_get_num(st, "mean", &s.mean) != 0 ||
            hru_json_get_num(st, "median", &s.median) != 0 ||
            hru_json_get_num(st, "q1", &q1) != 0 ||
            hru_json_get_num(st, "q3", &q3) != 0 || !(rounds >= 1) ||
            rounds > 1e15 || !isfinite(s.mean) || !isfinite(s.median) ||
            !isfinite(q1) || !isfinite(q3)) {
            snprintf(err, errlen, "%s: benchmark %s: stats without rounds, "
                     "mean, median, q1 and q3", file, name);
            return -EINVAL;
        }
        s.count = (uint64_t)rounds;
        s.mean *= NS_PER_S;
        s.median *= NS_PER_S;
        s.p10 = q1 * NS_PER_S;
        s.p90 = q3 * NS_PER_S;
    }
    return hrh__import_point(im, r, HRH_IMPORT_NAME_PYTEST, group, name,
                             HRH_IMPORT_METRIC_TIME, &s, NULL, 0);
}

int hrh__import_pytest(struct hrh_import *im, const char *file,
                       const char *text, size_t len,
                       const struct hrh_import_opts *o, char *err,
                       size_t errlen)
{
    struct hrh__import_said said = { NULL, NULL, NULL, NULL, NULL };
    struct hru_strset seen = { 0 };
    const struct hru_json *mi, *cpu, *bs;
    struct hrh_import_run *r;
    struct hru_json *root;
    const char *brand;
    char machine[512];
    double count;
    int rc = parse(file, text, len, &root, err, errlen);

    if (rc != 0)
        return rc;
    mi = hru_json_get(root, "machine_info");
    bs = hru_json_get(root, "benchmarks");
    if (bs == NULL || bs->type != HRU_JSON_ARRAY) {
        snprintf(err, errlen, "%s: not pytest-benchmark's JSON (no "
                 "benchmarks)", file);
        hru_json_free(root);
        return -EINVAL;
    }
    if (bs->n == 0) {
        snprintf(err, errlen, "%s: no benchmark results", file);
        hru_json_free(root);
        return -EINVAL;
    }
    if ((r = hrh__import_run_new(im)) == NULL)
        rc = -ENOMEM;
    for (size_t i = 0; rc == 0 && i < bs->n; i++)
        rc = pytest_one(im, r, &seen, bs->item[i], i, file, err, errlen);
    hru_strset_fini(&seen);
    if (rc == 0) {
        cpu = hru_json_get(mi, "cpu");
        brand = hru_json_get_str(cpu, "brand_raw");
        if (brand == NULL || brand[0] == '\0')
            brand = hru_json_get_str(cpu, "brand"); /* py-cpuinfo < 7 */
        if (brand == NULL || brand[0] == '\0')
            brand = hru_json_get_str(mi, "processor");
        if (brand == NULL || brand[0] == '\0')
            brand = hru_json_get_str(mi, "machine");
        if (brand != NULL && brand[0] != '\0') {
            if (hru_json_get_num(cpu, "count", &count) == 0 && count >= 1 &&
                count < 1e6)
                snprintf(machine, sizeof machine, "%s, %.0f cores", brand,
                         count);
            else
                snprintf(machine, sizeof machine, "%s", brand);
            said.machine = machine;
        }
        said.time = hru_json_get_str(root, "datetime");
        said.commit = hru_json_get_str(hru_json_get(root, "commit_info"),
                                       "id");
        /* Its word for a run outside a repository. */
        if (said.commit != NULL && strcmp(said.commit, "unversioned") == 0)
            said.commit = NULL;
        said.host = hru_json_get_str(mi, "node");
        said.kernel = hru_json_get_str(mi, "release");
        rc = finish(im, r, HRH_IMPORT_NAME_PYTEST, file, text, len, o, &said,
                    err, errlen);
    }
    if (rc == -ENOMEM)
        snprintf(err, errlen, "out of memory");
    hru_json_free(root);
    return rc;
}
