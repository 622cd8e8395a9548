/*
 * hostrange.ops.DeviceArray: an array in the memory of a device, for the
 * operators' CUDA backend (a buffer-protocol object is host memory). It is
 * made from a C-contiguous host buffer, which is copied to the device; its
 * memory comes from hrops_alloc and goes back with the object. On the
 * device "cpu" it is host memory obtained the same way.
 */
#include "python/hostrange_py.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Fills a contiguous host buffer of `obj` into *v (PyBUF_C_CONTIGUOUS, with
 * its format). Returns the dtype, or -1 with an exception set (*v released). */
static int host_buffer(PyObject *obj, int writable, Py_buffer *v)
{
    int dtype;

    if (PyObject_GetBuffer(obj, v,
                           PyBUF_C_CONTIGUOUS | PyBUF_FORMAT |
                               (writable ? PyBUF_WRITABLE : 0)) != 0)
        return -1;
    dtype = hrpy_format_dtype(v->format);
    if (dtype < 0 || (size_t)v->itemsize != hrops_dtype_size(dtype)) {
        PyErr_Format(PyExc_TypeError, "unsupported element format '%s' "
                     "(float32 'f', float64 'd' or float16 'e')",
                     v->format != NULL ? v->format : "B");
        PyBuffer_Release(v);
        return -1;
    }
    if (v->ndim > HROPS_MAX_RANK) {
        PyErr_Format(PyExc_ValueError, "%d dimensions, at most %d", v->ndim,
                     HROPS_MAX_RANK);
        PyBuffer_Release(v);
        return -1;
    }
    return dtype;
}

static PyObject *darray_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = { "source", "device", NULL };
    const char *device = "cuda";
    hrpy_device_array *d;
    PyObject *source;
    Py_buffer v;
    int dtype, rc;

    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|s:DeviceArray", names,
                                     &source, &device))
        return NULL;
    if (strlen(device) >= sizeof d->device) {
        PyErr_Format(PyExc_ValueError, "unknown device '%s'", device);
        return NULL;
    }
    if ((dtype = host_buffer(source, 0, &v)) < 0)
        return NULL;
    d = (hrpy_device_array *)type->tp_alloc(type, 0);
    if (d == NULL)
        goto fail_alloc;
    rc = hrops_device_init(&d->dev, device);
    if (rc != 0) {
        PyErr_Format(PyExc_ValueError, "device '%s' is unknown or not "
                     "available (CUDA devices: %d)", device,
                     hrops_cuda_device_count());
        goto fail_device;
    }
    snprintf(d->device, sizeof d->device, "%s", device);
    d->dtype = dtype;
    d->ndim = v.ndim;
    for (int i = 0; i < v.ndim; i++)
        d->shape[i] = v.shape[i];
    d->nbytes = (size_t)v.len;
    Py_BEGIN_ALLOW_THREADS
    rc = hrops_alloc(device, d->nbytes, &d->data);
    if (rc == 0)
        rc = hrops_copy_to(device, d->data, v.buf, d->nbytes);
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        hrpy_raise_errno(rc, "DeviceArray");
        goto fail_device;
    }
    PyBuffer_Release(&v);
    return (PyObject *)d;

fail_device:
    Py_DECREF(d);
fail_alloc:
    PyBuffer_Release(&v);
    return NULL;
}

static void darray_dealloc(PyObject *self)
{
    hrpy_device_array *d = (hrpy_device_array *)self;

    if (d->data != NULL)
        hrops_free(d->device, d->data);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *darray_copy_to_host(PyObject *self, PyObject *dest)
{
    hrpy_device_array *d = (hrpy_device_array *)self;
    Py_buffer v;
    int dtype, rc;

    if ((dtype = host_buffer(dest, 1, &v)) < 0)
        return NULL;
    if (dtype != d->dtype || (size_t)v.len != d->nbytes) {
        PyErr_Format(PyExc_ValueError, "copy_to_host: the destination holds "
                     "%zd bytes of %s, the array %zu bytes of %s", v.len,
                     hrops_dtype_name(dtype), d->nbytes,
                     hrops_dtype_name(d->dtype));
        PyBuffer_Release(&v);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    rc = hrops_copy_from(d->device, v.buf, d->data, d->nbytes);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&v);
    if (rc != 0)
        return hrpy_raise_errno(rc, "copy_to_host");
    Py_INCREF(dest);
    return dest;
}

static PyObject *darray_shape(PyObject *self, void *closure)
{
    hrpy_device_array *d = (hrpy_device_array *)self;
    PyObject *t = PyTuple_New(d->ndim);

    for (int i = 0; t != NULL && i < d->ndim; i++) {
        PyObject *n = PyLong_FromLongLong(d->shape[i]);

        if (n == NULL) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, i, n);
    }
    return t;
}

static PyObject *darray_dtype(PyObject *self, void *closure)
{
    return PyUnicode_FromString(
        hrops_dtype_name(((hrpy_device_array *)self)->dtype));
}

static PyObject *darray_device(PyObject *self, void *closure)
{
    return PyUnicode_FromString(((hrpy_device_array *)self)->device);
}

static PyObject *darray_nbytes(PyObject *self, void *closure)
{
    return PyLong_FromSize_t(((hrpy_device_array *)self)->nbytes);
}

static PyObject *darray_repr(PyObject *self)
{
    hrpy_device_array *d = (hrpy_device_array *)self;
    PyObject *shape = darray_shape(self, NULL), *r;

    if (shape == NULL)
        return NULL;
    r = PyUnicode_FromFormat("hostrange.ops.DeviceArray(shape=%R, dtype=%s, "
                             "device=%s)", shape,
                             hrops_dtype_name(d->dtype), d->device);
    Py_DECREF(shape);
    return r;
}

static PyMethodDef darray_methods[] = {
    { "copy_to_host", darray_copy_to_host, METH_O,
      "copy_to_host(dest)\n--\n\n"
      "Copies the array into dest, a writable C-contiguous buffer of the same\n"
      "format and size, after the device's work is done. Returns dest." },
    { NULL, NULL, 0, NULL },
};

static PyGetSetDef darray_getset[] = {
    { "shape", darray_shape, NULL, "The shape, a tuple.", NULL },
    { "dtype", darray_dtype, NULL, "The element type's name.", NULL },
    { "device", darray_device, NULL, "The device's name.", NULL },
    { "nbytes", darray_nbytes, NULL, "The size in bytes.", NULL },
    { NULL, NULL, NULL, NULL, NULL },
};


PyTypeObject hrpy_device_array_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hostrange.ops.DeviceArray",
    .tp_basicsize = sizeof(hrpy_device_array),
    .tp_dealloc = darray_dealloc,
    .tp_repr = darray_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "DeviceArray(source, device='cuda')\n--\n\n"
              "A copy of the C-contiguous host buffer `source` in the memory\n"
              "of `device`, for the operators of hostrange.ops.",
    .tp_methods = darray_methods,
    .tp_getset = darray_getset,
    .tp_new = darray_new,
};
