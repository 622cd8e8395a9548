/*
 * The CUDA backend when the library is built without CUDA: no device, no
 * implementation.
 */
#include "config.h"

#include <errno.h>

#include "ops/ops.h"

const struct hrops__impl hrops__cuda_add_impls[1];
const size_t hrops__cuda_add_nimpls = 0;
const struct hrops__impl hrops__cuda_gemm_impls[1];
const size_t hrops__cuda_gemm_nimpls = 0;

int hrops__cuda_count(void)
{
    return 0;
}

const char *hrops__cuda_error(void)
{
    return "libhrops was built without CUDA";
}

int hrops__cuda_current(void)
{
    return -1;
}

void hrops__cuda_restore(int index)
{
    (void)index;
}

int hrops__cuda_use(int index)
{
    (void)index;
    return -ENODEV;
}

int hrops__cuda_alloc(int index, size_t bytes, void **out)
{
    (void)index;
    (void)bytes;
    (void)out;
    return -ENODEV;
}

void hrops__cuda_free(int index, void *p)
{
    (void)index;
    (void)p;
}

int hrops__cuda_copy(int index, void *dst, const void *src, size_t bytes,
                     int to_device)
{
    (void)index;
    (void)dst;
    (void)src;
    (void)bytes;
    (void)to_device;
    return -ENODEV;
}

int hrops__cuda_sync(int index)
{
    (void)index;
    return -ENODEV;
}
