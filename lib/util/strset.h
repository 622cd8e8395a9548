/*
 * A table of distinct strings, each copied once and numbered in the order
 * first added: what a program that reads many rows naming few things
 * (runs, machines, nodes) holds instead of a copy per row. String i is
 * v[i]; its address stays as it is while the table grows.
 */
#ifndef HOSTRANGE_UTIL_STRSET_H
#define HOSTRANGE_UTIL_STRSET_H

#include <stddef.h>

/* Zeroed: an empty table. slot holds i + 1 of string i at its hash's
 * place (open addressing, at most half full), 0 where free. */
struct hru_strset {
    char **v;
    size_t n, cap;
    size_t *slot;
    size_t nslot;
};

/* Sets *out to the number of s in t. Returns 0, or -ENOENT when t does
 * not hold it. */
int hru_strset_find(const struct hru_strset *t, const char *s, size_t *out);

/* Sets *out to the number of s in t, adding a copy when t does not hold
 * it. Returns 0 or -ENOMEM (t then as it was). */
int hru_strset_add(struct hru_strset *t, const char *s, size_t *out);

/* Frees t's strings and arrays; t is then empty (zeroed). */
void hru_strset_fini(struct hru_strset *t);

#endif
