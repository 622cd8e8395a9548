/*
 * hostrange.hpp: the C++ face of libhostrange, over the C API of
 * hostrange.h (which it includes; everything there is usable as is).
 *
 *     void dispatch(const op &o)
 *     {
 *         HOSTRANGE_SCOPE("dispatch.call");   // until the end of the block
 *         ...
 *     }
 *
 *     void operator_call()
 *     {
 *         HOSTRANGE_FUNC_SCOPE();             // named "operator_call"
 *         ...
 *     }
 *
 * HOSTRANGE_SCOPE(NAME) opens range NAME (a string literal, or any
 * expression of static storage that stays valid) until the end of the
 * enclosing block. Its site is a function-static hr_site, constant
 * initialized, so the name is interned once, on first use, and a scope
 * costs what hr_begin and hr_end cost. Several in one block do not clash:
 * each gets names of its own (__COUNTER__), and they end in the reverse
 * order of their opening, as C++ destroys them. HOSTRANGE_FUNC_SCOPE()
 * does the same with the enclosing function's name (__func__: unqualified,
 * so a method is named without its class).
 *
 * hostrange::scope is the RAII class under both macros, for a site of the
 * caller's own: `static hr_site s = HR_SITE_INIT("x"); hostrange::scope
 * sc(s);`. It opens the range when made and ends it when destroyed: at
 * the end of its block, and when an exception unwinds through it, so that
 * the ranges an exception leaves end innermost first, as they were
 * nested. It never throws (noexcept), cannot be copied or moved (a range
 * ends once, on the thread that opened it), and cannot be made with new
 * (a range lives in a block; hr_begin and hr_end pair ranges that outlive
 * one).
 *
 * HOSTRANGE_DISABLE, defined before including this header (as for
 * hostrange.h), compiles it all out: the macros become empty statements
 * with no site, hostrange::scope does nothing, and the object references
 * no hr_ symbol.
 */
#ifndef HOSTRANGE_HPP
#define HOSTRANGE_HPP

#include <cstddef>

#include "hostrange.h"

namespace hostrange {

class scope {
public:
    /* Opens a range at `site` (outside a window: one load and a branch). */
    explicit scope(hr_site &site) noexcept : sc_(hr_begin(&site)) {}

    /* Ends it. */
    ~scope() noexcept { hr_end(sc_); }

    scope(const scope &) = delete;
    scope &operator=(const scope &) = delete;
    scope(scope &&) = delete;
    scope &operator=(scope &&) = delete;

    static void *operator new(std::size_t) = delete;
    static void *operator new[](std::size_t) = delete;
    static void *operator new(std::size_t, void *) = delete;
    static void *operator new[](std::size_t, void *) = delete;

private:
    hr_scope sc_;
};

} /* namespace hostrange */

/* Pastes a and b once both are expanded (so that b may be __COUNTER__). */
#define HOSTRANGE__CAT2(a, b) a##b
#define HOSTRANGE__CAT(a, b) HOSTRANGE__CAT2(a, b)

#ifndef HOSTRANGE_DISABLE

/* The site and the scope of one use, both named after n. */
#define HOSTRANGE__SCOPE_N(name, n)                                          \
    static hr_site HOSTRANGE__CAT(hostrange__site_, n) =                   \
        HR_SITE_INIT(name);                                                \
    ::hostrange::scope HOSTRANGE__CAT(hostrange__scope_, n)(               \
        HOSTRANGE__CAT(hostrange__site_, n))

#define HOSTRANGE_SCOPE(name) HOSTRANGE__SCOPE_N(name, __COUNTER__)
#define HOSTRANGE_FUNC_SCOPE() HOSTRANGE__SCOPE_N(__func__, __COUNTER__)

#else /* HOSTRANGE_DISABLE */

#define HOSTRANGE_SCOPE(name) static_cast<void>(0)
#define HOSTRANGE_FUNC_SCOPE() static_cast<void>(0)

#endif /* HOSTRANGE_DISABLE */

#endif /* HOSTRANGE_HPP */
