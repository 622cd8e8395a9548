/*
 * hostrangectl's option and progress helpers, which every command uses
 * (ctl_options.h): usage errors (an option of hostrangectl itself given after the
 * command is named as such), commands without options or arguments,
 * durations in milliseconds, progress lines on a terminal, and the lookup
 * of a command (or a subcommand) in its table.
 */
#include "config.h"

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_options.h"
#include "lib/runner/cleanup.h"
#include "lib/util/options.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The global option (which goes before the command) that arg spells, in
 * the way its usage shows it; NULL for any other argument. */
static const char *global_option(const char *arg)
{
    static const struct {
        char letter;
        const char *name, *usage;
    } globals[] = {
        { 'r', "--runtime-dir", "-r DIR" },
        { 't', "--timeout", "-t MS" },
    };

    for (size_t i = 0; i < sizeof globals / sizeof globals[0]; i++) {
        size_t n = strlen(globals[i].name);

        if ((arg[0] == '-' && arg[1] == globals[i].letter) ||
            (strncmp(arg, globals[i].name, n) == 0 &&
             (arg[n] == '\0' || arg[n] == '=')))
            return globals[i].usage;
    }
    return NULL;
}

void hrc_die_usage(const char *cmd, int c, const char *arg)
{
    const char *global;
    char opt[3];

    /* An unknown short option may sit inside a word of several ("-xv",
     * "-t5"), where the word before it is not it: getopt names it. */
    arg = hru_getopt_culprit(c, optopt, arg, opt);
    global = cmd != NULL ? global_option(arg) : NULL;

    if (global != NULL)
        fprintf(stderr, "hostrangectl %s: '%s' is an option of hostrangectl "
                "itself: give it before the command (hostrangectl %s %s "
                "...)\n", cmd, arg, global, cmd);
    else if (c == ':')
        fprintf(stderr, "hostrangectl%s%s: missing value for option '%s' "
                "(see --help)\n", cmd ? " " : "", cmd ? cmd : "", arg);
    else
        fprintf(stderr, "hostrangectl%s%s: unknown option '%s' (see --help)\n",
                cmd ? " " : "", cmd ? cmd : "", arg);
    exit(2);
}

void hrc_no_arguments(const char *cmd, int argc, char **argv)
{
    if (optind < argc) {
        fprintf(stderr, "hostrangectl %s: unexpected argument '%s' (see "
                "--help)\n", cmd, argv[optind]);
        exit(2);
    }
}

void hrc_no_options(const char *cmd, const char *help, int argc,
                        char **argv)
{
    static const struct option longopts[] = {
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        if (c == 'h') {
            fputs(help, stdout);
            exit(0);
        }
        hrc_die_usage(cmd, c, argv[optind - 1]);
    }
    hrc_no_arguments(cmd, argc, argv);
}

void hrc_progress_init(struct hrc_progress *p)
{
    p->on = isatty(2);
    p->shown = 0;
    p->next = 0;
}

void hrc_progress_show(struct hrc_progress *p, uint64_t done,
                           int last, const char *fmt, ...)
{
    va_list ap;

    if (!p->on || (!last && done < p->next))
        return;
    fputc('\r', stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("   ", stderr);
    fflush(stderr);
    p->shown = 1;
    p->next = done + ((uint64_t)4 << 20);
}

void hrc_progress_end(struct hrc_progress *p)
{
    if (p->shown)
        fputc('\n', stderr);
    p->shown = 0;
}

void hrc_read_progress(void *ctx, uint64_t done, uint64_t size)
{
    struct hrc_read_progress *r = ctx;

    hrc_progress_show(&r->p, done, done >= size, "%s: reading %s, %llu "
                          "of %llu MiB", r->cmd, r->path,
                          (unsigned long long)(done >> 20),
                          (unsigned long long)(size >> 20));
}

long hrc_parse_ms(const char *cmd, const char *what, const char *v)
{
    char *end;
    long n;

    errno = 0;
    n = strtol(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || n < 0 || n > INT_MAX) {
        fprintf(stderr, "hostrangectl%s%s: bad %s '%s' (milliseconds, a "
                "whole number)\n", cmd ? " " : "", cmd ? cmd : "", what, v);
        exit(2);
    }
    return n;
}

/* Returns 0 when rc is, else -1 after saying why WHAT was not made (in
 * folder `in`, when one was tried). */
static int made(const char *cmd, const char *what, int rc, const char *in)
{
    if (rc == 0)
        return 0;
    if (in != NULL)
        fprintf(stderr, "hostrangectl %s: cannot create %s in %s: %s\n", cmd,
                what, in, strerror(-rc));
    else
        fprintf(stderr, "hostrangectl %s: cannot create %s: %s\n", cmd, what,
                strerror(-rc));
    return -1;
}

int hrc_tempdir(const char *cmd, const char *kind, const char *what,
                char *dir, size_t len)
{
    const char *in;
    int rc = hrx_cleanup_tempdir(kind, dir, len, &in);

    return made(cmd, what, rc, in);
}

int hrc_rundir(const char *cmd, char *dir, size_t len)
{
    const char *in;
    int rc = hrx_cleanup_rundir(cmd, dir, len, &in);

    return made(cmd, "a runtime directory", rc, in);
}

const struct hrc_cmd *hrc_cmd_find(const struct hrc_cmd *const *table,
                                           size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(name, table[i]->name) == 0)
            return table[i];
    return NULL;
}
