/*
 * Writes a made-up history of a suite the size of a real one straight
 * into a history through lib/history, for the tests of history detect at
 * scale:
 *
 *   mkhistory [-g NS] DB NODES RUNS SEED [NODE:LAYER:RUN:SHARE]...
 *
 * The suite is tests/lib/harness_suite.h's (40 series a node: cold and
 * warm, ten nested layers "layer0".."layer9", inclusive and self), with a
 * step per NODE:LAYER:RUN:SHARE argument, written by
 * harness_suite_write; its runs a minute apart, or NS nanoseconds with -g
 * (runs within one second: their commits c0, c1, ... c10 do not sort as
 * their times do).
 */
#include "config.h"

#include "tests/lib/harness_suite.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_STEPS 16

int main(int argc, char **argv)
{
    struct harness_suite_step steps[MAX_STEPS];
    struct harness_suite s = { 0, 0, 0.01, 0, steps, 0, 0 };
    char err[4096], *end;
    int c;

    while ((c = getopt(argc, argv, "g:")) != -1) {
        if (c != 'g')
            goto usage;
        s.gap_ns = strtoll(optarg, &end, 10);
        if (*end != '\0' || s.gap_ns <= 0) {
            fprintf(stderr, "mkhistory: bad gap '%s'\n", optarg);
            return 2;
        }
    }
    argc -= optind - 1;
    argv += optind - 1;
    if (argc < 5 || argc - 5 > MAX_STEPS)
        goto usage;
    s.nodes = strtoul(argv[2], NULL, 10);
    s.runs = strtoul(argv[3], NULL, 10);
    s.seed = strtoull(argv[4], NULL, 10);
    for (int i = 5; i < argc; i++, s.nsteps++) {
        struct harness_suite_step *st = &steps[s.nsteps];

        if (sscanf(argv[i], "%zu:%zu:%zu:%lf", &st->node, &st->layer,
                   &st->run, &st->share) != 4) {
            fprintf(stderr, "mkhistory: bad step '%s'\n", argv[i]);
            return 2;
        }
    }
    if (harness_suite_write(&s, argv[1], err, sizeof err) != 0) {
        fprintf(stderr, "mkhistory: %s\n", err);
        return 1;
    }
    return 0;
usage:
    fprintf(stderr, "usage: mkhistory [-g NS] DB NODES RUNS SEED "
            "[NODE:LAYER:RUN:SHARE]...\n");
    return 2;
}
