/*
 * hostrange-demo: a small instrumented program that exercises every layer
 * name of the example operators with real (if tiny) work: a float32 Add
 * behind a binding, a dispatcher and a prepared-operator cache. For each
 * case it makes a cold window (one call after clearing the cache), times
 * blocks of calls with collection inactive (end_to_end: block time divided
 * by its calls) and replays as many calls inside a warm window.
 *
 * It stands in for the operator library and its benchmark until those
 * exist; its numbers are real measurements of this code.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostrange.h"

static hr_site s_body = HR_SITE_INIT("binding.body");
static hr_site s_tensor = HR_SITE_INIT("binding.tensor_conversion");
static hr_site s_device = HR_SITE_INIT("binding.device_conversion");
static hr_site s_dispatch = HR_SITE_INIT("dispatch.call");
static hr_site s_opcall = HR_SITE_INIT("operator.call");
static hr_site s_key = HR_SITE_INIT("cache.key");
static hr_site s_lookup = HR_SITE_INIT("cache.lookup");
static hr_site s_construct = HR_SITE_INIT("cache.construct");
static hr_site s_invoke = HR_SITE_INIT("operator.invoke");
static hr_site s_submit = HR_SITE_INIT("backend.submit");
static hr_site s_e2e = HR_SITE_INIT("end_to_end");

/* A generic array descriptor, as a binding receives it. */
struct desc {
    float *data;
    int rank;
    long shape[2];
    long strides[2];
    const char *device;
};

struct tensor {
    float *data;
    long n;
};

struct plan {
    uint64_t key;
    long n;
};

#define CACHE_SLOTS 8
static struct plan *cache[CACHE_SLOTS];

static void cache_clear(void)
{
    for (int i = 0; i < CACHE_SLOTS; i++) {
        free(cache[i]);
        cache[i] = NULL;
    }
}

static int to_tensor(const struct desc *d, struct tensor *t)
{
    HR_SCOPE(sc, &s_tensor);
    long n = 1;

    for (int i = 0; i < d->rank; i++) {
        if (d->shape[i] < 0)
            return -1;
        n *= d->shape[i];
    }
    /* Only contiguous row-major views in this demo. */
    if (d->rank == 2 && (d->strides[1] != 1 || d->strides[0] != d->shape[1]))
        return -1;
    t->data = d->data;
    t->n = n;
    return 0;
}

static int device_of(const char *name)
{
    HR_SCOPE(sc, &s_device);
    return strcmp(name, "cpu") == 0 ? 0 : -1;
}

static void add_loop(const struct tensor *a, const struct tensor *b,
                     struct tensor *out)
{
    HR_SCOPE(sc, &s_submit);
    for (long i = 0; i < out->n; i++)
        out->data[i] = a->data[i] + b->data[i];
}

static int operator_call(const struct tensor *a, const struct tensor *b,
                         struct tensor *out)
{
    HR_SCOPE(sc, &s_opcall);
    struct plan *p;
    uint64_t key;

    {
        HR_SCOPE(k, &s_key);
        key = 0xcbf29ce484222325ull ^ (uint64_t)out->n;
        key *= 0x100000001b3ull;
    }
    {
        HR_SCOPE(l, &s_lookup);
        p = cache[key % CACHE_SLOTS];
        if (p != NULL && p->key != key)
            p = NULL;
    }
    if (p == NULL) {
        HR_SCOPE(c, &s_construct);
        p = malloc(sizeof *p);
        if (p == NULL)
            return -1;
        p->key = key;
        p->n = out->n;
        free(cache[key % CACHE_SLOTS]);
        cache[key % CACHE_SLOTS] = p;
    }
    {
        HR_SCOPE(inv, &s_invoke);
        add_loop(a, b, out);
    }
    return 0;
}

/* The binding: descriptors in, status out. */
static int binding_add(const struct desc *a, const struct desc *b,
                       const struct desc *out)
{
    HR_SCOPE(body, &s_body);
    struct tensor ta, tb, to;

    if (to_tensor(a, &ta) || to_tensor(b, &tb) || to_tensor(out, &to) ||
        device_of(out->device) != 0 || ta.n != to.n || tb.n != to.n)
        return -1;
    {
        HR_SCOPE(d, &s_dispatch);
        return operator_call(&ta, &tb, &to);
    }
}

static int run_case(long rows, long cols)
{
    long n = rows * cols;
    float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b),
          *c = malloc(n * sizeof *c);
    struct desc da = { a, 2, { rows, cols }, { cols, 1 }, "cpu" };
    struct desc db = da, dc = da;
    char node[96];
    int calls = 64, blocks = 20, rc = 1;

    db.data = b;
    dc.data = c;
    if (a == NULL || b == NULL || c == NULL)
        goto out;
    for (long i = 0; i < n; i++) {
        a[i] = (float)i;
        b[i] = 0.5f * (float)i;
    }
    /* Correctness call. */
    if (binding_add(&da, &db, &dc) != 0 || c[n - 1] != 1.5f * (float)(n - 1)) {
        fprintf(stderr, "hostrange-demo: wrong result\n");
        goto out;
    }
    snprintf(node, sizeof node, "ops/demo_add[cpu-float32-%ldx%ld]", rows,
             cols);

    /* Cold: the first call after the cache was cleared. */
    cache_clear();
    hr_labels_set(node, "add", "cpu", HR_PHASE_COLD);
    hr_window_begin();
    binding_add(&da, &db, &dc);
    hr_window_end();

    /* Warm: timed blocks with collection inactive, then the same calls
     * replayed inside a window. */
    hr_labels_set(node, "add", "cpu", HR_PHASE_WARM);
    for (int i = 0; i < blocks; i++) {
        uint64_t t0 = hr_now_ns();
        for (int j = 0; j < calls; j++)
            binding_add(&da, &db, &dc);
        hr_record(&s_e2e, (hr_now_ns() - t0) / (uint64_t)calls);
    }
    hr_window_begin();
    for (int i = 0; i < blocks * calls; i++)
        binding_add(&da, &db, &dc);
    hr_window_end();
    rc = 0;
out:
    free(a);
    free(b);
    free(c);
    return rc;
}

static const char usage[] =
    "Usage: hostrange-demo [-h]\n"
    "A small instrumented program: a float32 Add (13x4, then 256x256) behind\n"
    "a binding, a dispatcher and an operator cache, each layer in the range\n"
    "of its name. For each shape: one call in a cold window, end_to_end\n"
    "records of timed blocks, and as many calls in a warm window, reported\n"
    "to the hostranged of $HOSTRANGE_RUNTIME_DIR. Run it under\n"
    "`hostrangectl record` to get a private daemon and its report. For the\n"
    "operator library itself, see hostrange-bench.\n"
    "\n"
    "Exit status: 0 on success, 1 on a wrong result, 2 on a usage error.\n";

int main(int argc, char **argv)
{
    int rc;

    if (argc == 2 && (strcmp(argv[1], "-h") == 0 ||
                      strcmp(argv[1], "--help") == 0)) {
        fputs(usage, stdout);
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "hostrange-demo: unexpected argument '%s' (see "
                "--help)\n", argv[1]);
        return 2;
    }
    rc = run_case(13, 4) || run_case(256, 256);

    cache_clear();
    if (hr_flush(5000) != 0)
        fprintf(stderr, "hostrange-demo: not every sample reached the "
                "daemon (is hostranged running? see HOSTRANGE_RUNTIME_DIR)\n");
    return rc;
}
