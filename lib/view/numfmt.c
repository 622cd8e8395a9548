/* Numbers in the report's style (see numfmt.h). */
#include "config.h"

#include "lib/view/numfmt.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Rounds a > 0 to p significant digits and returns them as an integer
 * mantissa and a power of ten: a ~= *mant * 10^*e10. The digits come from
 * printf, which rounds correctly, so this is the nearest p-digit decimal.
 */
static void round_to(double a, int p, uint64_t *mant, int *e10)
{
    char tmp[40];
    const char *s;
    uint64_t m = 0;

    snprintf(tmp, sizeof(tmp), "%.*e", p - 1, a);
    for (s = tmp; *s != '\0' && *s != 'e'; s++) {
        if (*s >= '0' && *s <= '9')
            m = m * 10 + (uint64_t)(*s - '0');
    }
    *mant = m;
    *e10 = (*s == 'e' ? (int)strtol(s + 1, NULL, 10) : 0) - (p - 1);
}

/* Reads mant * 10^e10 back as a double. The text has no decimal point, so
 * the locale's radix character does not matter. */
static double read_back(uint64_t mant, int e10)
{
    char tmp[48];

    snprintf(tmp, sizeof(tmp), "%" PRIu64 "e%d", mant, e10);
    return strtod(tmp, NULL);
}

/*
 * Finds the shortest decimal that reads back as a > 0, and among those the
 * nearest to a, like David Gay's shortest mode behind Python's repr. The
 * nearest p-digit decimal is tried first. At a power of two the doubles
 * below a are twice as dense as those above, so that decimal can fall out
 * below while the next p-digit decimal above still reads back as a; that
 * one is tried too. Seventeen digits always suffice.
 */
static void shortest(double a, uint64_t *mant, int *e10)
{
    uint64_t m = 0;
    int e = 0;
    int p;
    double r;

    for (p = 1; p <= 17; p++) {
        round_to(a, p, &m, &e);
        r = read_back(m, e);
        if (r == a)
            break;
        if (r < a && read_back(m + 1, e) == a) {
            m++;
            break;
        }
    }
    while (m != 0 && m % 10 == 0) {
        m /= 10;
        e++;
    }
    *mant = m;
    *e10 = e;
}

/* Lays out a digit string d (no trailing zeros) whose first digit stands
 * for 10^exp, in Python's repr style. Returns the length written; out must
 * hold 32 bytes. */
static int layout(char *out, int neg, const char *d, int exp)
{
    int n = (int)strlen(d);
    int k = 0;
    int i;

    if (neg)
        out[k++] = '-';
    if (exp < -4 || exp >= 16) {
        out[k++] = d[0];
        if (n > 1) {
            out[k++] = '.';
            for (i = 1; i < n; i++)
                out[k++] = d[i];
        }
        k += sprintf(out + k, "e%c%02d", exp < 0 ? '-' : '+', abs(exp));
        return k;
    }
    if (exp < 0) {
        out[k++] = '0';
        out[k++] = '.';
        for (i = 0; i < -exp - 1; i++)
            out[k++] = '0';
        for (i = 0; i < n; i++)
            out[k++] = d[i];
    } else {
        for (i = 0; i <= exp; i++)
            out[k++] = i < n ? d[i] : '0';
        out[k++] = '.';
        if (n <= exp + 1)
            out[k++] = '0';
        for (i = exp + 1; i < n; i++)
            out[k++] = d[i];
    }
    out[k] = '\0';
    return k;
}

int hrv_format_number(char *buf, size_t len, double v)
{
    char tmp[32];
    char digits[24];
    uint64_t mant;
    int e10, n;

    if (isnan(v)) {
        n = sprintf(tmp, "nan");
    } else if (isinf(v)) {
        n = sprintf(tmp, "%sinf", v < 0 ? "-" : "");
    } else if (v == 0) {
        n = sprintf(tmp, "%s0.0", signbit(v) ? "-" : "");
    } else {
        shortest(fabs(v), &mant, &e10);
        n = sprintf(digits, "%" PRIu64, mant);
        n = layout(tmp, v < 0, digits, n - 1 + e10);
    }
    if ((size_t)n >= len)
        return -1;
    memcpy(buf, tmp, (size_t)n + 1);
    return n;
}
