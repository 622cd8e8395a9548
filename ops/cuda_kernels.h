/*
 * cuda_kernels.h: what the CUDA C kernels (cuda_add_kernel.cu, built by
 * nvcc: Add, and the scaling of GEMM's k = 0) offer the C files of the
 * library.
 */
#ifndef HROPS_CUDA_KERNELS_H
#define HROPS_CUDA_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "ops/ops.h"

/*
 * Launch out = a + b for `n` elements on the current device's legacy
 * default stream, with `grid` blocks of `block` threads; one function per
 * dtype (float, double, __half, __nv_bfloat16). meta is the plan's layout in
 * device memory, read by the kernel unless `contiguous`. They do not wait;
 * they return 0, or -EIO when the launch fails.
 */
typedef int hrops__cuda_add_fn(int contiguous, int64_t n, unsigned grid,
                               unsigned block,
                               const struct hrops__add_layout *meta,
                               const void *a, const void *b, void *out);
hrops__cuda_add_fn hrops__cuda_add_f32, hrops__cuda_add_f64,
    hrops__cuda_add_f16, hrops__cuda_add_bf16;

/*
 * Launch c = beta * c on the current device's legacy default stream, for
 * `batch` matrices of m x n elements with element strides sc[0] (between
 * matrices), sc[1] (rows) and sc[2] (columns); with beta == 0, c is only
 * written (zeros). The GEMM of an empty inner dimension (k = 0). One
 * function per dtype (float, __half, __nv_bfloat16); they do not wait and
 * return 0, or -EIO when the launch fails.
 */
typedef int hrops__cuda_scale_fn(int64_t batch, int64_t m, int64_t n,
                                 const int64_t sc[3], float beta, void *c);
hrops__cuda_scale_fn hrops__cuda_scale_f32, hrops__cuda_scale_f16,
    hrops__cuda_scale_bf16;

#ifdef __cplusplus
}
#endif

#endif /* HROPS_CUDA_KERNELS_H */
