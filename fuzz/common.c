/* What the libFuzzer targets share (see common.h). */
#include "config.h"

#include "fuzz/common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fuzz_fail(const char *what, const char *file, int line)
{
    fprintf(stderr, "%s:%d: check failed: %s\n", file, line, what);
    abort();
}

struct collect {
    struct hrv_writer *w;
    uint64_t count;
    size_t rows;
};

static int collect_row(const struct hra_row *row, void *arg)
{
    struct collect *c = arg;

    if (strcmp(row->metric, "inclusive") == 0)
        c->count += row->count;
    c->rows++;
    return c->w != NULL ? hrv_writer_row(c->w, row) : 0;
}

char *fuzz_report(struct hra_agg *a, uint64_t *count)
{
    static FILE *devnull;
    struct hrv_writer w;
    struct collect c = { 0 };
    struct hra_cursor cur = { 0 };
    char *text = NULL;
    size_t len = 0, paged = 0;
    FILE *f;

    if (devnull == NULL)
        devnull = fopen("/dev/null", "w");
    FUZZ_CHECK(devnull != NULL);
    f = open_memstream(&text, &len);
    FUZZ_CHECK(f != NULL);
    hrv_writer_init(&w, f, HRV_FORMAT_JSONL, 0);
    c.w = &w;
    FUZZ_CHECK(hra_rows(a, NULL, collect_row, &c) == 0);
    FUZZ_CHECK(hrv_writer_finish(&w) == 0);
    hrv_writer_fini(&w);
    fclose(f);
    if (count != NULL)
        *count = c.count;

    for (int format = HRV_FORMAT_CSV; format <= HRV_FORMAT_TABLE; format++) {
        struct collect x = { &w, 0, 0 };
        hrv_writer_init(&w, devnull, (enum hrv_format)format,
                        HRV_FIELDS_EXTENDED);
        FUZZ_CHECK(hra_rows(a, NULL, collect_row, &x) == 0);
        hrv_writer_finish(&w);
        hrv_writer_fini(&w);
    }
    /* Paged: the same rows, a few keys at a time. */
    do {
        struct collect x = { NULL, 0, 0 };
        FUZZ_CHECK(hra_rows_page(a, NULL, &cur, 64, collect_row, &x) ==
                   0);
        paged += x.rows;
    } while (!cur.done);
    FUZZ_CHECK(paged == c.rows);
    return text;
}
