/* The search of hostrangectl bisect (lib/stat/bisect.c): what a measured
 * commit is, and which commit comes next. */
#include "config.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lib/stat/bisect.h"

#define U HRD_BISECT_UNTESTED
#define G HRD_BISECT_GOOD
#define B HRD_BISECT_BAD
#define M HRD_BISECT_MIDDLE
#define X HRD_BISECT_UNCLEAR
#define S HRD_BISECT_SKIPPED

static struct hrd_decide d(enum hrd_decide_verdict v)
{
    struct hrd_decide x = { v, 5, 0, 1, -INFINITY, INFINITY };

    return x;
}

static void classify(void **state)
{
    struct hrd_decide same = d(HRD_DECIDE_SAME), slow = d(HRD_DECIDE_SLOWER),
                      fast = d(HRD_DECIDE_FASTER),
                      open = d(HRD_DECIDE_UNDECIDED);
    const enum hrd_decide_verdict up = HRD_DECIDE_SLOWER;

    (void)state;
    /* The same as one end, and not as the other. */
    assert_int_equal(hrd_bisect_classify(&same, &fast, up), G);
    assert_int_equal(hrd_bisect_classify(&same, &open, up), G);
    assert_int_equal(hrd_bisect_classify(&slow, &same, up), B);
    assert_int_equal(hrd_bisect_classify(&open, &same, up), B);
    /* The same as both: nothing is known. */
    assert_int_equal(hrd_bisect_classify(&same, &same, up), X);
    /* Between the ends: a middle. */
    assert_int_equal(hrd_bisect_classify(&slow, &fast, up), M);
    assert_int_equal(hrd_bisect_classify(&slow, &open, up), X);
    assert_int_equal(hrd_bisect_classify(&open, &open, up), X);
    /* Beyond the bad end, or a change that makes the bad end faster. */
    assert_int_equal(hrd_bisect_classify(&slow, &slow, up), X);
    assert_int_equal(hrd_bisect_classify(&fast, &slow, HRD_DECIDE_FASTER),
                     M);
    assert_int_equal(hrd_bisect_classify(&slow, &fast, HRD_DECIDE_FASTER),
                     X);
    assert_string_equal(hrd_bisect_name(G), "like good");
    assert_int_equal(hrd_bisect_parse("like bad"), B);
    assert_int_equal(hrd_bisect_parse("skipped"), S);
    assert_int_equal(hrd_bisect_parse("nothing"), -1);
}

/* Runs a whole search over n commits whose level moves at `first` (and,
 * when `second` is not 0, once more at `second`): commits in `broken`
 * are skipped. Returns the steps; *hi the first bad commit found. */
static int search(size_t n, size_t first, size_t second,
                  const int *broken, size_t *hi, size_t *hi2)
{
    enum hrd_bisect_verdict v[64] = { U };
    size_t lo, i;
    int steps = 0, pass = 0;

    v[0] = G;
    v[n - 1] = B;
    for (;;) {
        i = hrd_bisect_next(v, n, pass, &lo, hi);
        if (i == n) {
            if (pass == 0 && hrd_bisect_has_middle(v, n)) {
                pass = 1;
                continue;
            }
            break;
        }
        steps++;
        if (broken[i])
            v[i] = S;
        else if (i < first)
            v[i] = G;
        else if (second != 0 && i < second)
            v[i] = M;
        else
            v[i] = B;
    }
    if (hi2 != NULL)
        hrd_bisect_next(v, n, 1, &lo, hi2);
    hrd_bisect_next(v, n, 0, &lo, hi);
    return steps;
}

static void next(void **state)
{
    int none[64] = { 0 }, broken[64] = { 0 };
    size_t hi, hi2, lo;
    enum hrd_bisect_verdict v[6] = { G, U, U, U, U, B };

    (void)state;
    /* The middle of the commits left, the lower of two. */
    assert_int_equal(hrd_bisect_next(v, 6, 0, &lo, &hi), 2);
    assert_true(lo == 0 && hi == 5);
    v[2] = S;
    assert_int_equal(hrd_bisect_next(v, 6, 0, &lo, &hi), 3);
    v[3] = B;
    assert_int_equal(hrd_bisect_next(v, 6, 0, &lo, &hi), 1);
    assert_int_equal(hi, 3);
    v[1] = G;
    /* Done: the first bad is 3, or 2, skipped. */
    assert_int_equal(hrd_bisect_next(v, 6, 0, &lo, &hi), 6);
    assert_true(lo == 1 && hi == 3);

    /* Every place of the change among 33 commits: found within
     * ceil(log2 32) steps. */
    for (size_t at = 1; at < 33; at++) {
        int steps = search(33, at, 0, none, &hi, NULL);

        assert_int_equal(hi, at);
        assert_true(steps <= 5);
    }
    /* A broken commit in the way costs a step or two (ceil(log2 32) + 2
     * at most), and one that is the first bad leaves two candidates. */
    broken[16] = 1;
    for (size_t at = 1; at < 33; at++) {
        int steps = search(33, at, 0, broken, &hi, NULL);

        assert_true(steps <= 7);
        assert_int_equal(hi, at == 16 ? 17 : at);
    }
    /* Two steps: the first commit of each is found. */
    for (size_t at = 1; at < 30; at += 3) {
        search(33, at, at + 3, none, &hi, &hi2);
        assert_int_equal(hi, at);
        assert_int_equal(hi2, at + 3);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(classify),
        cmocka_unit_test(next),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
