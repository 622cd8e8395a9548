/*
 * The public API: scopes, windows, labels, records, flush, counters.
 *
 * Hot path: hr_begin and hr_end take no lock, make no system call and
 * allocate nothing once a thread is attached; they reach the thread's state
 * through one initial-exec TLS pointer. A sample is written to the thread's
 * ring, which the shipper drains on its own cadence; no system call is made
 * until the ring is half full. Then, if the shipper sleeps, the thread wakes
 * it; if the ring is full, the thread waits for it. Either is measured,
 * left out of the open ranges (their begin times move later by as much)
 * and put in the ring as the library's own work (a wake-up or a stall),
 * which reaches the daemon's stats, never the report's rows.
 */
#include "config.h"

#include "client/client.h"
#include "proto/protocol.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The public phases are the wire's: tied here, on the client's side, so
 * that the protocol never includes the public header. */
_Static_assert(HR_PHASE_COLD == HRP_PHASE_COLD, "HR_PHASE_COLD");
_Static_assert(HR_PHASE_WARM == HRP_PHASE_WARM, "HR_PHASE_WARM");
_Static_assert(HR_MAX_NAME == HRP_MAX_STRING, "HR_MAX_NAME");

_Atomic uint32_t hr__g_window;
_Atomic uint32_t hr__g_label;
_Atomic uint32_t hr__g_label_warm;
_Atomic int hr__g_labels_refused;

static __thread struct hr__thread *tls_thread
    __attribute__((tls_model("initial-exec")));

static int g_enabled;          /* HOSTRANGE is not 0 */
static pthread_key_t g_key;    /* to learn that a thread exits */
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_init_ok;

/* A thread exits: the shipper delivers what its ring holds, then frees it. */
static void thread_exit(void *arg)
{
    struct hr__thread *t = arg;

    tls_thread = NULL;
    atomic_store_explicit(&t->exited, 1, memory_order_release);
    hr__ship_wake();
}

static void at_exit(void)
{
    long timeout = hrp_env_number(getenv("HOSTRANGE_FLUSH_TIMEOUT_MS"),
                                  LONG_MIN, INT_MAX, 2000);

    __atomic_store_n(&hr__active, 0, __ATOMIC_SEQ_CST);
    hr__ship_stop(timeout < 0 ? 0 : (int)timeout);
}

/* fork: each file resets its own state in its own hooks, called in the
 * order client.h gives. The window's state here is kept: a window open at
 * the fork is open in both processes. */
static void fork_prepare(void)
{
    hr__ship_fork_prepare();
    hr__intern_fork_prepare();
    hr__reg_fork_prepare();
}

static void fork_parent(void)
{
    hr__reg_fork_parent();
    hr__intern_fork_parent();
    hr__ship_fork_parent();
}

static void fork_child(void)
{
    hr__reg_fork_child(tls_thread);
    hr__intern_fork_child();
    hr__ship_fork_child();
}

static void init_once(void)
{
    const char *env = getenv("HOSTRANGE");

    g_enabled = !(env != NULL && strcmp(env, "0") == 0);
    hr__clock_init();
    /* The first sample of each calling path sets its bit here (under
     * HR_PHASE_BY_PATH) after its range's end read: its pages are written
     * now, so that no first sample's parent is charged with their faults. */
    for (size_t i = 0; i < sizeof hr__g_ctx_seen / sizeof hr__g_ctx_seen[0];
         i += 512)
        atomic_fetch_or_explicit(&hr__g_ctx_seen[i], 0, memory_order_relaxed);
    if (pthread_key_create(&g_key, thread_exit) != 0)
        return;
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    atexit(at_exit);
    g_init_ok = 1;
}

static int init(void)
{
    pthread_once(&g_once, init_once);
    return g_init_ok ? 0 : -ENOMEM;
}

/*
 * Writes to every page of [p, p + n), so that the calling thread takes the
 * page faults of its state here, where no range of its own is open (it
 * has none yet), and not inside its ranges: a fault costs about 2.6 us on
 * a KVM guest, against a scope's 60 ns. The ring above all: on its first
 * pass one sample in 128 starts a page, and the fault would land in the
 * self time of the parent of the range being closed and in the inclusive
 * time of every range open around it, the cold ranges of a test first.
 * The thread writes its state and the first HR__RING_TOUCHED bytes of its
 * ring here; it makes the rest present once it has used half of those
 * (ring_slow, ring_ready). Writing all of it here, the kernel's zeroing of
 * 2 MiB evicted the program's data from the core's caches just before its
 * first cold call, which became 0.1 to 0.5 us slower, and a thread that
 * takes a few samples held 2 MiB. Volatile, so that the compiler cannot
 * fold the writes into an allocation already zero.
 */
static void touch_pages(void *p, size_t n)
{
    volatile unsigned char *b = p;
    long page = sysconf(_SC_PAGESIZE);
    size_t step = page > 0 && page <= 65536 ? (size_t)page : 4096;

    for (size_t i = 0; i < n; i += step)
        b[i] = b[i];
    if (n > 0)
        b[n - 1] = b[n - 1];
}

/* A site's first use interns its name (a lock and a copy of the name): the
 * library's own work, measured and left out of the thread's open ranges
 * (their begin times move later by as much), as hr__ctx_slow does for a
 * new calling context. */
static __attribute__((noinline)) uint32_t site_first_use(struct hr__thread *t,
                                                         hr_site *site)
{
    uint64_t s0 = hr__clock_now();
    uint32_t id = hr__site_intern(site);

    hr__leave_out(t, s0);
    return id;
}

uint64_t hr__own_start(void)
{
    return hr__clock_now();
}

void hr__own_end(uint64_t since)
{
    hr__leave_out(tls_thread, since);
}

/* Creates and registers the calling thread's state. Slow path. */
static __attribute__((noinline)) struct hr__thread *thread_attach(void)
{
    struct hr__thread *t;

    if (init() != 0)
        return NULL;
    t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    if (posix_memalign((void **)&t->ring, HR__RING_ALIGN,
                       HR__RING_SIZE * sizeof *t->ring) != 0) {
        free(t);
        return NULL;
    }
    touch_pages(t, sizeof *t);
    touch_pages(t->ring, HR__RING_TOUCHED);
    pthread_setspecific(g_key, t);
    hr__reg_add(t);
    tls_thread = t;
    return t;
}

/* How long a thread waits for room in its ring before it drops samples. */
#define HR__STALL_LIMIT_MS 2000
/* Past half full, how many samples between looks at the shipper. */
#define HR__CHECK_EVERY 1024u

/*
 * Waits until the ring has room for the sample and for the stall's own
 * sample. Writes the ticks spent waiting to *waited. Returns 0, or -EAGAIN
 * when the shipper made no room within HR__STALL_LIMIT_MS.
 */
static int ring_wait(struct hr__thread *t, uint64_t *waited)
{
    uint64_t s0 = hr__clock_now();
    struct timespec pause = { 0, 20000 };
    int rounds = 0, rc = 0;

    if (!hr__ship_started())
        hr__ship_start();
    for (;;) {
        t->tail_seen = atomic_load_explicit(&t->tail, memory_order_acquire);
        if (t->next - t->tail_seen <= HR__RING_SIZE - 2)
            break;
        if (++rounds > HR__STALL_LIMIT_MS * 1000 / 20) {
            rc = -EAGAIN;
            break;
        }
        hr__ship_wake();
        nanosleep(&pause, NULL);
    }
    *waited = hr__clock_now() - s0;
    return rc;
}

static inline void ring_write(struct hr__thread *t, uint32_t ctx_kind,
                              uint32_t label, uint32_t nchild, uint32_t ndesc,
                              uint64_t incl, uint64_t child)
{
    struct hr__sample *s = &t->ring[t->next & (HR__RING_SIZE - 1)];

    s->ctx = ctx_kind;
    s->label = label;
    s->nchild = nchild;
    s->ndesc = ndesc;
    s->incl = incl;
    s->child = child;
    t->next++;
    atomic_store_explicit(&t->head, t->next, memory_order_release);
}

/*
 * Makes the rest of the ring present, past the part the thread wrote when
 * it made it: the kernel zeroes about 2 MiB (about 1.2 ms on a KVM guest),
 * left out of the open ranges (their begin times move later by as much),
 * where the first pass would have taken a fault inside them every 128
 * samples. Without MADV_POPULATE_WRITE (Linux before 5.14) the faults stay
 * where they were.
 */
static __attribute__((noinline)) void ring_ready(struct hr__thread *t)
{
    uint64_t s0 = hr__clock_now();

    t->ring_ready = 1;
#ifdef MADV_POPULATE_WRITE
    if (madvise((char *)t->ring + HR__RING_TOUCHED,
                HR__RING_SIZE * sizeof *t->ring - HR__RING_TOUCHED,
                MADV_POPULATE_WRITE) != 0) {
        /* An older kernel: the faults stay in the first pass. */
    }
#endif
    hr__leave_out(t, s0);
}

/*
 * The ring is past the point where the owner looks at the shipper's
 * progress. Wakes a sleeping shipper when the ring is half full, waits when
 * it is full (the wait is left out of the open ranges and recorded as a
 * stall), and sets the next point to look. Returns 0, or -EAGAIN when the
 * sample must be dropped.
 */
static __attribute__((noinline)) int ring_slow(struct hr__thread *t,
                                               uint32_t label)
{
    uint64_t used, s0, waited;

    if (HR__UNLIKELY(!t->ring_ready) && t->next >= HR__RING_READY_AT)
        ring_ready(t);
    t->tail_seen = atomic_load_explicit(&t->tail, memory_order_acquire);
    used = t->next - t->tail_seen;
    if (used >= HR__RING_SIZE - 2) {
        int rc = ring_wait(t, &waited);
        hr__stack_shift(&t->stack, waited);
        if (rc != 0) {
            hr__bump(&t->c.lost);
            return rc;
        }
        ring_write(t, (uint32_t)HR__KIND_STALL << HR__KIND_SHIFT, label, 0,
                   0, waited, 0);
        hr__bump(&t->c.internal);
        used = t->next - t->tail_seen;
    } else if (used >= HR__RING_WAKE &&
               atomic_load_explicit(&hr__g_ship_sleeping,
                                    memory_order_relaxed)) {
        /* Waking the shipper is a system call: measured, left out of the
         * open ranges and recorded as a wake-up. */
        s0 = hr__clock_now();
        hr__ship_wake();
        waited = hr__clock_now() - s0;
        hr__stack_shift(&t->stack, waited);
        ring_write(t, (uint32_t)HR__KIND_WAKE << HR__KIND_SHIFT, label, 0, 0,
                   waited, 0);
        hr__bump(&t->c.internal);
        used++;
    }
    if (used < HR__RING_WAKE)
        t->check_at = t->tail_seen + HR__RING_WAKE;
    else
        t->check_at = t->next + HR__CHECK_EVERY < t->tail_seen + HR__RING_SIZE - 2
                          ? t->next + HR__CHECK_EVERY
                          : t->tail_seen + HR__RING_SIZE - 2;
    if (!t->ring_ready && t->check_at > HR__RING_READY_AT)
        t->check_at = HR__RING_READY_AT;
    return 0;
}

static inline void ring_put(struct hr__thread *t, uint32_t ctx_kind,
                            uint32_t label, uint32_t nchild, uint32_t ndesc,
                            uint64_t incl, uint64_t child)
{
    if (HR__UNLIKELY(t->next >= t->check_at) && ring_slow(t, label) != 0)
        return;
    ring_write(t, ctx_kind, label, nchild, ndesc, incl, child);
}

/*
 * hr_begin inside a window, fenced or not (the ordered path on the TSC; a
 * constant where it is inlined: each path has its own code). `t0`, when
 * `have_t0` is set, is the start read the fast path already took.
 *
 * Fenced, the clock is read last, so that the bookkeeping is outside the
 * range. Plain (the fast path), it is read first: a plain read executes
 * as soon as the processor has decoded it, ahead of the work before it
 * still in flight, by about as much as the instructions between that work
 * and the read leave room for. hr_end reads the clock first, right after
 * the range's work; a start read after the push would have the previous
 * range's end and the push before it, and run less far ahead of the work
 * before it than the end read does, so that a short range would read up
 * to two clock steps short. Read first, the two reads run about as far
 * ahead, and the push, which does not depend on the range's work, executes
 * beside it. The library's own work before the range (a thread's first
 * scope, a site's or a calling path's first use) is left out by reading
 * again.
 */
static inline __attribute__((always_inline)) hr_scope
begin_path(hr_site *site, int fenced, uint64_t t0, int have_t0)
{
    hr_scope sc = { 0, 0, 0 };
    struct hr__thread *t = tls_thread;
    uint32_t id, ctx, parent;

    hr__clock_fence(fenced);
    if (!fenced && !have_t0)
        t0 = hr__clock_now();
    if (HR__UNLIKELY(t == NULL)) {
        if ((t = thread_attach()) == NULL)
            return sc;
        t0 = hr__clock_now();
    }
    id = __atomic_load_n(&site->id, __ATOMIC_ACQUIRE);
    if (HR__UNLIKELY(id == 0)) {
        if ((id = site_first_use(t, site)) == 0)
            return sc;
        t0 = hr__clock_now();
    }
    parent = t->stack.f[t->stack.depth].range;
    ctx = hr__ctx_cached(site, parent);
    if (HR__UNLIKELY(ctx == 0)) {
        ctx = hr__ctx_slow(t, site, id, parent);
        if (ctx == 0)
            return sc;
        t0 = hr__clock_now();
    }
    sc.depth = hr__stack_push(&t->stack, ctx,
                              atomic_load_explicit(&hr__g_window,
                                                   memory_order_relaxed),
                              t0, &sc.gen);
    if (HR__UNLIKELY(sc.depth == 0)) {
        hr__bump(&t->c.too_deep);
        return sc;
    }
    sc.thread = t;
    if (fenced)
        t->stack.f[sc.depth].t0 = hr__clock_start(fenced);
    return sc;
}

/* The general cases of hr__begin, out of line so that its fast path keeps
 * no registers of its own: everything but a cached context on an attached
 * thread on the fast path (t0: its start read, 0 on the other paths), and
 * the ordered path. */
static __attribute__((noinline)) hr_scope begin_slow(hr_site *site,
                                                     uint64_t t0, int have_t0)
{
    return begin_path(site, 0, t0, have_t0);
}

static __attribute__((noinline)) hr_scope begin_fenced(hr_site *site)
{
    return begin_path(site, 1, 0, 0);
}

/*
 * The path is chosen once (hr__clock_init, before any window opens): the
 * branch on it always goes the same way. The fast path on the TSC is the
 * common case and has its own code: the read, then the thread, the
 * site's cached calling context checked against the innermost open frame,
 * and the push; anything else (the thread's first scope, a site's first
 * use, a calling context not the site's last, a full stack) goes to
 * begin_slow with the read already taken.
 */
hr_scope hr__begin(hr_site *site)
{
    if (HR__UNLIKELY(!__atomic_load_n(&hr__active, __ATOMIC_RELAXED))) {
        hr_scope sc = { 0, 0, 0 };
        return sc;
    }
#if defined(__x86_64__) || defined(__i386__)
    if (HR__LIKELY(hr__g_fast)) {
        uint64_t t0 = hr__fast_read();
        struct hr__thread *t = tls_thread;
        uint64_t c = __atomic_load_n(&site->ctx, __ATOMIC_ACQUIRE);
        struct hr__frame *f;
        uint32_t d;
        hr_scope sc;

        if (HR__UNLIKELY(t == NULL))
            return begin_slow(site, t0, 1);
        d = t->stack.depth;
        if (HR__UNLIKELY((uint32_t)(c >> 32) != t->stack.f[d].range ||
                         (uint32_t)c == 0 || d == HR__MAX_DEPTH))
            return begin_slow(site, t0, 1);
        f = &t->stack.f[d + 1];
        sc.gen = t->stack.serial + 1;
        t->stack.serial = sc.gen;
        f->t0 = t0;
        f->child = 0;
        f->range = (uint32_t)c;
        f->serial = sc.gen;
        f->window = atomic_load_explicit(&hr__g_window, memory_order_relaxed);
        f->nchild = 0;
        f->ndesc = 0;
        t->stack.depth = d + 1;
        sc.thread = t;
        sc.depth = d + 1;
        return sc;
    }
#endif
    if (HR__UNLIKELY(hr__g_fenced))
        return begin_fenced(site);
    return begin_slow(site, 0, 0);
}

/* hr_end of a scope that was opened in a window, fenced or not, its end
 * read t1 taken. The clock is read first, so that the bookkeeping is
 * outside the range. */
static inline __attribute__((always_inline)) void end_path(hr_scope sc,
                                                           int fenced,
                                                           uint64_t t1)
{
    struct hr__thread *t = tls_thread;
    uint32_t ctx, window, nchild, ndesc, abandoned;
    uint64_t incl, self;

    if (HR__UNLIKELY(t != sc.thread)) {
        /* Only the owner writes a thread's counters: count it here. */
        if (t != NULL || (t = thread_attach()) != NULL)
            hr__bump(&t->c.foreign_thread);
        return;
    }
    if (HR__UNLIKELY(hr__stack_pop(&t->stack, sc.depth, sc.gen, t1, &incl,
                                   &self, &ctx, &window, &nchild, &ndesc,
                                   &abandoned) != HR__POP_OK)) {
        /* Its frame was discarded, and counted, when an enclosing range
         * ended before it. */
        return;
    }
    if (HR__UNLIKELY(abandoned != 0)) {
        atomic_fetch_add_explicit(&t->c.out_of_order, abandoned,
                                  memory_order_relaxed);
    }
    if (HR__UNLIKELY(window != atomic_load_explicit(&hr__g_window,
                                                    memory_order_relaxed) ||
                     !__atomic_load_n(&hr__active, __ATOMIC_RELAXED))) {
        if (window != HR__WINDOW_COUNTED)
            hr__bump(&t->c.open_at_window_end);
        return;
    }
    ring_put(t, ctx,
             hr__label_of(atomic_load_explicit(&hr__g_label,
                                               memory_order_relaxed), ctx),
             nchild, ndesc, incl, incl - self);
    hr__clock_fence(fenced);
}

/* The general cases of hr__end, out of line (see begin_slow): the fast
 * path's scopes that are not the innermost, not of the current window or
 * whose sample must look at the shipper first (t1: their end read), and
 * the other paths. */
static __attribute__((noinline)) void end_slow(hr_scope sc, uint64_t t1)
{
    end_path(sc, 0, t1);
}

static __attribute__((noinline)) void end_other(hr_scope sc)
{
    if (hr__g_fenced)
        end_path(sc, 1, hr__clock_end(1));
    else
        end_path(sc, 0, hr__clock_end(0));
}

/*
 * The fast path on the TSC: the read, then the innermost frame of the
 * scope's own thread popped, its parent (the sentinel frame at the top of
 * the stack) told, and the sample written to the ring, with no other
 * branch than the checks that send everything else to end_slow before
 * anything is changed.
 */
void hr__end(hr_scope sc)
{
    if (HR__UNLIKELY(sc.thread == NULL))
        return;
#if defined(__x86_64__) || defined(__i386__)
    if (HR__LIKELY(hr__g_fast)) {
        uint64_t t1 = hr__fast_read(), in, child;
        struct hr__thread *t = tls_thread;
        uint32_t d = sc.depth;
        struct hr__frame *f;

        if (HR__UNLIKELY(t != sc.thread || d != t->stack.depth))
            return end_slow(sc, t1);
        f = &t->stack.f[d];
        if (HR__UNLIKELY(f->serial != sc.gen ||
                         f->window != atomic_load_explicit(
                                          &hr__g_window,
                                          memory_order_relaxed) ||
                         !__atomic_load_n(&hr__active, __ATOMIC_RELAXED) ||
                         t->next >= t->check_at))
            return end_slow(sc, t1);
        {
            uint32_t label = atomic_load_explicit(&hr__g_label,
                                                  memory_order_relaxed);
            uint32_t warm = atomic_load_explicit(&hr__g_label_warm,
                                                 memory_order_relaxed);

            if (HR__UNLIKELY(warm != 0)) {
                /* By path: warm once the context was seen; its first
                 * sample, which sets the bit, takes end_slow. */
                uint32_t c = f->range - 1;

                if (!(atomic_load_explicit(&hr__g_ctx_seen[c >> 6],
                                           memory_order_relaxed) &
                      1ull << (c & 63)))
                    return end_slow(sc, t1);
                label = warm;
            }
            in = t1 > f->t0 ? t1 - f->t0 : 0;
            child = f->child < in ? f->child : in;
            ring_write(t, f->range, label, f->nchild, f->ndesc, in, child);
            f[-1].child += in;
            f[-1].nchild++;
            f[-1].ndesc += f->ndesc + 1;
            t->stack.depth = d - 1;
        }
        return;
    }
#endif
    end_other(sc);
}

/* 0 when the labels are ones the daemon takes: a node id of 1 to
 * HR_MAX_NAME bytes, an operator and backend of at most HR_MAX_NAME.
 * Checked once here, where they enter, never per sample. */
static int labels_check(const char *node_id, const char *op,
                        const char *backend, int phase)
{
    int rc;

    if (node_id == NULL || op == NULL || backend == NULL ||
        (phase != HR_PHASE_COLD && phase != HR_PHASE_WARM &&
         phase != HR_PHASE_BY_PATH))
        return -EINVAL;
    if ((rc = hr__name_check(node_id)) != 0)
        return rc;
    if (strnlen(op, HRP_MAX_STRING + 1) > HRP_MAX_STRING ||
        strnlen(backend, HRP_MAX_STRING + 1) > HRP_MAX_STRING)
        return -ENAMETOOLONG;
    return 0;
}

int hr_labels_set(const char *node_id, const char *op, const char *backend,
                  int phase)
{
    uint32_t id, warm = 0;
    int rc;

    if (init() != 0)
        return -ENOMEM;
    if ((rc = labels_check(node_id, op, backend, phase)) != 0) {
        /* Refused: the next windows are not collected (counted), rather
         * than collected under the labels of earlier ones. */
        atomic_store(&hr__g_labels_refused, rc);
        return rc;
    }
    if (__atomic_load_n(&hr__active, __ATOMIC_SEQ_CST)) {
        atomic_fetch_add(&hr__g_label_in_window, 1);
        return -EBUSY;
    }
    /* By path: the cold set is the window's, its warm twin beside it. */
    id = hr__label_intern(node_id, op, backend,
                          phase == HR_PHASE_BY_PATH ? HR_PHASE_COLD
                                                    : (unsigned)phase);
    if (id != 0 && phase == HR_PHASE_BY_PATH)
        warm = hr__label_intern(node_id, op, backend, HR_PHASE_WARM);
    if (id == 0 || (phase == HR_PHASE_BY_PATH && warm == 0))
        return -ENOMEM;
    atomic_store(&hr__g_label_warm, warm);
    atomic_store(&hr__g_label, id);
    atomic_store(&hr__g_labels_refused, 0);
    return 0;
}

int hr_window_begin(void)
{
    int rc;

    if ((rc = init()) != 0)
        return rc;
    if (!g_enabled)
        return -ECANCELED;
    if (__atomic_load_n(&hr__active, __ATOMIC_SEQ_CST))
        return -EBUSY;
    if ((rc = atomic_load(&hr__g_labels_refused)) != 0) {
        atomic_fetch_add(&hr__g_bad_label, 1);
        /* The count travels with the next batch. */
        hr__ship_start();
        hr__ship_kick();
        return rc;
    }
    if (atomic_load(&hr__g_label) == 0)
        return -EINVAL;
    if ((rc = hr__ship_start()) != 0)
        return rc;
    if (tls_thread == NULL && thread_attach() == NULL)
        return -ENOMEM;
    atomic_fetch_add(&hr__g_window, 1);
    __atomic_store_n(&hr__active, 1, __ATOMIC_SEQ_CST);
    /* A shipper asleep for want of work starts its cadence again. */
    hr__ship_kick();
    return 0;
}

int hr_window_end(void)
{
    struct hr__thread *t = tls_thread;

    if (!__atomic_load_n(&hr__active, __ATOMIC_SEQ_CST))
        return -EINVAL;
    __atomic_store_n(&hr__active, 0, __ATOMIC_SEQ_CST);
    /* A window inherited by a forked child has no shipper yet. */
    hr__ship_start();
    if (t != NULL) {
        uint32_t n = hr__stack_close_window(&t->stack,
                                            atomic_load(&hr__g_window));
        if (n != 0)
            atomic_fetch_add(&t->c.open_at_window_end, n);
    }
    return 0;
}

int hr_record(hr_site *site, uint64_t value_ns)
{
    struct hr__thread *t;
    uint32_t id, label, ctx;
    int rc;

    if ((rc = init()) != 0)
        return rc;
    if (!g_enabled)
        return -ECANCELED;
    if ((rc = atomic_load(&hr__g_labels_refused)) != 0)
        return rc;
    label = atomic_load(&hr__g_label);
    if (label == 0)
        return -EINVAL;
    if ((rc = hr__ship_start()) != 0)
        return rc;
    t = tls_thread;
    if (t == NULL && (t = thread_attach()) == NULL)
        return -ENOMEM;
    id = __atomic_load_n(&site->id, __ATOMIC_ACQUIRE);
    if (id == 0 && (id = site_first_use(t, site)) == 0)
        return -ENOMEM;
    if (id == HR__SITE_BAD) {
        hr__bump(&t->c.bad_name);
        return hr__name_check(site->name);
    }
    ctx = hr__ctx(t, site, id, 0);
    if (ctx == 0)
        return -ENOMEM;
    ring_put(t, ctx | (uint32_t)HR__KIND_RECORD << HR__KIND_SHIFT,
             hr__label_of(label, ctx), 0, 0, value_ns, 0);
    /* Outside a window the shipper may sleep until the next one. */
    hr__ship_kick();
    return 0;
}

int hr_flush(int timeout_ms)
{
    if (init() != 0 || !g_enabled)
        return 0;
    return hr__ship_flush(timeout_ms);
}

int hr_enabled(void)
{
    return init() == 0 && g_enabled;
}

void hr_counters_get(hr_counters *out)
{
    hr__ship_counters(out);
}

void hr_marks_add(uint64_t n)
{
    if (init() != 0 || !g_enabled)
        return;
    atomic_fetch_add_explicit(&hr__g_marks, n, memory_order_relaxed);
    /* They travel with the next batch, or the last one at exit. */
    if (!hr__ship_started())
        hr__ship_start();
}
