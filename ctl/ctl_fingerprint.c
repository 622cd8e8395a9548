/*
 * hostrangectl and machine fingerprints (fingerprint.h, ctl_fingerprint.h): the one a
 * saved run carries, and diff's comparison of two runs' machines.
 */
#include "config.h"

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_conn.h"
#include "ctl/ctl_fingerprint.h"
#include "ctl/ctl_diffside.h"
#include "lib/run/fingerprint.h"
#include "lib/run/runheader.h"
#include "lib/view/escape.h"
#include "proto/protocol.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hrc_fingerprint(struct hrr_fingerprint *fp)
{
    Hostrange__ControlRequest q = HOSTRANGE__CONTROL_REQUEST__INIT;
    Hostrange__StatsRequest sq = HOSTRANGE__STATS_REQUEST__INIT;
    Hostrange__ControlReply *rep;

    hrr_fingerprint_probe(fp);
    q.body_case = HOSTRANGE__CONTROL_REQUEST__BODY_STATS;
    q.stats = &sq;
    /* A daemon that does not answer is said so by the save itself. */
    if (hrc_ask(&q, &rep, 1) != 0)
        return;
    if (rep->body_case == HOSTRANGE__CONTROL_REPLY__BODY_STATS &&
        rep->stats != NULL)
        hrr_fingerprint_clients(fp, rep->stats->clients,
                                rep->stats->n_clients);
    /* The clients' texts are copied into fp; the reply can go. */
    hostrange__control_reply__free_unpacked(rep, NULL);
}

int hrc_machine_bad(const char *name, char *err, size_t len)
{
    const unsigned char *p = (const unsigned char *)name;
    size_t n = strlen(name);

    if (n == 0 || n > HRR_MACHINE_MAX) {
        snprintf(err, len, "a machine's name is 1 to %d bytes, not %zu",
                 HRR_MACHINE_MAX, n);
        return -EINVAL;
    }
    while (*p != '\0') {
        uint32_t cp;
        size_t k = hrv_utf8_decode(p, &cp);

        if (cp == 0xfffd && !(k == 3 && p[0] == 0xef && p[1] == 0xbf &&
                              p[2] == 0xbd)) {
            snprintf(err, len, "a machine's name is UTF-8: byte %zu is not",
                     (size_t)(p - (const unsigned char *)name) + 1);
            return -EINVAL;
        }
        if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) {
            snprintf(err, len, "a machine's name holds no control "
                     "character: byte %zu is one",
                     (size_t)(p - (const unsigned char *)name) + 1);
            return -EINVAL;
        }
        p += k;
    }
    return 0;
}

void hrc_machine_option(const char *cmd, const char *arg)
{
    const char *name = arg != NULL ? arg : getenv(HRR_MACHINE_ENV);
    char err[256];

    if (name == NULL || (arg == NULL && name[0] == '\0'))
        return;
    if (hrc_machine_bad(name, err, sizeof err) != 0) {
        /* The name itself is not written back: it may hold the very
         * control bytes refused. */
        fprintf(stderr, "hostrangectl %s: bad %s: %s\n", cmd,
                arg != NULL ? "--machine" : "$" HRR_MACHINE_ENV, err);
        exit(2);
    }
    if (arg != NULL && setenv(HRR_MACHINE_ENV, arg, 1) != 0) {
        fprintf(stderr, "hostrangectl %s: out of memory\n", cmd);
        exit(5);
    }
}

int hrc_diff_machines(const char *bpath, const struct hrr_diff_side *b,
                          const char *npath, const struct hrr_diff_side *n,
                          int strict)
{
    const char *what = strict ? "" : "warning: ";
    const char *tail = strict ? ": refused (--strict)" : "";
    char why[2048];

    for (int i = 0; i < 2; i++) {
        const struct hrr_diff_side *s = i == 0 ? b : n;
        const char *path = i == 0 ? bpath : npath;

        int unknown = hrr_machine_unknown(s->header);

        if (unknown == HRR_MACHINE_KNOWN)
            continue;
        fprintf(stderr, "hostrangectl diff: %s", what);
        hrv_text_put(stderr, path);
        if (unknown == HRR_MACHINE_MIXED)
            fprintf(stderr, " is a merge of runs from different machines"
                    "%s\n", tail);
        else
            fprintf(stderr, " has no machine fingerprint (saved by an older "
                    "hostrange): its machine is unknown%s\n", tail);
        return strict ? HRC_TOLD : 0;
    }
    if (hrr_machines_diff(b->header, n->header, why, sizeof why) == 0)
        return 0;
    fprintf(stderr, "hostrangectl diff: %sthe machine fingerprints of ",
            what);
    hrv_text_put(stderr, bpath);
    fputs(" and ", stderr);
    hrv_text_put(stderr, npath);
    fputs(" differ: ", stderr);
    hrv_text_put(stderr, why);
    fprintf(stderr, "%s\n", tail);
    return strict ? HRC_TOLD : 0;
}
