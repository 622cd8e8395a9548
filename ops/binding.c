/*
 * The binding: the library's entry points. binding.body covers each call;
 * inside it, binding.tensor_conversion covers each descriptor turned into a
 * tensor and binding.device_conversion the resolution of the device name.
 * The entry points below the binding (hrops_add_tensors, hrops_gemm_tensors)
 * check the call and dispatch it, with no range of their own.
 */
#include "config.h"

#include <errno.h>

#include "hostrange.h"
#include "ops/ops.h"
#include "ops/slow.h"

static hr_site s_body = HR_SITE_INIT("binding.body");
static hr_site s_tensor = HR_SITE_INIT("binding.tensor_conversion");
static hr_site s_device = HR_SITE_INIT("binding.device_conversion");

static int tensor_convert(const hrops_array *a, struct hrops_tensor *t)
{
    HR_SCOPE(sc, &s_tensor);

    return hrops__tensor_init(t, a);
}

static int device_convert(const char *name, struct hrops_device *d)
{
    HR_SCOPE(sc, &s_device);
    int rc = hrops__device_parse(name, d);

    return rc != 0 ? rc : hrops__device_resolve(d);
}

int hrops_add(const hrops_array *a, const hrops_array *b,
              const hrops_array *out, const char *device, int impl)
{
    HR_SCOPE(body, &s_body);
    uint64_t t0 = hrops__slow_begin(HROPS__SLOW_BODY);
    struct hrops_tensor t[3];
    struct hrops_device d;
    int rc;

    if ((rc = tensor_convert(a, &t[0])) == 0 &&
        (rc = tensor_convert(b, &t[1])) == 0 &&
        (rc = tensor_convert(out, &t[2])) == 0 &&
        (rc = device_convert(device, &d)) == 0)
        rc = hrops_add_tensors(&t[0], &t[1], &t[2], &d, impl);
    hrops__slow_end(HROPS__SLOW_BODY, t0);
    return rc;
}

int hrops_gemm(const hrops_array *a, const hrops_array *b,
               const hrops_array *cm, double alpha, double beta, int flags,
               const char *device, int impl)
{
    HR_SCOPE(body, &s_body);
    uint64_t t0 = hrops__slow_begin(HROPS__SLOW_BODY);
    struct hrops_tensor t[3];
    struct hrops_device d;
    int rc;

    if (flags & ~(HROPS_TRANS_A | HROPS_TRANS_B))
        rc = -EINVAL;
    else if ((rc = tensor_convert(a, &t[0])) == 0 &&
             (rc = tensor_convert(b, &t[1])) == 0 &&
             (rc = tensor_convert(cm, &t[2])) == 0 &&
             (rc = device_convert(device, &d)) == 0)
        rc = hrops_gemm_tensors(&t[0], &t[1], &t[2], alpha, beta, flags, &d,
                                impl);
    hrops__slow_end(HROPS__SLOW_BODY, t0);
    return rc;
}

/* Below the binding: the call's checks, then dispatch. */
int hrops_add_tensors(const hrops_tensor *a, const hrops_tensor *b,
                      const hrops_tensor *out, const hrops_device *device,
                      int impl)
{
    struct hrops__call c = { .op = HROPS__OP_ADD, .ntensors = 3,
                             .device = *device, .t = { a, b, out } };
    int rc = hrops__call_check(&c);

    return rc != 0 ? rc : hrops__dispatch(&c, impl);
}

int hrops_gemm_tensors(const hrops_tensor *a, const hrops_tensor *b,
                       const hrops_tensor *cm, double alpha, double beta,
                       int flags, const hrops_device *device, int impl)
{
    struct hrops__call c = { .op = HROPS__OP_GEMM, .ntensors = 3,
                             .device = *device, .t = { a, b, cm },
                             .alpha = alpha, .beta = beta, .flags = flags };
    int rc;

    if (flags & ~(HROPS_TRANS_A | HROPS_TRANS_B))
        return -EINVAL;
    rc = hrops__call_check(&c);
    return rc != 0 ? rc : hrops__dispatch(&c, impl);
}

int hrops_profiling_compiled(void)
{
    return hr_compiled();
}
