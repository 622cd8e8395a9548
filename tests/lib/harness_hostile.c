/* The hostile names (see harness_hostile.h). */
#include "config.h"

#include "tests/lib/harness_hostile.h"
#include "proto/protocol.h"

#include <string.h>

static const char *const names[] = {
    "<img src=x onerror=alert(1)>",
    "*_[]()|~ **bold** [link](javascript:alert(1)) `code`",
    "```\n# heading\n| a | b |",
    "&amp; &lt;b&gt; \"double\" 'single'",
    "\x1b[31mred\x1b[0m \x1b]0;title\x07 \x1b[2J",
    "left \xe2\x80\xae" "desrever\xe2\x80\xac right",
    "\xe2\x81\xa7isolate \xe2\x81\xa9 pdi \xe2\x80\x8f rlm",
    "line\nnext\ttab\rcr\x01\x7f",
    "bad \xff\xfe utf8 \xc3( \xed\xa0\x80 \xc2\x85 c1",
    "caf\xc3\xa9 \xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d \xf0\x9f\x98\x80",
    NULL, /* the longest name: HRP_MAX_STRING bytes, no space to wrap at */
};

#define NNAMES (sizeof names / sizeof names[0])

size_t harness_hostile_count(void)
{
    return NNAMES;
}

const char *harness_hostile(size_t i)
{
    static char longest[HRP_MAX_STRING + 1];

    if (i >= NNAMES)
        return NULL;
    if (names[i] != NULL)
        return names[i];
    if (longest[0] == '\0') {
        /* "long-" then digits: one word of 4,096 bytes. */
        memcpy(longest, "long-", 5);
        for (size_t k = 5; k < HRP_MAX_STRING; k++)
            longest[k] = (char)('0' + k % 10);
    }
    return longest;
}
