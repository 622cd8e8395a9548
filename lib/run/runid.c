/* Run ids (see runid.h). */
#include "config.h"

#include "lib/run/runid.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

/* 128-bit FNV-1a: offset basis and prime. */
#define FNV128_PRIME                                                      \
    (((unsigned __int128)0x0000000001000000ull << 64) | 0x000000000000013Bull)
#define FNV128_BASIS                                                      \
    (((unsigned __int128)0x6c62272e07bb0142ull << 64) | 0x62b821756295c58dull)

typedef unsigned __int128 u128;

static u128 fnv_add(u128 h, const void *p, size_t n)
{
    const uint8_t *b = p;

    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= FNV128_PRIME;
    }
    return h;
}

static void hex(const uint8_t *b, char *id)
{
    static const char digits[] = "0123456789abcdef";

    for (size_t i = 0; i < HRR_RUNID_LEN / 2; i++) {
        id[2 * i] = digits[b[i] >> 4];
        id[2 * i + 1] = digits[b[i] & 15];
    }
    id[HRR_RUNID_LEN] = '\0';
}

static void hex128(u128 h, char *id)
{
    uint8_t b[16];

    for (int i = 15; i >= 0; i--) {
        b[i] = (uint8_t)h;
        h >>= 8;
    }
    hex(b, id);
}

int hrr_runid_new(char *id)
{
    uint8_t b[HRR_RUNID_LEN / 2];
    size_t got = 0;

    while (got < sizeof b) {
        ssize_t n = getrandom(b + got, sizeof b - got, 0);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -EIO;
        got += (size_t)n;
    }
    hex(b, id);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void hrr_runid_of_parts(char **ids, size_t n, char *id)
{
    u128 h = FNV128_BASIS;

    qsort(ids, n, sizeof *ids, cmp_str);
    for (size_t i = 0; i < n; i++)
        h = fnv_add(h, ids[i], strlen(ids[i]) + 1);
    hex128(h, id);
    /* Never of the form of a content id. */
    if (id[0] == HRR_RUNID_CONTENT)
        id[0] = '0';
}

void hrr_runid_of_bytes(const void *p, size_t n, char *id)
{
    hex128(fnv_add(FNV128_BASIS, p, n), id);
    id[0] = HRR_RUNID_CONTENT;
}

int hrr_runid_of_file(const char *path, const Hostrange__RunHeader *h,
                      char *id, char *err, size_t errlen)
{
    u128 hash = FNV128_BASIS;
    uint8_t buf[65536];
    ssize_t n;
    int fd, e;

    if (h != NULL && h->id != NULL && h->id[0] != '\0') {
        snprintf(id, HRR_RUNID_LEN + 1, "%s", h->id);
        return 0;
    }
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        e = errno;
        snprintf(err, errlen, "%s: %s", path, strerror(e));
        return -e;
    }
    while ((n = read(fd, buf, sizeof buf)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            e = errno;
            close(fd);
            snprintf(err, errlen, "%s: %s", path, strerror(e));
            return -e;
        }
        hash = fnv_add(hash, buf, (size_t)n);
    }
    close(fd);
    hex128(hash, id);
    id[0] = HRR_RUNID_CONTENT;
    return 0;
}

int hrr_runid_valid(const char *s)
{
    size_t n = strlen(s);

    if (n != HRR_RUNID_LEN)
        return 0;
    for (size_t i = s[0] == HRR_RUNID_CONTENT ? 1 : 0; i < n; i++) {
        if (strchr("0123456789abcdef", s[i]) == NULL)
            return 0;
    }
    return 1;
}
