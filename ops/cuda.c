/*
 * The CUDA runtime for the rest of the library: devices, memory, waiting.
 * Built only with CUDA (nocuda.c stands in otherwise).
 */
#include "config.h"

#include <errno.h>

#include <cuda_runtime_api.h>

#include "ops/ops.h"

/* The device count, -1 until the first query. A runtime that cannot find a
 * driver or a device counts 0. */
static int g_count = -1;

int hrops__cuda_count(void)
{
    int n = __atomic_load_n(&g_count, __ATOMIC_RELAXED);

    if (n < 0) {
        if (cudaGetDeviceCount(&n) != cudaSuccess || n < 0) {
            cudaGetLastError();
            n = 0;
        }
        __atomic_store_n(&g_count, n, __ATOMIC_RELAXED);
    }
    return n;
}

/* Makes device `index` the calling thread's current one. Returns 0 or
 * -ENODEV. */
int hrops__cuda_use(int index)
{
    int cur;

    if (index < 0 || index >= hrops__cuda_count())
        return -ENODEV;
    if (cudaGetDevice(&cur) != cudaSuccess)
        return -ENODEV;
    if (cur != index && cudaSetDevice(index) != cudaSuccess)
        return -ENODEV;
    return 0;
}

int hrops__cuda_alloc(int index, size_t bytes, void **out)
{
    void *p;
    int rc = hrops__cuda_use(index);

    if (rc != 0)
        return rc;
    if (cudaMalloc(&p, bytes > 0 ? bytes : 1) != cudaSuccess) {
        cudaGetLastError();
        return -ENOMEM;
    }
    *out = p;
    return 0;
}

void hrops__cuda_free(int index, void *p)
{
    if (hrops__cuda_use(index) == 0)
        cudaFree(p);
}

int hrops__cuda_copy(int index, void *dst, const void *src, size_t bytes,
                     int to_device)
{
    int rc = hrops__cuda_use(index);

    if (rc != 0)
        return rc;
    if (bytes == 0)
        return 0;
    if (cudaMemcpy(dst, src, bytes, to_device ? cudaMemcpyHostToDevice
                                              : cudaMemcpyDeviceToHost) !=
        cudaSuccess)
        return -EIO;
    return 0;
}

int hrops__cuda_sync(int index)
{
    int rc = hrops__cuda_use(index);

    if (rc != 0)
        return rc;
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : -EIO;
}
