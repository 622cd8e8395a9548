/*
 * Descriptors to tensors, device names to devices, and the checks of a
 * whole call: the work of the binding, with no ranges (binding.c wraps
 * it).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ops.h"

static const char *const dtype_names[HROPS_NDTYPES] = {
    "float32", "float64", "float16", "bfloat16",
};
static const size_t dtype_sizes[HROPS_NDTYPES] = { 4, 8, 2, 2 };

const char *hrops_dtype_name(int dtype)
{
    return dtype >= 0 && dtype < HROPS_NDTYPES ? dtype_names[dtype] : NULL;
}

size_t hrops_dtype_size(int dtype)
{
    return dtype >= 0 && dtype < HROPS_NDTYPES ? dtype_sizes[dtype] : 0;
}

void hrops__contiguous_strides(int ndim, const int64_t *shape,
                               int64_t *strides)
{
    int64_t s = 1;

    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = s;
        s *= shape[i] > 1 ? shape[i] : 1;
    }
}

/*
 * Fills *t from the descriptor *a: checks the dtype, rank, shape (no
 * negative length, an element count that fits in 63 bits), the device and
 * the data pointer, and fills in contiguous strides when a has none.
 * Returns 0 or -EINVAL; *t is undefined on failure.
 */
int hrops__tensor_init(struct hrops_tensor *t, const hrops_array *a)
{
    int64_t n = 1;

    if (a == NULL || a->dtype < 0 || a->dtype >= HROPS_NDTYPES ||
        a->ndim < 0 || a->ndim > HROPS_MAX_RANK ||
        (a->ndim > 0 && a->shape == NULL))
        return -EINVAL;
    t->data = a->data;
    t->dtype = a->dtype;
    t->ndim = a->ndim;
    for (int i = 0; i < a->ndim; i++) {
        int64_t len = a->shape[i];

        if (len < 0 || (len > 0 && n > INT64_MAX / len))
            return -EINVAL;
        n *= len;
        t->shape[i] = len;
    }
    t->numel = n;
    if (a->strides != NULL)
        memcpy(t->strides, a->strides, (size_t)a->ndim * sizeof(int64_t));
    else
        hrops__contiguous_strides(a->ndim, t->shape, t->strides);
    if (a->device_type == HROPS_DEVICE_CPU && a->device_id == 0)
        t->device.kind = HROPS_DEVICE_CPU;
    else if (a->device_type == HROPS_DEVICE_CUDA && a->device_id >= 0)
        t->device.kind = HROPS_DEVICE_CUDA;
    else
        return -EINVAL;
    t->device.index = a->device_id;
    if (n > 0 && a->data == NULL)
        return -EINVAL;
    return 0;
}

/*
 * Parses a device name: "cpu", "cuda" (device 0) or "cuda:N". Returns 0 or
 * -EINVAL (NULL, unknown kind, bad index); *d is written on success only.
 */
int hrops__device_parse(const char *s, struct hrops_device *d)
{
    long index = 0;
    char *end;

    if (s == NULL)
        return -EINVAL;
    if (strcmp(s, "cpu") == 0) {
        d->kind = HROPS_DEVICE_CPU;
        d->index = 0;
        return 0;
    }
    if (strncmp(s, "cuda", 4) != 0)
        return -EINVAL;
    if (s[4] == ':') {
        if (s[5] < '0' || s[5] > '9')
            return -EINVAL;
        errno = 0;
        index = strtol(s + 5, &end, 10);
        if (errno != 0 || *end != '\0' || index > 1024)
            return -EINVAL;
    } else if (s[4] != '\0') {
        return -EINVAL;
    }
    d->kind = HROPS_DEVICE_CUDA;
    d->index = (int)index;
    return 0;
}

/*
 * Makes the device current for this thread: nothing for the CPU; for a CUDA
 * device, checks that it exists and selects it. Returns 0 or -ENODEV.
 */
int hrops__device_resolve(const struct hrops_device *d)
{
    if (d->kind == HROPS_DEVICE_CPU)
        return 0;
    return hrops__cuda_use(d->index);
}

int hrops_tensor_init(hrops_tensor *t, const hrops_array *a)
{
    return hrops__tensor_init(t, a);
}

int hrops_device_init(hrops_device *d, const char *name)
{
    struct hrops_device dev;
    int rc = hrops__device_parse(name, &dev);

    if (rc == 0)
        rc = hrops__device_resolve(&dev);
    if (rc == 0)
        *d = dev;
    return rc;
}

/*
 * Checks what the tensors of a call share: one dtype (stored in c->dtype)
 * and the call's device. Returns 0 or -EINVAL.
 */
int hrops__call_check(struct hrops__call *c)
{
    c->dtype = c->t[0]->dtype;
    for (int i = 0; i < c->ntensors; i++) {
        const struct hrops_tensor *t = c->t[i];

        if (t->dtype != c->dtype || t->device.kind != c->device.kind ||
            t->device.index != c->device.index)
            return -EINVAL;
    }
    return 0;
}
