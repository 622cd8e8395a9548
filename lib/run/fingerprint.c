/* The machine fingerprint of a run (see fingerprint.h). */
#include "config.h"

#include "lib/run/fingerprint.h"
#include "proto/protocol.h"
#include "lib/run/run.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* The model of the first CPU as /proc/cpuinfo names it ("model name" on
 * x86, else "Processor", "cpu model" or "uarch" on other machines); the
 * machine's type (uname) when it names none. */
static void cpu_model(char *buf, size_t len, const char *machine)
{
    static const char *const keys[] = { "model name", "Processor",
                                        "cpu model", "uarch", "cpu" };
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    size_t best = sizeof keys / sizeof keys[0];

    snprintf(buf, len, "%s", machine);
    if (f == NULL)
        return;
    while (fgets(line, sizeof line, f) != NULL && best > 0) {
        char *colon = strchr(line, ':'), *v, *end;

        if (colon == NULL)
            continue;
        for (size_t k = 0; k < best; k++) {
            size_t n = strlen(keys[k]);

            if (strncmp(line, keys[k], n) != 0 ||
                strspn(line + n, " \t") != (size_t)(colon - line) - n)
                continue;
            v = colon + 1 + strspn(colon + 1, " \t");
            end = v + strlen(v);
            while (end > v && (end[-1] == '\n' || end[-1] == ' '))
                *--end = '\0';
            if (*v != '\0') {
                snprintf(buf, len, "%s", v);
                best = k;
            }
            break;
        }
    }
    fclose(f);
}

void hrr_fingerprint_probe(struct hrr_fingerprint *fp)
{
    struct utsname u;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const char *name;

    memset(fp, 0, sizeof *fp);
    hostrange__run_fingerprint__init(&fp->m);
    hrr_hostname(fp->host, sizeof fp->host);
    if (uname(&u) == 0) {
        snprintf(fp->kernel, sizeof fp->kernel, "%s %s", u.sysname,
                 u.release);
        cpu_model(fp->cpu, sizeof fp->cpu, u.machine);
    } else {
        snprintf(fp->kernel, sizeof fp->kernel, "unknown");
        cpu_model(fp->cpu, sizeof fp->cpu, "unknown");
    }
    fp->m.host = fp->host;
    fp->m.cpu_model = fp->cpu;
    fp->m.cores = cores > 0 ? (uint32_t)cores : 0;
    fp->m.kernel = fp->kernel;
    fp->m.version = PACKAGE_VERSION;
    name = getenv(HRR_MACHINE_ENV);
    if (name != NULL && strlen(name) <= HRR_MACHINE_MAX)
        snprintf(fp->machine, sizeof fp->machine, "%s", name);
    fp->m.machine = fp->machine;
    hrr_fingerprint_clients(fp, NULL, 0);
}

void hrr_fingerprint_machine(const Hostrange__RunFingerprint *f, char *buf,
                             size_t len)
{
    if (f->machine != NULL && f->machine[0] != '\0')
        snprintf(buf, len, "%s", f->machine);
    else
        snprintf(buf, len, "%s, %u cores; clock %s", f->cpu_model, f->cores,
                 f->clock_path[0] != '\0' ? f->clock_path : "unknown");
}

void hrr_fingerprint_clock_path(Hostrange__ClientStats *const *clients,
                                size_t n, char *buf, size_t len)
{
    const char *env = getenv("HOSTRANGE_CLOCK");
    unsigned paths = 0;

    /* The paths the clients report (both: mixed); a client from before
     * paths were named says nothing and is left out. */
    for (size_t i = 0; i < n; i++)
        paths |= hrp_clock_paths_parse(clients[i]->clock_path);
    if (paths != 0) {
        snprintf(buf, len, "%s", hrp_clock_path_name(paths));
        return;
    }
    /* Else the path a client started here would take, by the client's
     * own rule: HOSTRANGE_CLOCK's words and the processor (waiting reads
     * on AMD's). */
    snprintf(buf, len, "%s", hrp_clock_path_default(env));
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void hrr_fingerprint_clients(struct hrr_fingerprint *fp,
                             Hostrange__ClientStats *const *clients,
                             size_t n)
{
    const char **orders = calloc(n + 1, sizeof *orders);
    size_t no = 0, at = 0;
    double step = 0;

    hrr_fingerprint_clock_path(clients, n, fp->clock_path,
                               sizeof fp->clock_path);
    fp->clock_order[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        const Hostrange__ClientStats *c = clients[i];

        if (c->clock_step_ns > step && isfinite(c->clock_step_ns))
            step = c->clock_step_ns;
        if (orders != NULL && c->clock_order != NULL &&
            c->clock_order[0] != '\0')
            orders[no++] = c->clock_order;
    }
    if (orders != NULL) {
        qsort(orders, no, sizeof *orders, cmp_str);
        for (size_t i = 0; i < no; i++) {
            if (i > 0 && strcmp(orders[i], orders[i - 1]) == 0)
                continue;
            at += (size_t)snprintf(fp->clock_order + at,
                                   at < sizeof fp->clock_order
                                       ? sizeof fp->clock_order - at
                                       : 0,
                                   "%s%s", at > 0 ? ", " : "", orders[i]);
            if (at >= sizeof fp->clock_order)
                break;
        }
        free(orders);
    }
    fp->m.clock_path = fp->clock_path;
    fp->m.clock_order = fp->clock_order;
    fp->m.clock_step_ns = step;
}

/* Appends to buf[*at..len) what printf would; keeps *at counting past
 * the end, so that the caller can tell a truncation. */
static void append(char *buf, size_t len, size_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void append(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(*at < len ? buf + *at : NULL, *at < len ? len - *at : 0,
                  fmt, ap);
    va_end(ap);
    if (n > 0)
        *at += (size_t)n;
}

static int same_step(double a, double b)
{
    if (a == b)
        return 1;
    if (a <= 0 || b <= 0)
        return 0;
    return (a > b ? a / b : b / a) <= HRR_FINGERPRINT_STEP_FACTOR;
}

size_t hrr_fingerprint_diff(const Hostrange__RunFingerprint *a,
                            const Hostrange__RunFingerprint *b, char *buf,
                            size_t len)
{
    /* A named machine is its name: its CPU and cores are not compared
     * (a pool of runners under one name). */
    int named = a->machine[0] != '\0' || b->machine[0] != '\0';
    const struct {
        const char *name, *x, *y;
        int compared;
    } text[] = {
        { "machine", a->machine, b->machine, named },
        { "cpu_model", a->cpu_model, b->cpu_model, !named },
        { "clock_path", a->clock_path, b->clock_path, 1 },
        { "clock_order", a->clock_order, b->clock_order, 1 },
    };
    size_t n = 0, at = 0;

    if (len > 0)
        buf[0] = '\0';
    for (size_t i = 0; i < sizeof text / sizeof text[0]; i++) {
        if (!text[i].compared || strcmp(text[i].x, text[i].y) == 0)
            continue;
        append(buf, len, &at, "%s%s '%s' vs '%s'", n++ ? "; " : "",
               text[i].name, text[i].x, text[i].y);
    }
    if (!named && a->cores != b->cores)
        append(buf, len, &at, "%scores %u vs %u", n++ ? "; " : "", a->cores,
               b->cores);
    if (!same_step(a->clock_step_ns, b->clock_step_ns))
        append(buf, len, &at, "%sclock_step_ns %g vs %g", n++ ? "; " : "",
               a->clock_step_ns, b->clock_step_ns);
    return n;
}

void hrr_fingerprint_format(const Hostrange__RunFingerprint *f, char *buf,
                            size_t len)
{
    size_t at = 0;

    if (len > 0)
        buf[0] = '\0';
    append(buf, len, &at, "%s: %s, %u cores, %s; clock %s", f->host,
           f->cpu_model, f->cores, f->kernel,
           f->clock_path[0] ? f->clock_path : "unknown");
    if (f->clock_order[0] != '\0' || f->clock_step_ns > 0) {
        append(buf, len, &at, " (%s", f->clock_order[0] ? f->clock_order
                                                        : "reads unknown");
        if (f->clock_step_ns > 0)
            append(buf, len, &at, ", step %g ns", f->clock_step_ns);
        append(buf, len, &at, ")");
    }
    append(buf, len, &at, "; hostrange %s", f->version);
    if (f->machine[0] != '\0')
        append(buf, len, &at, "; machine %s", f->machine);
}

Hostrange__RunFingerprint *hrr_fingerprint_common(Hostrange__RunHeader *const *h,
                                                  size_t n)
{
    char scratch[8];

    for (size_t i = 0; i < n; i++) {
        if (h[i]->fingerprint == NULL)
            return NULL;
        if (i > 0 && hrr_fingerprint_diff(h[0]->fingerprint,
                                          h[i]->fingerprint, scratch,
                                          sizeof scratch) != 0)
            return NULL;
    }
    return n > 0 ? h[0]->fingerprint : NULL;
}
