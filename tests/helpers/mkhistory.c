/*
 * Writes a made-up history of a suite the size of a real one straight
 * into a history through lib/history, for the tests of history detect at
 * scale:
 *
 *   mkhistory DB NODES RUNS SEED [NODE:LAYER:RUN:SHARE]...
 *
 * The suite is tests/lib/harness_suite.h's (40 series a node: cold and
 * warm, ten nested layers "layer0".."layer9", inclusive and self), with a
 * step per NODE:LAYER:RUN:SHARE argument, written by
 * harness_suite_write.
 */
#include "config.h"

#include "tests/lib/harness_suite.h"

#include <stdio.h>
#include <stdlib.h>

#define MAX_STEPS 16

int main(int argc, char **argv)
{
    struct harness_suite_step steps[MAX_STEPS];
    struct harness_suite s = { 0, 0, 0.01, 0, steps, 0 };
    char err[4096];

    if (argc < 5 || argc - 5 > MAX_STEPS) {
        fprintf(stderr, "usage: mkhistory DB NODES RUNS SEED "
                "[NODE:LAYER:RUN:SHARE]...\n");
        return 2;
    }
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
}
