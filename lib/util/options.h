/*
 * What hostranged and hostrangectl read from their command lines the same
 * way: sizes and counts with an optional K, M or G suffix (powers of
 * 1024), and the option getopt complained about. Pure logic, no output:
 * each program words its own messages and exit statuses.
 */
#ifndef HOSTRANGE_UTIL_OPTIONS_H
#define HOSTRANGE_UTIL_OPTIONS_H

#include <stdint.h>

/*
 * Reads v, a whole number of decimal digits, followed, when `suffix` is
 * set, by at most one of K, M or G (either case). On success stores it in
 * *out and returns 0; returns -EINVAL for anything else, and -ERANGE for
 * a number outside [min, max].
 */
int hru_parse_size(const char *v, int suffix, uint64_t min, uint64_t max,
                   uint64_t *out);

/*
 * The option getopt_long() stopped at, as the user should read it: for an
 * unknown short option inside a word of several ("-xv", "-t5"; c is '?'
 * and optopt the letter), "-x" written to buf (3 bytes); otherwise arg,
 * the word it stopped at.
 */
const char *hru_getopt_culprit(int c, int optopt_value, const char *arg,
                               char buf[3]);

#endif
