/* A strict JSON reader: see json.h. A recursive descent over the text,
 * its depth bounded by HRU_JSON_MAX_DEPTH. */
#include "config.h"

#include "lib/util/json.h"
#include "lib/util/grow.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct reader {
    const char *s;
    size_t len, pos;
    char *err;
    size_t errlen;
    int nomem;
};

/* Says what is wrong at the reader's place. Returns -EINVAL. */
static int bad(struct reader *r, const char *what)
{
    size_t line = 1, col = 1;

    for (size_t i = 0; i < r->pos && i < r->len; i++) {
        if (r->s[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    snprintf(r->err, r->errlen, "line %zu, column %zu: %s", line, col, what);
    return -EINVAL;
}

static int nomem(struct reader *r)
{
    r->nomem = 1;
    snprintf(r->err, r->errlen, "out of memory");
    return -ENOMEM;
}

static void skip_space(struct reader *r)
{
    while (r->pos < r->len && (r->s[r->pos] == ' ' || r->s[r->pos] == '\t' ||
                               r->s[r->pos] == '\n' || r->s[r->pos] == '\r'))
        r->pos++;
}

/* Whether the text at the reader's place starts with word (and skips
 * it). */
static int word(struct reader *r, const char *w)
{
    size_t n = strlen(w);

    if (r->len - r->pos < n || memcmp(r->s + r->pos, w, n) != 0)
        return 0;
    r->pos += n;
    return 1;
}

/* A growing byte buffer for a string's value. */
struct buf {
    char *p;
    size_t n, cap;
};

static int put(struct buf *b, const void *p, size_t n)
{
    if (hru_grow(&b->p, &b->cap, b->n + n + 1, 1, 32) != 0)
        return -ENOMEM;
    memcpy(b->p + b->n, p, n);
    b->n += n;
    b->p[b->n] = '\0';
    return 0;
}

/* Four hexadecimal digits at the reader's place: 0 with *u, or -1. */
static int hex4(struct reader *r, unsigned *u)
{
    *u = 0;
    if (r->len - r->pos < 4)
        return -1;
    for (int i = 0; i < 4; i++) {
        char c = r->s[r->pos++];

        *u <<= 4;
        if (c >= '0' && c <= '9')
            *u |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            *u |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            *u |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    return 0;
}

/* The length of the well-formed UTF-8 sequence at s[0..n) (shortest
 * form, no surrogates, at most U+10FFFF), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    size_t len;
    uint32_t c;

    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf) {
        len = 2;
        c = s[0] & 0x1f;
    } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
        len = 3;
        c = s[0] & 0x0f;
    } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        len = 4;
        c = s[0] & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        c = c << 6 | (s[i] & 0x3f);
    }
    if ((len == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
        (len == 4 && (c < 0x10000 || c > 0x10ffff)))
        return 0;
    return len;
}

static void put_utf8(char *o, size_t *n, uint32_t c)
{
    if (c < 0x80) {
        o[(*n)++] = (char)c;
    } else if (c < 0x800) {
        o[(*n)++] = (char)(0xc0 | c >> 6);
        o[(*n)++] = (char)(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
        o[(*n)++] = (char)(0xe0 | c >> 12);
        o[(*n)++] = (char)(0x80 | (c >> 6 & 0x3f));
        o[(*n)++] = (char)(0x80 | (c & 0x3f));
    } else {
        o[(*n)++] = (char)(0xf0 | c >> 18);
        o[(*n)++] = (char)(0x80 | (c >> 12 & 0x3f));
        o[(*n)++] = (char)(0x80 | (c >> 6 & 0x3f));
        o[(*n)++] = (char)(0x80 | (c & 0x3f));
    }
}

/* A string, its opening quote at the reader's place. Returns 0 with
 * *out (malloc'd, NUL-terminated) and *outlen, or a negative errno. */
static int string(struct reader *r, char **out, size_t *outlen)
{
    struct buf b = { NULL, 0, 0 };
    int rc = 0;

    r->pos++;
    if (put(&b, "", 0) != 0)
        return nomem(r);
    for (;;) {
        unsigned char c;

        if (r->pos >= r->len) {
            rc = bad(r, "a string that does not end");
            break;
        }
        c = (unsigned char)r->s[r->pos];
        if (c == '"') {
            r->pos++;
            break;
        }
        if (c < 0x20) {
            rc = bad(r, "a control character in a string");
            break;
        }
        if (c == '\\') {
            char o[4];
            size_t n = 0;
            unsigned u, lo;

            if (r->pos + 1 >= r->len) {
                rc = bad(r, "a string that does not end");
                break;
            }
            r->pos += 2;
            switch (r->s[r->pos - 1]) {
            case '"': o[n++] = '"'; break;
            case '\\': o[n++] = '\\'; break;
            case '/': o[n++] = '/'; break;
            case 'b': o[n++] = '\b'; break;
            case 'f': o[n++] = '\f'; break;
            case 'n': o[n++] = '\n'; break;
            case 'r': o[n++] = '\r'; break;
            case 't': o[n++] = '\t'; break;
            case 'u':
                if (hex4(r, &u) != 0) {
                    rc = bad(r, "a \\u escape without four hex digits");
                    break;
                }
                if (u >= 0xdc00 && u <= 0xdfff) {
                    rc = bad(r, "a low surrogate without a high one");
                    break;
                }
                if (u >= 0xd800 && u <= 0xdbff) {
                    if (!word(r, "\\u") || hex4(r, &lo) != 0 ||
                        lo < 0xdc00 || lo > 0xdfff) {
                        rc = bad(r, "a high surrogate without a low one");
                        break;
                    }
                    u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
                }
                put_utf8(o, &n, u);
                break;
            default:
                r->pos--;
                rc = bad(r, "an unknown escape in a string");
                break;
            }
            if (rc != 0)
                break;
            if (put(&b, o, n) != 0) {
                rc = nomem(r);
                break;
            }
            continue;
        }
        {
            size_t n = utf8_len((const unsigned char *)r->s + r->pos,
                                r->len - r->pos);

            if (n == 0) {
                rc = bad(r, "a string that is not UTF-8");
                break;
            }
            if (put(&b, r->s + r->pos, n) != 0) {
                rc = nomem(r);
                break;
            }
            r->pos += n;
        }
    }
    if (rc != 0) {
        free(b.p);
        return rc;
    }
    *out = b.p;
    *outlen = b.n;
    return 0;
}

/* A number at the reader's place, by RFC 8259's grammar. */
static int number(struct reader *r, double *x)
{
    size_t start = r->pos, n;
    char tmp[64], *end;
    const char *s = r->s;

#define DIGIT(i) ((i) < r->len && s[i] >= '0' && s[i] <= '9')
    if (r->pos < r->len && s[r->pos] == '-')
        r->pos++;
    if (r->pos < r->len && s[r->pos] == '0') {
        r->pos++;
    } else if (DIGIT(r->pos)) {
        while (DIGIT(r->pos))
            r->pos++;
    } else {
        return bad(r, "not a value");
    }
    if (r->pos < r->len && s[r->pos] == '.') {
        r->pos++;
        if (!DIGIT(r->pos))
            return bad(r, "a number without digits after its point");
        while (DIGIT(r->pos))
            r->pos++;
    }
    if (r->pos < r->len && (s[r->pos] == 'e' || s[r->pos] == 'E')) {
        r->pos++;
        if (r->pos < r->len && (s[r->pos] == '+' || s[r->pos] == '-'))
            r->pos++;
        if (!DIGIT(r->pos))
            return bad(r, "a number without digits in its exponent");
        while (DIGIT(r->pos))
            r->pos++;
    }
#undef DIGIT
    n = r->pos - start;
    if (n >= sizeof tmp) {
        r->pos = start;
        return bad(r, "a number of more than 63 characters");
    }
    memcpy(tmp, s + start, n);
    tmp[n] = '\0';
    *x = strtod(tmp, &end);
    (void)end;
    return 0;
}

static int value(struct reader *r, int depth, struct hru_json **out);

/* Appends v (and name, for an object) to container c. */
static int add_item(struct reader *r, struct hru_json *c, struct hru_json *v,
                    char *name)
{
    struct hru_json **ni = realloc(c->item, (c->n + 1) * sizeof *ni);

    if (ni == NULL)
        return nomem(r);
    c->item = ni;
    if (c->type == HRU_JSON_OBJECT) {
        char **nn = realloc(c->name, (c->n + 1) * sizeof *nn);

        if (nn == NULL)
            return nomem(r);
        c->name = nn;
        c->name[c->n] = name;
    }
    c->item[c->n++] = v;
    return 0;
}

/* An array or object, its opening bracket at the reader's place. */
static int container(struct reader *r, int depth, struct hru_json *c)
{
    char close = c->type == HRU_JSON_ARRAY ? ']' : '}';

    if (depth >= HRU_JSON_MAX_DEPTH)
        return bad(r, "nested more than 64 deep");
    r->pos++;
    skip_space(r);
    if (r->pos < r->len && r->s[r->pos] == close) {
        r->pos++;
        return 0;
    }
    for (;;) {
        struct hru_json *v = NULL;
        char *name = NULL;
        size_t nlen;
        int rc;

        skip_space(r);
        if (c->type == HRU_JSON_OBJECT) {
            if (r->pos >= r->len || r->s[r->pos] != '"')
                return bad(r, "an object's member without a name");
            if ((rc = string(r, &name, &nlen)) != 0)
                return rc;
            if (strlen(name) != nlen || hru_json_get(c, name) != NULL) {
                int nul = strlen(name) != nlen;

                free(name);
                return bad(r, nul ? "a member's name holding NUL"
                                  : "a member's name given twice");
            }
            skip_space(r);
            if (r->pos >= r->len || r->s[r->pos] != ':') {
                free(name);
                return bad(r, "a member's name without ':'");
            }
            r->pos++;
        }
        if ((rc = value(r, depth + 1, &v)) != 0 ||
            (rc = add_item(r, c, v, name)) != 0) {
            hru_json_free(v);
            free(name);
            return rc;
        }
        skip_space(r);
        if (r->pos < r->len && r->s[r->pos] == ',') {
            r->pos++;
            continue;
        }
        if (r->pos < r->len && r->s[r->pos] == close) {
            r->pos++;
            return 0;
        }
        return bad(r, close == ']' ? "an array without ',' or ']'"
                                   : "an object without ',' or '}'");
    }
}

static int value(struct reader *r, int depth, struct hru_json **out)
{
    struct hru_json *v = calloc(1, sizeof *v);
    int rc = 0;

    if (v == NULL)
        return nomem(r);
    skip_space(r);
    if (r->pos >= r->len) {
        rc = bad(r, "a value missing");
    } else if (r->s[r->pos] == '{' || r->s[r->pos] == '[') {
        v->type = r->s[r->pos] == '{' ? HRU_JSON_OBJECT : HRU_JSON_ARRAY;
        rc = container(r, depth, v);
    } else if (r->s[r->pos] == '"') {
        v->type = HRU_JSON_STRING;
        rc = string(r, &v->str, &v->len);
    } else if (word(r, "null")) {
        v->type = HRU_JSON_NULL;
    } else if (word(r, "true")) {
        v->type = HRU_JSON_TRUE;
    } else if (word(r, "false")) {
        v->type = HRU_JSON_FALSE;
    } else if (word(r, "NaN")) {
        v->type = HRU_JSON_NUMBER;
        v->num = NAN;
    } else if (word(r, "Infinity")) {
        v->type = HRU_JSON_NUMBER;
        v->num = INFINITY;
    } else if (word(r, "-Infinity")) {
        v->type = HRU_JSON_NUMBER;
        v->num = -INFINITY;
    } else {
        v->type = HRU_JSON_NUMBER;
        rc = number(r, &v->num);
    }
    if (rc != 0) {
        hru_json_free(v);
        return rc;
    }
    *out = v;
    return 0;
}

int hru_json_parse(const char *text, size_t len, struct hru_json **out,
                   char *err, size_t errlen)
{
    struct reader r = { text, len, 0, err, errlen, 0 };
    struct hru_json *v = NULL;
    int rc = value(&r, 0, &v);

    if (rc == 0) {
        skip_space(&r);
        if (r.pos < r.len) {
            hru_json_free(v);
            return bad(&r, "more after the document's value");
        }
        *out = v;
    }
    return rc;
}

void hru_json_free(struct hru_json *v)
{
    if (v == NULL)
        return;
    for (size_t i = 0; i < v->n; i++) {
        hru_json_free(v->item[i]);
        if (v->name != NULL)
            free(v->name[i]);
    }
    free(v->item);
    free(v->name);
    free(v->str);
    free(v);
}

const struct hru_json *hru_json_get(const struct hru_json *v,
                                    const char *name)
{
    if (v == NULL || v->type != HRU_JSON_OBJECT)
        return NULL;
    for (size_t i = 0; i < v->n; i++) {
        if (strcmp(v->name[i], name) == 0)
            return v->item[i];
    }
    return NULL;
}

const char *hru_json_get_str(const struct hru_json *v, const char *name)
{
    const struct hru_json *m = hru_json_get(v, name);

    return m != NULL && m->type == HRU_JSON_STRING ? m->str : NULL;
}

int hru_json_get_num(const struct hru_json *v, const char *name, double *x)
{
    const struct hru_json *m = hru_json_get(v, name);

    if (m == NULL || m->type != HRU_JSON_NUMBER)
        return -ENOENT;
    *x = m->num;
    return 0;
}
