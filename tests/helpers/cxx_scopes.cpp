/*
 * hostrange.hpp in use, for tests/service/test_cxx.sh; built twice, as is
 * (cxx_scopes) and with HOSTRANGE_DISABLE (cxx_scopes_off). In one warm
 * window under node -N NODE (default tests/cxx), -c rounds (default 10)
 * of:
 *
 *     outer()          HOSTRANGE_FUNC_SCOPE, then two HOSTRANGE_SCOPEs in
 *                      its block: cxx.first, then cxx.second (nested in it)
 *     cxx.catch        a scope around a try whose thrower() opens cxx.throw
 *                      and, in an inner block, cxx.inner, then throws: the
 *                      exception unwinds both scopes
 *     cxx.explicit     hostrange::scope over a site of its own
 *     cxx.loop         one HOSTRANGE_SCOPE in a loop body, three times
 *
 * so each round gives the paths outer, outer;cxx.first,
 * outer;cxx.first;cxx.second, cxx.catch, cxx.catch;cxx.throw,
 * cxx.catch;cxx.throw;cxx.inner, cxx.explicit once and cxx.loop three
 * times. It then flushes and prints the client's counters; it exits 1 when
 * a range ended out of order or was left open (an exception that did not
 * end its scopes, innermost first), or when the samples are not 10 a
 * round (0 compiled out). The class's properties are checked when it
 * compiles.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include <unistd.h>

#include "hostrange.hpp"

/* --- what hostrange::scope is, checked by the compiler ------------------- */

static_assert(!std::is_copy_constructible<hostrange::scope>::value,
              "a scope is not copied");
static_assert(!std::is_copy_assignable<hostrange::scope>::value,
              "a scope is not copied");
static_assert(!std::is_move_constructible<hostrange::scope>::value,
              "a scope is not moved");
static_assert(!std::is_move_assignable<hostrange::scope>::value,
              "a scope is not moved");
static_assert(std::is_nothrow_constructible<hostrange::scope,
                                            hr_site &>::value,
              "making a scope never throws");
static_assert(std::is_nothrow_destructible<hostrange::scope>::value,
              "ending a scope never throws");
static_assert(!std::is_default_constructible<hostrange::scope>::value,
              "a scope needs a site");
static_assert(!std::is_convertible<hr_site &, hostrange::scope>::value,
              "a site does not turn into a scope by itself");

/* Whether `new T(hr_site&)` (or its placement form) compiles. */
template <class T, class = void>
struct can_new : std::false_type {};
template <class T>
struct can_new<T, decltype(static_cast<void>(
                      new T(std::declval<hr_site &>())))>
    : std::true_type {};
template <class T, class = void>
struct can_place : std::false_type {};
template <class T>
struct can_place<T, decltype(static_cast<void>(new (
                        static_cast<void *>(nullptr))
                        T(std::declval<hr_site &>())))>
    : std::true_type {};
template <class T, class = void>
struct can_new_array : std::false_type {};
template <class T>
struct can_new_array<T, decltype(static_cast<void>(new T[1]{
                            T(std::declval<hr_site &>()) }))>
    : std::true_type {};

static_assert(!can_new<hostrange::scope>::value,
              "a scope cannot be made with new");
static_assert(!can_place<hostrange::scope>::value,
              "a scope cannot be placed with new");
static_assert(!can_new_array<hostrange::scope>::value,
              "scopes cannot be made with new[]");
/* The checks can tell: a type that may be made with new passes them. */
struct newable {
    explicit newable(hr_site &) {}
};
static_assert(can_new<newable>::value && can_place<newable>::value,
              "can_new and can_place see a type made with new");

/* --- the rounds ---------------------------------------------------------- */

static volatile unsigned sink;

/* Busy for a little while, so that every range has some time. */
static void work(unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        sink = sink + i;
}

static void outer()
{
    HOSTRANGE_FUNC_SCOPE();
    work(200);
    /* Two in one block: distinct names, the second nested in the first. */
    HOSTRANGE_SCOPE("cxx.first");
    work(200);
    HOSTRANGE_SCOPE("cxx.second");
    work(200);
}

static void thrower(int round)
{
    HOSTRANGE_SCOPE("cxx.throw");
    work(100);
    {
        HOSTRANGE_SCOPE("cxx.inner");
        work(100);
        throw std::runtime_error(std::to_string(round));
    }
}

static int one_round(int round)
{
    int caught = 0;

    outer();
    {
        HOSTRANGE_SCOPE("cxx.catch");
        try {
            thrower(round);
        } catch (const std::runtime_error &e) {
            caught = std::atoi(e.what()) == round;
        }
    }
    {
        static hr_site s_explicit = HR_SITE_INIT("cxx.explicit");
        hostrange::scope sc(s_explicit);
        work(100);
    }
    for (int i = 0; i < 3; i++) {
        HOSTRANGE_SCOPE("cxx.loop");
        work(50);
    }
    return caught;
}

int main(int argc, char **argv)
{
    const char *node = "tests/cxx";
    int rounds = 10, caught = 0, c;
    hr_counters k;
    uint64_t want;

    while ((c = getopt(argc, argv, "N:c:")) != -1) {
        if (c == 'N')
            node = optarg;
        else if (c == 'c')
            rounds = std::atoi(optarg);
        else
            return 2;
    }
    if (hr_labels_set(node, "cxx", "cpu", HR_PHASE_WARM) != 0 ||
        hr_window_begin() != 0) {
        std::fprintf(stderr, "cxx_scopes: cannot open a window\n");
        return 1;
    }
    for (int r = 0; r < rounds; r++)
        caught += one_round(r);
    hr_window_end();
    hr_flush(10000);
    hr_counters_get(&k);
    want = hr_compiled() ? 10u * (uint64_t)rounds : 0;
    std::printf("compiled=%d caught=%d samples=%llu delivered=%llu "
                "out_of_order=%llu open_at_window_end=%llu "
                "foreign_thread=%llu\n", hr_compiled(), caught,
                (unsigned long long)k.samples,
                (unsigned long long)k.delivered,
                (unsigned long long)k.out_of_order,
                (unsigned long long)k.open_at_window_end,
                (unsigned long long)k.foreign_thread);
    return caught == rounds && k.samples == want && k.out_of_order == 0 &&
                   k.open_at_window_end == 0 && k.foreign_thread == 0
               ? 0
               : 1;
}
