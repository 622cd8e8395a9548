/*
 * Prints the hostile names (tests/lib/harness_hostile.h) for the shell
 * tests:
 *
 *   hostile        how many there are
 *   hostile I      name I, as its bytes, with no newline after it
 */
#include "config.h"

#include "tests/lib/harness_hostile.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    char *end;
    unsigned long i;

    if (argc == 1) {
        printf("%zu\n", harness_hostile_count());
        return 0;
    }
    i = strtoul(argv[1], &end, 10);
    if (argc != 2 || *end != '\0' || i >= harness_hostile_count())
        return 2;
    fputs(harness_hostile(i), stdout);
    return fflush(stdout) == 0 ? 0 : 1;
}
