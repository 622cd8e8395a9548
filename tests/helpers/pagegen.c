/*
 * Writes a history page (lib/view/page.h) of a made-up history, for the
 * page's tests: -c CHARTS charts (default 6) of -m MACHINES machines each
 * (default 2: one series per chart and machine) over -r RUNS runs
 * (default 40), to -o FILE. Chart k is range "range.k" of node
 * "tests/page::node[k/4]", phase warm; its median is 1000 * (1 + k % 7)
 * ns with a little noise (p10 3% below, p90 4% above); every third chart
 * steps up by 5 * (1 + k % 9)% at run RUNS/2 + k % 5, and the second
 * machine runs every run but each third. With -H, chart 0's node and range
 * carry < & " | ` ' a newline, a byte that is not UTF-8 and "</script>".
 *
 * Prints the expectations on stdout, tab-separated: "most", then the
 * data-name of the most changed chart; and per change point "cp", the
 * chart's data-name, the machine, the commit of the run where it begins
 * and the point's index in its series.
 */
#include "config.h"

#include "lib/view/page.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HOSTILE "n<&\"|`'\n\xff</script>"

static char **commits;

/* A pseudo-random number in [-1, 1), the same every time. */
static double noise(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*state >> 11) / (double)(1ull << 52) - 1;
}

/* The data-name the page gives a chart: node, phase, range and metric,
 * each as hrd_xml_escape writes it and as a browser reads it back. */
static void print_name(const char *node, const char *range)
{
    for (const char *s = node; *s; s++)
        putchar(*s == '\n' ? '\x01' : (unsigned char)*s == 0xff ? '?' : *s);
    printf(" warm ");
    for (const char *s = range; *s; s++)
        putchar(*s == '\n' ? '\x01' : (unsigned char)*s == 0xff ? '?' : *s);
    printf(" inclusive");
}

int main(int argc, char **argv)
{
    int charts = 6, machines = 2, runs = 40, hostile = 0, o;
    const char *out = NULL;
    struct hrd_page_series *series;
    struct hrd_page page = { "hostrange history (made up)", NULL, 0 };
    double best = 0;
    int most = 0;
    uint64_t state = 42;
    FILE *f;

    while ((o = getopt(argc, argv, "c:m:r:o:H")) != -1) {
        switch (o) {
        case 'c': charts = atoi(optarg); break;
        case 'm': machines = atoi(optarg); break;
        case 'r': runs = atoi(optarg); break;
        case 'o': out = optarg; break;
        case 'H': hostile = 1; break;
        default: return 2;
        }
    }
    if (out == NULL || charts < 1 || machines < 1 || runs < 4)
        return 2;
    commits = calloc((size_t)runs, sizeof *commits);
    series = calloc((size_t)(charts * machines), sizeof *series);
    if (commits == NULL || series == NULL)
        return 1;
    for (int r = 0; r < runs; r++) {
        commits[r] = malloc(41);
        if (commits[r] == NULL)
            return 1;
        snprintf(commits[r], 41, "%08x%032x", 0xc0ffee00u + (unsigned)r,
                 (unsigned)r * 2654435761u);
    }
    for (int k = 0; k < charts; k++) {
        char *node = malloc(64), *range = malloc(64);
        int change_run = runs / 2 + k % 5;
        double step = k % 3 == 0 ? 0.05 * (1 + k % 9) : 0;

        if (node == NULL || range == NULL)
            return 1;
        snprintf(node, 64, "%s::node[%d]", hostile && k == 0 ?
                 HOSTILE : "tests/page", k / 4);
        snprintf(range, 64, "range.%d%s", k, hostile && k == 0 ?
                 HOSTILE : "");
        if (step > best) {
            best = step;
            most = k;
        }
        for (int m = 0; m < machines; m++) {
            struct hrd_page_series *s = &series[k * machines + m];
            struct hrd_page_point *pts = calloc((size_t)runs, sizeof *pts);
            struct hrd_page_segment *seg = calloc(2, sizeof *seg);
            char *machine = malloc(32);
            size_t n = 0, cp = 0;
            double base = 1000.0 * (1 + k % 7) * (1 + 0.1 * m);

            if (pts == NULL || seg == NULL || machine == NULL)
                return 1;
            snprintf(machine, 32, "machine-%c", 'A' + m);
            for (int r = 0; r < runs; r++) {
                double med;

                if (m == 1 && r % 3 == 2)
                    continue;
                if (r >= change_run && cp == 0)
                    cp = n;
                med = base * (r >= change_run ? 1 + step : 1) *
                      (1 + 0.005 * noise(&state));
                pts[n++] = (struct hrd_page_point){
                    commits[r], 1767225600 + 3600 * (int64_t)r, med,
                    med * 0.97, med * 1.04,
                    (uint64_t)(m == 1 ? 20 + r % 3 : 20), NULL, NULL
                };
            }
            s->node = node;
            s->phase = "warm";
            s->range = range;
            s->metric = "inclusive";
            s->machine = machine;
            s->points = pts;
            s->npoints = n;
            s->segments = seg;
            if (step > 0) {
                seg[0] = (struct hrd_page_segment){ 0, cp - 1, base };
                seg[1] = (struct hrd_page_segment){ cp, n - 1,
                                                    base * (1 + step) };
                s->nsegments = 2;
                printf("cp\t");
                print_name(node, range);
                printf("\t%s\t%s\t%zu\n", machine, pts[cp].commit, cp);
            } else {
                seg[0] = (struct hrd_page_segment){ 0, n - 1, base };
                s->nsegments = 1;
            }
        }
    }
    printf("most\t");
    print_name(series[most * machines].node, series[most * machines].range);
    putchar('\n');
    page.series = series;
    page.n = (size_t)(charts * machines);
    f = fopen(out, "w");
    if (f == NULL || hrd_page_write(f, &page) != 0 || fclose(f) != 0) {
        perror(out);
        return 1;
    }
    for (int k = 0; k < charts; k++) {
        for (int m = 0; m < machines; m++) {
            struct hrd_page_series *s = &series[k * machines + m];

            free((void *)s->points);
            free((void *)s->segments);
            free((void *)s->machine);
        }
        free((void *)series[k * machines].node);
        free((void *)series[k * machines].range);
    }
    for (int r = 0; r < runs; r++)
        free(commits[r]);
    free(commits);
    free(series);
    return 0;
}
