/*
 * The aggregation's storage (lib/agg/agg.c): the exact encoding, the cap
 * after which a key moves to histograms, the memory budget, filters, paged
 * rows and filtered resets; the statistics (mean, exact median) and the
 * order of rows against brute force; a key of leaves in histograms
 * sharing one between its populations. Pure logic, no sockets.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/agg/agg_impl.h"
#include "proto/protocol.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* A key of node `node`, operator "op", backend "cpu". */
static struct hra_key *key(struct hra_agg *a, const char *node,
                           unsigned phase, const char *range)
{
    uint32_t n = hra_str(a, node), r = hra_str(a, range);

    hra_rank_node(a, n);
    hra_rank_range(a, r);
    return hra_agg_key(a, n, hra_str(a, "op"), hra_str(a, "cpu"),
                       phase, r);
}

/* Rows collected as text, and their summaries. */
struct rows {
    int n;
    char text[512][96];
    struct hra_row row[512];
};

static int collect(const struct hra_row *r, void *arg)
{
    struct rows *rs = arg;

    assert_true(rs->n < 512);
    snprintf(rs->text[rs->n], sizeof rs->text[0], "%s/%s/%s/%s/%s %llu",
             r->node_id, r->op, r->phase, r->range, r->metric,
             (unsigned long long)r->count);
    rs->row[rs->n] = *r;
    rs->n++;
    return 0;
}

static void test_encoding_round_trip(void **state)
{
    static const uint64_t values[] = {
        0, 1, 255, 256, 65535, 65536, 1ull << 32, (1ull << 56) - 1,
        1ull << 56, UINT64_MAX - 1, UINT64_MAX,
    };
    const size_t nv = sizeof values / sizeof values[0];
    uint64_t want_i[64], want_s[64], got_i[64], got_s[64];
    size_t n = 0, ns = 0, ni, nsg;
    struct hra_agg a;
    struct hra_key *k;

    (void)state;
    hra_init(&a);
    k = key(&a, "n", HRP_PHASE_WARM, "r");
    for (size_t i = 0; i < nv; i++) {
        uint64_t incl = values[i];
        uint64_t selfs[3] = { 0, incl, incl / 3 };

        for (int j = 0; j < 3; j++) {
            assert_int_equal(hra_add(&a, k, incl, selfs[j]), 0);
            want_i[n++] = incl;
            want_s[ns++] = selfs[j];
        }
        assert_int_equal(hra_add_record(&a, k, incl), 0);
        want_i[n++] = incl;
    }
    assert_int_equal(k->pairs, 3 * nv);
    assert_int_equal(k->records, nv);
    assert_int_equal(a.events, 7 * nv);
    hra_key_values(k, got_i, &ni, got_s, &nsg);
    assert_int_equal(ni, n);
    assert_int_equal(nsg, ns);
    assert_memory_equal(got_i, want_i, n * sizeof *got_i);
    assert_memory_equal(got_s, want_s, ns * sizeof *got_s);
    hra_fini(&a);
}

/* A key's coded events as a run file holds them (RunKey.events): checked,
 * decoded without slack, and added to another key, as bytes below the cap
 * and one by one across it; every kind of damage is refused. */
static void test_coded_events(void **state)
{
    static const uint64_t values[] = { 0, 7, 300, 65536, 1ull << 40,
                                       UINT64_MAX };
    const size_t nv = sizeof values / sizeof values[0];
    uint64_t wi[32], ws[32], gi[32], gs[33], np, nr;
    size_t n = 0, ns = 0, ni, nsg;
    struct hra_agg a;
    struct hra_key *k, *to, *capped;
    uint8_t *copy, bad[4];

    (void)state;
    hra_init(&a);
    k = key(&a, "n", HRP_PHASE_WARM, "r");
    for (size_t i = 0; i < nv; i++) {
        assert_int_equal(hra_add(&a, k, values[i], values[i] / 3), 0);
        wi[n++] = values[i];
        ws[ns++] = values[i] / 3;
        assert_int_equal(hra_add_record(&a, k, values[i]), 0);
        wi[n++] = values[i];
    }
    /* Without slack past the last byte: a copy of exactly len bytes. */
    copy = malloc(k->len);
    memcpy(copy, k->buf, k->len);
    assert_int_equal(hra_events_check(copy, k->len, &np, &nr), 0);
    assert_int_equal(np, nv);
    assert_int_equal(nr, nv);
    assert_int_equal(hra_events_decode(copy, k->len, gi, n, &ni, gs, ns,
                                           &nsg),
                     0);
    assert_int_equal(ni, n);
    assert_int_equal(nsg, ns);
    assert_memory_equal(gi, wi, n * sizeof *gi);
    assert_memory_equal(gs, ws, ns * sizeof *gs);
    /* Too little room is refused, not overrun. */
    assert_int_equal(hra_events_decode(copy, k->len, gi, n - 1, &ni, gs,
                                           ns, &nsg),
                     -EINVAL);
    assert_int_equal(hra_events_decode(copy, k->len, gi, n, &ni, gs,
                                           ns - 1, &nsg),
                     -EINVAL);

    /* Added to an empty key below the cap: the same bytes. */
    to = key(&a, "n", HRP_PHASE_COLD, "r");
    assert_int_equal(hra_key_add_exact(&a, to, copy, k->len, nv, nv), 0);
    assert_int_equal(to->len, k->len);
    assert_memory_equal(to->buf, k->buf, k->len);
    assert_int_equal(to->pairs, nv);
    assert_int_equal(to->records, nv);
    assert_int_equal(a.events, 2 * (3 * nv));
    /* Across the cap: one by one, the key becomes histograms, nothing is
     * lost. */
    a.exact_cap = 8;
    capped = key(&a, "m", HRP_PHASE_WARM, "r");
    assert_int_equal(hra_key_add_exact(&a, capped, copy, k->len, nv, nv),
                     0);
    assert_false(capped->exact);
    assert_int_equal(capped->pairs, nv);
    assert_int_equal(capped->records, nv);
    assert_int_equal(capped->incl->n, 2 * nv);
    assert_int_equal(capped->self->n, nv);
    assert_int_equal(capped->incl->max, UINT64_MAX);

    /* Damage: a width above 8, a record mark on the wrong nibble, an entry
     * cut short, children's time above the inclusive time. */
    bad[0] = 0x09;
    assert_int_equal(hra_events_check(bad, 1, &np, &nr), -EINVAL);
    bad[0] = 0xf0 | 0x0f;
    assert_int_equal(hra_events_check(bad, 1, &np, &nr), -EINVAL);
    bad[0] = 0x02;
    bad[1] = 1;
    assert_int_equal(hra_events_check(bad, 2, &np, &nr), -EINVAL);
    assert_int_equal(hra_events_decode(bad, 2, gi, 4, &ni, gs, 4, &nsg),
                     -EINVAL);
    bad[0] = 0x11;
    bad[1] = 5;
    bad[2] = 6;
    assert_int_equal(hra_events_check(bad, 3, &np, &nr), -EINVAL);
    assert_int_equal(hra_events_decode(bad, 3, gi, 4, &ni, gs, 4, &nsg),
                     -EINVAL);
    bad[2] = 5; /* self 0: valid */
    assert_int_equal(hra_events_check(bad, 3, &np, &nr), 0);
    assert_int_equal(np, 1);
    assert_int_equal(nr, 0);
    free(copy);
    hra_fini(&a);
}

/* The events check as the format states it, entry by entry: the
 * reference hra_events_check must agree with. */
static int ref_check(const uint8_t *b, size_t len, uint64_t *np,
                     uint64_t *nr)
{
    size_t pos = 0;

    *np = *nr = 0;
    while (pos < len) {
        unsigned w1 = b[pos] & 15u, w2 = b[pos] >> 4, rec = w2 == 15;
        uint64_t x = 0, d = 0;

        w2 = rec ? 0 : w2;
        if (w1 > 8 || w2 > 8 || len - pos < 1 + w1 + w2)
            return -EINVAL;
        for (unsigned i = 0; i < w1; i++)
            x |= (uint64_t)b[pos + 1 + i] << (8 * i);
        for (unsigned i = 0; i < w2; i++)
            d |= (uint64_t)b[pos + 1 + w1 + i] << (8 * i);
        if (d > x)
            return -EINVAL;
        *nr += rec;
        *np += !rec;
        pos += 1 + w1 + w2;
    }
    return 0;
}

/* Random events of every width (records among them), n bytes or a little
 * more, into b; returns the length. */
static size_t random_events(uint8_t *b, size_t n)
{
    size_t len = 0;

    while (len < n) {
        uint64_t r = next(), x, d;
        unsigned w1 = (unsigned)(r % 9), w2;

        x = w1 == 0 ? 0 : (next() & (~0ull >> (64 - 8 * w1))) |
                              (1ull << (8 * (w1 - 1)));
        if ((r >> 8) % 7 == 0) {
            b[len] = (uint8_t)(w1 | 15u << 4);
            for (unsigned i = 0; i < w1; i++)
                b[len + 1 + i] = (uint8_t)(x >> (8 * i));
            len += 1 + w1;
            continue;
        }
        d = x == 0 ? 0 : next() % (x + 1 == 0 ? x : x + 1);
        w2 = d == 0 ? 0 : (unsigned)(71 - __builtin_clzll(d)) / 8u;
        b[len] = (uint8_t)(w1 | w2 << 4);
        for (unsigned i = 0; i < w1; i++)
            b[len + 1 + i] = (uint8_t)(x >> (8 * i));
        for (unsigned i = 0; i < w2; i++)
            b[len + 1 + w1 + i] = (uint8_t)(d >> (8 * i));
        len += 1 + w1 + w2;
    }
    return len;
}

/* The check walks long buffers a block at a time: it accepts and refuses
 * exactly what the entry-by-entry reading of the format does, with the
 * same counts, whatever byte is damaged wherever, near block ends and the
 * buffer's end too (every buffer a copy of exactly its length). */
static void test_events_check_blocks(void **state)
{
    (void)state;
    for (size_t n = 0; n < 700; n += 1 + n / 8) {
        uint8_t src[800];
        size_t len = random_events(src, n);
        uint64_t np, nr, rp, rr;
        uint8_t *b = calloc(len + 1, 1);

        memcpy(b, src, len);
        assert_int_equal(ref_check(b, len, &rp, &rr), 0);
        assert_int_equal(hra_events_check(b, len, &np, &nr), 0);
        assert_int_equal(np, rp);
        assert_int_equal(nr, rr);
        /* Each byte damaged in turn, with values that break a header, a
         * width, or a children's time. */
        for (size_t at = 0; at < len; at++) {
            static const uint8_t vals[] = { 0x00, 0x09, 0x90, 0xff, 0xf9,
                                            0x88, 0x18, 0x81, 0x7f };

            for (size_t v = 0; v < sizeof vals + 1; v++) {
                uint8_t was = b[at];
                int want, got;

                b[at] = v < sizeof vals ? vals[v] : (uint8_t)next();
                want = ref_check(b, len, &rp, &rr);
                got = hra_events_check(b, len, &np, &nr);
                assert_int_equal(got, want);
                if (want == 0) {
                    assert_int_equal(np, rp);
                    assert_int_equal(nr, rr);
                }
                b[at] = was;
            }
        }
        /* Cut short anywhere. */
        for (size_t cut = 0; cut < len; cut += 1 + cut / 16) {
            uint8_t *c = malloc(cut + 1);

            memcpy(c, b, cut);
            assert_int_equal(hra_events_check(c, cut, &np, &nr),
                             ref_check(c, cut, &rp, &rr));
            free(c);
        }
        free(b);
    }
}

/* Events of one shape, as one key holds them, n bytes or a little more,
 * into b; returns the length. Shape 0: leaves (a 2-byte inclusive time),
 * 1: ranges with children (2 and 2 bytes), 2: records (3 bytes), 3: the
 * same 4-byte entry again and again (03 03 03 03), whose bytes all read as
 * that header, so that a walk begun inside an entry never meets the
 * entries' own walk. */
static size_t shaped_events(uint8_t *b, size_t n, int shape)
{
    size_t len = 0;

    while (len < n) {
        uint64_t r = next();
        uint64_t x = 256 + r % 65280, d = x / 20 + (r >> 20) % (x / 4);

        if (shape == 3) {
            memset(b + len, 0x03, 4);
            len += 4;
        } else if (shape == 0) {
            b[len] = 0x02;
            b[len + 1] = (uint8_t)x;
            b[len + 2] = (uint8_t)(x >> 8);
            len += 3;
        } else if (shape == 1) {
            d = d < 256 ? 256 : d;
            b[len] = 0x22;
            b[len + 1] = (uint8_t)x;
            b[len + 2] = (uint8_t)(x >> 8);
            b[len + 3] = (uint8_t)d;
            b[len + 4] = (uint8_t)(d >> 8);
            len += 5;
        } else {
            x |= 1u << 16;
            b[len] = 0xf3;
            for (unsigned i = 0; i < 3; i++)
                b[len + 1 + i] = (uint8_t)(x >> (8 * i));
            len += 4;
        }
    }
    return len;
}

/* Checks b[0..len) (a copy of exactly its length) against ref_check. */
static void check_as_ref(const uint8_t *b, size_t len)
{
    uint8_t *c = malloc(len + 1);
    uint64_t np = 0, nr = 0, rp, rr;
    int want, got;

    memcpy(c, b, len);
    want = ref_check(c, len, &rp, &rr);
    got = hra_events_check(c, len, &np, &nr);
    assert_int_equal(got, want);
    if (want == 0) {
        assert_int_equal(np, rp);
        assert_int_equal(nr, rr);
    }
    free(c);
}

/* Long buffers are walked in parts side by side, each part from a guess
 * at where an entry starts, joined to the true walk afterwards: the check
 * still accepts and refuses exactly what the entry-by-entry reading does,
 * with the same counts, for buffers of every shape and of lengths about
 * where the parts begin to be used and well past, whatever byte is
 * damaged (near the parts' starts above all), and cut short anywhere near
 * the end. */
static void test_events_check_walks(void **state)
{
    static const uint8_t vals[] = { 0x00, 0x09, 0x90, 0xff, 0xf9, 0x88,
                                    0x18, 0x81, 0x7f, 0x03, 0x22 };
    static const size_t sizes[] = { 1990, 2047, 2079, 2080, 2081, 2100,
                                    2150, 2500, 4096, 6001, 9973, 40000 };
    uint8_t *src = malloc(41000), *b = malloc(41000);

    (void)state;
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        for (int shape = -1; shape < 4; shape++) {
            size_t len = shape < 0 ? random_events(src, sizes[si])
                                   : shaped_events(src, sizes[si], shape);

            /* As made: valid. */
            memcpy(b, src, len);
            check_as_ref(b, len);
            {
                uint64_t np, nr;

                assert_int_equal(hra_events_check(b, len, &np, &nr), 0);
            }
            /* One byte damaged: around each quarter of the buffer (where
             * a part begins or ends), and anywhere. */
            for (int k = 0; k < 5; k++) {
                size_t at0 = (len * (size_t)k) / 4;

                for (size_t at = at0 < 40 ? 0 : at0 - 40;
                     at < at0 + 40 && at < len; at += 1 + (next() & 3)) {
                    uint8_t was = b[at];

                    b[at] = vals[next() % sizeof vals];
                    check_as_ref(b, len);
                    b[at] = (uint8_t)next();
                    check_as_ref(b, len);
                    b[at] = was;
                }
            }
            for (int k = 0; k < 40; k++) {
                size_t at = next() % len;
                uint8_t was = b[at];

                b[at] = k % 2 ? vals[next() % sizeof vals] : (uint8_t)next();
                check_as_ref(b, len);
                b[at] = was;
            }
            /* Two bytes damaged, in different parts. */
            for (int k = 0; k < 20; k++) {
                size_t a1 = next() % len, a2 = next() % len;
                uint8_t w1 = b[a1], w2 = b[a2];

                b[a1] = vals[next() % sizeof vals];
                b[a2] = (uint8_t)next();
                check_as_ref(b, len);
                b[a2] = w2;
                b[a1] = w1;
            }
            /* Cut short near the end. */
            for (size_t cut = len > 64 ? len - 64 : 0; cut <= len; cut++)
                check_as_ref(b, cut);
        }
    }
    free(src);
    free(b);
}

/* Typical range events (inclusive under 65536 ns) take at most 5 bytes,
 * leaf ranges at most 3, and the buffer's slack stays under a quarter. */
static void test_bytes_per_event(void **state)
{
    struct hra_agg a;
    struct hra_key *inner, *outer;
    const uint64_t n = 200000;

    (void)state;
    hra_init(&a);
    outer = key(&a, "n", HRP_PHASE_WARM, "outer");
    inner = key(&a, "n", HRP_PHASE_WARM, "inner");
    for (uint64_t i = 0; i < n; i++) {
        uint64_t in = 1000 + next() % 60000;
        uint64_t out = in + 256 + next() % 4000;
        assert_int_equal(hra_add(&a, outer, out, out - in), 0);
        assert_int_equal(hra_add(&a, inner, in, in), 0);
    }
    assert_true(outer->len <= 5 * n);
    assert_true(inner->len <= 3 * n);
    assert_true(outer->cap <= outer->len + outer->len / 4 + 64);
    assert_true(a.bytes <= outer->cap + inner->cap + 2 * sizeof *outer);
    assert_true((double)a.bytes / (double)(2 * n) <= 5.0);
    hra_fini(&a);
}

/*
 * Exact buffers past 2 MiB, in huge pages (the default) and in 4 KiB
 * pages: two keys filled in turn, so that a buffer cannot always grow in
 * place and moves; every value comes back in order, a huge-page buffer
 * starts on a 2 MiB boundary with a capacity that is a multiple of 2 MiB,
 * and the memory count is the sum of the capacities.
 */
static void test_large_buffers(void **state)
{
    const uint64_t n = 2000000;
    const size_t huge = (size_t)2 << 20;

    (void)state;
    for (int small = 0; small < 2; small++) {
        struct hra_agg a;
        struct hra_key *k[2];
        uint64_t *incl, *self, seed;
        size_t ni, ns;

        hra_init(&a);
        a.small_pages = small;
        a.exact_cap = 2 * n + 10;
        a.max_bytes = (size_t)1 << 30;
        k[0] = key(&a, "n", HRP_PHASE_WARM, "first");
        k[1] = key(&a, "n", HRP_PHASE_WARM, "second");
        seed = rng;
        for (uint64_t i = 0; i < n; i++) {
            for (int j = 0; j < 2; j++) {
                uint64_t in = 1000 + next() % 60000;
                assert_int_equal(hra_add(&a, k[j], in, in - in / 3), 0);
            }
        }
        incl = malloc(n * sizeof *incl);
        self = malloc((n + 1) * sizeof *self);
        assert_non_null(incl);
        assert_non_null(self);
        assert_true(a.bytes >= k[0]->cap + k[1]->cap);
        assert_true(a.bytes <= k[0]->cap + k[1]->cap + 4096);
        for (int j = 0; j < 2; j++) {
            assert_true(k[j]->exact);
            assert_true(k[j]->len > 2 * huge);
            assert_true(k[j]->cap <= k[j]->len + k[j]->len / 4 + huge + 64);
            if (!small) {
                assert_int_equal((uintptr_t)k[j]->buf % huge, 0);
                assert_int_equal(k[j]->cap % huge, 0);
            }
        }
        for (int j = 0; j < 2; j++) {
            uint64_t keep = rng;

            hra_key_values(k[j], incl, &ni, self, &ns);
            assert_int_equal(ni, n);
            assert_int_equal(ns, n);
            rng = seed;
            for (uint64_t i = 0; i < n; i++) {
                for (int m = 0; m < 2; m++) {
                    uint64_t in = 1000 + next() % 60000;
                    if (m != j)
                        continue;
                    assert_int_equal(incl[i], in);
                    assert_int_equal(self[i], in - in / 3);
                }
            }
            rng = keep;
        }
        free(incl);
        free(self);
        hra_fini(&a);
    }
}

/* Past the cap a key keeps counting in histograms: count, mean, min, max
 * exact; quantiles within 0.1%; rows say exact = 0. */
static void test_exact_cap(void **state)
{
    struct hra_agg a;
    struct hra_key *k;
    struct rows *rs = calloc(1, sizeof *rs);
    const size_t n = 30000;
    uint64_t *incl = malloc(n * sizeof *incl), *self = malloc(n * sizeof *self);
    long double sum_i = 0, sum_s = 0;

    (void)state;
    hra_init(&a);
    a.exact_cap = 1000;
    k = key(&a, "n", HRP_PHASE_WARM, "r");
    for (size_t i = 0; i < n; i++) {
        incl[i] = 2000 + next() % 100000;
        self[i] = incl[i] - next() % (incl[i] / 2);
        sum_i += incl[i];
        sum_s += self[i];
        assert_int_equal(hra_add(&a, k, incl[i], self[i]), 0);
        assert_int_equal(k->exact, i + 1 < 1000);
    }
    assert_int_equal(a.capped, 1);
    assert_int_equal(a.events, 2 * n);
    assert_int_equal(hra_rows(&a, NULL, collect, rs), 0);
    assert_int_equal(rs->n, 2);
    qsort(incl, n, sizeof *incl, cmp);
    qsort(self, n, sizeof *self, cmp);
    for (int m = 0; m < 2; m++) {
        const struct hra_row *r = &rs->row[m];
        const uint64_t *v = m == 0 ? incl : self;
        double median = ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2;
        double p99 = (double)v[(size_t)(0.99 * (n - 1))];

        assert_int_equal(r->count, n);
        assert_int_equal(r->exact, 0);
        assert_true(r->mean == (double)((m == 0 ? sum_i : sum_s) / n));
        assert_true(r->min == (double)v[0] && r->max == (double)v[n - 1]);
        assert_true(fabs(r->median - median) <= 0.001 * median);
        /* p99's rank is not whole: allow the gap to the next value. */
        assert_true(fabs(r->p99 - p99) <=
                    0.001 * p99 + (double)(v[(size_t)(0.99 * (n - 1)) + 1] -
                                           v[(size_t)(0.99 * (n - 1))]));
    }
    free(incl);
    free(self);
    free(rs);
    hra_fini(&a);
}

/* Over the budget, the largest exact keys become histograms first and
 * small ones stay exact; when nothing is left to compact, over_budget. */
static void test_memory_budget(void **state)
{
    struct hra_agg a;
    struct hra_key *big, *mid, *small[20];
    char name[32];

    (void)state;
    hra_init(&a);
    big = key(&a, "n", HRP_PHASE_WARM, "big");
    mid = key(&a, "n", HRP_PHASE_WARM, "mid");
    for (int i = 0; i < 20; i++) {
        snprintf(name, sizeof name, "small%d", i);
        small[i] = key(&a, "n", HRP_PHASE_WARM, name);
        for (int j = 0; j < 100; j++)
            assert_int_equal(hra_add(&a, small[i], 3000 + j, 3000), 0);
    }
    for (int j = 0; j < 40000; j++)
        assert_int_equal(hra_add(&a, mid, 20000 + j % 500, 100), 0);
    for (int j = 0; j < 200000; j++)
        assert_int_equal(hra_add(&a, big, 20000 + j % 700, 100), 0);
    /* The big key alone is over a 600 KB budget. */
    assert_true(big->cap > 600000);
    a.max_bytes = 600000;
    assert_int_equal(hra_enforce(&a), 1);
    assert_int_equal(big->exact, 0);
    assert_int_equal(mid->exact, 1);
    for (int i = 0; i < 20; i++)
        assert_int_equal(small[i]->exact, 1);
    assert_true(a.bytes <= a.max_bytes);
    assert_int_equal(a.over_budget, 0);
    assert_int_equal(a.compacted, 1);
    assert_int_equal(a.events, 2 * (20 * 100 + 40000 + 200000));

    /* A budget nothing can meet. */
    a.max_bytes = 1000;
    assert_int_equal(hra_enforce(&a), 1); /* mid */
    assert_int_equal(mid->exact, 0);
    assert_int_equal(a.over_budget, 1);
    for (int i = 0; i < 20; i++)
        assert_int_equal(small[i]->exact, 1);
    hra_reset(&a);
    assert_int_equal(a.bytes, 0);
    assert_int_equal(a.over_budget, 0);
    hra_fini(&a);
}

/* Keys over two nodes, operators, backends, phases and ranges. */
static void fill_grid(struct hra_agg *a)
{
    static const char *const nodes[] = { "t/a[1]", "t/b[2]" };
    static const char *const ops[] = { "add", "gemm" };
    static const char *const backends[] = { "cpu", "cuda" };
    static const char *const ranges[] = { "dispatch.call", "cache.key" };

    for (int n = 0; n < 2; n++)
        for (int o = 0; o < 2; o++)
            for (int b = 0; b < 2; b++)
                for (int p = 1; p <= 2; p++)
                    for (int r = 0; r < 2; r++) {
                        uint32_t ni = hra_str(a, nodes[n]);
                        uint32_t ri = hra_str(a, ranges[r]);
                        struct hra_key *k;

                        hra_rank_node(a, ni);
                        hra_rank_range(a, ri);
                        k = hra_agg_key(a, ni, hra_str(a, ops[o]),
                                        hra_str(a, backends[b]),
                                        (unsigned)p, ri);
                        for (int i = 0; i <= n + o + r; i++)
                            hra_add(a, k, 100 + i, 50);
                    }
}

static int count_rows(struct hra_agg *a, const struct hra_filter *f)
{
    struct rows *rs = calloc(1, sizeof *rs);
    struct hra_cursor cur = { { 0 }, 0, 0 };
    int n;

    assert_int_equal(hra_rows_page(a, f, &cur, 0, collect, rs), 0);
    assert_int_equal(cur.done, 1);
    n = rs->n;
    free(rs);
    return n;
}

static void test_filters(void **state)
{
    struct hra_agg a;
    struct hra_filter f;

    (void)state;
    hra_init(&a);
    fill_grid(&a);
    assert_int_equal(count_rows(&a, NULL), 64);
    f = (struct hra_filter){ "t/a*", NULL, NULL, NULL, 0 };
    assert_int_equal(count_rows(&a, &f), 32);
    f = (struct hra_filter){ "t/a\\[1\\]", NULL, NULL, NULL, 0 };
    assert_int_equal(count_rows(&a, &f), 32);
    f = (struct hra_filter){ NULL, "gemm", NULL, NULL, 0 };
    assert_int_equal(count_rows(&a, &f), 32);
    f = (struct hra_filter){ NULL, NULL, "cu*", NULL, 0 };
    assert_int_equal(count_rows(&a, &f), 32);
    f = (struct hra_filter){ NULL, NULL, NULL, NULL, HRP_PHASE_COLD };
    assert_int_equal(count_rows(&a, &f), 32);
    f = (struct hra_filter){ NULL, NULL, NULL, "cache.*", 0 };
    assert_int_equal(count_rows(&a, &f), 32);
    f = (struct hra_filter){ "*b*", "add", "cpu", "dispatch.call",
                             HRP_PHASE_WARM };
    assert_int_equal(count_rows(&a, &f), 2);
    f = (struct hra_filter){ "", "", "", "", 0 };
    assert_int_equal(count_rows(&a, &f), 64);
    f = (struct hra_filter){ "nomatch", NULL, NULL, NULL, 0 };
    assert_int_equal(count_rows(&a, &f), 0);
    hra_fini(&a);
}

/* Pages of any size give the rows of one unpaged pass, in order. */
static void test_pages(void **state)
{
    struct hra_agg a;
    struct rows *all = calloc(1, sizeof *all), *paged = calloc(1, sizeof *paged);
    struct hra_cursor cur = { { 0 }, 0, 0 };
    int pages = 0;

    (void)state;
    hra_init(&a);
    fill_grid(&a);
    assert_int_equal(hra_rows(&a, NULL, collect, all), 0);
    while (!cur.done) {
        int before = paged->n;
        assert_int_equal(hra_rows_page(&a, NULL, &cur, 5, collect, paged),
                         0);
        assert_true(paged->n > before);
        pages++;
    }
    assert_true(pages > 4);
    assert_int_equal(paged->n, all->n);
    for (int i = 0; i < all->n; i++)
        assert_string_equal(paged->text[i], all->text[i]);

    /* Keys made while a dump pages: one ordered after the cursor shows on
     * a later page, one before it (node t/a[1], once the pages are past
     * it) does not. */
    memset(paged, 0, sizeof *paged);
    memset(&cur, 0, sizeof cur);
    while (paged->n == 0 || strncmp(paged->text[paged->n - 1], "t/b", 3) != 0)
        assert_int_equal(hra_rows_page(&a, NULL, &cur, 1, collect, paged),
                         0);
    assert_int_equal(paged->n, 34); /* 32 of t/a[1], a key of t/b[2] */
    hra_add(&a, key(&a, "t/a[1]", HRP_PHASE_WARM, "zzz.last"), 1, 1);
    hra_add(&a, key(&a, "t/z[9]", HRP_PHASE_COLD, "dispatch.call"), 1, 1);
    while (!cur.done)
        assert_int_equal(hra_rows_page(&a, NULL, &cur, 1, collect, paged),
                         0);
    assert_int_equal(paged->n, all->n + 2);
    assert_string_equal(paged->text[paged->n - 2],
                        "t/z[9]/op/cold/dispatch.call/inclusive 1");
    free(all);
    free(paged);
    hra_fini(&a);
}

static void test_reset_filtered(void **state)
{
    struct hra_agg a;
    struct hra_filter f = { NULL, "gemm", NULL, NULL, HRP_PHASE_WARM };
    struct hra_key *k;
    uint64_t events;

    (void)state;
    hra_init(&a);
    fill_grid(&a);
    events = a.events;
    assert_int_equal(hra_reset_filtered(&a, &f), 8);
    assert_int_equal(a.nkeys, 24);
    assert_int_equal(count_rows(&a, &f), 0);
    assert_int_equal(count_rows(&a, NULL), 48);
    assert_true(a.events < events);
    /* The index still finds the keys that stayed, and new ones. */
    k = hra_agg_key(&a, hra_str(&a, "t/b[2]"), hra_str(&a, "add"),
                    hra_str(&a, "cuda"), HRP_PHASE_WARM,
                    hra_str(&a, "cache.key"));
    assert_int_equal(a.nkeys, 24);
    assert_int_equal(k->pairs, 1 + 0 + 1 + 1);
    k = hra_agg_key(&a, hra_str(&a, "t/b[2]"), hra_str(&a, "gemm"),
                    hra_str(&a, "cuda"), HRP_PHASE_WARM,
                    hra_str(&a, "cache.key"));
    assert_int_equal(a.nkeys, 25);
    assert_int_equal(k->pairs, 0);
    hra_fini(&a);
}

/* Per-node lost counts reach every row of the node. */
static void test_lost(void **state)
{
    struct hra_agg a;
    struct rows *rs = calloc(1, sizeof *rs);

    (void)state;
    hra_init(&a);
    hra_add(&a, key(&a, "n1", HRP_PHASE_WARM, "r"), 10, 5);
    hra_add(&a, key(&a, "n2", HRP_PHASE_WARM, "r"), 10, 5);
    hra_lost_add(&a, hra_str(&a, "n1"), 7);
    hra_lost_add(&a, hra_str(&a, "n1"), -2);
    assert_int_equal(hra_rows(&a, NULL, collect, rs), 0);
    assert_int_equal(rs->n, 4);
    assert_int_equal(rs->row[0].lost, 5);
    assert_int_equal(rs->row[1].lost, 5);
    assert_int_equal(rs->row[2].lost, 0);
    free(rs);
    hra_fini(&a);
}

/* The statistics and row order against brute force. */
static uint64_t bf_rng = 88172645463325252ull;

static uint64_t bf_next(void)
{
    bf_rng ^= bf_rng << 13;
    bf_rng ^= bf_rng >> 7;
    bf_rng ^= bf_rng << 17;
    return bf_rng;
}

static void test_median_odd_even(void **state)
{
    uint64_t odd[] = { 9, 1, 5 };
    uint64_t even[] = { 10, 3, 4, 1 };
    uint64_t one[] = { 775383 };
    uint64_t halves[] = { 6947, 6948 };
    double mean, median;

    (void)state;
    hrs_stats(odd, 3, &mean, &median);
    assert_true(median == 5.0);
    assert_true(mean == 5.0);
    hrs_stats(even, 4, &mean, &median);
    assert_true(median == 3.5);
    assert_true(mean == 4.5);
    hrs_stats(one, 1, &mean, &median);
    assert_true(median == 775383.0 && mean == 775383.0);
    hrs_stats(halves, 2, &mean, &median);
    assert_true(median == 6947.5);
    /* A mean that is not a whole number: 32297 / 3. */
    {
        uint64_t v[] = { 6305, 6305, 19687 };
        hrs_stats(v, 3, &mean, &median);
        assert_true(mean == 32297.0 / 3.0);
        assert_true(median == 6305.0);
    }
}

static void test_random_against_brute_force(void **state)
{
    (void)state;
    for (int round = 0; round < 200; round++) {
        size_t n = 1 + bf_next() % 2000;
        uint64_t *v = malloc(n * sizeof *v), *w = malloc(n * sizeof *w);
        double mean, median, bmedian;
        long double sum = 0;

        for (size_t i = 0; i < n; i++) {
            v[i] = bf_next() % (round % 2 ? 1000 : 100000000);
            w[i] = v[i];
            sum += v[i];
        }
        hrs_stats(v, n, &mean, &median);
        qsort(w, n, sizeof *w, cmp);
        /* Brute force: the middle of a sorted copy, by selection of ranks. */
        if (n % 2)
            bmedian = (double)w[n / 2];
        else
            bmedian = ((double)w[n / 2 - 1] + (double)w[n / 2]) / 2.0;
        assert_true(median == bmedian);
        assert_true(mean == (double)(sum / (long double)n));
        free(v);
        free(w);
    }
}

struct text_rows {
    int n;
    char text[32][128];
};

static int collect_text(const struct hra_row *r, void *arg)
{
    struct text_rows *rs = arg;

    snprintf(rs->text[rs->n++], sizeof rs->text[0], "%s/%s/%s/%s %llu %g",
             r->node_id, r->phase, r->range, r->metric,
             (unsigned long long)r->count, r->median);
    return 0;
}

static void test_order_and_filter(void **state)
{
    struct hra_agg a;
    struct text_rows rs = { 0 };
    uint32_t nb, na, op, be, body, conv, e2e;
    struct hra_key *k;

    (void)state;
    hra_init(&a);
    nb = hra_str(&a, "node-b");
    na = hra_str(&a, "node-a");
    op = hra_str(&a, "add");
    be = hra_str(&a, "cpu");
    e2e = hra_str(&a, "end_to_end");
    body = hra_str(&a, "binding.body");
    conv = hra_str(&a, "binding.tensor_conversion");
    assert_int_equal(hra_str(&a, "node-b"), nb);
    /* Ranges ranked in entry order: e2e was interned first but is a record
     * range; body is entered before conv. */
    hra_rank_range(&a, body);
    hra_rank_range(&a, conv);
    hra_rank_range(&a, e2e);
    /* node-b is seen first. */
    hra_rank_node(&a, nb);
    hra_rank_node(&a, na);

    k = hra_agg_key(&a, na, op, be, HRP_PHASE_WARM, e2e);
    hra_add_record(&a, k, 50);
    k = hra_agg_key(&a, na, op, be, HRP_PHASE_WARM, conv);
    hra_add(&a, k, 10, 10);
    k = hra_agg_key(&a, na, op, be, HRP_PHASE_WARM, body);
    hra_add(&a, k, 30, 20);
    k = hra_agg_key(&a, na, op, be, HRP_PHASE_COLD, body);
    hra_add(&a, k, 300, 200);
    k = hra_agg_key(&a, nb, op, be, HRP_PHASE_WARM, body);
    hra_add(&a, k, 7, 7);
    assert_ptr_equal(hra_agg_key(&a, nb, op, be, HRP_PHASE_WARM, body), k);
    assert_int_equal(a.events, 9);

    assert_int_equal(hra_rows(&a, NULL, collect_text, &rs), 0);
    assert_int_equal(rs.n, 9);
    assert_string_equal(rs.text[0], "node-b/warm/binding.body/inclusive 1 7");
    assert_string_equal(rs.text[1], "node-b/warm/binding.body/self 1 7");
    assert_string_equal(rs.text[2], "node-a/cold/binding.body/inclusive 1 300");
    assert_string_equal(rs.text[3], "node-a/cold/binding.body/self 1 200");
    assert_string_equal(rs.text[4], "node-a/warm/binding.body/inclusive 1 30");
    assert_string_equal(rs.text[5], "node-a/warm/binding.body/self 1 20");
    assert_string_equal(rs.text[6],
                        "node-a/warm/binding.tensor_conversion/inclusive 1 10");
    assert_string_equal(rs.text[7],
                        "node-a/warm/binding.tensor_conversion/self 1 10");
    assert_string_equal(rs.text[8], "node-a/warm/end_to_end/inclusive 1 50");

    memset(&rs, 0, sizeof rs);
    assert_int_equal(hra_rows(&a, "*-a", collect_text, &rs), 0);
    assert_int_equal(rs.n, 7);
    memset(&rs, 0, sizeof rs);
    assert_int_equal(hra_rows(&a, "nomatch", collect_text, &rs), 0);
    assert_int_equal(rs.n, 0);

    hra_reset(&a);
    assert_int_equal(a.events, 0);
    memset(&rs, 0, sizeof rs);
    assert_int_equal(hra_rows(&a, NULL, collect_text, &rs), 0);
    assert_int_equal(rs.n, 0);
    hra_fini(&a);
}

static void test_many_keys(void **state)
{
    struct hra_agg a;
    char name[32];
    uint32_t op, be, r;

    (void)state;
    hra_init(&a);
    op = hra_str(&a, "op");
    be = hra_str(&a, "be");
    r = hra_str(&a, "r");
    hra_rank_range(&a, r);
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "node%d", i);
        uint32_t n = hra_str(&a, name);
        hra_rank_node(&a, n);
        assert_int_equal(hra_add(&a, hra_agg_key(&a, n, op, be, 2, r),
                                     (uint64_t)i, 0), 0);
    }
    for (int i = 0; i < 5000; i += 7) {
        snprintf(name, sizeof name, "node%d", i);
        struct hra_key *k = hra_agg_key(&a, hra_str(&a, name), op, be, 2, r);
        uint64_t incl[1], self[1];
        size_t ni, ns;
        assert_int_equal(k->pairs, 1);
        hra_key_values(k, incl, &ni, self, &ns);
        assert_int_equal(ni, 1);
        assert_int_equal(ns, 1);
        assert_int_equal(incl[0], (uint64_t)i);
        assert_int_equal(self[0], 0);
    }
    assert_int_equal(a.nkeys, 5000);
    hra_fini(&a);
}

/* x and y hold the same values, sums of squares included. */
static int hist_same(const struct hrs_hist *x, const struct hrs_hist *y)
{
    return hrs_hist_equal(x, y) && x->sumsq_small == y->sumsq_small &&
           x->sumsq_big == y->sumsq_big;
}

/* A duration for the shared-histogram test: mostly short and repeated, now
 * and then one of several seconds (squares summed in long double). */
static uint64_t duration(void)
{
    uint64_t u = next();

    return (u & 255) == 0 ? ((uint64_t)5 << 32) + (u >> 40)
                          : 10 * (2 + (u >> 20) % 4) + ((u >> 8) & 1) * 3000;
}

/*
 * A key of leaves past the cap keeps one histogram for both populations,
 * which then hold what hrs_hist_add gives for each population; a sample
 * that is not a leaf, or a record, gives self a histogram of its own, and
 * the memory count follows every step back to zero.
 */
static void test_shared_histogram(void **state)
{
    struct hra_agg a;
    struct hra_key *k, *r, *l;
    struct hrs_hist ri, rs, *hi, *hs;
    size_t before;

    (void)state;
    hra_init(&a);
    a.exact_cap = 1000;
    hrs_hist_init(&ri);
    hrs_hist_init(&rs);
    k = key(&a, "n", HRP_PHASE_WARM, "leaf");
    for (int i = 0; i < 5000; i++) {
        uint64_t v = duration();

        assert_int_equal(hra_add(&a, k, v, v), 0);
        assert_int_equal(hrs_hist_add(&ri, v), 0);
        assert_int_equal(hrs_hist_add(&rs, v), 0);
        assert_int_equal(k->exact, i + 1 < 1000);
        if (!k->exact)
            assert_ptr_equal(k->self, k->incl);
    }
    assert_true(hist_same(k->incl, &ri));
    assert_true(hist_same(k->self, &rs));
    assert_int_equal(a.events, 2 * 5000);

    /* A sample with a child parts them. */
    before = a.bytes;
    assert_int_equal(hra_add(&a, k, 70, 20), 0);
    assert_int_equal(hrs_hist_add(&ri, 70), 0);
    assert_int_equal(hrs_hist_add(&rs, 20), 0);
    assert_ptr_not_equal(k->self, k->incl);
    assert_int_equal(a.bytes,
                     before + sizeof *k->self + hrs_hist_bytes(k->self));
    for (int i = 0; i < 3000; i++) {
        uint64_t v = duration(), c = i % 3 == 0 ? v / 2 : 0;

        assert_int_equal(hra_add(&a, k, v, v - c), 0);
        assert_int_equal(hrs_hist_add(&ri, v), 0);
        assert_int_equal(hrs_hist_add(&rs, v - c), 0);
    }
    assert_true(hist_same(k->incl, &ri));
    assert_true(hist_same(k->self, &rs));
    assert_int_equal(k->pairs, 8001);
    hrs_hist_fini(&ri);
    hrs_hist_fini(&rs);

    /* A record parts them too: it goes to the inclusive population only. */
    hrs_hist_init(&ri);
    hrs_hist_init(&rs);
    r = key(&a, "n", HRP_PHASE_WARM, "rec");
    for (int i = 0; i < 1500; i++) {
        uint64_t v = duration();

        assert_int_equal(hra_add(&a, r, v, v), 0);
        assert_int_equal(hrs_hist_add(&ri, v), 0);
        assert_int_equal(hrs_hist_add(&rs, v), 0);
    }
    assert_ptr_equal(r->self, r->incl);
    assert_int_equal(hra_add_record(&a, r, 123456), 0);
    assert_int_equal(hrs_hist_add(&ri, 123456), 0);
    assert_ptr_not_equal(r->self, r->incl);
    assert_true(hist_same(r->incl, &ri));
    assert_true(hist_same(r->self, &rs));
    assert_int_equal(r->records, 1);
    hrs_hist_fini(&ri);
    hrs_hist_fini(&rs);

    /* A key with a record before the cap never shares. */
    hrs_hist_init(&ri);
    hrs_hist_init(&rs);
    r = key(&a, "n", HRP_PHASE_WARM, "rec_first");
    assert_int_equal(hra_add_record(&a, r, 77), 0);
    assert_int_equal(hrs_hist_add(&ri, 77), 0);
    for (int i = 0; i < 1500; i++) {
        uint64_t v = duration();

        assert_int_equal(hra_add(&a, r, v, v), 0);
        assert_int_equal(hrs_hist_add(&ri, v), 0);
        assert_int_equal(hrs_hist_add(&rs, v), 0);
    }
    assert_int_equal(r->exact, 0);
    assert_ptr_not_equal(r->self, r->incl);
    assert_true(hist_same(r->incl, &ri));
    assert_true(hist_same(r->self, &rs));
    hrs_hist_fini(&ri);
    hrs_hist_fini(&rs);

    /* Histograms handed over with the same values are shared (as a
     * snapshot of a key of leaves loads), unequal ones are not. */
    hrs_hist_init(&ri);
    hrs_hist_init(&rs);
    for (int i = 0; i < 500; i++) {
        uint64_t v = duration();

        assert_int_equal(hrs_hist_add(&ri, v), 0);
        assert_int_equal(hrs_hist_add(&rs, v), 0);
    }
    assert_int_equal(hrs_hist_add(&ri, 99), 0);
    l = key(&a, "n", HRP_PHASE_WARM, "loaded");
    hi = malloc(sizeof *hi);
    hs = malloc(sizeof *hs);
    assert_int_equal(hrs_hist_copy(hi, &rs), 0);
    assert_int_equal(hrs_hist_copy(hs, &rs), 0);
    assert_int_equal(hra_key_set_hist(&a, l, hi, hs, rs.n, 0), 0);
    assert_ptr_equal(l->self, l->incl);
    assert_true(hist_same(l->incl, &rs));
    assert_int_equal(hra_key_unshare(&a, l), 0);
    assert_ptr_not_equal(l->self, l->incl);
    assert_true(hist_same(l->incl, &rs) && hist_same(l->self, &rs));
    hra_key_remove(&a, l);
    l = key(&a, "n", HRP_PHASE_WARM, "loaded2");
    hi = malloc(sizeof *hi);
    hs = malloc(sizeof *hs);
    assert_int_equal(hrs_hist_copy(hi, &ri), 0);
    assert_int_equal(hrs_hist_copy(hs, &rs), 0);
    assert_int_equal(hra_key_set_hist(&a, l, hi, hs, rs.n, 1), 0);
    assert_ptr_not_equal(l->self, l->incl);
    hrs_hist_fini(&ri);
    hrs_hist_fini(&rs);

    /* The copy a mirror path key gets of a shared key is shared. */
    k = key(&a, "n", HRP_PHASE_WARM, "mirrored");
    l = hra_path_key_live(&a, k, hra_path(&a, 0, k->range));
    assert_non_null(l);
    assert_int_equal(l->mirror, 1);
    for (int i = 0; i < 2000; i++)
        assert_int_equal(hra_add(&a, k, 30, 30), 0);
    assert_ptr_equal(k->self, k->incl);
    assert_int_equal(hra_path_unmirror(&a, k), 0);
    assert_int_equal(l->mirror, 0);
    assert_ptr_equal(l->self, l->incl);
    assert_true(hist_same(l->incl, k->incl));
    assert_int_equal(l->pairs, 2000);
    assert_int_equal(hra_path_add(&a, l, 40, 10), 0);
    assert_ptr_not_equal(l->self, l->incl);
    assert_ptr_equal(k->self, k->incl);
    assert_int_equal(k->incl->n, 2000);
    assert_int_equal(l->self->n, 2001);
    assert_int_equal(l->self->min, 10);

    hra_reset(&a);
    assert_int_equal(a.bytes, hra_pathtab_bytes(&a));
    assert_int_equal(a.events, 0);
    hra_fini(&a);
}

/* A key made without an event has no buffer: its values are none, and
 * its summaries are those of no value (a run file may hold such a key). */
/*
 * A key made histograms (hra_key_to_hist, read straight from the
 * encoding) holds what adding its values one by one gives: for keys of
 * leaves only (one shared histogram), of ranges with children, of records
 * among them, and of values of every width up to 2^64 - 1.
 */
static void test_to_hist_from_encoding(void **state)
{
    struct hra_agg a;

    (void)state;
    hra_init(&a);
    a.exact_cap = UINT64_MAX;
    for (int kind = 0; kind < 4; kind++) {
        struct hra_key *k = key(&a, "n", HRP_PHASE_COLD, "to_hist");
        struct hrs_hist ri, rs;
        uint64_t *incl = malloc(3000 * sizeof *incl);
        uint64_t *self = malloc(3001 * sizeof *self);
        size_t ni, ns;

        assert_non_null(incl);
        assert_non_null(self);
        for (int i = 0; i < 3000; i++) {
            uint64_t u = next(), bytes = u % 9;
            uint64_t v = bytes == 8 ? u | 1ull << 63
                                    : (u >> 8) & ((1ull << (8 * bytes)) - 1);
            uint64_t c = kind == 0 ? 0 : (u >> 4) % 3 == 0 ? 0 : v / 3;

            if (kind == 3 && i % 7 == 3)
                assert_int_equal(hra_add_record(&a, k, v), 0);
            else if (kind == 2 && i == 2999)
                assert_int_equal(hra_add(&a, k, v, v - v / 2), 0);
            else
                assert_int_equal(hra_add(&a, k, v, v - (kind == 2 ? 0
                                                            : c)), 0);
        }
        hra_key_values(k, incl, &ni, self, &ns);
        hrs_hist_init(&ri);
        hrs_hist_init(&rs);
        for (size_t i = 0; i < ni; i++)
            assert_int_equal(hrs_hist_add(&ri, incl[i]), 0);
        for (size_t i = 0; i < ns; i++)
            assert_int_equal(hrs_hist_add(&rs, self[i]), 0);
        assert_int_equal(hra_key_to_hist(&a, k), 0);
        assert_false(k->exact);
        assert_true(hist_same(k->incl, &ri));
        assert_true(hist_same(k->self, &rs));
        /* Only a key of leaves (kind 0) shares one histogram; a single
         * child at the end (kind 2) parts them. */
        assert_int_equal(k->self == k->incl, kind == 0);
        hrs_hist_fini(&ri);
        hrs_hist_fini(&rs);
        free(incl);
        free(self);
        hra_key_remove(&a, k);
    }
    assert_int_equal(a.bytes, 0);
    hra_fini(&a);
}

static void test_key_without_events(void **state)
{
    struct hra_agg a;
    struct hra_key *k;
    struct hrs_summary si, ss;
    uint64_t incl[1], self[2];
    size_t ni = 7, ns = 7;

    (void)state;
    hra_init(&a);
    k = key(&a, "t/empty", HRP_PHASE_WARM, "r");
    assert_non_null(k);
    assert_true(k->exact && k->buf == NULL && k->len == 0);
    hra_key_values(k, incl, &ni, self, &ns);
    assert_int_equal(ni, 0);
    assert_int_equal(ns, 0);
    assert_int_equal(hra_key_summaries(&a, k, &si, &ss), 0);
    assert_int_equal(si.count, 0);
    assert_int_equal(ss.count, 0);
    hra_fini(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encoding_round_trip),
        cmocka_unit_test(test_key_without_events),
        cmocka_unit_test(test_coded_events),
        cmocka_unit_test(test_bytes_per_event),
        cmocka_unit_test(test_large_buffers),
        cmocka_unit_test(test_exact_cap),
        cmocka_unit_test(test_memory_budget),
        cmocka_unit_test(test_filters),
        cmocka_unit_test(test_pages),
        cmocka_unit_test(test_reset_filtered),
        cmocka_unit_test(test_lost),
        cmocka_unit_test(test_median_odd_even),
        cmocka_unit_test(test_events_check_blocks),
        cmocka_unit_test(test_events_check_walks),
        cmocka_unit_test(test_random_against_brute_force),
        cmocka_unit_test(test_order_and_filter),
        cmocka_unit_test(test_many_keys),
        cmocka_unit_test(test_shared_histogram),
        cmocka_unit_test(test_to_hist_from_encoding),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
