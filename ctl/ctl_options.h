/* The option and progress helpers every command uses (ctl_options.c). */
#ifndef HOSTRANGE_CTL_OPTIONS_H
#define HOSTRANGE_CTL_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

/* Prints the one-line usage error for option character c ('?' unknown,
 * ':' missing value) and exits with status 2. */
void hrc_die_usage(const char *cmd, int c, const char *arg);

/* Exits with status 2 when arguments are left after a command's options. */
void hrc_no_arguments(const char *cmd, int argc, char **argv);

/* Parses the options of a command that has none but --help (which prints
 * help and exits 0). */
void hrc_no_options(const char *cmd, const char *help, int argc,
                        char **argv);

/*
 * Progress of long work, on stderr when it is a terminal (nothing
 * otherwise): one line, redrawn in place ("\rsave: 12 MiB written ...")
 * when `done` has moved on by 4 MiB since it was last drawn, and always
 * when `last` is set; hrc_progress_end ends the line once one was
 * drawn, so that what follows starts on a line of its own.
 */
struct hrc_progress {
    int on;          /* stderr is a terminal */
    int shown;       /* a line is up */
    uint64_t next;   /* the `done` from which to draw again */
};

void hrc_progress_init(struct hrc_progress *p);
void hrc_progress_show(struct hrc_progress *p, uint64_t done,
                           int last, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void hrc_progress_end(struct hrc_progress *p);

/* The progress of a run file read whole by command cmd (hrr_load's
 * hrr_progress_fn, with a struct hrc_read_progress as ctx). */
struct hrc_read_progress {
    struct hrc_progress p;
    const char *cmd, *path;
};

void hrc_read_progress(void *ctx, uint64_t done, uint64_t size);

/* A whole number of milliseconds (0 to INT_MAX) for option `what`; exits
 * with status 2 on anything else. */
long hrc_parse_ms(const char *cmd, const char *what, const char *v);

/* Makes a private directory $TMPDIR/hostrange-KIND-XXXXXX (/tmp when
 * TMPDIR is unset or empty), registered to be removed on every way out
 * (hrx_cleanup_tempdir), and writes its path to dir. Returns 0, or -1
 * after saying on stderr "hostrangectl CMD: cannot create WHAT in ...". */
int hrc_tempdir(const char *cmd, const char *kind, const char *what,
                    char *dir, size_t len);

/* The same for a private daemon's runtime directory,
 * hostrange-CMD-XXXXXX: in /tmp when the path in $TMPDIR is too long for
 * its sockets (hrx_cleanup_rundir). */
int hrc_rundir(const char *cmd, char *dir, size_t len);

#endif
