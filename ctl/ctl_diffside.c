/* diff's and bisect's reading of a run file, said (see ctl_diffside.h). */
#include "config.h"

#include "ctl/ctl_diffside.h"
#include "ctl/ctl_cmd.h"

#include <errno.h>
#include <stdio.h>

/* rc of a lib/run/runside.h call as ctl's: err said as command cmd's
 * unless -ENOMEM. */
static int told(const char *cmd, int rc, const char *err)
{
    if (rc == 0 || rc == -ENOMEM)
        return rc;
    fprintf(stderr, "hostrangectl %s: %s\n", cmd, err);
    return HRC_TOLD;
}

int hrc_diff_side_open(const char *cmd, struct hrr_diff_side *s,
                       const char *path)
{
    char err[8400];

    return told(cmd, hrr_runside_open(s, path, err, sizeof err), err);
}

int hrc_diff_side_next(const char *cmd, struct hrr_diff_side *s)
{
    char err[8400];

    return told(cmd, hrr_runside_next(s, err, sizeof err), err);
}

void hrc_diff_side_free(struct hrr_diff_side *s)
{
    hrr_runside_free(s);
}
