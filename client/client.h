/*
 * Internals shared by the files of libhostrange.
 *
 * Each thread that collects owns an hr__thread: its range stack and a
 * single-producer/single-consumer ring of samples. The owning thread writes
 * samples and publishes them by a release store of `head`; the shipper thread
 * (ship.c) reads them and publishes its progress by a release store of
 * `tail`. Neither side ever takes a lock for a sample. Threads are kept on
 * the registry's list (registry.c, under its lock) until their ring is
 * drained after they exit.
 *
 * Sites and label sets are interned (intern.c) into process-wide tables under
 * a mutex, on first use only; ids start at 1 and grow in the order of first
 * use, which for sites is the order their scopes were first entered.
 */
#ifndef HOSTRANGE_CLIENT_H
#define HOSTRANGE_CLIENT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "hostrange.h"
#include "client/stack.h"

#define HR__LIKELY(x) __builtin_expect(!!(x), 1)
#define HR__UNLIKELY(x) __builtin_expect(!!(x), 0)

/*
 * A sample in a ring. `kind` says what it is: a range sample (times in clock
 * ticks: its inclusive time and the inclusive times of its direct children,
 * not above it), a record (hr_record: its value in ns in incl), or the
 * library's own work, a stall (a wait for room in the ring) or a wake-up
 * of the shipper (its duration in ticks in incl). `ctx` is the calling
 * context of a range or record (intern.c).
 */
struct hr__sample {
    uint32_t ctx;    /* context id | kind << HR__KIND_SHIFT */
    uint32_t label;  /* label set id */
    uint32_t nchild; /* direct child ranges */
    uint32_t ndesc;  /* all descendant ranges */
    uint64_t incl;
    uint64_t child;
};

enum { HR__KIND_RANGE, HR__KIND_RECORD, HR__KIND_STALL, HR__KIND_WAKE };
#define HR__KIND_SHIFT 30
#define HR__CTX_MASK ((1u << HR__KIND_SHIFT) - 1)

#define HR__RING_SIZE 65536u /* samples per thread; a power of two */
/* The owner wakes a sleeping shipper when its ring holds this many. */
#define HR__RING_WAKE (HR__RING_SIZE / 2)

/* A direct-mapped cache of calling contexts per thread (intern.c). */
#define HR__CTX_CACHE 256u

struct hr__counters {
    _Atomic uint64_t out_of_order;
    _Atomic uint64_t open_at_window_end;
    _Atomic uint64_t foreign_thread;
    _Atomic uint64_t too_deep;
    _Atomic uint64_t lost; /* samples dropped after a ring wait too long */
    _Atomic uint64_t internal; /* ring entries of the library's own work */
    _Atomic uint64_t bad_name; /* scopes of sites whose name is refused */
};

struct hr__thread {
    /* Written and read by the owner only. */
    struct hr__stack stack;
    struct hr__sample *ring;
    uint64_t next;         /* the owner's copy of head */
    uint64_t check_at;     /* at this head, look at the shipper's progress */
    uint64_t tail_seen;    /* the owner's last look at tail */
    /* (parent context, site id) -> context, owner only. */
    uint64_t ctx_key[HR__CTX_CACHE];
    uint32_t ctx_val[HR__CTX_CACHE];
    /* Published by the owner, read by the shipper. */
    _Alignas(64) _Atomic uint64_t head;
    struct hr__counters c;
    _Atomic int exited;    /* the owner is gone; free once drained */
    struct hr__thread *next_thread;
    /* Written by the shipper. */
    _Alignas(64) _Atomic uint64_t tail;
    /* The owner's: the rest of its ring was made present (ring_slow). */
    int ring_ready;
};

/* A ring is allocated on a page boundary. The thread writes its first
 * HR__RING_TOUCHED bytes when it makes it; once it has taken
 * HR__RING_READY_AT samples (half of those) it makes the rest present. A
 * thread that takes fewer samples holds only the pages it uses. */
#define HR__RING_ALIGN 4096u
#define HR__RING_TOUCHED (64u * 1024u)
#define HR__RING_READY_AT (HR__RING_TOUCHED / sizeof(struct hr__sample) / 2)

/* The window's state (hostrange.c), read on the hot path. */
extern _Atomic uint32_t hr__g_window; /* generation of the current window */
extern _Atomic uint32_t hr__g_label;  /* label set of the current window */
/* With HR_PHASE_BY_PATH: the warm twin of hr__g_label (which is then the
 * cold one); 0 otherwise. */
extern _Atomic uint32_t hr__g_label_warm;
/* 0, or the error of the labels last given to hr_labels_set (refused):
 * windows are then not collected, and counted in hr__g_bad_label. */
extern _Atomic int hr__g_labels_refused;

/*
 * registry.c: the process's threads and counts, below hostrange.c and
 * ship.c. hr__active (hostrange.h: a window is open) is defined there too.
 * hr__reg_threads gives the head of the list of threads (newest first),
 * to walk or to unlink from, with the lock held; hr__reg_retire unlinks
 * *pp, adds its counters to those of the retired threads and frees it
 * (lock held). hr__reg_counters adds the counters of every thread, live
 * or retired, and label_in_window to *out (takes the lock).
 */
extern _Atomic uint64_t hr__g_label_in_window; /* labels set in a window */
extern _Atomic uint64_t hr__g_marks;           /* hr_marks_add */
/* Windows not collected for refused labels (hr__g_labels_refused). */
extern _Atomic uint64_t hr__g_bad_label;
/* Calling contexts kept under HR_CONTEXTS_FULL, and names under
 * HR__NAMES_FULL, for want of room in their tables (intern.c). */
extern _Atomic uint64_t hr__g_contexts_full;
extern _Atomic uint64_t hr__g_names_cut; /* hr__names_cut */
void hr__reg_lock(void);
void hr__reg_unlock(void);
struct hr__thread **hr__reg_threads(void);
void hr__reg_add(struct hr__thread *t);
void hr__reg_retire(struct hr__thread **pp);
void hr__reg_counters(hr_counters *out);

/*
 * fork. Each file resets its own state in its own hooks, which
 * hostrange.c's pthread_atfork handlers call in this order: prepare, the
 * shipper (parks it and takes its lock), the intern tables (their lock),
 * the registry (its lock); parent and child, the other way round (the
 * registry first). In the child, the registry keeps only `self`, the
 * forking thread, emptied; the intern tables forget which calling
 * contexts were seen (a child's first samples are cold); the shipper
 * starts with no batches, counts or identity, and no thread.
 */
void hr__reg_fork_prepare(void);
void hr__reg_fork_parent(void);
void hr__reg_fork_child(struct hr__thread *self);
void hr__intern_fork_prepare(void);
void hr__intern_fork_parent(void);
void hr__intern_fork_child(void);
void hr__ship_fork_prepare(void);
void hr__ship_fork_parent(void);
void hr__ship_fork_child(void);

/* clock.c */
extern int hr__g_tsc;
/* The clock path (HOSTRANGE_CLOCK): 0 fast (plain reads, no fences), 1
 * ordered (each read fenced with the work, and the scope's own work fenced
 * at its outer edges). hr__g_fenced: the ordered path on the TSC, the one
 * whose code differs (CLOCK_MONOTONIC's reads are ordered already). Set
 * once by hr__clock_init, before any scope. */
extern int hr__g_ordered;
extern int hr__g_fenced;
/* The fast path on the TSC (x86 only): hr__begin and hr__end take their
 * leanest code (hostrange.c). Its value says how they read the clock
 * (hr__fast_read): HR__READ_PLAIN, HR__READ_RDTSCP or HR__READ_LFENCE;
 * 0 off the fast path. */
extern int hr__g_fast;
#define HR__READ_PLAIN 1  /* a plain rdtsc */
#define HR__READ_RDTSCP 2 /* rdtscp: waits for the work before it */
#define HR__READ_LFENCE 3 /* lfence; rdtsc, where rdtscp is missing */
void hr__clock_init(void);
/* Converts ticks of the clock in use to nanoseconds. */
uint64_t hr__clock_ticks_to_ns(uint64_t ticks);
/* The conversion factor: ns = ticks * mult >> 32 (calibrates once). */
uint64_t hr__clock_mult(void);

static inline uint64_t hr__ticks_ns(uint64_t ticks, uint64_t mult)
{
    return (uint64_t)(((unsigned __int128)ticks * mult) >> 32);
}
static inline uint64_t hr__clock_now(void);
static inline uint64_t hr__clock_start(int fenced);
static inline uint64_t hr__clock_end(int fenced);
/* The smallest step of the clock observed, in ns (measured once, by the
 * shipper, when it calibrates the TSC; 0 before). */
double hr__clock_step(void);
/* The step most of the n blocks of reads agree on: the value most of g[]
 * hold, 0s left out (a tie: the smaller). A read that lands on another
 * processor, whose TSC advances in steps of another phase, or a TSC
 * adjusted by the hypervisor, makes one block's divisor a single tick;
 * the others outvote it. */
uint64_t hr__clock_step_vote(const uint64_t *g, size_t n);
/* How the reads are ordered with the work: "rdtsc" (the TSC, fast path),
 * "rdtsc;lfence..lfence;rdtsc" (the TSC, ordered path) or "vdso"
 * (CLOCK_MONOTONIC, ordered by the kernel's code). */
const char *hr__clock_order(void);

/* intern.c: tables of names, label sets and calling contexts. */

/* The id of a site whose name is refused (NULL, empty, or longer than
 * HR_MAX_NAME): its scopes are inactive and counted (bad_name). It never
 * reaches a context or a batch: hr__ctx_slow refuses it. */
#define HR__SITE_BAD UINT32_MAX
/* The most distinct range names a process keeps; past it, a new name's
 * ranges are kept under the name HR__NAMES_FULL, and counted in
 * contexts_full. */
#define HR__MAX_SITES 262144u
#define HR__NAMES_FULL "(names full)"
/* The site's id, interned on first use: HR__SITE_BAD for a refused name,
 * 0 on ENOMEM. */
uint32_t hr__site_intern(hr_site *site);
/* 0 when `name` is a range name the daemon takes, else -EINVAL (NULL or
 * empty) or -ENAMETOOLONG. */
int hr__name_check(const char *name);

/* The most calling contexts a process keeps; past it, a range is kept under
 * the context of its name alone (at the top of a stack), and counted. */
#define HR__MAX_CONTEXTS 65536u
/* Contexts of names alone, besides: one per range name. Past it, a range
 * at the top of a stack (or one that found the table full) is kept under
 * an overflow context: HR_CONTEXTS_FULL, then its name. The overflow
 * context of site s has id HR__CTX_OVER_BASE + s and no entry in the
 * tables (hr__ctx_get computes it), so that its flat rows stay exact
 * whatever the number of names; it is counted in hr__g_contexts_full. */
#define HR__MAX_ROOT_CONTEXTS 16384u

struct hr__thread;
/*
 * The calling context of site `id` entered under context `parent` (0: at
 * the top of the thread's stack): its id, interned on first use, or 0 when
 * no context could be made (the range is then not sampled). The common case
 * (the site was last entered under the same parent) is one load.
 */
uint32_t hr__ctx_slow(struct hr__thread *t, hr_site *site, uint32_t id,
                      uint32_t parent);
/* The context of `site` under `parent` if it is the one the site was last
 * entered in (one load), else 0. */
static inline uint32_t hr__ctx_cached(const hr_site *site, uint32_t parent)
{
    uint64_t c = __atomic_load_n(&site->ctx, __ATOMIC_ACQUIRE);

    return (uint32_t)(c >> 32) == parent ? (uint32_t)c : 0;
}
static inline uint32_t hr__ctx(struct hr__thread *t, hr_site *site,
                               uint32_t id, uint32_t parent)
{
    uint32_t c = hr__ctx_cached(site, parent);

    if (__builtin_expect(c != 0, 1))
        return c;
    return hr__ctx_slow(t, site, id, parent);
}
/*
 * One bit per context (id - 1): set once a sample of the context was taken
 * (HR_PHASE_BY_PATH). hr__ctx_first returns 1 for the first caller of each
 * context, 0 for later ones; one relaxed load once the bit is set.
 */
#define HR__CTX_CAP (HR__MAX_CONTEXTS + HR__MAX_ROOT_CONTEXTS)
/* Entries of the tables: HR__CTX_CAP and the root context of
 * HR_CONTEXTS_FULL. Overflow contexts come after them. */
#define HR__CTX_OVER_BASE (HR__CTX_CAP + 1u)
#define HR__CTX_IDS (HR__CTX_OVER_BASE + HR__MAX_SITES)
_Static_assert(HR__CTX_IDS <= HR__CTX_MASK, "context ids fit a sample");
extern _Atomic uint64_t hr__g_ctx_seen[(HR__CTX_IDS + 63) / 64];
static inline int hr__ctx_first(uint32_t ctx)
{
    _Atomic uint64_t *w = &hr__g_ctx_seen[(ctx - 1) >> 6];
    uint64_t bit = 1ull << ((ctx - 1) & 63);

    if (HR__LIKELY(atomic_load_explicit(w, memory_order_relaxed) & bit))
        return 0;
    return !(atomic_fetch_or_explicit(w, bit, memory_order_relaxed) & bit);
}
/* The label of a sample of context `ctx` in label set `label` (the
 * window's): its warm twin once the context was seen, under
 * HR_PHASE_BY_PATH. */
static inline uint32_t hr__label_of(uint32_t label, uint32_t ctx)
{
    uint32_t warm = atomic_load_explicit(&hr__g_label_warm,
                                         memory_order_relaxed);

    if (HR__UNLIKELY(warm != 0) && !hr__ctx_first(ctx))
        return warm;
    return label;
}
/* The parent context and site id of context `ctx` (which must exist). No
 * lock: entries are written once, before their id is published. */
void hr__ctx_get(uint32_t ctx, uint32_t *parent, uint32_t *site);
/* Contexts not interned for want of room, so far. */
uint64_t hr__ctx_dropped(void);
/* Returns the label id for the tuple, or 0 on allocation failure. */
uint32_t hr__label_intern(const char *node_id, const char *op,
                          const char *backend, unsigned phase);
/* Copies out the name of site `id` / the strings of label set `id` while the
 * tables are locked (callers hold hr__intern_lock). */
void hr__intern_lock(void);
void hr__intern_unlock(void);
const char *hr__site_name(uint32_t id);
uint32_t hr__site_count(void);
int hr__label_get(uint32_t id, const char **node_id, const char **op,
                  const char **backend, unsigned *phase);
uint32_t hr__label_count(void);

/* ship.c: the shipper thread. */
int hr__ship_start(void);
int hr__ship_started(void);
void hr__ship_wake(void);
/* Wakes the shipper only when it sleeps for want of work (no cadence). */
void hr__ship_kick(void);
/* Asks the shipper to ship everything and waits; see hr_flush. */
int hr__ship_flush(int timeout_ms);
void hr__ship_stop(int timeout_ms);
/* The process's counters (hr_counters_get): the shipper's (delivered,
 * lost, batches, spooled) and the registry's. */
void hr__ship_counters(hr_counters *out);
extern _Atomic int hr__g_ship_sleeping;

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif
#include <time.h>

static inline uint64_t hr__clock_now(void)
{
#if defined(__x86_64__) || defined(__i386__)
    if (HR__LIKELY(hr__g_tsc))
        return __rdtsc();
#endif
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The time since `since` (an hr__clock_now reading) was the library's own
 * work on thread t: it is left out of t's open ranges, whose begin times
 * move later by as much. Nothing when t is NULL. */
static inline void hr__leave_out(struct hr__thread *t, uint64_t since)
{
    if (t != NULL)
        hr__stack_shift(&t->stack, hr__clock_now() - since);
}

/*
 * The reads that bound a range. On the fast path (fenced 0) they are
 * plain reads: the cheapest, but the processor may execute them out of
 * order with the work they time, so their error depends a little on that
 * work (hostrange.h). On the ordered path with the TSC (fenced 1: only
 * where hr__g_fenced is set) the start read is followed by lfence (the
 * range's work cannot begin before the clock is read) and the end read
 * preceded by one (the clock is read only once the work has completed):
 * their bias is then a constant (the calibration's empty_ns).
 * CLOCK_MONOTONIC's vDSO read is ordered already. `fenced` is a constant
 * where these are inlined, so each path has its own code.
 */
static inline uint64_t hr__clock_start(int fenced)
{
#if defined(__x86_64__) || defined(__i386__)
    if (fenced) {
        uint64_t t = __rdtsc();

        _mm_lfence();
        return t;
    }
#endif
    (void)fenced;
    return hr__clock_now();
}

static inline uint64_t hr__clock_end(int fenced)
{
#if defined(__x86_64__) || defined(__i386__)
    if (fenced) {
        _mm_lfence();
        return __rdtsc();
    }
#endif
    (void)fenced;
    return hr__clock_now();
}

/*
 * The fast path's reads. A plain rdtsc may execute before the work in
 * front of it has completed: on AMD's processors it runs ahead of a
 * dependent chain by one or two 10 ns steps, so that an end read cuts the
 * range's work short (a leaf of 100 ns read 80 ns) and a start read
 * taken just after the parent's work counts that work's tail in the
 * child (a leaf read 20 ns long once its end read waited). rdtscp (or
 * lfence; rdtsc) reads the clock only once the work before it has
 * executed: a range then reads the same whatever work comes before it
 * (doc/accuracy.md). Which read is chosen once by hr__clock_init
 * (processor, HOSTRANGE_CLOCK): the branch always goes the same way.
 */
static inline uint64_t hr__fast_read(void)
{
#if defined(__x86_64__) || defined(__i386__)
    if (hr__g_fast == HR__READ_RDTSCP) {
        unsigned aux;

        return __rdtscp(&aux);
    }
    if (hr__g_fast == HR__READ_LFENCE) {
        _mm_lfence();
        return __rdtsc();
    }
    return __rdtsc();
#else
    return hr__clock_now();
#endif
}

/*
 * The ordered path's fence around a scope's own work: at the start of
 * hr_begin's work and at the end of hr_end's, so that the program's work
 * before and after a scope cannot overlap it (out of order) and a scope
 * costs its parent the same in every context: the cost the calibration
 * measures. Nothing on the fast path.
 */
static inline void hr__clock_fence(int fenced)
{
#if defined(__x86_64__) || defined(__i386__)
    if (fenced)
        _mm_lfence();
#endif
    (void)fenced;
}

/* Adds 1 to a counter written only by its owner. */
static inline void hr__bump(_Atomic uint64_t *c)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

#endif
