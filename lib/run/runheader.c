/* What a run's header and end say of it: its machine, a line describing
 * it, its rounds (see runheader.h). */
#include "config.h"

#include "lib/run/runheader.h"
#include "lib/run/fingerprint.h"
#include "proto/protocol.h"

#include <stdio.h>
#include <string.h>

int hrr_machine_unknown(const Hostrange__RunHeader *h)
{
    if (h->fingerprint != NULL)
        return HRR_MACHINE_KNOWN;
    return h->n_sources > 1 ? HRR_MACHINE_MIXED : HRR_MACHINE_NONE;
}

void hrr_describe(const Hostrange__RunHeader *h, char *buf, size_t len)
{
    size_t at;

    if (h->fingerprint != NULL)
        hrr_fingerprint_format(h->fingerprint, buf, len);
    else if (hrr_machine_unknown(h) == HRR_MACHINE_MIXED)
        snprintf(buf, len, "a merge of %zu runs from different machines",
                 h->n_sources);
    else
        snprintf(buf, len, "%s: no machine fingerprint (hostrange %s)",
                 h->host, h->version);
    for (size_t i = 0; i < h->n_meta; i++) {
        at = strlen(buf);
        if (at + 1 < len)
            snprintf(buf + at, len - at, "%s%s=%s", i == 0 ? "; " : ", ",
                     h->meta[i]->key, h->meta[i]->value);
    }
}

size_t hrr_machines_diff(const Hostrange__RunHeader *b,
                             const Hostrange__RunHeader *n, char *why,
                             size_t len)
{
    return hrr_fingerprint_diff(b->fingerprint, n->fingerprint, why, len);
}

const char *hrr_machines_differ(const Hostrange__RunHeader *b,
                                    const Hostrange__RunHeader *n, char *why,
                                    size_t len)
{
    if (b->fingerprint == NULL || n->fingerprint == NULL) {
        snprintf(why, len, "the machine of the %s run is unknown",
                 b->fingerprint == NULL ? "base" : "new");
        return why;
    }
    return hrr_machines_diff(b, n, why, len) == 0 ? NULL : why;
}

unsigned hrr_rounds(const Hostrange__RunEnd *e)
{
    return e->rounds > 1 ? e->rounds : 1;
}

unsigned hrr_clock_paths(const Hostrange__RunEnd *e)
{
    unsigned paths = 0;

    for (size_t i = 0; i < e->n_clients; i++) {
        unsigned p = hrp_clock_paths_parse(e->clients[i]->clock_path);

        if (p == 0)
            return 0;
        paths |= p;
    }
    return paths;
}

Hostrange__Calibration *const *hrr_calibrations(const Hostrange__RunEnd *e,
                                                    size_t *n)
{
    *n = e->n_calibrations;
    return e->calibrations;
}

void hrr_end_free(Hostrange__RunEnd *e)
{
    if (e != NULL)
        hostrange__run_end__free_unpacked(e, NULL);
}
