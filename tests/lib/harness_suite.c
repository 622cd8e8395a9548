/* A made-up history of a suite (see harness_suite.h). */
#include "config.h"

#include "tests/lib/harness_suite.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static double uniform(uint64_t *st)
{
    /* splitmix64 */
    uint64_t z = (*st += 0x9E3779B97F4A7C15ull);

    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

static double gauss(uint64_t *st)
{
    return sqrt(-2 * log(uniform(st))) * cos(2 * M_PI * uniform(st));
}

/* A warm value: a median of many samples, to the nearest step, one in
 * five on a half step. */
static double warm_read(double v, uint64_t *st)
{
    double q = v / HARNESS_SUITE_STEP_NS;

    if (uniform(st) < 0.2)
        return (floor(q) + 0.5) * HARNESS_SUITE_STEP_NS;
    return fmax(0, nearbyint(q)) * HARNESS_SUITE_STEP_NS;
}

/* A cold value: one sample, the difference of two clock reads. */
static double cold_read(double v, uint64_t *st)
{
    return fmax(0, nearbyint(v / HARNESS_SUITE_STEP_NS + uniform(st) - 0.5)) *
           HARNESS_SUITE_STEP_NS;
}

int harness_suite_each(const struct harness_suite *s,
                       int (*fn)(void *ctx, const char *const *key,
                                 const double *x, size_t n),
                       void *ctx)
{
    enum { L = HARNESS_SUITE_LAYERS };
    static const char *const phases[2] = { "cold", "warm" };
    static const char *const metrics[2] = { "inclusive", "self" };
    uint64_t st = s->seed * 0x2545F4914F6CDD1Dull + 1;
    double *runf = malloc(s->runs * sizeof *runf);
    double *x = malloc(HARNESS_SUITE_SERIES * s->runs * sizeof *x);
    int rc = 0;

    if (runf == NULL || x == NULL) {
        free(runf);
        free(x);
        return -1;
    }
    for (size_t r = 0; r < s->runs; r++)
        runf[r] = exp(s->run_sd * gauss(&st));
    for (size_t nd = 0; nd < s->nodes && rc == 0; nd++) {
        double self[2][L], add[L];
        char node[32], range[L][16];
        double *v = x;

        snprintf(node, sizeof node, "n%zu", nd);
        for (int i = 0; i < L; i++) {
            self[1][i] = 15 * exp(log(400.0 / 15) * uniform(&st));
            self[0][i] = self[1][i] * (3 + 17 * uniform(&st));
            snprintf(range[i], sizeof range[i], "layer%d", i);
        }
        for (size_t r = 0; r < s->runs; r++) {
            double nf = runf[r] * exp(s->run_sd / 2 * gauss(&st));

            for (int i = 0; i < L; i++) {
                double top = 0;

                add[i] = 0;
                for (size_t k = 0; k < s->nsteps; k++) {
                    if (s->steps[k].node != nd || s->steps[k].layer != (size_t)i ||
                        r < s->steps[k].run)
                        continue;
                    for (int j = 0; j < L; j++)
                        top += self[1][j];
                    add[i] += s->steps[k].share * top;
                }
            }
            for (int ph = 0; ph < 2; ph++) {
                double incl = 0, sv[L], iv[L];

                for (int i = L; i-- > 0;) {
                    double t = (self[ph][i] + add[i]) * nf;
                    double out;

                    if (ph == 1) {
                        out = t * exp(0.003 * gauss(&st));
                    } else {
                        out = t * exp(0.05 * gauss(&st));
                        if (uniform(&st) < 1.0 / 30)
                            out *= 1 + 2 * uniform(&st);
                    }
                    sv[i] = out;
                    incl += out;
                    iv[i] = incl;
                }
                for (int i = 0; i < L; i++) {
                    size_t base = ((size_t)ph * L + (size_t)i) * 2;

                    v[(base + 0) * s->runs + r] =
                        ph ? warm_read(iv[i], &st) : cold_read(iv[i], &st);
                    v[(base + 1) * s->runs + r] =
                        ph ? warm_read(sv[i], &st) : cold_read(sv[i], &st);
                }
            }
        }
        for (int ph = 0; ph < 2 && rc == 0; ph++) {
            for (int i = 0; i < L && rc == 0; i++) {
                for (int m = 0; m < 2 && rc == 0; m++) {
                    size_t base = ((size_t)ph * L + (size_t)i) * 2 + (size_t)m;
                    const char *key[6] = { node, "gemm", "cpu", phases[ph],
                                           range[i], metrics[m] };

                    rc = fn(ctx, key, v + base * s->runs, s->runs);
                }
            }
        }
    }
    free(runf);
    free(x);
    return rc;
}
