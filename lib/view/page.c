/* What the history page's writers share (page_impl.h): a chart's line in
 * the data, the runs, lists of names, the page's head and tail. */
#include "config.h"

#include "lib/view/page.h"
#include "lib/view/page_impl.h"
#include "lib/view/escape.h"
#include "lib/view/numfmt.h"

#include <math.h>
#include <stdio.h>

static const char *str(const char *s)
{
    return s != NULL ? s : "";
}

static void number(FILE *f, double v)
{
    char buf[32];

    hrv_format_number(buf, sizeof buf, v);
    fputs(buf, f);
}

/* v in units of u, rounded; 0 when not finite. */
static long long units(double v, double u)
{
    double q = v / u;

    return isfinite(q) ? llround(q) : 0;
}

/* Point i's p10 (hi: p90) as its distance from the median, in units u
 * (0 at least). */
static long long distance(const struct hrv_page_point *pt, double u, int hi)
{
    long long d = hi ? units(pt->p90, u) - units(pt->median, u)
                     : units(pt->median, u) - units(pt->p10, u);

    return d > 0 ? d : 0;
}

/* The distances of pts[0..n) (distance), as an array, or as one number
 * when they are all the same (a series of one sample a run has no band). */
static void spread(FILE *f, const struct hrv_page_point *pts, size_t n,
                   double u, int hi)
{
    int same = 1;

    for (size_t i = 1; i < n && same; i++)
        same = distance(&pts[i], u, hi) == distance(&pts[0], u, hi);
    if (same && n > 0) {
        fprintf(f, "%lld", distance(&pts[0], u, hi));
        return;
    }
    fputc('[', f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%lld", i ? "," : "", distance(&pts[i], u, hi));
    fputc(']', f);
}

void hrv_page_line(FILE *f, size_t m, const size_t *run,
                   const struct hrv_page_point *pts, size_t n)
{
    double top = 0, u;
    int contiguous = 1, same_count = 1;

    for (size_t i = 0; i < n; i++) {
        if (isfinite(pts[i].p90))
            top = fmax(top, fabs(pts[i].p90));
        if (isfinite(pts[i].median))
            top = fmax(top, fabs(pts[i].median));
    }
    /* Four significant digits of the largest value. */
    u = top > 0 ? pow(10, floor(log10(top)) - 3) : 1;
    for (size_t i = 1; i < n; i++) {
        contiguous &= run[i] == run[0] + i;
        same_count &= pts[i].count == pts[0].count;
    }
    fprintf(f, "{\"machine\":%zu,\"u\":", m);
    number(f, u);
    if (contiguous) {
        fprintf(f, ",\"r0\":%zu", n > 0 ? run[0] : 0);
    } else {
        fputs(",\"r\":[", f);
        for (size_t i = 0; i < n; i++)
            fprintf(f, "%s%zu", i ? "," : "", run[i]);
        fputc(']', f);
    }
    fputs(",\"m\":[", f);
    for (size_t i = 0; i < n; i++) {
        if (isfinite(pts[i].median))
            fprintf(f, "%s%lld", i ? "," : "", units(pts[i].median, u));
        else
            fprintf(f, "%snull", i ? "," : "");
    }
    fputs("],\"lo\":", f);
    spread(f, pts, n, u, 0);
    fputs(",\"hi\":", f);
    spread(f, pts, n, u, 1);
    fputs(",\"n\":", f);
    if (same_count && n > 0) {
        fprintf(f, "%llu", (unsigned long long)pts[0].count);
    } else {
        fputc('[', f);
        for (size_t i = 0; i < n; i++)
            fprintf(f, "%s%llu", i ? "," : "",
                    (unsigned long long)pts[i].count);
        fputc(']', f);
    }
    fputc('}', f);
}

void hrv_page_runs(FILE *f, const struct hrv_page_run *runs, size_t n)
{
    fputs("{\"c\":[", f);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? "," : "", f);
        hrv_json_string_html(f, str(runs[i].commit));
    }
    fputs("],\"t\":[", f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%lld", i ? "," : "", (long long)runs[i].time);
    fputs("],\"h\":[", f);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? "," : "", f);
        hrv_json_string_html(f, str(runs[i].host));
    }
    fputs("],\"k\":[", f);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? "," : "", f);
        hrv_json_string_html(f, str(runs[i].kernel));
    }
    fputs("]}", f);
}

void hrv_page_strings(FILE *f, const char *const *v, size_t n)
{
    fputc('[', f);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? "," : "", f);
        hrv_json_string_html(f, str(v[i]));
    }
    fputc(']', f);
}

void hrv_page_head(FILE *f, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          "\n<meta name=\"viewport\" content=\"width=device-width\">\n"
          "<title>", f);
    hrv_html_escape(f, str(title));
    fprintf(f, "</title>\n<style>\n%s</style>\n</head><body>\n",
            hrv_page_style);
}

void hrv_page_tail(FILE *f)
{
    fprintf(f, "<div id=\"tip\"></div>\n<script>\n%s</script>\n"
            "</body></html>\n", hrv_page_script);
}
