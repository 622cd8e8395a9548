/* Interning of NVTX messages and domains (see names.h). */
#include "config.h"

#include "nvtx/names.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_SLOTS (2u * HRN_MAX_NAMES) /* a power of two */
#define DOMAIN_MAX 256u

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(struct hrn_name *) name_slot[NAME_SLOTS];
static uint32_t name_n;
static char *window_name;
static struct hrn_name other = { HR_SITE_INIT("nvtx.other"), NULL, 0, 0,
                                 (char *)"", 0 };

static struct hrn_domain *domains[DOMAIN_MAX];
static uint32_t domain_n;

/* A hash of (domain, the len bytes of s), eight bytes at a time. */
static uint64_t name_hash(const void *domain, const char *s, size_t len)
{
    uint64_t h = (uint64_t)(uintptr_t)domain * 0x9e3779b97f4a7c15ull ^ len;
    uint64_t w;

    for (; len >= 8; s += 8, len -= 8) {
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 29;
    }
    w = 0;
    memcpy(&w, s, len);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 32);
}

int hrn_names_window(const char *name)
{
    free(window_name);
    window_name = NULL;
    if (name != NULL && (window_name = strdup(name)) == NULL)
        return -1;
    return 0;
}

/* The marks of a name cut to HR_MAX_NAME bytes: "..." (U+2026), then the
 * 16 hex digits of a hash of the whole name, so that two long names that
 * share their first bytes stay two ranges, the same in every run. */
#define CUT_MARK "\xe2\x80\xa6"
#define CUT_TAIL (sizeof CUT_MARK - 1 + 16)

/* FNV-1a of the n bytes of s: the same in every process. */
static uint64_t stable_hash(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;

    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

/* Cuts full (n bytes, NUL-terminated, room for HR_MAX_NAME + 1) to at most
 * HR_MAX_NAME bytes when it is longer: at a UTF-8 character's boundary,
 * then CUT_MARK and the hash of the whole name. Returns 1 when it cut. */
static int cut_name(char *full, size_t n)
{
    size_t keep = HR_MAX_NAME - CUT_TAIL;
    uint64_t h;

    if (n <= HR_MAX_NAME)
        return 0;
    h = stable_hash(full, n);
    /* Not inside a character: back off continuation bytes. */
    while (keep > 0 && ((unsigned char)full[keep] & 0xc0) == 0x80)
        keep--;
    snprintf(full + keep, CUT_TAIL + 1, CUT_MARK "%016llx",
             (unsigned long long)h);
    return 1;
}

/* Makes the entry of (domain, msg) in slot i (lock held). Its range name
 * is cut to HR_MAX_NAME bytes (counted) when longer, as the client takes
 * no longer one; msg is kept whole for lookups. */
static struct hrn_name *name_new(const struct hrn_domain *domain,
                                 const char *msg, size_t len, uint64_t h,
                                 uint32_t i)
{
    struct hrn_name *e;
    size_t dl = domain != NULL ? strlen(domain->name) + 1 : 0;
    char *full;

    if (name_n >= HRN_MAX_NAMES)
        goto full;
    e = calloc(1, sizeof *e);
    full = malloc(dl + len + 1);
    if (e == NULL || full == NULL) {
        free(e);
        free(full);
        goto full;
    }
    if (domain != NULL) {
        memcpy(full, domain->name, dl - 1);
        full[dl - 1] = ':';
    }
    memcpy(full + dl, msg, len + 1);
    e->msg = full + dl;
    if (dl + len > HR_MAX_NAME) {
        char *whole = strdup(msg);

        if (whole == NULL) {
            free(e);
            free(full);
            goto full;
        }
        e->msg = whole;
        cut_name(full, dl + len);
        hr__names_cut(1);
    }
    e->site.name = full;
    e->domain = domain;
    e->hash = h;
    e->len = len;
    e->window = window_name != NULL && strcmp(window_name, full) == 0;
    name_n++;
    atomic_store_explicit(&name_slot[i], e, memory_order_release);
    return e;
full:
    return &other;
}

struct hrn_name *hrn_name_get(const struct hrn_domain *domain,
                              const char *msg)
{
    struct hrn_name *e;
    size_t len;
    uint64_t h, since;
    uint32_t i;

    /* The client takes no empty range name. */
    if (msg == NULL || msg[0] == '\0')
        msg = "(unnamed)";
    len = strlen(msg);
    h = name_hash(domain, msg, len);
    for (i = (uint32_t)h & (NAME_SLOTS - 1);;
         i = (i + 1) & (NAME_SLOTS - 1)) {
        e = atomic_load_explicit(&name_slot[i], memory_order_acquire);
        if (e == NULL)
            break;
        if (e->hash == h && e->domain == domain && e->len == len &&
            memcmp(e->msg, msg, len) == 0)
            return e;
    }
    /* Not there: look again under the lock, then add it. That is this
     * tool's own work (a lock, an allocation, the first writes to the
     * table's pages), left out of the thread's open ranges. */
    since = hr__own_start();
    pthread_mutex_lock(&lock);
    for (;; i = (i + 1) & (NAME_SLOTS - 1)) {
        e = atomic_load_explicit(&name_slot[i], memory_order_relaxed);
        if (e == NULL) {
            e = name_new(domain, msg, len, h, i);
            break;
        }
        if (e->hash == h && e->domain == domain && e->len == len &&
            memcmp(e->msg, msg, len) == 0)
            break;
    }
    pthread_mutex_unlock(&lock);
    hr__own_end(since);
    return e;
}

char *hrn_utf8(const wchar_t *w, char *buf, size_t len)
{
    size_t n = 0;

    for (; *w != L'\0'; w++) {
        uint32_t c = (uint32_t)*w;
        char u[4];
        size_t k;

        if ((c >= 0xd800 && c < 0xe000) || c > 0x10ffff)
            c = 0xfffd;
        if (c < 0x80) {
            u[0] = (char)c;
            k = 1;
        } else if (c < 0x800) {
            u[0] = (char)(0xc0 | c >> 6);
            u[1] = (char)(0x80 | (c & 0x3f));
            k = 2;
        } else if (c < 0x10000) {
            u[0] = (char)(0xe0 | c >> 12);
            u[1] = (char)(0x80 | (c >> 6 & 0x3f));
            u[2] = (char)(0x80 | (c & 0x3f));
            k = 3;
        } else {
            u[0] = (char)(0xf0 | c >> 18);
            u[1] = (char)(0x80 | (c >> 12 & 0x3f));
            u[2] = (char)(0x80 | (c >> 6 & 0x3f));
            u[3] = (char)(0x80 | (c & 0x3f));
            k = 4;
        }
        if (n + k >= len)
            break;
        memcpy(buf + n, u, k);
        n += k;
    }
    buf[n] = '\0';
    return buf;
}

struct hrn_name *hrn_name_get_w(const struct hrn_domain *domain,
                                const wchar_t *msg)
{
    char buf[1024];

    if (msg == NULL)
        return hrn_name_get(domain, NULL);
    return hrn_name_get(domain, hrn_utf8(msg, buf, sizeof buf));
}

struct hrn_domain *hrn_domain_get(const char *name)
{
    struct hrn_domain *d = NULL;

    if (name == NULL)
        return NULL;
    pthread_mutex_lock(&lock);
    for (uint32_t i = 0; i < domain_n; i++) {
        if (strcmp(domains[i]->name, name) == 0) {
            d = domains[i];
            goto out;
        }
    }
    if (domain_n == DOMAIN_MAX || (d = malloc(sizeof *d)) == NULL)
        goto out;
    if ((d->name = strdup(name)) == NULL) {
        free(d);
        d = NULL;
        goto out;
    }
    domains[domain_n++] = d;
out:
    pthread_mutex_unlock(&lock);
    return d;
}

struct hrn_domain *hrn_domain_get_w(const wchar_t *name)
{
    char buf[1024];

    if (name == NULL)
        return NULL;
    return hrn_domain_get(hrn_utf8(name, buf, sizeof buf));
}
