/*
 * Numbers in the report's style: the shortest decimal text that reads back
 * as the same double, as Python's repr writes it. Pure logic, no I/O; the
 * report formats (report.h) and hostrangectl's own output use it.
 */
#ifndef HOSTRANGE_NUMFMT_H
#define HOSTRANGE_NUMFMT_H

#include <stddef.h>

/*
 * Writes v to buf as the shortest decimal text that parses back to the same
 * double, Python repr style: "775383.0", "10765.666666666666", "6947.5",
 * "1e+16", "1.5e-05", "nan", "inf", "-inf". Returns the length written (not
 * counting the NUL), or -1 when len is too small (32 bytes always suffice).
 */
int hrv_format_number(char *buf, size_t len, double v);

#endif
