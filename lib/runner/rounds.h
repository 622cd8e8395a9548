/*
 * The rounds of record --rounds: a command recorded n times, each round
 * under a private daemon of its own and saved to a run file of its own in
 * a directory, until they are all done, one fails to leave its run file,
 * or a signal stops them (cleanup.h): the round a signal cut short is not
 * one of the rounds, and no round starts once a signal came. What a round
 * is (a record) is the caller's callback; merging the files and the
 * report are the caller's too.
 */
#ifndef HOSTRANGE_RUNNER_ROUNDS_H
#define HOSTRANGE_RUNNER_ROUNDS_H

/* What the rounds did. */
struct hrx_rounds {
    char **files;       /* the run files, files[0..made) (owned) */
    unsigned made;      /* the names made */
    unsigned done;      /* the rounds completed: files[0..done) */
    unsigned cut_in;    /* the round a signal cut short (from 1), or 0 */
    int status;         /* the first status of a round that was not 0 */
};

/*
 * Runs n rounds, round k (from 1) saved as dir/round-K.hrs by
 * round(ctx, save, &cut), which returns the round's status and sets cut
 * when a signal stopped it before its command ended. Fills *r (free it
 * with hrx_rounds_fini, whatever this returns). Returns 0; -ENOMEM; or
 * -ENOENT when a round left no run file (the rounds stop there).
 */
int hrx_rounds_run(unsigned n, const char *dir,
                   int (*round)(void *ctx, const char *save, int *cut),
                   void *ctx, struct hrx_rounds *r);

/* Frees the files' names of r. */
void hrx_rounds_fini(struct hrx_rounds *r);

#endif
