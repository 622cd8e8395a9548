/*
 * The alignment of an address as the CUDA backend's plans use it
 * (ops/align.h): the lowest set bit, clamped, over the full width of the
 * address, so that 4 GiB-aligned buffers are not given alignment 0.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ops/align.h"

static void test_small(void **state)
{
    (void)state;
    assert_int_equal(hrops__alignment(0x1001, 256), 1);
    assert_int_equal(hrops__alignment(0x1002, 256), 2);
    assert_int_equal(hrops__alignment(0x1004, 256), 4);
    assert_int_equal(hrops__alignment(0x1010, 256), 16);
    assert_int_equal(hrops__alignment(0x1080, 256), 128);
    assert_int_equal(hrops__alignment(0x1100, 256), 256);
    assert_int_equal(hrops__alignment(0x1000, 256), 256);
    assert_int_equal(hrops__alignment(0x40, 16), 16);
    assert_int_equal(hrops__alignment(0x48, 16), 8);
}

static void test_zero(void **state)
{
    (void)state;
    assert_int_equal(hrops__alignment(0, 256), 256);
    assert_int_equal(hrops__alignment(0, 1), 1);
}

static void test_wide(void **state)
{
    (void)state;
    if (sizeof(uintptr_t) < 8)
        skip();
    /* Aligned to 4 GiB and more: the low 32 bits are all zero. */
    assert_int_equal(hrops__alignment((uintptr_t)1 << 32, 256), 256);
    assert_int_equal(hrops__alignment((uintptr_t)3 << 33, 256), 256);
    assert_int_equal(hrops__alignment((uintptr_t)1 << 63, 256), 256);
    assert_int_equal(hrops__alignment(((uintptr_t)1 << 40) | 0x20, 256), 32);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small),
        cmocka_unit_test(test_zero),
        cmocka_unit_test(test_wide),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
