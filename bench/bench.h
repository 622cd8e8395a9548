/*
 * bench.h: the cases of hostrange-bench and the daemon it reports to.
 *
 * A case is one operator (add or gemm) with one dtype, operand shapes and
 * transposes, on one backend (cpu or nvidia: CUDA devices) or, before
 * expansion, on every
 * backend available. Add's shapes are a's and b's (out is their broadcast);
 * GEMM's are a's and b's as stored (c follows from them and the transposes).
 */
#ifndef HROPS_BENCH_H
#define HROPS_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "ops/hrops.h"
#include "ops/hrops_raw.h"
#include "bench/ref.h"

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

/* The names of ops, backends and dtypes, and back (-1: unknown). The CUDA
 * backend is named "nvidia" in every report (as in the reference's); its
 * name is parsed from "nvidia" or "cuda". */
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

/* The --control name "control.OP.BACKEND", with ".DTYPE-SHAPES" after it
 * when the case is not the default one. */
void bench_control_name(const struct bench_case *c, char *buf, size_t len);

/* The arrays of one case on its device, and how to call it (bench_run.c). */
struct bench_run {
    const struct bench_case *c;
    char device[24];
    struct ref_array x[3];
    hrops_raw *raw;             /* the bare backend work, when prepared */
};

/*
 * Makes the case's arrays on its device, filled, and the reference of the
 * call's result in *ref and its error scale in *bound (both allocated; the
 * caller frees them, also on failure). Returns 0 or a negative errno;
 * bench_run_fini is needed either way.
 */
int bench_run_init(struct bench_run *r, const struct bench_case *c,
                   double **ref, double **bound);
void bench_run_fini(struct bench_run *r);

/* One call of the case through all the layers. Returns 0 or -errno. */
int bench_call(const struct bench_run *r);

/* Times `calls` calls (through the layers, or the bare work when raw) in
 * *ns; the device is synchronized before the clock starts and after it
 * stops. Returns 0 or -errno (a failed call or synchronization). */
int bench_time_block(const struct bench_run *r, unsigned calls, int raw,
                     uint64_t *ns);

/* Times blocks of 1, 2, 5, 10, 20, 50, ... calls until one takes min_ns or
 * more or has max_calls; *calls is its size (at most max_calls), *ns its
 * time. Returns 0 or -errno. */
int bench_autorange(const struct bench_run *r, uint64_t min_ns,
                    unsigned max_calls, unsigned *calls, uint64_t *ns);

/*
 * The most calls one timed block makes on the case's backend: `calls`, but
 * at most BENCH_CUDA_MAX_CALLS on CUDA. A block times host submission
 * between two synchronizations; more launches than the device's queue holds
 * would make the host wait for the device, and the block time the device.
 */
#define BENCH_CUDA_MAX_CALLS 256u
unsigned bench_block_max(const struct bench_case *c, unsigned calls);

/* The median of v[0..n), n > 0 (v is sorted in place). */
double bench_median(double *v, unsigned n);

/*
 * --control for one case (bench_control.c): `rounds` (at least 7) rounds
 * of `calls` calls with collection active (in a window of node
 * "control/" + node) and as many with it inactive, in a random order; the
 * medians of the per-call times of each condition, their ratio and its
 * bootstrap 95% confidence interval go to *out. calls 0: autoranged to a
 * round of 1 ms or more (at most max_calls); rounds 0: as many as
 * target_ms allows, from 7 to 200. Returns 0 or -errno.
 */
struct bench_control {
    double active_ns, inactive_ns, ratio, lo, hi;
    unsigned rounds, calls;
};
int bench_control_case(const struct bench_run *r, const char *node,
                       unsigned calls, unsigned rounds, unsigned target_ms,
                       unsigned max_calls, struct bench_control *out);

/*
 * --calibrate (bench_calib.c): resets the daemon's keys of node
 * `calibration` for this process's label (HOSTRANGE_LABEL, else the
 * program's name), then runs `calls` empty scopes nested three deep
 * (calibration.outer > calibration.mid > calibration.inner) in one window
 * of node `calibration` (operator: the label, backend: the clock's name),
 * and records the time of `pairs` pairs of reads of the clock in use as
 * calibration.timer. Returns 0, or -1 with a message printed.
 */
int bench_calibrate(unsigned calls, unsigned pairs);

/*
 * Runs `hostrangectl reset --node calibration --operator LABEL` (LABEL with
 * its pattern characters escaped) against the client's daemon. Returns 0,
 * or -1 with a message printed.
 */
int bench_daemon_reset_calibration(const char *label);

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
