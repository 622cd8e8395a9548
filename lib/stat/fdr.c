/* The false discovery rate over a look's series (see fdr.h). */
#include "config.h"

#include "lib/stat/fdr.h"

#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

double hrs_fdr_level(double *p, size_t np, size_t ntests, double q)
{
    double level = -1;

    if (np == 0 || ntests == 0)
        return level;
    qsort(p, np, sizeof *p, cmp_double);
    for (size_t k = 1; k <= np; k++) {
        if (p[k - 1] <= (double)k * q / (double)ntests)
            level = p[k - 1];
    }
    return level;
}
