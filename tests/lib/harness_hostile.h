/*
 * The hostile names: the one set that every output format is tested with
 * (escape.h's rules; tests/unit/test_escape.c and, through
 * tests/helpers/hostile, tests/service/test_hostile_names.sh). Each is a
 * name a user or a program could give a node, a range, a host, a commit
 * or a file: markup and script, Markdown's punctuation, quotes, a
 * terminal's escape sequence, Unicode's right-to-left override and
 * isolates, control characters, bytes that are not UTF-8, and a name of
 * the most bytes a name may hold (HRP_MAX_STRING). None holds '/' (a
 * file name) or ends with a newline (a shell's $(...) would drop it).
 */
#ifndef HOSTRANGE_HARNESS_HOSTILE_H
#define HOSTRANGE_HARNESS_HOSTILE_H

#include <stddef.h>

/* How many hostile names there are. */
size_t harness_hostile_count(void);

/* Hostile name i (i < harness_hostile_count()); a static string. */
const char *harness_hostile(size_t i);

#endif
