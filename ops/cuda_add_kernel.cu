/*
 * The CUDA C kernels of Add: a flat one for contiguous operands and a
 * strided one that walks the plan's layout (uploaded once, when the plan
 * was constructed). Each thread handles elements i, i + stride, ... of the
 * output; the 16-bit types are added in float and rounded once.
 *
 * Also the kernel of GEMM with an empty inner dimension (k = 0), which
 * cuBLASLt does not take: c = beta * c, as the CPU computes it.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <errno.h>

#include "ops/cuda_kernels.h"

template <typename T> struct elem;

template <> struct elem<float> {
    typedef float acc;
    static __device__ float load(float x) { return x; }
    static __device__ float store(float x) { return x; }
};

template <> struct elem<double> {
    typedef double acc;
    static __device__ double load(double x) { return x; }
    static __device__ double store(double x) { return x; }
};

template <> struct elem<__half> {
    typedef float acc;
    static __device__ float load(__half x) { return __half2float(x); }
    static __device__ __half store(float x) { return __float2half_rn(x); }
};

template <> struct elem<__nv_bfloat16> {
    typedef float acc;
    static __device__ float load(__nv_bfloat16 x)
    {
        return __bfloat162float(x);
    }
    static __device__ __nv_bfloat16 store(float x)
    {
        return __float2bfloat16_rn(x);
    }
};

template <typename T>
__global__ void add_flat(const T *a, const T *b, T *out, int64_t n)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x;

    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step)
        out[i] = elem<T>::store(elem<T>::load(a[i]) + elem<T>::load(b[i]));
}

template <typename T>
__global__ void add_strided(const T *a, const T *b, T *out, int64_t n,
                            const struct hrops__add_layout *m)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    int nd = m->ndim;

    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step) {
        int64_t rest = i, oa = 0, ob = 0, oo = 0;

        for (int d = nd - 1; d >= 0; d--) {
            int64_t len = m->shape[d];
            int64_t x = rest % len;

            rest /= len;
            oa += x * m->stride[0][d];
            ob += x * m->stride[1][d];
            oo += x * m->stride[2][d];
        }
        out[oo] = elem<T>::store(elem<T>::load(a[oa]) + elem<T>::load(b[ob]));
    }
}

template <typename T>
static void launch(int contiguous, int64_t n, unsigned grid, unsigned block,
                   const struct hrops__add_layout *meta, const void *a,
                   const void *b, void *out)
{
    if (contiguous)
        add_flat<T><<<grid, block>>>((const T *)a, (const T *)b, (T *)out, n);
    else
        add_strided<T><<<grid, block>>>((const T *)a, (const T *)b,
                                        (T *)out, n, meta);
}

/* One C entry point per dtype, so that dispatch picks the kernel. */
#define LAUNCHER(name, T)                                                    \
    extern "C" int name(int contiguous, int64_t n, unsigned grid,            \
                        unsigned block, const struct hrops__add_layout *meta, \
                        const void *a, const void *b, void *out)             \
    {                                                                        \
        if (n == 0)                                                          \
            return 0;                                                        \
        launch<T>(contiguous, n, grid, block, meta, a, b, out);              \
        return cudaGetLastError() == cudaSuccess ? 0 : -EIO;                 \
    }

LAUNCHER(hrops__cuda_add_f32, float)
LAUNCHER(hrops__cuda_add_f64, double)
LAUNCHER(hrops__cuda_add_f16, __half)
LAUNCHER(hrops__cuda_add_bf16, __nv_bfloat16)

/* c = beta * c over batch x m x n strided elements (c = 0 when beta is 0:
 * c is not read). */
template <typename T>
__global__ void scale_strided(int64_t batch, int64_t m, int64_t n,
                              int64_t s0, int64_t s1, int64_t s2, float beta,
                              T *c)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    int64_t total = batch * m * n;

    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
         i < total; i += step) {
        int64_t j = i % n, r = (i / n) % m, p = i / (n * m);
        T *x = c + p * s0 + r * s1 + j * s2;

        *x = elem<T>::store(beta == 0.0f ? 0.0f
                                         : beta * elem<T>::load(*x));
    }
}

#define SCALE_BLOCK 256
#define SCALE_MAX_GRID 8192

#define SCALER(name, T)                                                      \
    extern "C" int name(int64_t batch, int64_t m, int64_t n,                 \
                        const int64_t sc[3], float beta, void *c)            \
    {                                                                        \
        int64_t total = batch * m * n;                                       \
        int64_t blocks = (total + SCALE_BLOCK - 1) / SCALE_BLOCK;            \
        unsigned grid = (unsigned)(blocks > SCALE_MAX_GRID ? SCALE_MAX_GRID  \
                                                           : blocks);        \
                                                                             \
        if (total == 0)                                                      \
            return 0;                                                        \
        scale_strided<T><<<grid, SCALE_BLOCK>>>(batch, m, n, sc[0], sc[1],   \
                                                sc[2], beta, (T *)c);        \
        return cudaGetLastError() == cudaSuccess ? 0 : -EIO;                 \
    }

SCALER(hrops__cuda_scale_f32, float)
SCALER(hrops__cuda_scale_f16, __half)
SCALER(hrops__cuda_scale_bf16, __nv_bfloat16)
