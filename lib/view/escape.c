/* Escaping, one rule per output format (see escape.h). */
#include "config.h"

#include "lib/view/escape.h"

#include <stdlib.h>
#include <string.h>

static const char *str(const char *s)
{
    return s != NULL ? s : "";
}

size_t hrv_utf8_decode(const unsigned char *s, uint32_t *cp)
{
    unsigned char lo = 0x80, hi = 0xbf;
    size_t need, i;
    uint32_t v;

    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if (s[0] >= 0xc2 && s[0] <= 0xdf) {
        need = 1;
        v = s[0] & 0x1fu;
    } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
        need = 2;
        v = s[0] & 0x0fu;
        if (s[0] == 0xe0)
            lo = 0xa0;
        else if (s[0] == 0xed)
            hi = 0x9f;
    } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        need = 3;
        v = s[0] & 0x07u;
        if (s[0] == 0xf0)
            lo = 0x90;
        else if (s[0] == 0xf4)
            hi = 0x8f;
    } else {
        *cp = 0xfffd;
        return 1;
    }
    for (i = 1; i <= need; i++) {
        if (s[i] < lo || s[i] > hi) {
            *cp = 0xfffd;
            return i;
        }
        v = (v << 6) | (s[i] & 0x3fu);
        lo = 0x80;
        hi = 0xbf;
    }
    *cp = v;
    return need + 1;
}

/* Whether the n bytes at p, decoded as cp, are a valid sequence (an
 * ill-formed one decodes as U+FFFD too, but not from EF BF BD). */
static int valid(const unsigned char *p, size_t n, uint32_t cp)
{
    return cp != 0xfffd || (n == 3 && memcmp(p, "\xef\xbf\xbd", 3) == 0);
}

int hrv_bidi_control(uint32_t cp)
{
    return cp == 0x061c || cp == 0x200e || cp == 0x200f ||
           (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/* ---- JSON ------------------------------------------------------------- */

/* hrv_json_string, and with `html` '<', '>' and '&' escaped as well. */
static void json_string(FILE *f, const char *s, int html)
{
    const unsigned char *p = (const unsigned char *)str(s);
    uint32_t cp;

    putc('"', f);
    while (*p != '\0') {
        p += hrv_utf8_decode(p, &cp);
        switch (cp) {
        case '"':
            fputs("\\\"", f);
            break;
        case '\\':
            fputs("\\\\", f);
            break;
        case '\n':
            fputs("\\n", f);
            break;
        case '\r':
            fputs("\\r", f);
            break;
        case '\t':
            fputs("\\t", f);
            break;
        case '\b':
            fputs("\\b", f);
            break;
        case '\f':
            fputs("\\f", f);
            break;
        default:
            if (cp >= 0x10000) {
                cp -= 0x10000;
                fprintf(f, "\\u%04x\\u%04x", 0xd800 + (unsigned)(cp >> 10),
                        0xdc00 + (unsigned)(cp & 0x3ff));
            } else if (cp < 0x20 || cp >= 0x7f ||
                       (html && (cp == '<' || cp == '>' || cp == '&'))) {
                fprintf(f, "\\u%04x", (unsigned)cp);
            } else {
                putc((int)cp, f);
            }
        }
    }
    putc('"', f);
}

void hrv_json_string(FILE *f, const char *s)
{
    json_string(f, s, 0);
}

void hrv_json_string_html(FILE *f, const char *s)
{
    json_string(f, s, 1);
}

/* ---- CSV -------------------------------------------------------------- */

void hrv_csv_field(FILE *f, const char *s)
{
    s = str(s);
    if (strpbrk(s, ",\"\r\n") == NULL) {
        fputs(s, f);
        return;
    }
    putc('"', f);
    for (; *s != '\0'; s++) {
        if (*s == '"')
            putc('"', f);
        putc(*s, f);
    }
    putc('"', f);
}

/* ---- XML and HTML ----------------------------------------------------- */

/* Whether XML 1.0 can hold cp (decoded from a valid sequence). */
static int xml_char(uint32_t cp)
{
    if (cp < 0x20)
        return cp == '\t' || cp == '\n' || cp == '\r';
    return !(cp >= 0x7f && cp <= 0x9f) && !(cp >= 0xd800 && cp <= 0xdfff) &&
           cp != 0xfffe && cp != 0xffff;
}

void hrv_xml_escape(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)str(s);

    while (*p != '\0') {
        uint32_t cp;
        size_t n = hrv_utf8_decode(p, &cp);

        if (!valid(p, n, cp) || !xml_char(cp)) {
            /* One '?' a byte, as an XML reader would have to be told. */
            for (size_t i = 0; i < n; i++)
                fputc('?', f);
            p += n;
            continue;
        }
        switch (cp) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        case '\n': fputs("&#10;", f); break;
        case '\t': case '\r': fputc(' ', f); break;
        default: fwrite(p, 1, n, f); break;
        }
        p += n;
    }
}

void hrv_html_escape(FILE *f, const char *s)
{
    hrv_xml_escape(f, s);
}

void hrv_html_name(FILE *f, const char *s)
{
    fputs("<bdi>", f);
    hrv_html_escape(f, s);
    fputs("</bdi>", f);
}

/* ---- Markdown --------------------------------------------------------- */

void hrv_md_escape(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)str(s);

    while (*p != '\0') {
        uint32_t cp;
        size_t n = hrv_utf8_decode(p, &cp);

        switch (cp) {
        case '\\': case '`': case '*': case '_': case '[': case ']':
        case '|':
            fputc('\\', f);
            fputc((int)cp, f);
            break;
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '~': fputs("&#126;", f); break;
        case '\n': case '\t': case '\r': fputc(' ', f); break;
        default:
            if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) ||
                cp == 0xfffd || hrv_bidi_control(cp))
                fputs("\xef\xbf\xbd", f);
            else
                fwrite(p, 1, n, f);
        }
        p += n;
    }
}

/* ---- Text ------------------------------------------------------------- */

/* Appends the n bytes of t to out (len bytes, room kept for the NUL) at
 * *w, unless an earlier piece did not fit, and counts them in *at whether
 * they fit or not: a cut text ends between two pieces. */
static void put(char *out, size_t len, size_t *at, size_t *w, const char *t,
                size_t n)
{
    if (*w == *at && *w + n < len) {
        memcpy(out + *w, t, n);
        *w += n;
    }
    *at += n;
}

size_t hrv_text_escape(char *out, size_t len, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)str(s);
    size_t at = 0, w = 0;

    while (*p != '\0') {
        uint32_t cp;
        size_t n = hrv_utf8_decode(p, &cp);
        char e[8];

        if (!valid(p, n, cp)) {
            for (size_t i = 0; i < n; i++) {
                e[0] = '\\';
                e[1] = 'x';
                e[2] = hex[p[i] >> 4];
                e[3] = hex[p[i] & 0xf];
                put(out, len, &at, &w, e, 4);
            }
        } else if (cp == '\\') {
            put(out, len, &at, &w, "\\\\", 2);
        } else if (cp == '\n') {
            put(out, len, &at, &w, "\\n", 2);
        } else if (cp == '\t') {
            put(out, len, &at, &w, "\\t", 2);
        } else if (cp == '\r') {
            put(out, len, &at, &w, "\\r", 2);
        } else if (cp < 0x20 || cp == 0x7f) {
            e[0] = '\\';
            e[1] = 'x';
            e[2] = hex[cp >> 4];
            e[3] = hex[cp & 0xf];
            put(out, len, &at, &w, e, 4);
        } else if ((cp >= 0x80 && cp <= 0x9f) || hrv_bidi_control(cp)) {
            e[0] = '\\';
            e[1] = 'u';
            for (int i = 0; i < 4; i++)
                e[2 + i] = hex[(cp >> (12 - 4 * i)) & 0xf];
            put(out, len, &at, &w, e, 6);
        } else {
            put(out, len, &at, &w, (const char *)p, n);
        }
        p += n;
    }
    if (len > 0)
        out[w] = '\0';
    return at;
}

void hrv_text_put(FILE *f, const char *s)
{
    char buf[1024], *big;
    size_t n = hrv_text_escape(buf, sizeof buf, s);

    if (n < sizeof buf) {
        fwrite(buf, 1, n, f);
        return;
    }
    big = hrv_text_dup(s);
    if (big != NULL) {
        fwrite(big, 1, n, f);
        free(big);
    } else {
        /* Out of memory: the part that fit, marked as cut. */
        fputs(buf, f);
        fputs("...", f);
    }
}

char *hrv_text_dup(const char *s)
{
    size_t n = hrv_text_escape(NULL, 0, s);
    char *out = malloc(n + 1);

    if (out != NULL)
        hrv_text_escape(out, n + 1, s);
    return out;
}
