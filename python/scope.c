/*
 * hostrange.scope(name): a range as a context manager and as a decorator.
 *
 * As a context manager, one scope object holds at most one open range (its
 * hr_scope); entering it again while it is open is an error, since two
 * nested ranges need two objects (`with hostrange.scope("x"):` makes a new
 * one each time). As a decorator, it returns a callable (hrpy_scoped_type)
 * that opens a range of its own on every call, on the calling thread, so
 * the decorated function may recurse and run on many threads at once; it is
 * a descriptor, so it decorates methods too.
 */
#include "python/hostrange_py.h"

#include <stddef.h>

#include <structmember.h>

typedef struct {
    PyObject_HEAD
    PyObject *name;
    hr_site *site;
    hr_scope sc;
    int open;
} scope_object;

typedef struct {
    PyObject_HEAD
    PyObject *func;
    hr_site *site;
    vectorcallfunc vectorcall;
    PyObject *dict;
} scoped_object;

static PyObject *scoped_vectorcall(PyObject *self, PyObject *const *args,
                                   size_t nargsf, PyObject *kwnames);

static PyObject *scope_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = { "name", NULL };
    scope_object *s;
    PyObject *name;
    hr_site *site;

    if (!PyArg_ParseTupleAndKeywords(args, kw, "U:scope", names, &name))
        return NULL;
    if ((site = hrpy_site_get(name)) == NULL)
        return NULL;
    s = (scope_object *)type->tp_alloc(type, 0);
    if (s == NULL)
        return NULL;
    Py_INCREF(name);
    s->name = name;
    s->site = site;
    return (PyObject *)s;
}

static void scope_dealloc(PyObject *self)
{
    scope_object *s = (scope_object *)self;

    Py_XDECREF(s->name);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *scope_enter(PyObject *self, PyObject *unused)
{
    scope_object *s = (scope_object *)self;

    if (s->open) {
        PyErr_Format(PyExc_RuntimeError, "scope %R is already open; nest "
                     "another hostrange.scope object instead", s->name);
        return NULL;
    }
    s->open = 1;
    s->sc = hr_begin(s->site);
    Py_INCREF(self);
    return self;
}

static PyObject *scope_exit(PyObject *self, PyObject *args)
{
    scope_object *s = (scope_object *)self;

    if (s->open) {
        hr_end(s->sc);
        s->open = 0;
    }
    Py_RETURN_FALSE;
}

/* What `func` is when a call of it returns before its body runs (a str:
 * "a generator function", ...), Py_None when it is none of those; a
 * borrowed reference, or NULL with an exception set. Asks inspect, which
 * also sees through methods and functools.partial. */
static PyObject *lazy_kind(PyObject *func)
{
    static const char *const checks[][2] = {
        { "isgeneratorfunction", "a generator function" },
        { "iscoroutinefunction", "a coroutine function" },
        { "isasyncgenfunction", "an async generator function" },
    };
    static PyObject *inspect, *kinds[3];

    if (inspect == NULL) {
        if ((inspect = PyImport_ImportModule("inspect")) == NULL)
            return NULL;
    }
    for (int i = 0; i < 3; i++) {
        PyObject *r = PyObject_CallMethod(inspect, checks[i][0], "O", func);
        int yes;

        if (r == NULL)
            return NULL;
        yes = PyObject_IsTrue(r);
        Py_DECREF(r);
        if (yes < 0)
            return NULL;
        if (yes) {
            if (kinds[i] == NULL &&
                (kinds[i] = PyUnicode_InternFromString(checks[i][1])) == NULL)
                return NULL;
            return kinds[i];
        }
    }
    return Py_None;
}

/* scope(func): the decorated function; refused for a function whose body
 * runs after its call (a generator or a coroutine): the range would cover
 * the making of the generator only, and the body, resumed later among
 * other ranges, cannot nest in one. */
static PyObject *scope_call(PyObject *self, PyObject *args, PyObject *kw)
{
    scope_object *s = (scope_object *)self;
    static PyObject *update_wrapper;
    scoped_object *w;
    PyObject *func, *r, *lazy;

    if (kw != NULL && PyDict_GET_SIZE(kw) != 0) {
        PyErr_SetString(PyExc_TypeError, "scope(func) takes no keywords");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O:scope", &func))
        return NULL;
    if (!PyCallable_Check(func)) {
        PyErr_Format(PyExc_TypeError, "scope(%R) decorates a callable, not "
                     "%.100s", s->name, Py_TYPE(func)->tp_name);
        return NULL;
    }
    if ((lazy = lazy_kind(func)) == NULL)
        return NULL;
    if (lazy != Py_None) {
        PyErr_Format(PyExc_TypeError, "scope(%R) cannot decorate %R, %U: "
                     "its body runs after the call returns, outside the "
                     "range; open `with hostrange.scope(...)` inside it, "
                     "around work that does not yield or await", s->name,
                     func, lazy);
        return NULL;
    }
    if (update_wrapper == NULL) {
        PyObject *functools = PyImport_ImportModule("functools");

        if (functools == NULL)
            return NULL;
        update_wrapper = PyObject_GetAttrString(functools, "update_wrapper");
        Py_DECREF(functools);
        if (update_wrapper == NULL)
            return NULL;
    }
    w = PyObject_GC_New(scoped_object, &hrpy_scoped_type);
    if (w == NULL)
        return NULL;
    Py_INCREF(func);
    w->func = func;
    w->site = s->site;
    w->vectorcall = scoped_vectorcall;
    w->dict = NULL;
    PyObject_GC_Track(w);
    /* Only now: the call happens with the object complete. */
    r = PyObject_CallFunctionObjArgs(update_wrapper, (PyObject *)w, func,
                                     NULL);
    if (r == NULL) {
        Py_DECREF(w);
        return NULL;
    }
    Py_DECREF(r);
    return (PyObject *)w;
}

static PyObject *scope_repr(PyObject *self)
{
    return PyUnicode_FromFormat("hostrange.scope(%R)",
                                ((scope_object *)self)->name);
}

static PyMethodDef scope_methods[] = {
    { "__enter__", scope_enter, METH_NOARGS, NULL },
    { "__exit__", scope_exit, METH_VARARGS, NULL },
    { NULL, NULL, 0, NULL },
};

static PyMemberDef scope_members[] = {
    { "name", T_OBJECT_EX, offsetof(scope_object, name), READONLY,
      "The range name." },
    { NULL, 0, 0, 0, NULL },
};

PyTypeObject hrpy_scope_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hostrange.scope",
    .tp_basicsize = sizeof(scope_object),
    .tp_dealloc = scope_dealloc,
    .tp_repr = scope_repr,
    .tp_call = scope_call,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "scope(name)\n--\n\n"
              "A range named `name`. `with hostrange.scope(name):` measures\n"
              "the block; `@hostrange.scope(name)` measures every call of the\n"
              "decorated function (not a generator or coroutine function,\n"
              "whose body runs after the call). Ranges nest per thread and\n"
              "are collected only inside a window.",
    .tp_methods = scope_methods,
    .tp_members = scope_members,
    .tp_new = scope_new,
};

static PyObject *scoped_vectorcall(PyObject *self, PyObject *const *args,
                                   size_t nargsf, PyObject *kwnames)
{
    scoped_object *w = (scoped_object *)self;
    hr_scope sc = hr_begin(w->site);
    PyObject *r = PyObject_Vectorcall(w->func, args, nargsf, kwnames);

    hr_end(sc);
    return r;
}

/* Bound to an instance, as a function would be. */
static PyObject *scoped_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, obj);
}

static int scoped_traverse(PyObject *self, visitproc visit, void *arg)
{
    scoped_object *w = (scoped_object *)self;

    Py_VISIT(w->func);
    Py_VISIT(w->dict);
    return 0;
}

static int scoped_clear(PyObject *self)
{
    scoped_object *w = (scoped_object *)self;

    Py_CLEAR(w->func);
    Py_CLEAR(w->dict);
    return 0;
}

static void scoped_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    scoped_clear(self);
    PyObject_GC_Del(self);
}

static PyObject *scoped_repr(PyObject *self)
{
    scoped_object *w = (scoped_object *)self;

    return PyUnicode_FromFormat("<%R in hostrange.scope(%s)>", w->func,
                                w->site->name);
}

/* Pickled (and copied) as a function is: by the name it is found under,
 * its module's __qualname__ (update_wrapper copied both from the function),
 * so that it goes to another process (multiprocessing) as itself. */
static PyObject *scoped_reduce(PyObject *self, PyObject *unused)
{
    PyObject *name = PyObject_GetAttrString(self, "__qualname__");

    if (name == NULL && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "cannot pickle %R: it has no "
                     "__qualname__ to be found by", self);
    }
    return name;
}

static PyMethodDef scoped_methods[] = {
    { "__reduce__", scoped_reduce, METH_NOARGS, NULL },
    { NULL, NULL, 0, NULL },
};

static PyGetSetDef scoped_getset[] = {
    { "__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL,
      NULL },
    { NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject hrpy_scoped_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hostrange.scoped_function",
    .tp_basicsize = sizeof(scoped_object),
    .tp_dealloc = scoped_dealloc,
    .tp_vectorcall_offset = offsetof(scoped_object, vectorcall),
    .tp_repr = scoped_repr,
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC |
                Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A function decorated with hostrange.scope(name): each call is "
              "a range.",
    .tp_traverse = scoped_traverse,
    .tp_clear = scoped_clear,
    .tp_methods = scoped_methods,
    .tp_getset = scoped_getset,
    .tp_descr_get = scoped_get,
    .tp_dictoffset = offsetof(scoped_object, dict),
};
