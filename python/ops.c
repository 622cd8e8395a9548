/*
 * hostrange.ops: the example operators of libhrops, bound for Python.
 *
 * add and gemm are the binding: binding.body covers each call from its
 * arguments to its result; inside it, each array argument is converted in a
 * binding.tensor_conversion range and the device in a
 * binding.device_conversion range (convert.c), and the call enters libhrops
 * below its own binding (hrops_add_tensors, hrops_gemm_tensors), at
 * dispatch.call. The interpreter lock is released around the operator when
 * the output is large (HRPY_NOGIL_MIN), so that other threads may run; the
 * prepared-operator cache is per thread.
 */
#include "python/hostrange_py.h"

#include <errno.h>
#include <string.h>

/* Outputs of at least this many elements run without the interpreter lock. */
#define HRPY_NOGIL_MIN 32768

static hr_site s_body = HR_SITE_INIT("binding.body");

/*
 * Sorts the arguments of a METH_FASTCALL|METH_KEYWORDS call into out[],
 * in the order of names[] (nmax names, the first nreq required). out[i] is
 * a borrowed reference or NULL when not given. Returns 0, or -1 with a
 * TypeError set.
 */
static int parse_args(const char *fname, PyObject *const *args,
                      Py_ssize_t nargs, PyObject *kwnames,
                      const char *const *names, int nreq, int nmax,
                      PyObject **out)
{
    Py_ssize_t nkw = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;

    if (nargs > nmax) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d arguments (%zd "
                     "given)", fname, nmax, nargs);
        return -1;
    }
    for (int i = 0; i < nmax; i++)
        out[i] = i < nargs ? args[i] : NULL;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        int i;

        for (i = 0; i < nmax; i++) {
            if (PyUnicode_CompareWithASCIIString(key, names[i]) == 0)
                break;
        }
        if (i == nmax) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword "
                         "argument '%U'", fname, key);
            return -1;
        }
        if (out[i] != NULL) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for "
                         "argument '%s'", fname, names[i]);
            return -1;
        }
        out[i] = args[nargs + k];
    }
    for (int i = 0; i < nreq; i++) {
        if (out[i] == NULL) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument "
                         "'%s'", fname, names[i]);
            return -1;
        }
    }
    return 0;
}

/* An int argument (impl), default 0. Returns 0, or -1 with an exception. */
static int int_arg(PyObject *obj, const char *name, int *out)
{
    long v;

    if (obj == NULL) {
        *out = 0;
        return 0;
    }
    v = PyLong_AsLong(obj);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (v < 0 || v > 1000) {
        PyErr_Format(PyExc_ValueError, "%s must be between 0 and 1000", name);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* The message of a failed operator call. Returns NULL. */
static PyObject *op_error(const char *op, int rc, const hrops_tensor *t,
                          const hrops_device *d)
{
    const char *dt = hrops_dtype_name(t->dtype);
    const char *dev = d->kind == HROPS_DEVICE_CUDA ? "cuda" : "cpu";

    switch (-rc) {
    case EINVAL:
        PyErr_Format(PyExc_ValueError, "%s: the arrays do not fit together "
                     "(shapes, dtypes, or devices other than %s)", op, dev);
        return NULL;
    case ENOTSUP:
        PyErr_Format(PyExc_NotImplementedError, "%s: not implemented for "
                     "%s on %s", op, dt != NULL ? dt : "?", dev);
        return NULL;
    default:
        return hrpy_raise_errno(rc, op);
    }
}

/* The body of add and gemm, with binding.body open in the caller. */
static PyObject *call_op(int gemm, PyObject **v, double alpha, double beta,
                         int flags)
{
    static const char *const arg_names[2][3] = { { "a", "b", "out" },
                                                 { "a", "b", "c" } };
    const char *op = gemm ? "gemm" : "add";
    PyObject *device = v[gemm ? 7 : 3], *impl_obj = v[gemm ? 8 : 4];
    hrops_tensor t[3];
    hrpy_arg arg[3] = { { .held = 0 }, { .held = 0 }, { .held = 0 } };
    hrops_device d;
    PyObject *result = NULL;
    int impl, rc, i;

    if (int_arg(impl_obj, "impl", &impl) != 0)
        return NULL;
    for (i = 0; i < 3; i++) {
        if (hrpy_tensor_convert(v[i], i == 2, arg_names[gemm][i], &t[i],
                                &arg[i]) != 0)
            goto out;
    }
    if (hrpy_device_convert(device, &t[0], &d) != 0)
        goto out;
    if (t[2].numel >= HRPY_NOGIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        rc = gemm ? hrops_gemm_tensors(&t[0], &t[1], &t[2], alpha, beta,
                                       flags, &d, impl)
                  : hrops_add_tensors(&t[0], &t[1], &t[2], &d, impl);
        Py_END_ALLOW_THREADS
    } else {
        rc = gemm ? hrops_gemm_tensors(&t[0], &t[1], &t[2], alpha, beta,
                                       flags, &d, impl)
                  : hrops_add_tensors(&t[0], &t[1], &t[2], &d, impl);
    }
    if (rc != 0) {
        op_error(op, rc, &t[0], &d);
        goto out;
    }
    Py_INCREF(v[2]);
    result = v[2];
out:
    for (int k = 0; k < 3; k++)
        hrpy_arg_release(&arg[k]);
    return result;
}

static PyObject *o_add(PyObject *self, PyObject *const *args,
                       Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = { "a", "b", "out", "device", "impl" };
    HR_SCOPE(body, &s_body);
    PyObject *v[5];

    if (parse_args("add", args, nargs, kwnames, names, 3, 5, v) != 0)
        return NULL;
    return call_op(0, v, 0, 0, 0);
}

/* A float argument with its default. Returns 0, or -1 with an exception. */
static int double_arg(PyObject *obj, double dflt, double *out)
{
    if (obj == NULL) {
        *out = dflt;
        return 0;
    }
    *out = PyFloat_AsDouble(obj);
    return *out == -1.0 && PyErr_Occurred() ? -1 : 0;
}

static PyObject *o_gemm(PyObject *self, PyObject *const *args,
                        Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = { "a",       "b",       "c",
                                         "alpha",   "beta",    "trans_a",
                                         "trans_b", "device",  "impl" };
    HR_SCOPE(body, &s_body);
    PyObject *v[9];
    double alpha, beta;
    int flags = 0, ta, tb;

    if (parse_args("gemm", args, nargs, kwnames, names, 3, 9, v) != 0 ||
        double_arg(v[3], 1.0, &alpha) != 0 ||
        double_arg(v[4], 0.0, &beta) != 0)
        return NULL;
    ta = v[5] != NULL ? PyObject_IsTrue(v[5]) : 0;
    tb = v[6] != NULL ? PyObject_IsTrue(v[6]) : 0;
    if (ta < 0 || tb < 0)
        return NULL;
    flags = (ta ? HROPS_TRANS_A : 0) | (tb ? HROPS_TRANS_B : 0);
    return call_op(1, v, alpha, beta, flags);
}

static PyObject *o_clear_cache(PyObject *self, PyObject *unused)
{
    hrops_cache_clear();
    Py_RETURN_NONE;
}

static PyObject *o_cache_stats(PyObject *self, PyObject *unused)
{
    hrops_cache_stats s;

    hrops_cache_stats_get(&s);
    return Py_BuildValue("{sKsKsKsK}",
                         "lookups", (unsigned long long)s.lookups,
                         "hits", (unsigned long long)s.hits,
                         "constructs", (unsigned long long)s.constructs,
                         "entries", (unsigned long long)s.entries);
}

static PyObject *o_device_count(PyObject *self, PyObject *unused)
{
    return PyLong_FromLong(hrops_cuda_device_count());
}

static PyObject *o_cuda_error(PyObject *self, PyObject *unused)
{
    const char *e = hrops_cuda_error();

    if (e == NULL)
        Py_RETURN_NONE;
    return PyUnicode_FromString(e);
}

static PyObject *o_sync(PyObject *self, PyObject *args)
{
    const char *device = "cpu";
    int rc;

    if (!PyArg_ParseTuple(args, "|s:sync", &device))
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    rc = hrops_sync(device);
    Py_END_ALLOW_THREADS
    /* The device named, as the operators' device argument says it. */
    if (rc == -ENODEV)
        return PyErr_Format(PyExc_ValueError, "sync: device '%s' is not "
                            "available (CUDA devices: %d)", device,
                            hrops_cuda_device_count());
    if (rc == -EINVAL)
        return PyErr_Format(PyExc_ValueError, "sync: unknown device '%s' "
                            "('cpu', 'cuda' or 'cuda:N')", device);
    if (rc != 0)
        return hrpy_raise_errno(rc, "sync");
    Py_RETURN_NONE;
}

static PyObject *o_profiling_compiled(PyObject *self, PyObject *unused)
{
    return PyBool_FromLong(hrops_profiling_compiled());
}

static PyMethodDef ops_methods[] = {
    { "add", HRPY_METH(o_add), METH_FASTCALL | METH_KEYWORDS,
      "add(a, b, out, device=None, impl=0)\n--\n\n"
      "out = a + b, with NumPy broadcasting of a and b to out's shape. The\n"
      "arrays support the buffer protocol (float32 'f', float64 'd' or\n"
      "float16 'e'; out writable) or are DeviceArray objects; device is\n"
      "'cpu', 'cuda' or 'cuda:N' (default: where a lives). Returns out." },
    { "gemm", HRPY_METH(o_gemm), METH_FASTCALL | METH_KEYWORDS,
      "gemm(a, b, c, alpha=1, beta=0, trans_a=False, trans_b=False, "
      "device=None, impl=0)\n--\n\n"
      "c = alpha * op(a) @ op(b) + beta * c, op transposing when asked;\n"
      "rank 2, or rank 3 with the batch first. Arrays as for add. Returns c." },
    { "clear_cache", o_clear_cache, METH_NOARGS,
      "clear_cache()\n--\n\n"
      "Frees the calling thread's prepared operators: the next call of each\n"
      "is cold again." },
    { "cache_stats", o_cache_stats, METH_NOARGS,
      "cache_stats()\n--\n\nThe calling thread's cache counters, a dict." },
    { "device_count", o_device_count, METH_NOARGS,
      "device_count()\n--\n\nThe number of usable CUDA devices." },
    { "cuda_error", o_cuda_error, METH_NOARGS,
      "cuda_error()\n--\n\nWhy device_count() is 0 (the CUDA runtime's "
      "error, or that\nlibhrops was built without CUDA), a str; None when "
      "a device is present." },
    { "sync", o_sync, METH_VARARGS,
      "sync(device='cpu')\n--\n\nWaits until the work submitted to device is "
      "done." },
    { "profiling_compiled", o_profiling_compiled, METH_NOARGS,
      "profiling_compiled()\n--\n\n"
      "True when libhrops was built with its ranges." },
    { NULL, NULL, 0, NULL },
};

static struct PyModuleDef ops_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "hostrange.ops",
    .m_doc = "The example operators of hostrange (libhrops), instrumented at\n"
             "every layer, the Python binding included.",
    .m_size = -1,
    .m_methods = ops_methods,
};

PyObject *hrpy_ops_module(void)
{
    PyObject *m;

    if (PyType_Ready(&hrpy_device_array_type) < 0)
        return NULL;
    m = PyModule_Create(&ops_def);
    if (m == NULL)
        return NULL;
    if (PyModule_AddObjectRef(m, "DeviceArray",
                              (PyObject *)&hrpy_device_array_type) != 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
