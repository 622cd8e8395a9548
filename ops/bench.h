/*
 * bench.h: the cases of hostrange-bench and the daemon it reports to.
 *
 * A case is one operator (add or gemm) with one dtype, operand shapes and
 * transposes, on one backend (cpu or cuda) or, before expansion, on every
 * backend available. Add's shapes are a's and b's (out is their broadcast);
 * GEMM's are a's and b's as stored (c follows from them and the transposes).
 */
#ifndef HROPS_BENCH_H
#define HROPS_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "ops/hrops.h"

#define BENCH_ADD 1
#define BENCH_GEMM 2

#define BENCH_ANY 0     /* no backend named: every one available */
#define BENCH_CPU 1
#define BENCH_CUDA 2

struct bench_case {
    int op;
    int backend;
    int dtype;
    int flags;                          /* HROPS_TRANS_A, HROPS_TRANS_B */
    int ndim[2];
    int64_t shape[2][HROPS_MAX_RANK];
    int is_default;                     /* the default dtype and shapes */
    char shape_text[160];               /* "13x4", "4x48x64-4x64x6" */
};

/* The names of ops, backends and dtypes, and back (-1: unknown). */
const char *bench_op_name(int op);
const char *bench_backend_name(int backend);
int bench_op_parse(const char *s);
int bench_backend_parse(const char *s);
int bench_dtype_parse(const char *s);
int bench_trans_parse(const char *s);

/* The default case of op (float32; add 13x4, gemm 4x48x64,4x64x6). */
void bench_case_default(struct bench_case *c, int op);

/*
 * Sets c's shapes from text: shapes separated by ',' and dimensions by
 * 'x' ("13x4", "13x4,1x4", "4x48x64,4x64x6"); add takes one shape (a and b
 * alike) or two, gemm two. Returns 0 or -EINVAL.
 */
int bench_case_shape(struct bench_case *c, const char *text);

/* Checks that the shapes fit the op and dtype (as the operators will); 0 or
 * -EINVAL with a reason in err. */
int bench_case_check(const struct bench_case *c, char *err, size_t errlen);

/*
 * Parses one line of a cases file: op=OP [backend=B] [dtype=T] [shape=S]
 * [trans=T], blanks between; a blank line or a '#' comment yields nothing.
 * Returns 1 with *c filled, 0 for nothing, or -EINVAL with a reason in err.
 */
int bench_case_line(const char *line, struct bench_case *c, char *err,
                    size_t errlen);

/* The node id "ops/OP[BACKEND-DTYPE-SHAPES(-tTRANS)]". */
void bench_node_id(const struct bench_case *c, char *buf, size_t len);

/* The --raw name "ops.OP.BACKEND.e2e", with "-DTYPE-SHAPES" before ".e2e"
 * when the case is not the default one. */
void bench_raw_name(const struct bench_case *c, char *buf, size_t len);

/*
 * When the ranges are compiled in and collecting, and no hostranged answers
 * on the runtime directory the client will use, runs this program again
 * under `hostrangectl record` (which starts a private daemon and prints its
 * report, to `output` when not NULL) and does not return; returns 0 when
 * there is a daemon or nothing to report, or -1 with a message printed when
 * no daemon can be reached or started.
 */
int bench_daemon_ensure(int argc, char **argv, const char *output);

#endif /* HROPS_BENCH_H */
