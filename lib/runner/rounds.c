/* The rounds of record --rounds (see rounds.h). */
#include "config.h"

#include "lib/runner/rounds.h"
#include "lib/runner/cleanup.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int hrx_rounds_run(unsigned n, const char *dir,
                   int (*round)(void *ctx, const char *save, int *cut),
                   void *ctx, struct hrx_rounds *r)
{
    memset(r, 0, sizeof *r);
    if ((r->files = calloc(n, sizeof *r->files)) == NULL)
        return -ENOMEM;
    for (unsigned k = 0; k < n; k++) {
        int st, cut;

        if (hrx_cleanup_stopped() != 0)
            break;
        if (asprintf(&r->files[k], "%s/round-%u.hrs", dir, k + 1) < 0) {
            r->files[k] = NULL;
            return -ENOMEM;
        }
        r->made++;
        st = round(ctx, r->files[k], &cut);
        if (cut) {
            /* A round a signal cut short is not one of the rounds. */
            r->cut_in = k + 1;
            break;
        }
        if (access(r->files[k], R_OK) != 0)
            return -ENOENT;
        if (st != 0 && r->status == 0)
            r->status = st;
        r->done++;
    }
    return 0;
}

void hrx_rounds_fini(struct hrx_rounds *r)
{
    for (unsigned k = 0; r->files != NULL && k < r->made; k++)
        free(r->files[k]);
    free(r->files);
    memset(r, 0, sizeof *r);
}
