/*
 * libhostrange-nvtx: an NVTX v3 injection tool that turns the ranges a
 * program marks with NVTX into hostrange ranges, with no change to the
 * program.
 *
 * The first NVTX call of each shared object built with NVTX v3 loads the
 * library named by NVTX_INJECTION64_PATH and calls InitializeInjectionNvtx2,
 * which fills that object's CORE and CORE2 callback slots with the
 * functions below. The first call also sets the labels (HOSTRANGE_NODE,
 * HOSTRANGE_OPERATOR, HOSTRANGE_BACKEND; phase by calling path) and opens
 * the collection window for the whole run, or arms the range named by
 * HOSTRANGE_NVTX_WINDOW to open and close it.
 *
 * Push/pop ranges map onto hr_begin/hr_end: each thread keeps a stack of
 * its open scopes (one initial-exec TLS pointer to it), and a message is
 * turned into its site by one lock-free lookup (names.c). Start/end ranges,
 * which may end on another thread, are kept in a table of open ranges by id
 * and recorded with hr_record when they end: inclusive-only samples. Marks
 * are counted (hr_marks_add). Nothing here prints, aborts or blocks beyond
 * what the client library documents.
 */
#include "config.h"

/* The types and callback ids only: a tool defines no NVTX functions. */
#define NVTX_NO_IMPL
#include <nvToolsExt.h>

#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hostrange.h"
#include "nvtx/names.h"

#define HRN_API __attribute__((visibility("default")))

/* Open push/pop ranges kept per thread; deeper ones are counted only. */
#define STACK_MAX 128u

struct frame {
    hr_scope sc;
    const struct hrn_domain *domain;
};

/* A direct-mapped cache per thread of ASCII messages by address; a hit is
 * checked against the entry's text, since a program may reuse a buffer. */
#define CACHE_SLOTS 64u

struct tstack {
    uint32_t depth;
    uint32_t window;   /* depth + 1 of the range that opened the window */
    const char *cache_msg[CACHE_SLOTS];
    struct hrn_name *cache_name[CACHE_SLOTS];
    struct frame f[STACK_MAX];
};

static __thread struct tstack *tls_stack
    __attribute__((tls_model("initial-exec")));
static pthread_key_t g_key;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_ok;          /* collection is on and the labels are set */
static int g_by_window;   /* the window is a named range's extent */

/* --- start/end ranges ------------------------------------------------- */

/*
 * Open start/end ranges, by id: range id n lives in slot n % OPEN_SLOTS
 * while it is open. A slot's id is 0 while it is being written; its writer
 * clears it, writes the site and the start, then publishes the id. The end
 * reads the site and the start, then claims the slot by a compare-exchange
 * of the id to 0: a claim that fails means the range was overwritten by a
 * range OPEN_SLOTS later (it is then lost) or never opened here.
 */
#define OPEN_SLOTS 65536u

struct open_range {
    _Atomic uint64_t id;
    _Atomic(hr_site *) site;
    _Atomic uint64_t t0_ns;
};

static struct open_range *g_open;
static _Atomic uint64_t g_next_id;

static void thread_exit(void *arg)
{
    tls_stack = NULL;
    free(arg);
}

static void setup(void)
{
    const char *node = getenv("HOSTRANGE_NODE");
    const char *op = getenv("HOSTRANGE_OPERATOR");
    const char *backend = getenv("HOSTRANGE_BACKEND");
    const char *window = getenv("HOSTRANGE_NVTX_WINDOW");
    extern char *program_invocation_short_name;

    if (!hr_enabled())
        return;
    if (node == NULL || node[0] == '\0')
        node = program_invocation_short_name;
    if (node == NULL || node[0] == '\0')
        node = "nvtx";
    if (op == NULL || op[0] == '\0')
        op = "nvtx";
    if (backend == NULL || backend[0] == '\0')
        backend = "host";
    if (pthread_key_create(&g_key, thread_exit) != 0)
        return;
    g_open = calloc(OPEN_SLOTS, sizeof *g_open);
    if (g_open == NULL)
        return;
    if (hr_labels_set(node, op, backend, HR_PHASE_BY_PATH) != 0)
        return;
    if (window != NULL && window[0] != '\0') {
        if (hrn_names_window(window) != 0)
            return;
        g_by_window = 1;
    } else if (hr_window_begin() != 0) {
        return;
    }
    g_ok = 1;
}

static __attribute__((noinline)) struct tstack *stack_attach(void)
{
    struct tstack *t = malloc(sizeof *t);

    if (t == NULL)
        return NULL;
    memset(t, 0, offsetof(struct tstack, f));
    pthread_setspecific(g_key, t);
    tls_stack = t;
    return t;
}

/* The calling thread's stack, NULL on ENOMEM. */
static inline struct tstack *stack_self(void)
{
    struct tstack *t = tls_stack;

    if (__builtin_expect(t == NULL, 0))
        t = stack_attach();
    return t;
}

/* The entry of ASCII message `msg` in `domain`, through the cache of t. */
static inline struct hrn_name *name_a(struct tstack *t,
                                      const struct hrn_domain *domain,
                                      const char *msg)
{
    uint32_t i = (uint32_t)((uintptr_t)msg >> 3 ^ (uintptr_t)msg >> 11) &
                 (CACHE_SLOTS - 1);
    struct hrn_name *e;

    if (__builtin_expect(msg != NULL && t->cache_msg[i] == msg, 1)) {
        e = t->cache_name[i];
        if (__builtin_expect(e->domain == domain &&
                             strcmp(e->msg, msg) == 0, 1))
            return e;
    }
    e = hrn_name_get(domain, msg);
    t->cache_msg[i] = msg;
    t->cache_name[i] = e;
    return e;
}

/* Opens a range of `name` on t (NULL: outside a window and no window
 * range armed, so no sample is taken); returns its level, 0 at the top. */
static inline int push(struct tstack *t, const struct hrn_domain *domain,
                       struct hrn_name *name)
{
    uint32_t d = t->depth;

    if (__builtin_expect(d < STACK_MAX, 1)) {
        hr_scope none = { 0, 0, 0 };

        if (__builtin_expect(name != NULL && name->window, 0) &&
            t->window == 0 && hr_window_begin() == 0)
            t->window = d + 1;
        t->f[d].sc = name != NULL ? hr_begin(&name->site) : none;
        t->f[d].domain = domain;
    }
    t->depth = d + 1;
    return (int)d;
}

/* Closes the innermost open range of `domain` on this thread; returns its
 * level, or -1 when none is open. */
static inline int pop(const struct hrn_domain *domain)
{
    struct tstack *t = tls_stack;
    uint32_t d, k;

    if (t == NULL || t->depth == 0)
        return -1;
    d = t->depth - 1;
    if (d >= STACK_MAX) {
        t->depth = d;
        return (int)d;
    }
    k = d;
    if (__builtin_expect(t->f[d].domain != domain, 0)) {
        /* Ranges of two domains interleaved: end this domain's innermost
         * range (the client counts the ones above it as out of order). */
        while (k > 0 && t->f[k].domain != domain)
            k--;
        if (t->f[k].domain != domain)
            return -1;
    }
    hr_end(t->f[k].sc);
    if (__builtin_expect(t->window == k + 1, 0)) {
        hr_window_end();
        t->window = 0;
    }
    if (k != d)
        memmove(&t->f[k], &t->f[k + 1], (d - k) * sizeof t->f[0]);
    t->depth = d;
    return (int)k;
}

/* Whether a range opened now would be sampled, or could open the window. */
static inline int wanted(void)
{
    return __atomic_load_n(&hr__active, __ATOMIC_RELAXED) || g_by_window;
}

static struct hrn_name *attr_name(struct tstack *t,
                                  const struct hrn_domain *domain,
                                  const nvtxEventAttributes_t *a)
{
    if (a == NULL)
        return hrn_name_get(domain, NULL);
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
        if (t != NULL)
            return name_a(t, domain, a->message.ascii);
        return hrn_name_get(domain, a->message.ascii);
    case NVTX_MESSAGE_TYPE_UNICODE:
        return hrn_name_get_w(domain, a->message.unicode);
    case NVTX_MESSAGE_TYPE_REGISTERED:
        if (a->message.registered != NULL)
            return (struct hrn_name *)(void *)a->message.registered;
        /* fall through */
    default:
        return hrn_name_get(domain, NULL);
    }
}

static nvtxRangeId_t start(struct hrn_name *name)
{
    uint64_t id = atomic_fetch_add_explicit(&g_next_id, 1,
                                            memory_order_relaxed) + 1;
    struct open_range *o = &g_open[id % OPEN_SLOTS];

    if (!__atomic_load_n(&hr__active, __ATOMIC_RELAXED))
        return id;
    atomic_exchange_explicit(&o->id, 0, memory_order_acq_rel);
    atomic_store_explicit(&o->site, &name->site, memory_order_relaxed);
    atomic_store_explicit(&o->t0_ns, hr_now_ns(), memory_order_relaxed);
    atomic_store_explicit(&o->id, id, memory_order_release);
    return id;
}

static void end(nvtxRangeId_t id)
{
    struct open_range *o;
    uint64_t t1 = hr_now_ns(), t0, want = id;
    hr_site *site;

    if (id == 0)
        return;
    o = &g_open[id % OPEN_SLOTS];
    if (atomic_load_explicit(&o->id, memory_order_acquire) != id)
        return;
    site = atomic_load_explicit(&o->site, memory_order_relaxed);
    t0 = atomic_load_explicit(&o->t0_ns, memory_order_relaxed);
    if (!atomic_compare_exchange_strong_explicit(&o->id, &want, 0,
                                                 memory_order_acq_rel,
                                                 memory_order_relaxed))
        return;
    if (__atomic_load_n(&hr__active, __ATOMIC_RELAXED))
        hr_record(site, t1 > t0 ? t1 - t0 : 0);
}

/* --- the callbacks: module CORE --------------------------------------- */

static void NVTX_API mark_ex(const nvtxEventAttributes_t *a)
{
    (void)a;
    hr_marks_add(1);
}

static void NVTX_API mark_a(const char *msg)
{
    (void)msg;
    hr_marks_add(1);
}

static void NVTX_API mark_w(const wchar_t *msg)
{
    (void)msg;
    hr_marks_add(1);
}

static nvtxRangeId_t NVTX_API range_start_ex(const nvtxEventAttributes_t *a)
{
    return start(attr_name(NULL, NULL, a));
}

static nvtxRangeId_t NVTX_API range_start_a(const char *msg)
{
    return start(hrn_name_get(NULL, msg));
}

static nvtxRangeId_t NVTX_API range_start_w(const wchar_t *msg)
{
    return start(hrn_name_get_w(NULL, msg));
}

static void NVTX_API range_end(nvtxRangeId_t id)
{
    end(id);
}

static int NVTX_API range_push_ex(const nvtxEventAttributes_t *a)
{
    struct tstack *t = stack_self();

    if (t == NULL)
        return -1;
    return push(t, NULL, wanted() ? attr_name(t, NULL, a) : NULL);
}

static int NVTX_API range_push_a(const char *msg)
{
    struct tstack *t = stack_self();

    if (t == NULL)
        return -1;
    return push(t, NULL, wanted() ? name_a(t, NULL, msg) : NULL);
}

static int NVTX_API range_push_w(const wchar_t *msg)
{
    struct tstack *t = stack_self();

    if (t == NULL)
        return -1;
    return push(t, NULL, wanted() ? hrn_name_get_w(NULL, msg) : NULL);
}

static int NVTX_API range_pop(void)
{
    return pop(NULL);
}

/* Thread names are no part of hostrange's keys: taken and dropped. */
static void NVTX_API name_os_thread_a(uint32_t tid, const char *name)
{
    (void)tid;
    (void)name;
}

static void NVTX_API name_os_thread_w(uint32_t tid, const wchar_t *name)
{
    (void)tid;
    (void)name;
}

/* --- module CORE2: domains -------------------------------------------- */

#define DOMAIN(h) ((const struct hrn_domain *)(const void *)(h))

static void NVTX_API domain_mark_ex(nvtxDomainHandle_t domain,
                                    const nvtxEventAttributes_t *a)
{
    (void)domain;
    (void)a;
    hr_marks_add(1);
}

static nvtxRangeId_t NVTX_API
domain_range_start_ex(nvtxDomainHandle_t domain,
                      const nvtxEventAttributes_t *a)
{
    return start(attr_name(NULL, DOMAIN(domain), a));
}

static void NVTX_API domain_range_end(nvtxDomainHandle_t domain,
                                      nvtxRangeId_t id)
{
    (void)domain;
    end(id);
}

static int NVTX_API domain_range_push_ex(nvtxDomainHandle_t domain,
                                         const nvtxEventAttributes_t *a)
{
    struct tstack *t = stack_self();

    if (t == NULL)
        return -1;
    return push(t, DOMAIN(domain),
                wanted() ? attr_name(t, DOMAIN(domain), a) : NULL);
}

static int NVTX_API domain_range_pop(nvtxDomainHandle_t domain)
{
    return pop(DOMAIN(domain));
}

static nvtxStringHandle_t NVTX_API
domain_register_string_a(nvtxDomainHandle_t domain, const char *s)
{
    return (nvtxStringHandle_t)(void *)hrn_name_get(DOMAIN(domain), s);
}

static nvtxStringHandle_t NVTX_API
domain_register_string_w(nvtxDomainHandle_t domain, const wchar_t *s)
{
    return (nvtxStringHandle_t)(void *)hrn_name_get_w(DOMAIN(domain), s);
}

static nvtxDomainHandle_t NVTX_API domain_create_a(const char *name)
{
    return (nvtxDomainHandle_t)(void *)hrn_domain_get(name);
}

static nvtxDomainHandle_t NVTX_API domain_create_w(const wchar_t *name)
{
    return (nvtxDomainHandle_t)(void *)hrn_domain_get_w(name);
}

/* A domain is kept when destroyed: its names may still be in flight. */
static void NVTX_API domain_destroy(nvtxDomainHandle_t domain)
{
    (void)domain;
}

/* --- attaching ---------------------------------------------------------- */

struct slot {
    uint32_t id;
    NvtxFunctionPointer fn;
};

#define SLOT(id, fn) { (uint32_t)(id), (NvtxFunctionPointer)(void (*)(void))(fn) }

static const struct slot core_slots[] = {
    SLOT(NVTX_CBID_CORE_MarkEx, mark_ex),
    SLOT(NVTX_CBID_CORE_MarkA, mark_a),
    SLOT(NVTX_CBID_CORE_MarkW, mark_w),
    SLOT(NVTX_CBID_CORE_RangeStartEx, range_start_ex),
    SLOT(NVTX_CBID_CORE_RangeStartA, range_start_a),
    SLOT(NVTX_CBID_CORE_RangeStartW, range_start_w),
    SLOT(NVTX_CBID_CORE_RangeEnd, range_end),
    SLOT(NVTX_CBID_CORE_RangePushEx, range_push_ex),
    SLOT(NVTX_CBID_CORE_RangePushA, range_push_a),
    SLOT(NVTX_CBID_CORE_RangePushW, range_push_w),
    SLOT(NVTX_CBID_CORE_RangePop, range_pop),
    SLOT(NVTX_CBID_CORE_NameOsThreadA, name_os_thread_a),
    SLOT(NVTX_CBID_CORE_NameOsThreadW, name_os_thread_w),
};

static const struct slot core2_slots[] = {
    SLOT(NVTX_CBID_CORE2_DomainMarkEx, domain_mark_ex),
    SLOT(NVTX_CBID_CORE2_DomainRangeStartEx, domain_range_start_ex),
    SLOT(NVTX_CBID_CORE2_DomainRangeEnd, domain_range_end),
    SLOT(NVTX_CBID_CORE2_DomainRangePushEx, domain_range_push_ex),
    SLOT(NVTX_CBID_CORE2_DomainRangePop, domain_range_pop),
    SLOT(NVTX_CBID_CORE2_DomainRegisterStringA, domain_register_string_a),
    SLOT(NVTX_CBID_CORE2_DomainRegisterStringW, domain_register_string_w),
    SLOT(NVTX_CBID_CORE2_DomainCreateA, domain_create_a),
    SLOT(NVTX_CBID_CORE2_DomainCreateW, domain_create_w),
    SLOT(NVTX_CBID_CORE2_DomainDestroy, domain_destroy),
};

/* Fills the slots of one module; returns 0, or -1 when it has no table. */
static int fill(const NvtxExportTableCallbacks *cb, NvtxCallbackModule module,
                const struct slot *slots, size_t n)
{
    NvtxFunctionTable table = NULL;
    unsigned int size = 0;

    if (!cb->GetModuleFunctionTable(module, &table, &size) || table == NULL)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (slots[i].id <= size && table[slots[i].id] != NULL)
            *table[slots[i].id] = slots[i].fn;
    }
    return 0;
}

/*
 * Called by each shared object's NVTX on its first call; returns 1 to stay
 * attached, 0 to be dropped (collection off, or no callbacks table), after
 * which that object's NVTX calls are no-ops. The setup runs once.
 */
HRN_API int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get);
HRN_API int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
    const NvtxExportTableCallbacks *cb;

    pthread_once(&g_once, setup);
    if (!g_ok || get == NULL)
        return 0;
    cb = get(NVTX_ETID_CALLBACKS);
    if (cb == NULL || cb->struct_size < sizeof *cb ||
        cb->GetModuleFunctionTable == NULL)
        return 0;
    if (fill(cb, NVTX_CB_MODULE_CORE, core_slots,
             sizeof core_slots / sizeof core_slots[0]) != 0)
        return 0;
    fill(cb, NVTX_CB_MODULE_CORE2, core2_slots,
         sizeof core2_slots / sizeof core2_slots[0]);
    return 1;
}
