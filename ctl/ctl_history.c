/* hostrangectl history: the run history (see ctl_history.h, history.h):
 * add, list and show, and the helpers the other subcommands share. */
#include "config.h"

#include "ctl/ctl_exit.h"
#include "ctl/ctl_fingerprint.h"
#include "ctl/ctl_options.h"
#include "ctl/ctl_report.h"
#include "ctl/ctl_history.h"
#include "lib/history/fromrun.h"
#include "lib/history/history.h"
#include "lib/history/import.h"
#include "lib/stat/changepoint.h"
#include "lib/util/grow.h"
#include "lib/view/numfmt.h"
#include "lib/view/escape.h"
#include "lib/view/report.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DB_HELP                                                             \
    "      --db=DB          the history: a SQLite file, or a PostgreSQL\n"   \
    "                       database (postgresql://..., postgres://... or\n" \
    "                       libpq's key=value pairs); default\n"             \
    "                       $" HRH_ENV ", else " HRH_DEFAULT "\n" \
    "                       (a password: PGPASSWORD, ~/.pgpass or\n"         \
    "                       PGPASSFILE, not DB, which every user sees)\n"

const char hrc_history_usage_add[] =
    "Usage: hostrangectl history add [--db DB] [--meta KEY=VALUE]...\n"
    "                                [--machine NAME] RUN.hrs...\n"
    "       hostrangectl history add --from FORMAT [--db DB]\n"
    "                                [--meta KEY=VALUE]... [--machine NAME]\n"
    "                                FILE...\n"
    "Store each run in the history: per key (node, operator, backend, phase,\n"
    "range, metric) its count, mean, median, p10 and p90, with the run's\n"
    "machine, host, kernel and meta. A series is one key on one machine:\n"
    "the name the run was saved with (--machine, $HOSTRANGE_MACHINE), else\n"
    "its CPU model, cores and clock path; never its host name or kernel,\n"
    "which change under a machine (a CI runner's host name every job).\n"
    "Its place in the order is its meta 'time' (Unix seconds, or\n"
    "YYYY-MM-DDTHH:MM:SS[Z], UTC), else when it was saved; its\n"
    "commit is its meta 'commit'. A run is known by its id: one stored\n"
    "already is not stored again. Each run is one transaction: a run that\n"
    "cannot be read or stored leaves nothing.\n"
    "With --from, each FILE holds another tool's results: each benchmark\n"
    "a key (node the format, range its name, metric the tool's measure),\n"
    "the run's commit, time and machine from the file, or from --meta\n"
    "commit=, --meta time= and --machine.\n"
    "\n"
    DB_HELP
    "      --from=FORMAT    the files are " HRH_IMPORT_NAME_GBENCH " (Google Benchmark's JSON;\n"
    "                       also " HRH_IMPORT_NAME_GBENCH_LONG "), " HRH_IMPORT_NAME_PYTEST "\n"
    "                       (its --benchmark-json) or " HRH_IMPORT_NAME_CSV " (lines\n"
    "                       commit,time,machine,name,value[,unit])\n"
    "  -m, --meta=KEY=VALUE note KEY=VALUE with each run (over the file's\n"
    "                       own); may be given many times\n"
    "      --machine=NAME   store each run as measured on machine NAME (over\n"
    "                       the name it was saved with, if any)\n"
    "  -h, --help           show this help and exit\n";

const char hrc_history_usage_list[] =
    "Usage: hostrangectl history list [--db DB]\n"
    "The stored runs in their order, one line each, tab-separated: id, time\n"
    "(UTC), commit, machine, keys, host, kernel.\n"
    "\n"
    DB_HELP
    HRC_HISTORY_READ_HELP
    "  -h, --help           show this help and exit\n";

const char hrc_history_usage_show[] =
    "Usage: hostrangectl history show [--db DB] [FILTER]... [--machine GLOB]\n"
    "                                 [--format table|jsonl|csv]\n"
    "The series: one line per run and key, by key, machine and run order,\n"
    "with the run's time, commit, id, host and kernel and the key's count,\n"
    "mean, median, p10 and p90 (ns), and its rounds and their medians\n"
    "(jsonl, csv).\n"
    "\n"
    DB_HELP
    HRC_HISTORY_READ_HELP
    HRC_FILTER_HELP
    "      --machine=GLOB   only machines matching GLOB\n"
    "  -f, --format=FORMAT  table (default), jsonl or csv\n"
    "  -h, --help           show this help and exit\n";

const char *hrc_history_db(const char *opt)
{
    const char *env = getenv(HRH_ENV);

    if (opt != NULL && opt[0] != '\0')
        return opt;
    return env != NULL && env[0] != '\0' ? env : HRH_DEFAULT;
}

const char *hrc_history_dsn(const char *cmd, char *arg)
{
    static char *copy;
    static int warned;
    size_t off, len;

    /* Empty, it would read as no option given: the default history. */
    if (arg[0] == '\0') {
        fprintf(stderr, "hostrangectl %s: bad %s '' (a SQLite file, or a "
                "PostgreSQL database; see --help)\n", cmd,
                strcmp(cmd, "record") == 0 ? "--history" : "--db");
        exit(HRC_EXIT_USAGE);
    }
    free(copy);
    if ((copy = strdup(arg)) == NULL) {
        fprintf(stderr, "hostrangectl %s: out of memory\n", cmd);
        exit(HRC_EXIT_FAILED);
    }
    if (!hrh_is_pg(arg) || !hrh_password(arg, &off, &len))
        return copy;
    /* The argument is the process's own copy of its command line, which
     * /proc/PID/cmdline (ps) reads. */
    memset(arg + off, '*', len);
    if (!warned)
        fprintf(stderr, "hostrangectl %s: warning: a password on the "
                "command line can be seen by other users; PGPASSWORD or "
                "~/.pgpass is safer\n", cmd);
    warned = 1;
    return copy;
}

int hrc_history_open(const char *cmd, const char *db,
                         enum hrh_mode mode, struct hrh_history **h)
{
    char err[4096], name[1024];
    int rc = hrh_open(db, mode, h, err, sizeof err);

    if (rc == 0)
        return 0;
    if (rc == -ENOENT) {
        hrh_name(db, name, sizeof name);
        fprintf(stderr, "hostrangectl %s: no history at %s (hostrangectl "
                "history add makes one)\n", cmd, name);
        return HRC_EXIT_UNREADABLE;
    }
    fprintf(stderr, "hostrangectl %s: %s\n", cmd,
            rc == -ENOMEM ? "out of memory" : err);
    /* A database that cannot be made or migrated for want of room is a
     * full disk, not a database that cannot be read. */
    return rc == -ENOMEM || rc == -ENOSPC || rc == -EFBIG
               ? HRC_EXIT_FAILED
               : HRC_EXIT_UNREADABLE;
}

void hrc_history_time(int64_t time_ns, char *buf, size_t len)
{
    time_t t = (time_t)hrh_time_seconds(time_ns);
    struct tm tm;

    if (gmtime_r(&t, &tm) == NULL || strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ",
                                               &tm) == 0)
        snprintf(buf, len, "%lld", (long long)time_ns);
}

/* A meta 'time' as lib/history/import.h reads it (see ctl_history.h). */
int hrc_history_meta_bad(const char *cmd, const char *key,
                         const char *value)
{
    int64_t ns;

    if (strcmp(key, "time") != 0 || hrh_import_time(value, &ns) == 0)
        return 0;
    fprintf(stderr, "hostrangectl %s: bad --meta 'time=%s' (a time: "
            HRH_IMPORT_TIME_FORMS ")\n", cmd, value);
    return 1;
}

int hrc_hrun_load(const char *cmd, const char *path,
                      char *const *extra, size_t nextra, const char *machine,
                      struct hrh_fromrun *r)
{
    struct hrc_read_progress rp = { { 0, 0, 0 }, cmd, path };
    char err[8400];
    int rc;

    hrc_progress_init(&rp.p);
    rc = hrh_fromrun_load(r, path, extra, nextra, machine,
                                  hrc_read_progress, &rp, err,
                                  sizeof err);
    hrc_progress_end(&rp.p);
    if (rc == 0 && (rc = hrh_fromrun_rounds(r)) != 0)
        snprintf(err, sizeof err, "out of memory");
    if (rc == 0)
        return 0;
    fprintf(stderr, "hostrangectl %s: %s\n", cmd, err);
    return rc == -ENOMEM && !r->unreadable ? HRC_EXIT_FAILED
                                           : HRC_EXIT_UNREADABLE;
}

/* Options shared by the subcommands: --db and --help. */
enum { OPT_DB = 256, OPT_MACHINE, OPT_ALPHA, OPT_MIN_CHANGE, OPT_WINDOW,
       OPT_FAIL, OPT_FROM };

int hrc_history_add(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "db", required_argument, NULL, OPT_DB },
        { "meta", required_argument, NULL, 'm' },
        { "machine", required_argument, NULL, OPT_MACHINE },
        { "from", required_argument, NULL, OPT_FROM },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *db = NULL, *machine = NULL;
    char **extra = NULL, err[4096], name[1024];
    size_t nextra = 0, capextra = 0;
    struct hrh_history *h;
    enum hrh_import_format fmt = HRH_IMPORT_CSV;
    int c, status = 0, from = 0;

    while ((c = getopt_long(argc, argv, ":m:h", longopts, NULL)) != -1) {
        if (c == OPT_FROM) {
            if (hrh_import_format_parse(optarg, &fmt) != 0) {
                fprintf(stderr, "hostrangectl history add: bad --from '%s' "
                        "(" HRH_IMPORT_NAME_GBENCH ", "
                        HRH_IMPORT_NAME_PYTEST " or " HRH_IMPORT_NAME_CSV
                        ")\n", optarg);
                free(extra);
                return HRC_EXIT_USAGE;
            }
            from = 1;
        } else if (c == OPT_DB) {
            db = hrc_history_dsn("history add", optarg);
        } else if (c == OPT_MACHINE) {
            if (hrc_machine_bad(optarg, err, sizeof err) != 0) {
                fprintf(stderr, "hostrangectl history add: bad --machine: "
                        "%s\n", err);
                free(extra);
                return HRC_EXIT_USAGE;
            }
            machine = optarg;
        } else if (c == 'm') {
            if (strchr(optarg, '=') == NULL || optarg[0] == '=') {
                fprintf(stderr, "hostrangectl history add: bad --meta '%s' "
                        "(KEY=VALUE)\n", optarg);
                free(extra);
                return HRC_EXIT_USAGE;
            }
            if (strncmp(optarg, "time=", 5) == 0 &&
                hrc_history_meta_bad("history add", "time", optarg + 5)) {
                free(extra);
                return HRC_EXIT_USAGE;
            }
            if (hru_grow(&extra, &capextra, nextra + 1, sizeof *extra,
                         8) != 0) {
                free(extra);
                return HRC_EXIT_FAILED;
            }
            extra[nextra++] = optarg;
        } else if (c == 'h') {
            fputs(hrc_history_usage_add, stdout);
            free(extra);
            return 0;
        } else {
            hrc_die_usage("history add", c, argv[optind - 1]);
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "hostrangectl history add: no %s (see --help)\n",
                from ? "file" : "run file");
        free(extra);
        return HRC_EXIT_USAGE;
    }
    db = hrc_history_db(db);
    hrh_name(db, name, sizeof name);
    if ((status = hrc_history_open("history add", db, HRH_WRITE,
                                       &h)) != 0) {
        free(extra);
        return status;
    }
    for (int i = optind; from && i < argc; i++) {
        int rc = hrc_history_add_from(h, name, fmt, argv[i], extra,
                                          nextra, machine);

        if (rc > status)
            status = rc;
    }
    for (int i = optind; !from && i < argc; i++) {
        struct hrh_fromrun r;
        int rc = hrc_hrun_load("history add", argv[i], extra, nextra,
                                   machine, &r);

        if (rc == 0) {
            rc = hrh_add(h, &r.run, r.p, r.n, err, sizeof err);
            if (rc == 0)
                printf("added %s: run %s, %zu keys\n", argv[i], r.id, r.n);
            else if (rc == 1)
                printf("%s: run %s is stored already; nothing changed\n",
                       argv[i], r.id);
            else
                fprintf(stderr, "hostrangectl history add: %s: %s; %s not "
                        "stored\n", name, rc == -ENOMEM ? "out of memory"
                                                        : err, argv[i]);
            rc = rc >= 0 ? 0 : rc == -EINVAL ? HRC_EXIT_UNREADABLE
                                             : HRC_EXIT_FAILED;
        }
        if (rc > status)
            status = rc;
        hrh_fromrun_fini(&r);
    }
    hrh_close(h);
    free(extra);
    return status;
}

int hrc_history_add_run(const char *cmd, const char *db,
                            const char *path, FILE *note)
{
    struct hrh_history *h;
    struct hrh_fromrun r;
    char err[4096], name[1024];
    int rc;

    db = hrc_history_db(db);
    hrh_name(db, name, sizeof name);
    if ((rc = hrc_history_open(cmd, db, HRH_WRITE, &h)) != 0)
        return rc;
    rc = hrc_hrun_load(cmd, path, NULL, 0, NULL, &r);
    if (rc == 0) {
        rc = hrh_add(h, &r.run, r.p, r.n, err, sizeof err);
        if (rc >= 0 && note != NULL)
            fprintf(note, rc == 0 ? "added run %s to the history %s\n"
                                  : "run %s is stored already in the "
                                    "history %s\n", r.id, name);
        if (rc < 0)
            fprintf(stderr, "hostrangectl %s: %s: %s; the run was not "
                    "added\n", cmd, name, rc == -ENOMEM ? "out of memory"
                                                         : err);
        rc = rc >= 0 ? 0 : rc == -EINVAL ? HRC_EXIT_UNREADABLE
                                         : HRC_EXIT_FAILED;
    }
    hrh_fromrun_fini(&r);
    hrh_close(h);
    return rc;
}

/* Parses --db and --help only (list). */
static int only_db(const char *cmd, const char *usage, int argc, char **argv,
                   const char **db)
{
    static const struct option longopts[] = {
        { "db", required_argument, NULL, OPT_DB },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        if (c == OPT_DB) {
            *db = hrc_history_dsn(cmd, optarg);
        } else if (c == 'h') {
            fputs(usage, stdout);
            return -1;
        } else {
            hrc_die_usage(cmd, c, argv[optind - 1]);
        }
    }
    if (optind < argc) {
        fprintf(stderr, "hostrangectl %s: unexpected argument '%s'\n", cmd,
                argv[optind]);
        return HRC_EXIT_USAGE;
    }
    return 0;
}

static int list_run(void *ctx, const struct hrh_runinfo *r)
{
    char t[64];

    (void)ctx;
    hrc_history_time(r->time_ns, t, sizeof t);
    /* Terminal text: each field escaped (a tab or newline in a name
     * cannot split the line's fields). */
    hrv_text_put(stdout, r->id);
    printf("\t%s\t", t);
    hrv_text_put(stdout, r->commit[0] != '\0' ? r->commit : "-");
    putchar('\t');
    hrv_text_put(stdout, r->machine);
    printf("\t%lld\t", (long long)r->keys);
    hrv_text_put(stdout, r->host[0] != '\0' ? r->host : "-");
    putchar('\t');
    hrv_text_put(stdout, r->kernel[0] != '\0' ? r->kernel : "-");
    putchar('\n');
    return 0;
}

/* Says a query failed. Returns the exit status. */
static int query_failed(const char *cmd, const char *db, int rc,
                        const char *err)
{
    char name[1024];

    hrh_name(db, name, sizeof name);
    fprintf(stderr, "hostrangectl %s: %s: %s\n", cmd, name,
            rc == -ENOMEM ? "out of memory" : err);
    return rc == -ENOMEM ? HRC_EXIT_FAILED : HRC_EXIT_UNREADABLE;
}

int hrc_history_list(int argc, char **argv)
{
    const char *db = NULL;
    struct hrh_history *h;
    char err[4096];
    int rc = only_db("history list", hrc_history_usage_list, argc, argv,
                     &db);

    if (rc != 0)
        return rc < 0 ? 0 : rc;
    db = hrc_history_db(db);
    if ((rc = hrc_history_open("history list", db, HRH_READ,
                                   &h)) != 0)
        return rc;
    rc = hrh_runs(h, list_run, NULL, err, sizeof err);
    hrh_close(h);
    return rc == 0 ? 0 : query_failed("history list", db, rc, err);
}

/* show's output. */
struct show {
    const struct hra_filter *f;
    const char *machine;
    enum hrv_format format;
    int64_t key;     /* of the series shown last (table) */
    char *last_machine;
};

static void number(double v)
{
    char b[40];

    hrv_format_number(b, sizeof b, v);
    fputs(b, stdout);
}

static int show_point(void *ctx, const struct hrh_point *p)
{
    struct show *s = ctx;
    const char *str[12] = { p->node, p->op, p->backend, p->phase, p->range,
                            p->metric, p->machine, NULL, p->commit, p->run,
                            p->host, p->kernel };
    static const char *const names[12] = { "node", "operator", "backend",
                                           "phase", "range", "metric",
                                           "machine", "time", "commit",
                                           "run", "host", "kernel" };
    double num[4] = { p->mean, p->median, p->p10, p->p90 };
    static const char *const nnames[4] = { "mean", "median", "p10", "p90" };
    char t[64], commit[13], run[13];

    if (!hrh_match(s->f, s->machine, p))
        return 0;
    hrc_history_time(p->time_ns, t, sizeof t);
    str[7] = t;
    if (s->format == HRV_FORMAT_JSONL) {
        for (int i = 0; i < 12; i++) {
            printf("%s\"%s\":", i ? "," : "{", names[i]);
            hrv_json_string(stdout, str[i]);
        }
        printf(",\"count\":%llu", (unsigned long long)p->count);
        for (int i = 0; i < 4; i++) {
            printf(",\"%s\":", nnames[i]);
            number(num[i]);
        }
        /* As dump --fields rounds: one round's median is the run's. */
        printf(",\"rounds\":%zu,\"round_medians\":[",
               p->nrounds > 0 ? p->nrounds : 1);
        for (size_t i = 0; i < (p->nrounds > 0 ? p->nrounds : 1); i++) {
            if (i > 0)
                putchar(',');
            number(p->nrounds > 0 ? p->rounds[i] : p->median);
        }
        puts("]}");
    } else if (s->format == HRV_FORMAT_CSV) {
        for (int i = 0; i < 12; i++) {
            if (i)
                putchar(',');
            hrv_csv_field(stdout, str[i]);
        }
        printf(",%llu", (unsigned long long)p->count);
        for (int i = 0; i < 4; i++) {
            putchar(',');
            number(num[i]);
        }
        /* The round medians joined by ';', one field, as dump's. */
        printf(",%zu,", p->nrounds > 0 ? p->nrounds : 1);
        for (size_t i = 0; i < (p->nrounds > 0 ? p->nrounds : 1); i++) {
            if (i > 0)
                putchar(';');
            number(p->nrounds > 0 ? p->rounds[i] : p->median);
        }
        putchar('\n');
    } else {
        if (p->key != s->key || s->last_machine == NULL ||
            strcmp(s->last_machine, p->machine) != 0) {
            free(s->last_machine);
            s->last_machine = strdup(p->machine);
            s->key = p->key;
            for (int i = 0; i < 6; i++) {
                hrv_text_put(stdout, str[i]);
                putchar(' ');
            }
            fputs("on ", stdout);
            hrv_text_put(stdout, p->machine);
            putchar('\n');
            printf("  %-20s  %-12s  %-12s  %10s  %12s  %12s  %12s  %12s  "
                   "%s\n", "time", "commit", "run", "count", "mean ns",
                   "median ns", "p10 ns", "p90 ns", "host, kernel");
        }
        /* The first 12 bytes of each, escaped (hrv_text_escape cuts
         * between characters and escapes). */
        hrv_text_escape(commit, sizeof commit, p->commit[0] ? p->commit : "-");
        hrv_text_escape(run, sizeof run, p->run);
        printf("  %-20s  %-12s  %-12s  %10llu  %12.1f  %12.1f  %12.1f  "
               "%12.1f  ", t, commit, run,
               (unsigned long long)p->count, p->mean, p->median, p->p10,
               p->p90);
        hrv_text_put(stdout, p->host[0] ? p->host : "-");
        fputs(", ", stdout);
        hrv_text_put(stdout, p->kernel[0] ? p->kernel : "-");
        putchar('\n');
    }
    return ferror(stdout) ? -EIO : 0;
}

int hrc_history_show(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "db", required_argument, NULL, OPT_DB },
        HRC_FILTER_LONGOPTS,
        { "machine", required_argument, NULL, OPT_MACHINE },
        { "format", required_argument, NULL, 'f' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct hra_filter f = { NULL, NULL, NULL, NULL, 0 };
    struct show s = { &f, NULL, HRV_FORMAT_TABLE, -1, NULL };
    const char *db = NULL;
    struct hrh_history *h;
    char err[4096];
    int c, rc;

    while ((c = getopt_long(argc, argv, ":n:f:h", longopts, NULL)) != -1) {
        if (c == OPT_DB)
            db = hrc_history_dsn("history show", optarg);
        else if (c == OPT_MACHINE)
            s.machine = optarg;
        else if (c == 'f') {
            if (hrv_format_parse(optarg, &s.format) != 0) {
                fprintf(stderr, "hostrangectl history show: bad format '%s' "
                        "(table, jsonl or csv)\n", optarg);
                return HRC_EXIT_USAGE;
            }
        } else if (c == 'h') {
            fputs(hrc_history_usage_show, stdout);
            return 0;
        } else if (!hrc_report_option("history show", c, optarg, &f,
                                          NULL)) {
            hrc_die_usage("history show", c, argv[optind - 1]);
        }
    }
    if (optind < argc) {
        fprintf(stderr, "hostrangectl history show: unexpected argument "
                "'%s'\n", argv[optind]);
        return HRC_EXIT_USAGE;
    }
    db = hrc_history_db(db);
    if ((rc = hrc_history_open("history show", db, HRH_READ,
                                   &h)) != 0)
        return rc;
    if (s.format == HRV_FORMAT_CSV)
        puts("node,operator,backend,phase,range,metric,machine,time,commit,"
             "run,host,kernel,count,mean,median,p10,p90,rounds,round_medians");
    rc = hrh_points(h, show_point, &s, err, sizeof err);
    hrh_close(h);
    free(s.last_machine);
    if (rc == -EIO && ferror(stdout)) {
        fprintf(stderr, "hostrangectl history show: cannot write the "
                "output\n");
        return HRC_EXIT_FAILED;
    }
    return rc == 0 ? 0 : query_failed("history show", db, rc, err);
}

int hrc_history_cp_option(const char *cmd, int c, const char *arg,
                              struct hrs_cp_opts *cp)
{
    char *end;

    if (c == 'a') {
        double a = strtod(arg, &end);

        if (*end != '\0' || end == arg || !(a > 0) || a >= 1) {
            fprintf(stderr, "hostrangectl %s: bad --alpha '%s' (a number "
                    "between 0 and 1)\n", cmd, arg);
            return -EINVAL;
        }
        cp->alpha = a;
    } else {
        long w = strtol(arg, &end, 10);

        if (*end != '\0' || end == arg || w < 1 || w > HRS_CP_WINDOW_MAX) {
            fprintf(stderr, "hostrangectl %s: bad --window '%s' (a whole "
                    "number of runs, 1 to %d)\n", cmd, arg,
                    HRS_CP_WINDOW_MAX);
            return -EINVAL;
        }
        cp->window = (size_t)w;
    }
    return 0;
}
