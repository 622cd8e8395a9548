/* Mann-Whitney U and Hodges-Lehmann (see signif.h). */
#include "config.h"

#include "daemon/signif.h"
#include "daemon/hist.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

typedef unsigned __int128 u128;

/* The standard normal's 97.5% quantile. */
#define Z975 1.959963984540054

/* --- samples -------------------------------------------------------------- */

size_t hrd_signif_collapse(const uint64_t *sorted, size_t n, double *v,
                           uint64_t *w)
{
    size_t d = 0;

    for (size_t i = 0; i < n; i++) {
        if (d > 0 && v[d - 1] == (double)sorted[i]) {
            w[d - 1]++;
        } else {
            v[d] = (double)sorted[i];
            w[d++] = 1;
        }
    }
    return d;
}

size_t hrd_signif_bucket(const uint64_t *sorted, size_t n, double *v,
                         uint64_t *w)
{
    size_t d = 0;
    uint32_t last = 0;

    for (size_t i = 0; i < n; i++) {
        uint32_t b = hrd_hist_bucket(sorted[i]);

        if (d > 0 && b == last) {
            w[d - 1]++;
        } else {
            v[d] = hrd_hist_value(b);
            w[d++] = 1;
            last = b;
        }
    }
    return d;
}

/* The value of rank r (from 0) of a sample. */
static double value_at(const struct hrd_wsample *s, uint64_t r)
{
    uint64_t seen = 0;

    for (size_t i = 0; i < s->n; i++) {
        seen += s->w[i];
        if (r < seen)
            return s->v[i];
    }
    return s->v[s->n - 1];
}

double hrd_signif_median(const struct hrd_wsample *s)
{
    if (s->total == 0)
        return 0.0;
    if (s->total % 2)
        return value_at(s, s->total / 2);
    return (value_at(s, s->total / 2 - 1) + value_at(s, s->total / 2)) / 2;
}

/* --- ranks of differences ------------------------------------------------- */

/* One pass at value v: the number of differences y - x <= v, the largest
 * difference <= v and the smallest one > v (+-inf when there is none). */
struct eval {
    double v;
    u128 c;
    double a, b;
};

/* A pass over the two sorted samples, one row (x value) after the other:
 * the reference, and what small samples use. */
static void count_at_merge(const struct hrd_wsample *x,
                           const struct hrd_wsample *y, double v,
                           struct eval *e)
{
    const double *xv = x->v, *yv = y->v;
    const uint64_t *xw = x->w, *yw = y->w;
    size_t nx = x->n, ny = y->n, j = 0;
    uint64_t wy = 0; /* weight of y[0..j) */
    uint64_t c64 = 0;
    u128 c = 0;
    double a = -INFINITY, b = INFINITY;
    /* Whether every count fits in 64 bits (it does below 4e9 pairs a
     * side), which spares a 128-bit product per value. */
    int fits64 = x->total == 0 || y->total <= UINT64_MAX / x->total;

    /* For ascending x[i], the y values with y - x[i] <= v are a prefix
     * y[0..j) that only grows. */
    for (size_t i = 0; i < nx; i++) {
        double xi = xv[i];

        while (j < ny && yv[j] - xi <= v)
            wy += yw[j++];
        if (fits64)
            c64 += xw[i] * wy;
        else
            c += (u128)xw[i] * wy;
        if (j > 0 && yv[j - 1] - xi > a)
            a = yv[j - 1] - xi;
        if (j < ny && yv[j] - xi < b)
            b = yv[j] - xi;
    }
    e->v = v;
    e->c = fits64 ? c64 : c;
    e->a = a;
    e->b = b;
}

/*
 * The same pass, faster on large samples. The merge above is a chain of
 * data-dependent branches (does row i end here?) that the processor
 * mispredicts about once a row. Here the rows are cut into CHAINS runs,
 * each started where a binary search puts its first row, and the runs
 * advance together, one step each in turn, without branches: a step
 * either moves past one y value or ends one row, noting where its prefix
 * ends (pos[i]). The runs do not depend on each other, so the processor
 * overlaps their steps. A second loop over the rows then sums the counts
 * from the prefix weights and finds the two differences around v. The
 * y values are padded with -inf before and +inf after, so that no step
 * or bound needs a test of the ends.
 */
#define CHAINS 8

struct scratch {
    double *ypad;    /* -inf, y values, +inf */
    uint64_t *wcum;  /* wcum[j]: the weight of y[0..j) */
    size_t *pos;     /* per row, where its prefix ends */
};

/* The first j in [0, ny] with y[j] - xi > v (not <= v). */
static size_t first_above(const double *yp, size_t ny, double xi, double v)
{
    size_t lo = 0, hi = ny;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (yp[mid] - xi <= v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void count_at_chains(const struct hrd_wsample *x,
                            const struct hrd_wsample *y,
                            const struct scratch *sc, double v,
                            struct eval *e)
{
    const double *xv = x->v, *yp = sc->ypad + 1;
    const uint64_t *xw = x->w, *wc = sc->wcum;
    size_t nx = x->n, ny = y->n, *pos = sc->pos;
    size_t i[CHAINS], end[CHAINS], j[CHAINS];
    uint64_t c64 = 0;
    u128 c = 0;
    double a = -INFINITY, b = INFINITY;
    int fits64 = x->total == 0 || y->total <= UINT64_MAX / x->total;

    for (int k = 0; k < CHAINS; k++) {
        i[k] = nx * (size_t)k / CHAINS;
        end[k] = nx * (size_t)(k + 1) / CHAINS;
        j[k] = first_above(yp, ny, xv[i[k]], v);
    }
    /* Each step ends at most one row of a run, so all the runs can take
     * as many steps as the one with the fewest rows left has; again,
     * until a run is done; then each goes on alone. */
    for (;;) {
        size_t run = SIZE_MAX;

        for (int k = 0; k < CHAINS; k++)
            run = end[k] - i[k] < run ? end[k] - i[k] : run;
        if (run == 0)
            break;
        for (size_t s = 0; s < run; s++) {
#define STEP(k)                                                          \
            do {                                                         \
                size_t ii = i[k], jj = j[k];                             \
                size_t t = yp[jj] - xv[ii] <= v;                         \
                pos[ii] = jj;                                            \
                j[k] = jj + t;                                           \
                i[k] = ii + (t ^ 1);                                     \
            } while (0)
            STEP(0); STEP(1); STEP(2); STEP(3);
            STEP(4); STEP(5); STEP(6); STEP(7);
        }
    }
    for (int k = 0; k < CHAINS; k++) {
        while (i[k] < end[k])
            STEP(k);
#undef STEP
    }
    for (size_t r = 0; r < nx; r++) {
        size_t p = pos[r];
        double da = yp[(ptrdiff_t)p - 1] - xv[r], db = yp[p] - xv[r];

        if (fits64)
            c64 += xw[r] * wc[p];
        else
            c += (u128)xw[r] * wc[p];
        a = da > a ? da : a;
        b = db < b ? db : b;
    }
    e->v = v;
    e->c = fits64 ? c64 : c;
    e->a = a;
    e->b = b;
}

/* Passes already made for one pair of samples, reused between ranks. */
#define EVALS 96

struct ranker {
    const struct hrd_wsample *x, *y;
    struct eval e[EVALS];
    int n;
    /* Where the differences gather: a search with no bound yet starts at
     * `start` (the difference of the middle values) and steps by about
     * `width` (the sum of the interquartile ranges) times the share of
     * the differences it has to move over. */
    double start, width;
    /* For the passes of count_at_chains (all NULL: count_at_merge). */
    struct scratch sc;
};

/* The values of ranks r[0] <= r[1] <= r[2] (from 0) of a sample, in one
 * scan. */
static void values_at3(const struct hrd_wsample *s, const uint64_t r[3],
                       double out[3])
{
    uint64_t seen = 0;
    int k = 0;

    for (size_t i = 0; i < s->n && k < 3; i++) {
        seen += s->w[i];
        while (k < 3 && r[k] < seen)
            out[k++] = s->v[i];
    }
    while (k < 3)
        out[k++] = s->v[s->n - 1];
}

/* Samples with fewer distinct x values than this are counted by
 * count_at_merge. */
#define CHAINS_MIN (4 * CHAINS)

/* Returns 0, or -ENOMEM when the large samples' scratch cannot be had. */
static int ranker_init(struct ranker *rk, const struct hrd_wsample *x,
                       const struct hrd_wsample *y)
{
    uint64_t rx[3] = { (x->total - 1) / 4, x->total / 2,
                       x->total - 1 - (x->total - 1) / 4 };
    uint64_t ry[3] = { (y->total - 1) / 4, y->total / 2,
                       y->total - 1 - (y->total - 1) / 4 };
    double qx[3], qy[3];

    values_at3(x, rx, qx);
    values_at3(y, ry, qy);
    rk->x = x;
    rk->y = y;
    rk->n = 0;
    rk->start = qy[1] - qx[1];
    rk->width = qx[2] - qx[0] + qy[2] - qy[0];
    rk->sc = (struct scratch){ NULL, NULL, NULL };
    if (x->n < CHAINS_MIN)
        return 0;
    rk->sc.ypad = malloc((y->n + 2) * sizeof *rk->sc.ypad);
    rk->sc.wcum = malloc((y->n + 1) * sizeof *rk->sc.wcum);
    rk->sc.pos = malloc(x->n * sizeof *rk->sc.pos);
    if (rk->sc.ypad == NULL || rk->sc.wcum == NULL || rk->sc.pos == NULL)
        return -ENOMEM;
    rk->sc.ypad[0] = -INFINITY;
    rk->sc.wcum[0] = 0;
    for (size_t j = 0; j < y->n; j++) {
        rk->sc.ypad[j + 1] = y->v[j];
        rk->sc.wcum[j + 1] = rk->sc.wcum[j] + y->w[j];
    }
    rk->sc.ypad[y->n + 1] = INFINITY;
    return 0;
}

static void ranker_fini(struct ranker *rk)
{
    free(rk->sc.ypad);
    free(rk->sc.wcum);
    free(rk->sc.pos);
}

/* Counts at v, keeps the pass for later ranks and moves the bounds of a
 * search for rank k. */
static void narrow(struct ranker *rk, double v, u128 k, double *lo,
                   double *hi, u128 *c_lo, u128 *c_hi)
{
    struct eval e;

    if (rk->sc.pos != NULL && v < INFINITY)
        count_at_chains(rk->x, rk->y, &rk->sc, v, &e);
    else
        count_at_merge(rk->x, rk->y, v, &e);
    if (rk->n < EVALS)
        rk->e[rk->n++] = e;
    if (e.c >= k) {
        *hi = e.a;
        *c_hi = e.c;
    } else {
        *lo = e.b;
        *c_lo = e.c;
    }
}

static double rank_value(struct ranker *rk, uint64_t r)
{
    const struct hrd_wsample *x = rk->x, *y = rk->y;
    u128 k = (u128)r + 1, all = (u128)x->total * y->total;
    /* The answer lies in [lo, hi]; c_lo differences are below lo, c_hi are
     * at most hi. */
    double lo = y->v[0] - x->v[x->n - 1], hi = y->v[y->n - 1] - x->v[0];
    double jump = 0;
    u128 c_lo = 0, c_hi = all;

    for (int i = 0; i < rk->n; i++) {
        const struct eval *e = &rk->e[i];
        if (e->c >= k && e->a < hi) {
            hi = e->a;
            c_hi = e->c;
        } else if (e->c < k && e->b > lo) {
            lo = e->b;
            c_lo = e->c;
        }
    }
    /* While a bound is still the extreme difference, interpolating from it
     * would go far astray (one slow sample in a thousand makes it ten
     * times as far): step from the start, or from the other bound, by
     * the share of the differences to move over times their width, four
     * times further at each miss. */
    for (int g = 0; g < 16 && lo < hi && (c_lo == 0 || c_hi == all) &&
                    rk->width > 0; g++) {
        double v, want;

        if (c_lo == 0 && c_hi == all) {
            v = rk->start;
        } else {
            want = rk->width *
                   (double)(c_hi == all ? k - c_lo : c_hi - k) / (double)all;
            jump = 4 * jump > want ? 4 * jump : want;
            v = c_hi == all ? lo + jump : hi - jump;
            if (jump == 0)
                v = nextafter(hi, -INFINITY);
        }
        /* A step past the other extreme: bisection takes over. */
        if (!(v >= lo) || v >= hi)
            break;
        narrow(rk, v, k, &lo, &hi, &c_lo, &c_hi);
    }
    /* Interpolation, then bisection, in turn. An interpolation that lands
     * just past the rank (within a quarter of what is left between the
     * bounds) most likely ends on the answer: one pass checks that bound
     * (does a count just below hi, or at lo, fall short of k?). */
    for (int step = 0, check = 0, moved_hi = 0; lo < hi; step++) {
        double v;
        u128 was_hi = c_hi;

        if (check)
            v = moved_hi ? nextafter(hi, -INFINITY) : lo;
        else if (step % 2 == 0 && c_hi > c_lo)
            v = lo + (hi - lo) * (double)(k - c_lo) / (double)(c_hi - c_lo);
        else
            v = lo + (hi - lo) / 2;
        if (!(v >= lo) || v >= hi)
            v = lo;
        narrow(rk, v, k, &lo, &hi, &c_lo, &c_hi);
        moved_hi = c_hi != was_hi;
        check = !check && step % 2 == 0 &&
                (moved_hi ? c_hi - k : k - c_lo) <= (c_hi - c_lo) / 4;
    }
    return hi;
}

double hrd_signif_diff_rank(const struct hrd_wsample *x,
                            const struct hrd_wsample *y, uint64_t r)
{
    struct ranker rk;
    double v;

    if (ranker_init(&rk, x, y) != 0) {
        /* Without the scratch, every pass is a plain merge. */
        ranker_fini(&rk);
        rk.sc = (struct scratch){ NULL, NULL, NULL };
    }
    v = rank_value(&rk, r);
    ranker_fini(&rk);
    return v;
}

/* --- U -------------------------------------------------------------------- */

/*
 * The number of ways, out of C(n + m, n), in which U takes each value
 * 0..nm when there are no ties: the coefficients of the Gaussian binomial
 * [n + m, n], built as the product over k = 1..n of
 * (1 - q^(m + k)) / (1 - q^k). Returns a new array of nm + 1 values
 * (caller frees) or NULL.
 */
static long double *u_distribution(uint64_t n, uint64_t m)
{
    size_t size = (size_t)(n * m + n + 1);
    long double *f = calloc(size, sizeof *f);

    if (f == NULL)
        return NULL;
    f[0] = 1;
    for (uint64_t k = 1; k <= n; k++) {
        uint64_t deg = m * (k - 1), s = m + k;

        for (uint64_t u = deg + s; u >= s; u--)
            f[u] -= f[u - s];
        for (uint64_t u = k; u <= deg + s; u++)
            f[u] += f[u - k];
    }
    return f;
}

int hrd_signif_compare(const struct hrd_wsample *base,
                       const struct hrd_wsample *new,
                       struct hrd_signif *out)
{
    const struct hrd_wsample *x = base, *y = new;
    u128 u2 = 0;      /* 2U, a whole number */
    uint64_t below = 0;
    double ties = 0;
    double n = (double)x->total, m = (double)y->total;
    double nm = n * m, big_n = n + m;
    uint64_t pairs = x->total * y->total;
    struct ranker rk;
    int no_ties = 1;
    size_t i = 0, j = 0;
    uint64_t kq; /* 1-based rank of the interval's lower bound */

    /* U, and the tie term sum(t^3 - t) over the groups of equal values,
     * in one merge of the distinct values without branches on them (a
     * side that has run out reads as +inf; a value on one side only is
     * a group of t = its weight, whose term is 0 when t = 1). */
    while (i < x->n || j < y->n) {
        double xi = i < x->n ? x->v[i] : INFINITY;
        double yj = j < y->n ? y->v[j] : INFINITY;
        double v = xi <= yj ? xi : yj, t;
        uint64_t ax = i < x->n && xi == v, ay = j < y->n && yj == v;
        uint64_t wx = x->w[i < x->n ? i : x->n - 1] & -ax;
        uint64_t wy = y->w[j < y->n ? j : y->n - 1] & -ay;

        i += ax;
        j += ay;
        u2 += (u128)wy * (2 * (u128)below + wx);
        below += wx;
        t = (double)(wx + wy);
        ties += t * t * t - t;
        no_ties &= wx + wy <= 1;
    }
    out->u = (double)u2 / 2;
    out->z = 0;
    if (no_ties && x->total < HRD_SIGNIF_EXACT_N &&
        y->total < HRD_SIGNIF_EXACT_N) {
        long double *f = u_distribution(x->total, y->total);
        long double all = 0, le = 0, ge = 0, cum = 0;
        uint64_t ui = (uint64_t)out->u;

        if (f == NULL)
            return -ENOMEM;
        for (uint64_t t = 0; t <= pairs; t++)
            all += f[t];
        for (uint64_t t = 0; t <= pairs; t++) {
            if (t <= ui)
                le += f[t];
            if (t >= ui)
                ge += f[t];
        }
        out->p = (double)(2 * (le < ge ? le : ge) / all);
        if (out->p > 1)
            out->p = 1;
        /* The smallest q with P(U <= q) >= 2.5%, at least 1. */
        for (kq = 0; kq < pairs; kq++) {
            cum += f[kq];
            if (cum / all >= 0.025L)
                break;
        }
        if (kq == 0)
            kq = 1;
        free(f);
        out->exact = 1;
    } else {
        double var = nm / 12 *
                     (big_n + 1 - (double)(ties / (big_n * (big_n - 1))));
        double d = out->u - nm / 2, c;

        out->exact = 0;
        if (!(var > 0)) {
            out->p = 1;
        } else {
            d = fabs(d) <= 0.5 ? 0 : d - (d > 0 ? 0.5 : -0.5);
            out->z = d / sqrt(var);
            out->p = erfc(fabs(out->z) / M_SQRT2);
        }
        c = nm / 2 - Z975 * sqrt(nm * (big_n + 1) / 12);
        c = floor(c + 0.5);
        kq = c < 1 ? 1 : (uint64_t)c;
    }
    if (kq > (pairs + 1) / 2)
        kq = (pairs + 1) / 2;
    if (ranker_init(&rk, x, y) != 0) {
        ranker_fini(&rk);
        return -ENOMEM;
    }
    if (pairs % 2)
        out->shift = rank_value(&rk, pairs / 2);
    else
        out->shift = (rank_value(&rk, pairs / 2 - 1) +
                      rank_value(&rk, pairs / 2)) / 2;
    out->lo = rank_value(&rk, kq - 1);
    out->hi = rank_value(&rk, pairs - kq);
    ranker_fini(&rk);
    return 0;
}
