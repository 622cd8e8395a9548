/* The SVG pictures of hostrangectl plot (see svg.h). */
#include "config.h"

#include "lib/view/svg.h"
#include "proto/protocol.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SVG_W 1400
#define PANEL_W 680
#define PANEL_GAP 20
#define MARGIN 10
#define ICICLE_W 430
#define BAR_X (ICICLE_W + 20)
#define BAR_W (PANEL_W - BAR_X - 10)
#define ROW_H 18
#define HEAD_H 56
#define PANEL_HEAD 26
#define CHAR_W 6.6

static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* A box colour: by name within the phase's palette. */
static void phase_colour(char *buf, size_t len, unsigned phase,
                         const char *name)
{
    uint32_t h = name_hash(name);
    int v1 = (int)(h % 60), v2 = (int)((h >> 8) % 50);

    if (phase == HRP_PHASE_COLD)
        snprintf(buf, len, "#%02x%02x%02x", 60 + v2, 120 + v1, 200 + v2 / 2);
    else
        snprintf(buf, len, "#%02x%02x%02x", 235, 120 + v1, 40 + v2);
}

static void mix_hex(char *buf, size_t len, const int lo[3], const int hi[3],
                    double t)
{
    int c[3];

    if (t < 0)
        t = 0;
    if (t > 1)
        t = 1;
    for (int i = 0; i < 3; i++)
        c[i] = (int)lround(lo[i] + (hi[i] - lo[i]) * t);
    snprintf(buf, len, "#%02x%02x%02x", c[0], c[1], c[2]);
}

static void diff_colour(char *buf, size_t len, const struct hrv_pnode *n)
{
    static const int red_lo[3] = { 0xf4, 0xc7, 0xc3 };
    static const int red_hi[3] = { 0xb2, 0x18, 0x2b };
    static const int blue_lo[3] = { 0xc6, 0xdb, 0xef };
    static const int blue_hi[3] = { 0x21, 0x66, 0xac };
    double t = fabs(n->diff_rel) / 0.5;

    if (!n->diff_known)
        snprintf(buf, len, "#e6e6e6");
    else if (n->diff > 0)
        mix_hex(buf, len, red_lo, red_hi, 0.15 + 0.85 * t);
    else if (n->diff < 0)
        mix_hex(buf, len, blue_lo, blue_hi, 0.15 + 0.85 * t);
    else
        snprintf(buf, len, "#bdbdbd");
}

/* The width value of a node: its inclusive median times its calls per
 * call of its parent (of the most called top range, at the top). */
static double node_value(const struct hrv_pnode *n, uint64_t top_count)
{
    const struct hrv_pnode *p = n->parent;
    double v = 0;

    if (!n->has) {
        for (const struct hrv_pnode *c = n->child; c != NULL; c = c->next)
            v += c->has ? c->incl_median : node_value(c, top_count);
        return v;
    }
    if (p != NULL && p->depth > 0 && p->has && p->count > 0)
        return n->incl_median * (double)n->count / (double)p->count;
    if ((p == NULL || p->depth == 0) && top_count > 0)
        return n->incl_median * (double)n->count / (double)top_count;
    return n->incl_median;
}

static uint64_t top_count(const struct hrv_pgroup *g)
{
    uint64_t m = 0;

    for (const struct hrv_pnode *c = g->root.child; c != NULL; c = c->next) {
        if (c->count > m)
            m = c->count;
    }
    return m;
}

static void put_path_title(FILE *f, const struct hrv_pnode *n)
{
    const struct hrv_pnode *chain[256];
    uint32_t d = 0;

    for (const struct hrv_pnode *x = n; x->depth > 0 && d < 256;
         x = x->parent)
        chain[d++] = x;
    while (d-- > 0) {
        hrv_xml_escape(f, chain[d]->name);
        if (d > 0)
            fputs(" ; ", f);
    }
}

static void box_title(FILE *f, const struct hrv_pnode *n, int diff)
{
    char a[32], b[32];

    fputs("<title>", f);
    put_path_title(f, n);
    if (n->has) {
        hrv_fmt_ns(a, sizeof a, n->incl_median);
        hrv_fmt_ns(b, sizeof b, n->self_median);
        fprintf(f, "&#10;calls %" PRIu64 "&#10;inclusive median %s&#10;self "
                "median %s", n->count, a, b);
        if (n->parent != NULL && n->parent->has &&
            n->parent->incl_median > 0)
            fprintf(f, "&#10;%.1f%% of its parent's inclusive median",
                    100.0 * n->incl_median / n->parent->incl_median);
        if (!n->exact)
            fputs("&#10;(medians within 0.1%: histogram)", f);
    } else {
        fputs("&#10;(no samples of its own kept)", f);
    }
    if (diff && n->diff_known) {
        hrv_fmt_ns(a, sizeof a, n->diff_base_median);
        fprintf(f, "&#10;base inclusive median %s&#10;shift %+.1f ns "
                "(%+.1f%%), p = %.3g: %s", a, n->diff_shift,
                100.0 * n->diff_rel, n->diff_p,
                n->diff > 0 ? "slower" : n->diff < 0 ? "faster"
                                                     : "not significant");
    } else if (diff) {
        fputs("&#10;not in the base run", f);
    }
    fputs("</title>", f);
}

/* Whether text on a box of colour #rrggbb is better white than dark. */
static int dark(const char *colour)
{
    unsigned r = 0, g = 0, b = 0;

    if (sscanf(colour, "#%02x%02x%02x", &r, &g, &b) != 3)
        return 0;
    return 0.299 * r + 0.587 * g + 0.114 * b < 140;
}

static void box_label(FILE *f, double x, double y, double w,
                      const char *name, const char *colour)
{
    char buf[256];
    int chars = (int)((w - 6) / CHAR_W);

    if (chars < 3)
        return;
    if (chars > (int)sizeof buf - 1)
        chars = (int)sizeof buf - 1;
    hrv_shorten_middle(buf, (size_t)chars, name);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\"%s>", x + 3, y + ROW_H - 5,
            dark(colour) ? " style=\"fill:#ffffff\"" : "");
    hrv_xml_escape(f, buf);
    fputs("</text>", f);
}

static void icicle(FILE *f, const struct hrv_pgroup *g,
                   const struct hrv_pnode *n, double x, double w, double y,
                   uint64_t tc, int diff)
{
    double v = node_value(n, tc), sum = 0, k, cx = x;
    char colour[16];

    if (n->depth > 0) {
        if (diff)
            diff_colour(colour, sizeof colour, n);
        else
            phase_colour(colour, sizeof colour, g->phase, n->name);
        fprintf(f, "<g><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
                "height=\"%d\" fill=\"%s\" stroke=\"#ffffff\" "
                "stroke-width=\"0.6\"%s>",
                x, y, w, ROW_H - 1, colour,
                n->has ? "" : " fill-opacity=\"0.45\"");
        box_title(f, n, diff);
        fputs("</rect>", f);
        box_label(f, x, y, w, n->name, colour);
        fputs("</g>\n", f);
        y += ROW_H;
    }
    for (const struct hrv_pnode *c = n->child; c != NULL; c = c->next)
        sum += node_value(c, tc);
    if (sum <= 0)
        return;
    /* Pixels per ns: children share their parent's width, scaled down
     * together where their values add up to more. */
    k = w / (n->depth > 0 && v > sum ? v : sum);
    for (const struct hrv_pnode *c = n->child; c != NULL; c = c->next) {
        double cw = node_value(c, tc) * k;

        if (cw >= 0.5)
            icicle(f, g, c, cx, cw, y, tc, diff);
        cx += cw;
    }
}

static uint32_t max_depth(const struct hrv_pnode *n)
{
    uint32_t m = n->depth;

    for (const struct hrv_pnode *c = n->child; c != NULL; c = c->next) {
        uint32_t d = max_depth(c);
        if (d > m)
            m = d;
    }
    return m;
}

/* Self medians per call of the top, per range name. */
struct layer {
    const char *name;
    double v;
};

static void layers_add(struct layer *ls, size_t *n, size_t cap,
                       const struct hrv_pnode *x, uint64_t tc)
{
    if (x->depth > 0 && x->has && x->has_self) {
        size_t i;
        double per = tc > 0 ? (double)x->count / (double)tc : 1.0;

        for (i = 0; i < *n && strcmp(ls[i].name, x->name) != 0; i++)
            ;
        if (i == *n && *n < cap)
            ls[(*n)++] = (struct layer){ x->name, 0 };
        if (i < *n)
            ls[i].v += x->self_median * per;
    }
    for (const struct hrv_pnode *c = x->child; c != NULL; c = c->next)
        layers_add(ls, n, cap, c, tc);
}

#define MAX_LAYERS 24

static double panel_height(const struct hrv_pgroup *g)
{
    struct layer ls[MAX_LAYERS];
    size_t nl = 0;
    double hi, hb;

    if (g == NULL)
        return 60;
    layers_add(ls, &nl, MAX_LAYERS, &g->root, top_count(g));
    hi = (double)max_depth(&g->root) * ROW_H;
    hb = (double)nl * 30 + 20;
    return PANEL_HEAD + (hi > hb ? hi : hb) + 14;
}

static void panel(FILE *f, const struct hrv_pgroup *g, unsigned phase,
                  double x0, double y0, double h, int diff)
{
    const char *bg = phase == HRP_PHASE_COLD ? "#e8eff7" : "#fbf1e1";
    const char *fg = phase == HRP_PHASE_COLD ? "#1f4e79" : "#8a4b08";
    struct layer ls[MAX_LAYERS];
    size_t nl = 0;
    double vmax = 0;
    char colour[16];
    uint64_t tc;

    fprintf(f, "<g transform=\"translate(%.1f,%.1f)\">\n", x0, y0);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%.1f\" rx=\"6\" "
            "fill=\"%s\"/>\n", PANEL_W, h, bg);
    fprintf(f, "<text x=\"10\" y=\"18\" class=\"ph\" style=\"fill:%s\">%s"
            "</text>\n",
            fg, phase == HRP_PHASE_COLD ? "COLD" : "WARM");
    if (g == NULL) {
        fprintf(f, "<text x=\"70\" y=\"18\" class=\"note\">no %s samples"
                "</text>\n</g>\n", hrp_phase_name(phase));
        return;
    }
    fputs("<text x=\"70\" y=\"18\" class=\"note\">", f);
    hrv_xml_escape(f, g->op);
    fputs(" / ", f);
    hrv_xml_escape(f, g->backend);
    fprintf(f, "</text>\n<text x=\"%d\" y=\"18\" class=\"note\">self median"
            " per call, by range</text>\n", BAR_X);
    tc = top_count(g);
    fprintf(f, "<g transform=\"translate(8,%d)\">\n", PANEL_HEAD);
    icicle(f, g, &g->root, 0, ICICLE_W, 0, tc, diff);
    fputs("</g>\n", f);
    layers_add(ls, &nl, MAX_LAYERS, &g->root, tc);
    for (size_t i = 0; i < nl; i++) {
        if (ls[i].v > vmax)
            vmax = ls[i].v;
    }
    for (size_t i = 0; i < nl; i++) {
        double y = PANEL_HEAD + 30.0 * (double)i;
        double w = vmax > 0 ? ls[i].v / vmax * BAR_W : 0;
        char label[64], num[32];

        phase_colour(colour, sizeof colour, phase, ls[i].name);
        hrv_shorten_middle(label, 28, ls[i].name);
        hrv_fmt_ns(num, sizeof num, ls[i].v);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" class=\"bl\">", BAR_X, y + 10);
        hrv_xml_escape(f, label);
        fprintf(f, "  %s</text>\n", num);
        fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"%.2f\" height=\"12\" "
                "fill=\"%s\"><title>", BAR_X, y + 13, w < 1 ? 1 : w, colour);
        hrv_xml_escape(f, ls[i].name);
        fprintf(f, ": self median per call of the top range, summed over "
                "its calling contexts: %s</title></rect>\n", num);
    }
    fputs("</g>\n", f);
}

int hrv_svg_write(FILE *f, const struct hrv_ptree *t, const char *node,
                  int diff, const char *subtitle)
{
    const struct hrv_pgroup *rows[64][2];
    size_t nrows = 0;
    double h = HEAD_H, y;

    /* The node's (operator, backend) pairs, each a row of two panels. */
    for (const struct hrv_pgroup *g = t->first; g != NULL; g = g->next) {
        size_t i;
        int side = g->phase == HRP_PHASE_COLD ? 0 : 1;

        if (strcmp(g->node, node) != 0)
            continue;
        for (i = 0; i < nrows; i++) {
            const struct hrv_pgroup *o = rows[i][0] ? rows[i][0] : rows[i][1];
            if (strcmp(o->op, g->op) == 0 &&
                strcmp(o->backend, g->backend) == 0)
                break;
        }
        if (i == nrows) {
            if (nrows == 64)
                continue;
            rows[nrows][0] = rows[nrows][1] = NULL;
            nrows++;
        }
        rows[i][side] = g;
    }
    for (size_t i = 0; i < nrows; i++) {
        double a = panel_height(rows[i][0]), b = panel_height(rows[i][1]);
        h += (a > b ? a : b) + PANEL_GAP;
    }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
            "height=\"%.0f\" viewBox=\"0 0 %d %.0f\" "
            "font-family=\"DejaVu Sans, Verdana, sans-serif\" "
            "font-size=\"11\">\n", SVG_W, h, SVG_W, h);
    fputs("<style>text{fill:#222}.ph{font-size:14px;font-weight:bold}"
          ".note{fill:#555}.bl{font-size:10px}"
          ".t{font-size:15px;font-weight:bold}</style>\n", f);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%.0f\" "
            "fill=\"#ffffff\"/>\n", SVG_W, h);
    fputs("<text x=\"10\" y=\"22\" class=\"t\">", f);
    hrv_xml_escape(f, node);
    fputs("</text>\n<text x=\"10\" y=\"42\" class=\"note\">", f);
    if (subtitle != NULL)
        hrv_xml_escape(f, subtitle);
    else if (diff)
        fputs("calling context; box width: inclusive median per call of its "
              "parent; red slower, blue faster, grey not significant", f);
    else
        fputs("calling context; box width: inclusive median per call of its "
              "parent; hover a box for its figures", f);
    fputs("</text>\n", f);
    y = HEAD_H;
    for (size_t i = 0; i < nrows; i++) {
        double a = panel_height(rows[i][0]), b = panel_height(rows[i][1]);
        double ph = a > b ? a : b;

        panel(f, rows[i][0], HRP_PHASE_COLD, MARGIN, y, ph, diff);
        panel(f, rows[i][1], HRP_PHASE_WARM, MARGIN + PANEL_W + PANEL_GAP, y,
              ph, diff);
        y += ph + PANEL_GAP;
    }
    fputs("</svg>\n", f);
    return ferror(f) ? -EIO : 0;
}

int hrv_svg_index_write(FILE *f, const char *const *nodes, size_t n, int diff)
{
    fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            "<title>hostrange: where the time goes</title>\n<style>body{"
            "font-family:sans-serif;margin:1em}li{margin:.2em 0}img{"
            "max-width:100%%;border:1px solid #ccc;margin:.5em 0 2em}"
            "</style></head><body>\n<h1>Where the time goes%s</h1>\n"
            "<p>%zu nodes; each picture shows the cold and warm calling "
            "contexts of one node (hover a box for its figures).</p>\n<ol>\n",
            diff ? ": changes" : "", n);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "<li><a href=\"#n%zu\">", i + 1);
        hrv_xml_escape(f, nodes[i]);
        fputs("</a></li>\n", f);
    }
    fputs("</ol>\n", f);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "<h2 id=\"n%zu\">", i + 1);
        hrv_xml_escape(f, nodes[i]);
        fprintf(f, "</h2>\n<a href=\"node-%03zu.svg\"><img src=\"node-%03zu"
                ".svg\" loading=\"lazy\" alt=\"", i + 1, i + 1);
        hrv_xml_escape(f, nodes[i]);
        fputs("\"></a>\n", f);
    }
    fputs("</body></html>\n", f);
    return ferror(f) ? -EIO : 0;
}
