/* The run history's connection strings (see history.h): which backend a
 * string names, its name for messages, and its password, found, masked
 * and scrubbed from what a library said. No I/O. */
#include "config.h"

#include "lib/history/history.h"
#include "lib/history/history_impl.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

int hrh_is_pg(const char *dsn)
{
    const char *eq;

    if (strncmp(dsn, "postgresql://", 13) == 0 ||
        strncmp(dsn, "postgres://", 11) == 0)
        return 1;
    /* key=value: a word of letters and underscores, then '='. */
    eq = strchr(dsn, '=');
    if (eq == NULL || eq == dsn)
        return 0;
    for (const char *p = dsn; p < eq; p++) {
        if (!isalpha((unsigned char)*p) && *p != '_' && *p != ' ')
            return 0;
    }
    return 1;
}

/* Masks, in s, the value of every password=VALUE (a URL's parameter or a
 * key=value pair, quoted or not). */
void hrh__mask_passwords(char *s, size_t len)
{
    char *p = s;

    while ((p = strcasestr(p, "password")) != NULL) {
        char *v = p + 8, *end;

        while (*v == ' ')
            v++;
        if (*v != '=') {
            p += 8;
            continue;
        }
        v++;
        while (*v == ' ')
            v++;
        end = v;
        if (*end == '\'') {
            for (end++; *end != '\0' && *end != '\''; end++) {
                if (*end == '\\' && end[1] != '\0')
                    end++;
            }
            if (*end == '\'')
                end++;
        } else {
            while (*end != '\0' && *end != ' ' && *end != '&')
                end++;
        }
        if (strlen(s) - (size_t)(end - v) + 3 < len) {
            memmove(v + 3, end, strlen(end) + 1);
            memcpy(v, "***", 3);
        }
        p = v + 3;
    }
}

void hrh_name(const char *dsn, char *buf, size_t len)
{
    snprintf(buf, len, "%s", dsn);
    if (!hrh_is_pg(dsn))
        return;
    if (strstr(buf, "://") != NULL) {
        char *user = strstr(buf, "://") + 3;
        char *at = strchr(user, '@'), *slash = strchr(user, '/');
        char *colon = strchr(user, ':');

        if (at != NULL && (slash == NULL || at < slash) && colon != NULL &&
            colon < at) {
            memmove(colon + 4, at, strlen(at) + 1);
            memcpy(colon + 1, "***", 3);
        }
    }
    hrh__mask_passwords(buf, len);
}

/* The password of a connection string, if any: *len bytes at the
 * returned pointer (a URL's user:password@, or password=VALUE). */
static const char *password_of(const char *dsn, size_t *len)
{
    const char *p;

    if (strstr(dsn, "://") != NULL) {
        const char *user = strstr(dsn, "://") + 3;
        const char *at = strchr(user, '@'), *slash = strchr(user, '/');
        const char *colon = strchr(user, ':');

        if (at != NULL && (slash == NULL || at < slash) && colon != NULL &&
            colon < at) {
            *len = (size_t)(at - colon - 1);
            return colon + 1;
        }
    }
    if ((p = strcasestr(dsn, "password")) != NULL) {
        p += 8;
        while (*p == ' ')
            p++;
        if (*p++ != '=')
            return NULL;
        while (*p == ' ' || *p == '\'')
            p++;
        *len = strcspn(p, " &'");
        return p;
    }
    return NULL;
}

int hrh_password(const char *dsn, size_t *off, size_t *len)
{
    size_t n = 0;
    const char *pw = password_of(dsn, &n);

    if (pw == NULL || n == 0)
        return 0;
    *off = (size_t)(pw - dsn);
    *len = n;
    return 1;
}

/* Replaces in s, as "***", every occurrence of the password of dsn (of 3
 * bytes or more: a shorter one cannot be told from other text), whatever
 * a library's message said of the connection string. */
void hrh__scrub_password(const char *dsn, char *s)
{
    size_t len = 0;
    const char *pw = password_of(dsn, &len);
    char *q;

    if (pw == NULL || len < 3)
        return;
    while ((q = memmem(s, strlen(s), pw, len)) != NULL) {
        memcpy(q, "***", 3);
        memmove(q + 3, q + len, strlen(q + len) + 1);
    }
}
