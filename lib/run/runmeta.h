/*
 * A run's meta pairs (RunMeta: KEY=VALUE, --meta), as the commands that
 * write runs collect them, and the provenance they go into.
 */
#ifndef HOSTRANGE_RUNMETA_H
#define HOSTRANGE_RUNMETA_H

#include <stddef.h>

#include "proto/hostrange.pb-c.h"

/* Pairs, zeroed to start. Those added with hrr_meta_add are its own;
 * hrr_meta_with's are borrowed but for the one it adds (its strings
 * borrowed). */
struct hrr_meta {
    Hostrange__RunMeta **pairs;
    size_t n;
    Hostrange__RunMeta extra;
    int borrowed;
};

/* Adds the pair key[0..keylen)=value. Returns 0 or -ENOMEM. */
int hrr_meta_add(struct hrr_meta *m, const char *key, size_t keylen,
                     const char *value);

/* Makes *to from's pairs (borrowed) and, when key is not NULL, the pair
 * key=value after them (the strings borrowed). Returns 0 or -ENOMEM. */
int hrr_meta_with(struct hrr_meta *to, const struct hrr_meta *from,
                      const char *key, const char *value);

/* The key and value of pair i. */
const char *hrr_meta_key(const struct hrr_meta *m, size_t i);
const char *hrr_meta_value(const struct hrr_meta *m, size_t i);

/* Frees m's own (NULL: nothing). */
void hrr_meta_fini(struct hrr_meta *m);

#endif
