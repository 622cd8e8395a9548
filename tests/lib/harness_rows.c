/* The flat JSON object reader of the tests (see harness_rows.h). */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/lib/harness_rows.h"

/* Parses one line; returns 0, or -1 when it is not a flat object. */
int flat_parse(const char *s, struct flat *out)
{
    size_t k;
    char *dst;

    out->n = 0;
    if (*s++ != '{')
        return -1;
    for (;;) {
        if (out->n == 24 || *s++ != '"')
            return -1;
        for (k = 0; *s != '"'; k++) {
            if (*s == '\0' || k + 1 >= sizeof(out->key[0]))
                return -1;
            out->key[out->n][k] = *s++;
        }
        out->key[out->n][k] = '\0';
        s++;
        if (*s++ != ':')
            return -1;
        dst = out->val[out->n];
        k = 0;
        if (*s == '"') {
            for (s++; *s != '"'; s++) {
                char c = *s;

                if (c == '\0' || k + 1 >= sizeof(out->val[0]))
                    return -1;
                if (c == '\\') {
                    s++;
                    c = *s == 'n' ? '\n' : *s == 't' ? '\t'
                        : *s == 'r' ? '\r' : *s;
                    if (c == 'u' || c == '\0')
                        return -1;
                }
                dst[k++] = c;
            }
            s++;
        } else {
            while (*s != ',' && *s != '}') {
                if (*s == '\0' || k + 1 >= sizeof(out->val[0]))
                    return -1;
                dst[k++] = *s++;
            }
        }
        dst[k] = '\0';
        out->n++;
        if (*s == '}')
            return s[1] == '\0' ? 0 : -1;
        if (*s++ != ',')
            return -1;
    }
}

int flat_parse_rows(const char *text, struct flat *rows, int max)
{
    int n = 0;

    while (*text != '\0') {
        const char *nl = strchr(text, '\n');
        char line[4096];
        size_t len;

        assert_non_null(nl);
        len = (size_t)(nl - text);
        assert_true(len < sizeof line);
        assert_true(n < max);
        memcpy(line, text, len);
        line[len] = '\0';
        if (flat_parse(line, &rows[n]) != 0)
            fail_msg("not a report row: %s", line);
        n++;
        text = nl + 1;
    }
    return n;
}

const char *flat_get(const struct flat *f, const char *key)
{
    int i;

    for (i = 0; i < f->n; i++) {
        if (strcmp(f->key[i], key) == 0)
            return f->val[i];
    }
    fail_msg("no field %s", key);
    return NULL;
}


unsigned long long flat_node_count(const struct flat *rows, int n,
                                   const char *node)
{
    unsigned long long sum = 0;

    for (int i = 0; i < n; i++) {
        if (strcmp(flat_get(&rows[i], "nodeid"), node) == 0 &&
            strcmp(flat_get(&rows[i], "metric"), "inclusive") == 0)
            sum += strtoull(flat_get(&rows[i], "count"), NULL, 10);
    }
    return sum;
}

unsigned long long flat_node_lost(const struct flat *rows, int n,
                                  const char *node)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(flat_get(&rows[i], "nodeid"), node) == 0)
            return strtoull(flat_get(&rows[i], "lost"), NULL, 10);
    }
    return 0;
}
