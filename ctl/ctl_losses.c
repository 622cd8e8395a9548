/*
 * What a session lost, said in one line (see ctl_losses.h): the events clients
 * lost and the batches the daemon refused, by reason; the scopes of
 * refused names and the windows of refused labels; contexts kept under
 * "(contexts full)"; and one line per client that ended without its final
 * counters and no longer runs. record prints it on stderr; so does
 * `stats --losses`, for the pytest plugin.
 */
#include "config.h"

#include "ctl/ctl_conn.h"
#include "ctl/ctl_losses.h"
#include "lib/view/escape.h"
#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

/* Appends ", " then the formatted text to buf (of len bytes). */
#define ADD(...)                                                              \
    do {                                                                      \
        size_t u_ = strlen(buf);                                              \
        if (u_ < sizeof buf)                                                  \
            snprintf(buf + u_, sizeof buf - u_, "%s", u_ ? "; " : "");        \
        u_ = strlen(buf);                                                     \
        if (u_ < sizeof buf)                                                  \
            snprintf(buf + u_, sizeof buf - u_, __VA_ARGS__);                 \
    } while (0)

/* 1 when process pid still runs (the daemon's clients are on this host):
 * it may yet send its final counters, as the asking process itself will. */
static int running(uint32_t pid)
{
    return pid != 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

static const char *plural(uint64_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

int hrc_losses_say(const Hostrange__StatsReply *s, FILE *out)
{
    uint64_t lost = 0, bad_name = 0, bad_label = 0, full = 0, batches = 0;
    uint64_t cut = 0;
    char buf[1024] = "", why[512] = "";
    int any = 0;

    for (size_t i = 0; i < s->n_clients; i++) {
        const Hostrange__ClientStats *c = s->clients[i];

        lost += c->lost_events;
        bad_name += c->errors_bad_name;
        bad_label += c->errors_bad_label;
        full += c->contexts_full;
        cut += c->names_cut;
    }
    for (size_t i = 0; i < s->n_rejections; i++) {
        const Hostrange__Counter *r = s->rejections[i];
        size_t u = strlen(why);

        /* Requests of hostrangectl are no one's samples. */
        if (r->value == 0 || strcmp(r->name, "control") == 0)
            continue;
        batches += r->value;
        snprintf(why + u, sizeof why - u, "%s%llu %s", u ? ", " : "",
                 (unsigned long long)r->value, r->name);
    }
    if (lost != 0 || batches != 0) {
        ADD("%llu %s lost", (unsigned long long)lost,
            plural(lost, "event", "events"));
        if (batches != 0) {
            size_t u = strlen(buf);
            snprintf(buf + u, sizeof buf - u, " (%llu %s refused: %s%s)",
                     (unsigned long long)batches,
                     plural(batches, "batch", "batches"), why,
                     s->refused_memory_events != 0
                         ? "; hostranged --max-memory" : "");
        }
    }
    if (bad_name != 0)
        ADD("%llu %s of range names empty or over %u bytes not collected",
            (unsigned long long)bad_name, plural(bad_name, "scope", "scopes"),
            HRP_MAX_STRING);
    if (bad_label != 0)
        ADD("%llu %s of refused labels not collected",
            (unsigned long long)bad_label,
            plural(bad_label, "window", "windows"));
    if (full != 0)
        ADD("%llu calling %s kept under (contexts full)",
            (unsigned long long)full, plural(full, "context", "contexts"));
    if (cut != 0)
        ADD("%llu %s cut to %u bytes", (unsigned long long)cut,
            plural(cut, "name", "names"), HRP_MAX_STRING);
    if (buf[0] != '\0') {
        fprintf(out, "hostrange: %s\n", buf);
        any = lost != 0 || batches != 0 || bad_name != 0 || bad_label != 0;
    }
    for (size_t i = 0; i < s->n_clients; i++) {
        const Hostrange__ClientStats *c = s->clients[i];

        if (!c->unfinished || running(c->pid))
            continue;
        /* Names as the terminal's text rule writes them: a node id may
         * hold any byte but NUL. */
        fprintf(out, "hostrange: process %u (", c->pid);
        hrv_text_put(out, c->process_label);
        fputs(") ended without its final counters (killed or crashed): "
              "its last events may be missing; node ids:", out);
        for (size_t j = 0; j < c->n_node_ids; j++) {
            fputs(j ? ", " : " ", out);
            hrv_text_put(out, c->node_ids[j]);
        }
        fputs(c->n_node_ids ? "\n" : " none\n", out);
        any = 1;
    }
    return any;
}

int hrc_losses(FILE *out)
{
    Hostrange__ControlRequest q = HOSTRANGE__CONTROL_REQUEST__INIT;
    Hostrange__StatsRequest sq = HOSTRANGE__STATS_REQUEST__INIT;
    Hostrange__ControlReply *rep;
    int any;

    q.body_case = HOSTRANGE__CONTROL_REQUEST__BODY_STATS;
    q.stats = &sq;
    if (hrc_ask(&q, &rep, 0) != 0)
        return -1;
    if (rep->body_case != HOSTRANGE__CONTROL_REPLY__BODY_STATS ||
        rep->stats == NULL) {
        fprintf(stderr, "hostrangectl: hostranged at %s sent no stats\n",
                hrc_dir);
        hostrange__control_reply__free_unpacked(rep, NULL);
        return -1;
    }
    any = hrc_losses_say(rep->stats, out);
    hostrange__control_reply__free_unpacked(rep, NULL);
    return any;
}
