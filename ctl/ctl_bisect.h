/*
 * hostrangectl bisect, private to its files: ctl_bisect.c (options, the
 * ends and the steps, the search), ctl_bisect_out.c (the answer in text,
 * JSONL and Markdown, the state file written, and read back through
 * lib/stat/bisectstate.h), ctl_bisect_run.c (a worktree per commit,
 * builds, and the rounds of a step under private daemons, their processes
 * lib/runner's: hrx_git, hrx_spawn, hrc_record_round) and
 * ctl_bisect_from.c (the ends of a change point of the history, and the
 * command line history detect prints). history detect uses
 * bisect_suggest.
 *
 * A bisect keeps one struct bisect_commit per commit of the line, the
 * good end first and the bad end last; a commit's worktree is made and
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

#include "lib/stat/bisect.h"
#include "lib/stat/decide.h"

/* A full commit hash's room (SHA-1 or SHA-256, and the NUL). */
#define BISECT_HASH_MAX 65

/* The environment variable that names the commit to the build and to
 * the measured command. */
#define BISECT_COMMIT_ENV "HOSTRANGE_BISECT_COMMIT"

/* A commit's build: not yet tried, built, or failed. */
enum bisect_build { BUILD_NONE = 0, BUILD_OK, BUILD_FAILED };

struct bisect_commit {
    char hash[BISECT_HASH_MAX];
    char *dir;                  /* its worktree; NULL until made */
    enum bisect_build build;
    enum hrs_bisect_verdict verdict;
    int step;                   /* the step that measured it (0: none) */
    size_t pairs;               /* of that step */
    double seconds;             /* of that step, the build included */
    struct hrs_decide vs_good, vs_bad;
    char *why;                  /* why it was skipped (owned) */
};

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
int bisect_prepare(struct bisect_run *r, struct bisect_commit *c);

/*
 * One round of commit c's command in its worktree, under a private
 * daemon: the key's median into *v. Finds the key in the first round it
 * reads (r->have_key then set). Returns 0; 1 when the command failed or
 * its run lacks the key (said on stderr); -1 when the key cannot be
 * chosen (said) or a signal stopped the round (*sig set).
 */
int bisect_round(struct bisect_run *r, struct bisect_commit *c, double *v,
                 int *sig);

/* The line of commits from good to bad (ends included), in order, as
 * git rev-list --ancestry-path gives it. Returns 0 and fills *list and *n
 * (caller frees), or -1 after saying why. */
int bisect_line(const char *good, const char *bad,
                struct bisect_commit **list, size_t *n);

/* The subject line of a commit (caller frees; "" when unknown). */
char *bisect_subject(const char *hash);

enum bisect_format { FORMAT_TEXT, FORMAT_JSONL, FORMAT_MARKDOWN };

/* What one bisect holds. */
struct bisect {
    struct bisect_run run;
    struct bisect_commit *c;
    size_t n;
    enum hrs_bisect_verdict *v;
    struct hrs_decide_plan plan, ends_plan;
    double threshold;           /* --threshold */
    enum hrs_decide_verdict dir;
    struct hrs_decide ends;     /* the bad end against the good end */
    double ends_seconds;
    double earlier;             /* the seconds of the steps of --state */
    int have_ends;
    int steps;
    enum bisect_format format;
    FILE *state;
    double *rv[3];              /* round medians: good, commit, bad */
    size_t rcap;
    struct timespec t0;
};

/* What the searches found. */
struct answer {
    size_t lo, hi;      /* the first search: last like good, first not */
    size_t lo2, hi2;    /* the second (two steps): last middle, first bad */
    int two;
    int skipped, unclear;
};

/*
 * What ctl_bisect_out.c writes. A step's line (JSONL, and the state
 * file's) and the ends' (step 0); bisect_ends_line and bisect_step_line
 * take them as const void * for bisect_state_put, which appends one to
 * the state file (when there is one) and writes it through.
 */
void bisect_put_ends(FILE *f, const struct bisect *b);
void bisect_put_step(FILE *f, const struct bisect_commit *c);
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
void bisect_answer(FILE *f, const struct bisect *b, const struct answer *a,
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

/* Removes commit c's worktree (git worktree remove --force) once it is
 * measured: no step measures it again, and a project's build takes room.
 * Its build state is kept. */
void bisect_worktree_drop(struct bisect_commit *c);

/* Removes the worktrees (with the temporary directory) and prunes git's
 * records of them. */
void bisect_worktrees_remove(const char *dir);

#endif
