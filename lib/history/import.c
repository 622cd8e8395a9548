/* Other tools' results as runs of the history (import.h): what the
 * readers share, times, and the CSV reader. The JSON readers are in
 * import_json.c. */
#include "config.h"

#include "lib/history/import.h"
#include "lib/history/import_priv.h"
#include "lib/run/runid.h"
#include "lib/util/grow.h"
#include "lib/util/strset.h"
#include "proto/protocol.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The phase of every imported key: the tools measure after a warm-up. */
#define IMPORT_PHASE "warm"

int hrh_import_format_parse(const char *name, enum hrh_import_format *f)
{
    if (strcmp(name, HRH_IMPORT_NAME_GBENCH) == 0 ||
        strcmp(name, HRH_IMPORT_NAME_GBENCH_LONG) == 0)
        *f = HRH_IMPORT_GBENCH;
    else if (strcmp(name, HRH_IMPORT_NAME_PYTEST) == 0)
        *f = HRH_IMPORT_PYTEST_BENCHMARK;
    else if (strcmp(name, HRH_IMPORT_NAME_CSV) == 0)
        *f = HRH_IMPORT_CSV;
    else
        return -EINVAL;
    return 0;
}

/* n decimal digits at *s into *v (and past them). Returns 0 or -1. */
static int digits(const char **s, int n, int *v)
{
    *v = 0;
    for (int i = 0; i < n; i++) {
        if ((*s)[i] < '0' || (*s)[i] > '9')
            return -1;
        *v = *v * 10 + ((*s)[i] - '0');
    }
    *s += n;
    return 0;
}

/* Nanoseconds in a second. */
#define NS_PER_S 1000000000

/* A fraction of a second, the digits at *s after its point (at least
 * one), rounded to a nanosecond into *frac_ns (0 to NS_PER_S), *s moved
 * past them. Returns 0, or -1 when no digit follows. */
static int fraction(const char **s, int64_t *frac_ns)
{
    const char *p = *s;
    int64_t v = 0;
    int n = 0;

    if (*p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++, n++) {
        if (n < 9)
            v = v * 10 + (*p - '0');
        else if (n == 9 && *p >= '5')
            v++;
    }
    for (; n < 9; n++)
        v *= 10;
    *frac_ns = v;
    *s = p;
    return 0;
}

/* secs seconds and frac_ns (0 to NS_PER_S) as nanoseconds since the
 * epoch into *ns. Returns 0, or -EINVAL when they do not fit in an
 * int64_t (before 1677-09-21 or after 2262-04-11). */
static int to_ns(int64_t secs, int64_t frac_ns, int64_t *ns)
{
    if (secs < INT64_MIN / NS_PER_S ||
        secs > (INT64_MAX - frac_ns) / NS_PER_S)
        return -EINVAL;
    *ns = secs * NS_PER_S + frac_ns;
    return 0;
}

/* The days of month mo (1 to 12) of year y. */
static int month_days(int y, int mo)
{
    static const int days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31,
                                  30, 31 };
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

    return days[mo - 1] + (mo == 2 && leap);
}

int hrh_import_time(const char *s, int64_t *ns)
{
    struct tm tm;
    int64_t secs = 0, frac = 0;
    int y, mo, d, h, mi, sec, off = 0, utc_min;
    const char *p = s;

    /* Unix seconds: digits, then a point and digits if any; read
     * exactly, not through a double, so that "1.001" is 1001000000 ns
     * as "1970-01-01T00:00:01.001Z" is. */
    if (strspn(s, "0123456789") > 0 &&
        s[strspn(s, "0123456789.")] == '\0' &&
        strchr(s, '.') == strrchr(s, '.')) {
        for (; *p >= '0' && *p <= '9'; p++) {
            if (secs > INT64_MAX / NS_PER_S)
                return -EINVAL;
            secs = secs * 10 + (*p - '0');
        }
        if (*p == '.' && p[1] != '\0') {
            p++;
            if (fraction(&p, &frac) != 0)
                return -EINVAL;
        }
        return to_ns(secs, frac, ns);
    }
    if (digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) ||
        *p++ != '-' || digits(&p, 2, &d) || (*p != 'T' && *p != ' ') ||
        (p++, digits(&p, 2, &h)) || *p++ != ':' || digits(&p, 2, &mi) ||
        *p++ != ':' || digits(&p, 2, &sec))
        return -EINVAL;
    if (*p == '.') {
        p++;
        if (fraction(&p, &frac) != 0)
            return -EINVAL;
    }
    if (*p == 'Z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p == '-' ? -1 : 1, oh, om;

        p++;
        if (digits(&p, 2, &oh) || *p++ != ':' || digits(&p, 2, &om) ||
            oh > 23 || om > 59)
            return -EINVAL;
        off = sign * (oh * 3600 + om * 60);
    }
    if (*p != '\0' || mo < 1 || mo > 12 || d < 1 ||
        d > month_days(y, mo) || h > 23 || mi > 59 || sec > 60)
        return -EINVAL;
    /* A leap second is 23:59:60 UTC, nothing else: :60 of any other
     * minute is no time. */
    utc_min = ((h * 60 + mi - off / 60) % 1440 + 1440) % 1440;
    if (sec == 60 && utc_min != 23 * 60 + 59)
        return -EINVAL;
    memset(&tm, 0, sizeof tm);
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = sec;
    return to_ns((int64_t)timegm(&tm) - off, frac, ns);
}

void *hrh__import_keep(struct hrh_import *im, void *p)
{
    if (p == NULL)
        return NULL;
    if (hru_grow(&im->owned, &im->owned_cap, im->nowned + 1,
                 sizeof *im->owned, 256) != 0) {
        free(p);
        return NULL;
    }
    im->owned[im->nowned++] = p;
    return p;
}

char *hrh__import_strndup(struct hrh_import *im, const char *s, size_t len)
{
    char *c = malloc(len + 1);

    if (c != NULL) {
        memcpy(c, s, len);
        c[len] = '\0';
    }
    return hrh__import_keep(im, c);
}

char *hrh__import_strdup(struct hrh_import *im, const char *s)
{
    return hrh__import_strndup(im, s, strlen(s));
}

struct hrh_import_run *hrh__import_run_new(struct hrh_import *im)
{
    if (hru_grow(&im->runs, &im->runs_cap, im->nruns + 1, sizeof *im->runs,
                 8) != 0)
        return NULL;
    memset(&im->runs[im->nruns], 0, sizeof im->runs[im->nruns]);
    return &im->runs[im->nruns++];
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* The q-quantile of sorted v[0..n). */
static double quantile(const double *v, size_t n, double q)
{
    double rank = q * (double)(n - 1);
    size_t lo = (size_t)rank;

    if (lo + 1 >= n)
        return v[n - 1];
    return v[lo] + (v[lo + 1] - v[lo]) * (rank - (double)lo);
}

int hrh__import_stats_of(const double *v, size_t n,
                         struct hrh__import_stats *s)
{
    double *c = malloc(n * sizeof *c), sum = 0;

    if (c == NULL)
        return -ENOMEM;
    memcpy(c, v, n * sizeof *c);
    qsort(c, n, sizeof *c, cmp_double);
    for (size_t i = 0; i < n; i++)
        sum += c[i];
    s->count = n;
    s->mean = sum / (double)n;
    s->median = quantile(c, n, 0.5);
    s->p10 = quantile(c, n, 0.1);
    s->p90 = quantile(c, n, 0.9);
    free(c);
    return 0;
}

int hrh__import_point(struct hrh_import *im, struct hrh_import_run *r,
                      const char *node, const char *op, const char *range,
                      const char *metric, const struct hrh__import_stats *s,
                      const double *rounds, size_t nrounds)
{
    struct hrh_point *p;
    double *rc = NULL;

    if (hru_grow(&r->p, &r->cap, r->n + 1, sizeof *r->p, 64) != 0)
        return -ENOMEM;
    p = &r->p[r->n];
    memset(p, 0, sizeof *p);
    if (nrounds > 1) {
        rc = hrh__import_keep(im, malloc(nrounds * sizeof *rc));
        if (rc == NULL)
            return -ENOMEM;
        memcpy(rc, rounds, nrounds * sizeof *rc);
        p->rounds = rc;
        p->nrounds = nrounds;
    }
    p->node = hrh__import_strdup(im, node);
    p->op = hrh__import_strdup(im, op);
    p->backend = HRH_IMPORT_NONE;
    p->phase = IMPORT_PHASE;
    p->range = hrh__import_strdup(im, range);
    p->metric = metric;
    if (p->node == NULL || p->op == NULL || p->range == NULL)
        return -ENOMEM;
    p->count = s->count;
    p->mean = s->mean;
    p->median = s->median;
    p->p10 = s->p10;
    p->p90 = s->p90;
    r->n++;
    return 0;
}

int hrh__import_name_check(const char *file, const char *where,
                           const char *what, const char *s, size_t len,
                           int label, char *err, size_t errlen)
{
    if (label ? hrp_label_ok(s, len) : hrp_name_ok(s, len))
        return 0;
    if (len == 0)
        snprintf(err, errlen, "%s: %s: %s is empty", file, where, what);
    else if (len > HRP_MAX_STRING)
        snprintf(err, errlen, "%s: %s: %s is %zu bytes, over the %u of a "
                 "key's name", file, where, what, len, HRP_MAX_STRING);
    else
        snprintf(err, errlen, "%s: %s: %s holds a NUL byte", file, where,
                 what);
    return -EINVAL;
}

int hrh__import_run_finish(struct hrh_import *im, struct hrh_import_run *r,
                           const char *file, const void *idbytes,
                           size_t idlen, const struct hrh_import_opts *o,
                           const struct hrh__import_said *said, char *err,
                           size_t errlen)
{
    const char *machine = o->machine != NULL ? o->machine : said->machine;
    const char *commit = o->commit != NULL ? o->commit : said->commit;
    const char *t = o->time != NULL ? o->time : said->time;

    if (machine == NULL || machine[0] == '\0') {
        snprintf(err, errlen, "%s: no machine in the file (--machine NAME "
                 "names it)", file);
        return -EINVAL;
    }
    if ((t == NULL || t[0] == '\0') && o->time_optional)
        t = "0";
    if (t == NULL || t[0] == '\0') {
        snprintf(err, errlen, "%s: no time in the file (--meta time=T "
                 "gives one)", file);
        return -EINVAL;
    }
    if (hrh_import_time(t, &r->run.time_ns) != 0) {
        snprintf(err, errlen, "%s: time '%.64s' is not a time ("
                 HRH_IMPORT_TIME_FORMS ")", file, t);
        return -EINVAL;
    }
    hrr_runid_of_bytes(idbytes, idlen, r->id);
    /* A copy: the runs' array moves as runs are added. */
    r->run.id = hrh__import_strdup(im, r->id);
    r->run.saved_ns = r->run.time_ns;
    r->run.commit = hrh__import_strdup(im, commit != NULL ? commit : "");
    r->run.machine = hrh__import_strdup(im, machine);
    r->run.host = hrh__import_strdup(im, said->host != NULL ? said->host
                                                             : "");
    r->run.kernel = hrh__import_strdup(im, said->kernel != NULL
                                               ? said->kernel : "");
    r->run.file = hrh__import_strdup(im, file);
    r->run.parts = "";
    r->run.meta_key = o->meta_key;
    r->run.meta_value = o->meta_value;
    r->run.nmeta = o->nmeta;
    if (r->run.id == NULL || r->run.commit == NULL ||
        r->run.machine == NULL || r->run.host == NULL ||
        r->run.kernel == NULL || r->run.file == NULL)
        return -ENOMEM;
    return 0;
}

/* --- CSV ------------------------------------------------------------ */

/* The columns of a line. */
enum { COL_COMMIT, COL_TIME, COL_MACHINE, COL_NAME, COL_VALUE, COL_UNIT,
       NCOL };

/* One line of the file. */
struct line {
    char *col[NCOL]; /* kept by the import */
    size_t ncol;
    size_t lineno;
    int run;         /* its run's index */
    double ns;
};

/* The bytes from text[i] to the end of the field that starts there (its
 * closing quote, or the comma or line end after it): room enough for its
 * value. */
static size_t field_span(const char *text, size_t len, size_t i)
{
    size_t j = i;

    if (j < len && text[j] == '"') {
        for (j++; j < len; j++) {
            if (text[j] == '"' && j + 1 < len && text[j + 1] == '"')
                j++;
            else if (text[j] == '"')
                break;
        }
        return j - i;
    }
    while (j < len && text[j] != ',' && text[j] != '\n' && text[j] != '\r')
        j++;
    return j - i;
}

/* Splits the line at text[*pos..len) into cols (quotes as RFC 4180),
 * moving *pos past its end. Returns the number of fields, or -EINVAL
 * (a quote not closed, text after a closing quote, too many fields),
 * -EILSEQ (a NUL byte in a field), or -ENOMEM. */
static int csv_fields(struct hrh_import *im, const char *text, size_t len,
                      size_t *pos, char **col)
{
    size_t n = 0, i = *pos;

    for (;;) {
        char *f = malloc(field_span(text, len, i) + 1);
        size_t fl = 0;

        if (f == NULL)
            return -ENOMEM;
        if (i < len && text[i] == '"') {
            for (i++;; i++) {
                if (i >= len) {
                    free(f);
                    return -EINVAL;
                }
                if (text[i] == '"') {
                    if (i + 1 < len && text[i + 1] == '"') {
                        f[fl++] = '"';
                        i++;
                        continue;
                    }
                    i++;
                    break;
                }
                f[fl++] = text[i];
            }
            if (i < len && text[i] != ',' && text[i] != '\n' &&
                text[i] != '\r') {
                free(f);
                return -EINVAL;
            }
        } else {
            while (i < len && text[i] != ',' && text[i] != '\n' &&
                   text[i] != '\r') {
                if (text[i] == '"') {
                    free(f);
                    return -EINVAL;
                }
                f[fl++] = text[i++];
            }
        }
        f[fl] = '\0';
        if (n == NCOL || strlen(f) != fl) {
            free(f);
            return n == NCOL ? -EINVAL : -EILSEQ;
        }
        if ((col[n++] = hrh__import_keep(im, f)) == NULL)
            return -ENOMEM;
        if (i < len && text[i] == ',') {
            i++;
            continue;
        }
        if (i < len && text[i] == '\r')
            i++;
        if (i < len && text[i] == '\n')
            i++;
        *pos = i;
        return (int)n;
    }
}

/* The ns in one unit (empty: ns), or 0 for a unit that is not a time. */
static double unit_ns(const char *unit)
{
    static const struct {
        const char *name;
        double ns;
    } units[] = { { "", 1 }, { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 },
                  { "s", 1e9 } };

    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(unit, units[i].name) == 0)
            return units[i].ns;
    }
    return 0;
}

/* The run of line x, told by its commit, time and machine (the options'
 * values over the lines'), as a string of lengths and fields into buf;
 * its number in runs (added when new, numbered in the order of first
 * lines) into *run. Returns 0 or -ENOMEM. */
static int run_of(const struct hrh_import_opts *o, struct hru_strset *runs,
                  const struct line *x, int *run)
{
    const char *f[3] = { o->commit != NULL ? "" : x->col[COL_COMMIT],
                         o->time != NULL ? "" : x->col[COL_TIME],
                         o->machine != NULL ? "" : x->col[COL_MACHINE] };
    size_t n = 1, k = 0, id;
    char *buf;
    int rc;

    for (int i = 0; i < 3; i++)
        n += strlen(f[i]) + 24;
    if ((buf = malloc(n)) == NULL)
        return -ENOMEM;
    for (int i = 0; i < 3; i++)
        k += (size_t)snprintf(buf + k, n - k, "%zu:%s", strlen(f[i]), f[i]);
    rc = hru_strset_add(runs, buf, &id);
    free(buf);
    if (rc != 0 || id > INT_MAX)
        return -ENOMEM;
    *run = (int)id;
    return 0;
}

/* The bytes the id of the run of lines l[0..nl) is made of: its lines'
 * fields, each ended by a NUL, with the options' values over the
 * lines'. Returns a buffer (caller frees) with *len, or NULL. */
static char *csv_idbytes(const struct hrh_import_opts *o,
                         const struct line *l, size_t nl, size_t *len)
{
    size_t n = sizeof HRH_IMPORT_NAME_CSV, k = 0;
    char *b;

    for (size_t i = 0; i < nl; i++) {
        for (size_t c = 0; c < NCOL; c++)
            n += (c < l[i].ncol ? strlen(l[i].col[c]) : 0) + 1;
    }
    if ((b = malloc(n)) == NULL)
        return NULL;
    memcpy(b, HRH_IMPORT_NAME_CSV, sizeof HRH_IMPORT_NAME_CSV);
    k = sizeof HRH_IMPORT_NAME_CSV;
    for (size_t i = 0; i < nl; i++) {
        for (size_t c = 0; c < NCOL; c++) {
            const char *s = c < l[i].ncol ? l[i].col[c] : "";

            if (c == COL_COMMIT && o->commit != NULL)
                s = "";
            if (c == COL_TIME && o->time != NULL)
                s = "";
            if (c == COL_MACHINE && o->machine != NULL)
                s = "";
            memcpy(b + k, s, strlen(s) + 1);
            k += strlen(s) + 1;
        }
    }
    *len = k;
    return b;
}

/* The points of run r, of lines l[0..nl): a key per name in the order of
 * first lines, its lines' values (in the order of the lines) its rounds. */
static int csv_points(struct hrh_import *im, struct hrh_import_run *r,
                      const struct line *l, size_t nl)
{
    struct hru_strset names = { 0 };
    size_t *key = malloc(nl * sizeof *key), *at = NULL, nv = 0;
    double *v = malloc(nl * sizeof *v);
    int rc = 0;

    /* Each line's key, numbered in the order of first lines. */
    for (size_t i = 0; rc == 0 && key != NULL && i < nl; i++)
        rc = hru_strset_add(&names, l[i].col[COL_NAME], &key[i]);
    if (rc == 0 && key != NULL && v != NULL)
        at = calloc(names.n + 1, sizeof *at);
    if (rc != 0 || at == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    /* Key k's values go to v[at[k]..at[k + 1]), in the lines' order. */
    for (size_t i = 0; i < nl; i++)
        at[key[i] + 1]++;
    for (size_t k = 0; k < names.n; k++)
        at[k + 1] += at[k];
    for (size_t i = 0; i < nl; i++)
        v[at[key[i]]++] = l[i].ns;
    for (size_t k = 0; rc == 0 && k < names.n; k++) {
        struct hrh__import_stats s;
        size_t n = at[k] - nv;

        rc = hrh__import_stats_of(v + nv, n, &s);
        if (rc == 0)
            rc = hrh__import_point(im, r, HRH_IMPORT_NAME_CSV,
                                   HRH_IMPORT_NONE, names.v[k],
                                   HRH_IMPORT_METRIC_TIME, &s, v + nv, n);
        nv = at[k];
    }
out:
    hru_strset_fini(&names);
    free(at);
    free(key);
    free(v);
    return rc;
}

static int import_csv(struct hrh_import *im, const char *file,
                      const char *text, size_t len,
                      const struct hrh_import_opts *o, char *err,
                      size_t errlen)
{
    static char empty[] = "";
    struct hru_strset runs = { 0 };
    struct line *l = NULL, *byrun = NULL;
    size_t nl = 0, capl = 0, pos = 0, lineno = 0, *at = NULL;
    int nruns = 0, rc = 0;

    while (pos < len && rc == 0) {
        struct line x;
        char *end, where[32];
        double unit;
        int n;

        memset(&x, 0, sizeof x);
        x.lineno = ++lineno;
        n = csv_fields(im, text, len, &pos, x.col);
        if (n == -ENOMEM) {
            rc = -ENOMEM;
            break;
        }
        if (n == -EILSEQ) {
            snprintf(err, errlen, "%s: line %zu: a field holds a NUL byte",
                     file, x.lineno);
            rc = -EINVAL;
            break;
        }
        if (n == 1 && x.col[0][0] == '\0')
            continue; /* an empty line */
        if (n < 0 || n < COL_UNIT || n > NCOL) {
            snprintf(err, errlen, "%s: line %zu: not "
                     "commit,time,machine,name,value[,unit]", file, x.lineno);
            rc = -EINVAL;
            break;
        }
        x.ncol = (size_t)n;
        if (x.col[COL_UNIT] == NULL)
            x.col[COL_UNIT] = empty;
        if (x.lineno == 1 && strcmp(x.col[COL_COMMIT], "commit") == 0 &&
            strcmp(x.col[COL_VALUE], "value") == 0)
            continue; /* the columns' names */
        if (x.col[COL_NAME][0] == '\0') {
            snprintf(err, errlen, "%s: line %zu: no name", file, x.lineno);
            rc = -EINVAL;
            break;
        }
        snprintf(where, sizeof where, "line %zu", x.lineno);
        if ((rc = hrh__import_name_check(file, where, "its name",
                                         x.col[COL_NAME],
                                         strlen(x.col[COL_NAME]), 0, err,
                                         errlen)) != 0)
            break;
        x.ns = strtod(x.col[COL_VALUE], &end);
        unit = unit_ns(x.col[COL_UNIT]);
        if (end == x.col[COL_VALUE] || *end != '\0' || !isfinite(x.ns) ||
            x.ns < 0) {
            snprintf(err, errlen, "%s: line %zu: value '%.64s' is not a "
                     "number of at least 0", file, x.lineno,
                     x.col[COL_VALUE]);
            rc = -EINVAL;
            break;
        }
        if (unit == 0) {
            snprintf(err, errlen, "%s: line %zu: unit '%.64s' is not a "
                     "time (ns, us, ms or s)", file, x.lineno,
                     x.col[COL_UNIT]);
            rc = -EINVAL;
            break;
        }
        x.ns *= unit;
        if (run_of(o, &runs, &x, &x.run) != 0) {
            rc = -ENOMEM;
            break;
        }
        if (hru_grow(&l, &capl, nl + 1, sizeof *l, 64) != 0) {
            rc = -ENOMEM;
            break;
        }
        l[nl++] = x;
    }
    nruns = (int)runs.n;
    hru_strset_fini(&runs);
    /* The lines grouped by run, each run's in the file's order: run k's
     * are byrun[at[k]..at[k + 1]). */
    if (rc == 0 && nruns > 0 &&
        ((byrun = malloc(nl * sizeof *byrun)) == NULL ||
         (at = calloc((size_t)nruns + 1, sizeof *at)) == NULL))
        rc = -ENOMEM;
    if (rc == 0 && nruns > 0) {
        for (size_t i = 0; i < nl; i++)
            at[l[i].run + 1]++;
        for (int k = 0; k < nruns; k++)
            at[k + 1] += at[k];
        for (size_t i = 0; i < nl; i++)
            byrun[at[l[i].run]++] = l[i];
        memmove(at + 1, at, (size_t)nruns * sizeof *at);
        at[0] = 0;
    }
    for (int run = 0; rc == 0 && run < nruns; run++) {
        struct hrh_import_run *r = hrh__import_run_new(im);
        struct hrh__import_said said = { NULL, NULL, NULL, NULL, NULL };
        struct line *lr = byrun + at[run];
        size_t nr = at[run + 1] - at[run], idlen;
        char *id;

        if (r == NULL) {
            rc = -ENOMEM;
            break;
        }
        said.commit = lr[0].col[COL_COMMIT];
        said.time = lr[0].col[COL_TIME];
        said.machine = lr[0].col[COL_MACHINE];
        rc = csv_points(im, r, lr, nr);
        id = rc == 0 ? csv_idbytes(o, lr, nr, &idlen) : NULL;
        if (rc == 0 && id == NULL)
            rc = -ENOMEM;
        if (rc == 0)
            rc = hrh__import_run_finish(im, r, file, id, idlen, o, &said,
                                        err, errlen);
        free(id);
    }
    if (rc == 0 && nruns == 0) {
        snprintf(err, errlen, "%s: no results", file);
        rc = -EINVAL;
    }
    if (rc == -ENOMEM)
        snprintf(err, errlen, "out of memory");
    hru_strset_fini(&runs);
    free(byrun);
    free(at);
    free(l);
    return rc;
}

int hrh_import_read(enum hrh_import_format f, const char *file,
                    const char *text, size_t len,
                    const struct hrh_import_opts *o, struct hrh_import **out,
                    char *err, size_t errlen)
{
    struct hrh_import *im = calloc(1, sizeof *im);
    int rc;

    if (im == NULL) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    if (f == HRH_IMPORT_GBENCH)
        rc = hrh__import_gbench(im, file, text, len, o, err, errlen);
    else if (f == HRH_IMPORT_PYTEST_BENCHMARK)
        rc = hrh__import_pytest(im, file, text, len, o, err, errlen);
    else
        rc = import_csv(im, file, text, len, o, err, errlen);
    if (rc != 0) {
        hrh_import_free(im);
        return rc;
    }
    *out = im;
    return 0;
}

void hrh_import_free(struct hrh_import *im)
{
    if (im == NULL)
        return;
    for (size_t i = 0; i < im->nowned; i++)
        free(im->owned[i]);
    for (size_t i = 0; i < im->nruns; i++)
        free(im->runs[i].p);
    free(im->owned);
    free(im->runs);
    free(im);
}
