/* Calling-context views: the tree, folded stacks and the terminal tree
 * (see flame.h); the SVG pictures are svg.c's. */
#include "config.h"

#include "lib/view/flame.h"
#include "proto/protocol.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* --- the tree ------------------------------------------------------------ */

void hrv_ptree_init(struct hrv_ptree *t)
{
    memset(t, 0, sizeof *t);
}

static void pnode_free_children(struct hrv_pnode *n)
{
    struct hrv_pnode *c = n->child, *next;

    for (; c != NULL; c = next) {
        next = c->next;
        pnode_free_children(c);
        free(c->name);
        free(c);
    }
    n->child = n->last_child = NULL;
}

void hrv_ptree_free(struct hrv_ptree *t)
{
    struct hrv_pgroup *g, *next;

    for (g = t->first; g != NULL; g = next) {
        next = g->next;
        pnode_free_children(&g->root);
        free(g->node);
        free(g->op);
        free(g->backend);
        free(g);
    }
    memset(t, 0, sizeof *t);
}

static struct hrv_pgroup *group_find(const struct hrv_ptree *t,
                                     const char *node, const char *op,
                                     const char *backend, unsigned phase)
{
    /* The last group is the likely one: rows come grouped. */
    if (t->last != NULL && t->last->phase == phase &&
        strcmp(t->last->node, node) == 0 && strcmp(t->last->op, op) == 0 &&
        strcmp(t->last->backend, backend) == 0)
        return t->last;
    for (struct hrv_pgroup *g = t->first; g != NULL; g = g->next) {
        if (g->phase == phase && strcmp(g->node, node) == 0 &&
            strcmp(g->op, op) == 0 && strcmp(g->backend, backend) == 0)
            return g;
    }
    return NULL;
}

static struct hrv_pgroup *group_get(struct hrv_ptree *t, const char *node,
                                    const char *op, const char *backend,
                                    unsigned phase)
{
    struct hrv_pgroup *g = group_find(t, node, op, backend, phase);

    if (g != NULL)
        return g;
    g = calloc(1, sizeof *g);
    if (g == NULL)
        return NULL;
    g->node = strdup(node);
    g->op = strdup(op);
    g->backend = strdup(backend);
    if (g->node == NULL || g->op == NULL || g->backend == NULL) {
        free(g->node);
        free(g->op);
        free(g->backend);
        free(g);
        return NULL;
    }
    g->phase = phase;
    if (t->last != NULL)
        t->last->next = g;
    else
        t->first = g;
    t->last = g;
    t->ngroups++;
    return g;
}

static struct hrv_pnode *child_find(const struct hrv_pnode *n,
                                    const char *name)
{
    /* The last child is the likely one. */
    if (n->last_child != NULL && strcmp(n->last_child->name, name) == 0)
        return n->last_child;
    for (struct hrv_pnode *c = n->child; c != NULL; c = c->next) {
        if (strcmp(c->name, name) == 0)
            return c;
    }
    return NULL;
}

static struct hrv_pnode *child_get(struct hrv_pnode *n, const char *name)
{
    struct hrv_pnode *c = child_find(n, name);

    if (c != NULL)
        return c;
    c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->name = strdup(name);
    if (c->name == NULL) {
        free(c);
        return NULL;
    }
    c->parent = n;
    c->depth = n->depth + 1;
    if (n->last_child != NULL)
        n->last_child->next = c;
    else
        n->child = c;
    n->last_child = c;
    return c;
}

static unsigned phase_of(const char *name)
{
    unsigned p = name != NULL ? hrp_phase_parse(name) : 0;
    return p != 0 ? p : HRP_PHASE_WARM;
}

static void fill(struct hrv_pnode *n, const struct hra_row *r)
{
    if (hrp_metric_parse(r->metric) == HRP_METRIC_SELF) {
        n->has_self = 1;
        n->self_median = r->median;
        n->self_sum = r->sum;
        return;
    }
    n->has = 1;
    n->count = r->count;
    n->incl_median = r->median;
    n->incl_sum = r->sum;
    n->exact = r->exact;
}

struct hrv_pnode *hrv_ptree_row(struct hrv_ptree *t, const struct hra_row *r)
{
    struct hrv_pgroup *g = group_get(t, r->node_id, r->op, r->backend,
                                     phase_of(r->phase));
    struct hrv_pnode *n;

    if (g == NULL)
        return NULL;
    n = &g->root;
    for (uint32_t i = 0; i < r->depth && n != NULL; i++)
        n = child_get(n, r->path[i]);
    if (n != NULL && n != &g->root)
        fill(n, r);
    return n;
}

int hrv_ptree_row_flat(struct hrv_ptree *t, const struct hra_row *r)
{
    struct hra_row x = *r;
    const char *path[1] = { r->range };

    if (r->calls == 0)
        return 0; /* recorded values: no calling context */
    x.path = path;
    x.depth = 1;
    x.sum = (uint64_t)llround(r->mean * (double)r->count);
    return hrv_ptree_row(t, &x) != NULL ? 0 : -ENOMEM;
}

struct hrv_pnode *hrv_ptree_find(const struct hrv_ptree *t, const char *node,
                                 const char *op, const char *backend,
                                 unsigned phase, const char *const *path,
                                 uint32_t depth)
{
    struct hrv_pgroup *g = group_find(t, node, op, backend, phase);
    struct hrv_pnode *n;

    if (g == NULL)
        return NULL;
    n = &g->root;
    for (uint32_t i = 0; i < depth && n != NULL; i++)
        n = child_find(n, path[i]);
    return n;
}

const char **hrv_ptree_nodes(const struct hrv_ptree *t, size_t *n)
{
    const char **v = calloc(t->ngroups + 1, sizeof *v);

    *n = 0;
    if (v == NULL)
        return NULL;
    for (struct hrv_pgroup *g = t->first; g != NULL; g = g->next) {
        size_t i;

        for (i = 0; i < *n && strcmp(v[i], g->node) != 0; i++)
            ;
        if (i == *n)
            v[(*n)++] = g->node;
    }
    if (*n == 0) {
        free(v);
        return NULL;
    }
    return v;
}

/* --- folded stacks ------------------------------------------------------- */

int hrv_fvalue_parse(const char *s, enum hrv_fvalue *v)
{
    if (strcmp(s, "total") == 0)
        *v = HRV_FVALUE_TOTAL;
    else if (strcmp(s, "median") == 0)
        *v = HRV_FVALUE_MEDIAN;
    else if (strcmp(s, "count") == 0)
        *v = HRV_FVALUE_COUNT;
    else
        return -1;
    return 0;
}

static size_t escape(char *out, size_t len, const char *name, int folded)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;

    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        int esc = *p == '%' || *p == ';' ||
                  (folded && (*p <= 0x20 || *p == 0x7f));
        char buf[3] = { (char)*p, 0, 0 };
        size_t k = 1;

        if (esc) {
            buf[0] = '%';
            buf[1] = hex[*p >> 4];
            buf[2] = hex[*p & 15];
            k = 3;
        }
        for (size_t i = 0; i < k; i++, n++) {
            if (n + 1 < len)
                out[n] = buf[i];
        }
    }
    if (len > 0)
        out[n < len ? n : len - 1] = '\0';
    return n;
}

size_t hrv_folded_escape(char *out, size_t len, const char *name)
{
    return escape(out, len, name, 1);
}

char *hrv_path_join(const char *const *names, uint32_t depth)
{
    size_t need = 1, at = 0;
    char *s;

    for (uint32_t i = 0; i < depth; i++)
        need += escape(NULL, 0, names[i], 0) + 1;
    s = malloc(need);
    if (s == NULL)
        return NULL;
    for (uint32_t i = 0; i < depth; i++) {
        if (i > 0)
            s[at++] = ';';
        at += escape(s + at, need - at, names[i], 0);
    }
    s[at] = '\0';
    return s;
}

static void put_escaped(FILE *f, const char *name)
{
    char buf[256];
    size_t n = hrv_folded_escape(buf, sizeof buf, name);

    if (n < sizeof buf) {
        fputs(buf, f);
        return;
    }
    char *big = malloc(n + 1);
    if (big == NULL)
        return;
    hrv_folded_escape(big, n + 1, name);
    fputs(big, f);
    free(big);
}

static void folded_node(FILE *f, const struct hrv_pgroup *g,
                        const struct hrv_pnode *n, enum hrv_fvalue v)
{
    if (n->has && n->depth > 0) {
        const struct hrv_pnode *chain[256];
        uint32_t d = 0;
        uint64_t value;

        for (const struct hrv_pnode *x = n; x->depth > 0 && d < 256;
             x = x->parent)
            chain[d++] = x;
        put_escaped(f, g->node);
        fputc(';', f);
        fputs(hrp_phase_name(g->phase), f);
        while (d-- > 0) {
            fputc(';', f);
            put_escaped(f, chain[d]->name);
        }
        value = v == HRV_FVALUE_COUNT    ? n->count
                : v == HRV_FVALUE_MEDIAN ? (uint64_t)llround(n->self_median)
                                         : n->self_sum;
        fprintf(f, " %" PRIu64 "\n", value);
    }
    for (const struct hrv_pnode *c = n->child; c != NULL; c = c->next)
        folded_node(f, g, c, v);
}

int hrv_folded_write(FILE *f, const struct hrv_ptree *t, enum hrv_fvalue v)
{
    for (const struct hrv_pgroup *g = t->first; g != NULL; g = g->next)
        folded_node(f, g, &g->root, v);
    return ferror(f) ? -EIO : 0;
}

/* --- the tree for the terminal ------------------------------------------ */

void hrv_shorten_middle(char *out, size_t width, const char *name)
{
    size_t n = strlen(name), head, tail;

    if (n <= width) {
        head = n;
        tail = 0;
    } else if (width < 4) {
        head = width;
        tail = 0;
    } else {
        head = (width - 2 + 1) / 2;
        tail = width - 2 - head;
        /* Whole UTF-8 sequences only. */
        while (head > 0 && ((unsigned char)name[head] & 0xc0) == 0x80)
            head--;
        while (tail > 0 && ((unsigned char)name[n - tail] & 0xc0) == 0x80)
            tail--;
    }
    memcpy(out, name, head);
    if (n > width && width >= 4) {
        memcpy(out + head, "..", 2);
        memcpy(out + head + 2, name + n - tail, tail);
        out[head + 2 + tail] = '\0';
    } else {
        out[head] = '\0';
    }
    for (char *p = out; *p; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    }
}

void hrv_fmt_ns(char *buf, size_t len, double v)
{
    if (v < 1e3)
        snprintf(buf, len, "%.0f ns", v);
    else if (v < 1e6)
        snprintf(buf, len, "%.2f us", v / 1e3);
    else if (v < 1e9)
        snprintf(buf, len, "%.2f ms", v / 1e6);
    else
        snprintf(buf, len, "%.2f s", v / 1e9);
}

/* Right part of a tree line: " calls incl self share". */
#define TREE_NUMS 45

static void tree_node(FILE *f, const struct hrv_pnode *n, int width)
{
    if (n->depth > 0) {
        int room = width - TREE_NUMS;
        int indent = 2 * (int)(n->depth - 1);
        char name[256], cnt[32], incl[32], self[32], share[32];

        if (indent > 24)
            indent = 24;
        if (room - indent < 8)
            indent = room - 8 > 0 ? room - 8 : 0;
        hrv_shorten_middle(name, (size_t)(room - indent) < sizeof name - 1
                                     ? (size_t)(room - indent)
                                     : sizeof name - 1,
                           n->name);
        if (n->has) {
            snprintf(cnt, sizeof cnt, "%" PRIu64, n->count);
            hrv_fmt_ns(incl, sizeof incl, n->incl_median);
            if (n->has_self)
                hrv_fmt_ns(self, sizeof self, n->self_median);
            else
                snprintf(self, sizeof self, "-");
        } else {
            snprintf(cnt, sizeof cnt, "-");
            snprintf(incl, sizeof incl, "-");
            snprintf(self, sizeof self, "-");
        }
        share[0] = '\0';
        if (n->has && n->parent != NULL && n->parent->has &&
            n->parent->incl_median > 0)
            snprintf(share, sizeof share, "%.1f%%",
                     100.0 * n->incl_median / n->parent->incl_median);
        fprintf(f, "%*s%-*s %10.10s %12.12s %12.12s %7.7s\n", indent, "",
                room - indent, name, cnt, incl, self, share);
    }
    for (const struct hrv_pnode *c = n->child; c != NULL; c = c->next)
        tree_node(f, c, width);
}

int hrv_tree_write(FILE *f, const struct hrv_ptree *t, int width)
{
    char head[512], line[512];

    if (width < TREE_NUMS + 16)
        width = TREE_NUMS + 16;
    if (width > 400)
        width = 400;
    for (const struct hrv_pgroup *g = t->first; g != NULL; g = g->next) {
        snprintf(head, sizeof head, "%s  %s/%s  %s", g->node, g->op,
                 g->backend, hrp_phase_name(g->phase));
        hrv_shorten_middle(line, (size_t)width, head);
        fprintf(f, "%s%s\n", g == t->first ? "" : "\n", line);
        fprintf(f, "%-*s %10s %12s %12s %7s\n", width - TREE_NUMS,
                "calling context", "calls", "incl median", "self median",
                "share");
        tree_node(f, &g->root, width);
    }
    return ferror(f) ? -EIO : 0;
}

void hrv_pnode_compare(struct hrv_pnode *n, const struct hrs_signif *s,
                       double bm, double alpha)
{
    n->diff_known = 1;
    n->diff_p = s->p;
    n->diff_shift = s->shift;
    n->diff_base_median = bm;
    n->diff_rel = bm > 0 ? s->shift / bm : 0;
    n->diff = s->p < alpha && s->shift != 0 ? (s->shift > 0 ? 1 : -1)
                                             : 0;
}

