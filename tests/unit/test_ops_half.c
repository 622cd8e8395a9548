/*
 * The 16-bit floating-point conversions of libhrops (ops/half.h): exact
 * values at the edges, every binary16 value through float and back, and
 * float to binary16 against a search of the binary16 values for the
 * nearest one (ties to even).
 */
#include "config.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "ops/half.h"

static void test_f16_edges(void **state)
{
    (void)state;
    assert_int_equal(hrops__f32_to_f16(1.0f), 0x3c00);
    assert_int_equal(hrops__f32_to_f16(-2.0f), 0xc000);
    assert_int_equal(hrops__f32_to_f16(0.0f), 0x0000);
    assert_int_equal(hrops__f32_to_f16(-0.0f), 0x8000);
    assert_int_equal(hrops__f32_to_f16(65504.0f), 0x7bff);
    assert_int_equal(hrops__f32_to_f16(65519.0f), 0x7bff);
    /* Halfway between the largest finite value and 2^16: to even, which
     * is infinity. */
    assert_int_equal(hrops__f32_to_f16(65520.0f), 0x7c00);
    assert_int_equal(hrops__f32_to_f16(1e30f), 0x7c00);
    assert_int_equal(hrops__f32_to_f16(-INFINITY), 0xfc00);
    assert_int_equal(hrops__f32_to_f16(0x1p-14f), 0x0400);
    assert_int_equal(hrops__f32_to_f16(0x1p-24f), 0x0001);
    assert_int_equal(hrops__f32_to_f16(0x1p-25f), 0x0000);
    assert_int_equal(hrops__f32_to_f16(0x1.8p-25f), 0x0001);
    assert_int_equal(hrops__f32_to_f16(0x1.8p-24f), 0x0002);
    assert_int_equal(hrops__f32_to_f16(0x1.ffcp-15f), 0x0400);
    /* Ties: 1 + 2^-11 to 1, 1 + 3 * 2^-11 up to 1 + 2^-9. */
    assert_int_equal(hrops__f32_to_f16(1.0f + 0x1p-11f), 0x3c00);
    assert_int_equal(hrops__f32_to_f16(1.0f + 0x1.8p-10f), 0x3c02);
    assert_int_equal(hrops__f32_to_f16(1.0f + 0x1.01p-11f), 0x3c01);
    assert_true((hrops__f32_to_f16(NAN) & 0x7fff) > 0x7c00);
    assert_true(hrops__f16_to_f32(0x3555) == 0x1.554p-2f);
    assert_true(hrops__f16_to_f32(0x0001) == 0x1p-24f);
    assert_true(hrops__f16_to_f32(0x83ff) == -0x1.ff8p-15f);
    assert_true(isinf(hrops__f16_to_f32(0x7c00)));
    assert_true(isnan(hrops__f16_to_f32(0x7e01)));
}

static void test_f16_round_trip(void **state)
{
    (void)state;
    for (uint32_t h = 0; h <= 0xffff; h++) {
        float f = hrops__f16_to_f32((uint16_t)h);

        if ((h & 0x7fff) > 0x7c00) {
            assert_true(isnan(f));
            assert_true((hrops__f32_to_f16(f) & 0x7fff) > 0x7c00);
        } else if (hrops__f32_to_f16(f) != h) {
            fail_msg("0x%04x -> %a -> 0x%04x", h, (double)f,
                     hrops__f32_to_f16(f));
        }
    }
}

/* The binary16 nearest to x >= 0 (ties to even), by a search over the
 * ordered non-negative binary16 values. */
static uint16_t nearest_f16(double x)
{
    uint32_t lo = 0, hi = 0x7c00;     /* 0x7c00: infinity */

    if (x >= 65520.0)
        return 0x7c00;
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;

        if ((double)hrops__f16_to_f32((uint16_t)mid) <= x)
            lo = mid;
        else
            hi = mid;
    }
    {
        double dlo = x - hrops__f16_to_f32((uint16_t)lo);
        double dhi = hrops__f16_to_f32((uint16_t)hi) - x;

        if (dlo < dhi || (dlo == dhi && (lo & 1) == 0))
            return (uint16_t)lo;
        return (uint16_t)hi;
    }
}

static void test_f16_nearest(void **state)
{
    uint32_t s = 12345;

    (void)state;
    for (int i = 0; i < 200000; i++) {
        float f;
        uint16_t want, got;

        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        /* Exponents 2^-27 to 2^17, any fraction, either sign. */
        f = hrops__f32_from_bits((s & 0x807fffffu) |
                                 ((100u + (s >> 8) % 45u) << 23));
        want = nearest_f16(fabs((double)f)) | (f < 0 ? 0x8000 : 0);
        got = hrops__f32_to_f16(f);
        if (got != want)
            fail_msg("%a: got 0x%04x, want 0x%04x", (double)f, got, want);
    }
}

static void test_bf16(void **state)
{
    (void)state;
    assert_int_equal(hrops__f32_to_bf16(1.0f), 0x3f80);
    assert_int_equal(hrops__f32_to_bf16(-1.0f), 0xbf80);
    assert_int_equal(hrops__f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);
    assert_int_equal(hrops__f32_to_bf16(1.0f + 0x1.8p-7f), 0x3f82);
    assert_int_equal(hrops__f32_to_bf16(1.0f + 0x1.01p-8f), 0x3f81);
    assert_int_equal(hrops__f32_to_bf16(3.4028235e38f), 0x7f80);
    assert_true((hrops__f32_to_bf16(NAN) & 0x7fff) > 0x7f80);
    /* A NaN whose payload is in the low half only stays a NaN. */
    assert_true((hrops__f32_to_bf16(hrops__f32_from_bits(0x7f800001u)) &
                 0x7fff) > 0x7f80);
    assert_true(hrops__bf16_to_f32(0x4049) == 3.140625f);
    for (uint32_t h = 0; h <= 0xffff; h++) {
        float f = hrops__bf16_to_f32((uint16_t)h);

        if ((h & 0x7fff) > 0x7f80)
            assert_true(isnan(f));
        else
            assert_int_equal(hrops__f32_to_bf16(f), h);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f16_edges),
        cmocka_unit_test(test_f16_round_trip),
        cmocka_unit_test(test_f16_nearest),
        cmocka_unit_test(test_bf16),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
