/*
 * A flat JSON object as the report writes it: string values (with the simple
 * escapes) and bare tokens (numbers, true, false), kept as text in the order
 * they appear. Used by the tests to read report rows.
 */
#ifndef HOSTRANGE_TESTS_HARNESS_ROWS_H
#define HOSTRANGE_TESTS_HARNESS_ROWS_H

struct flat {
    int n;
    char key[24][32];
    char val[24][512];
};

/* Parses one line (without its newline); returns 0, or -1 when it is not a
 * flat object. */
int flat_parse(const char *s, struct flat *out);

/* Parses report text, one row per line, each line ending in a newline,
 * into rows[0..max); returns their number. Fails the running cmocka test on
 * a line that is not a flat object or when there are more than max. */
int flat_parse_rows(const char *text, struct flat *rows, int max);

/* The value of `key`; fails the running cmocka test when it is absent. */
const char *flat_get(const struct flat *f, const char *key);

/* Of report rows[0..n) (with --fields all for the second): the sum of the
 * counts of node id `node`'s inclusive rows, and the events the clients
 * lost under it (its rows' `lost`; 0 when it has no row). */
unsigned long long flat_node_count(const struct flat *rows, int n,
                                   const char *node);
unsigned long long flat_node_lost(const struct flat *rows, int n,
                                  const char *node);

#endif
