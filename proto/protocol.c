/* Runtime directory and endpoint resolution, shared by client and daemon. */
#include "config.h"

#include "proto/protocol.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <sys/uio.h>
#include <unistd.h>

static int fit(int n, size_t len)
{
    return (n < 0 || (size_t)n >= len) ? -ENAMETOOLONG : 0;
}

int hrp_runtime_dir(char *buf, size_t len, const char *override)
{
    const char *env;

    if (override != NULL && override[0] != '\0')
        return fit(snprintf(buf, len, "%s", override), len);
    env = getenv("HOSTRANGE_RUNTIME_DIR");
    if (env != NULL && env[0] != '\0')
        return fit(snprintf(buf, len, "%s", env), len);
    env = getenv("XDG_RUNTIME_DIR");
    if (env != NULL && env[0] != '\0')
        return fit(snprintf(buf, len, "%s/hostrange", env), len);
    if (geteuid() == 0)
        return fit(snprintf(buf, len, "/run/hostrange"), len);
    return fit(snprintf(buf, len, "/tmp/hostrange-%u", (unsigned)geteuid()), len);
}

int hrp_endpoint(char *buf, size_t len, const char *dir, const char *name)
{
    return fit(snprintf(buf, len, "ipc://%s/%s", dir, name), len);
}

size_t hrp_runtime_dir_max(void)
{
    struct sockaddr_un a;

    return sizeof a.sun_path - 1 - sizeof "/" HRP_CONTROL_NAME + 1;
}

const char *hrp_phase_name(unsigned phase)
{
    switch (phase) {
    case HRP_PHASE_COLD:
        return "cold";
    case HRP_PHASE_WARM:
        return "warm";
    default:
        return NULL;
    }
}

unsigned hrp_phase_parse(const char *name)
{
    if (strcmp(name, "cold") == 0)
        return HRP_PHASE_COLD;
    if (strcmp(name, "warm") == 0)
        return HRP_PHASE_WARM;
    return 0;
}

const char *hrp_metric_name(unsigned metric)
{
    return metric == HRP_METRIC_SELF ? "self" : "inclusive";
}

unsigned hrp_metric_parse(const char *name)
{
    return name != NULL && strcmp(name, "self") == 0 ? HRP_METRIC_SELF
                                                     : HRP_METRIC_INCLUSIVE;
}

int hrp_name_ok(const char *s, size_t n)
{
    return n > 0 && n <= HRP_MAX_STRING && memchr(s, '\0', n) == NULL;
}

int hrp_label_ok(const char *s, size_t n)
{
    return n == 0 || hrp_name_ok(s, n);
}

int hrp_key_names_ok(const char *node, const char *op, const char *backend,
                     const char *range)
{
    return hrp_name_ok(node, strnlen(node, HRP_MAX_STRING + 1)) &&
           hrp_label_ok(op, strnlen(op, HRP_MAX_STRING + 1)) &&
           hrp_label_ok(backend, strnlen(backend, HRP_MAX_STRING + 1)) &&
           hrp_name_ok(range, strnlen(range, HRP_MAX_STRING + 1));
}

unsigned hrp_clock_paths_parse(const char *name)
{
    if (name == NULL)
        return 0;
    if (strcmp(name, HRP_CLOCK_PATH_FAST) == 0)
        return HRP_PATH_FAST;
    if (strcmp(name, HRP_CLOCK_PATH_ORDERED) == 0)
        return HRP_PATH_ORDERED;
    if (strcmp(name, HRP_CLOCK_PATH_WAITING) == 0)
        return HRP_PATH_WAITING;
    if (strcmp(name, HRP_CLOCK_PATH_MIXED) == 0)
        return HRP_PATH_FAST | HRP_PATH_ORDERED;
    return 0;
}

int hrp_clock_path_bit(const char *path, const char *clock_order)
{
    if (path != NULL && path[0] != '\0') {
        unsigned p = hrp_clock_paths_parse(path);

        if (p == HRP_PATH_FAST && clock_order != NULL &&
            (strcmp(clock_order, HRP_CLOCK_ORDER_RDTSCP) == 0 ||
             strcmp(clock_order, HRP_CLOCK_ORDER_LFENCE) == 0))
            return (int)HRP_PATH_WAITING;
        return p != 0 && !hrp_clock_paths_mixed(p) ? (int)p : -1;
    }
    return clock_order != NULL && clock_order[0] != '\0'
               ? (int)HRP_PATH_ORDERED
               : 0;
}

const char *hrp_clock_path_name(unsigned paths)
{
    switch (paths & HRP_PATHS_ALL) {
    case 0:
        return HRP_CLOCK_PATH_UNKNOWN;
    case HRP_PATH_FAST:
        return HRP_CLOCK_PATH_FAST;
    case HRP_PATH_ORDERED:
        return HRP_CLOCK_PATH_ORDERED;
    case HRP_PATH_WAITING:
        return HRP_CLOCK_PATH_WAITING;
    default:
        return HRP_CLOCK_PATH_MIXED;
    }
}

const char *hrp_clock_path_env(unsigned paths)
{
    switch (paths & HRP_PATHS_ALL) {
    case HRP_PATH_FAST:
        return "fast,plain";
    case HRP_PATH_ORDERED:
        return "ordered";
    case HRP_PATH_WAITING:
        return "fast,waiting";
    default:
        return NULL;
    }
}

int hrp_write_all(int fd, struct iovec *iov, int n)
{
    while (n > 0) {
        ssize_t w = writev(fd, iov, n);

        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (w == 0)
            return -ENOSPC;
        while (n > 0 && (size_t)w >= iov->iov_len) {
            w -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + w;
            iov->iov_len -= (size_t)w;
        }
    }
    return 0;
}

void hrp_cpu_facts(int *invariant, int *rdtscp, int *amd)
{
    *invariant = *rdtscp = *amd = 0;
#if defined(__x86_64__) || defined(__i386__)
    FILE *f = fopen("/proc/cpuinfo", "re");
    char line[4096];
    int constant = 0, nonstop = 0;

    if (f == NULL)
        return;
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "vendor_id", 9) == 0) {
            *amd = strstr(line, "AuthenticAMD") != NULL ||
                   strstr(line, "HygonGenuine") != NULL;
            continue;
        }
        if (strncmp(line, "flags", 5) != 0)
            continue;
        constant = strstr(line, " constant_tsc") != NULL;
        nonstop = strstr(line, " nonstop_tsc") != NULL;
        *rdtscp = strstr(line, " rdtscp") != NULL;
        break;
    }
    fclose(f);
    *invariant = constant && nonstop;
#endif
}

long hrp_env_number(const char *env, long min, long max, long def)
{
    char *end;
    long v;

    if (env == NULL || env[0] == '\0')
        return def;
    errno = 0;
    v = strtol(env, &end, 10);
    if (errno != 0 || end == env || *end != '\0' || v < min || v > max)
        return def;
    return v;
}

void hrp_clock_env_parse(const char *env, int *tsc, int *ordered,
                         int *waiting)
{
    *tsc = -1;
    *ordered = 0;
    *waiting = -1;
    while (env != NULL && *env != '\0') {
        size_t n = strcspn(env, ", ");

        if (n == 3 && strncmp(env, "tsc", n) == 0)
            *tsc = 1;
        else if (n == 9 && strncmp(env, "monotonic", n) == 0)
            *tsc = 0;
        else if (n == 7 && strncmp(env, "ordered", n) == 0)
            *ordered = 1;
        else if (n == 4 && strncmp(env, "fast", n) == 0)
            *ordered = 0;
        else if (n == 7 && strncmp(env, "waiting", n) == 0)
            *waiting = 1;
        else if (n == 5 && strncmp(env, "plain", n) == 0)
            *waiting = 0;
        env += n;
        env += strspn(env, ", ");
    }
}

void hrp_clock_choose(const char *env, struct hrp_clock_choice *c)
{
    int tsc, waiting, invariant, amd;

    hrp_clock_env_parse(env, &tsc, &c->ordered, &waiting);
    hrp_cpu_facts(&invariant, &c->rdtscp, &amd);
#if defined(__x86_64__) || defined(__i386__)
    c->tsc = tsc >= 0 ? tsc : invariant;
#else
    (void)tsc;
    c->tsc = 0;
#endif
    c->waiting = waiting >= 0 ? waiting : amd;
}

const char *hrp_clock_path_default(const char *env)
{
    struct hrp_clock_choice c;

    hrp_clock_choose(env, &c);
    if (c.ordered)
        return HRP_CLOCK_PATH_ORDERED;
    return c.tsc && c.waiting ? HRP_CLOCK_PATH_WAITING : HRP_CLOCK_PATH_FAST;
}
