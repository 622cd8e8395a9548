/* hostrangectl bisect and the history: the ends and the key of a change
 * point (bisect --from-detect), and the bisect command line that history
 * detect prints for a change that spans several commits (see
 * ctl_bisect.h). */
#include "config.h"

#include "ctl/ctl_exit.h"
#include "ctl/ctl_bisect.h"
#include "ctl/ctl_rounds.h"
#include "lib/runner/spawn.h"
#include "lib/view/escape.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A string field of a JSON line as hrv_json_string writes it, into out;
 * -1 when absent, too long, or escaped (a name bisect cannot take from
 * the line). */
static int row_str(const char *line, const char *name, char *out,
                   size_t len)
{
    char pat[64];
    const char *v;
    size_t n;

    snprintf(pat, sizeof pat, "\"%s\":\"", name);
    if ((v = strstr(line, pat)) == NULL)
        return -1;
    v += strlen(pat);
    n = strcspn(v, "\"\\");
    if (n >= len || v[n] != '"')
        return -1;
    memcpy(out, v, n);
    out[n] = '\0';
    return 0;
}

/* Names a series' change on stderr. */
static void bisect_from_say(const struct bisect_from *r)
{
    fputs("  ", stderr);
    hrv_text_put(stderr, r->node);
    fprintf(stderr, " %s on ", r->phase);
    hrv_text_put(stderr, r->machine);
    fputs(": ", stderr);
    hrv_text_put(stderr, r->good);
    fputs(" to ", stderr);
    hrv_text_put(stderr, r->bad);
    fputc('\n', stderr);
}

int bisect_from_detect(const char *spec, const char *db,
                       const char *node_glob, const char *dir,
                       struct bisect_from *out)
{
    char range[4096], metric[32], path[PATH_MAX], *line = NULL;
    char *args[16];
    size_t cap = 0, n = 0, series = 0;
    int na = 0, st;
    struct bisect_from row, last;
    FILE *f;

    if (sscanf(spec, "%4095s %31s", range, metric) != 2 ||
        (strcmp(metric, "inclusive") != 0 && strcmp(metric, "self") != 0)) {
        fprintf(stderr, "hostrangectl bisect: bad --from-detect '%s' (a "
                "range and a metric: 'RANGE inclusive' or 'RANGE self')\n",
                spec);
        return HRC_EXIT_USAGE;
    }
    snprintf(path, sizeof path, "%s/detect.jsonl", dir);
    args[na++] = "hostrangectl";
    args[na++] = "history";
    args[na++] = "detect";
    if (db != NULL) {
        args[na++] = "--db";
        args[na++] = (char *)db;
    }
    args[na++] = "--range";
    args[na++] = range;
    if (node_glob != NULL) {
        args[na++] = "--node";
        args[na++] = (char *)node_glob;
    }
    args[na++] = "--series";
    args[na++] = "--format";
    args[na++] = "jsonl";
    args[na] = NULL;
    if ((st = hrc_run_self(args, 1, path)) != 0 &&
        st != 1 /* a key beyond --fail-above: none given */) {
        fprintf(stderr, "hostrangectl bisect: history detect failed (exit "
                "%d); run it alone to see why\n", st);
        return HRC_EXIT_FAILED;
    }
    if ((f = fopen(path, "r")) == NULL) {
        fprintf(stderr, "hostrangectl bisect: cannot read %s: %s\n", path,
                strerror(errno));
        return HRC_EXIT_FAILED;
    }
    memset(&last, 0, sizeof last);
    while (getline(&line, &cap, f) > 0) {
        char m[32], r[4096];

        memset(&row, 0, sizeof row);
        if (row_str(line, "range", r, sizeof r) != 0 ||
            strcmp(r, range) != 0 ||
            row_str(line, "metric", m, sizeof m) != 0 ||
            strcmp(m, metric) != 0)
            continue;
        if (row_str(line, "node", row.node, sizeof row.node) != 0 ||
            row_str(line, "phase", row.phase, sizeof row.phase) != 0 ||
            row_str(line, "machine", row.machine, sizeof row.machine) != 0 ||
            row_str(line, "commit", row.bad, sizeof row.bad) != 0 ||
            row_str(line, "commit_before", row.good, sizeof row.good) != 0)
            continue;
        /* Rows of one series come together, oldest change first: the
         * last row of a series is its newest change. */
        if (n > 0 && (strcmp(row.node, last.node) != 0 ||
                      strcmp(row.phase, last.phase) != 0 ||
                      strcmp(row.machine, last.machine) != 0)) {
            if (++series == 2) {
                fprintf(stderr, "hostrangectl bisect: the change points of "
                        "%s %s are in several series; name one with "
                        "--node (and --phase):\n", range, metric);
                bisect_from_say(&last);
            }
            bisect_from_say(&row);
        } else if (n == 0) {
            series = 1;
        }
        last = row;
        n++;
    }
    free(line);
    fclose(f);
    unlink(path);
    if (n == 0) {
        fprintf(stderr, "hostrangectl bisect: history detect finds no "
                "change point of %s %s%s\n", range, metric,
                node_glob != NULL ? " in a node matching --node" : "");
        return HRC_EXIT_NO_CHANGE;
    }
    if (series > 1)
        return HRC_EXIT_USAGE;
    *out = last;
    snprintf(out->range, sizeof out->range, "%s", range);
    snprintf(out->metric, sizeof out->metric, "%s", metric);
    return 0;
}

/* A word of a shell command line: as it is when it holds only safe
 * characters, else in single quotes; text-escaped either way. */
static void shell_word(FILE *f, const char *s)
{
    if (s[0] != '\0' &&
        strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                  "0123456789._/:=+-@") == strlen(s)) {
        hrv_text_put(f, s);
        return;
    }
    fputc('\'', f);
    for (const char *p = s; *p != '\0'; p++) {
        char one[2] = { *p, '\0' };

        if (*p == '\'')
            fputs("'\\''", f);
        else
            hrv_text_put(f, one);
    }
    fputc('\'', f);
}

int bisect_suggest(FILE *f, const char *good, const char *bad,
                   const char *node, const char *phase, const char *range,
                   const char *metric)
{
    static int in_repo = -1;
    char out[64], span[2 * HRX_BISECT_HASH_MAX + 16];
    char *inside[] = { "git", "rev-parse", "--is-inside-work-tree", NULL };
    char *count[] = { "git", "rev-list", "--count", "--ancestry-path", span,
                      "--", NULL };
    long commits;

    if (in_repo < 0)
        in_repo = hrx_git_plain(inside, out, sizeof out) == 0 &&
                  strncmp(out, "true", 4) == 0;
    if (!in_repo || good == NULL || bad == NULL || good[0] == '\0' ||
        bad[0] == '\0' || good[0] == '-' || bad[0] == '-' ||
        strlen(good) >= HRX_BISECT_HASH_MAX || strlen(bad) >= HRX_BISECT_HASH_MAX)
        return 0;
    snprintf(span, sizeof span, "%s..%s", good, bad);
    if (hrx_git_plain(count, out, sizeof out) != 0)
        return 0;
    commits = strtol(out, NULL, 10);
    if (commits <= 1)
        return 0;
    fprintf(f, "  %ld commits from ", commits);
    hrv_text_put(f, good);
    fputs(" to ", f);
    hrv_text_put(f, bad);
    fputs(": hostrangectl bisect --good ", f);
    shell_word(f, good);
    fputs(" --bad ", f);
    shell_word(f, bad);
    fputs(" --range ", f);
    shell_word(f, range);
    fputs(" --node ", f);
    shell_word(f, node);
    fprintf(f, " --phase %s --metric %s --build CMD -- COMMAND\n", phase,
            metric);
    return 1;
}
