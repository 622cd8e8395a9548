/* Aggregation and statistics (daemon/agg.c) against brute force. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/agg.h"
#include "proto/protocol.h"

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void test_median_odd_even(void **state)
{
    uint64_t odd[] = { 9, 1, 5 };
    uint64_t even[] = { 10, 3, 4, 1 };
    uint64_t one[] = { 775383 };
    uint64_t halves[] = { 6947, 6948 };
    double mean, median;

    (void)state;
    hrd_stats(odd, 3, &mean, &median);
    assert_true(median == 5.0);
    assert_true(mean == 5.0);
    hrd_stats(even, 4, &mean, &median);
    assert_true(median == 3.5);
    assert_true(mean == 4.5);
    hrd_stats(one, 1, &mean, &median);
    assert_true(median == 775383.0 && mean == 775383.0);
    hrd_stats(halves, 2, &mean, &median);
    assert_true(median == 6947.5);
    /* A mean that is not a whole number: 32297 / 3. */
    {
        uint64_t v[] = { 6305, 6305, 19687 };
        hrd_stats(v, 3, &mean, &median);
        assert_true(mean == 32297.0 / 3.0);
        assert_true(median == 6305.0);
    }
}

static int cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void test_random_against_brute_force(void **state)
{
    (void)state;
    for (int round = 0; round < 200; round++) {
        size_t n = 1 + next() % 2000;
        uint64_t *v = malloc(n * sizeof *v), *w = malloc(n * sizeof *w);
        double mean, median, bmedian;
        long double sum = 0;

        for (size_t i = 0; i < n; i++) {
            v[i] = next() % (round % 2 ? 1000 : 100000000);
            w[i] = v[i];
            sum += v[i];
        }
        hrd_stats(v, n, &mean, &median);
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

struct rows {
    int n;
    char text[32][128];
};

static int collect(const struct hrd_row *r, void *arg)
{
    struct rows *rs = arg;

    snprintf(rs->text[rs->n++], sizeof rs->text[0], "%s/%s/%s/%s %llu %g",
             r->node_id, r->phase, r->range, r->metric,
             (unsigned long long)r->count, r->median);
    return 0;
}

static void test_order_and_filter(void **state)
{
    struct hrd_agg a;
    struct rows rs = { 0 };
    uint32_t nb, na, op, be, body, conv, e2e;
    struct hrd_key *k;

    (void)state;
    hrd_agg_init(&a);
    nb = hrd_agg_str(&a, "node-b");
    na = hrd_agg_str(&a, "node-a");
    op = hrd_agg_str(&a, "add");
    be = hrd_agg_str(&a, "cpu");
    e2e = hrd_agg_str(&a, "end_to_end");
    body = hrd_agg_str(&a, "binding.body");
    conv = hrd_agg_str(&a, "binding.tensor_conversion");
    assert_int_equal(hrd_agg_str(&a, "node-b"), nb);
    /* Ranges ranked in entry order: e2e was interned first but is a record
     * range; body is entered before conv. */
    hrd_agg_rank_range(&a, body);
    hrd_agg_rank_range(&a, conv);
    hrd_agg_rank_range(&a, e2e);
    /* node-b is seen first. */
    hrd_agg_rank_node(&a, nb);
    hrd_agg_rank_node(&a, na);

    k = hrd_agg_key(&a, na, op, be, HRP_PHASE_WARM, e2e);
    hrd_agg_add_record(&a, k, 50);
    k = hrd_agg_key(&a, na, op, be, HRP_PHASE_WARM, conv);
    hrd_agg_add(&a, k, 10, 10);
    k = hrd_agg_key(&a, na, op, be, HRP_PHASE_WARM, body);
    hrd_agg_add(&a, k, 30, 20);
    k = hrd_agg_key(&a, na, op, be, HRP_PHASE_COLD, body);
    hrd_agg_add(&a, k, 300, 200);
    k = hrd_agg_key(&a, nb, op, be, HRP_PHASE_WARM, body);
    hrd_agg_add(&a, k, 7, 7);
    assert_ptr_equal(hrd_agg_key(&a, nb, op, be, HRP_PHASE_WARM, body), k);
    assert_int_equal(a.events, 9);

    assert_int_equal(hrd_agg_rows(&a, NULL, collect, &rs), 0);
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
    assert_int_equal(hrd_agg_rows(&a, "*-a", collect, &rs), 0);
    assert_int_equal(rs.n, 7);
    memset(&rs, 0, sizeof rs);
    assert_int_equal(hrd_agg_rows(&a, "nomatch", collect, &rs), 0);
    assert_int_equal(rs.n, 0);

    hrd_agg_reset(&a);
    assert_int_equal(a.events, 0);
    memset(&rs, 0, sizeof rs);
    assert_int_equal(hrd_agg_rows(&a, NULL, collect, &rs), 0);
    assert_int_equal(rs.n, 0);
    hrd_agg_fini(&a);
}

static void test_many_keys(void **state)
{
    struct hrd_agg a;
    char name[32];
    uint32_t op, be, r;

    (void)state;
    hrd_agg_init(&a);
    op = hrd_agg_str(&a, "op");
    be = hrd_agg_str(&a, "be");
    r = hrd_agg_str(&a, "r");
    hrd_agg_rank_range(&a, r);
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "node%d", i);
        uint32_t n = hrd_agg_str(&a, name);
        hrd_agg_rank_node(&a, n);
        assert_int_equal(hrd_agg_add(&a, hrd_agg_key(&a, n, op, be, 2, r),
                                     (uint64_t)i, 0), 0);
    }
    for (int i = 0; i < 5000; i += 7) {
        snprintf(name, sizeof name, "node%d", i);
        struct hrd_key *k = hrd_agg_key(&a, hrd_agg_str(&a, name), op, be, 2, r);
        uint64_t incl[1], self[1];
        size_t ni, ns;
        assert_int_equal(k->pairs, 1);
        hrd_agg_key_values(k, incl, &ni, self, &ns);
        assert_int_equal(ni, 1);
        assert_int_equal(ns, 1);
        assert_int_equal(incl[0], (uint64_t)i);
        assert_int_equal(self[0], 0);
    }
    assert_int_equal(a.nkeys, 5000);
    hrd_agg_fini(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_median_odd_even),
        cmocka_unit_test(test_random_against_brute_force),
        cmocka_unit_test(test_order_and_filter),
        cmocka_unit_test(test_many_keys),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
