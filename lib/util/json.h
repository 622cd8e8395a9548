/*
 * A strict JSON reader (RFC 8259) for the files of other tools that the
 * history imports (lib/history/import.h): a document read whole into a
 * tree of values. Objects keep their members in the file's order (a name
 * given twice is refused); strings are UTF-8, their escapes resolved, and
 * may hold NUL bytes (len says how long); numbers are doubles.
 *
 * Strict means: one value and white space only, no comments, no trailing
 * commas, no control characters in strings, no unpaired surrogates, no
 * bytes that are not UTF-8, nesting at most HRU_JSON_MAX_DEPTH deep. One
 * extension: the words NaN, Infinity and -Infinity, which Python's json
 * module writes for such floats (pytest-benchmark's files hold them).
 *
 * Pure logic, no I/O: the caller reads the file.
 */
#ifndef HOSTRANGE_UTIL_JSON_H
#define HOSTRANGE_UTIL_JSON_H

#include <stddef.h>

#define HRU_JSON_MAX_DEPTH 64

enum hru_json_type {
    HRU_JSON_NULL,
    HRU_JSON_FALSE,
    HRU_JSON_TRUE,
    HRU_JSON_NUMBER,
    HRU_JSON_STRING,
    HRU_JSON_ARRAY,
    HRU_JSON_OBJECT,
};

/* A value. An array's or object's n items are in item[]; an object's
 * names are in name[] (name[i] names item[i]), NUL-terminated. */
struct hru_json {
    enum hru_json_type type;
    double num;      /* NUMBER */
    char *str;       /* STRING: NUL-terminated, len bytes before it */
    size_t len;
    size_t n;        /* ARRAY, OBJECT */
    struct hru_json **item;
    char **name;     /* OBJECT */
};

/*
 * Reads the document text[0..len). Returns 0 with *out (free with
 * hru_json_free), or -EINVAL with "line L, column C: what" in err, or
 * -ENOMEM.
 */
int hru_json_parse(const char *text, size_t len, struct hru_json **out,
                   char *err, size_t errlen);

/* Frees v and everything in it; NULL is allowed. */
void hru_json_free(struct hru_json *v);

/* The member `name` of object v, or NULL (also when v is no object). */
const struct hru_json *hru_json_get(const struct hru_json *v,
                                    const char *name);

/* The string of member `name` of object v, or NULL when it is missing or
 * not a string. */
const char *hru_json_get_str(const struct hru_json *v, const char *name);

/* Member `name` of object v as a number: 0 with *x, or -ENOENT when it is
 * missing or not a number. */
int hru_json_get_num(const struct hru_json *v, const char *name, double *x);

#endif
