/* The commits of hostrangectl bisect in git (see worktree.h). */
#include "config.h"

#include "lib/runner/worktree.h"
#include "lib/runner/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Splits text into its lines (in place). Returns how many, the first
 * `max` of them in line[]. */
static size_t lines_split(char *text, char **line, size_t max)
{
    size_t n = 0;

    for (char *s = strtok(text, "\n"); s != NULL; s = strtok(NULL, "\n")) {
        if (n < max)
            line[n] = s;
        n++;
    }
    return n;
}

int hrx_bisect_line(const char *good, const char *bad,
                    struct hrx_bisect_commit **list, size_t *n, char *why,
                    size_t whylen)
{
    char range[2 * HRX_BISECT_HASH_MAX + 4], *out = NULL, **line;
    char *ancestor[] = { "git", "merge-base", "--is-ancestor", (char *)good,
                         (char *)bad, NULL };
    char *revs[] = { "git", "rev-list", "--reverse", "--topo-order",
                     "--ancestry-path", range, NULL };
    struct hrx_bisect_commit *l;
    size_t k;

    if (hrx_git(ancestor, NULL, 1) != 0) {
        snprintf(why, whylen, "the good end %.*s is not an ancestor of the "
                 "bad end %.*s", HRX_BISECT_SHORT, good, HRX_BISECT_SHORT,
                 bad);
        return -1;
    }
    snprintf(range, sizeof range, "%s..%s", good, bad);
    if (hrx_git(revs, &out, 0) != 0) {
        snprintf(why, whylen, "git rev-list %s failed", range);
        free(out);
        return -1;
    }
    k = 0;
    for (const char *c = out; *c != '\0'; c++)
        k += *c == '\n';
    if ((line = calloc(k + 1, sizeof *line)) == NULL) {
        free(out);
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    k = lines_split(out, line, k);
    if (k == 0 || strcmp(line[k - 1], bad) != 0) {
        snprintf(why, whylen, "no commit between the good and the bad end");
        free(line);
        free(out);
        return -1;
    }
    if ((l = calloc(k + 1, sizeof *l)) == NULL) {
        free(line);
        free(out);
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    snprintf(l[0].hash, sizeof l[0].hash, "%s", good);
    for (size_t i = 0; i < k; i++)
        snprintf(l[i + 1].hash, sizeof l[i + 1].hash, "%s", line[i]);
    free(line);
    free(out);
    *list = l;
    *n = k + 1;
    return 0;
}

int hrx_bisect_worktree_add(const char *root, struct hrx_bisect_commit *c)
{
    char *args[] = { "git", "worktree", "add", "--detach", "--quiet", NULL,
                     c->hash, NULL };

    if (c->dir != NULL)
        return 0;
    if (asprintf(&c->dir, "%s/wt-%.*s", root, HRX_BISECT_SHORT,
                 c->hash) < 0) {
        c->dir = NULL;
        return -ENOMEM;
    }
    args[5] = c->dir;
    return hrx_git(args, NULL, 0);
}

int hrx_bisect_build(const char *root, const struct hrx_bisect_commit *c,
                     const char *build, const char *env_name, char *log,
                     size_t loglen)
{
    char *argv[] = { "sh", "-c", (char *)build, NULL };
    struct hrx_spawn s = hrx_spawn_init(HRX_CHILD_COMMAND, argv);

    snprintf(log, loglen, "%s/build-%.*s.log", root, HRX_BISECT_SHORT,
             c->hash);
    s.path = "/bin/sh";
    s.dir = c->dir;
    s.out = log;
    s.fd[2] = STDOUT_FILENO;
    s.env[0] = env_name;
    s.env[1] = c->hash;
    return hrx_spawn_wait(&s);
}

int hrx_bisect_in_worktree(const struct hrx_bisect_commit *c, int back,
                           const char *env_name, const char *log,
                           int (*fn)(void *arg), void *arg, int *st)
{
    int err, fd, e;

    fflush(stderr);
    if ((err = dup(STDERR_FILENO)) < 0)
        return -errno;
    if ((fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                   0600)) < 0) {
        e = errno;
        close(err);
        return -e;
    }
    dup2(fd, STDERR_FILENO);
    close(fd);
    setenv(env_name, c->hash, 1);
    if (chdir(c->dir) == 0) {
        *st = fn(arg);
        if (fchdir(back) != 0)
            *st = -1;
    } else {
        *st = -1;
    }
    unsetenv(env_name);
    fflush(stderr);
    dup2(err, STDERR_FILENO);
    close(err);
    return 0;
}

char *hrx_bisect_subject(const char *hash)
{
    char *args[] = { "git", "log", "-1", "--format=%s", (char *)hash, NULL };
    char *out = NULL;

    if (hrx_git(args, &out, 1) != 0) {
        free(out);
        return strdup("");
    }
    out[strcspn(out, "\n")] = '\0';
    return out;
}

int hrx_bisect_worktree_drop(struct hrx_bisect_commit *c)
{
    char *args[] = { "git", "worktree", "remove", "--force", c->dir, NULL };
    int st;

    if (c->dir == NULL)
        return 0;
    st = hrx_git(args, NULL, 1);
    free(c->dir);
    c->dir = NULL;
    return st;
}

void hrx_bisect_worktrees_remove(const char *root)
{
    char *args[] = { "git", "worktree", "prune", NULL };

    hrx_cleanup_rmdir(root);
    hrx_git(args, NULL, 1);
}
