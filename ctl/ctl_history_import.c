/* hostrangectl history add --from: other tools' results read (the
 * conversion is lib/history/import.h's) and added to the history. */
#include "config.h"

#include "ctl/ctl_exit.h"
#include "ctl/ctl_fingerprint.h"
#include "ctl/ctl_history.h"
#include "lib/history/history.h"
#include "lib/history/import.h"
#include "lib/view/escape.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether a run of im is of a machine whose name hostrangectl refuses
 * (hrc_machine_bad: the rules of --machine, whether the name came
 * from the file or from --machine); says which for subcommand cmd. */
static int machine_refused(const char *cmd, const char *path,
                           const struct hrh_import *im)
{
    char err[256];

    for (size_t i = 0; i < im->nruns; i++) {
        const char *m = im->runs[i].run.machine;

        if (hrc_machine_bad(m, err, sizeof err) == 0)
            continue;
        fprintf(stderr, "hostrangectl %s: %s: machine '", cmd, path);
        hrv_text_put(stderr, m);
        fprintf(stderr, "' of run %s: %s (--machine NAME names another)\n",
                im->runs[i].id, err);
        return 1;
    }
    return 0;
}

int hrc_history_add_from(struct hrh_history *h, const char *db_name,
                             enum hrh_import_format fmt, const char *path,
                             char *const *extra, size_t nextra,
                             const char *machine)
{
    struct hrh_import_opts o = { machine, NULL, NULL, NULL, NULL, 0, 0 };
    struct hrh_import *im = NULL;
    char err[4096];
    int rc, status = 0;

    if (hrh_import_meta(&o, extra, nextra) != 0)
        status = HRC_EXIT_FAILED;
    rc = status != 0 ? -ENOMEM
                     : hrh_import_file(fmt, path, &o, &im, err,
                                               sizeof err);
    if (rc != 0) {
        fprintf(stderr, "hostrangectl history add: %s; nothing of it "
                "stored\n", rc == -ENOMEM ? "out of memory" : err);
        status = rc == -ENOMEM || rc == -EFBIG ? HRC_EXIT_FAILED
                                               : HRC_EXIT_UNREADABLE;
    }
    if (rc == 0 && machine_refused("history add", path, im)) {
        fprintf(stderr, "hostrangectl history add: nothing of %s stored\n",
                path);
        hrh_import_free(im);
        im = NULL;
        status = HRC_EXIT_UNREADABLE;
    }
    if (im != NULL && im->skipped > 0)
        printf("%s: %zu benchmarks reported an error and were left out\n",
               path, im->skipped);
    for (size_t i = 0; im != NULL && i < im->nruns; i++) {
        const struct hrh_import_run *r = &im->runs[i];

        rc = hrh_add(h, &r->run, r->p, r->n, err, sizeof err);
        if (rc == 0)
            printf("added %s: run %s, %zu keys\n", path, r->id, r->n);
        else if (rc == 1)
            printf("%s: run %s is stored already; nothing changed\n", path,
                   r->id);
        else
            fprintf(stderr, "hostrangectl history add: %s: %s; run %s of %s "
                    "not stored\n", db_name,
                    rc == -ENOMEM ? "out of memory" : err, r->id, path);
        rc = rc >= 0 ? 0 : rc == -EINVAL ? HRC_EXIT_UNREADABLE
                                         : HRC_EXIT_FAILED;
        if (rc > status)
            status = rc;
    }
    hrh_import_free(im);
    hrh_import_meta_fini(&o);
    return status;
}

int hrc_hrun_import(const char *cmd, enum hrh_import_format fmt,
                        const char *path, const char *machine,
                        struct hrh_fromrun *r)
{
    char err[4096];
    int rc = hrh_fromrun_import(r, fmt, path, machine, err,
                                        sizeof err);

    if (rc == 0 && machine_refused(cmd, path, r->import))
        return HRC_EXIT_UNREADABLE;
    if (rc == 0)
        return 0;
    fprintf(stderr, "hostrangectl %s: %s\n", cmd,
            rc == -ENOMEM ? "out of memory" : err);
    return rc == -ENOMEM || rc == -EFBIG ? HRC_EXIT_FAILED
                                         : HRC_EXIT_UNREADABLE;
}
