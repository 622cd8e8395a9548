/*
 * Device memory for the library's callers: host memory for "cpu", the CUDA
 * runtime (through cuda.c) for CUDA devices.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ops.h"

int hrops_alloc(const char *device, size_t bytes, void **out)
{
    struct hrops_device d;
    void *p;
    int rc = hrops__device_parse(device, &d);

    if (rc != 0)
        return rc;
    if (d.kind == HROPS_DEVICE_CUDA)
        return hrops__cuda_alloc(d.index, bytes, out);
    if (posix_memalign(&p, 256, bytes > 0 ? bytes : 1) != 0)
        return -ENOMEM;
    *out = p;
    return 0;
}

void hrops_free(const char *device, void *p)
{
    struct hrops_device d;

    if (p == NULL || hrops__device_parse(device, &d) != 0)
        return;
    if (d.kind == HROPS_DEVICE_CUDA)
        hrops__cuda_free(d.index, p);
    else
        free(p);
}

static int copy(const char *device, void *dst, const void *src, size_t bytes,
                int to_device)
{
    struct hrops_device d;
    int rc = hrops__device_parse(device, &d);

    if (rc != 0)
        return rc;
    if (d.kind == HROPS_DEVICE_CUDA)
        return hrops__cuda_copy(d.index, dst, src, bytes, to_device);
    if (bytes > 0)
        memmove(dst, src, bytes);
    return 0;
}

int hrops_copy_to(const char *device, void *dst, const void *src,
                  size_t bytes)
{
    return copy(device, dst, src, bytes, 1);
}

int hrops_copy_from(const char *device, void *dst, const void *src,
                    size_t bytes)
{
    return copy(device, dst, src, bytes, 0);
}

int hrops_sync(const char *device)
{
    struct hrops_device d;
    int rc = hrops__device_parse(device, &d);

    if (rc != 0)
        return rc;
    return d.kind == HROPS_DEVICE_CUDA ? hrops__cuda_sync(d.index) : 0;
}

int hrops_cuda_device_count(void)
{
    return hrops__cuda_count();
}

const char *hrops_cuda_error(void)
{
    return hrops__cuda_error();
}
