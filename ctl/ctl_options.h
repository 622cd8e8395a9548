/* The option and progress helpers every command uses (ctl_options.c). */
#ifndef HOSTRANGE_CTL_OPTIONS_H
#define HOSTRANGE_CTL_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

/* Prints the one-line usage error for option character c ('?' unknown,
 * ':' missing value) and exits with status 2. */
void hrd_ctl_die_usage(const char *cmd, int c, const char *arg);

/* Exits with status 2 when arguments are left after a command's options. */
void hrd_ctl_no_arguments(const char *cmd, int argc, char **argv);

/* Parses the options of a command that has none but --help (which prints
 * help and exits 0). */
void hrd_ctl_no_options(const char *cmd, const char *help, int argc,
                        char **argv);

/*
 * Progress of long work, on stderr when it is a terminal (nothing
 * otherwise): one line, redrawn in place ("\rsave: 12 MiB written ...")
 * when `done` has moved on by 4 MiB since it was last drawn, and always
 * when `last` is set; hrd_ctl_progress_end ends the line once one was
 * drawn, so that what follows starts on a line of its own.
 */
struct hrd_ctl_progress {
    int on;          /* stderr is a terminal */
    int shown;       /* a line is up */
    uint64_t next;   /* the `done` from which to draw again */
};

void hrd_ctl_progress_init(struct hrd_ctl_progress *p);
void hrd_ctl_progress_show(struct hrd_ctl_progress *p, uint64_t done,
                           int last, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void hrd_ctl_progress_end(struct hrd_ctl_progress *p);

/* The progress of a run file read whole by command cmd (hrd_run_load's
 * hrd_run_progress_fn, with a struct hrd_ctl_read_progress as ctx). */
struct hrd_ctl_read_progress {
    struct hrd_ctl_progress p;
    const char *cmd, *path;
};

void hrd_ctl_read_progress(void *ctx, uint64_t done, uint64_t size);

/* A whole number of milliseconds (0 to INT_MAX) for option `what`; exits
 * with status 2 on anything else. */
long hrd_ctl_parse_ms(const char *cmd, const char *what, const char *v);

/* Makes a private directory $TMPDIR/hostrange-KIND-XXXXXX (/tmp when
 * TMPDIR is unset or empty) and writes its path to dir. Returns 0, or -1
 * after saying on stderr "hostrangectl CMD: cannot create WHAT in ...". */
int hrd_ctl_tempdir(const char *cmd, const char *kind, const char *what,
                    char *dir, size_t len);

#endif
