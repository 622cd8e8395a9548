/*
 * The cases of hostrange-bench: names, shapes, cases files and node ids.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"

const char *bench_op_name(int op)
{
    return op == BENCH_ADD ? "add" : op == BENCH_GEMM ? "gemm" : "?";
}

const char *bench_backend_name(int backend)
{
    return backend == BENCH_CPU    ? "cpu"
           : backend == BENCH_CUDA ? "nvidia"
                                   : "?";
}

int bench_op_parse(const char *s)
{
    return strcmp(s, "add") == 0 ? BENCH_ADD
           : strcmp(s, "gemm") == 0 ? BENCH_GEMM
                                    : -1;
}

int bench_backend_parse(const char *s)
{
    return strcmp(s, "cpu") == 0                                ? BENCH_CPU
           : strcmp(s, "nvidia") == 0 || strcmp(s, "cuda") == 0 ? BENCH_CUDA
                                                                : -1;
}

int bench_dtype_parse(const char *s)
{
    for (int t = 0; t < HROPS_NDTYPES; t++) {
        if (strcmp(s, hrops_dtype_name(t)) == 0)
            return t;
    }
    return -1;
}

int bench_trans_parse(const char *s)
{
    return strcmp(s, "none") == 0 ? 0
           : strcmp(s, "a") == 0 ? HROPS_TRANS_A
           : strcmp(s, "b") == 0 ? HROPS_TRANS_B
           : strcmp(s, "ab") == 0 ? HROPS_TRANS_A | HROPS_TRANS_B
                                  : -1;
}

void bench_case_default(struct bench_case *c, int op)
{
    memset(c, 0, sizeof *c);
    c->op = op;
    c->backend = BENCH_ANY;
    c->dtype = HROPS_FLOAT32;
    bench_case_shape(c, op == BENCH_ADD ? "13x4" : "4x48x64,4x64x6");
    c->is_default = 1;
}

/* Parses "AxBxC" (or "" for a scalar) into dims; returns the rank or -1. */
static int parse_dims(const char *s, size_t len, int64_t *dims)
{
    int n = 0;
    size_t i = 0;

    if (len == 0)
        return 0;
    while (i < len) {
        int64_t v = 0;
        size_t start = i;

        while (i < len && isdigit((unsigned char)s[i])) {
            if (v > (INT64_MAX - 9) / 10)
                return -1;
            v = v * 10 + (s[i] - '0');
            i++;
        }
        if (i == start || n == HROPS_MAX_RANK)
            return -1;
        dims[n++] = v;
        if (i < len) {
            if (s[i] != 'x' || i + 1 == len)
                return -1;
            i++;
        }
    }
    return n;
}

int bench_case_shape(struct bench_case *c, const char *text)
{
    const char *comma = strchr(text, ',');
    size_t len0 = comma != NULL ? (size_t)(comma - text) : strlen(text);
    int n0, n1;

    if (strlen(text) >= sizeof c->shape_text)
        return -EINVAL;
    n0 = parse_dims(text, len0, c->shape[0]);
    if (n0 < 0)
        return -EINVAL;
    if (comma != NULL) {
        if (strchr(comma + 1, ',') != NULL)
            return -EINVAL;
        n1 = parse_dims(comma + 1, strlen(comma + 1), c->shape[1]);
        if (n1 < 0)
            return -EINVAL;
    } else {
        if (c->op == BENCH_GEMM)
            return -EINVAL;
        n1 = n0;
        memcpy(c->shape[1], c->shape[0], sizeof c->shape[0]);
    }
    c->ndim[0] = n0;
    c->ndim[1] = n1;
    snprintf(c->shape_text, sizeof c->shape_text, "%s", text);
    for (char *p = c->shape_text; *p != '\0'; p++) {
        if (*p == ',')
            *p = '-';
    }
    c->is_default = 0;
    return 0;
}

int bench_case_check(const struct bench_case *c, char *err, size_t errlen)
{
    if (c->op == BENCH_ADD) {
        int nd = c->ndim[0] > c->ndim[1] ? c->ndim[0] : c->ndim[1];

        if (c->flags != 0) {
            snprintf(err, errlen, "add takes no transpose");
            return -EINVAL;
        }
        for (int d = 0; d < nd; d++) {
            int da = d - (nd - c->ndim[0]), db = d - (nd - c->ndim[1]);
            int64_t la = da >= 0 ? c->shape[0][da] : 1;
            int64_t lb = db >= 0 ? c->shape[1][db] : 1;

            if (la != lb && la != 1 && lb != 1) {
                snprintf(err, errlen, "shapes %s do not broadcast",
                         c->shape_text);
                return -EINVAL;
            }
        }
        return 0;
    }
    {
        int r = c->ndim[0];
        int ta = c->flags & HROPS_TRANS_A, tb = c->flags & HROPS_TRANS_B;
        int64_t ka, kb;

        if ((r != 2 && r != 3) || c->ndim[1] != r ||
            (r == 3 && c->shape[0][0] != c->shape[1][0])) {
            snprintf(err, errlen, "gemm needs two shapes of rank 2, or of "
                     "rank 3 with one batch length: %s", c->shape_text);
            return -EINVAL;
        }
        ka = ta ? c->shape[0][r - 2] : c->shape[0][r - 1];
        kb = tb ? c->shape[1][r - 1] : c->shape[1][r - 2];
        if (ka != kb) {
            snprintf(err, errlen, "gemm shapes %s do not multiply (inner "
                     "lengths %lld and %lld)", c->shape_text, (long long)ka,
                     (long long)kb);
            return -EINVAL;
        }
        return 0;
    }
}

int bench_case_line(const char *line, struct bench_case *c, char *err,
                    size_t errlen)
{
    char buf[1024], *save = NULL, *tok;
    const char *shape = NULL;
    int op = -1, backend = BENCH_ANY, dtype = HROPS_FLOAT32, flags = 0;
    char *hash;
    int tokens = 0;

    if (strlen(line) >= sizeof buf) {
        snprintf(err, errlen, "line too long");
        return -EINVAL;
    }
    snprintf(buf, sizeof buf, "%s", line);
    hash = strchr(buf, '#');
    if (hash != NULL)
        *hash = '\0';
    for (tok = strtok_r(buf, " \t\r\n", &save); tok != NULL;
         tok = strtok_r(NULL, " \t\r\n", &save)) {
        char *eq = strchr(tok, '=');
        const char *v;

        tokens++;
        if (eq == NULL) {
            snprintf(err, errlen, "'%s' is not KEY=VALUE", tok);
            return -EINVAL;
        }
        *eq = '\0';
        v = eq + 1;
        if (strcmp(tok, "op") == 0 && (op = bench_op_parse(v)) >= 0)
            continue;
        if (strcmp(tok, "backend") == 0 &&
            (backend = bench_backend_parse(v)) >= 0)
            continue;
        if (strcmp(tok, "dtype") == 0 && (dtype = bench_dtype_parse(v)) >= 0)
            continue;
        if (strcmp(tok, "trans") == 0 && (flags = bench_trans_parse(v)) >= 0)
            continue;
        if (strcmp(tok, "shape") == 0) {
            shape = line + (v - buf);
            continue;
        }
        snprintf(err, errlen, "bad %s '%s'", tok, v);
        return -EINVAL;
    }
    if (tokens == 0)
        return 0;               /* blank or comment */
    if (op < 0) {
        snprintf(err, errlen, "no op=add or op=gemm");
        return -EINVAL;
    }
    bench_case_default(c, op);
    c->backend = backend;
    if (shape != NULL) {
        char s[sizeof c->shape_text];
        size_t n = strcspn(shape, " \t\r\n#");

        if (n >= sizeof s || (memcpy(s, shape, n), s[n] = '\0',
                              bench_case_shape(c, s) != 0)) {
            snprintf(err, errlen, "bad shape '%.*s'", (int)(n < 64 ? n : 64),
                     shape);
            return -EINVAL;
        }
    }
    if (dtype != HROPS_FLOAT32 || flags != 0)
        c->is_default = 0;
    c->dtype = dtype;
    c->flags = flags;
    if (bench_case_check(c, err, errlen) != 0)
        return -EINVAL;
    return 1;
}

void bench_node_id(const struct bench_case *c, char *buf, size_t len)
{
    static const char *const trans[4] = { "", "-ta", "-tb", "-tab" };

    snprintf(buf, len, "ops/%s[%s-%s-%s%s]", bench_op_name(c->op),
             bench_backend_name(c->backend), hrops_dtype_name(c->dtype),
             c->shape_text, trans[c->flags & 3]);
}

void bench_raw_name(const struct bench_case *c, char *buf, size_t len)
{
    static const char *const trans[4] = { "", "-ta", "-tb", "-tab" };

    if (c->is_default)
        snprintf(buf, len, "ops.%s.%s.e2e", bench_op_name(c->op),
                 bench_backend_name(c->backend));
    else
        snprintf(buf, len, "ops.%s.%s.%s-%s%s.e2e", bench_op_name(c->op),
                 bench_backend_name(c->backend), hrops_dtype_name(c->dtype),
                 c->shape_text, trans[c->flags & 3]);
}

void bench_control_name(const struct bench_case *c, char *buf, size_t len)
{
    static const char *const trans[4] = { "", "-ta", "-tb", "-tab" };

    if (c->is_default)
        snprintf(buf, len, "control.%s.%s", bench_op_name(c->op),
                 bench_backend_name(c->backend));
    else
        snprintf(buf, len, "control.%s.%s.%s-%s%s", bench_op_name(c->op),
                 bench_backend_name(c->backend), hrops_dtype_name(c->dtype),
                 c->shape_text, trans[c->flags & 3]);
}
