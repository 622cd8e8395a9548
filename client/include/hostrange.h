/*
 * hostrange.h: the public API of libhostrange, the hostrange client library.
 *
 * A program marks named, nested ranges of its host code. Each call site has a
 * static site descriptor, interned once on first use:
 *
 *     static hr_site s_dispatch = HR_SITE_INIT("dispatch.call");
 *
 *     hr_scope sc = hr_begin(&s_dispatch);   (explicit pair)
 *     ...
 *     hr_end(sc);
 *
 *     HR_SCOPE(dispatch, &s_dispatch);       (ended when `dispatch` goes
 *                                             out of scope)
 *
 * Samples are collected only inside a collection window (hr_window_begin /
 * hr_window_end); outside one a scope costs a load and a predictable branch.
 * The labels set by hr_labels_set (node id, operator, backend, phase) apply to
 * every sample of the windows opened while they are set. For each range the
 * library computes its inclusive time (end - begin) and self time (inclusive
 * minus the inclusive times of its direct children, never below 0), per
 * thread, and ships them in batches to the hostranged daemon whose runtime
 * directory is $HOSTRANGE_RUNTIME_DIR (see hostranged(8)).
 *
 * Compiling out: define HOSTRANGE_DISABLE before including this header (or
 * with -DHOSTRANGE_DISABLE) and every call below becomes an empty inline
 * function; the object then references no hr_ symbol and needs no library.
 *
 * Environment:
 *   HOSTRANGE=0                 turns collection off at run time
 *   HOSTRANGE_RUNTIME_DIR       the daemon's runtime directory (see
 *                               hostranged --help for the default)
 *   HOSTRANGE_CLOCK             the clock and its path, words separated
 *                               by commas: tsc or monotonic (default: the
 *                               TSC where it is invariant, else
 *                               CLOCK_MONOTONIC); fast (the default) or
 *                               ordered (see hr_clock_path); plain or
 *                               waiting, how the fast path reads the TSC
 *                               (default: waiting on AMD's processors,
 *                               plain elsewhere)
 *   HOSTRANGE_FLUSH_TIMEOUT_MS  how long a process waits at exit for its
 *                               batches to be acknowledged, through a
 *                               daemon's restart (default 2000)
 *   HOSTRANGE_BUFFER_MB         unacknowledged batches kept in memory
 *                               (default 64)
 *   HOSTRANGE_SPOOL_MB          the most a process leaves in the spool at
 *                               exit (default 64; 0: none)
 *   HOSTRANGE_LABEL             the process's name in `hostrangectl stats`
 *
 * Delivery and its bounds: samples go to a per-thread ring of 65,536
 * samples (2 MiB). Its pages are made present before the thread's first
 * pass reaches them (the first 64 KiB when the thread makes the ring,
 * outside any range of its own; the rest at its 1,024th sample, that time
 * being left out of the ranges open around it): a page fault in the first
 * pass (about 2.6 us on a KVM guest, once every 128 samples) would be
 * timed in the ranges open around it. The first use of a range name or
 * calling path (interning it) is likewise left out of the ranges open
 * around it. A background
 * thread drains the rings on its own cadence and ships them in batches that
 * the daemon acknowledges, resending what is not acknowledged. A thread
 * makes no system call until its ring is half full (it then wakes a
 * sleeping shipper). While the daemon answers, a full buffer makes the
 * program wait for it (the wait is left out of the open ranges and counted
 * as a stall in `hostrangectl stats`, never as a range), so nothing is
 * lost; a thread never waits more than 2 s at a time. While no daemon answers, what does not fit in the
 * buffer is dropped and counted (hr_counters_get, and `hostrangectl stats`
 * once a daemon is reached). At exit (return from main or exit()) a process
 * waits at most HOSTRANGE_FLUSH_TIMEOUT_MS for its last batches, as
 * hr_flush does. What is still not acknowledged then goes to the spool
 * folder of the runtime directory, with the process's final counters (at
 * most HOSTRANGE_SPOOL_MB; the rest, or all of it when no daemon ever
 * made the folder, is counted lost): the next daemon takes it, and the
 * report's `lost` shows what was lost. A forked child starts with empty
 * state and its own identity; threads that exit deliver their samples.
 *
 * Every function returning int returns 0 on success or a negative errno. The
 * library never aborts and never prints.
 */
#ifndef HOSTRANGE_H
#define HOSTRANGE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HR_PHASE_COLD 1
#define HR_PHASE_WARM 2
/* For hr_labels_set: each sample's phase by its calling path, cold for the
 * first sample of a path in the process and warm for the later ones. */
#define HR_PHASE_BY_PATH 3

/* A call site: its range name, and ids the library fills on first use
 * (the name's, and a cache of its last calling context). */
typedef struct hr_site {
    const char *name;
    uint32_t id;
    uint64_t ctx;
} hr_site;

#define HR_SITE_INIT(range_name) { (range_name), 0, 0 }

/* An open range, returned by hr_begin and consumed by hr_end. */
typedef struct hr_scope {
    void *thread;
    uint32_t depth;
    uint32_t gen;
} hr_scope;

/* A snapshot of this process's counters (hr_counters). */
typedef struct hr_counters {
    uint64_t samples;          /* samples collected */
    uint64_t delivered;        /* samples acknowledged by the daemon */
    uint64_t lost;             /* samples dropped (daemon unreachable...) */
    uint64_t out_of_order;     /* ranges still open when an enclosing
                                  range ended (discarded) */
    uint64_t open_at_window_end;
    uint64_t foreign_thread;   /* ranges ended on another thread */
    uint64_t label_in_window;  /* labels changed inside a window */
    uint64_t too_deep;         /* ranges nested deeper than the stack */
    uint64_t batches_sent;
    uint64_t spooled;          /* samples left in the spool at exit for
                                  the next daemon (see hr_flush) */
    uint64_t bad_name;         /* scopes and records not collected: their
                                  site's name is empty or longer than
                                  HR_MAX_NAME (see hr_begin) */
    uint64_t bad_label;        /* windows not collected: the labels last
                                  given to hr_labels_set were refused */
    uint64_t contexts_full;    /* calling contexts kept under
                                  HR_CONTEXTS_FULL: the table was full */
    uint64_t names_cut;        /* names a layer on the client (the NVTX
                                  tool) cut to HR_MAX_NAME bytes */
} hr_counters;

/*
 * The longest name, in bytes, not counting the terminating NUL: a range
 * name, node id, operator or backend. The daemon refuses longer ones (and
 * empty range names and node ids); the library never sends them (see
 * hr_begin and hr_labels_set).
 */
#define HR_MAX_NAME 4096

/* The calling context under which a range is kept when the process's
 * table of calling contexts is full (16,384 contexts at the top of a
 * stack, 65,536 below): its path is HR_CONTEXTS_FULL then its range name,
 * and its rows by range name stay exact. */
#define HR_CONTEXTS_FULL "(contexts full)"


#ifndef HOSTRANGE_DISABLE

#if defined(__GNUC__)
#define HR_API __attribute__((visibility("default")))
#else
#define HR_API
#endif

/* The out-of-line calls of hr_begin and hr_end are made through the GOT,
 * not the PLT, where the compiler can: a PLT entry is bound on its first
 * call, which would put the dynamic linker's work (about a microsecond)
 * inside the first range a module opens or closes. GOT entries are bound
 * when the module is loaded. */
#if defined(__has_attribute)
#if __has_attribute(noplt)
#define HR__NOPLT __attribute__((noplt))
#endif
#endif
#ifndef HR__NOPLT
#define HR__NOPLT
#endif

/* Internal: non-zero while a window is open; read by the inline calls. */
HR_API extern int hr__active;
HR_API HR__NOPLT hr_scope hr__begin(hr_site *site);
HR_API HR__NOPLT void hr__end(hr_scope sc);
/* Internal, for layers built on the client (the NVTX tool): the time from
 * hr__own_start() to hr__own_end() on the calling thread is the layer's own
 * work (a first lookup under a lock, say), left out of the thread's open
 * ranges as the library leaves out its own. */
HR_API uint64_t hr__own_start(void);
HR_API void hr__own_end(uint64_t since);
/* Internal, for layers built on the client (the NVTX tool): counts n
 * names the layer cut to HR_MAX_NAME bytes (hr_counters' names_cut). */
HR_API void hr__names_cut(uint64_t n);

/* Opens a range at `site`. Outside a window it costs one relaxed load and
 * a predictable branch. A site whose name is NULL, empty or longer than
 * HR_MAX_NAME bytes gets no id: its scopes are inactive (hr_end does
 * nothing), counted in hr_counters' bad_name, and the scopes around them
 * are collected as usual. */
static inline hr_scope hr_begin(hr_site *site)
{
    if (__builtin_expect(!__atomic_load_n(&hr__active, __ATOMIC_RELAXED), 1)) {
        hr_scope sc = { 0, 0, 0 };
        return sc;
    }
    return hr__begin(site);
}

/* Closes the range `sc` opened on this thread. */
static inline void hr_end(hr_scope sc)
{
    if (sc.thread != 0)
        hr__end(sc);
}

/*
 * Sets the labels of the samples of the next windows. The strings are copied.
 * phase is HR_PHASE_COLD or HR_PHASE_WARM, or HR_PHASE_BY_PATH: then the
 * first sample (range or record) of each calling path in the process is
 * cold and the later ones are warm (a forked child starts afresh). Inside a
 * window the call changes nothing, is counted and returns -EBUSY.
 *
 * A node id that is empty returns -EINVAL, and a node id, operator or
 * backend longer than HR_MAX_NAME bytes -ENAMETOOLONG. The labels are then
 * refused: the windows opened until labels are next set successfully are
 * not collected (hr_window_begin returns the same error and counts the
 * window in hr_counters' bad_label), and the labels of earlier windows
 * stay as they were.
 */
HR_API int hr_labels_set(const char *node_id, const char *op,
                         const char *backend, int phase);

/* Opens a collection window (-EBUSY when one is open, -ECANCELED when
 * collection is off, -EINVAL before labels are set; after refused labels,
 * their error, see hr_labels_set). */
HR_API int hr_window_begin(void);

/* Closes the window. Ranges still open on this thread are counted as errors
 * and produce no sample. */
HR_API int hr_window_end(void);

/*
 * Records a value measured by the program itself (e.g. end_to_end: a timed
 * block divided by its calls) as an inclusive-only sample of `site` under
 * the current labels. Works with or without an open window. A site whose
 * name is empty or too long returns -EINVAL or -ENAMETOOLONG (counted in
 * bad_name); after refused labels, their error.
 */
HR_API int hr_record(hr_site *site, uint64_t value_ns);

/*
 * Ships everything collected so far and waits up to timeout_ms for the
 * daemon to acknowledge it. The timeout is the whole wait: a daemon that is
 * away meanwhile (its socket missing, connections refused, no answer, as
 * while it restarts) is tried again until the deadline. Returns 0 when all
 * is delivered; otherwise, with the undelivered samples still kept,
 * -ETIMEDOUT when a daemon answered during the wait, -ENOTCONN when none
 * did. A process that has never reached a daemon gets -ENOTCONN at once
 * when none listens.
 */
HR_API int hr_flush(int timeout_ms);

/* Nanoseconds of CLOCK_MONOTONIC, the clock the TSC is calibrated against;
 * for timing blocks of calls (end_to_end) on the same time base. */
HR_API uint64_t hr_now_ns(void);

/* 1 when collection is on (built in and not turned off by HOSTRANGE=0). */
HR_API int hr_enabled(void);

/* The clock in use: "tsc" or "monotonic". */
HR_API const char *hr_clock_name(void);

/*
 * The clock path in use, "fast" or "ordered" (HOSTRANGE_CLOCK), chosen
 * once when the library starts; valid after its first call (hr_enabled,
 * say).
 *
 * fast (the default): a range's bounds are two reads of the clock, no
 * fence around the scope's own work: hr_begin reads the clock first and
 * hr_end first. How the TSC is read depends on the processor
 * (HOSTRANGE_CLOCK's plain or waiting override it):
 *   plain (the default except on AMD's processors): rdtsc, the least a
 *   scope can cost. The processor executes a plain rdtsc out of order with
 *   the work it times, so both reads run ahead of the work before them:
 *   the error depends on that work and the work around it (from about -10
 *   to +10 ns on the Intel machines measured; on AMD EPYC a leaf of 100 ns
 *   read 80 to 90 ns).
 *   waiting (the default on AMD's processors): rdtscp (lfence; rdtsc
 *   where it is missing), which reads the clock only once the work before
 *   it has executed: a range reads the same whatever work precedes it
 *   (leaves of 100 ns and more within a 10 ns step of their truth on AMD
 *   EPYC), for about 9 ns more per read there (doc/accuracy.md).
 * Either way a child scope's cost to its parent depends on the work around
 * it: a calibration's correction takes out most of the observer's cost,
 * not the last percent of a short range (hostrangectl dump flags the rows
 * where it cannot).
 *
 * ordered: the start read is rdtsc then lfence (the work cannot begin
 * before the clock is read), the end read lfence then rdtsc (the clock is
 * read only once the work has completed), and the scope also fences the
 * outer edges of its own work (the start of hr_begin, the end of hr_end),
 * so that the program's work cannot overlap it and a child costs its
 * parent the same in every context. The error is then one constant
 * (within 1 ns from 10 ns to 1 us of work), which the calibration
 * measures and corrections take out, for about three times the cost of a
 * fast scope.
 * Choose it when corrected figures (hostrangectl dump --correct-observer)
 * of short ranges, or of parents of many short children, must be right to
 * a few percent. With CLOCK_MONOTONIC the two paths run the same code
 * (the vDSO's read is ordered by the kernel's code), calibrated apart.
 *
 * A calibration (hostrange-bench --calibrate) measures the path it runs
 * with; the daemon corrects each key with the calibration of the path
 * its clients used (hostrangectl dump --fields observer names it).
 * perf/bench_clock_options (make bench) measures every way of reading
 * the clock on the machine at hand.
 */
HR_API const char *hr_clock_path(void);

/*
 * Two reads of the clock back to back, read as a range's bounds are on
 * this process's path (hr_begin's read, then hr_end's: plain or waiting
 * reads of the TSC on the fast path, fenced ones on the ordered path, or
 * CLOCK_MONOTONIC), and the time between them in ns: what one read of
 * the clock costs a range. hostrange-bench --calibrate records it as
 * calibration.timer. Valid after the library's first call, as
 * hr_clock_path.
 */
HR_API double hr_clock_pair_ns(void);

/* Copies this process's counters to *out. */
HR_API void hr_counters_get(hr_counters *out);

/* Adds n to this process's count of marks (instant events, such as NVTX
 * marks; no ranges), shown by `hostrangectl stats` as client.N.marks. */
HR_API void hr_marks_add(uint64_t n);

/* 1: the calls above are real. */
static inline int hr_compiled(void) { return 1; }

#else /* HOSTRANGE_DISABLE */

#include <time.h>

/* Always inlined, so that no hr_ symbol is left in the object. */
#define HR__OFF static inline __attribute__((always_inline, unused))

HR__OFF hr_scope hr_begin(hr_site *site)
{
    hr_scope sc = { 0, 0, 0 };
    (void)site;
    return sc;
}
HR__OFF void hr_end(hr_scope sc) { (void)sc; }
HR__OFF int hr_labels_set(const char *node_id, const char *op,
                                const char *backend, int phase)
{
    (void)node_id; (void)op; (void)backend; (void)phase;
    return 0;
}
HR__OFF int hr_window_begin(void) { return 0; }
HR__OFF int hr_window_end(void) { return 0; }
HR__OFF int hr_record(hr_site *site, uint64_t value_ns)
{
    (void)site; (void)value_ns;
    return 0;
}
HR__OFF int hr_flush(int timeout_ms) { (void)timeout_ms; return 0; }
HR__OFF uint64_t hr_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
HR__OFF int hr_enabled(void) { return 0; }
HR__OFF const char *hr_clock_name(void) { return "none"; }
HR__OFF const char *hr_clock_path(void) { return "none"; }
HR__OFF double hr_clock_pair_ns(void)
{
    uint64_t a = hr_now_ns(), b = hr_now_ns();
    return (double)(b - a);
}
HR__OFF void hr_counters_get(hr_counters *out)
{
    __builtin_memset(out, 0, sizeof *out);
}
HR__OFF void hr_marks_add(uint64_t n) { (void)n; }
HR__OFF int hr_compiled(void) { return 0; }
HR__OFF uint64_t hr__own_start(void) { return 0; }
HR__OFF void hr__own_end(uint64_t since) { (void)since; }
HR__OFF void hr__names_cut(uint64_t n) { (void)n; }

#endif /* HOSTRANGE_DISABLE */

/* Ends the scope held in *sc; used by HR_SCOPE through cleanup. */
static inline void hr_scope_cleanup(hr_scope *sc) { hr_end(*sc); }

#define HR_SCOPE(var, site) \
    hr_scope var __attribute__((cleanup(hr_scope_cleanup))) = hr_begin(site)

#ifdef __cplusplus
}
#endif

#endif /* HOSTRANGE_H */
