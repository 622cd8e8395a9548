/* hostrangectl: the report options and the paged dump (see ctl.h). */
#include "config.h"

#include "daemon/ctl.h"
#include "proto/protocol.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int parse_fields(const char *v, unsigned *fields)
{
    if (strcmp(v, "reference") == 0)
        *fields = 0;
    else if (strcmp(v, "all") == 0)
        *fields = HRD_FIELDS_EXTENDED;
    else
        return -1;
    return 0;
}

int hrd_ctl_report_option(const char *cmd, int c, const char *arg,
                          struct hrd_ctl_filter *f, struct hrd_ctl_report *r)
{
    if (r != NULL) {
        switch (c) {
        case 'f':
            if (hrd_format_parse(arg, &r->format) != 0) {
                fprintf(stderr, "hostrangectl %s: bad format '%s' (jsonl, "
                        "csv or table)\n", cmd, arg);
                exit(2);
            }
            return 1;
        case 'F':
            if (parse_fields(arg, &r->fields) != 0) {
                fprintf(stderr, "hostrangectl %s: bad fields '%s' (reference "
                        "or all)\n", cmd, arg);
                exit(2);
            }
            return 1;
        case 'o':
            r->output = arg;
            return 1;
        default:
            break;
        }
    }
    if (f != NULL) {
        switch (c) {
        case 'n':
            f->node = arg;
            return 1;
        case 'O':
            f->op = arg;
            return 1;
        case 'B':
            f->backend = arg;
            return 1;
        case 'R':
            f->range = arg;
            return 1;
        case 'P':
            f->phase = hrp_phase_parse(arg);
            if (f->phase == 0) {
                fprintf(stderr, "hostrangectl %s: bad phase '%s' (cold or "
                        "warm)\n", cmd, arg);
                exit(2);
            }
            return 1;
        default:
            break;
        }
    }
    return 0;
}

static const char *metric_name(unsigned m)
{
    return m == HRP_METRIC_SELF ? "self" : "inclusive";
}

/* Writes the rows of one page through the writer. Returns 0 or -errno. */
static int write_rows(struct hrd_writer *w, const Hostrange__DumpReply *d)
{
    int rc = 0;

    for (size_t i = 0; i < d->n_rows && rc == 0; i++) {
        const Hostrange__Row *r = d->rows[i];
        struct hrd_row row = {
            .node_id = r->node_id,
            .op = r->operator_,
            .backend = r->backend,
            .phase = hrp_phase_name(r->phase),
            .range = r->range,
            .metric = metric_name(r->metric),
            .count = r->count,
            .mean = r->mean,
            .median = r->median,
            .min = r->min,
            .max = r->max,
            .p90 = r->p90,
            .p99 = r->p99,
            .stddev = r->stddev,
            .exact = r->exact,
            .lost = r->lost,
        };
        if (row.phase == NULL)
            row.phase = "?";
        rc = hrd_writer_row(w, &row);
    }
    return rc;
}

/*
 * Asks for every page and writes it to f. Returns 0; -1 after printing the
 * daemon's failure; or a negative errno of writing.
 */
static int fetch_all(FILE *f, const struct hrd_ctl_filter *flt,
                     const struct hrd_ctl_report *r)
{
    Hostrange__ControlRequest q = HOSTRANGE__CONTROL_REQUEST__INIT;
    Hostrange__DumpRequest dq = HOSTRANGE__DUMP_REQUEST__INIT;
    uint8_t cursor[64];
    struct hrd_writer w;
    char err[8400];
    int rc = 0;

    q.version = HRP_VERSION;
    q.body_case = HOSTRANGE__CONTROL_REQUEST__BODY_DUMP;
    q.dump = &dq;
    dq.node_glob = (char *)(flt->node ? flt->node : "");
    dq.operator_glob = (char *)(flt->op ? flt->op : "");
    dq.backend_glob = (char *)(flt->backend ? flt->backend : "");
    dq.range_glob = (char *)(flt->range ? flt->range : "");
    dq.phase = flt->phase;
    dq.paged = 1;
    hrd_writer_init(&w, f, r->format, r->fields);
    for (;;) {
        Hostrange__ControlReply *rep;
        const Hostrange__DumpReply *d;
        int more;

        if (hrd_ctl_request(&q, &rep, hrd_ctl_timeout_ms, err,
                            sizeof err) != 0) {
            fprintf(stderr, "hostrangectl: %s\n", err);
            rc = -1;
            break;
        }
        d = rep->body_case == HOSTRANGE__CONTROL_REPLY__BODY_DUMP ? rep->dump
                                                                 : NULL;
        if (d == NULL || d->next_cursor.len > sizeof cursor) {
            fprintf(stderr, "hostrangectl: hostranged at %s sent no report\n",
                    hrd_ctl_dir);
            hostrange__control_reply__free_unpacked(rep, NULL);
            rc = -1;
            break;
        }
        rc = write_rows(&w, d);
        more = d->next_cursor.len > 0;
        if (more) {
            memcpy(cursor, d->next_cursor.data, d->next_cursor.len);
            dq.cursor.data = cursor;
            dq.cursor.len = d->next_cursor.len;
        }
        hostrange__control_reply__free_unpacked(rep, NULL);
        if (rc != 0 || !more)
            break;
    }
    if (rc == 0)
        rc = hrd_writer_finish(&w);
    hrd_writer_fini(&w);
    return rc;
}

static int write_error(const char *what, int rc)
{
    if (rc != -1)
        fprintf(stderr, "hostrangectl: cannot write %s: %s\n", what,
                strerror(-rc));
    return 1;
}

int hrd_ctl_dump(const struct hrd_ctl_filter *flt,
                 const struct hrd_ctl_report *r)
{
    const char *output = r->output;
    char tmp[PATH_MAX + 32];
    struct stat st;
    FILE *f;
    int rc, fd;

    if (output != NULL && strcmp(output, "-") == 0)
        output = NULL;
    if (output == NULL) {
        rc = fetch_all(stdout, flt, r);
        if (rc == 0 && fflush(stdout) != 0)
            rc = -errno;
        return rc == 0 ? 0 : write_error("the report", rc);
    }
    if (stat(output, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* A device or a pipe (/dev/null, /dev/stdout): written in place. */
        f = fopen(output, "w");
        if (f == NULL)
            return write_error(output, -errno);
        rc = fetch_all(f, flt, r);
        if (fclose(f) != 0 && rc == 0)
            rc = -errno;
        return rc == 0 ? 0 : write_error(output, rc);
    }
    snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", output);
    fd = mkstemp(tmp);
    if (fd < 0)
        return write_error(output, -errno);
    f = fdopen(fd, "w");
    if (f == NULL) {
        rc = -errno;
        close(fd);
        unlink(tmp);
        return write_error(output, rc);
    }
    /* mkstemp makes the file 0600; a report gets the usual mode. */
    {
        mode_t mask = umask(0);
        umask(mask);
        fchmod(fd, 0666 & ~mask);
    }
    rc = fetch_all(f, flt, r);
    if (rc == 0 && (fflush(f) != 0 || fsync(fd) != 0))
        rc = -errno;
    if (fclose(f) != 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && rename(tmp, output) != 0)
        rc = -errno;
    if (rc != 0) {
        unlink(tmp);
        return write_error(output, rc);
    }
    return 0;
}
