/* Decoding and checking the exact encoding of events (see events.h). */
#include "config.h"

#include "lib/agg/agg_impl.h"
#include "lib/agg/events.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

void hra_key_values(const struct hra_key *k, uint64_t *incl,
                        size_t *nincl, uint64_t *self, size_t *nself)
{
    /* A key without events may have no buffer: NULL + 0 is not C. */
    const uint8_t *p = k->buf, *end = p != NULL ? p + k->len : p;
    size_t ni = 0, ns = 0;

    while (p < end) {
        unsigned w1 = p[0] & 15u, w2 = p[0] >> 4;
        uint64_t x = hra_ev_get8(p + 1) & hra_ev_mask(w1);

        incl[ni++] = x;
        if (w2 == HRA_EV_RECORD_MARK) {
            p += 1 + w1;
            continue;
        }
        self[ns++] = x - (hra_ev_get8(p + 1 + w1) & hra_ev_mask(w2));
        p += 1 + w1 + w2;
    }
    *nincl = ni;
    *nself = ns;
}

/*
 * What the events check needs of a header byte h, in tables made at
 * compile time: the masks of its inclusive time (the 8 bytes after h) and
 * of its children's time (8 bytes from h + hdr_doff[h]), and the step to
 * the next entry. A header that is not valid (a width above 8) gets masks
 * that make its "children's time" its own header byte (not 0, as a width
 * is above 8) and its inclusive time 0, so that it fails as a children's
 * time above its inclusive time does; its step is still 1 + w1 + w2, at
 * most 30, for walks that have not yet found where entries start.
 */
#define HDR_W1(h) ((h) & 15u)
#define HDR_W2(h) ((h) >> 4 == HRA_EV_RECORD_MARK ? 0u : (h) >> 4)
#define HDR_BAD(h) (HDR_W1(h) > 8u || HDR_W2(h) > 8u)
#define HDR_MASK(w) ((w) >= 8u ? ~0ull : (1ull << (8u * ((w) & 7u))) - 1u)
#define HDR_XMASK(h) (HDR_BAD(h) ? 0ull : HDR_MASK(HDR_W1(h)))
#define HDR_DMASK(h) (HDR_BAD(h) ? 0xffull : HDR_MASK(HDR_W2(h)))
#define HDR_DOFF(h) (HDR_BAD(h) ? 0u : 1u + HDR_W1(h))
#define HDR_STEP(h) (1u + HDR_W1(h) + HDR_W2(h))
#define HDR_4(f, h) f(h), f((h) + 1u), f((h) + 2u), f((h) + 3u)
#define HDR_16(f, h) HDR_4(f, h), HDR_4(f, (h) + 4u), HDR_4(f, (h) + 8u), \
                     HDR_4(f, (h) + 12u)
#define HDR_64(f, h) HDR_16(f, h), HDR_16(f, (h) + 16u), \
                     HDR_16(f, (h) + 32u), HDR_16(f, (h) + 48u)
#define HDR_256(f) HDR_64(f, 0u), HDR_64(f, 64u), HDR_64(f, 128u), \
                   HDR_64(f, 192u)

static const uint64_t hdr_xmask[256] = { HDR_256(HDR_XMASK) };
static const uint64_t hdr_dmask[256] = { HDR_256(HDR_DMASK) };
static const uint8_t hdr_doff[256] = { HDR_256(HDR_DOFF) };
static const uint8_t hdr_step[256] = { HDR_256(HDR_STEP) };

/* The bytes past a position that a step from it may read (an inclusive
 * time of up to 15 bytes, then 8), the longest step (from a byte that is
 * not a valid header), the walkers of the check, the fewest bytes each one
 * walks, and how many entries the true walk may look for a walker's start
 * among before it gives up on that walker. */
#define WALK_MARGIN 32u
#define WALK_MAX_STEP 30u
#define WALKERS 4
#define WALK_REGION 512u
#define WALK_RESYNC 64u

/* One step of a walk from the entry at p (WALK_MARGIN bytes readable past
 * it): notes p in `bad` when the entry fails (an invalid header, or a
 * children's time above the inclusive time: rare, hence a branch), counts
 * a record in `rec`, and moves p to the next entry. */
#define WALK_STEP(p, bad, rec)                                              \
    do {                                                                    \
        unsigned h_ = (p)[0];                                               \
        uint64_t x_ = hra_ev_get8((p) + 1) & hdr_xmask[h_];                 \
        uint64_t d_ = hra_ev_get8((p) + hdr_doff[h_]) & hdr_dmask[h_];      \
                                                                            \
        if (__builtin_expect(d_ > x_, 0))                                   \
            (bad) = (p);                                                    \
        (rec) += h_ >= HRA_EV_RECORD_MARK << 4;                             \
        (p) += hdr_step[h_];                                                \
    } while (0)

/* Walks the entries from *pp while they start before `stop` (which is at
 * least WALK_MARGIN bytes before the buffer's end), adding them to *n and
 * the records among them to *rec. Returns 0 with *pp at the first entry
 * at or past stop, or -EINVAL at an entry that fails. */
static int walk_entries(const uint8_t **pp, const uint8_t *stop, uint64_t *n,
                        uint64_t *rec)
{
    const uint8_t *p = *pp, *bad = NULL;

    while (p < stop) {
        WALK_STEP(p, bad, *rec);
        if (bad != NULL)
            return -EINVAL;
        ++*n;
    }
    *pp = p;
    return 0;
}

/* A walk of part of a buffer (see hra_events_check). */
struct walker {
    const uint8_t *start; /* where it began: a guess, but for the first */
    const uint8_t *p;     /* its entry; at the end, the first at or past stop */
    const uint8_t *stop;  /* where the next part begins */
    const uint8_t *bad;   /* the last entry on its way that failed, or NULL */
    uint64_t n, rec;      /* the entries on its way, and the records */
};

/*
 * Walks parts of buf at once, w[j] from w[j].start to w[j].stop (the
 * stops at least WALK_MARGIN bytes before the buffer's end). Each walk is
 * a chain of dependent steps; walking several in one loop lets the
 * processor work on them side by side. Rounds of steps without a bound
 * check are as long as the shortest part allows at the longest step; the
 * last steps of each walk are taken one by one. The walks' entries and
 * records live in registers during a round; an entry that fails is noted
 * in its walker in memory (with the tables' addresses, that many
 * registers would not fit).
 */
static void walk_parts(struct walker *w)
{
    for (;;) {
        const uint8_t *p[WALKERS];
        uint64_t rec[WALKERS];
        size_t round = SIZE_MAX;

        for (int j = 0; j < WALKERS; j++) {
            size_t left = w[j].p < w[j].stop ? (size_t)(w[j].stop - w[j].p)
                                             : 0;

            if (left / WALK_MAX_STEP < round)
                round = left / WALK_MAX_STEP;
        }
        if (round == 0)
            break;
        /* Locals, so that the walks live in registers. */
#pragma GCC unroll 4
        for (int j = 0; j < WALKERS; j++) {
            p[j] = w[j].p;
            rec[j] = w[j].rec;
        }
        for (size_t i = 0; i < round; i++) {
#pragma GCC unroll 4
            for (int j = 0; j < WALKERS; j++)
                WALK_STEP(p[j], w[j].bad, rec[j]);
        }
#pragma GCC unroll 4
        for (int j = 0; j < WALKERS; j++) {
            w[j].p = p[j];
            w[j].rec = rec[j];
            w[j].n += round;
        }
    }
    for (int j = 0; j < WALKERS; j++) {
        while (w[j].p < w[j].stop) {
            WALK_STEP(w[j].p, w[j].bad, w[j].rec);
            w[j].n++;
        }
    }
}

/*
 * Joins walker w (which began at a guess) to the true walk, whose next
 * entry is *t (at or past w->start): the true walk goes on entry by entry
 * (checked, counted in *n and *rec) until it reaches an entry that w also
 * reached, found by walking w's first steps again. From there both walks
 * are the same, so w's counts past that entry are the true ones, and an
 * entry that failed there or later fails the buffer. Where none is found
 * among w's first WALK_RESYNC entries, the true walk walks w's part
 * itself. Returns 0 with *t at the first entry at or past w->stop, or
 * -EINVAL.
 */
static int walk_join(const struct walker *w, const uint8_t **t, uint64_t *n,
                     uint64_t *rec)
{
    const uint8_t *q = w->start;
    uint64_t before = 0, rec_before = 0;

    while (*t < w->stop) {
        if (q == *t) {
            if (w->bad != NULL && w->bad >= q)
                return -EINVAL;
            *n += w->n - before;
            *rec += w->rec - rec_before;
            *t = w->p;
            return 0;
        }
        if (q > *t) {
            if (walk_entries(t, *t + 1, n, rec) != 0)
                return -EINVAL;
        } else if (before < WALK_RESYNC && q < w->stop) {
            rec_before += q[0] >= HRA_EV_RECORD_MARK << 4;
            before++;
            q += hdr_step[q[0]];
        } else {
            break;
        }
    }
    return walk_entries(t, w->stop, n, rec);
}

int hra_events_check(const uint8_t *buf, size_t len, uint64_t *pairs,
                         uint64_t *records)
{
    const uint8_t *t = buf;
    uint64_t n = 0, rec = 0;

    /*
     * Where an entry ends depends on its header byte, so walking the
     * entries is one chain of dependent steps. A long buffer is cut in
     * WALKERS parts walked side by side: the first from the buffer's
     * start, the others from where their part begins, which may be in the
     * middle of an entry. Such a walk soon meets the true one (an entry
     * both reach), as entries are short and their lengths vary; it goes
     * through bytes that are not headers until then, so it fails nothing
     * on its way, it only notes the last entry that failed. The parts are
     * then joined in order (walk_join); a walk that never meets the true
     * one costs its part walked again, not a wrong answer.
     */
    if (len >= WALKERS * WALK_REGION + WALK_MARGIN) {
        struct walker w[WALKERS];
        size_t part = (len - WALK_MARGIN) / WALKERS;

        for (int j = 0; j < WALKERS; j++) {
            w[j].start = w[j].p = buf + (size_t)j * part;
            w[j].stop = j == WALKERS - 1 ? buf + len - WALK_MARGIN
                                         : w[j].start + part;
            w[j].bad = NULL;
            w[j].n = w[j].rec = 0;
        }
        walk_parts(w);
        if (w[0].bad != NULL)
            return -EINVAL;
        n = w[0].n;
        rec = w[0].rec;
        t = w[0].p;
        for (int j = 1; j < WALKERS; j++) {
            if (walk_join(&w[j], &t, &n, &rec) != 0)
                return -EINVAL;
        }
    } else if (len > WALK_MARGIN &&
               walk_entries(&t, buf + len - WALK_MARGIN, &n, &rec) != 0) {
        return -EINVAL;
    }
    /* The last bytes, entry by entry, reading none past the end. */
    for (size_t pos = (size_t)(t - buf); pos < len;) {
        uint64_t x, d;
        int r;

        if (!hra_ev_entry_ok(buf[pos], len - pos))
            return -EINVAL;
        pos += hra_ev_entry_at(buf + pos, len - pos, &x, &d, &r);
        if (d > x)
            return -EINVAL;
        n++;
        rec += (unsigned)r;
    }
    *pairs = n - rec;
    *records = rec;
    return 0;
}

int hra_events_decode(const uint8_t *buf, size_t len, uint64_t *incl,
                          size_t maxi, size_t *nincl, uint64_t *self,
                          size_t maxs, size_t *nself)
{
    size_t pos = 0, ni = 0, ns = 0;
    uint64_t bad = 0;

    while (pos < len) {
        uint64_t x, d;
        int rec;

        if (!hra_ev_entry_ok(buf[pos], len - pos))
            return -EINVAL;
        pos += hra_ev_entry_at(buf + pos, len - pos, &x, &d, &rec);
        if (ni == maxi || (!rec && ns == maxs))
            return -EINVAL;
        incl[ni++] = x;
        /* A record's d is 0; a pair's must not exceed x. */
        bad |= (uint64_t)(d > x);
        self[ns] = x - d;
        ns += !rec;
    }
    *nincl = ni;
    *nself = ns;
    return bad ? -EINVAL : 0;
}

