/* hostrangectl save: the daemon's run to a .hrs file (see ctl.h, run.h). */
#include "config.h"

#include "daemon/ctl.h"
#include "daemon/run.h"
#include "proto/protocol.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage_save[] =
    "Usage: hostrangectl save -o FILE [--unsorted] [--meta KEY=VALUE]...\n"
    "Save what the daemon holds as a run file (.hrs): every key with its\n"
    "exact samples (or its histograms, where the daemon keeps one), the\n"
    "lost counts, the clients' counters, the calibrations, and where the\n"
    "run comes from (host, time, the clocks used). The file is versioned,\n"
    "checksummed and compact; it is written to a temporary file, synced and\n"
    "renamed, so FILE is complete or untouched. The daemon sends the run in\n"
    "pages, so a large one does not hold up the samples arriving.\n"
    "\n"
    "  -o, --output=FILE      the run file to write (required)\n"
    "      --unsorted         keep exact samples as the daemon holds them, in\n"
    "                         the order they came (run format 2): about 2x\n"
    "                         faster to save and 4x to merge, but up to 2.5x\n"
    "                         larger and a fifth slower to diff; default: each\n"
    "                         key's values sorted and delta-coded (format 1)\n"
    "  -m, --meta=KEY=VALUE   note KEY=VALUE in the file (a commit id, a\n"
    "                         branch...); may be given many times\n"
    "  -h, --help             show this help and exit\n";

/* Parses KEY=VALUE options into an array of RunMeta (hrd_ctl_meta_free). */
int hrd_ctl_meta_add(const char *cmd, const char *arg,
                     Hostrange__RunMeta ***meta, size_t *n)
{
    const char *eq = strchr(arg, '=');
    Hostrange__RunMeta **nm, *m;

    if (eq == NULL || eq == arg) {
        fprintf(stderr, "hostrangectl %s: bad --meta '%s' (KEY=VALUE)\n", cmd,
                arg);
        exit(2);
    }
    nm = realloc(*meta, (*n + 1) * sizeof *nm);
    m = malloc(sizeof *m);
    if (nm == NULL || m == NULL) {
        fprintf(stderr, "hostrangectl %s: out of memory\n", cmd);
        exit(1);
    }
    *meta = nm;
    hostrange__run_meta__init(m);
    m->key = strndup(arg, (size_t)(eq - arg));
    m->value = strdup(eq + 1);
    nm[(*n)++] = m;
    return 0;
}

void hrd_ctl_meta_free(Hostrange__RunMeta **meta, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(meta[i]->key);
        free(meta[i]->value);
        free(meta[i]);
    }
    free(meta);
}

void hrd_ctl_run_provenance(Hostrange__RunHeader *h, unsigned format,
                            char *host, size_t hostlen,
                            Hostrange__RunMeta **meta, size_t nmeta)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    hrd_run_hostname(host, hostlen);
    h->format = format;
    h->host = host;
    h->time_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    h->version = PACKAGE_VERSION;
    h->meta = meta;
    h->n_meta = nmeta;
}

int hrd_ctl_save(int argc, char **argv)
{
    enum { OPT_UNSORTED = 256 };
    static const struct option longopts[] = {
        { "output", required_argument, NULL, 'o' },
        { "unsorted", no_argument, NULL, OPT_UNSORTED },
        { "meta", required_argument, NULL, 'm' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    Hostrange__RunHeader h = HOSTRANGE__RUN_HEADER__INIT;
    Hostrange__ControlRequest q = HOSTRANGE__CONTROL_REQUEST__INIT;
    Hostrange__SaveRequest sq = HOSTRANGE__SAVE_REQUEST__INIT;
    Hostrange__RunMeta **meta = NULL;
    struct hrd_run_writer w;
    const char *output = NULL;
    uint8_t cursor[16];
    char host[256], err[8400];
    size_t nmeta = 0;
    unsigned format = 1;
    int c, rc = 1;

    while ((c = getopt_long(argc, argv, ":o:m:h", longopts, NULL)) != -1) {
        if (c == 'o') {
            output = optarg;
        } else if (c == OPT_UNSORTED) {
            format = HRD_RUN_FORMAT;
        } else if (c == 'm') {
            hrd_ctl_meta_add("save", optarg, &meta, &nmeta);
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
        return 2;
    }
    if (output == NULL || output[0] == '\0') {
        fprintf(stderr, "hostrangectl save: no output file (-o FILE; see "
                "--help)\n");
        return 2;
    }
    hrd_ctl_run_provenance(&h, format, host, sizeof host, meta, nmeta);
    if (hrd_run_create(&w, output, &h, err, sizeof err) != 0) {
        fprintf(stderr, "hostrangectl save: %s\n", err);
        goto out;
    }
    q.version = HRP_VERSION;
    q.body_case = HOSTRANGE__CONTROL_REQUEST__BODY_SAVE;
    q.save = &sq;
    sq.packed = 1;
    sq.format = format;
    for (;;) {
        Hostrange__ControlReply *rep;
        Hostrange__SaveReply *s;
        int bad = 0;

        if (hrd_ctl_request(&q, &rep, hrd_ctl_timeout_ms, err,
                            sizeof err) != 0) {
            fprintf(stderr, "hostrangectl save: %s; %s not written\n", err,
                    output);
            hrd_run_abort(&w);
            goto out;
        }
        s = rep->body_case == HOSTRANGE__CONTROL_REPLY__BODY_SAVE ? rep->save
                                                                 : NULL;
        if (s == NULL || s->next_cursor.len > sizeof cursor ||
            (s->next_cursor.len == 0 && s->end == NULL)) {
            fprintf(stderr, "hostrangectl save: hostranged at %s sent no "
                    "run; %s not written\n", hrd_ctl_dir, output);
            bad = 1;
        }
        /* Packed keys go to the file as they are (a daemon from before
         * they were sent packed sends messages). */
        for (size_t i = 0; !bad && i < s->n_packed_keys; i++)
            bad = hrd_run_put_packed(&w, s->packed_keys[i].data,
                                     s->packed_keys[i].len, err,
                                     sizeof err) != 0;
        for (size_t i = 0; !bad && i < s->n_keys; i++)
            bad = hrd_run_put_key(&w, s->keys[i], err, sizeof err) != 0;
        if (bad) {
            if (s != NULL)
                fprintf(stderr, "hostrangectl save: %s\n", err);
            hostrange__control_reply__free_unpacked(rep, NULL);
            hrd_run_abort(&w);
            goto out;
        }
        if (s->next_cursor.len == 0) {
            uint64_t keys = w.keys, bytes;

            rc = hrd_run_commit(&w, s->end, err, sizeof err) != 0;
            bytes = w.bytes;
            hostrange__control_reply__free_unpacked(rep, NULL);
            if (rc != 0) {
                fprintf(stderr, "hostrangectl save: %s\n", err);
                goto out;
            }
            (void)bytes;
            printf("saved %llu keys to %s\n", (unsigned long long)keys,
                   output);
            break;
        }
        memcpy(cursor, s->next_cursor.data, s->next_cursor.len);
        sq.cursor.data = cursor;
        sq.cursor.len = s->next_cursor.len;
        hostrange__control_reply__free_unpacked(rep, NULL);
    }
out:
    hrd_ctl_meta_free(meta, nmeta);
    return rc;
}

const struct hrd_ctl_cmd hrd_ctl_cmd_save = {
    "save",
    "save what the daemon holds as a run file (.hrs)",
    usage_save,
    hrd_ctl_save,
};
