/*
 * hostrangectl bisect, private to its files: ctl_bisect.c (options, and
 * the callbacks of the measuring: the ends, the steps and the search are
 * lib/runner/bisect.h's, which returns the answer), ctl_bisect_out.c (the answer in text,
 * JSONL and Markdown, the state file written, and read back through
 * lib/stat/bisectstate.h), ctl_bisect_run.c (what the measuring calls
 * back: a commit's worktree and build, lib/runner/worktree.h's, said; a
 * round under a private daemon, hrc_record_round, and its run read for
 * the key) and
 * ctl_bisect_from.c (the ends of a change point of the history, and the
 * command line history detect prints). history detect uses
 * bisect_suggest.
 *
 * A bisect keeps one struct hrx_bisect_commit per commit of the line
 * (lib/runner/bisect.h); a commit's worktree is made and
 * built at most once, on first use, under the bisect's temporary
 * directory. The ends' stay until the end (they are measured at every
 * step); another commit's goes when its step ends.
 */
#ifndef HOSTRANGE_CTL_BISECT_H
#define HOSTRANGE_CTL_BISECT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "lib/runner/bisect.h"
#include "lib/runner/worktree.h"

/* The environment variable that names the commit to the build and to
 * the measured command. */
#define BISECT_COMMIT_ENV "HOSTRANGE_BISECT_COMMIT"

/* The key a bisect follows (strings owned). */
struct bisect_key {
    char *node, *op, *backend, *range;
    uint32_t phase, metric;
};

/* What the rounds of a bisect share. */
struct bisect_run {
    const char *dir;            /* the temporary directory (absolute) */
    char **cmdv;                /* the measured command */
    const char *build;          /* the build command (sh -c) */
    const char *node_glob;      /* --node, or NULL */
    const char *range;
    uint32_t phase, metric;
    struct bisect_key key;      /* found in the first round */
    int have_key;
    double step_ns;             /* the clock step of the first round */
    unsigned round;             /* rounds run so far (file names) */
    int cwd;                    /* the working tree bisect started in */
};

/*
 * Makes commit c's worktree and builds it (once: a second call returns
 * what the first found). Returns 0 when it is built, 1 when the build
 * failed (c->why says so; its output's end on stderr), -1 when the
 * worktree cannot be made or a signal stopped the build (said).
 */
int bisect_prepare(struct bisect_run *r, struct hrx_bisect_commit *c);

/*
 * One round of commit c's command in its worktree, under a private
 * daemon: the key's median into *v. Finds the key in the first round it
 * reads (r->have_key then set). Returns 0; 1 when the command failed or
 * its run lacks the key (said on stderr); -1 when the key cannot be
 * chosen (said) or a signal stopped the round (*sig set).
 */
int bisect_round(struct bisect_run *r, struct hrx_bisect_commit *c, double *v,
                 int *sig);

enum bisect_format { FORMAT_TEXT, FORMAT_JSONL, FORMAT_MARKDOWN };

/* What one bisect holds: its measuring (lib/runner/bisect.h), the
 * rounds' context, and what is printed. */
struct bisect {
    struct hrx_bisect m;
    struct bisect_run run;
    double earlier;             /* the seconds of the steps of --state */
    enum bisect_format format;
    FILE *state;
    struct timespec t0;
};

/*
 * What ctl_bisect_out.c writes. A step's line (JSONL, and the state
 * file's) and the ends' (step 0); bisect_ends_line and bisect_step_line
 * take them as const void * for bisect_state_put, which appends one to
 * the state file (when there is one) and writes it through.
 */
void bisect_put_ends(FILE *f, const struct bisect *b);
void bisect_put_step(FILE *f, const struct hrx_bisect_commit *c);
void bisect_ends_line(FILE *f, const void *b);
void bisect_step_line(FILE *f, const void *c);
void bisect_state_put(struct bisect *b, void (*put)(FILE *, const void *),
                      const void *what);

/* A change and its interval as text: "+10.2% [+9.8%, +10.6%]". */
void bisect_text_change(FILE *f, const struct hrs_decide *d);

/*
 * Reads the state file's steps of the same ends and key into b (the key
 * then known). Returns the steps read (0 when the file is empty or
 * absent), or -1 after saying why the file does not fit.
 */
int bisect_state_load(struct bisect *b, const char *path);

/* The answer in b's format; the ends not differing, likewise. */
void bisect_answer(FILE *f, const struct bisect *b, const struct hrx_bisect_answer *a,
                   double seconds);
void bisect_no_change(FILE *f, const struct bisect *b, double seconds);

/* A change point of the history (bisect --from-detect): its ends, the
 * commits of the runs either side of it, and its key. */
struct bisect_from {
    char good[256], bad[256];
    char node[4096], phase[16], machine[4096], range[4096], metric[32];
};

/*
 * The newest change point of range and metric `spec` ("RANGE METRIC") in
 * history db (NULL: the default), in nodes matching node_glob (NULL:
 * any), found by history detect run as a process of its own, its output
 * in directory dir. Returns 0 and fills *out; HRC_EXIT_USAGE (a bad
 * spec, or change points in several series: they are listed),
 * HRC_EXIT_NO_CHANGE (none) or HRC_EXIT_FAILED (detect failed),
 * after saying why (ctl_exit.h).
 */
int bisect_from_detect(const char *spec, const char *db,
                       const char *node_glob, const char *dir,
                       struct bisect_from *out);

/*
 * history detect's hint: when the current directory is in a git working
 * tree that knows commits good and bad, and more than one commit lies
 * from good to bad, writes to f a line with their count and the bisect
 * command line of the key (node, phase, range, metric). Returns 1 when
 * it wrote it, else 0.
 */
int bisect_suggest(FILE *f, const char *good, const char *bad,
                   const char *node, const char *phase, const char *range,
                   const char *metric);

#endif
