/*
 * The conversions of the binding, each in its range: a Python object to an
 * hrops_tensor (binding.tensor_conversion) and the device argument to an
 * hrops_device (binding.device_conversion).
 *
 * A buffer-protocol object (memoryview, array.array, a NumPy array, ...)
 * gives host memory: its format names the dtype ("f" float32, "d" float64,
 * "e" float16, in native or little-endian order), its strides are in bytes
 * and must be whole elements. A hostrange.ops.DeviceArray gives memory of
 * the device it was made on.
 */
#include "python/hostrange_py.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static hr_site s_tensor = HR_SITE_INIT("binding.tensor_conversion");
static hr_site s_device = HR_SITE_INIT("binding.device_conversion");

int hrpy_format_dtype(const char *format)
{
    if (format == NULL)
        return -1;  /* PyBUF_FORMAT was asked: NULL means bytes ("B") */
    if (format[0] == '@' || format[0] == '=' || format[0] == '<')
        format++;
    if (format[0] == '\0' || format[1] != '\0')
        return -1;
    switch (format[0]) {
    case 'f':
        return HROPS_FLOAT32;
    case 'd':
        return HROPS_FLOAT64;
    case 'e':
        return HROPS_FLOAT16;
    default:
        return -1;
    }
}

/* Fills the descriptor *a (shape and strides in the caller's arrays) from
 * the buffer *v. Returns 0, or -1 with an exception set. */
static int from_buffer(const Py_buffer *v, const char *name, hrops_array *a,
                       int64_t *shape, int64_t *strides)
{
    int dtype = hrpy_format_dtype(v->format);

    if (dtype < 0 || (size_t)v->itemsize != hrops_dtype_size(dtype)) {
        PyErr_Format(PyExc_TypeError, "%s: unsupported element format '%s' "
                     "(float32 'f', float64 'd' or float16 'e')", name,
                     v->format != NULL ? v->format : "B");
        return -1;
    }
    if (v->ndim > HROPS_MAX_RANK) {
        PyErr_Format(PyExc_ValueError, "%s: %d dimensions, at most %d", name,
                     v->ndim, HROPS_MAX_RANK);
        return -1;
    }
    for (int i = 0; i < v->ndim; i++) {
        shape[i] = v->shape[i];
        if (v->strides != NULL) {
            if (v->strides[i] % v->itemsize != 0) {
                PyErr_Format(PyExc_ValueError, "%s: stride %zd of dimension "
                             "%d is not a whole number of elements", name,
                             v->strides[i], i);
                return -1;
            }
            strides[i] = v->strides[i] / v->itemsize;
        }
    }
    a->data = v->buf;
    a->dtype = dtype;
    a->ndim = v->ndim;
    a->shape = shape;
    a->strides = v->strides != NULL ? strides : NULL;
    a->device_type = HROPS_DEVICE_CPU;
    a->device_id = 0;
    return 0;
}

int hrpy_tensor_convert(PyObject *obj, int writable, const char *name,
                        hrops_tensor *t, hrpy_arg *arg)
{
    HR_SCOPE(sc, &s_tensor);
    int64_t shape[HROPS_MAX_RANK], strides[HROPS_MAX_RANK];
    hrops_array a;
    int rc;

    arg->held = 0;
    if (PyObject_TypeCheck(obj, &hrpy_device_array_type)) {
        const hrpy_device_array *d = (const hrpy_device_array *)obj;

        a = (hrops_array){ d->data, d->dtype, d->ndim, d->shape, NULL,
                           d->dev.kind, d->dev.index };
    } else {
        if (PyObject_GetBuffer(obj, &arg->view,
                               PyBUF_RECORDS_RO |
                                   (writable ? PyBUF_WRITABLE : 0)) != 0) {
            if (PyErr_ExceptionMatches(PyExc_TypeError) ||
                PyErr_ExceptionMatches(PyExc_BufferError)) {
                PyObject *type, *value, *tb;

                PyErr_Fetch(&type, &value, &tb);
                PyErr_Format(type, "%s: %S", name, value != NULL ? value
                                                                 : Py_None);
                Py_XDECREF(type);
                Py_XDECREF(value);
                Py_XDECREF(tb);
            }
            return -1;
        }
        arg->held = 1;
        if (from_buffer(&arg->view, name, &a, shape, strides) != 0)
            return -1;
    }
    rc = hrops_tensor_init(t, &a);
    if (rc != 0) {
        PyErr_Format(PyExc_ValueError, "%s: not a valid array", name);
        return -1;
    }
    return 0;
}

void hrpy_arg_release(hrpy_arg *arg)
{
    if (arg->held) {
        PyBuffer_Release(&arg->view);
        arg->held = 0;
    }
}

int hrpy_device_convert(PyObject *obj, const hrops_tensor *first,
                        hrops_device *d)
{
    HR_SCOPE(sc, &s_device);
    char buf[32];
    const char *name;
    int rc;

    if (obj == NULL || obj == Py_None) {
        if (first->device.kind == HROPS_DEVICE_CUDA)
            snprintf(buf, sizeof buf, "cuda:%d", first->device.index);
        else
            snprintf(buf, sizeof buf, "cpu");
        name = buf;
    } else if (PyUnicode_Check(obj)) {
        if ((name = PyUnicode_AsUTF8(obj)) == NULL)
            return -1;
    } else {
        PyErr_Format(PyExc_TypeError, "device must be a str ('cpu', 'cuda' "
                     "or 'cuda:N'), not %.100s", Py_TYPE(obj)->tp_name);
        return -1;
    }
    rc = hrops_device_init(d, name);
    if (rc == -ENODEV) {
        PyErr_Format(PyExc_ValueError, "device '%s' is not available (CUDA "
                     "devices: %d)", name, hrops_cuda_device_count());
        return -1;
    }
    if (rc != 0) {
        PyErr_Format(PyExc_ValueError, "unknown device '%s' ('cpu', 'cuda' "
                     "or 'cuda:N')", name);
        return -1;
    }
    return 0;
}
