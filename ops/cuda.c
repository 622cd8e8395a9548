/*
 * The CUDA runtime for the rest of the library: devices, memory, waiting.
 * Built only with CUDA (nocuda.c stands in otherwise).
 *
 * A failed runtime call leaves its error as the calling thread's last error,
 * which the next kernel launch would then report (cudaGetLastError) as its
 * own failure. Every failure path here clears it.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include <cuda_runtime_api.h>

#include "ops/ops.h"

/* The device count, -1 until the first query. A runtime that cannot find a
 * driver or a device counts 0, and its error is kept in g_error. */
static int g_count = -1;
static char g_error[256];

int hrops__cuda_count(void)
{
    int n = __atomic_load_n(&g_count, __ATOMIC_ACQUIRE);

    if (n < 0) {
        cudaError_t e = cudaGetDeviceCount(&n);

        if (e != cudaSuccess || n <= 0) {
            if (e != cudaSuccess)
                snprintf(g_error, sizeof g_error, "%s: %s",
                         cudaGetErrorName(e), cudaGetErrorString(e));
            else
                snprintf(g_error, sizeof g_error,
                         "cudaGetDeviceCount found no device");
            cudaGetLastError();
            n = 0;
        }
        __atomic_store_n(&g_count, n, __ATOMIC_RELEASE);
    }
    return n;
}

const char *hrops__cuda_error(void)
{
    return hrops__cuda_count() > 0 ? NULL : g_error;
}

/* Makes device `index` the calling thread's current one. Returns 0 or
 * -ENODEV. */
int hrops__cuda_use(int index)
{
    int cur;

    if (index < 0 || index >= hrops__cuda_count())
        return -ENODEV;
    if (cudaGetDevice(&cur) != cudaSuccess) {
        cudaGetLastError();
        return -ENODEV;
    }
    if (cur != index && cudaSetDevice(index) != cudaSuccess) {
        cudaGetLastError();
        return -ENODEV;
    }
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
    if (hrops__cuda_use(index) == 0 && cudaFree(p) != cudaSuccess)
        cudaGetLastError();
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
        cudaSuccess) {
        cudaGetLastError();
        return -EIO;
    }
    return 0;
}

int hrops__cuda_sync(int index)
{
    int rc = hrops__cuda_use(index);

    if (rc != 0)
        return rc;
    if (cudaDeviceSynchronize() != cudaSuccess) {
        cudaGetLastError();
        return -EIO;
    }
    return 0;
}

/* The device current for the calling thread, or -1. */
int hrops__cuda_current(void)
{
    int cur;

    if (cudaGetDevice(&cur) != cudaSuccess) {
        cudaGetLastError();
        return -1;
    }
    return cur;
}

void hrops__cuda_restore(int index)
{
    if (index >= 0 && cudaSetDevice(index) != cudaSuccess)
        cudaGetLastError();
}
