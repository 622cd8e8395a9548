/* Numbers and options of the command lines (see options.h). */
#include "config.h"

#include "lib/util/options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int hru_parse_size(const char *v, int suffix, uint64_t min, uint64_t max,
                   uint64_t *out)
{
    unsigned long long n;
    char *end;
    int shift = 0;

    if (v[0] < '0' || v[0] > '9')
        return -EINVAL;
    errno = 0;
    n = strtoull(v, &end, 10);
    if (errno != 0)
        return -ERANGE;
    if (suffix && end[0] != '\0' && end[1] == '\0') {
        switch (end[0]) {
        case 'K': case 'k': shift = 10; end++; break;
        case 'M': case 'm': shift = 20; end++; break;
        case 'G': case 'g': shift = 30; end++; break;
        default: break;
        }
    }
    if (*end != '\0')
        return -EINVAL;
    if (n > (max >> shift) || ((uint64_t)n << shift) < min)
        return -ERANGE;
    *out = (uint64_t)n << shift;
    return 0;
}

const char *hru_getopt_culprit(int c, int optopt_value, const char *arg,
                               char buf[3])
{
    if (c == '?' && optopt_value > ' ' && optopt_value <= '~') {
        buf[0] = '-';
        buf[1] = (char)optopt_value;
        buf[2] = '\0';
        return buf;
    }
    return arg;
}
