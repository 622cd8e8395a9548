/*
 * hostrange_py.h: the internals shared by the files of the Python module
 * `hostrange` (a CPython extension).
 *
 * The module exposes the client library (module.c: labels, windows,
 * records, flush, counters; scope.c: hostrange.scope, a context manager and
 * a decorator) and the example operators as the submodule hostrange.ops
 * (ops.c), which is itself a binding of libhrops: it turns each argument
 * that supports the buffer protocol, or each hostrange.ops.DeviceArray
 * (device.c), into an hrops_tensor inside a binding.tensor_conversion range
 * (convert.c), the device argument into an hrops_device inside a
 * binding.device_conversion range, and enters libhrops below its own binding
 * (hrops_add_tensors, hrops_gemm_tensors), all inside binding.body.
 *
 * Range sites named from Python live in a table that only grows (module.c):
 * a site is interned by the client on first use and its descriptor must
 * outlive every range opened at it, so descriptors are never freed.
 *
 * Python.h comes before every other header, as the C API requires; the
 * module therefore does not include config.h, whose definitions it does not
 * need.
 */
#ifndef HOSTRANGE_PY_H
#define HOSTRANGE_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "hostrange.h"
#include "ops/hrops.h"

/* Casts a METH_FASTCALL or METH_VARARGS|METH_KEYWORDS function to the
 * PyCFunction of a method table without a function-type warning. */
#define HRPY_METH(f) ((PyCFunction)(void (*)(void))(f))

/* module.c: the site descriptor of range `name` (a str), created on first
 * use and kept for the life of the process. Returns a borrowed pointer, or
 * NULL with an exception set. */
hr_site *hrpy_site_get(PyObject *name);

/* Raises the Python exception that fits the negative errno `rc` of the
 * client library or of libhrops, with `what` (the failed call) in its
 * message. Returns NULL. */
PyObject *hrpy_raise_errno(int rc, const char *what);

/* scope.c: the types hostrange.scope and its decorated functions. */
extern PyTypeObject hrpy_scope_type;
extern PyTypeObject hrpy_scoped_type;

/* device.c: hostrange.ops.DeviceArray, an array in the memory of a device
 * (allocated with hrops_alloc, freed with the object). */
typedef struct {
    PyObject_HEAD
    void *data;
    int dtype;
    int ndim;
    int64_t shape[HROPS_MAX_RANK];
    size_t nbytes;
    char device[32];  /* the name it was made on, for hrops_free */
    hrops_device dev;
} hrpy_device_array;

extern PyTypeObject hrpy_device_array_type;

/*
 * convert.c: one argument of an operator turned into a tensor, inside a
 * binding.tensor_conversion range. A buffer-protocol object is held in
 * *view (released with hrpy_arg_release); a DeviceArray is used as it is.
 * `writable` asks for a writable buffer (the output). Returns 0, or -1 with
 * a TypeError, BufferError or ValueError set naming argument `name`.
 */
typedef struct {
    Py_buffer view;
    int held;  /* view holds a buffer */
} hrpy_arg;

int hrpy_tensor_convert(PyObject *obj, int writable, const char *name,
                        hrops_tensor *t, hrpy_arg *arg);
void hrpy_arg_release(hrpy_arg *arg);

/* The element type of a struct-module format ("f", "<d", "=e", ...): an
 * HROPS_ dtype, or -1. */
int hrpy_format_dtype(const char *format);

/*
 * convert.c: the device argument (a str, or None for the device of `first`)
 * resolved into *d inside a binding.device_conversion range. Returns 0, or
 * -1 with a TypeError or ValueError set.
 */
int hrpy_device_convert(PyObject *obj, const hrops_tensor *first,
                        hrops_device *d);

/* ops.c: creates the submodule hostrange.ops. Returns a new reference, or
 * NULL with an exception set. */
PyObject *hrpy_ops_module(void);

#endif
