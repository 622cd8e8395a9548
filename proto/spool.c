/* Spool file names and record framing, shared by client and daemon (see
 * spool.h). */
#include "config.h"

#include "proto/spool.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

static uint64_t fnv1a(uint64_t h, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= FNV_PRIME;
    }
    return h;
}

int hrp_spool_file_name(char *buf, size_t len, uint32_t pid,
                        uint64_t instance, const char *suffix)
{
    int n = snprintf(buf, len, "%" PRIu32 "-%016" PRIx64 "%s", pid, instance,
                     suffix);

    return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int hrp_spool_file_parse(const char *name, uint32_t *pid, uint64_t *instance)
{
    uint64_t p = 0, inst = 0;
    const char *s = name;
    int digits = 0;

    while (*s >= '0' && *s <= '9' && digits < 10) {
        p = p * 10 + (uint64_t)(*s++ - '0');
        digits++;
    }
    if (digits == 0 || p > UINT32_MAX || *s++ != '-')
        return 0;
    for (digits = 0; digits < 16; digits++, s++) {
        int v;

        if (*s >= '0' && *s <= '9')
            v = *s - '0';
        else if (*s >= 'a' && *s <= 'f')
            v = *s - 'a' + 10;
        else
            return 0;
        inst = inst << 4 | (uint64_t)v;
    }
    if (strcmp(s, HRP_SPOOL_SUFFIX) != 0)
        return 0;
    *pid = (uint32_t)p;
    *instance = inst;
    return 1;
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n)
{
    uint64_t v = 0;

    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

uint64_t hrp_spool_check(uint8_t type, const void *p, uint32_t len)
{
    uint8_t head[5];

    put_le(head, len, 4);
    head[4] = type;
    return fnv1a(fnv1a(FNV_OFFSET, head, sizeof head), p, len);
}

void hrp_spool_rec_header(uint8_t h[HRP_SPOOL_REC_HEADER], uint8_t type,
                          const void *p, uint32_t len)
{
    put_le(h, len, 4);
    put_le(h + 4, hrp_spool_check(type, p, len), 8);
    h[12] = type;
}

void hrp_spool_rec_parse(const uint8_t h[HRP_SPOOL_REC_HEADER],
                         uint8_t *type, uint32_t *len, uint64_t *check)
{
    *len = (uint32_t)get_le(h, 4);
    *check = get_le(h + 4, 8);
    *type = h[12];
}

uint32_t hrp_spool_rec_max(uint8_t type)
{
    switch (type) {
    case HRP_SPOOL_REC_INFO:
        return HRP_SPOOL_INFO_MAX;
    case HRP_SPOOL_REC_BATCH:
        return HRP_SPOOL_BATCH_MAX;
    default:
        return 0;
    }
}
