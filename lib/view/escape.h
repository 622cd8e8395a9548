/*
 * Escaping: one rule per output format, the one copy of each. Every name
 * that reaches an output (node ids, operators, backends, phases, range and
 * metric names, machines, hosts, commits and other run metadata, file
 * names) goes through the rule of its format; no writer escapes on its
 * own. A name is any string of bytes but NUL: it may hold markup, control
 * characters, Unicode's bidirectional controls and bytes that are not
 * UTF-8 (tests/lib/hostile.c holds the set that every format is tested
 * with).
 *
 *   JSON      hrv_json_string: a quoted string, ASCII only, as Python's
 *             json.dumps with ensure_ascii; hrv_json_string_html inside a
 *             <script> (no '<', '>' or '&').
 *   CSV       hrv_csv_field: RFC 4180 quoting.
 *   XML       hrv_xml_escape: entities; what XML 1.0 cannot hold as '?'.
 *   HTML      hrv_html_escape: the XML rule (text and attribute values);
 *             hrv_html_name: element content in <bdi>, so that a name's
 *             direction cannot spill into its neighbours.
 *   Markdown  hrv_md_escape: reads back as the name in a table cell or a
 *             line; never starts markup or raw HTML.
 *   Text      hrv_text_escape (a terminal, a log): control characters,
 *             bidirectional controls and invalid bytes as visible escapes
 *             (\x1b, \n, \u202e), so that no name moves the cursor,
 *             colours the terminal or reverses the text around it.
 *
 * Pure formatting: the functions write to the FILE * or buffer they are
 * given and do no other I/O. A NULL string is written as "".
 */
#ifndef HOSTRANGE_ESCAPE_H
#define HOSTRANGE_ESCAPE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Decodes one UTF-8 sequence at s (not at its terminating NUL) into *cp
 * and returns how many bytes it took. An ill-formed sequence becomes
 * U+FFFD and takes its maximal valid prefix (at least one byte), as
 * Python's "replace" error handler does. Every writer of names uses it.
 */
size_t hrv_utf8_decode(const unsigned char *s, uint32_t *cp);

/* Whether cp is one of Unicode's bidirectional formatting characters
 * (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069): the
 * characters that can reorder the text around them. */
int hrv_bidi_control(uint32_t cp);

/*
 * Writes s as a JSON string, quoted, the way Python's json.dumps does with
 * ensure_ascii: everything outside printable ASCII escaped, as \uXXXX
 * (surrogate pairs above U+FFFF), and each byte that is not part of valid
 * UTF-8 as U+FFFD. Every JSON string of a report or a diff is written by
 * it.
 */
void hrv_json_string(FILE *f, const char *s);

/* hrv_json_string for a string inside an HTML <script>: '<', '>' and '&'
 * escaped as well (\u003c, \u003e, \u0026), so that no name ends the
 * script. */
void hrv_json_string_html(FILE *f, const char *s);

/* Writes s as one CSV field: quoted per RFC 4180 (a quote doubled) when it
 * holds a comma, a quote, CR or LF; as it is otherwise. */
void hrv_csv_field(FILE *f, const char *s);

/* Writes s with the characters &, <, >, " and ' as XML entities, a newline
 * as &#10;, a tab or carriage return as a space, and bytes XML 1.0 cannot
 * hold as '?' (invalid UTF-8 included). Fit for text and for attribute
 * values. */
void hrv_xml_escape(FILE *f, const char *s);

/* Writes s as HTML text or an attribute value: the XML rule (HTML reads
 * every entity it writes). */
void hrv_html_escape(FILE *f, const char *s);

/* Writes s as HTML element content isolated from its neighbours:
 * <bdi>s</bdi>, s written by hrv_html_escape. A bidirectional control in
 * s then reorders s alone. */
void hrv_html_name(FILE *f, const char *s);

/*
 * Writes s as Markdown text that reads as s, in a table cell or a line:
 * \ ` * _ [ ] and | behind a backslash; & < > and ~ as character
 * references (raw HTML and strike-through never start); a newline, tab or
 * carriage return as a space; another control character, a bidirectional
 * control (hrv_bidi_control), and each byte that is not part of valid
 * UTF-8, as U+FFFD.
 */
void hrv_md_escape(FILE *f, const char *s);

/*
 * The text rule (a terminal): writes s into out (len bytes, always
 * NUL-terminated when len > 0, cut between two characters or escapes
 * when it does not fit) with a backslash as \\, a newline, tab and
 * carriage return as \n, \t and \r, another C0 control or DEL as \xHH, a
 * C1 control or a bidirectional control (hrv_bidi_control) as \uHHHH, and
 * each byte that is not part of valid UTF-8 as \xHH (lower-case hex);
 * other characters as they are. Returns the length of the whole escaped
 * text (without its NUL), as snprintf does: at most HRV_TEXT_ESCAPE_MAX
 * times strlen(s).
 */
size_t hrv_text_escape(char *out, size_t len, const char *s);

/* How many bytes of escaped text one byte of a name can become at most
 * (a bidirectional control: three bytes as six characters). */
#define HRV_TEXT_ESCAPE_MAX 4

/* hrv_text_escape written to f. */
void hrv_text_put(FILE *f, const char *s);

/* hrv_text_escape into a new string (the caller frees it), or NULL when
 * out of memory. */
char *hrv_text_dup(const char *s);

#endif
