/*
 * The registry of the process's threads, below the public API
 * (hostrange.c) and the shipper (ship.c), which both use it and neither
 * of which owns it: the list of the threads' states (struct hr__thread)
 * and its lock, the counters of threads already retired, and the
 * process-wide counts that travel with every batch (labels set inside a
 * window, marks, windows of refused labels, contexts and names past their
 * tables).
 *
 * A thread's state is put on the list by its owner when it first takes a
 * sample (hr__reg_add) and stays there after the thread exits, until the
 * shipper has drained its ring (hr__reg_retire folds its counters into the
 * retired ones and frees it). The list is walked and changed only under
 * the lock; a thread's own fields keep the rules of client.h.
 *
 * fork: hostrange.c's hooks call each file's in a fixed order (see
 * hr__reg_fork_prepare); here the child keeps only the forking thread's
 * state, emptied, and the counts start again from zero.
 */
#include "config.h"

#include "client/client.h"

#include <stdlib.h>
#include <string.h>

int hr__active;
_Atomic uint64_t hr__g_label_in_window;
_Atomic uint64_t hr__g_marks;
_Atomic uint64_t hr__g_bad_label;
_Atomic uint64_t hr__g_contexts_full;
_Atomic uint64_t hr__g_names_cut;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hr__thread *threads;   /* under reg_lock */
static hr_counters retired;          /* under reg_lock */

void hr__reg_lock(void)
{
    pthread_mutex_lock(&reg_lock);
}

void hr__reg_unlock(void)
{
    pthread_mutex_unlock(&reg_lock);
}

struct hr__thread **hr__reg_threads(void)
{
    return &threads;
}

void hr__reg_add(struct hr__thread *t)
{
    pthread_mutex_lock(&reg_lock);
    t->next_thread = threads;
    threads = t;
    pthread_mutex_unlock(&reg_lock);
}

/* Adds the counters of thread t to *out. */
static void add_thread(hr_counters *out, const struct hr__thread *t)
{
    /* A sample dropped after a ring wait too long was collected and lost:
     * it counts in both. */
    out->samples += atomic_load(&t->head) - atomic_load(&t->c.internal) +
                    atomic_load(&t->c.lost);
    out->out_of_order += atomic_load(&t->c.out_of_order);
    out->open_at_window_end += atomic_load(&t->c.open_at_window_end);
    out->foreign_thread += atomic_load(&t->c.foreign_thread);
    out->too_deep += atomic_load(&t->c.too_deep);
    out->lost += atomic_load(&t->c.lost);
    out->bad_name += atomic_load(&t->c.bad_name);
}

static void add_counters(hr_counters *out, const hr_counters *c)
{
    out->samples += c->samples;
    out->out_of_order += c->out_of_order;
    out->open_at_window_end += c->open_at_window_end;
    out->foreign_thread += c->foreign_thread;
    out->too_deep += c->too_deep;
    out->lost += c->lost;
    out->bad_name += c->bad_name;
}

void hr__reg_retire(struct hr__thread **pp)
{
    struct hr__thread *t = *pp;
    hr_counters c;

    memset(&c, 0, sizeof c);
    add_thread(&c, t);
    add_counters(&retired, &c);
    *pp = t->next_thread;
    free(t->ring);
    free(t);
}

void hr__reg_counters(hr_counters *out)
{
    pthread_mutex_lock(&reg_lock);
    for (const struct hr__thread *t = threads; t != NULL; t = t->next_thread)
        add_thread(out, t);
    add_counters(out, &retired);
    pthread_mutex_unlock(&reg_lock);
    out->label_in_window = atomic_load(&hr__g_label_in_window);
    out->bad_label = atomic_load(&hr__g_bad_label);
    out->contexts_full = atomic_load(&hr__g_contexts_full);
    out->names_cut = atomic_load(&hr__g_names_cut);
}

void hr__names_cut(uint64_t n)
{
    atomic_fetch_add_explicit(&hr__g_names_cut, n, memory_order_relaxed);
}

void hr__reg_fork_prepare(void)
{
    pthread_mutex_lock(&reg_lock);
}

void hr__reg_fork_parent(void)
{
    pthread_mutex_unlock(&reg_lock);
}

void hr__reg_fork_child(struct hr__thread *self)
{
    struct hr__thread *t, *next;

    /* Only the forking thread lives on; it starts afresh, and the ranges it
     * had open end silently. */
    for (t = threads; t != NULL; t = next) {
        next = t->next_thread;
        if (t != self) {
            free(t->ring);
            free(t);
        }
    }
    threads = self;
    if (self != NULL) {
        self->next_thread = NULL;
        atomic_store(&self->head, 0);
        atomic_store(&self->tail, 0);
        self->next = self->check_at = self->tail_seen = 0;
        /* Its ring's pages are the parent's, copied on write: it writes
         * the first ones now (they are dead, head and tail being 0) and
         * makes the rest its own as it would a new ring's. */
        memset(self->ring, 0, HR__RING_TOUCHED);
        self->ring_ready = 0;
        memset(&self->c, 0, sizeof self->c);
        for (uint32_t i = 1; i <= self->stack.depth; i++)
            self->stack.f[i].window = HR__WINDOW_COUNTED;
    }
    /* The parent's counts are the parent's. */
    memset(&retired, 0, sizeof retired);
    atomic_store(&hr__g_label_in_window, 0);
    atomic_store(&hr__g_marks, 0);
    atomic_store(&hr__g_bad_label, 0);
    atomic_store(&hr__g_contexts_full, 0);
    atomic_store(&hr__g_names_cut, 0);
    pthread_mutex_unlock(&reg_lock);
}
