/* What record --rounds, ab and bisect share: --rounds, this program's
 * path, a merge of rounds said (see ctl_rounds.h). */
#include "config.h"

#include "ctl/ctl_rounds.h"
#include "lib/runner/spawn.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
        fprintf(stderr, "hostrangectl %s: bad %s '%s' (a number from 1 to "
                "%u)\n", cmd, what, v, HRC_ROUNDS_MAX);
        exit(2);
    }
    return (unsigned)n;
}

const char *hrc_bindir(char *buf, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink(HRC_SELF, self, sizeof self - 1);

    if (n <= 0)
        return NULL;
    self[n] = '\0';
    snprintf(buf, len, "%s", dirname(self));
    return buf;
}

int hrc_run_self(char **args, int quiet, const char *out)
{
    int st = hrx_run_self(HRC_SELF, args, quiet, out);

    if (st >= 0)
        return st;
    if (!quiet)
        fprintf(stderr, "hostrangectl: cannot run itself: %s\n",
                strerror(-st));
    return 127;
}

int hrc_merge_rounds(const char *cmd, const char *out, unsigned format,
                     const struct hrr_meta *meta, char **in, size_t nin)
{
    int st = hrx_merge_rounds(HRC_SELF, out, format, meta, in, nin);

    if (st == -ENOMEM)
        fprintf(stderr, "hostrangectl %s: out of memory\n", cmd);
    else if (st < 0)
        fprintf(stderr, "hostrangectl: cannot run itself: %s\n",
                strerror(-st));
    return st == 0 ? 0 : 1;
}
