/* Batches for the daemon's tests and benchmarks (see harness_batch.h). */
#include "config.h"

#include "tests/lib/harness_batch.h"
#include "proto/protocol.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void db_init(struct db_batch *x, uint32_t pid, uint64_t seq)
{
    static char *names[3] = { "binding.body", "dispatch.call", "end_to_end" };

    memset(x, 0, sizeof *x);
    hostrange__batch__init(&x->b);
    x->b.version = HRP_VERSION;
    x->b.pid = pid;
    x->b.instance = 0xabcdef00ull + pid;
    x->b.process_label = "test";
    x->b.clock = "tsc";
    x->b.seq = seq;
    for (int i = 0; i < 4; i++) {
        hostrange__label_set__init(&x->l[i]);
        x->l[i].node_id = i < 2 ? "n1" : "n2";
        x->l[i].operator_ = "add";
        x->l[i].backend = "cpu";
        x->l[i].phase = i % 2 ? HRP_PHASE_WARM : HRP_PHASE_COLD;
        x->lp[i] = &x->l[i];
    }
    x->b.labels = x->lp;
    x->b.n_labels = 4;
    memcpy(x->ranges, names, sizeof names);
    x->b.ranges = x->ranges;
    x->b.n_ranges = 3;
}

void db_fini(struct db_batch *x)
{
    free(x->b.sample_label);
    free(x->b.sample_range);
    free(x->b.inclusive_ns);
    free(x->b.self_ns);
    free(x->b.record_label);
    free(x->b.record_range);
    free(x->b.record_ns);
    free(x->b.lost_label);
    free(x->b.lost_by_label);
    memset(x, 0, sizeof *x);
}

/* Grows an array to hold cap elements of size sz; exits on ENOMEM. */
static void *grow(void *p, size_t cap, size_t sz)
{
    p = realloc(p, cap * sz);
    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

void db_sample(struct db_batch *x, uint32_t label, uint32_t range,
               uint64_t incl, uint64_t self)
{
    Hostrange__Batch *b = &x->b;
    size_t i = b->n_sample_label;

    if (i == x->cap) {
        x->cap = x->cap ? 2 * x->cap : 64;
        b->sample_label = grow(b->sample_label, x->cap, sizeof(uint32_t));
        b->sample_range = grow(b->sample_range, x->cap, sizeof(uint32_t));
        b->inclusive_ns = grow(b->inclusive_ns, x->cap, sizeof(uint64_t));
        b->self_ns = grow(b->self_ns, x->cap, sizeof(uint64_t));
    }
    b->sample_label[i] = label;
    b->sample_range[i] = range;
    b->inclusive_ns[i] = incl;
    b->self_ns[i] = self;
    b->n_sample_label = b->n_sample_range = b->n_inclusive_ns =
        b->n_self_ns = i + 1;
}

void db_record(struct db_batch *x, uint32_t label, uint64_t v)
{
    Hostrange__Batch *b = &x->b;
    size_t i = b->n_record_label;

    if (i == x->rcap) {
        x->rcap = x->rcap ? 2 * x->rcap : 16;
        b->record_label = grow(b->record_label, x->rcap, sizeof(uint32_t));
        b->record_range = grow(b->record_range, x->rcap, sizeof(uint32_t));
        b->record_ns = grow(b->record_ns, x->rcap, sizeof(uint64_t));
    }
    b->record_label[i] = label;
    b->record_range[i] = 2;
    b->record_ns[i] = v;
    b->n_record_label = b->n_record_range = b->n_record_ns = i + 1;
}

void db_lost(struct db_batch *x, uint32_t label, uint64_t count)
{
    Hostrange__Batch *b = &x->b;
    size_t i = b->n_lost_label;

    if (i == x->lcap) {
        x->lcap = x->lcap ? 2 * x->lcap : 8;
        b->lost_label = grow(b->lost_label, x->lcap, sizeof(uint32_t));
        b->lost_by_label = grow(b->lost_by_label, x->lcap, sizeof(uint64_t));
    }
    b->lost_label[i] = label;
    b->lost_by_label[i] = count;
    b->n_lost_label = b->n_lost_by_label = i + 1;
}

uint8_t *db_pack(const struct db_batch *x, size_t *len)
{
    uint8_t *buf;

    *len = hostrange__batch__get_packed_size(&x->b);
    buf = grow(NULL, *len + 1, 1);
    hostrange__batch__pack(&x->b, buf);
    return buf;
}
