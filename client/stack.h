/*
 * The per-thread range stack: pure arithmetic, no clock, no I/O.
 *
 * A frame is pushed when a range begins and popped when it ends. Each frame
 * keeps its begin time, the sum of the inclusive times of its direct children
 * that ended so far, the numbers of its direct children and of all its
 * descendants that ended so far, its range's id (the library passes the id
 * of the range's calling context), a serial number unique on its thread (so
 * that a scope whose frame is gone is recognised) and the window generation
 * it began in. Times are in clock ticks; only differences are taken, so the
 * same code serves the TSC, CLOCK_MONOTONIC and a test's fake clock.
 *
 * Frame 0 is a sentinel that is never open: the parent of the ranges at
 * the top of the stack, with range 0 (no calling context), so that a pop
 * adds to its parent without asking whether there is one, and a push finds
 * the parent context in f[depth] whatever the depth. What it accumulates
 * is never read.
 *
 * Invariants: frames [1, depth] are open, innermost last; frame i's `child`
 * is the sum of the inclusive times, and `nchild` the number, of the ranges
 * that began and ended while frame i was the innermost open frame; `ndesc`
 * counts those and, recursively, their own descendants.
 */
#ifndef HOSTRANGE_STACK_H
#define HOSTRANGE_STACK_H

#include <stdint.h>

#define HR__MAX_DEPTH 128u

/* The window generation of a frame already counted as open at window end. */
#define HR__WINDOW_COUNTED UINT32_MAX

struct hr__frame {
    uint64_t t0;
    uint64_t child;
    uint32_t range;
    uint32_t serial;
    uint32_t window;
    uint32_t nchild; /* direct children ended so far */
    uint32_t ndesc;  /* descendants ended so far */
    uint32_t pad;
};

struct hr__stack {
    uint32_t depth;
    uint32_t serial;
    struct hr__frame f[HR__MAX_DEPTH + 1]; /* f[0]: the sentinel */
};

enum hr__pop_result {
    HR__POP_OK = 0,  /* a sample: *incl, *self, *range, *window are set */
    HR__POP_GONE = 1 /* the scope's frame was already removed */
};

/*
 * Pushes a frame for `range` beginning at t0 in window `window`. Returns the
 * new depth (1-based, the scope's handle) and its serial through *serial, or
 * 0 when the stack is full.
 */
static inline uint32_t hr__stack_push(struct hr__stack *s, uint32_t range,
                                      uint32_t window, uint64_t t0,
                                      uint32_t *serial)
{
    uint32_t d = s->depth;
    struct hr__frame *f;

    if (d == HR__MAX_DEPTH)
        return 0;
    f = &s->f[d + 1];
    f->range = range;
    f->serial = ++s->serial;
    f->window = window;
    f->child = 0;
    f->nchild = 0;
    f->ndesc = 0;
    f->t0 = t0;
    s->depth = d + 1;
    *serial = f->serial;
    return d + 1;
}

/*
 * Pops the frame of the scope (depth, serial) at time t1. Frames opened above
 * it and never closed are discarded; their number goes to *abandoned. On
 * HR__POP_OK the range's inclusive time, self time (inclusive minus its
 * children's, clamped at 0), range id, window and numbers of direct children
 * and of all descendants are written, and the inclusive time is added to
 * the parent's children.
 */
static inline enum hr__pop_result
hr__stack_pop(struct hr__stack *s, uint32_t depth, uint32_t serial,
              uint64_t t1, uint64_t *incl, uint64_t *self, uint32_t *range,
              uint32_t *window, uint32_t *nchild, uint32_t *ndesc,
              uint32_t *abandoned)
{
    struct hr__frame *f, *p;
    uint64_t in;

    *abandoned = 0;
    if (depth == 0 || depth > s->depth || s->f[depth].serial != serial)
        return HR__POP_GONE;
    *abandoned = s->depth - depth;
    f = &s->f[depth];
    p = f - 1; /* the sentinel at the top of the stack */
    s->depth = depth - 1;
    in = t1 > f->t0 ? t1 - f->t0 : 0;
    *incl = in;
    *self = in > f->child ? in - f->child : 0;
    *range = f->range;
    *window = f->window;
    *nchild = f->nchild;
    *ndesc = f->ndesc;
    p->child += in;
    p->nchild++;
    p->ndesc += f->ndesc + 1;
    return HR__POP_OK;
}

/* Moves the begin time of every open frame later by dt ticks, so that time
 * the library spent on its own work is left out of the user's ranges. */
static inline void hr__stack_shift(struct hr__stack *s, uint64_t dt)
{
    for (uint32_t i = 1; i <= s->depth; i++)
        s->f[i].t0 += dt;
}

/* Marks the open frames of window `window` as counted and returns their
 * number; their later end produces no sample and no second count. */
static inline uint32_t hr__stack_close_window(struct hr__stack *s,
                                              uint32_t window)
{
    uint32_t n = 0;

    for (uint32_t i = 1; i <= s->depth; i++) {
        if (s->f[i].window == window) {
            s->f[i].window = HR__WINDOW_COUNTED;
            n++;
        }
    }
    return n;
}

#endif
