/* hostrangectl stats: the counters of the daemon and of its clients (see ctl_cmd.h). */
#include "config.h"

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_conn.h"
#include "ctl/ctl_losses.h"
#include "ctl/ctl_options.h"
#include "lib/agg/observer.h"
#include "lib/view/escape.h"
#include "lib/view/numfmt.h"
#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char usage_stats[] =
    "Usage: hostrangectl stats [--losses]\n"
    "Print the daemon's counters, one `name value` pair per line:\n"
    "  daemon.*    pid, uptime, keys, events held, memory of samples and its\n"
    "              limit, resident memory, the exact cap and the keys kept in\n"
    "              histograms, the clocks the clients use, batches answered\n"
    "              `retry`, clients_unfinished (clients whose batches never\n"
    "              carried their final counters: killed, crashed or still\n"
    "              running), refused_events (of batches refused for any\n"
    "              reason, counted lost under their node ids) and\n"
    "              refused_memory_events (those refused for the memory\n"
    "              budget, --max-memory)\n"
    "  paths.*     calling contexts: paths interned (count) and the table's\n"
    "              limit, the depth cap, keys per (labels, path), and range\n"
    "              samples kept per range name only because their context\n"
    "              was deeper than the cap (too_deep) or the table was full\n"
    "              (table_full)\n"
    "  state.*     the state directory: status (ok or degraded), journal and\n"
    "              snapshot counters, what the last start loaded\n"
    "  spool.*     the spool folder (what processes left while no daemon\n"
    "              answered): files taken, their batches and bytes, batches\n"
    "              ingested, duplicates (held already) and rejected,\n"
    "              rejected_files (damaged or foreign, set aside),\n"
    "              lost_events (of batches not taken, counted lost in the\n"
    "              report), files waiting\n"
    "  rejected.*  batches and requests refused, by reason\n"
    "  client.N.*  each client process: pid, label, clock, clock_path\n"
    "              (fast, waiting or ordered: HOSTRANGE_CLOCK),\n"
    "              clock_order (how its reads are ordered with the work),\n"
    "              clock_step_ns (the smallest step of its clock it\n"
    "              observed), batches, events,\n"
    "              duplicates dropped, gaps in sequence numbers, batches\n"
    "              rejected, lost events and its range errors by kind;\n"
    "              errors.bad_name (scopes of range names empty or over\n"
    "              4096 bytes, not collected), errors.bad_label (windows\n"
    "              not collected: their labels were refused),\n"
    "              contexts_full (calling contexts kept under `(contexts\n"
    "              full)`: the process's table was full), names_cut (NVTX\n"
    "              names cut to 4096 bytes), refused_events\n"
    "              (of its batches refused, counted lost), unfinished (1:\n"
    "              it sent no final counters: killed, crashed, or still\n"
    "              running; its last events may be missing), and node (its\n"
    "              first node ids, one a line)\n"
    "  calibration.LABEL.*\n"
    "              each calibration (hostrange-bench --calibrate), the most\n"
    "              recent first: clock, clock_path (the path it measured:\n"
    "              fast, waiting or ordered; a row is corrected only by a\n"
    "              calibration of its own path),\n"
    "              child_ns (the cost of one child scope to its parent),\n"
    "              residue_ns (the self time a parent gains per child),\n"
    "              empty_ns (the time inside an empty scope), bias_ns (what\n"
    "              a range's reads add to the work they time: empty_ns on\n"
    "              the ordered path; on the fast path, measured around\n"
    "              short work, a bound of what corrections leave\n"
    "              uncertain), timer_ns (one clock read), calls, the\n"
    "              standard errors child_err_ns,\n"
    "              residue_err_ns and empty_err_ns, and step_ns (the\n"
    "              clock's smallest step it saw)\n"
    "  node.*      the profiler's own work under each node id that had any,\n"
    "              as `node.NAME VALUE NODEID`: stalls and stall_ns (waits\n"
    "              of a thread for room in its buffer), wakes and wake_ns\n"
    "              (wake-ups of a shipper by a thread); never report rows\n"
    "\n"
    "      --losses  print only what the session lost or refused, as\n"
    "                hostrangectl record says it on stderr (nothing when\n"
    "                all is well)\n"
    "  -h, --help    show this help and exit\n";

static void print_state(const Hostrange__StateStats *st)
{
#define P(name, v) printf("state.%s %llu\n", name, (unsigned long long)(v))
    printf("state.dir %s\n", st->dir);
    printf("state.status %s\n", st->status);
    if (st->last_error[0] != '\0')
        printf("state.last_error %s\n", st->last_error);
    P("journal_bytes", st->journal_bytes);
    P("journal_records", st->journal_records);
    P("snapshots", st->snapshots);
    P("write_errors", st->write_errors);
    P("loaded_keys", st->loaded_keys);
    P("loaded_clients", st->loaded_clients);
    P("replayed_records", st->replayed_records);
    P("load_problems", st->load_problems);
#undef P
}

static void print_spool(const Hostrange__SpoolStats *sp)
{
#define P(name, v) printf("spool.%s %llu\n", name, (unsigned long long)(v))
    printf("spool.dir %s\n", sp->dir);
    P("files", sp->files);
    P("batches", sp->batches);
    P("bytes", sp->bytes);
    P("ingested", sp->ingested);
    P("duplicates", sp->duplicates);
    P("rejected", sp->rejected);
    P("rejected_files", sp->rejected_files);
    P("lost_events", sp->lost_events);
    P("waiting", sp->waiting);
#undef P
}

/* A name of a client (its label, a node id: any byte but NUL) as the
 * terminal's text rule writes it, so that each stays on its line, and a
 * newline. */
static void put_name(const char *s)
{
    hrv_text_put(stdout, s);
    putchar('\n');
}

static void print_client(size_t i, const Hostrange__ClientStats *c)
{
#define P(name, v) printf("client.%zu.%s %llu\n", i, name, \
                          (unsigned long long)(v))
    P("pid", c->pid);
    printf("client.%zu.label ", i);
    put_name(c->process_label);
    printf("client.%zu.clock %s\n", i, c->clock);
    printf("client.%zu.clock_path %s\n", i,
           c->clock_path[0] != '\0' ? c->clock_path : "unknown");
    printf("client.%zu.clock_order %s\n", i,
           c->clock_order[0] != '\0' ? c->clock_order : "unknown");
    printf("client.%zu.clock_step_ns %.3g\n", i, c->clock_step_ns);
    P("batches", c->batches);
    P("events", c->events);
    P("duplicates", c->duplicates);
    P("gaps", c->gaps);
    P("rejected", c->rejected);
    P("lost_events", c->lost_events);
    P("errors.out_of_order", c->errors_out_of_order);
    P("errors.open_at_window_end", c->errors_open_at_window_end);
    P("errors.foreign_thread", c->errors_foreign_thread);
    P("errors.label_in_window", c->errors_label_in_window);
    P("errors.too_deep", c->errors_too_deep);
    P("errors.bad_name", c->errors_bad_name);
    P("errors.bad_label", c->errors_bad_label);
    P("contexts_full", c->contexts_full);
    P("names_cut", c->names_cut);
    P("refused_events", c->refused_events);
    P("unfinished", c->unfinished);
    P("marks", c->marks);
#undef P
    /* Last: a node id may hold spaces. */
    for (size_t j = 0; j < c->n_node_ids; j++) {
        printf("client.%zu.node ", i);
        put_name(c->node_ids[j]);
    }
}

/* Writes `name number` with the number in the report's style. */
static void print_number(const char *label, const char *name, double v)
{
    char buf[32];

    if (hrv_format_number(buf, sizeof buf, v) < 0)
        snprintf(buf, sizeof buf, "%g", v);
    printf("calibration.%s.%s %s\n", label, name, buf);
}

static void print_calibration(const Hostrange__Calibration *c)
{
    struct hra_calib cal;

    hra_calib_from_message(&cal, c);
    printf("calibration.%s.clock %s\n", c->label, c->clock);
    printf("calibration.%s.clock_path %s\n", c->label,
           c->clock_path[0] != '\0' ? c->clock_path : "unknown");
    print_number(c->label, "child_ns", c->child_ns);
    print_number(c->label, "residue_ns", c->residue_ns);
    print_number(c->label, "empty_ns", c->empty_ns);
    print_number(c->label, "bias_ns", hra_calib_bias(&cal));
    print_number(c->label, "timer_ns", c->timer_ns);
    printf("calibration.%s.calls %llu\n", c->label,
           (unsigned long long)c->calls);
    print_number(c->label, "child_err_ns", c->child_err_ns);
    print_number(c->label, "residue_err_ns", c->residue_err_ns);
    print_number(c->label, "empty_err_ns", c->empty_err_ns);
    print_number(c->label, "step_ns", c->step_ns);
}

static int run_stats(int argc, char **argv)
{
    Hostrange__ControlRequest q = HOSTRANGE__CONTROL_REQUEST__INIT;
    Hostrange__StatsRequest sq = HOSTRANGE__STATS_REQUEST__INIT;
    Hostrange__ControlReply *rep;
    const Hostrange__StatsReply *s;

    if (argc == 2 && strcmp(argv[1], "--losses") == 0)
        return hrc_losses(stdout) < 0 || fflush(stdout) != 0;
    hrc_no_options("stats", usage_stats, argc, argv);
    q.body_case = HOSTRANGE__CONTROL_REQUEST__BODY_STATS;
    q.stats = &sq;
    if (hrc_ask(&q, &rep, 0) != 0)
        return 1;
    s = rep->stats;
    if (rep->body_case != HOSTRANGE__CONTROL_REPLY__BODY_STATS || s == NULL) {
        fprintf(stderr, "hostrangectl: hostranged at %s sent no stats\n",
                hrc_dir);
        hostrange__control_reply__free_unpacked(rep, NULL);
        return 1;
    }
#define P(name, v) printf("daemon.%s %llu\n", name, (unsigned long long)(v))
    P("pid", s->daemon_pid);
    printf("daemon.uptime_s %.3f\n", (double)s->uptime_ns / 1e9);
    P("keys", s->keys);
    P("events", s->events);
    P("memory_bytes", s->memory_bytes);
    P("memory_limit_bytes", s->memory_limit);
    P("rss_bytes", s->rss_bytes);
    P("exact_cap", s->exact_cap);
    P("histogram_keys", s->histogram_keys);
    P("keys_capped", s->keys_capped);
    P("keys_compacted", s->keys_compacted);
    P("over_budget", s->over_budget);
    P("retries", s->retries);
    P("clients", s->n_clients);
    {
        size_t unfinished = 0;

        for (size_t i = 0; i < s->n_clients; i++)
            unfinished += s->clients[i]->unfinished;
        P("clients_unfinished", unfinished);
    }
    P("refused_events", s->refused_events);
    P("refused_memory_events", s->refused_memory_events);
#undef P
    fputs("daemon.clock ", stdout);
    for (size_t i = 0; i < s->n_clocks; i++)
        printf("%s%s", i ? "," : "", s->clocks[i]);
    puts(s->n_clocks ? "" : "none");
#define P(name, v) printf("paths.%s %llu\n", name, (unsigned long long)(v))
    P("count", s->paths);
    P("limit", s->path_limit);
    P("depth_limit", s->path_depth_limit);
    P("keys", s->path_keys);
    P("too_deep", s->paths_too_deep);
    P("table_full", s->paths_table_full);
#undef P
    if (s->state != NULL)
        print_state(s->state);
    if (s->spool != NULL)
        print_spool(s->spool);
    for (size_t i = 0; i < s->n_rejections; i++)
        printf("rejected.%s %llu\n", s->rejections[i]->name,
               (unsigned long long)s->rejections[i]->value);
    for (size_t i = 0; i < s->n_clients; i++)
        print_client(i + 1, s->clients[i]);
    for (size_t i = 0; i < s->n_calibrations; i++)
        print_calibration(s->calibrations[i]);
    /* The profiler's own work, per node id (last on the line: it may hold
     * spaces). */
    for (size_t i = 0; i < s->n_internal; i++) {
        const Hostrange__NodeInternal *w = s->internal[i];
        printf("node.stalls %llu %s\n", (unsigned long long)w->stalls,
               w->node_id);
        printf("node.stall_ns %llu %s\n", (unsigned long long)w->stall_ns,
               w->node_id);
        printf("node.wakes %llu %s\n", (unsigned long long)w->wakes,
               w->node_id);
        printf("node.wake_ns %llu %s\n", (unsigned long long)w->wake_ns,
               w->node_id);
    }
    hostrange__control_reply__free_unpacked(rep, NULL);
    return fflush(stdout) == 0 ? 0 : 1;
}

const struct hrc_cmd hrc_cmd_stats = {
    "stats",
    "print the daemon's counters and those of every client",
    usage_stats,
    run_stats,
};
