/* A table of distinct strings (strset.h). */
#include "config.h"

#include "lib/util/strset.h"
#include "lib/util/grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* FNV-1a. */
static size_t str_hash(const char *s)
{
    size_t h = 14695981039346656037ULL;

    for (; *s != '\0'; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* The slot of s in t: where it is, or the free one where it would go. */
static size_t slot_of(const struct hru_strset *t, const char *s)
{
    size_t i = str_hash(s) & (t->nslot - 1);

    while (t->slot[i] != 0 && strcmp(t->v[t->slot[i] - 1], s) != 0)
        i = (i + 1) & (t->nslot - 1);
    return i;
}

int hru_strset_find(const struct hru_strset *t, const char *s, size_t *out)
{
    size_t i;

    if (t->nslot == 0)
        return -ENOENT;
    i = slot_of(t, s);
    if (t->slot[i] == 0)
        return -ENOENT;
    *out = t->slot[i] - 1;
    return 0;
}

int hru_strset_add(struct hru_strset *t, const char *s, size_t *out)
{
    size_t i;

    if (2 * (t->n + 1) > t->nslot) {
        size_t nslot = t->nslot ? 2 * t->nslot : 64;
        size_t *slot = calloc(nslot, sizeof *slot), *old = t->slot;

        if (slot == NULL)
            return -ENOMEM;
        t->slot = slot;
        t->nslot = nslot;
        for (size_t k = 0; k < t->n; k++)
            t->slot[slot_of(t, t->v[k])] = k + 1;
        free(old);
    }
    i = slot_of(t, s);
    if (t->slot[i] == 0) {
        if (hru_grow(&t->v, &t->cap, t->n + 1, sizeof *t->v, 64) != 0)
            return -ENOMEM;
        if ((t->v[t->n] = strdup(s)) == NULL)
            return -ENOMEM;
        t->slot[i] = ++t->n;
    }
    *out = t->slot[i] - 1;
    return 0;
}

void hru_strset_fini(struct hru_strset *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i]);
    free(t->v);
    free(t->slot);
    memset(t, 0, sizeof *t);
}
