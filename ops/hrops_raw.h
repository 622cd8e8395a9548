/*
 * hrops_raw.h: the bare backend work of a call, for the benchmark's
 * baseline (hostrange-bench --raw). Not part of the installed interface of
 * libhrops: a handle holds a prepared operator outside the cache, with its
 * data pointers bound once, so running it measures the backend alone.
 */
#ifndef HROPS_RAW_H
#define HROPS_RAW_H

#include "ops/hrops.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The bare backend work of a call, for benchmarks: hrops_raw_add_new and
 * hrops_raw_gemm_new check their arguments as the operators do, construct
 * the prepared operator (outside the cache) and bind the data pointers once;
 * hrops_raw_run then does only what backend.submit does (the CPU loop, the
 * kernel launch or cublasLtMatmul), through no layer and no range. The
 * caller frees the handle with hrops_raw_free (NULL is accepted).
 */
typedef struct hrops_raw hrops_raw;

HROPS_API int hrops_raw_add_new(const hrops_array *a, const hrops_array *b,
                                const hrops_array *out, const char *device,
                                int impl, hrops_raw **out_raw);
HROPS_API int hrops_raw_gemm_new(const hrops_array *a, const hrops_array *b,
                                 const hrops_array *c, double alpha,
                                 double beta, int flags, const char *device,
                                 int impl, hrops_raw **out_raw);
HROPS_API int hrops_raw_run(hrops_raw *raw);
HROPS_API void hrops_raw_free(hrops_raw *raw);

#ifdef __cplusplus
}
#endif

#endif /* HROPS_RAW_H */
