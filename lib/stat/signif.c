/* Mann-Whitney U and Hodges-Lehmann (see signif.h). */
#include "config.h"

#include "lib/stat/signif.h"
#include "lib/stat/hist.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

typedef unsigned __int128 u128;

/* The standard normal's 97.5% quantile. */
#define Z975 1.959963984540054

/* --- samples -------------------------------------------------------------- */

size_t hrs_signif_collapse(const uint64_t *sorted, size_t n, double *v,
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

size_t hrs_signif_bucket(const uint64_t *sorted, size_t n, double *v,
                         uint64_t *w)
{
    size_t d = 0;
    uint32_t last = 0;

    for (size_t i = 0; i < n; i++) {
        uint32_t b = hrs_hist_bucket(sorted[i]);

        if (d > 0 && b == last) {
            w[d - 1]++;
        } else {
            v[d] = hrs_hist_value(b);
            w[d++] = 1;
            last = b;
        }
    }
    return d;
}

/* The value of rank r (from 0) of a sample. */
static double value_at(const struct hrs_wsample *s, uint64_t r)
{
    uint64_t seen = 0;

    for (size_t i = 0; i < s->n; i++) {
        seen += s->w[i];
        if (r < seen)
            return s->v[i];
    }
    return s->v[s->n - 1];
}

double hrs_signif_median(const struct hrs_wsample *s)
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
static void count_at_merge(const struct hrs_wsample *x,
                           const struct hrs_wsample *y, double v,
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

/* The stepping of a pass at v: fills sc->pos (per row of x, the first j
 * with y[j] - x > v). */
static void chains_positions(const struct hrs_wsample *x,
                             const struct hrs_wsample *y,
                             const struct scratch *sc, double v)
{
    const double *xv = x->v, *yp = sc->ypad + 1;
    size_t nx = x->n, ny = y->n, *pos = sc->pos;
    size_t i[CHAINS], end[CHAINS], j[CHAINS];

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
}

/*
 * The sums of a pass over its rows, from their positions in sc->pos: the
 * count of differences <= v, the largest and the smallest one above v.
 * Groups of ROW_LANES rows keep their extremes apart, so that the
 * comparisons of the next row do not wait for those of this one. When
 * `step`, the positions are those of a pass at a value near v, such as
 * the pass that checks a bound right after the pass that moved it: each
 * row's prefix moves by one y value at most then, so each row takes that
 * step, forward or back, first (and the positions are updated), with no
 * stepping of runs. Returns 0, or -1 when some row would need more than a
 * step (its positions then are of no use: count_at_chains starts over).
 */
#define ROW_LANES 4

static inline __attribute__((always_inline)) int
rows_sum(const struct hrs_wsample *x, const struct hrs_wsample *y,
         const struct scratch *sc, double v, int step, struct eval *e)
{
    const double *xv = x->v, *yp = sc->ypad + 1;
    const uint64_t *xw = x->w, *wc = sc->wcum;
    size_t nx = x->n, *pos = sc->pos, r;
    uint64_t c64 = 0;
    u128 c = 0;
    double a[ROW_LANES], b[ROW_LANES];
    int fits64 = x->total == 0 || y->total <= UINT64_MAX / x->total;
    int far = 0;

    for (int l = 0; l < ROW_LANES; l++) {
        a[l] = -INFINITY;
        b[l] = INFINITY;
    }
#define ROW(r, l)                                                        \
    do {                                                                 \
        size_t p = pos[r];                                               \
        double xr = xv[r], da, db;                                       \
                                                                         \
        if (step) {                                                      \
            /* Forward when y[p] is within v now, back when y[p - 1] is \
             * not (the padding stops both at the ends). */              \
            p += yp[p] - xr <= v;                                        \
            p -= yp[(ptrdiff_t)p - 1] - xr > v;                          \
        }                                                                \
        da = yp[(ptrdiff_t)p - 1] - xr;                                  \
        db = yp[p] - xr;                                                 \
        if (step) {                                                      \
            far |= (da > v) | (db <= v);                                 \
            pos[r] = p;                                                  \
        }                                                                \
        if (fits64)                                                      \
            c64 += xw[r] * wc[p];                                        \
        else                                                             \
            c += (u128)xw[r] * wc[p];                                    \
        a[l] = da > a[l] ? da : a[l];                                    \
        b[l] = db < b[l] ? db : b[l];                                    \
    } while (0)
    for (r = 0; r + ROW_LANES <= nx; r += ROW_LANES) {
        ROW(r, 0);
        ROW(r + 1, 1);
        ROW(r + 2, 2);
        ROW(r + 3, 3);
    }
    for (; r < nx; r++)
        ROW(r, 0);
#undef ROW
    if (far)
        return -1;
    for (int l = 1; l < ROW_LANES; l++) {
        a[0] = a[l] > a[0] ? a[l] : a[0];
        b[0] = b[l] < b[0] ? b[l] : b[0];
    }
    e->v = v;
    e->c = fits64 ? c64 : c;
    e->a = a[0];
    e->b = b[0];
    return 0;
}

static void count_at_chains(const struct hrs_wsample *x,
                            const struct hrs_wsample *y,
                            const struct scratch *sc, double v,
                            struct eval *e)
{
    chains_positions(x, y, sc, v);
    rows_sum(x, y, sc, v, 0, e);
}

/* A pass at v from the positions of a pass near v (see rows_sum). Returns
 * 0 or -1. */
static int count_near(const struct hrs_wsample *x,
                      const struct hrs_wsample *y,
                      const struct scratch *sc, double v, struct eval *e)
{
    return rows_sum(x, y, sc, v, 1, e);
}

/* Passes already made for one pair of samples, reused between ranks. */
#define EVALS 96

struct ranker {
    const struct hrs_wsample *x, *y;
    struct eval e[EVALS];
    int n;
    /* Where the differences gather: a search with no bound yet starts at
     * `start` (the difference of the middle values), and, until two
     * passes tell better, takes the differences to lie about all / width
     * to a unit of value (`width`: the sum of the interquartile ranges). */
    double start, width;
    /* For the passes of count_at_chains (all NULL: count_at_merge). */
    struct scratch sc;
    /* The sum of w^3 - w over y's weights (hrs_signif_compare's tie
     * term), taken with the scratch. */
    uint64_t ties_y;
    /* Whether sc.pos holds the positions of the last pass. */
    int have_pos;
};

/* The values of ranks r[0] <= r[1] <= r[2] (from 0) of a sample, in one
 * scan. */
static void values_at3(const struct hrs_wsample *s, const uint64_t r[3],
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
static int ranker_init(struct ranker *rk, const struct hrs_wsample *x,
                       const struct hrs_wsample *y)
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
    rk->ties_y = 0;
    rk->have_pos = 0;
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
        uint64_t w = y->w[j];

        rk->sc.ypad[j + 1] = y->v[j];
        rk->sc.wcum[j + 1] = rk->sc.wcum[j] + w;
        rk->ties_y += w * w * w - w;
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

/* Keeps a pass for the searches of later ranks. */
static void ranker_keep(struct ranker *rk, const struct eval *e)
{
    if (rk->n < EVALS)
        rk->e[rk->n++] = *e;
}

/* Counts at v, keeps the pass and moves the bounds of a search for rank
 * k. When `near`, v is near the last pass's value (count_near). */
static void narrow(struct ranker *rk, double v, int near, u128 k, double *lo,
                   double *hi, u128 *c_lo, u128 *c_hi, struct eval *e)
{
    if (rk->sc.pos == NULL || !(v < INFINITY)) {
        count_at_merge(rk->x, rk->y, v, e);
        rk->have_pos = 0;
    } else if (!near || !rk->have_pos ||
               count_near(rk->x, rk->y, &rk->sc, v, e) != 0) {
        count_at_chains(rk->x, rk->y, &rk->sc, v, e);
        rk->have_pos = 1;
    }
    ranker_keep(rk, e);
    if (e->c >= k) {
        *hi = e->a;
        *c_hi = e->c;
    } else {
        *lo = e->b;
        *c_lo = e->c;
    }
}

/*
 * How many differences there are to a unit of value near the count k,
 * from the two kept passes whose counts are nearest k on the side of k
 * where `above` says (c >= k, or c < k), at different differences. A
 * pass's count is exact at its difference a (the largest <= its value),
 * so the slope is taken between those. Returns 0 when there are not two.
 */
static double slope_near(const struct ranker *rk, u128 k, int above)
{
    const struct eval *n1 = NULL, *n2 = NULL;

    for (int i = 0; i < rk->n; i++) {
        const struct eval *e = &rk->e[i];
        u128 all = (u128)rk->x->total * rk->y->total;

        if ((e->c >= k) != above || e->c == 0 || e->c == all)
            continue;
        if (n1 == NULL || (above ? e->c < n1->c : e->c > n1->c)) {
            if (n1 != NULL && n1->a != e->a)
                n2 = n1;
            n1 = e;
        } else if (e->a != n1->a &&
                   (n2 == NULL || (above ? e->c < n2->c : e->c > n2->c))) {
            n2 = e;
        }
    }
    if (n1 == NULL || n2 == NULL || n1->a == n2->a)
        return 0;
    return (double)(n1->c > n2->c ? n1->c - n2->c : n2->c - n1->c) /
           fabs(n1->a - n2->a);
}

/*
 * The value of rank r (from 0) of the differences: a search that keeps
 * [lo, hi], the answer's bounds, and moves one of them with each pass at
 * a value v in [lo, hi) (a count of at least k puts hi at the largest
 * difference <= v, a smaller one lo at the smallest difference > v), so
 * that it ends, on the answer, when they meet.
 *
 * Each pass is aimed at where the count reaches k. From a bound that is
 * still the extreme difference (one slow sample in a thousand puts it ten
 * times too far to interpolate from), it steps over the differences to
 * move over at the slope of the two nearest passes on the bound's side
 * (all / width while there are not two), four times further at each
 * miss after the second. Between two bounds that both came from passes,
 * it interpolates, and bisects after an interpolation that did not halve
 * the differences between them. A pass that lands within one difference's
 * share of the counts of k (the slope times the gap to the next
 * difference) most likely moved a bound onto the answer: the next pass
 * checks it (does a count just below hi, or at lo, fall short of k?),
 * from the positions of the pass before (count_near). On data in whole
 * nanoseconds this makes about two passes a rank.
 */
static double rank_value(struct ranker *rk, uint64_t r)
{
    const struct hrs_wsample *x = rk->x, *y = rk->y;
    u128 k = (u128)r + 1, all = (u128)x->total * y->total;
    /* The answer lies in [lo, hi]; c_lo differences are below lo, c_hi are
     * at most hi. */
    double lo = y->v[0] - x->v[x->n - 1], hi = y->v[y->n - 1] - x->v[0];
    double jump = 0;
    u128 c_lo = 0, c_hi = all;
    int check = 0, bisect = 0, misses = 0;

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
    while (lo < hi) {
        enum { STEP, INTERPOLATE, BISECT, CHECK } how;
        struct eval e;
        u128 was_lo = c_lo, was_hi = c_hi;
        int from_hi = c_hi < all;
        double v, slope = 0;

        if (check) {
            how = CHECK;
            v = check > 0 ? nextafter(hi, -INFINITY) : lo;
        } else if ((c_lo == 0 || c_hi == all) && rk->width > 0) {
            how = STEP;
            slope = (double)all / rk->width;
            if (c_lo == 0 && c_hi == all) {
                v = rk->start;
            } else {
                double near = slope_near(rk, k, from_hi), want;

                slope = near > 0 ? near : slope;
                want = (double)(from_hi ? c_hi - k : k - c_lo) / slope;
                jump = misses > 1 && 4 * jump > want ? 4 * jump : want;
                v = from_hi ? hi - jump : lo + jump;
                if (jump == 0)
                    v = nextafter(hi, -INFINITY);
            }
        } else if (!bisect && c_hi > c_lo) {
            how = INTERPOLATE;
            slope = (double)(c_hi - c_lo) / (hi - lo);
            v = lo + (hi - lo) * (double)(k - c_lo) / (double)(c_hi - c_lo);
        } else {
            how = BISECT;
            v = lo + (hi - lo) / 2;
        }
        /* A step past the other bound (or not a number): bisection. */
        if (!(v >= lo) || v >= hi) {
            how = BISECT;
            v = lo + (hi - lo) / 2;
            if (!(v >= lo) || v >= hi)
                v = lo;
        }
        narrow(rk, v, how == CHECK, k, &lo, &hi, &c_lo, &c_hi, &e);
        check = 0;
        if ((how == STEP || how == INTERPOLATE) && lo < hi) {
            int moved_hi = c_hi != was_hi;
            double share = slope * (e.b - e.a);

            if (moved_hi ? (double)(c_hi - k) < share
                         : (double)(k - c_lo) <= share)
                check = moved_hi ? 1 : -1;
        }
        /* A step that did not cross k counts as a miss. */
        misses = how == STEP && (c_hi != was_hi) == from_hi ? misses + 1 : 0;
        /* Bisection follows an interpolation that left more than half. */
        bisect = how == INTERPOLATE && !check &&
                 2 * (c_hi - c_lo) > was_hi - was_lo;
    }
    return hi;
}

double hrs_signif_diff_rank(const struct hrs_wsample *x,
                            const struct hrs_wsample *y, uint64_t r)
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

/*
 * U (as 2U, a whole number) and the tie term sum(t^3 - t) over the groups
 * of equal values, in one merge of the distinct values without branches
 * on them (a side that has run out reads as +inf; a value on one side
 * only is a group of t = its weight, whose term is 0 when t = 1). The tie
 * term is summed in doubles, in ascending order of the values.
 */
static void u_merge(const struct hrs_wsample *x, const struct hrs_wsample *y,
                    u128 *u2_out, double *ties_out, int *no_ties_out)
{
    u128 u2 = 0;
    uint64_t below = 0;
    double ties = 0;
    int no_ties = 1;
    size_t i = 0, j = 0;

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
    *u2_out = u2;
    *ties_out = ties;
    *no_ties_out = no_ties;
}

/*
 * Samples of at most this many values in all have their tie term summed
 * in whole numbers by u_pass: each term, and every partial sum, is at most
 * (n + m)^3 = 2^51 there, so the doubles of u_merge hold them exactly too,
 * and both ways give the same bits in any order.
 */
#define U_PASS_MAX ((uint64_t)1 << 17)

/*
 * The same as u_merge, from a pass at 0 over rows that run side by side
 * (count_at_chains), which a merge of large samples, a chain of loads and
 * comparisons that each wait for the one before, takes several times as
 * long as. Row x[i]'s prefix y[0..p) holds the y values <= x[i]; y[p - 1]
 * equals x[i] when the two samples share the value, in a group of
 * t = a + b (a = x[i]'s weight, b = y[p - 1]'s), whose term t^3 - t is
 * the two one-sided terms plus 3ab(a + b). For samples of at most
 * U_PASS_MAX values, with the scratch of count_at_chains; the pass is
 * kept for the ranks.
 */
static void u_pass(struct ranker *rk, u128 *u2_out, double *ties_out,
                   int *no_ties_out)
{
    const struct hrs_wsample *x = rk->x, *y = rk->y;
    const double *xv = x->v, *yp = rk->sc.ypad + 1;
    const uint64_t *xw = x->w, *wc = rk->sc.wcum;
    const size_t *pos = rk->sc.pos;
    uint64_t u2 = 0, ties = rk->ties_y, c = 0;
    double a = -INFINITY, b = INFINITY;
    struct eval e;

    chains_positions(x, y, &rk->sc, 0);
    for (size_t r = 0; r < x->n; r++) {
        size_t p = pos[r], q = p > 0 ? p - 1 : 0;
        double da = yp[(ptrdiff_t)p - 1] - xv[r], db = yp[p] - xv[r];
        uint64_t wa = xw[r], le = wc[p];
        /* The weight of y[p - 1] when it equals x[i], else 0. */
        uint64_t wb = (le - wc[q]) & -(uint64_t)(da == 0);

        /* Pairs y > x count 2, y = x count 1. */
        u2 += wa * (2 * (y->total - le) + wb);
        ties += wa * wa * wa - wa + 3 * wa * wb * (wa + wb);
        c += wa * le;
        a = da > a ? da : a;
        b = db < b ? db : b;
    }
    e = (struct eval){ 0, c, a, b };
    ranker_keep(rk, &e);
    rk->have_pos = 1;
    *u2_out = u2;
    *ties_out = (double)ties;
    *no_ties_out = ties == 0;
}

int hrs_signif_compare(const struct hrs_wsample *base,
                       const struct hrs_wsample *new,
                       struct hrs_signif *out)
{
    const struct hrs_wsample *x = base, *y = new;
    u128 u2;          /* 2U, a whole number */
    double ties;
    double n = (double)x->total, m = (double)y->total;
    double nm = n * m, big_n = n + m;
    uint64_t pairs = x->total * y->total;
    struct ranker rk;
    int no_ties;
    uint64_t kq; /* 1-based rank of the interval's lower bound */

    if (ranker_init(&rk, x, y) != 0) {
        ranker_fini(&rk);
        return -ENOMEM;
    }
    if (rk.sc.pos != NULL && x->total <= U_PASS_MAX &&
        y->total <= U_PASS_MAX - x->total)
        u_pass(&rk, &u2, &ties, &no_ties);
    else
        u_merge(x, y, &u2, &ties, &no_ties);
    out->u = (double)u2 / 2;
    out->z = 0;
    if (no_ties && x->total < HRS_SIGNIF_EXACT_N &&
        y->total < HRS_SIGNIF_EXACT_N) {
        long double *f = u_distribution(x->total, y->total);
        long double all = 0, le = 0, ge = 0, cum = 0;
        uint64_t ui = (uint64_t)out->u;

        if (f == NULL) {
            ranker_fini(&rk);
            return -ENOMEM;
        }
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
