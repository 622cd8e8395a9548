/* The machine of the runs a command saves (ctl_fingerprint.c). */
#ifndef HOSTRANGE_CTL_FINGERPRINT_H
#define HOSTRANGE_CTL_FINGERPRINT_H

#include <stddef.h>

#include "lib/run/fingerprint.h"

/* The machine fingerprint of the daemon's run (ctl_fingerprint.c): this
 * machine, and the clock of the daemon's clients (unknown when it does not
 * answer). */
void hrc_fingerprint(struct hrr_fingerprint *fp);

/*
 * --machine NAME of command cmd (record, save, ab; NULL when not given):
 * the name of the machine the runs it saves are measured on, passed on in
 * $HOSTRANGE_MACHINE to the saves it makes and to every process it starts
 * (ctl_fingerprint.c). With arg NULL, a name $HOSTRANGE_MACHINE holds
 * already is checked. A name is 1 to HRR_MACHINE_MAX bytes of UTF-8 with
 * no control character: any other exits with status 2, saying why.
 */
void hrc_machine_option(const char *cmd, const char *arg);

/* Writes why name cannot name a machine to err, or returns 0 when it
 * can. */
int hrc_machine_bad(const char *name, char *err, size_t len);

#endif
