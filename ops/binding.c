/*
 * The binding: the library's entry points. binding.body covers each call;
 * inside it, binding.tensor_conversion covers each descriptor turned into a
 * tensor and binding.device_conversion the resolution of the device name.
 */
#include "config.h"

#include <errno.h>

#include "hostrange.h"
#include "ops/ops.h"

static hr_site s_body = HR_SITE_INIT("binding.body");
static hr_site s_tensor = HR_SITE_INIT("binding.tensor_conversion");
static hr_site s_device = HR_SITE_INIT("binding.device_conversion");

static int tensor_convert(const hrops_array *a, struct hrops__tensor *t)
{
    HR_SCOPE(sc, &s_tensor);

    return hrops__tensor_init(t, a);
}

static int device_convert(const char *name, struct hrops__device *d)
{
    HR_SCOPE(sc, &s_device);
    int rc = hrops__device_parse(name, d);

    return rc != 0 ? rc : hrops__device_resolve(d);
}

int hrops_add(const hrops_array *a, const hrops_array *b,
              const hrops_array *out, const char *device, int impl)
{
    HR_SCOPE(body, &s_body);
    struct hrops__tensor t[3];
    struct hrops__call c = { .op = HROPS__OP_ADD, .ntensors = 3,
                             .t = { &t[0], &t[1], &t[2] } };
    int rc;

    if ((rc = tensor_convert(a, &t[0])) != 0 ||
        (rc = tensor_convert(b, &t[1])) != 0 ||
        (rc = tensor_convert(out, &t[2])) != 0 ||
        (rc = device_convert(device, &c.device)) != 0 ||
        (rc = hrops__call_check(&c)) != 0)
        return rc;
    return hrops__dispatch(&c, impl);
}

int hrops_gemm(const hrops_array *a, const hrops_array *b,
               const hrops_array *cm, double alpha, double beta, int flags,
               const char *device, int impl)
{
    HR_SCOPE(body, &s_body);
    struct hrops__tensor t[3];
    struct hrops__call c = { .op = HROPS__OP_GEMM, .ntensors = 3,
                             .t = { &t[0], &t[1], &t[2] },
                             .alpha = alpha, .beta = beta };
    int rc;

    if (flags & ~(HROPS_TRANS_A | HROPS_TRANS_B))
        return -EINVAL;
    c.flags = flags;
    if ((rc = tensor_convert(a, &t[0])) != 0 ||
        (rc = tensor_convert(b, &t[1])) != 0 ||
        (rc = tensor_convert(cm, &t[2])) != 0 ||
        (rc = device_convert(device, &c.device)) != 0 ||
        (rc = hrops__call_check(&c)) != 0)
        return rc;
    return hrops__dispatch(&c, impl);
}

int hrops_profiling_compiled(void)
{
    return hr_compiled();
}
