/* hostrangectl save: the daemon's run to a .hrs file (see ctl_save.h, run.h). */
#include "config.h"

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_conn.h"
#include "ctl/ctl_fingerprint.h"
#include "ctl/ctl_options.h"
#include "ctl/ctl_save.h"
#include "ctl/ctl_exit.h"
#include "lib/run/run.h"
#include "lib/run/runfields.h"
#include "lib/run/runid.h"
#include "lib/run/runsave.h"
#include "proto/protocol.h"

#include <errno.h>
#include <getopt.h>
#include <nanomsg/nn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage_save[] =
    "Usage: hostrangectl save -o FILE [--unsorted] [--meta KEY=VALUE]...\n"
    "                        [--machine NAME]\n"
    "Save what the daemon holds as a run file (.hrs): every key with its\n"
    "exact samples (or its histograms, where the daemon keeps one), the\n"
    "lost counts, the clients' counters, the calibrations, and where the\n"
    "run comes from (host, time, the clocks used, and the machine's\n"
    "fingerprint: host name, CPU model, cores, clock path and step, kernel,\n"
    "hostrange version and the machine's name, if given; diff compares the\n"
    "name, else the CPU and cores, and the clock). The file is versioned,\n"
    "checksummed and compact; it is written to a temporary file, synced and\n"
    "renamed, so FILE is complete or untouched. The daemon sends the run in\n"
    "pages, so a large one does not hold up the samples arriving.\n"
    "\n"
    "  -o, --output=FILE      the run file to write (required)\n"
    "      --unsorted         keep exact samples as the daemon holds them, in\n"
    "                         the order they came (run format 2): faster to\n"
    "                         save, and to merge where runs share keys, but\n"
    "                         larger and slower to diff (README: the\n"
    "                         figures); default: each key's values sorted\n"
    "                         and delta-coded (format 1)\n"
    "  -m, --meta=KEY=VALUE   note KEY=VALUE in the file (a commit id, a\n"
    "                         branch...); may be given many times\n"
    "      --machine=NAME     the machine's name (default $HOSTRANGE_MACHINE):\n"
    "                         runs of one name are compared with each other,\n"
    "                         whatever their host, CPU or kernel (a pool of CI\n"
    "                         runners); without one, the machine is the CPU\n"
    "                         model, cores and clock path\n"
    "  -h, --help             show this help and exit\n"
    "\n"
    "On a terminal, progress is shown on stderr.\n";

int hrd_ctl_meta_add(const char *cmd, const char *arg,
                     struct hrd_run_meta *meta)
{
    const char *eq = strchr(arg, '=');

    if (eq == NULL || eq == arg) {
        fprintf(stderr, "hostrangectl %s: bad --meta '%s' (KEY=VALUE)\n", cmd,
                arg);
        exit(2);
    }
    if (hrd_run_meta_add(meta, arg, (size_t)(eq - arg), eq + 1) != 0) {
        fprintf(stderr, "hostrangectl %s: out of memory\n", cmd);
        exit(1);
    }
    return 0;
}

/* The save's progress on a terminal, and the command that saves (in its
 * messages). */
static struct hrd_ctl_progress progress;
static const char *save_cmd = "save";

/* One page of a save, asked for with q and written to w: its packed keys
 * straight from the reply's bytes. Returns 0, either with the cursor of
 * the next page set in q (its bytes in cursor) or, after the last page,
 * with *last set (w committed; the keys written in *saved); or
 * HRD_CTL_TOLD after printing why (w aborted). */
static int save_page(Hostrange__ControlRequest *q, uint8_t *cursor,
                     struct hrd_run_writer *w, const char *output,
                     uint64_t *saved, int *last)
{
    Hostrange__ControlReply *top = NULL;
    struct hrd_span *save = NULL, *keys = NULL;
    size_t nsave = 0, capsave = 0, nkeys = 0, capkeys = 0, toplen, slen = 0;
    uint8_t *toprest = NULL, *srest = NULL;
    void *msg = NULL;
    size_t n, cursor_len = 0;
    char err[8400];
    int rc = HRD_CTL_TOLD, bad = 0;

    if (hrd_ctl_request_msg(q, &msg, &n, hrd_ctl_timeout_ms, err,
                            sizeof err) != 0) {
        hrd_ctl_progress_end(&progress);
        fprintf(stderr, "hostrangectl %s: %s; %s not written\n", save_cmd,
                err, output);
        hrd_run_abort(w);
        return HRD_CTL_TOLD;
    }
    /* ControlReply: its save apart; in the save, its packed keys
     * apart. */
    if (hrd_runsave_split(msg, n, HRD_CONTROLREPLY_SAVE, &save, &nsave,
                          &capsave, &toprest, &toplen) != 0 ||
        nsave > 1 ||
        (nsave == 1 && hrd_runsave_split(save[0].p, save[0].len,
                                         HRD_SAVEREPLY_PACKED_KEYS, &keys,
                                         &nkeys, &capkeys, &srest,
                                         &slen) != 0))
        bad = 1;
    else
        top = hostrange__control_reply__unpack(NULL, toplen, toprest);
    if (bad || hrd_ctl_reply_check(&top, err, sizeof err) != 0) {
        if (bad)
            snprintf(err, sizeof err, "hostranged at %s sent a reply that "
                     "cannot be decoded", hrd_ctl_dir);
        hrd_ctl_progress_end(&progress);
        fprintf(stderr, "hostrangectl %s: %s; %s not written\n", save_cmd,
                err, output);
        top = NULL;
        hrd_run_abort(w);
        goto out;
    }
    rc = hrd_runsave_page(w, output, keys, nkeys,
                          nsave == 1 ? srest : NULL, slen, cursor,
                          &cursor_len, saved, last, err, sizeof err);
    if (rc == HRD_RUNSAVE_NO_RUN) {
        hrd_ctl_progress_end(&progress);
        fprintf(stderr, "hostrangectl %s: hostranged at %s sent no run; "
                "%s not written\n", save_cmd, hrd_ctl_dir, output);
        rc = HRD_CTL_TOLD;
        goto out;
    }
    if (rc != 0) {
        hrd_ctl_progress_end(&progress);
        fprintf(stderr, "hostrangectl %s: %s\n", save_cmd, err);
        rc = HRD_CTL_TOLD;
        goto out;
    }
    if (!*last) {
        q->save->cursor.data = cursor;
        q->save->cursor.len = cursor_len;
    }
out:
    if (top != NULL)
        hostrange__control_reply__free_unpacked(top, NULL);
    free(toprest);
    free(srest);
    free(save);
    free(keys);
    nn_freemsg(msg);
    return rc;
}

int hrd_ctl_save_run(const char *cmd, const char *output, unsigned format,
                     const struct hrd_run_meta *meta, FILE *note)
{
    Hostrange__ControlRequest q = HOSTRANGE__CONTROL_REQUEST__INIT;
    Hostrange__SaveRequest sq = HOSTRANGE__SAVE_REQUEST__INIT;
    struct hrd_run_writer w;
    uint8_t cursor[16];
    struct hrd_fingerprint fp;
    char err[8400], id[HRD_RUNID_LEN + 1];
    int rc;

    hrd_ctl_fingerprint(&fp);
    if ((rc = hrd_runid_new(id)) != 0) {
        fprintf(stderr, "hostrangectl %s: no random bytes for the run's id: "
                "%s; %s not written\n", cmd, strerror(-rc), output);
        return HRD_CTL_TOLD;
    }
    if (hrd_runsave_create(&w, output, format, meta, &fp, id, err,
                           sizeof err) != 0) {
        fprintf(stderr, "hostrangectl %s: %s\n", cmd, err);
        return HRD_CTL_TOLD;
    }
    q.version = HRP_VERSION;
    q.body_case = HOSTRANGE__CONTROL_REQUEST__BODY_SAVE;
    q.save = &sq;
    sq.packed = 1;
    sq.format = format;
    save_cmd = cmd;
    hrd_ctl_progress_init(&progress);
    for (;;) {
        uint64_t saved = 0;
        int last = 0;

        if (save_page(&q, cursor, &w, output, &saved, &last) != 0)
            return HRD_CTL_TOLD;
        hrd_ctl_progress_show(&progress, w.bytes, last,
                              "%s: %s, %llu keys, %llu MiB", cmd, output,
                              (unsigned long long)(last ? saved : w.keys),
                              (unsigned long long)(w.bytes >> 20));
        if (last) {
            hrd_ctl_progress_end(&progress);
            if (note != NULL)
                fprintf(note, "saved %llu keys to %s\n",
                        (unsigned long long)saved, output);
            return 0;
        }
    }
}

int hrd_ctl_save(int argc, char **argv)
{
    enum { OPT_UNSORTED = 256, OPT_MACHINE };
    static const struct option longopts[] = {
        { "output", required_argument, NULL, 'o' },
        { "unsorted", no_argument, NULL, OPT_UNSORTED },
        { "meta", required_argument, NULL, 'm' },
        { "machine", required_argument, NULL, OPT_MACHINE },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct hrd_run_meta meta = { 0 };
    const char *output = NULL, *machine = NULL;
    unsigned format = HRD_RUN_FORMAT_SORTED;
    int c, rc;

    while ((c = getopt_long(argc, argv, ":o:m:h", longopts, NULL)) != -1) {
        if (c == 'o') {
            output = optarg;
        } else if (c == OPT_UNSORTED) {
            format = HRD_RUN_FORMAT_EVENTS;
        } else if (c == 'm') {
            hrd_ctl_meta_add("save", optarg, &meta);
        } else if (c == OPT_MACHINE) {
            machine = optarg;
        } else if (c == 'h') {
            fputs(usage_save, stdout);
            return 0;
        } else {
            hrd_ctl_die_usage("save", c, argv[optind - 1]);
        }
    }
    if (optind < argc) {
        fprintf(stderr, "hostrangectl save: unexpected argument '%s' (see "
                "--help)\n", argv[optind]);
        return HRD_CTL_EXIT_USAGE;
    }
    if (output == NULL || output[0] == '\0') {
        fprintf(stderr, "hostrangectl save: no output file (-o FILE; see "
                "--help)\n");
        return HRD_CTL_EXIT_USAGE;
    }
    hrd_ctl_machine_option("save", machine);
    rc = hrd_ctl_save_run("save", output, format, &meta, stdout);
    hrd_run_meta_fini(&meta);
    return rc == 0 ? 0 : 1;
}

const struct hrd_ctl_cmd hrd_ctl_cmd_save = {
    "save",
    "save what the daemon holds as a run file (.hrs)",
    usage_save,
    hrd_ctl_save,
};
