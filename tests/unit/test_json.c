/*
 * The strict JSON reader (lib/util/json.c): values of every kind read,
 * escapes and surrogate pairs resolved to UTF-8, members kept in order,
 * Python's NaN and Infinity taken, and what RFC 8259 forbids refused with
 * the line and column where it stands.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/util/json.h"

static struct hru_json *read_ok(const char *s)
{
    struct hru_json *v = NULL;
    char err[256] = "";

    assert_int_equal(hru_json_parse(s, strlen(s), &v, err, sizeof err), 0);
    assert_non_null(v);
    return v;
}

/* Asserts that s is refused with reason `why`. */
static void read_bad(const char *s, size_t len, const char *why)
{
    struct hru_json *v = NULL;
    char err[256] = "";

    assert_int_equal(hru_json_parse(s, len, &v, err, sizeof err), -EINVAL);
    assert_null(v);
    assert_string_equal(err, why);
}

static void test_values(void **state)
{
    struct hru_json *v = read_ok(
        " {\"a\": [1, -2.5e2, 0.125, true, false, null],\n"
        "  \"s\": \"x\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\\u0000y\","
        "  \"o\": {}, \"e\": [], \"nan\": NaN, \"inf\": -Infinity} ");
    const struct hru_json *a, *s;
    double x = 0;

    (void)state;
    assert_int_equal(v->type, HRU_JSON_OBJECT);
    assert_int_equal(v->n, 6);
    assert_string_equal(v->name[0], "a");
    assert_string_equal(v->name[5], "inf");
    a = hru_json_get(v, "a");
    assert_int_equal(a->type, HRU_JSON_ARRAY);
    assert_int_equal(a->n, 6);
    assert_true(a->item[0]->num == 1.0);
    assert_true(a->item[1]->num == -250.0);
    assert_true(a->item[2]->num == 0.125);
    assert_int_equal(a->item[3]->type, HRU_JSON_TRUE);
    assert_int_equal(a->item[4]->type, HRU_JSON_FALSE);
    assert_int_equal(a->item[5]->type, HRU_JSON_NULL);
    s = hru_json_get(v, "s");
    assert_int_equal(s->len, 17);
    assert_memory_equal(s->str, "x\"\\/\b\f\n\r\t\xc3\xa9\xf0\x9f\x98\x80\0y",
                        17);
    assert_null(hru_json_get_str(v, "a"));
    assert_int_equal(hru_json_get(v, "o")->n, 0);
    assert_int_equal(hru_json_get(v, "e")->type, HRU_JSON_ARRAY);
    assert_int_equal(hru_json_get_num(v, "nan", &x), 0);
    assert_true(isnan(x));
    assert_int_equal(hru_json_get_num(v, "inf", &x), 0);
    assert_true(isinf(x) && x < 0);
    assert_int_equal(hru_json_get_num(v, "missing", &x), -ENOENT);
    hru_json_free(v);
    hru_json_free(read_ok("\"\xe2\x82\xac\""));
    hru_json_free(read_ok("0"));
    hru_json_free(NULL);
}

static void test_refused(void **state)
{
    char deep[200];

    (void)state;
    read_bad("", 0, "line 1, column 1: a value missing");
    read_bad("[1,]", 4, "line 1, column 4: not a value");
    read_bad("{\"a\":1,}", 8, "line 1, column 8: an object's member without a name");
    read_bad("{\"a\":1}\n x", 10, "line 2, column 2: more after the document's value");
    read_bad("[01]", 4, "line 1, column 3: an array without ',' or ']'");
    read_bad("[1.]", 4, "line 1, column 4: a number without digits after its point");
    read_bad("[1e]", 4, "line 1, column 4: a number without digits in its exponent");
    read_bad("[+1]", 4, "line 1, column 2: not a value");
    read_bad("// c\n1", 6, "line 1, column 1: not a value");
    read_bad("\"a\tb\"", 5, "line 1, column 3: a control character in a string");
    read_bad("\"\\x\"", 4, "line 1, column 3: an unknown escape in a string");
    read_bad("\"\\ud800\"", 8, "line 1, column 8: a high surrogate without a low one");
    read_bad("\"\\udc00\"", 8, "line 1, column 8: a low surrogate without a high one");
    read_bad("\"\\u12\"", 6, "line 1, column 4: a \\u escape without four hex digits");
    read_bad("\"\xc3\x28\"", 4, "line 1, column 2: a string that is not UTF-8");
    read_bad("\"\xc0\xaf\"", 4, "line 1, column 2: a string that is not UTF-8");
    read_bad("\"\xed\xa0\x80\"", 5, "line 1, column 2: a string that is not UTF-8");
    read_bad("\"abc", 4, "line 1, column 5: a string that does not end");
    read_bad("{\"a\":1,\"a\":2}", 13, "line 1, column 11: a member's name given twice");
    read_bad("{\"a\\u0000\":1}", 13, "line 1, column 11: a member's name holding NUL");
    read_bad("{\"a\" 1}", 7, "line 1, column 6: a member's name without ':'");
    read_bad("[1 2]", 5, "line 1, column 4: an array without ',' or ']'");
    read_bad("[1]\0", 4, "line 1, column 4: more after the document's value");
    read_bad("tru", 3, "line 1, column 1: not a value");
    memset(deep, '[', sizeof deep);
    read_bad(deep, HRU_JSON_MAX_DEPTH + 1, "line 1, column 65: nested more than 64 deep");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
