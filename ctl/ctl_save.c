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

int hrc_meta_add(const char *cmd, const char *arg,
                     struct hrr_meta *meta)
{
    const char *eq = strchr(arg, '=');

    if (eq == NULL || eq == arg) {
        fprintf(stderr, "hostrangectl %s: bad --meta '%s' (KEY=VALUE)\n", cmd,
                arg);
        exit(2);
    }
    if (hrr_meta_add(meta, arg, (size_t)(eq - arg), eq + 1) != 0) {
        fprintf(stderr, "hostrangectl %s: out of memory\n", cmd);
        exit(1);
    }
    return 0;
}

/* The save's progress on a terminal, and the command that saves (in its
 * messages). */
static struct hrc_progress progress;
static const char *save_cmd = "save";

/* One page of a save, asked for with q and written to w: its packed keys
 * straight from the reply's bytes. Returns 0, either with the cursor of
 * the next page set in q (its bytes in cursor) or, after the last page,
 * with *last set (w committed; the keys written in *saved); or
 * HRC_TOLD after printing why (w aborted). */
static int save_page(Hostrange__ControlRequest *q, uint8_t *cursor,
                     struct hrr_writer *w, const char *output,
                     uint64_t *saved, int *last)
{
    Hostrange__ControlReply *top = NULL;
    struct hrr_span *save = NULL, *keys = NULL;
    size_t nsave = 0, capsave = 0, nkeys = 0, capkeys = 0, toplen, slen = 0;
    uint8_t *toprest = NULL, *srest = NULL;
    void *msg = NULL;
    size_t n, cursor_len = 0;
    char err[8400];
    int rc = HRC_TOLD, bad = 0;

    if (hrc_request_msg(q, &msg, &n, hrc_timeout_ms, err,
                            sizeof err) != 0) {
        hrc_progress_end(&progress);
        fprintf(stderr, "hostrangectl %s: %s; %s not written\n", save_cmd,
                err, output);
        hrr_abort(w);
        return HRC_TOLD;
    }
    /* ControlReply: its save apart; in the save, its packed keys
     * apart. */
    if (hrr_runsave_split(msg, n, HRR_CONTROLREPLY_SAVE, &save, &nsave,
                          &capsave, &toprest, &toplen) != 0 ||
        nsave > 1 ||
        (nsave == 1 && hrr_runsave_split(save[0].p, save[0].len,
                                         HRR_SAVEREPLY_PACKED_KEYS, &keys,
                                         &nkeys, &capkeys, &srest,
                                         &slen) != 0))
        bad = 1;
    else
        top = hostrange__control_reply__unpack(NULL, toplen, toprest);
    if (bad || hrc_reply_check(&top, err, sizeof err) != 0) {
        if (bad)
            snprintf(err, sizeof err, "hostranged at %s sent a reply that "
                     "cannot be decoded", hrc_dir);
        hrc_progress_end(&progress);
        fprintf(stderr, "hostrangectl %s: %s; %s not written\n", save_cmd,
                err, output);
        top = NULL;
        hrr_abort(w);
        goto out;
    }
    rc = hrr_runsave_page(w, output, keys, nkeys,
                          nsave == 1 ? srest : NULL, slen, cursor,
                          &cursor_len, saved, last, err, sizeof err);
    if (rc == HRR_RUNSAVE_NO_RUN) {
        hrc_progress_end(&progress);
        fprintf(stderr, "hostrangectl %s: hostranged at %s sent no run; "
                "%s not written\n", save_cmd, hrc_dir, output);
        rc = HRC_TOLD;
        goto out;
    }
    if (rc != 0) {
        hrc_progress_end(&progress);
        fprintf(stderr, "hostrangectl %s: %s\n", save_cmd, err);
        rc = HRC_TOLD;
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

int hrc_save_run(const char *cmd, const char *output, unsigned format,
                     const struct hrr_meta *meta, FILE *note)
{
    Hostrange__ControlRequest q = HOSTRANGE__CONTROL_REQUEST__INIT;
    Hostrange__SaveRequest sq = HOSTRANGE__SAVE_REQUEST__INIT;
    struct hrr_writer w;
    uint8_t cursor[16];
    struct hrr_fingerprint fp;
    char err[8400], id[HRR_RUNID_LEN + 1];
    int rc;

    hrc_fingerprint(&fp);
    if ((rc = hrr_runid_new(id)) != 0) {
        fprintf(stderr, "hostrangectl %s: no random bytes for the run's id: "
                "%s; %s not written\n", cmd, strerror(-rc), output);
        return HRC_TOLD;
    }
    if (hrr_runsave_create(&w, output, format, meta, &fp, id, err,
                           sizeof err) != 0) {
        fprintf(stderr, "hostrangectl %s: %s\n", cmd, err);
        return HRC_TOLD;
    }
    q.version = HRP_VERSION;
    q.body_case = HOSTRANGE__CONTROL_REQUEST__BODY_SAVE;
    q.save = &sq;
    sq.packed = 1;
    sq.format = format;
    save_cmd = cmd;
    hrc_progress_init(&progress);
    for (;;) {
        uint64_t saved = 0;
        int last = 0;

        if (save_page(&q, cursor, &w, output, &saved, &last) != 0)
            return HRC_TOLD;
        hrc_progress_show(&progress, w.bytes, last,
                              "%s: %s, %llu keys, %llu MiB", cmd, output,
                              (unsigned long long)(last ? saved : w.keys),
                              (unsigned long long)(w.bytes >> 20));
        if (last) {
            hrc_progress_end(&progress);
            if (note != NULL)
                fprintf(note, "saved %llu keys to %s\n",
                        (unsigned long long)saved, output);
            return 0;
        }
    }
}

int hrc_save(int argc, char **argv)
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
    struct hrr_meta meta = { 0 };
    const char *output = NULL, *machine = NULL;
    unsigned format = HRR_FORMAT_SORTED;
    int c, rc;

    while ((c = getopt_long(argc, argv, ":o:m:h", longopts, NULL)) != -1) {
        if (c == 'o') {
            output = optarg;
        } else if (c == OPT_UNSORTED) {
            format = HRR_FORMAT_EVENTS;
        } else if (c == 'm') {
            hrc_meta_add("save", optarg, &meta);
        } else if (c == OPT_MACHINE) {
            machine = optarg;
        } else if (c == 'h') {
            fputs(usage_save, stdout);
            return 0;
        } else {
            hrc_die_usage("save", c, argv[optind - 1]);
        }
    }
    if (optind < argc) {
        fprintf(stderr, "hostrangectl save: unexpected argument '%s' (see "
                "--help)\n", argv[optind]);
        return HRC_EXIT_USAGE;
    }
    if (output == NULL || output[0] == '\0') {
        fprintf(stderr, "hostrangectl save: no output file (-o FILE; see "
                "--help)\n");
        return HRC_EXIT_USAGE;
    }
    hrc_machine_option("save", machine);
    rc = hrc_save_run("save", output, format, &meta, stdout);
    hrr_meta_fini(&meta);
    return rc == 0 ? 0 : 1;
}

const struct hrc_cmd hrc_cmd_save = {
    "save",
    "save what the daemon holds as a run file (.hrs)",
    usage_save,
    hrc_save,
};
