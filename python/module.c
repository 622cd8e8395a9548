/*
 * The module `hostrange`: the client library for Python programs. Labels,
 * windows, records, flush and counters map one to one onto hostrange.h;
 * errors the client reports as a negative errno become exceptions, except
 * that a window cannot open while collection is off (HOSTRANGE=0, or the
 * module built without profiling): window_begin then returns False and
 * nothing is collected.
 */
#include "python/hostrange_py.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

/* name (str) -> capsule of a struct site: the sites named from Python,
 * one per name, kept for the life of the process. */
static PyObject *g_sites;

struct site {
    hr_site site;
    char name[];
};

static struct site *site_new(PyObject *name);

hr_site *hrpy_site_get(PyObject *name)
{
    PyObject *cap;
    struct site *s;
    uint64_t since;

    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError, "a range name must be a str, not %.100s",
                     Py_TYPE(name)->tp_name);
        return NULL;
    }
    cap = PyDict_GetItemWithError(g_sites, name);
    if (cap != NULL)
        return PyCapsule_GetPointer(cap, "hostrange.site");
    if (PyErr_Occurred())
        return NULL;
    /* A name's first use makes its site: this module's own work, left out
     * of the ranges open on this thread (a no-op when compiled out). */
    since = hr__own_start();
    s = site_new(name);
    hr__own_end(since);
    return s != NULL ? &s->site : NULL;
}

/* The site of a name not seen before, kept in g_sites; NULL with an
 * exception set. */
static struct site *site_new(PyObject *name)
{
    PyObject *cap;
    struct site *s;
    const char *utf8;
    Py_ssize_t len;

    utf8 = PyUnicode_AsUTF8AndSize(name, &len);
    if (utf8 == NULL)
        return NULL;
    if (len == 0 || (size_t)len != strlen(utf8)) {
        PyErr_SetString(PyExc_ValueError,
                        "a range name must be non-empty and hold no NUL");
        return NULL;
    }
    if ((size_t)len > HR_MAX_NAME) {
        PyErr_Format(PyExc_ValueError, "a range name is at most %d bytes "
                     "(hostrange.MAX_NAME) in UTF-8; this one is %zd",
                     HR_MAX_NAME, len);
        return NULL;
    }
    s = PyMem_RawMalloc(sizeof *s + (size_t)len + 1);
    if (s == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    memcpy(s->name, utf8, (size_t)len + 1);
    s->site = (hr_site)HR_SITE_INIT(s->name);
    /* Never freed: the table lives as long as the process (see
     * hostrange_py.h). */
    cap = PyCapsule_New(s, "hostrange.site", NULL);
    if (cap == NULL) {
        PyMem_RawFree(s);
        return NULL;
    }
    if (PyDict_SetItem(g_sites, name, cap) != 0) {
        Py_DECREF(cap);
        return NULL;
    }
    Py_DECREF(cap);
    return s;
}

PyObject *hrpy_raise_errno(int rc, const char *what)
{
    switch (-rc) {
    case EINVAL:
        PyErr_Format(PyExc_ValueError, "%s: invalid argument", what);
        break;
    case ENOMEM:
        PyErr_NoMemory();
        break;
    case EBUSY:
        PyErr_Format(PyExc_RuntimeError, "%s: a collection window is open",
                     what);
        break;
    case ETIMEDOUT:
        PyErr_Format(PyExc_TimeoutError, "%s: the daemon did not acknowledge "
                     "everything in time", what);
        break;
    case ENOTCONN:
        PyErr_Format(PyExc_ConnectionError, "%s: no hostranged answers (see "
                     "HOSTRANGE_RUNTIME_DIR)", what);
        break;
    case ENODEV:
        PyErr_Format(PyExc_ValueError, "%s: no such device", what);
        break;
    case ENOTSUP:
        PyErr_Format(PyExc_NotImplementedError,
                     "%s: no implementation for these arrays on this device",
                     what);
        break;
    default:
        errno = -rc;
        PyErr_Format(PyExc_OSError, "%s: %s", what, strerror(-rc));
        break;
    }
    return NULL;
}

static PyObject *m_compiled(PyObject *self, PyObject *unused)
{
    return PyBool_FromLong(hr_compiled());
}

static PyObject *m_enabled(PyObject *self, PyObject *unused)
{
    return PyBool_FromLong(hr_enabled());
}

static PyObject *m_clock(PyObject *self, PyObject *unused)
{
    return PyUnicode_FromString(hr_clock_name());
}

static PyObject *m_now_ns(PyObject *self, PyObject *unused)
{
    return PyLong_FromUnsignedLongLong(hr_now_ns());
}

/* HR_PHASE_* from "cold", "warm" or the constants COLD and WARM; 0 with an
 * exception set for anything else. */
static int phase_parse(PyObject *obj)
{
    if (PyUnicode_Check(obj)) {
        if (PyUnicode_CompareWithASCIIString(obj, "cold") == 0)
            return HR_PHASE_COLD;
        if (PyUnicode_CompareWithASCIIString(obj, "warm") == 0)
            return HR_PHASE_WARM;
    } else if (PyLong_Check(obj)) {
        long v = PyLong_AsLong(obj);

        if (v == HR_PHASE_COLD || v == HR_PHASE_WARM)
            return (int)v;
        if (v == -1 && PyErr_Occurred())
            return 0;
    }
    PyErr_SetString(PyExc_ValueError,
                    "phase must be 'cold' or 'warm' (hostrange.COLD, WARM)");
    return 0;
}

static PyObject *m_set_labels(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = { "node_id", "operator", "backend", "phase",
                             NULL };
    const char *node, *op, *backend;
    PyObject *phase_obj;
    int phase, rc;

    if (!PyArg_ParseTupleAndKeywords(args, kw, "sssO:set_labels", names,
                                     &node, &op, &backend, &phase_obj))
        return NULL;
    if ((phase = phase_parse(phase_obj)) == 0)
        return NULL;
    /* The library refuses them too (the next windows are then not
     * collected); the check here names the limit, compiled out or not. */
    rc = hr_labels_set(node, op, backend, phase);
    if (node[0] == '\0') {
        PyErr_SetString(PyExc_ValueError,
                        "set_labels: the node id must be non-empty");
        return NULL;
    }
    for (int i = 0; i < 3; i++) {
        const char *v = i == 0 ? node : i == 1 ? op : backend;
        size_t n = strlen(v);

        if (n > HR_MAX_NAME) {
            PyErr_Format(PyExc_ValueError, "set_labels: %s is %zu bytes in "
                         "UTF-8, over the limit of %d (hostrange.MAX_NAME)",
                         names[i], n, HR_MAX_NAME);
            return NULL;
        }
    }
    if (rc == -EBUSY) {
        PyErr_SetString(PyExc_RuntimeError,
                        "set_labels: labels cannot change inside a window");
        return NULL;
    }
    if (rc != 0)
        return hrpy_raise_errno(rc, "set_labels");
    Py_RETURN_NONE;
}

/* The RuntimeError of what the labels make window_begin and record
 * refuse: none set (-EINVAL), or the last ones refused (-ENAMETOOLONG: a
 * name of this module is never over the limit, so only labels are). 0
 * when rc is neither, -1 with the exception set. */
static int labels_error(int rc, const char *what)
{
    if (rc == -EINVAL)
        PyErr_Format(PyExc_RuntimeError, "%s: set the labels first "
                     "(set_labels)", what);
    else if (rc == -ENAMETOOLONG)
        PyErr_Format(PyExc_RuntimeError, "%s: the labels last given to "
                     "set_labels were refused (over hostrange.MAX_NAME "
                     "bytes)", what);
    else
        return 0;
    return -1;
}

/* Opens a window: 1 when opened, 0 when collection is off, -1 with an
 * exception set. */
static int window_open(void)
{
    int rc;

    if (!hr_compiled())
        return 0;
    rc = hr_window_begin();
    if (rc == 0)
        return 1;
    if (rc == -ECANCELED)
        return 0;
    if (rc == -EBUSY)
        PyErr_SetString(PyExc_RuntimeError,
                        "window_begin: a window is already open");
    else if (labels_error(rc, "window_begin") == 0)
        hrpy_raise_errno(rc, "window_begin");
    return -1;
}

static PyObject *m_window_begin(PyObject *self, PyObject *unused)
{
    int rc = window_open();

    return rc < 0 ? NULL : PyBool_FromLong(rc);
}

static PyObject *m_window_end(PyObject *self, PyObject *unused)
{
    if (hr_compiled() && hr_window_end() != 0) {
        PyErr_SetString(PyExc_RuntimeError, "window_end: no window is open");
        return NULL;
    }
    Py_RETURN_NONE;
}

/* hostrange.window(): a context manager around window_begin/window_end. */
typedef struct {
    PyObject_HEAD
    int opened;
} window_object;

/* window(): no argument (PyType_GenericNew would ignore any). */
static PyObject *window_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = { NULL };

    if (!PyArg_ParseTupleAndKeywords(args, kw, ":window", names))
        return NULL;
    return PyType_GenericNew(type, args, kw);
}

static PyObject *window_enter(PyObject *self, PyObject *unused)
{
    window_object *w = (window_object *)self;
    int rc;

    if (w->opened) {
        PyErr_SetString(PyExc_RuntimeError, "this window is already open");
        return NULL;
    }
    if ((rc = window_open()) < 0)
        return NULL;
    w->opened = rc;
    return PyBool_FromLong(rc);
}

static PyObject *window_exit(PyObject *self, PyObject *args)
{
    window_object *w = (window_object *)self;

    if (w->opened) {
        w->opened = 0;
        hr_window_end();
    }
    Py_RETURN_FALSE;
}

static PyMethodDef window_methods[] = {
    { "__enter__", window_enter, METH_NOARGS, NULL },
    { "__exit__", window_exit, METH_VARARGS, NULL },
    { NULL, NULL, 0, NULL },
};

static PyTypeObject window_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hostrange.window",
    .tp_basicsize = sizeof(window_object),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "window()\n--\n\n"
              "A collection window as a context manager: samples are taken\n"
              "between its start and its end, labelled with the labels set\n"
              "before (set_labels). `with` gives True when the window opened,\n"
              "False when collection is off.",
    .tp_methods = window_methods,
    .tp_new = window_new,
};

static PyObject *m_record(PyObject *self, PyObject *args)
{
    unsigned long long value;
    PyObject *name, *value_obj;
    hr_site *site;
    int rc;

    if (!PyArg_ParseTuple(args, "OO!:record", &name, &PyLong_Type,
                          &value_obj))
        return NULL;
    value = PyLong_AsUnsignedLongLong(value_obj);
    if (value == (unsigned long long)-1 && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_OverflowError))
            return NULL;
        PyErr_Clear();
        PyErr_Format(PyExc_OverflowError, "record: value_ns is from 0 to "
                     "2**64 - 1 nanoseconds, not %R", value_obj);
        return NULL;
    }
    if ((site = hrpy_site_get(name)) == NULL)
        return NULL;
    if (!hr_compiled())
        Py_RETURN_FALSE;
    rc = hr_record(site, (uint64_t)value);
    if (rc == -ECANCELED)
        Py_RETURN_FALSE;
    if (labels_error(rc, "record") != 0)
        return NULL;
    if (rc != 0)
        return hrpy_raise_errno(rc, "record");
    Py_RETURN_TRUE;
}

static PyObject *m_flush(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = { "timeout_ms", NULL };
    PyObject *obj = NULL, *index;
    int timeout_ms = 2000, rc, overflow;
    long v;

    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:flush", names, &obj))
        return NULL;
    if (obj != NULL) {
        /* A wait of 0 to INT_MAX ms: a negative one is a mistake, not a
         * wait of 0, and a huge one is said, not a bare OverflowError. */
        if ((index = PyNumber_Index(obj)) == NULL)
            return NULL;
        v = PyLong_AsLongAndOverflow(index, &overflow);
        Py_DECREF(index);
        if (v == -1 && PyErr_Occurred())
            return NULL;
        if (overflow < 0 || v < 0)
            return PyErr_Format(PyExc_ValueError, "flush: timeout_ms is 0 "
                                "or more, not %R", obj);
        if (overflow > 0 || v > INT_MAX)
            return PyErr_Format(PyExc_OverflowError, "flush: timeout_ms is "
                                "at most %d, not %R", INT_MAX, obj);
        timeout_ms = (int)v;
    }
    Py_BEGIN_ALLOW_THREADS
    rc = hr_flush(timeout_ms);
    Py_END_ALLOW_THREADS
    if (rc != 0)
        return hrpy_raise_errno(rc, "flush");
    Py_RETURN_NONE;
}

static PyObject *m_counters(PyObject *self, PyObject *unused)
{
    hr_counters c;

    hr_counters_get(&c);
    return Py_BuildValue(
        "{sKsKsKsKsKsKsKsKsKsKsKsKsKsK}",
        "samples", (unsigned long long)c.samples,
        "delivered", (unsigned long long)c.delivered,
        "lost", (unsigned long long)c.lost,
        "out_of_order", (unsigned long long)c.out_of_order,
        "open_at_window_end", (unsigned long long)c.open_at_window_end,
        "foreign_thread", (unsigned long long)c.foreign_thread,
        "label_in_window", (unsigned long long)c.label_in_window,
        "too_deep", (unsigned long long)c.too_deep,
        "batches_sent", (unsigned long long)c.batches_sent,
        "spooled", (unsigned long long)c.spooled,
        "bad_name", (unsigned long long)c.bad_name,
        "bad_label", (unsigned long long)c.bad_label,
        "contexts_full", (unsigned long long)c.contexts_full,
        "names_cut", (unsigned long long)c.names_cut);
}

static PyMethodDef module_methods[] = {
    { "compiled", m_compiled, METH_NOARGS,
      "compiled()\n--\n\n"
      "True when the module was built with profiling (configure without\n"
      "--disable-host-range-profiling); otherwise every call of this module\n"
      "collects nothing." },
    { "enabled", m_enabled, METH_NOARGS,
      "enabled()\n--\n\n"
      "True when collection is on: compiled in and not turned off with\n"
      "HOSTRANGE=0." },
    { "clock", m_clock, METH_NOARGS,
      "clock()\n--\n\nThe clock of the samples: 'tsc', 'monotonic' or 'none'." },
    { "now_ns", m_now_ns, METH_NOARGS,
      "now_ns()\n--\n\nNanoseconds on the clock the samples are measured with." },
    { "set_labels", HRPY_METH(m_set_labels), METH_VARARGS | METH_KEYWORDS,
      "set_labels(node_id, operator, backend, phase)\n--\n\n"
      "Labels the samples of the next windows and records; phase is 'cold'\n"
      "or 'warm'. Raises RuntimeError inside a window." },
    { "window_begin", m_window_begin, METH_NOARGS,
      "window_begin()\n--\n\n"
      "Opens a collection window. Returns True, or False when collection is\n"
      "off; raises RuntimeError when a window is open or no labels are set." },
    { "window_end", m_window_end, METH_NOARGS,
      "window_end()\n--\n\n"
      "Closes the window; ranges still open are counted as errors." },
    { "record", m_record, METH_VARARGS,
      "record(name, value_ns)\n--\n\n"
      "Records a value measured by the program (e.g. 'end_to_end': a timed\n"
      "block of calls divided by their number) as an inclusive-only sample\n"
      "of range `name` under the current labels, in a window or not. Returns\n"
      "True, or False when collection is off." },
    { "flush", HRPY_METH(m_flush), METH_VARARGS | METH_KEYWORDS,
      "flush(timeout_ms=2000)\n--\n\n"
      "Ships what was collected and waits up to timeout_ms (0 or more) for\n"
      "the daemon's acknowledgement, for a daemon that is away (restarting)\n"
      "too. Raises TimeoutError when a daemon answered but not all in time,\n"
      "or ConnectionError when none did (at once when this process never\n"
      "reached a daemon and none listens); the samples are kept for a later\n"
      "try." },
    { "counters", m_counters, METH_NOARGS,
      "counters()\n--\n\nThis process's counters (samples, delivered, lost, "
      "spooled, errors), a dict." },
    { NULL, NULL, 0, NULL },
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "hostrange",
    .m_doc =
        "hostrange: host-side range profiling.\n\n"
        "Named, nested ranges (hostrange.scope) are collected inside windows\n"
        "(window, window_begin/window_end) under labels (set_labels) and sent\n"
        "to the hostranged daemon of $HOSTRANGE_RUNTIME_DIR. hostrange.ops\n"
        "holds the example operators (add, gemm), themselves instrumented at\n"
        "every layer. The pytest plugin (--host-range-profile) lives in the\n"
        "module hostrange_pytest.",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit_hostrange(void);

PyMODINIT_FUNC PyInit_hostrange(void)
{
    PyObject *m, *ops, *modules;

    if (PyType_Ready(&hrpy_scope_type) < 0 ||
        PyType_Ready(&hrpy_scoped_type) < 0 ||
        PyType_Ready(&window_type) < 0)
        return NULL;
    if (g_sites == NULL && (g_sites = PyDict_New()) == NULL)
        return NULL;
    m = PyModule_Create(&module_def);
    if (m == NULL)
        return NULL;
    if (PyModule_AddIntConstant(m, "MAX_NAME", HR_MAX_NAME) != 0 ||
        PyModule_AddIntConstant(m, "COLD", HR_PHASE_COLD) != 0 ||
        PyModule_AddIntConstant(m, "WARM", HR_PHASE_WARM) != 0 ||
        PyModule_AddStringConstant(m, "__version__", HRPY_VERSION) != 0 ||
        PyModule_AddStringConstant(m, "_bindir", HRPY_BINDIR) != 0 ||
        PyModule_AddObjectRef(m, "scope", (PyObject *)&hrpy_scope_type) != 0 ||
        PyModule_AddObjectRef(m, "window", (PyObject *)&window_type) != 0)
        goto fail;
    ops = hrpy_ops_module();
    if (ops == NULL)
        goto fail;
    /* `import hostrange.ops` finds the submodule in sys.modules. */
    modules = PyImport_GetModuleDict();
    if (PyDict_SetItemString(modules, "hostrange.ops", ops) != 0 ||
        PyModule_AddObject(m, "ops", ops) != 0) {
        Py_DECREF(ops);
        goto fail;
    }
    return m;

fail:
    Py_DECREF(m);
    return NULL;
}
