/* Run files made up for tests and benchmarks (see harness_runfile.h). */
#include "config.h"

#include "tests/lib/harness_runfile.h"

#include <stdio.h>
#include <stdlib.h>

static void die(const char *what)
{
    fprintf(stderr, "run file: %s\n", what);
    exit(1);
}

void harness_runfile_create(struct harness_runfile *f, const char *path,
                            int format)
{
    Hostrange__RunHeader h = HOSTRANGE__RUN_HEADER__INIT;

    h.host = "harness";
    harness_runfile_create_header(f, path, format, &h);
}

void harness_runfile_create_header(struct harness_runfile *f,
                                   const char *path, int format,
                                   Hostrange__RunHeader *h)
{
    char err[8400];

    hra_init(&f->a);
    f->a.exact_cap = UINT64_MAX;
    f->a.max_depth = HRA_MAX_DEPTH_LIMIT;
    f->format = format;
    h->format = (uint32_t)format;
    h->version = PACKAGE_VERSION;
    if (hrr_create(&f->w, path, h, err, sizeof err) != 0)
        die(err);
}

struct hra_key *harness_runfile_key(struct harness_runfile *f,
                                    const char *node, unsigned phase,
                                    const char *range)
{
    uint32_t n = hra_str(&f->a, node), r = hra_str(&f->a, range);
    struct hra_key *k;

    hra_rank_node(&f->a, n);
    hra_rank_range(&f->a, r);
    k = hra_agg_key(&f->a, n, hra_str(&f->a, "op"),
                    hra_str(&f->a, "cpu"), phase, r);
    if (k == NULL)
        die("out of memory");
    return k;
}

void harness_runfile_add(struct harness_runfile *f, struct hra_key *k,
                         uint64_t incl_ns, uint64_t self_ns)
{
    if (hra_add(&f->a, k, incl_ns, self_ns) != 0)
        die("out of memory");
}

void harness_runfile_add_random(struct harness_runfile *f, struct hra_key *k,
                                unsigned n, uint64_t lo, uint64_t spread,
                                uint64_t *rng)
{
    for (unsigned i = 0; i < n; i++) {
        uint64_t u, v;

        *rng ^= *rng << 13;
        *rng ^= *rng >> 7;
        *rng ^= *rng << 17;
        u = *rng;
        v = lo + (u >> 11) % spread;
        harness_runfile_add(f, k, v, v / 2 + (u >> 40) % (v / 2 + 1));
    }
}

void harness_runfile_add_path(struct harness_runfile *f, struct hra_key *k,
                              const char *const *names, uint32_t depth,
                              uint64_t incl_ns, uint64_t self_ns)
{
    uint32_t path = 0;
    struct hra_key *pk;

    for (uint32_t i = 0; i < depth; i++) {
        uint32_t r = hra_str(&f->a, names[i]);

        hra_rank_range(&f->a, r);
        path = hra_path(&f->a, path, r);
        if (path == 0 || path == HRA_PATH_TOO_DEEP)
            die("path not kept");
    }
    pk = hra_path_key(&f->a, k, path);
    if (pk == NULL || hra_add(&f->a, k, incl_ns, self_ns) != 0 ||
        hra_path_add(&f->a, pk, incl_ns, self_ns) != 0)
        die("out of memory");
}

void harness_runfile_put(struct harness_runfile *f, struct hra_key *k)
{
    Hostrange__RunKey m;
    char err[8400];

    if (hrr_runkey_from(&f->a, k, f->format, &m) != 0)
        die("out of memory");
    if (hrr_put_key(&f->w, &m, err, sizeof err) != 0)
        die(err);
    hrr_runkey_clear(&m);
    hra_key_remove(&f->a, k);
}

void harness_runfile_commit(struct harness_runfile *f)
{
    Hostrange__RunEnd e = HOSTRANGE__RUN_END__INIT;
    char err[8400];

    if (hrr_commit(&f->w, &e, err, sizeof err) != 0)
        die(err);
    hrr_abort(&f->w);
    hra_fini(&f->a);
}

void harness_runfile_count(const char *path, size_t *keys, uint64_t *events,
                           size_t *exact)
{
    struct hrr_reader r;
    Hostrange__RunHeader *h = NULL;
    char err[8400];

    *keys = *exact = 0;
    *events = 0;
    if (hrr_open(&r, path, &h, err, sizeof err) != 0)
        die(err);
    hostrange__run_header__free_unpacked(h, NULL);
    for (;;) {
        Hostrange__RunKey *k = NULL;
        Hostrange__RunEnd *e = NULL;
        int rc = hrr_next(&r, &k, &e, err, sizeof err);

        if (rc < 0)
            die(err);
        if (rc == 2) {
            hostrange__run_end__free_unpacked(e, NULL);
            break;
        }
        *events += k->pairs + k->records;
        (*keys)++;
        *exact += k->inclusive_hist == NULL;
        hostrange__run_key__free_unpacked(k, NULL);
    }
    hrr_close(&r);
}
