/*
 * An instrumented program with a known calling-context tree, for the tests
 * of paths, folded stacks and plots. For each of -n nodes (PREFIX::node[i],
 * default prefix tests/paths) it runs one call of `a` in a cold window, then
 * in a warm window -c rounds (default 10) of
 *
 *     a { b { c; c }; c; "we;ird name\n" }      once a round
 *     d { b { c } }                            every other round
 *
 * so a warm window holds, per round pair, 2 a, 2 a;b, 4 a;b;c, 2 a;c,
 * 2 a;weird, 1 d, 1 d;b, 1 d;b;c. Each range busy-waits a little (c for
 * -s NS, default 2000); -R DEPTH adds, in the warm window, one chain of
 * `rec` DEPTH scopes deep (a recursion).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "hostrange.h"

static hr_site s_a = HR_SITE_INIT("a");
static hr_site s_b = HR_SITE_INIT("b");
static hr_site s_c = HR_SITE_INIT("c");
static hr_site s_d = HR_SITE_INIT("d");
static hr_site s_weird = HR_SITE_INIT("we;ird name\n");
static hr_site s_rec = HR_SITE_INIT("rec");

static uint64_t c_ns = 2000;

static void spin(uint64_t ns)
{
    uint64_t t0 = hr_now_ns();

    while (hr_now_ns() - t0 < ns)
        ;
}

static void c(void)
{
    HR_SCOPE(sc, &s_c);
    spin(c_ns);
}

static void b(int calls)
{
    HR_SCOPE(sc, &s_b);
    spin(1000);
    for (int i = 0; i < calls; i++)
        c();
}

static void a(void)
{
    HR_SCOPE(sc, &s_a);
    spin(1000);
    b(2);
    c();
    {
        HR_SCOPE(w, &s_weird);
        spin(500);
    }
}

static void d(void)
{
    HR_SCOPE(sc, &s_d);
    spin(500);
    b(1);
}

static void rec(int depth)
{
    HR_SCOPE(sc, &s_rec);
    if (depth > 1)
        rec(depth - 1);
}

int main(int argc, char **argv)
{
    const char *prefix = "tests/paths";
    int nodes = 1, rounds = 10, depth = 0, o;
    char node[256];

    while ((o = getopt(argc, argv, "n:c:s:R:N:")) != -1) {
        switch (o) {
        case 'n': nodes = atoi(optarg); break;
        case 'c': rounds = atoi(optarg); break;
        case 's': c_ns = strtoull(optarg, NULL, 10); break;
        case 'R': depth = atoi(optarg); break;
        case 'N': prefix = optarg; break;
        default:
            fprintf(stderr, "usage: pathtree [-n NODES] [-c ROUNDS] [-s C_NS] "
                    "[-R DEPTH] [-N PREFIX]\n");
            return 2;
        }
    }
    for (int i = 0; i < nodes; i++) {
        snprintf(node, sizeof node, "%s::node[%d]", prefix, i);
        hr_labels_set(node, "tree", "cpu", HR_PHASE_COLD);
        hr_window_begin();
        a();
        hr_window_end();
        hr_labels_set(node, "tree", "cpu", HR_PHASE_WARM);
        hr_window_begin();
        for (int r = 0; r < rounds; r++) {
            a();
            if (r % 2 == 0)
                d();
        }
        if (depth > 0)
            rec(depth);
        hr_window_end();
    }
    return 0;
}
