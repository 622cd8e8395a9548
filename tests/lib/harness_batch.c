/* Batches for the daemon's tests and benchmarks (see harness_batch.h). */
#include "config.h"

#include "tests/lib/harness_batch.h"
#include "proto/protocol.h"
#include "proto/stream.h"

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
    free(x->label);
    free(x->range);
    free(x->children);
    free(x->incl);
    free(x->self);
    free(x->rec_label);
    free(x->rec_range);
    free(x->rec_ns);
    free(x->lost_label);
    free(x->lost_count);
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
    size_t i = x->n;

    if (i == x->cap) {
        size_t old = x->cap;
        x->cap = x->cap ? 2 * x->cap : 64;
        x->label = grow(x->label, x->cap, sizeof(uint32_t));
        x->range = grow(x->range, x->cap, sizeof(uint32_t));
        x->children = grow(x->children, x->cap, sizeof(uint32_t));
        memset(x->children + old, 0, (x->cap - old) * sizeof(uint32_t));
        x->incl = grow(x->incl, x->cap, sizeof(uint64_t));
        x->self = grow(x->self, x->cap, sizeof(uint64_t));
    }
    x->label[i] = label;
    x->range[i] = range;
    x->incl[i] = incl;
    x->self[i] = self;
    x->n = i + 1;
}

void db_record(struct db_batch *x, uint32_t label, uint64_t v)
{
    size_t i = x->nrec;

    if (i == x->rcap) {
        x->rcap = x->rcap ? 2 * x->rcap : 16;
        x->rec_label = grow(x->rec_label, x->rcap, sizeof(uint32_t));
        x->rec_range = grow(x->rec_range, x->rcap, sizeof(uint32_t));
        x->rec_ns = grow(x->rec_ns, x->rcap, sizeof(uint64_t));
    }
    x->rec_label[i] = label;
    x->rec_range[i] = 2;
    x->rec_ns[i] = v;
    x->nrec = i + 1;
}

void db_lost(struct db_batch *x, uint32_t label, uint64_t count)
{
    size_t i = x->nlost;

    if (i == x->lcap) {
        x->lcap = x->lcap ? 2 * x->lcap : 8;
        x->lost_label = grow(x->lost_label, x->lcap, sizeof(uint32_t));
        x->lost_count = grow(x->lost_count, x->lcap, sizeof(uint64_t));
    }
    x->lost_label[i] = label;
    x->lost_count[i] = count;
    x->nlost = i + 1;
}

size_t db_events(const struct db_batch *x)
{
    return x->n + x->nrec;
}

/* Appends a label item when the label changes. */
static uint8_t *put_label(uint8_t *p, uint32_t *cur, uint32_t label)
{
    if (*cur != label) {
        p = hrp_put_varint(p, (uint64_t)label << 2 | HRP_ITEM_LABEL);
        *cur = label;
    }
    return p;
}

uint8_t *db_pack(const struct db_batch *x, size_t *len)
{
    Hostrange__Batch b = x->b;
    uint32_t nc = (uint32_t)b.n_ranges, cur = UINT32_MAX;
    uint32_t *cparent = grow(NULL, nc + 1, sizeof(uint32_t));
    uint32_t *crange = grow(NULL, nc + 1, sizeof(uint32_t));
    uint8_t *stream = grow(NULL, (x->n + x->nrec) * HRP_ITEM_MAX + 1, 1);
    uint8_t *p = stream, *buf;

    for (uint32_t i = 0; i < nc; i++) {
        cparent[i] = 0;
        crange[i] = i;
    }
    for (size_t i = 0; i < x->n; i++) {
        uint64_t incl = x->incl[i], self = x->self[i];
        uint64_t child = self <= incl ? incl - self : incl + 1;

        p = put_label(p, &cur, x->label[i]);
        if (child == 0 && x->children[i] == 0) {
            p = hrp_put_varint(p, (uint64_t)x->range[i] << 2 | HRP_ITEM_LEAF);
            p = hrp_put_varint(p, incl);
        } else {
            p = hrp_put_varint(p,
                               (uint64_t)x->range[i] << 2 | HRP_ITEM_PARENT);
            p = hrp_put_varint(p, incl);
            p = hrp_put_varint(p, child);
            p = hrp_put_varint(p, x->children[i]);
            p = hrp_put_varint(p, 0);
        }
    }
    for (size_t i = 0; i < x->nrec; i++) {
        p = put_label(p, &cur, x->rec_label[i]);
        p = hrp_put_varint(p, (uint64_t)x->rec_range[i] << 2 | HRP_ITEM_RECORD);
        p = hrp_put_varint(p, x->rec_ns[i]);
    }
    for (size_t i = 0; i < b.n_labels; i++)
        b.labels[i]->id = (uint32_t)i;
    b.n_context_parent = b.n_context_range = nc;
    b.context_parent = cparent;
    b.context_range = crange;
    b.samples.data = stream;
    b.samples.len = (size_t)(p - stream);
    b.events = (uint64_t)((int64_t)(x->n + x->nrec) + x->events_delta);
    b.n_lost_label = b.n_lost_by_label = x->nlost;
    if (x->lost_short && x->nlost > 0)
        b.n_lost_by_label--;
    b.lost_label = x->lost_label;
    b.lost_by_label = x->lost_count;
    *len = hostrange__batch__get_packed_size(&b);
    buf = grow(NULL, *len + 1, 1);
    hostrange__batch__pack(&b, buf);
    free(cparent);
    free(crange);
    free(stream);
    return buf;
}
