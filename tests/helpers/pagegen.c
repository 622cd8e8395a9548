/*
 * Writes a history page (lib/view/pagedir.h: DIR/index.html and its
 * chunks DIR/data/NNNNNN.js) of a made-up history, for the page's tests:
 * -c CHARTS charts (default 6) of -m MACHINES machines each (default 2:
 * one series per chart and machine) over -r RUNS runs (default 40), into
 * directory -o DIR (which must exist). Chart k is range "range.k" of node
 * "tests/page::node[k/4]", phase warm; its median is 1000 * (1 + k % 7)
 * ns with a little noise (p10 3% below, p90 4% above); every third chart
 * steps up by 5 * (1 + k % 9)% at run RUNS/2 + k % 5, on every machine,
 * and is a finding of its own, the largest step first; the second machine
 * runs every run but each third. A chunk holds -C charts (default 64).
 * With -H, chart 0's node and range carry < & " | ` ' a newline, a byte
 * that is not UTF-8 and "</script>".
 *
 * Prints the expectations on stdout, tab-separated: "most", then the
 * data-name of the first finding's chart (the largest step); and per
 * change point "cp", the chart's data-name, the machine, the commit of
 * the run where it begins and the point's index in its series.
 */
#include "config.h"

#include "lib/view/pagedir.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HOSTILE "n<&\"|`'\n\xff</script>"

/* A pseudo-random number in [-1, 1), the same every time. */
static double noise(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*state >> 11) / (double)(1ull << 52) - 1;
}

/* The data-name the page gives a chart: node, phase, range and metric,
 * each as hrv_xml_escape writes it and as a browser reads it back. */
static void print_name(const char *node, const char *range)
{
    for (const char *s = node; *s; s++)
        putchar(*s == '\n' ? '\x01' : (unsigned char)*s == 0xff ? '?' : *s);
    printf(" warm ");
    for (const char *s = range; *s; s++)
        putchar(*s == '\n' ? '\x01' : (unsigned char)*s == 0xff ? '?' : *s);
    printf(" inclusive");
}

/* The finding of stepped chart a before b's: the larger step first. */
static int cmp_finding(const void *pa, const void *pb)
{
    const struct hrv_page_finding *a = pa, *b = pb;

    return (a->change < b->change) - (a->change > b->change);
}

/* Writes chunk j, charts first..end-1, into dir: each chart's lines. */
static int write_chunk(const char *dir, size_t j, size_t first, size_t end,
                       size_t machines, struct hrv_page_line *lines)
{
    char path[4096];
    FILE *f;

    snprintf(path, sizeof path, "%s/" HRV_PAGE_CHUNK_NAME, dir, j);
    if ((f = fopen(path, "w")) == NULL)
        return -1;
    hrv_page_chunk_begin(f, j);
    for (size_t c = first; c < end; c++)
        hrv_page_chunk_chart(f, c - first, &lines[c * machines], machines);
    return hrv_page_chunk_end(f) != 0 || fclose(f) != 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
    int charts = 6, machines = 2, runs = 40, per_chunk = 64, hostile = 0, o;
    const char *out = NULL;
    static const char *const machine[] = { "machine-A", "machine-B",
                                           "machine-C", "machine-D" };
    uint64_t state = 42;
    char path[4096];
    FILE *f;

    while ((o = getopt(argc, argv, "c:m:r:o:C:H")) != -1) {
        switch (o) {
        case 'c': charts = atoi(optarg); break;
        case 'm': machines = atoi(optarg); break;
        case 'r': runs = atoi(optarg); break;
        case 'o': out = optarg; break;
        case 'C': per_chunk = atoi(optarg); break;
        case 'H': hostile = 1; break;
        default: return 2;
        }
    }
    if (out == NULL || charts < 1 || machines < 1 || machines > 4 ||
        runs < 4 || per_chunk < 1)
        return 2;
    size_t nc = (size_t)charts, nm = (size_t)machines, nr = (size_t)runs;
    size_t nnodes = (nc + 3) / 4, nchunks = (nc + per_chunk - 1) / per_chunk;
    struct hrv_page_run *run = calloc(nr, sizeof *run);
    char **nodes = calloc(nnodes + 1, sizeof *nodes);
    const char *(*kinds)[5] = calloc(nc, sizeof *kinds);
    size_t *chart = calloc(2 * nc, sizeof *chart);
    size_t *chunks = calloc(nchunks + 1, sizeof *chunks);
    size_t *ids = calloc(nc, sizeof *ids);
    struct hrv_page_line *lines = calloc(nc * nm, sizeof *lines);
    struct hrv_page_finding *fd = calloc(nc, sizeof *fd);
    struct hrv_page_change *ch = calloc(nc * nm, sizeof *ch);
    size_t nfindings = 0, nchanges = 0;

    if (run == NULL || nodes == NULL || kinds == NULL || chart == NULL ||
        chunks == NULL || ids == NULL ||
        lines == NULL || fd == NULL || ch == NULL)
        return 1;
    for (size_t r = 0; r < nr; r++) {
        char *c = malloc(41);

        if (c == NULL)
            return 1;
        snprintf(c, 41, "%08x%032x", 0xc0ffee00u + (unsigned)r,
                 (unsigned)r * 2654435761u);
        run[r] = (struct hrv_page_run){ 1767225600 + 3600 * (int64_t)r, c,
                                        NULL, NULL };
    }
    /* Node n, and with -H chart 0's node, the last. */
    for (size_t n = 0; n <= nnodes; n++) {
        if ((nodes[n] = malloc(64)) == NULL)
            return 1;
        snprintf(nodes[n], 64, "%s::node[%zu]", n == nnodes ?
                 HOSTILE : "tests/page", n == nnodes ? 0 : n);
    }
    for (size_t k = 0; k < nc; k++) {
        char *range = malloc(64);
        size_t change_run = nr / 2 + k % 5;
        double step = k % 3 == 0 ? 0.05 * (1 + k % 9) : 0;

        if (range == NULL)
            return 1;
        snprintf(range, 64, "range.%zu%s", k, hostile && k == 0 ?
                 HOSTILE : "");
        kinds[k][0] = "warm";
        kinds[k][1] = range;
        kinds[k][2] = "";
        kinds[k][3] = "";
        kinds[k][4] = "inclusive";
        chart[2 * k] = hostile && k == 0 ? nnodes : k / 4;
        chart[2 * k + 1] = k;
        ids[k] = k;
        if (step > 0)
            fd[nfindings++] = (struct hrv_page_finding){
                0, change_run, 1, nm, 1e-9, 100 * step, &ids[k], 1 };
        for (size_t m = 0; m < nm; m++) {
            struct hrv_page_point *pts = calloc(nr, sizeof *pts);
            size_t *at = calloc(nr, sizeof *at), n = 0, cp = 0;
            double base = 1000.0 * (1 + k % 7) * (1 + 0.1 * m);

            if (pts == NULL || at == NULL)
                return 1;
            for (size_t r = 0; r < nr; r++) {
                double med;

                if (m == 1 && r % 3 == 2)
                    continue;
                if (r >= change_run && cp == 0)
                    cp = n;
                med = base * (r >= change_run ? 1 + step : 1) *
                      (1 + 0.005 * noise(&state));
                at[n] = r;
                pts[n++] = (struct hrv_page_point){
                    med, med * 0.97, med * 1.04,
                    (uint64_t)(m == 1 ? 20 + r % 3 : 20) };
            }
            lines[k * nm + m] = (struct hrv_page_line){ m, at, pts, n };
            if (step > 0) {
                ch[nchanges++] = (struct hrv_page_change){
                    k, m, at[cp], base, base * (1 + step), 100 * step };
                printf("cp\t");
                print_name(nodes[chart[2 * k]], range);
                printf("\t%s\t%s\t%zu\n", machine[m], run[at[cp]].commit, cp);
            }
        }
    }
    qsort(fd, nfindings, sizeof *fd, cmp_finding);
    if (nfindings > 0) {
        size_t k = fd[0].charts[0];

        printf("most\t");
        print_name(nodes[chart[2 * k]], kinds[k][1]);
        putchar('\n');
    }
    for (size_t j = 0; j <= nchunks; j++)
        chunks[j] = j * (size_t)per_chunk < nc ? j * (size_t)per_chunk : nc;
    snprintf(path, sizeof path, "%s/" HRV_PAGE_CHUNK_DIR, out);
    if (mkdir(path, 0777) != 0) {
        perror(path);
        return 1;
    }
    for (size_t j = 0; j < nchunks; j++) {
        if (write_chunk(out, j, chunks[j], chunks[j + 1], nm, lines) != 0) {
            perror(out);
            return 1;
        }
    }
    struct hrv_page_dir d = {
        "hostrange history (made up)", "made up: every step is a finding",
        nc * nm, run, nr, machine, nm, (const char *const *)nodes, nnodes + 1,
        kinds, nc, chart, nc, chunks, nchunks, fd, nfindings, ch, nchanges };

    snprintf(path, sizeof path, "%s/index.html", out);
    f = fopen(path, "w");
    if (f == NULL || hrv_page_dir_write(f, &d) != 0 || fclose(f) != 0) {
        perror(path);
        return 1;
    }
    for (size_t i = 0; i < nc * nm; i++) {
        free((void *)lines[i].run);
        free((void *)lines[i].points);
    }
    for (size_t k = 0; k < nc; k++)
        free((void *)kinds[k][1]);
    for (size_t n = 0; n <= nnodes; n++)
        free(nodes[n]);
    for (size_t r = 0; r < nr; r++)
        free((void *)run[r].commit);
    free(run);
    free(nodes);
    free(kinds);
    free(chart);
    free(chunks);
    free(ids);
    free(lines);
    free(fd);
    free(ch);
    return 0;
}
