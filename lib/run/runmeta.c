/* A run's meta pairs (see runmeta.h). */
#include "config.h"

#include "lib/run/runmeta.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int hrr_meta_add(struct hrr_meta *m, const char *key, size_t keylen,
                     const char *value)
{
    Hostrange__RunMeta **nm = realloc(m->pairs, (m->n + 1) * sizeof *nm);
    Hostrange__RunMeta *p = nm != NULL ? malloc(sizeof *p) : NULL;

    if (nm != NULL)
        m->pairs = nm;
    if (p == NULL)
        return -ENOMEM;
    hostrange__run_meta__init(p);
    p->key = strndup(key, keylen);
    p->value = strdup(value);
    if (p->key == NULL || p->value == NULL) {
        free(p->key);
        free(p->value);
        free(p);
        return -ENOMEM;
    }
    nm[m->n++] = p;
    return 0;
}

int hrr_meta_with(struct hrr_meta *to, const struct hrr_meta *from,
                      const char *key, const char *value)
{
    memset(to, 0, sizeof *to);
    to->borrowed = 1;
    to->pairs = malloc((from->n + 1) * sizeof *to->pairs);
    if (to->pairs == NULL)
        return -ENOMEM;
    if (from->n > 0)
        memcpy(to->pairs, from->pairs, from->n * sizeof *to->pairs);
    to->n = from->n;
    if (key != NULL) {
        hostrange__run_meta__init(&to->extra);
        to->extra.key = (char *)key;
        to->extra.value = (char *)value;
        to->pairs[to->n++] = &to->extra;
    }
    return 0;
}

const char *hrr_meta_key(const struct hrr_meta *m, size_t i)
{
    return m->pairs[i]->key;
}

const char *hrr_meta_value(const struct hrr_meta *m, size_t i)
{
    return m->pairs[i]->value;
}

void hrr_meta_fini(struct hrr_meta *m)
{
    if (m == NULL)
        return;
    for (size_t i = 0; !m->borrowed && i < m->n; i++) {
        free(m->pairs[i]->key);
        free(m->pairs[i]->value);
        free(m->pairs[i]);
    }
    free(m->pairs);
    m->pairs = NULL;
    m->n = 0;
}
