/* Change points of a series (see changepoint.h). */
#include "config.h"

#include "lib/stat/changepoint.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* The median of x[0..n), sorting x. */
static double median_inplace(double *x, size_t n)
{
    if (n == 0)
        return 0.0;
    qsort(x, n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

double hrs_cp_median(const double *x, size_t n, double *tmp)
{
    if (n > 0)
        memcpy(tmp, x, n * sizeof *tmp);
    return median_inplace(tmp, n);
}

/* The continued fraction of the incomplete beta function (Lentz). */
static double betacf(double a, double b, double x)
{
    const double tiny = 1e-300;
    double qab = a + b, qap = a + 1, qam = a - 1;
    double c = 1, d = 1 - qab * x / qap, h;

    if (fabs(d) < tiny)
        d = tiny;
    d = 1 / d;
    h = d;
    for (int m = 1; m <= 300; m++) {
        int m2 = 2 * m;
        double aa = m * (b - m) * x / ((qam + m2) * (a + m2)), del;

        d = 1 + aa * d;
        d = fabs(d) < tiny ? tiny : d;
        c = 1 + aa / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1 / d;
        h *= d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1 + aa * d;
        d = fabs(d) < tiny ? tiny : d;
        c = 1 + aa / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1 / d;
        del = d * c;
        h *= del;
        if (fabs(del - 1) < 1e-15)
            break;
    }
    return h;
}

/* The regularized incomplete beta function I_x(a, b). */
static double betai(double a, double b, double x)
{
    double bt;

    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    bt = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) +
             b * log1p(-x));
    if (x < (a + 1) / (a + b + 2))
        return bt * betacf(a, b, x) / a;
    return 1 - bt * betacf(b, a, 1 - x) / b;
}

double hrs_cp_student_cdf(double t, double df)
{
    double ib;

    if (isnan(t))
        return NAN;
    if (isinf(t))
        return t > 0 ? 1.0 : 0.0;
    ib = betai(df / 2, 0.5, df / (df + t * t));
    return t > 0 ? 1 - ib / 2 : ib / 2;
}

/*
 * The two-sided p-value of Student's t test (pooled variance) of v[0..nl)
 * against v[nl..m), the variance at least qvar (the rounding's): 0 when
 * both sides are constant at different levels and qvar is 0, 1 when they
 * are constant at one.
 */
static double t_test(const double *v, size_t nl, size_t m, double qvar)
{
    double ml = 0, mr = 0, ss = 0, nr = (double)(m - nl), df, t;

    for (size_t i = 0; i < nl; i++)
        ml += v[i];
    for (size_t i = nl; i < m; i++)
        mr += v[i];
    ml /= (double)nl;
    mr /= nr;
    for (size_t i = 0; i < m; i++) {
        double e = v[i] - (i < nl ? ml : mr);

        ss += e * e;
    }
    df = (double)m - 2;
    if (ml == mr)
        return 1.0;
    ss = fmax(ss / df, qvar);
    if (!(ss > 0))
        return 0.0;
    t = (mr - ml) / sqrt(ss * (1 / (double)nl + 1 / nr));
    return fmin(1.0, 2 * hrs_cp_student_cdf(-fabs(t), df));
}

/*
 * The points a segment is searched and tested on: the logarithms of
 * x[0..m) into v, each clipped to within WINSOR robust standard deviations
 * (the median absolute deviation, scaled) of their median, so that one
 * outlying run weighs as a run WINSOR deviations off and no more (none
 * clipped when over half the points are equal, as clock-step medians can
 * be). tmp is scratch of m.
 */
#define WINSOR 3.0

static void winsorized_logs(const double *x, size_t m, double *v,
                            double *tmp)
{
    double med, mad;

    for (size_t i = 0; i < m; i++)
        v[i] = log(x[i] + 1);
    med = hrs_cp_median(v, m, tmp);
    for (size_t i = 0; i < m; i++)
        tmp[i] = fabs(v[i] - med);
    mad = 1.4826 * median_inplace(tmp, m);
    if (!(mad > 0))
        return;
    for (size_t i = 0; i < m; i++)
        v[i] = fmax(med - WINSOR * mad, fmin(med + WINSOR * mad, v[i]));
}

/*
 * The variance that rounding x[0..m) to a clock step of `step` ns adds to
 * their logarithms: a uniform error within one step, (step / x)^2 / 12 on
 * the logarithm of x, averaged over the points. 0 when step is 0.
 */
static double rounding_var(const double *x, size_t m, double step)
{
    double v = 0;

    if (!(step > 0))
        return 0;
    for (size_t i = 0; i < m; i++) {
        double e = step / (x[i] + 1);

        v += e * e / 12;
    }
    return v / (double)m;
}

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b != 0) {
        int64_t t = a % b;

        a = b;
        b = t;
    }
    return a;
}

double hrs_cp_clock_step(const double *v, size_t n)
{
    size_t off = 0, odd = 0, used = 0;
    int64_t g = 0;

    for (size_t i = 0; i < n; i++) {
        double h = 2 * v[i];

        if (!(h >= 0) || h > 9e15)
            continue;
        if (fabs(h - nearbyint(h)) > 1e-6) {
            off++;
            continue;
        }
        if ((int64_t)nearbyint(h) != 0)
            g = gcd64((int64_t)nearbyint(h), g);
    }
    if (n == 0 || g == 0 || (double)off > 0.01 * (double)n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        double h = 2 * v[i];

        if (!(h >= 0) || h > 9e15 || fabs(h - nearbyint(h)) > 1e-6)
            continue;
        used++;
        odd += ((int64_t)nearbyint(h) / g) % 2 != 0;
    }
    /* g is in half-ns: a step of g ns when the odd multiples of g / 2 ns
     * are rare (half steps), else g / 2 ns. */
    return 4 * odd < used ? (double)g : (double)g / 2;
}

/*
 * The points a split at t of x[0..m) is tested on: the logarithms of the
 * values into v, each side's clipped to within WINSOR robust standard
 * deviations (the median absolute deviation of both sides from their own
 * medians, scaled) of its own median, so that one outlying run weighs as
 * a run WINSOR deviations off, and a step is not clipped. tmp is scratch
 * of m.
 */
static void winsorized_sides(const double *x, size_t m, size_t t, double *v,
                             double *tmp)
{
    double med[2], mad;

    for (size_t i = 0; i < m; i++)
        v[i] = log(x[i] + 1);
    med[0] = hrs_cp_median(v, t, tmp);
    med[1] = hrs_cp_median(v + t, m - t, tmp);
    for (size_t i = 0; i < m; i++)
        tmp[i] = fabs(v[i] - med[i >= t]);
    mad = 1.4826 * median_inplace(tmp, m);
    if (!(mad > 0))
        return;
    for (size_t i = 0; i < m; i++)
        v[i] = fmax(med[i >= t] - WINSOR * mad,
                    fmin(med[i >= t] + WINSOR * mad, v[i]));
}

/*
 * The split of a segment's points r[0..m) where the energy statistic
 * (alpha 1) of the two sides is largest, each side at least w points: the
 * index of the first point of the right side. O(m^2).
 */
static size_t ediv_split(const double *r, size_t m, size_t w)
{
    double wl = 0, wr = 0, b = 0, best = -DBL_MAX;
    size_t at = w;

    for (size_t i = 0; i < m; i++) {
        for (size_t j = i + 1; j < m; j++)
            wr += fabs(r[i] - r[j]);
    }
    for (size_t t = 1; t + w <= m; t++) {
        /* Point t - 1 goes from the right side to the left. */
        size_t p = t - 1;
        double dl = 0, dr = 0, nl = (double)t, nr = (double)(m - t), q;

        for (size_t i = 0; i < p; i++)
            dl += fabs(r[p] - r[i]);
        for (size_t j = p + 1; j < m; j++)
            dr += fabs(r[p] - r[j]);
        wl += dl;
        wr -= dr;
        b += dr - dl;
        if (t < w)
            continue;
        q = 2 * b / (nl * nr);
        if (nl > 1)
            q -= 2 * wl / (nl * (nl - 1));
        if (nr > 1)
            q -= 2 * wr / (nr * (nr - 1));
        q *= nl * nr / (double)m;
        if (q > best) {
            best = q;
            at = t;
        }
    }
    return at;
}

/*
 * Places a split found at t (of a segment x[0..m), each side at least w
 * points): the test says that the levels differ; the likelihood says at
 * which run.
 * On the logarithms l of the points, with the sides' medians as the two
 * levels b and a and the noise s their points' median absolute deviation
 * from their level (scaled to a standard deviation), the log-likelihood of
 * a change at c against none is the sum over the points from c on of
 * (a - b)(l_i - (a + b) / 2) / s^2, each l_i first clipped to within half
 * the step plus PLACE_CLIP x s of the midpoint (a + b) / 2, so that one
 * outlying run does not pull the split. The change is placed at the
 * likeliest run when it holds at least 1 - PLACE_SURE of the likelihood,
 * else at the later run c of the likeliest pair of neighbouring runs
 * (c - 1, c): the step is at the named run or the one before it. The
 * levels are taken again from the new split until the split stays (at most
 * PLACE_ROUNDS times). O(m log m) per round. l is scratch of m points, tmp
 * of m + 1.
 */
#define PLACE_CLIP 3.0
#define PLACE_ROUNDS 3
#define PLACE_SURE 0.01

static double place_noise(const double *l, size_t m, size_t t, double b,
                          double a, double *tmp)
{
    double s, mean = 0, ss = 0;

    for (size_t i = 0; i < m; i++)
        tmp[i] = fabs(l[i] - (i < t ? b : a));
    s = 1.4826 * median_inplace(tmp, m);
    if (s > 0 || m < 3)
        return s;
    for (size_t i = 0; i < m; i++)
        mean += (l[i] - (i < t ? b : a)) / (double)m;
    for (size_t i = 0; i < m; i++) {
        double e = l[i] - (i < t ? b : a) - mean;

        ss += e * e;
    }
    return sqrt(ss / (double)(m - 2));
}

static size_t place(const double *x, size_t m, size_t w, size_t t, double *l,
                    double *tmp)
{
    for (size_t i = 0; i < m; i++)
        l[i] = log(x[i] + 1);
    for (int round = 0; round < PLACE_ROUNDS; round++) {
        double b = hrs_cp_median(l, t, tmp);
        double a = hrs_cp_median(l + t, m - t, tmp);
        double d = a - b, s = place_noise(l, m, t, b, a, tmp), lim;
        double ll = 0, prev, best = -DBL_MAX, top = -DBL_MAX, total = 0;
        size_t at = t, ml = w;

        if (d == 0 || s == 0 || !isfinite(s))
            break;
        lim = fabs(d) / 2 + PLACE_CLIP * s;
        /* tmp[c]: the log-likelihood of a change at c, for c in [0, m]. */
        tmp[m] = 0;
        for (size_t i = m; i-- > 0;) {
            double e = fmax(-lim, fmin(lim, l[i] - (a + b) / 2));

            ll += d * e / (s * s);
            tmp[i] = ll;
        }
        /* The likeliest single run, and the log of the total. */
        for (size_t c = w - 1; c + w <= m; c++)
            top = fmax(top, tmp[c]);
        for (size_t c = w - 1; c + w <= m; c++) {
            total += exp(tmp[c] - top);
            if (c >= w && tmp[c] > tmp[ml])
                ml = c;
        }
        if (tmp[ml] - top - log(total) >= log1p(-PLACE_SURE)) {
            at = ml;
        } else {
            prev = tmp[w - 1];
            for (size_t c = w; c + w <= m; c++) {
                /* log(exp(prev) + exp(tmp[c])), the pair (c - 1, c). */
                double hi = fmax(prev, tmp[c]);
                double pair = hi + log(exp(prev - hi) + exp(tmp[c] - hi));

                if (pair > best) {
                    best = pair;
                    at = c;
                }
                prev = tmp[c];
            }
        }
        if (at == t)
            break;
        t = at;
    }
    return t;
}

/*
 * Whether the split at t of a segment x[0..m) has at least w points on
 * each side that lie nearer that side's level (its median) than the other
 * side's: a level that fewer than w runs hold (a spike, or a step of too
 * few runs beside old-level runs) is no change. tmp is scratch of m.
 */
static int levels_held(const double *x, size_t m, size_t t, size_t w,
                       double *tmp)
{
    double before = hrs_cp_median(x, t, tmp);
    double after = hrs_cp_median(x + t, m - t, tmp);
    double mid = (before + after) / 2;
    size_t nb = 0, na = 0;

    for (size_t i = 0; i < t; i++)
        nb += before < after ? x[i] < mid : x[i] > mid;
    for (size_t i = t; i < m; i++)
        na += before < after ? x[i] > mid : x[i] < mid;
    return nb >= w && na >= w;
}

/*
 * The tail check of a split at t of x[0..m): the chance that as many of
 * the shorter side's k points as do lie beyond a line a quarter of the way
 * from the longer side's median to theirs would, by outliers alone: the
 * binomial tail P(X >= h), X of k points each beyond with chance pi, the
 * share of the longer side's points beyond that line (counted as (j + 1)
 * / (n + 2) for j of n, so never 0). A level of a few runs in a series of
 * heavy tails (a cold row, one sample a run, now and then an outlier) is
 * then no surer than its outliers are rare.
 */
static double tail_p(const double *x, size_t m, size_t t, double *tmp)
{
    double before = hrs_cp_median(x, t, tmp);
    double after = hrs_cp_median(x + t, m - t, tmp);
    int up = after > before, right_short = m - t <= t;
    size_t a = right_short ? 0 : t, b = right_short ? t : m, j = 0, h = 0;
    size_t k = right_short ? m - t : t;
    double line = right_short ? before + (after - before) / 4
                              : after + (before - after) / 4;
    double pi, tail = 0, lc = 0;

    for (size_t i = 0; i < m; i++) {
        int beyond = up == right_short ? x[i] > line : x[i] < line;

        if (i >= a && i < b)
            j += beyond;
        else
            h += beyond;
    }
    pi = ((double)j + 1) / ((double)(b - a) + 2);
    /* lc: log C(k, i), from i = 0 up. */
    for (size_t i = 0; i <= k; i++) {
        if (i > 0)
            lc += log((double)(k - i + 1) / (double)i);
        if (i >= h)
            tail += exp(lc + (double)i * log(pi) +
                        (double)(k - i) * log1p(-pi));
    }
    return fmin(1.0, tail);
}

static double change_of(double before, double after)
{
    if (before == after)
        return 0.0;
    if (before <= 0)
        return HUGE_VAL;
    return after / before - 1;
}

static int cmp_cp(const void *a, const void *b)
{
    const struct hrs_cp *x = a, *y = b;

    return x->at < y->at ? -1 : x->at > y->at;
}

int hrs_cp_detect(const double *x, size_t n, const struct hrs_cp_opts *o,
                  struct hrs_cp *out, size_t cap)
{
    size_t w = o->window > 0 ? o->window : 1;
    size_t *seg_a, *seg_b, nseg = 0, ncp = 0;
    double *r, *tmp, *l;
    struct hrs_cp *cp;
    int rc = -ENOMEM;

    if (n < 2 * w)
        return 0;
    seg_a = malloc(n * sizeof *seg_a);
    seg_b = malloc(n * sizeof *seg_b);
    r = malloc(n * sizeof *r);
    tmp = malloc((n + 1) * sizeof *tmp);
    l = malloc(n * sizeof *l);
    cp = malloc(n * sizeof *cp);
    if (seg_a == NULL || seg_b == NULL || r == NULL || tmp == NULL ||
        l == NULL || cp == NULL)
        goto out;
    seg_a[0] = 0;
    seg_b[0] = n;
    nseg = 1;
    while (nseg > 0) {
        size_t a = seg_a[--nseg], b = seg_b[nseg], m = b - a, t;
        double p, before, after, change, qvar;

        if (m < 2 * w)
            continue;
        qvar = rounding_var(x + a, m, o->step);
        winsorized_logs(x + a, m, r, tmp);
        t = ediv_split(r, m, w);
        winsorized_sides(x + a, m, t, l, tmp);
        p = t_test(l, t, m, qvar);
        if (p * (double)(m - 2 * w + 1) <= o->alpha) {
            t = place(x + a, m, w, t, l, tmp);
            winsorized_sides(x + a, m, t, l, tmp);
            p = t_test(l, t, m, qvar);
        }
        if (o->tail)
            p = fmax(p, tail_p(x + a, m, t, tmp));
        p = fmin(1.0, p * (double)(m - 2 * w + 1));
        before = hrs_cp_median(x + a, t, tmp);
        after = hrs_cp_median(x + a + t, m - t, tmp);
        change = change_of(before, after);
        if (p > o->alpha || fabs(change) < o->min_change || change == 0 ||
            fabs(after - before) < HRS_CP_MIN_STEPS * o->step ||
            !levels_held(x + a, m, t, w, tmp))
            continue;
        cp[ncp].at = a + t;
        cp[ncp].p = p;
        ncp++;
        /* Right first, so that the left is searched first (order does
         * not change the answer, only the work's). */
        seg_a[nseg] = a + t;
        seg_b[nseg++] = b;
        seg_a[nseg] = a;
        seg_b[nseg++] = a + t;
    }
    if (ncp > 1)
        qsort(cp, ncp, sizeof *cp, cmp_cp);
    /* Each change placed again between its neighbours, whose levels are
     * now single. */
    for (size_t i = 0; i < ncp; i++) {
        size_t a = i > 0 ? cp[i - 1].at : 0;
        size_t b = i + 1 < ncp ? cp[i + 1].at : n;

        cp[i].at = a + place(x + a, b - a, w, cp[i].at - a, l, tmp);
    }
    for (size_t i = 0; i < ncp; i++) {
        size_t a = i > 0 ? cp[i - 1].at : 0;
        size_t b = i + 1 < ncp ? cp[i + 1].at : n;

        cp[i].before = hrs_cp_median(x + a, cp[i].at - a, tmp);
        cp[i].after = hrs_cp_median(x + cp[i].at, b - cp[i].at, tmp);
        cp[i].change = change_of(cp[i].before, cp[i].after);
        if (i < cap)
            out[i] = cp[i];
    }
    rc = (int)ncp;
out:
    free(seg_a);
    free(seg_b);
    free(r);
    free(tmp);
    free(l);
    free(cp);
    return rc;
}

/* The t of P(T <= t) = q for Student's t with df degrees of freedom, q
 * in (0, 1), by bisection. */
static double student_quantile(double q, double df)
{
    double lo = -1e3, hi = 1e3;

    for (int i = 0; i < 200 && hi - lo > 1e-10; i++) {
        double mid = (lo + hi) / 2;

        if (hrs_cp_student_cdf(mid, df) < q)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

/* The sum of the two quantiles of hrs_cp_check_detectable for the last
 * alpha and power, by degrees of freedom (0: not yet): a check judges
 * many keys of few segment lengths. Not shared between threads: ctl
 * only. */
#define DETECT_Q_DF 512
static double detect_q_alpha, detect_q_power, detect_q[DETECT_Q_DF + 1];

static double detect_quantiles(size_t df, double alpha, double power)
{
    double q;

    if (alpha != detect_q_alpha || power != detect_q_power) {
        memset(detect_q, 0, sizeof detect_q);
        detect_q_alpha = alpha;
        detect_q_power = power;
    }
    if (df <= DETECT_Q_DF && detect_q[df] != 0)
        return detect_q[df];
    q = student_quantile(1 - alpha, (double)df) +
        student_quantile(power, (double)df);
    if (df <= DETECT_Q_DF)
        detect_q[df] = q;
    return q;
}

double hrs_cp_check_detectable(const double *seg, size_t m, double alpha,
                               double power)
{
    double *l, *tmp, med, scale, d;

    if (m < 2 || !(alpha > 0 && alpha < 1) || !(power > 0 && power < 1))
        return NAN;
    l = malloc(m * sizeof *l);
    tmp = malloc(m * sizeof *tmp);
    if (l == NULL || tmp == NULL) {
        free(l);
        free(tmp);
        return NAN;
    }
    /* The spread of hrs_cp_check: the scaled median absolute deviation
     * of the logarithms, else their standard deviation. */
    for (size_t i = 0; i < m; i++)
        l[i] = log(seg[i] + 1);
    med = hrs_cp_median(l, m, tmp);
    for (size_t i = 0; i < m; i++)
        tmp[i] = fabs(l[i] - med);
    scale = 1.4826 * median_inplace(tmp, m);
    if (scale == 0) {
        double s = 0, mean = 0;

        for (size_t i = 0; i < m; i++)
            mean += l[i] / (double)m;
        for (size_t i = 0; i < m; i++)
            s += (l[i] - mean) * (l[i] - mean);
        scale = sqrt(s / (double)(m - 1));
    }
    free(l);
    free(tmp);
    /* The shift of the log value at which p < alpha with the given
     * power: the (1 - alpha) quantile of t plus its power quantile, in
     * units of the prediction's spread. */
    d = detect_quantiles(m - 1, alpha, power) * scale *
        sqrt(1 + M_PI / (2 * (double)m));
    return 100 * expm1(d);
}

int hrs_cp_check(const double *seg, size_t m, double x, struct hrs_cp *out)
{
    double *l, *tmp, med, mad, scale, lx, t;
    int rc = -ENOMEM;

    if (m < 2)
        return -EINVAL;
    l = malloc(m * sizeof *l);
    tmp = malloc(m * sizeof *tmp);
    if (l == NULL || tmp == NULL)
        goto out;
    for (size_t i = 0; i < m; i++)
        l[i] = log(seg[i] + 1);
    med = hrs_cp_median(l, m, tmp);
    for (size_t i = 0; i < m; i++)
        tmp[i] = fabs(l[i] - med);
    mad = median_inplace(tmp, m);
    scale = 1.4826 * mad;
    if (scale == 0) {
        double s = 0, mean = 0;

        for (size_t i = 0; i < m; i++)
            mean += l[i] / (double)m;
        for (size_t i = 0; i < m; i++)
            s += (l[i] - mean) * (l[i] - mean);
        scale = sqrt(s / (double)(m - 1));
    }
    lx = log(x + 1);
    out->at = 0;
    out->before = hrs_cp_median(seg, m, tmp);
    out->after = x;
    out->change = change_of(out->before, x);
    if (scale == 0) {
        out->p = lx > med ? 0.0 : 1.0;
    } else {
        t = (lx - med) / (scale * sqrt(1 + M_PI / (2 * (double)m)));
        out->p = 1 - hrs_cp_student_cdf(t, (double)(m - 1));
    }
    rc = 0;
out:
    free(l);
    free(tmp);
    return rc;
}
