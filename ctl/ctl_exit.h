/*
 * hostrangectl's exit statuses: one vocabulary for every command, as
 * hostrangectl(1) and each command's --help give them. A number keeps one
 * meaning within a command; where two kinds of command give the same
 * number for different things (1 is a daemon that failed to dump, stats
 * and save, a key slower than allowed to diff, ab and history), each
 * meaning has a name of its own here, so that a status is written by what
 * it says.
 *
 * Not an exit status: HRC_TOLD (ctl_cmd.h), what the shared helpers
 * return when they have already told the user why they failed.
 */
#ifndef HOSTRANGE_CTL_EXIT_H
#define HOSTRANGE_CTL_EXIT_H

enum hrc_exit {
    HRC_EXIT_OK = 0,
    /* 1: the daemon cannot be reached or fails (dump, stats, reset, ping,
     * save, record); a key slower than --fail-above allows (diff, ab,
     * history detect and check); not merged (merge). */
    HRC_EXIT_DAEMON = 1,
    HRC_EXIT_SLOWER = 1,
    HRC_EXIT_NOT_MERGED = 1,
    /* 2: a usage error, everywhere. */
    HRC_EXIT_USAGE = 2,
    /* 3: a run file or a history that cannot be read (diff, history);
     * record --strict: something was lost or refused; merge: an input
     * holding a run another holds; bisect: the first bad commit named only
     * among skipped or unclear ones. */
    HRC_EXIT_UNREADABLE = 3,
    HRC_EXIT_LOST = 3,
    HRC_EXIT_DUPLICATE = 3,
    HRC_EXIT_CANDIDATES = 3,
    /* 4: diff --strict refused runs of different machines; bisect: the
     * ends do not differ. */
    HRC_EXIT_MACHINES = 4,
    HRC_EXIT_NO_CHANGE = 4,
    /* 5: any other failure (diff, ab, history, bisect). */
    HRC_EXIT_FAILED = 5,
    /* 6: refused by --min-rounds (diff, ab); too few runs in the history
     * (history check --min-history). */
    HRC_EXIT_FEW_ROUNDS = 6,
    HRC_EXIT_FEW_RUNS = 6,
    /* 7: a key not judged at its --fail-above limit (its detectable
     * change is larger). */
    HRC_EXIT_NOT_JUDGED = 7,
    /* 8: a gated key undecided after --max-rounds (diff, ab). */
    HRC_EXIT_UNDECIDED = 8,
};

#endif
