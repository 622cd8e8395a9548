/* Tests for lib/view/escape.c: each format's rule, run over the one set of
 * hostile names (tests/lib/harness_hostile.h). */
#include "config.h"

#include "lib/view/escape.h"
#include "proto/protocol.h"
#include "tests/lib/harness_hostile.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

typedef void (*writer)(FILE *, const char *);

static char *escaped(writer w, const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    w(f, s);
    assert_int_equal(fclose(f), 0);
    return buf;
}

/* Asserts that s is valid UTF-8 with no C0 or C1 control, no DEL and no
 * bidirectional control, except the C0 characters in `allowed`. */
static void assert_clean(const char *s, const char *allowed)
{
    const unsigned char *p = (const unsigned char *)s;

    while (*p != '\0') {
        uint32_t cp;
        size_t n = hrv_utf8_decode(p, &cp);

        if (cp == 0xfffd)  /* valid only as EF BF BD */
            assert_memory_equal(p, "\xef\xbf\xbd", 3);
        if (cp < 0x20)
            assert_non_null(strchr(allowed, (int)cp));
        assert_false(cp == 0x7f || (cp >= 0x80 && cp <= 0x9f));
        assert_false(hrv_bidi_control(cp));
        p += n;
    }
}

static unsigned hexval(char c)
{
    return (unsigned)(c <= '9' ? c - '0' : c - 'a' + 10);
}

/* Reads text written by the text rule back into the name's bytes. */
static char *unescape_text(const char *s)
{
    char *out = malloc(strlen(s) + 1), *o = out;

    assert_non_null(out);
    while (*s != '\0') {
        if (*s != '\\') {
            *o++ = *s++;
            continue;
        }
        switch (s[1]) {
        case '\\': *o++ = '\\'; s += 2; break;
        case 'n': *o++ = '\n'; s += 2; break;
        case 't': *o++ = '\t'; s += 2; break;
        case 'r': *o++ = '\r'; s += 2; break;
        case 'x':
            *o++ = (char)(hexval(s[2]) << 4 | hexval(s[3]));
            s += 4;
            break;
        case 'u': {
            uint32_t cp = hexval(s[2]) << 12 | hexval(s[3]) << 8 |
                          hexval(s[4]) << 4 | hexval(s[5]);

            if (cp < 0x800) {
                *o++ = (char)(0xc0 | cp >> 6);
            } else {
                *o++ = (char)(0xe0 | cp >> 12);
                *o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
            }
            *o++ = (char)(0x80 | (cp & 0x3f));
            s += 6;
            break;
        }
        default:
            fail_msg("a lone backslash in '%s'", s);
        }
    }
    *o = '\0';
    return out;
}

/* Every hostile name: the text rule leaves no control, bidirectional
 * control or invalid byte, reads back as the name, and stays within
 * HRV_TEXT_ESCAPE_MAX bytes a byte. */
static void test_text_hostile(void **state)
{
    (void)state;
    for (size_t i = 0; i < harness_hostile_count(); i++) {
        const char *name = harness_hostile(i);
        char *s = escaped(hrv_text_put, name), *back = unescape_text(s);
        char *dup = hrv_text_dup(name);

        assert_clean(s, "");
        assert_string_equal(back, name);
        assert_string_equal(dup, s);
        assert_true(strlen(s) <= HRV_TEXT_ESCAPE_MAX * strlen(name));
        assert_int_equal(hrv_text_escape(NULL, 0, name), strlen(s));
        free(s);
        free(back);
        free(dup);
    }
}

static void test_text_values(void **state)
{
    char buf[8];
    char *s;

    (void)state;
    s = escaped(hrv_text_put, harness_hostile(4));
    assert_string_equal(s, "\\x1b[31mred\\x1b[0m \\x1b]0;title\\x07 "
                           "\\x1b[2J");
    free(s);
    s = escaped(hrv_text_put, harness_hostile(5));
    assert_string_equal(s, "left \\u202edesrever\\u202c right");
    free(s);
    s = escaped(hrv_text_put, harness_hostile(7));
    assert_string_equal(s, "line\\nnext\\ttab\\rcr\\x01\\x7f");
    free(s);
    s = escaped(hrv_text_put, harness_hostile(8));
    assert_string_equal(s, "bad \\xff\\xfe utf8 \\xc3( \\xed\\xa0\\x80 "
                           "\\u0085 c1");
    free(s);
    /* Right-to-left letters with no control, and a backslash. */
    s = escaped(hrv_text_put, harness_hostile(9));
    assert_string_equal(s, harness_hostile(9));
    free(s);
    s = escaped(hrv_text_put, "a\\b");
    assert_string_equal(s, "a\\\\b");
    free(s);
    s = escaped(hrv_text_put, NULL);
    assert_string_equal(s, "");
    free(s);
    /* Cut between escapes, never inside one; the length is the whole. */
    assert_int_equal(hrv_text_escape(buf, sizeof buf, "\x1b[31m"), 8);
    assert_string_equal(buf, "\\x1b[31");
    assert_int_equal(hrv_text_escape(buf, 4, "\x1b[31m"), 8);
    assert_string_equal(buf, "");
    assert_int_equal(hrv_text_escape(buf, 4, "\xc3\xa9\xc3\xa9"), 4);
    assert_string_equal(buf, "\xc3\xa9");
}

/* Markdown: no markup starts, no raw HTML, no control. */
static void test_md_hostile(void **state)
{
    (void)state;
    for (size_t i = 0; i < harness_hostile_count(); i++) {
        char *s = escaped(hrv_md_escape, harness_hostile(i));

        assert_clean(s, "");
        assert_null(strchr(s, '<'));
        assert_null(strchr(s, '>'));
        assert_null(strchr(s, '\n'));
        /* Every markup character is behind a backslash. */
        for (const char *p = s; *p != '\0'; p++) {
            if (strchr("`*_[]|", *p) != NULL)
                assert_int_equal(p[-1], '\\');
            if (*p == '\\')
                p++;
        }
        free(s);
    }
}

static void test_md_values(void **state)
{
    char *s;

    (void)state;
    s = escaped(hrv_md_escape, harness_hostile(0));
    assert_string_equal(s, "&lt;img src=x onerror=alert(1)&gt;");
    free(s);
    s = escaped(hrv_md_escape, harness_hostile(1));
    assert_string_equal(s, "\\*\\_\\[\\]()\\|&#126; \\*\\*bold\\*\\* "
                           "\\[link\\](javascript:alert(1)) \\`code\\`");
    free(s);
    s = escaped(hrv_md_escape, harness_hostile(5));
    assert_string_equal(s, "left \xef\xbf\xbd" "desrever\xef\xbf\xbd right");
    free(s);
}

/* XML and HTML: no markup starts, only characters XML 1.0 holds; a name
 * as HTML content is isolated in <bdi>. */
static void test_xml_hostile(void **state)
{
    (void)state;
    for (size_t i = 0; i < harness_hostile_count(); i++) {
        char *s = escaped(hrv_xml_escape, harness_hostile(i));
        char *h = escaped(hrv_html_escape, harness_hostile(i));
        char *b = escaped(hrv_html_name, harness_hostile(i));
        size_t n = strlen(b);

        for (const char *p = s; *p != '\0'; p++)
            assert_null(strchr("<>\"'\n\t\r", *p));
        assert_string_equal(s, h);
        assert_true(n >= 11 && strncmp(b, "<bdi>", 5) == 0 &&
                    strcmp(b + n - 6, "</bdi>") == 0);
        assert_memory_equal(b + 5, s, strlen(s));
        free(s);
        free(h);
        free(b);
    }
}

static void test_xml_values(void **state)
{
    char *s;

    (void)state;
    s = escaped(hrv_xml_escape, harness_hostile(3));
    assert_string_equal(s, "&amp;amp; &amp;lt;b&amp;gt; &quot;double&quot; "
                           "&#39;single&#39;");
    free(s);
    s = escaped(hrv_xml_escape, harness_hostile(7));
    assert_string_equal(s, "line&#10;next tab cr??");
    free(s);
    s = escaped(hrv_xml_escape, harness_hostile(8));
    assert_string_equal(s, "bad ?? utf8 ?( ??? ?? c1");
    free(s);
}

static void test_csv_json(void **state)
{
    char *s;

    (void)state;
    s = escaped(hrv_csv_field, "a,\"b\"\nc");
    assert_string_equal(s, "\"a,\"\"b\"\"\nc\"");
    free(s);
    s = escaped(hrv_csv_field, "plain");
    assert_string_equal(s, "plain");
    free(s);
    s = escaped(hrv_json_string_html, harness_hostile(5));
    assert_string_equal(s, "\"left \\u202edesrever\\u202c right\"");
    free(s);
    s = escaped(hrv_json_string_html, harness_hostile(0));
    assert_string_equal(s, "\"\\u003cimg src=x onerror=alert(1)\\u003e\"");
    free(s);
}

/* The set is what its header says: the longest name as long as a name
 * may be, no '/' and no name ending with a newline. */
static void test_hostile_set(void **state)
{
    size_t n = harness_hostile_count(), longest = 0;

    (void)state;
    assert_true(n >= 10);
    assert_null(harness_hostile(n));
    for (size_t i = 0; i < n; i++) {
        const char *s = harness_hostile(i);
        size_t len = strlen(s);

        assert_null(strchr(s, '/'));
        assert_true(len > 0 && s[len - 1] != '\n');
        if (len > longest)
            longest = len;
    }
    assert_int_equal(longest, HRP_MAX_STRING);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hostile_set),
        cmocka_unit_test(test_text_hostile),
        cmocka_unit_test(test_text_values),
        cmocka_unit_test(test_md_hostile),
        cmocka_unit_test(test_md_values),
        cmocka_unit_test(test_xml_hostile),
        cmocka_unit_test(test_xml_values),
        cmocka_unit_test(test_csv_json),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
