/*
 * Writes a made-up run file, as saved on a made-up machine, for the
 * history's tests and benchmark:
 *
 *   mkrun -o FILE [-i ID] [-H HOST] [-C CPU] [-N KERNEL] [-M MACHINE]
 *         [-m KEY=VALUE]... [-k NODE/RANGE=NS]... [-c NODE/RANGE=NS]...
 *         [-p NODE/CONTEXT=NS[,CONTEXT=NS]...]... [-P ...]...
 *
 * Each -k key (operator "op", backend "cpu", phase warm) gets five range
 * events of NS - 2 .. NS + 2 ns, so that its median is NS, each with a
 * self time of half that; a -c key is the same in phase cold; a -p key
 * is the same in phase warm, its events under each calling context
 * CONTEXT, A;B;...;RANGE (outermost first, every one ending in the key's
 * range RANGE), five at NS of each; a -P key the same in phase cold; the
 * keys are written in the order given. -K N adds N keys "k0".."kN-1" of
 * node "bulk", each at NS given by -v (default 1000). The machine is host
 * HOST (default "hostA") with CPU model CPU (default "Test CPU 3000"), 4
 * cores, kernel KERNEL (default "Linux 6.1.0") and the fast clock path,
 * named MACHINE when -M is given.
 */
#include "config.h"

#include "tests/lib/harness_runfile.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void key(struct harness_runfile *f, const char *node,
                unsigned phase, const char *range, uint64_t ns)
{
    struct hra_key *k = harness_runfile_key(f, node, phase, range);

    for (uint64_t d = 0; d < 5; d++)
        harness_runfile_add(f, k, ns + d - 2, (ns + d - 2) / 2);
    harness_runfile_put(f, k);
}

/* A key of phase `phase` whose events are under the calling contexts of
 * spec, "A;B;RANGE=NS[,A;C;RANGE=NS]..." (outermost first, each ending in
 * the key's range RANGE), five events of each: 0, or -1 on a bad spec. */
static int path_key(struct harness_runfile *f, const char *node,
                    unsigned phase, char *spec)
{
    struct hra_key *k = NULL;

    for (char *ctx = spec, *next; ctx != NULL; ctx = next) {
        const char *names[64];
        uint32_t depth = 0;
        char *eq;
        uint64_t ns;

        next = strchr(ctx, ',');
        if (next != NULL)
            *next++ = '\0';
        eq = strrchr(ctx, '=');
        if (eq == NULL)
            return -1;
        *eq = '\0';
        ns = strtoull(eq + 1, NULL, 10);
        for (char *s = ctx, *semi; depth < 64; s = semi + 1) {
            names[depth++] = s;
            semi = strchr(s, ';');
            if (semi == NULL)
                break;
            *semi = '\0';
        }
        if (k == NULL)
            k = harness_runfile_key(f, node, phase, names[depth - 1]);
        for (uint64_t d = 0; d < 5; d++)
            harness_runfile_add_path(f, k, names, depth, ns + d - 2,
                                     (ns + d - 2) / 2);
    }
    harness_runfile_put(f, k);
    return 0;
}

int main(int argc, char **argv)
{
    Hostrange__RunHeader h = HOSTRANGE__RUN_HEADER__INIT;
    Hostrange__RunFingerprint fp = HOSTRANGE__RUN_FINGERPRINT__INIT;
    Hostrange__RunMeta meta[16], *mp[16];
    struct harness_runfile f;
    const char *out = NULL, *keys[256];
    char kinds[256];
    size_t nkeys = 0, bulk = 0;
    uint64_t value = 1000;
    int c;

    fp.host = "hostA";
    fp.cpu_model = "Test CPU 3000";
    fp.cores = 4;
    fp.kernel = "Linux 6.1.0";
    fp.clock_path = "fast";
    fp.version = PACKAGE_VERSION;
    h.fingerprint = &fp;
    h.meta = mp;
    h.time_ns = 1700000000000000000ull;
    while ((c = getopt(argc, argv, "o:i:H:C:N:M:m:k:c:p:P:K:v:")) != -1) {
        if (c == 'o') {
            out = optarg;
        } else if (c == 'i') {
            h.id = optarg;
        } else if (c == 'H') {
            fp.host = optarg;
        } else if (c == 'C') {
            fp.cpu_model = optarg;
        } else if (c == 'N') {
            fp.kernel = optarg;
        } else if (c == 'M') {
            fp.machine = optarg;
        } else if (c == 'm' && h.n_meta < 16) {
            char *eq = strchr(optarg, '=');

            if (eq == NULL)
                return 2;
            *eq = '\0';
            hostrange__run_meta__init(&meta[h.n_meta]);
            meta[h.n_meta].key = optarg;
            meta[h.n_meta].value = eq + 1;
            mp[h.n_meta] = &meta[h.n_meta];
            h.n_meta++;
        } else if (strchr("kcpP", c) != NULL && nkeys < 256) {
            kinds[nkeys] = (char)c;
            keys[nkeys++] = optarg;
        } else if (c == 'K') {
            bulk = strtoul(optarg, NULL, 10);
        } else if (c == 'v') {
            value = strtoull(optarg, NULL, 10);
        } else {
            return 2;
        }
    }
    if (out == NULL)
        return 2;
    h.host = fp.host;
    harness_runfile_create_header(&f, out, 1, &h);
    for (size_t i = 0; i < nkeys; i++) {
        char *k = strdup(keys[i]), *eq = strrchr(k, '='), *slash;

        slash = eq != NULL ? strchr(k, '/') : NULL;
        if (slash == NULL || slash > eq)
            return 2;
        *slash = '\0';
        if (kinds[i] == 'p' || kinds[i] == 'P') {
            if (path_key(&f, k, kinds[i] == 'P' ? 1 : 2, slash + 1) != 0)
                return 2;
        } else {
            *eq = '\0';
            key(&f, k, kinds[i] == 'c' ? 1 : 2, slash + 1,
                strtoull(eq + 1, NULL, 10));
        }
        free(k);
    }
    for (size_t i = 0; i < bulk; i++) {
        char r[32];

        snprintf(r, sizeof r, "k%zu", i);
        key(&f, "bulk", 2, r, value);
    }
    harness_runfile_commit(&f);
    hra_fini(&f.a);
    return 0;
}
