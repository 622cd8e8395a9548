/* hostrangectl bisect: git, a worktree per commit, builds and rounds (see
 * ctl_bisect.h). */
#include "config.h"

#include "ctl/ctl_bisect.h"
#include "lib/runner/spawn.h"
#include "lib/runner/worktree.h"
#include "ctl/ctl_diffside.h"
#include "ctl/ctl_rounds.h"
#include "lib/util/grow.h"
#include "lib/view/escape.h"
#include "proto/protocol.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The lines of a failed build's or round's output shown on stderr. */
#define BISECT_TAIL_LINES 12

/* The characters of a hash that name a commit in messages. */
#define BISECT_SHORT HRX_BISECT_SHORT

/* Shows the last BISECT_TAIL_LINES lines of file `path` on stderr, each
 * behind "  | ". */
static void show_tail(const char *path)
{
    char *lines[BISECT_TAIL_LINES] = { NULL }, *line = NULL;
    size_t cap = 0, n = 0;
    FILE *f = fopen(path, "r");

    if (f == NULL)
        return;
    while (getline(&line, &cap, f) > 0) {
        free(lines[n % BISECT_TAIL_LINES]);
        lines[n % BISECT_TAIL_LINES] = line;
        line = NULL;
        cap = 0;
        n++;
    }
    free(line);
    fclose(f);
    for (size_t i = n > BISECT_TAIL_LINES ? n - BISECT_TAIL_LINES : 0; i < n;
         i++) {
        char *l = lines[i % BISECT_TAIL_LINES];

        l[strcspn(l, "\n")] = '\0';
        fputs("  | ", stderr);
        hrv_text_put(stderr, l);
        fputc('\n', stderr);
    }
    for (size_t i = 0; i < BISECT_TAIL_LINES; i++)
        free(lines[i]);
}

int bisect_prepare(struct bisect_run *r, struct hrx_bisect_commit *c)
{
    char log[PATH_MAX];
    int st, sig;

    if (c->build == HRX_BISECT_BUILD_OK)
        return 0;
    if (c->build == HRX_BISECT_BUILD_FAILED)
        return 1;
    if ((st = hrx_bisect_worktree_add(r->dir, c)) == -ENOMEM) {
        fprintf(stderr, "hostrangectl bisect: out of memory\n");
        return -1;
    }
    if (st != 0) {
        fprintf(stderr, "hostrangectl bisect: cannot check %.*s out in "
                "a worktree (git worktree add exited %d)\n",
                BISECT_SHORT, c->hash, st);
        return -1;
    }
    if ((st = hrx_bisect_build(r->dir, c, r->build, BISECT_COMMIT_ENV, log,
                               sizeof log)) < 0) {
        fprintf(stderr, "hostrangectl bisect: cannot run the build: %s\n",
                strerror(-st));
        return -1;
    }
    if ((sig = hrx_cleanup_stopped()) != 0) {
        fprintf(stderr, "hostrangectl bisect: stopped by %s while building "
                "%.*s\n", hrx_cleanup_signame(sig), BISECT_SHORT,
                c->hash);
        return -1;
    }
    if (st == 0) {
        c->build = HRX_BISECT_BUILD_OK;
        return 0;
    }
    c->build = HRX_BISECT_BUILD_FAILED;
    if (asprintf(&c->why, "its build failed (status %d)", st) < 0)
        c->why = NULL;
    fprintf(stderr, "hostrangectl bisect: the build of %.*s failed (status "
            "%d); its output ends:\n", BISECT_SHORT, c->hash, st);
    show_tail(log);
    return 1;
}

/* Whether population p is of the key the options name. */
static int key_matches(const struct bisect_run *r,
                       const struct hrr_diff_pop *p)
{
    return strcmp(p->range, r->range) == 0 && p->phase == r->phase &&
           p->metric == r->metric &&
           (r->node_glob == NULL || fnmatch(r->node_glob, p->node, 0) == 0);
}

/* Whether population p is the key r follows. */
static int key_is(const struct bisect_key *k, const struct hrr_diff_pop *p)
{
    return strcmp(p->range, k->range) == 0 && p->phase == k->phase &&
           p->metric == k->metric && strcmp(p->node, k->node) == 0 &&
           strcmp(p->op, k->op) == 0 && strcmp(p->backend, k->backend) == 0;
}

/* Chooses the key among the populations of the first round: exactly one
 * must match. Returns 0, or -1 after saying why. */
static int key_choose(struct bisect_run *r, const struct hrr_diff_side *s)
{
    size_t found = 0, at = 0;

    for (size_t i = 0; i < s->n; i++) {
        if (key_matches(r, &s->p[i])) {
            found++;
            at = i;
        }
    }
    if (found == 1) {
        const struct hrr_diff_pop *p = &s->p[at];

        r->key.node = strdup(p->node);
        r->key.op = strdup(p->op);
        r->key.backend = strdup(p->backend);
        r->key.range = strdup(p->range);
        r->key.phase = p->phase;
        r->key.metric = p->metric;
        if (r->key.node == NULL || r->key.op == NULL ||
            r->key.backend == NULL || r->key.range == NULL) {
            fprintf(stderr, "hostrangectl bisect: out of memory\n");
            return -1;
        }
        r->have_key = 1;
        r->step_ns = hrr_runside_clock_step(s);
        return 0;
    }
    if (found == 0) {
        fputs("hostrangectl bisect: the good end's run has no key of range '",
              stderr);
        hrv_text_put(stderr, r->range);
        fprintf(stderr, "', %s, %s%s%s\n",
                hrp_phase_name(r->phase), hrp_metric_name(r->metric),
                r->node_glob ? " and a node matching --node" : "",
                s->n > 0 ? "; its keys:" : " (it has no key)");
    } else {
        fprintf(stderr, "hostrangectl bisect: %zu keys match; name one with "
                "--node (a node id or a pattern), --phase and --metric:\n",
                found);
    }
    for (size_t i = 0; i < s->n; i++) {
        const struct hrr_diff_pop *p = &s->p[i];
        if (found > 0 && !key_matches(r, p))
            continue;
        fputs("  ", stderr);
        hrv_text_put(stderr, p->node);
        fprintf(stderr, " %s ", hrp_phase_name(p->phase));
        hrv_text_put(stderr, p->range);
        fprintf(stderr, " %s\n", hrp_metric_name(p->metric));
    }
    return -1;
}

/* Reads the key's median of the run file `path` into *v. Returns 0, 1
 * when the run lacks the key (said), or -1 (said). */
static int round_read(struct bisect_run *r, const char *path,
                      const char *hash, double *v)
{
    struct hrr_diff_side s;
    int rc = 0;

    memset(&s, 0, sizeof s);
    if ((rc = hrc_diff_side_open("bisect", &s, path)) != 0) {
        if (rc == -ENOMEM)
            fprintf(stderr, "hostrangectl bisect: out of memory\n");
        hrc_diff_side_free(&s);
        return 1;
    }
    while (!s.ended && rc == 0)
        rc = hrc_diff_side_next("bisect", &s);
    if (rc != 0) {
        if (rc == -ENOMEM)
            fprintf(stderr, "hostrangectl bisect: out of memory\n");
        hrc_diff_side_free(&s);
        return 1;
    }
    if (!r->have_key && key_choose(r, &s) != 0) {
        hrc_diff_side_free(&s);
        return -1;
    }
    rc = 1;
    for (size_t i = 0; i < s.n; i++) {
        if (key_is(&r->key, &s.p[i]) && s.p[i].median > 0) {
            *v = s.p[i].median;
            rc = 0;
            break;
        }
    }
    if (rc != 0)
        fprintf(stderr, "hostrangectl bisect: the run of %.*s lacks the "
                "key (or its median is 0)\n", BISECT_SHORT, hash);
    hrc_diff_side_free(&s);
    return rc;
}

/* A round of record in a worktree (hrx_bisect_in_worktree's fn). */
struct round_call {
    char **cmdv;
    const char *file;
    int cut;
};

static int round_call(void *arg)
{
    struct round_call *rc = arg;

    return hrc_record_round(rc->cmdv, rc->file, &rc->cut);
}

int bisect_round(struct bisect_run *r, struct hrx_bisect_commit *c, double *v,
                 int *sig)
{
    char file[PATH_MAX], log[PATH_MAX];
    struct round_call call = { r->cmdv, file, 0 };
    int st, cut, rc;

    snprintf(file, sizeof file, "%s/round-%u.hrs", r->dir, ++r->round);
    snprintf(log, sizeof log, "%s/round.log", r->dir);
    /* The round's output (the command's, record's) goes to a log, shown
     * when the round fails. */
    if ((rc = hrx_bisect_in_worktree(c, r->cwd, BISECT_COMMIT_ENV, log,
                                     round_call, &call, &st)) != 0) {
        fprintf(stderr, "hostrangectl bisect: cannot write %s: %s\n", log,
                strerror(-rc));
        return -1;
    }
    cut = call.cut;
    *sig = hrx_cleanup_stopped();
    if (cut || (*sig != 0 && st != 0)) {
        unlink(file);
        return -1;
    }
    if (st != 0) {
        fprintf(stderr, "hostrangectl bisect: the command failed at %.*s "
                "(status %d); its round's output ends:\n", BISECT_SHORT,
                c->hash, st);
        show_tail(log);
        unlink(file);
        return 1;
    }
    rc = round_read(r, file, c->hash, v);
    unlink(file);
    return rc;
}
