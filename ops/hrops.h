/*
 * hrops.h: the public API of libhrops, the example operator library that
 * hostrange profiles.
 *
 * A caller describes each array with a generic descriptor (hrops_array: a
 * data pointer, a dtype code, a shape, strides in elements and the device
 * that holds the data, in the manner of DLPack) and names the device to run
 * on with a string ("cpu", "cuda" or "cuda:N"). Two operators exist:
 *
 *   hrops_add:  out = a + b, NumPy broadcasting of a and b to out's shape,
 *               any strides, float32, float64, float16 and bfloat16, on the
 *               CPU and on CUDA devices;
 *   hrops_gemm: c = alpha * op(a) * op(b) + beta * c, batched, with optional
 *               transposes and any strides on the CPU (float32, float64) and
 *               through cuBLASLt on CUDA devices (float32, float16, bfloat16;
 *               there each matrix needs a unit stride in one of its two
 *               dimensions).
 *
 * Each call passes through the layers whose host cost hostrange measures,
 * each wrapped in the range of the same name: the binding (binding.body, one
 * binding.tensor_conversion per descriptor, one binding.device_conversion),
 * dispatch.call (the implementation chosen by device, dtype and
 * implementation index), operator.call (cache.key, cache.lookup and, on a
 * miss, cache.construct of the prepared operator) and operator.invoke
 * around backend.submit (the CPU loop, the kernel launch or cublasLtMatmul).
 * CUDA work is submitted to the legacy default stream and is not waited
 * for: call hrops_sync before reading the results.
 *
 * The prepared operators live in a cache private to the calling thread; it
 * is freed when the thread exits or when hrops_cache_clear is called.
 *
 * Every function returning int returns 0 on success or a negative errno:
 * -EINVAL for a malformed descriptor or mismatched shapes, -ENODEV for a
 * device that does not exist, -ENOTSUP for a combination no implementation
 * handles, -ENOMEM, and -EIO when the CUDA runtime or cuBLASLt fails.
 */
#ifndef HROPS_H
#define HROPS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define HROPS_API __attribute__((visibility("default")))
#else
#define HROPS_API
#endif

/* The largest rank of an array. */
#define HROPS_MAX_RANK 8

/* Element types (dtype codes). */
#define HROPS_FLOAT32 0
#define HROPS_FLOAT64 1
#define HROPS_FLOAT16 2  /* IEEE 754 binary16 */
#define HROPS_BFLOAT16 3 /* the upper half of a float32 */
#define HROPS_NDTYPES 4

/* Device types (the DLPack codes). */
#define HROPS_DEVICE_CPU 1
#define HROPS_DEVICE_CUDA 2

/* hrops_gemm flags: use the transpose of a, of b. */
#define HROPS_TRANS_A 1
#define HROPS_TRANS_B 2

/*
 * A generic array descriptor. data points at element (0, ..., 0); element
 * (i0, ..., in) is at data + sum(ik * strides[k]) elements. strides may be
 * NULL (contiguous, row-major), and may hold 0 (a broadcast input) or
 * negative values. The shape and strides arrays are read during the call
 * only.
 */
typedef struct hrops_array {
    void *data;
    int32_t dtype;
    int32_t ndim;             /* 0 (a scalar) to HROPS_MAX_RANK */
    const int64_t *shape;
    const int64_t *strides;   /* in elements, or NULL */
    int32_t device_type;      /* HROPS_DEVICE_CPU or HROPS_DEVICE_CUDA */
    int32_t device_id;        /* the CUDA device index; 0 for the CPU */
} hrops_array;

/*
 * out = a + b on `device`. a and b broadcast (NumPy rules) to out's shape
 * exactly; the three share a dtype and live on `device`. out must not have a
 * zero stride in a dimension longer than 1. impl selects among the
 * implementations for the device and dtype (0: the default).
 */
HROPS_API int hrops_add(const hrops_array *a, const hrops_array *b,
                        const hrops_array *out, const char *device,
                        int impl);

/*
 * c = alpha * op(a) * op(b) + beta * c on `device`, where op(x) is x, or its
 * transpose when flags has HROPS_TRANS_A (for a) or HROPS_TRANS_B (for b).
 * The arrays are all of rank 2 (one product) or all of rank 3 (a batch of
 * products, the first dimension being the batch, the same in all three).
 * With beta == 0, c is not read.
 */
HROPS_API int hrops_gemm(const hrops_array *a, const hrops_array *b,
                         const hrops_array *c, double alpha, double beta,
                         int flags, const char *device, int impl);

/*
 * Below the binding. A caller with a binding layer of its own (a language
 * binding that measures its own conversions, such as the Python module)
 * converts its arrays and its device name itself and enters the library at
 * dispatch.call, so that no binding.* range is produced twice:
 *
 *     hrops_tensor t[3];
 *     hrops_device dev;
 *     hrops_tensor_init(&t[0], &a); ...   (its binding.tensor_conversion)
 *     hrops_device_init(&dev, "cpu");     (its binding.device_conversion)
 *     hrops_add_tensors(&t[0], &t[1], &t[2], &dev, 0);
 *
 * hrops_add(a, b, out, device, impl) is exactly these steps inside the
 * library's own binding ranges. The structures below are filled by the init
 * functions only; the caller owns them (they hold no resource and need no
 * freeing) and may read their fields.
 */

/* A device resolved from its name. */
typedef struct hrops_device {
    int kind;   /* HROPS_DEVICE_CPU or HROPS_DEVICE_CUDA */
    int index;  /* the CUDA device index; 0 for the CPU */
} hrops_device;

/* A validated array: the shape copied, the strides always filled in (in
 * elements), the element count known. */
typedef struct hrops_tensor {
    void *data;
    int dtype;
    int ndim;
    int64_t numel;
    int64_t shape[HROPS_MAX_RANK];
    int64_t strides[HROPS_MAX_RANK];
    hrops_device device;
} hrops_tensor;

/* Checks the descriptor *a and fills *t from it (the descriptor's arrays
 * are not kept). Returns 0 or -EINVAL; *t is undefined on failure. */
HROPS_API int hrops_tensor_init(hrops_tensor *t, const hrops_array *a);

/* Parses a device name ("cpu", "cuda", "cuda:N") into *d and makes the
 * device current for the calling thread. Returns 0, -EINVAL for a malformed
 * name or -ENODEV for a device that does not exist; *d is written on
 * success only. */
HROPS_API int hrops_device_init(hrops_device *d, const char *name);

/* hrops_add and hrops_gemm from dispatch.call on, for tensors and a device
 * made by the functions above. Same arguments otherwise, same results. */
HROPS_API int hrops_add_tensors(const hrops_tensor *a, const hrops_tensor *b,
                                const hrops_tensor *out,
                                const hrops_device *device, int impl);
HROPS_API int hrops_gemm_tensors(const hrops_tensor *a,
                                 const hrops_tensor *b,
                                 const hrops_tensor *c, double alpha,
                                 double beta, int flags,
                                 const hrops_device *device, int impl);

/* Frees every prepared operator of the calling thread: its next call of each
 * operator is cold again. */
HROPS_API void hrops_cache_clear(void);

/* For testing performance gates: makes range `range` (binding.body,
 * backend.submit or dispatch.call) slower by pct percent, spinning inside it at its end
 * for pct% of the time spent in it so far (0: not slowed). Returns 0, or
 * -EINVAL for another range or a pct outside 0 to 10000. */
HROPS_API int hrops_slow(const char *range, double pct);

/* For testing performance gates: adds about ns nanoseconds of fixed work
 * (dependent multiply-adds, their count calibrated once, here) at the start
 * of range `range` (binding.body, backend.submit or dispatch.call; 0: none),
 * as a small regression in its code would. Returns 0, or -EINVAL for
 * another range or an ns outside 0 to 1000000. */
HROPS_API int hrops_slow_ns(const char *range, double ns);

/* The calling thread's cache counters, since the thread's first call. */
typedef struct hrops_cache_stats {
    uint64_t lookups;     /* operator calls that looked an operator up */
    uint64_t hits;        /* lookups that found one */
    uint64_t constructs;  /* operators constructed (misses that succeeded) */
    uint64_t entries;     /* operators held now */
} hrops_cache_stats;

HROPS_API void hrops_cache_stats_get(hrops_cache_stats *out);

/* The number of usable CUDA devices: 0 when the library was built without
 * CUDA or no device is present. */
HROPS_API int hrops_cuda_device_count(void);

/* Why hrops_cuda_device_count() is 0: the CUDA runtime's error, by name and
 * text ("cudaErrorNoDevice: no CUDA-capable device is detected"), or that
 * the library was built without CUDA; NULL when a device is present. The
 * text is static. */
HROPS_API const char *hrops_cuda_error(void);

/* 1 when the library was built with its ranges, 0 when compiled out. */
HROPS_API int hrops_profiling_compiled(void);

/* The dtype's name ("float32", ...) or NULL; its size in bytes or 0. */
HROPS_API const char *hrops_dtype_name(int dtype);
HROPS_API size_t hrops_dtype_size(int dtype);

/*
 * Memory on a device, for callers that have no other way to get it.
 * hrops_alloc stores in *out a block of `bytes` bytes on `device` (at least
 * 256-byte aligned) that the caller frees with hrops_free on the same device.
 * hrops_copy_to copies `bytes` bytes from host memory to `device`,
 * hrops_copy_from from `device` to host memory; both wait for the device
 * first. hrops_sync waits until all work submitted to `device` is done.
 */
HROPS_API int hrops_alloc(const char *device, size_t bytes, void **out);
HROPS_API void hrops_free(const char *device, void *p);
HROPS_API int hrops_copy_to(const char *device, void *dst, const void *src,
                            size_t bytes);
HROPS_API int hrops_copy_from(const char *device, void *dst, const void *src,
                              size_t bytes);
HROPS_API int hrops_sync(const char *device);

#ifdef __cplusplus
}
#endif

#endif /* HROPS_H */
