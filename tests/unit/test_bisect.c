/* The search of hostrangectl bisect (lib/stat/bisect.c): what a measured
 * commit is, and which commit comes next; its state file's lines read
 * back (lib/stat/bisectstate.c). */
#include "config.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lib/stat/bisect.h"
#include "lib/stat/bisectstate.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define U HRS_BISECT_UNTESTED
#define G HRS_BISECT_GOOD
#define B HRS_BISECT_BAD
#define M HRS_BISECT_MIDDLE
#define X HRS_BISECT_UNCLEAR
#define S HRS_BISECT_SKIPPED

static struct hrs_decide d(enum hrs_decide_verdict v)
{
    struct hrs_decide x = { v, 5, 0, 1, -INFINITY, INFINITY };

    return x;
}

static void classify(void **state)
{
    struct hrs_decide same = d(HRS_DECIDE_SAME), slow = d(HRS_DECIDE_SLOWER),
                      fast = d(HRS_DECIDE_FASTER),
                      open = d(HRS_DECIDE_UNDECIDED);
    const enum hrs_decide_verdict up = HRS_DECIDE_SLOWER;

    (void)state;
    /* The same as one end, and not as the other. */
    assert_int_equal(hrs_bisect_classify(&same, &fast, up), G);
    assert_int_equal(hrs_bisect_classify(&same, &open, up), G);
    assert_int_equal(hrs_bisect_classify(&slow, &same, up), B);
    assert_int_equal(hrs_bisect_classify(&open, &same, up), B);
    /* The same as both: nothing is known. */
    assert_int_equal(hrs_bisect_classify(&same, &same, up), X);
    /* Between the ends: a middle. */
    assert_int_equal(hrs_bisect_classify(&slow, &fast, up), M);
    assert_int_equal(hrs_bisect_classify(&slow, &open, up), X);
    assert_int_equal(hrs_bisect_classify(&open, &open, up), X);
    /* Beyond the bad end, or a change that makes the bad end faster. */
    assert_int_equal(hrs_bisect_classify(&slow, &slow, up), X);
    assert_int_equal(hrs_bisect_classify(&fast, &slow, HRS_DECIDE_FASTER),
                     M);
    assert_int_equal(hrs_bisect_classify(&slow, &fast, HRS_DECIDE_FASTER),
                     X);
    assert_string_equal(hrs_bisect_name(G), "like good");
    assert_int_equal(hrs_bisect_parse("like bad"), B);
    assert_int_equal(hrs_bisect_parse("skipped"), S);
    assert_int_equal(hrs_bisect_parse("nothing"), -1);
}

/* Runs a whole search over n commits whose level moves at `first` (and,
 * when `second` is not 0, once more at `second`): commits in `broken`
 * are skipped. Returns the steps; *hi the first bad commit found. */
static int search(size_t n, size_t first, size_t second,
                  const int *broken, size_t *hi, size_t *hi2)
{
    enum hrs_bisect_verdict v[64] = { U };
    size_t lo, i;
    int steps = 0, pass = 0;

    v[0] = G;
    v[n - 1] = B;
    for (;;) {
        i = hrs_bisect_next(v, n, pass, &lo, hi);
        if (i == n) {
            if (pass == 0 && hrs_bisect_has_middle(v, n)) {
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
        hrs_bisect_next(v, n, 1, &lo, hi2);
    hrs_bisect_next(v, n, 0, &lo, hi);
    return steps;
}

static void next(void **state)
{
    int none[64] = { 0 }, broken[64] = { 0 };
    size_t hi, hi2, lo;
    enum hrs_bisect_verdict v[6] = { G, U, U, U, U, B };

    (void)state;
    /* The middle of the commits left, the lower of two. */
    assert_int_equal(hrs_bisect_next(v, 6, 0, &lo, &hi), 2);
    assert_true(lo == 0 && hi == 5);
    v[2] = S;
    assert_int_equal(hrs_bisect_next(v, 6, 0, &lo, &hi), 3);
    v[3] = B;
    assert_int_equal(hrs_bisect_next(v, 6, 0, &lo, &hi), 1);
    assert_int_equal(hi, 3);
    v[1] = G;
    /* Done: the first bad is 3, or 2, skipped. */
    assert_int_equal(hrs_bisect_next(v, 6, 0, &lo, &hi), 6);
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

/* The lines bisect writes to its state file, read back; lines that are
 * not the ends' or a step's refused. */
static void state_lines(void **state)
{
    static const char ends[] =
        "{\"step\":0,\"good\":\"aa11\",\"commit\":\"bb22\",\"key\":"
        "{\"node\":\"ops/add\",\"operator\":\"add\",\"backend\":\"cpu\","
        "\"phase\":\"warm\",\"range\":\"operator.call\",\"metric\":"
        "\"wall\"},\"clock_step_ns\":25,\"verdict\":\"slower\",\"pairs\":"
        "12,\"seconds\":3.5,\"change\":10.5,\"lo\":9,\"hi\":12,\"p\":"
        "0.001}\n";
    static const char step[] =
        "{\"step\":2,\"commit\":\"cc33\",\"subject\":\"x\",\"verdict\":"
        "\"like bad\",\"pairs\":8,\"seconds\":1.25,\"vs_good\":{\"verdict\":"
        "\"slower\",\"pairs\":8,\"change\":10,\"lo\":null,\"hi\":11,\"p\":"
        "0.01},\"vs_bad\":{\"verdict\":\"same\",\"pairs\":8,\"change\":0.5,"
        "\"lo\":-1,\"hi\":2,\"p\":0.5}}\n";
    struct hrs_bisect_state_ends e;
    struct hrs_bisect_state_step s;

    (void)state;
    assert_int_equal(hrs_bisect_state_ends(ends, &e), 0);
    assert_string_equal(e.good, "aa11");
    assert_string_equal(e.bad, "bb22");
    assert_true(e.have_key);
    assert_string_equal(e.node, "ops/add");
    assert_string_equal(e.op, "add");
    assert_string_equal(e.backend, "cpu");
    assert_string_equal(e.range, "operator.call");
    assert_string_equal(e.phase, "warm");
    assert_string_equal(e.metric, "wall");
    assert_true(e.step_ns == 25);
    assert_int_equal(e.ends.verdict, HRS_DECIDE_SLOWER);
    assert_int_equal(e.ends.pairs, 12);
    assert_true(e.ends.change == 10.5 && e.ends.lo == 9 && e.ends.hi == 12);
    assert_true(e.seconds == 3.5);
    /* A step's line is not the ends'; the ends' is not a step's. */
    assert_int_equal(hrs_bisect_state_ends(step, &e), -EINVAL);
    assert_int_equal(hrs_bisect_state_step(ends, &s), -EINVAL);
    assert_int_equal(hrs_bisect_state_ends("{\"step\":0}", &e), -EINVAL);
    /* An ends' line without its key's fields. */
    assert_int_equal(hrs_bisect_state_ends("{\"step\":0,\"good\":\"a\","
                                           "\"commit\":\"b\",\"verdict\":"
                                           "\"faster\"}", &e), 0);
    assert_false(e.have_key);
    assert_int_equal(e.ends.verdict, HRS_DECIDE_FASTER);
    assert_true(isnan(e.step_ns));

    assert_int_equal(hrs_bisect_state_step(step, &s), 0);
    assert_string_equal(s.commit, "cc33");
    assert_true(s.step == 2);
    assert_int_equal(s.verdict, HRS_BISECT_BAD);
    assert_int_equal(s.pairs, 8);
    assert_true(s.seconds == 1.25);
    assert_true(s.vs_good_ok && s.vs_bad_ok);
    assert_int_equal(s.vs_good.verdict, HRS_DECIDE_SLOWER);
    assert_true(isinf(s.vs_good.lo) && s.vs_good.lo < 0);
    assert_true(s.vs_good.hi == 11);
    assert_int_equal(s.vs_bad.verdict, HRS_DECIDE_SAME);
    assert_true(s.vs_bad.p == 0.5);
    /* A step without its decisions, and one of an unknown verdict. */
    assert_int_equal(hrs_bisect_state_step("{\"step\":3,\"commit\":\"dd\","
                                           "\"verdict\":\"like good\"}", &s), 0);
    assert_false(s.vs_good_ok);
    assert_false(s.vs_bad_ok);
    assert_int_equal(hrs_bisect_state_step("{\"step\":3,\"commit\":\"dd\","
                                           "\"verdict\":\"odd\"}", &s), 0);
    assert_int_equal(s.verdict, -1);
    /* A hash too long for its room. */
    {
        char line[200];

        snprintf(line, sizeof line, "{\"step\":1,\"commit\":\"%070d\","
                 "\"verdict\":\"like good\"}", 0);
        assert_int_equal(hrs_bisect_state_step(line, &s), -EINVAL);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(classify),
        cmocka_unit_test(next),
        cmocka_unit_test(state_lines),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
