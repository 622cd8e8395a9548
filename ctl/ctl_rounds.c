/* What record --rounds, ab and bisect share: --rounds, running this
 * program, a merge of rounds (see ctl_rounds.h). */
#include "config.h"

#include "lib/runner/cleanup.h"
#include "ctl/ctl_rounds.h"
#include "proto/protocol.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

unsigned hrc_parse_rounds(const char *cmd, const char *what,
                              const char *v)
{
    char *end;
    unsigned long n;

    errno = 0;
    n = strtoul(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || v[0] == '-' || n < 1 ||
        n > HRC_ROUNDS_MAX) {
        fprintf(stderr, "hostrangectl %s: bad --rounds '%s' (a number from "
                "1 to %u)\n", cmd, v, HRC_ROUNDS_MAX);
        exit(2);
    }
    return (unsigned)n;
}

/*
 * Runs this program (hostrangectl) with args, its standard output thrown
 * away, as a helper of the command (lib/runner/cleanup.h: a signal lets it
 * finish). Returns its exit status, or 1 when it cannot be run.
 */
/* Runs this program with args, its standard output written to `out`
 * (NULL: thrown away), and with `quiet` its standard error thrown away. */
static int run_self(char **args, int quiet, const char *out)
{
    pid_t pid = hrx_cleanup_fork(HRX_CHILD_HELPER);
    int status;

    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        int fo = out != NULL ? open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600)
                             : fd;

        if (fo >= 0)
            dup2(fo, STDOUT_FILENO);
        if (fd >= 0 && quiet)
            dup2(fd, STDERR_FILENO);
        execv("/proc/self/exe", args);
        fprintf(stderr, "hostrangectl: cannot run itself: %s\n",
                strerror(errno));
        _exit(127);
    }
    if (pid < 0 || hrx_cleanup_wait(pid, &status) != 0)
        return 1;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

int hrc_run_self(char **args)
{
    return run_self(args, 0, NULL);
}

int hrc_run_self_quiet(char **args, const char *out)
{
    return run_self(args, 1, out);
}

int hrc_merge_rounds(const char *cmd, const char *out, unsigned format,
                         const struct hrr_meta *meta, char **in,
                         size_t nin)
{
    size_t nmeta = meta != NULL ? meta->n : 0;
    char **args = calloc(2 * nmeta + nin + 8, sizeof *args);
    char **kv = calloc(nmeta + 1, sizeof *kv);
    size_t n = 0;
    int rc = 1;

    if (args == NULL || kv == NULL) {
        fprintf(stderr, "hostrangectl %s: out of memory\n", cmd);
        goto out;
    }
    args[n++] = "hostrangectl";
    args[n++] = "merge";
    args[n++] = "-o";
    args[n++] = (char *)out;
    if (format != 1)
        args[n++] = "--unsorted";
    for (size_t i = 0; i < nmeta; i++) {
        if (asprintf(&kv[i], "%s=%s", hrr_meta_key(meta, i),
                     hrr_meta_value(meta, i)) < 0) {
            kv[i] = NULL;
            fprintf(stderr, "hostrangectl %s: out of memory\n", cmd);
            goto out;
        }
        args[n++] = "--meta";
        args[n++] = kv[i];
    }
    args[n++] = "--";
    for (size_t i = 0; i < nin; i++)
        args[n++] = in[i];
    rc = hrc_run_self(args) == 0 ? 0 : 1;
out:
    for (size_t i = 0; kv != NULL && i < nmeta; i++)
        free(kv[i]);
    free(kv);
    free(args);
    return rc;
}

