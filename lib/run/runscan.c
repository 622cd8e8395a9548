/* Packed RunKeys read in place (see runscan.h). */
#include "config.h"

#include "lib/run/runscan.h"
#include "lib/agg/agg.h"
#include "lib/run/runfields.h"
#include "lib/run/runkey.h"
#include "proto/protocol.h"
#include "proto/stream.h"

#include <endian.h>
#include <string.h>

/* Reads a varint of at most 10 bytes whose value fits in 64 bits (the
 * protocol's reader). Returns 1, or 0 when it is cut short or too large. */
static inline int get_varint(const uint8_t **pp, const uint8_t *end,
                             uint64_t *v)
{
    return hrp_get_varint(pp, end, v) == 0;
}

/* A field's length-delimited payload: *q and *n; 0 when it does not fit. */
static int get_len(const uint8_t **pp, const uint8_t *end, const uint8_t **q,
                   size_t *n)
{
    uint64_t l;

    if (!get_varint(pp, end, &l) || l > (uint64_t)(end - *pp))
        return 0;
    *q = *pp;
    *n = (size_t)l;
    *pp += l;
    return 1;
}

/* A name the scan takes as it is: a name (hrp_name_ok) of printable
 * ASCII only. Any other key is left to the full decoder, which takes or
 * refuses it as a load does, so this is the fast path's condition, not a
 * second rule for names. */
static int name_ok(const uint8_t *q, size_t n)
{
    if (!hrp_name_ok((const char *)q, n))
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (q[i] < 0x20 || q[i] > 0x7e)
            return 0;
    }
    return 1;
}

/* A packed array of delta-coded values being read. */
struct deltas {
    const uint8_t *p, *end;
    uint64_t v; /* the value so far */
};

/* The next value of d into d->v; 0 when there is none or it passes
 * 2^64. */
static inline int next_value(struct deltas *d)
{
    uint64_t x;

    if (d->p < d->end && *d->p < 0x80)
        x = *d->p++;
    else if (!get_varint(&d->p, d->end, &x))
        return 0;
    if (x > UINT64_MAX - d->v)
        return 0;
    d->v += x;
    return 1;
}

/* The sum of the eight bytes of w, each below 128. */
static inline uint64_t byte_sum(uint64_t w)
{
    w = (w & 0x00ff00ff00ff00ffull) + ((w >> 8) & 0x00ff00ff00ff00ffull);
    return (w * 0x0001000100010001ull) >> 48;
}

/*
 * Checks sorted, delta-coded arrays as a load does: incl holds skip +
 * pairs values and self pairs, each sum within 2^64, and the i-th self
 * value is not above the (skip + i)-th inclusive one. Returns 1 when they
 * check out.
 */
static int arrays_ok(const uint8_t *incl, size_t li, const uint8_t *self,
                     size_t ls, uint64_t skip, uint64_t pairs)
{
    struct deltas i = { incl, incl + li, 0 }, s = { self, self + ls, 0 };

    for (uint64_t n = 0; n < skip; n++) {
        if (!next_value(&i))
            return 0;
    }
    for (uint64_t n = 0; n < pairs;) {
        uint64_t wi, ws, bad = 0;

        /* Eight pairs at a time where both arrays go on with eight
         * one-byte deltas (sorted values are mostly close): no branch per
         * value, and no sum can pass 2^64 (self sums stay below inclusive
         * ones, or the arrays fail). */
        if (pairs - n >= 8 && i.end - i.p >= 8 && s.end - s.p >= 8 &&
            i.v <= UINT64_MAX - 8 * 127) {
            memcpy(&wi, i.p, 8);
            memcpy(&ws, s.p, 8);
            wi = le64toh(wi);
            ws = le64toh(ws);
            if (((wi | ws) & 0x8080808080808080ull) == 0) {
                /* Self sums can reach inclusive ones only when they are
                 * within 8 * 127 of each other, or never with the same
                 * deltas: the sums then move in one step each. */
                if (i.v - s.v >= 8 * 127 || wi == ws) {
                    i.v += byte_sum(wi);
                    s.v += byte_sum(ws);
                    i.p += 8;
                    s.p += 8;
                    n += 8;
                    continue;
                }
                for (unsigned b = 0; b < 64; b += 8) {
                    i.v += (wi >> b) & 0x7f;
                    s.v += (ws >> b) & 0x7f;
                    bad |= (uint64_t)(s.v > i.v);
                }
                if (bad)
                    return 0;
                i.p += 8;
                s.p += 8;
                n += 8;
                continue;
            }
        }
        if (!next_value(&i) || !next_value(&s) || s.v > i.v)
            return 0;
        n++;
    }
    return i.p == i.end && s.p == s.end;
}

/* Checks coded events: `pairs` range events and `records` records. */
static int events_ok(const uint8_t *q, size_t n, uint64_t pairs,
                     uint64_t records)
{
    uint64_t np, nr;

    return hra_events_check(q, n, &np, &nr) == 0 && np == pairs &&
           nr == records;
}

/* Whether field f may follow field `last` (only `repeated` repeats). */
static int in_order(unsigned f, unsigned last, unsigned repeated)
{
    return f != 0 && (f > last || (f == last && f == repeated));
}

struct path_fields {
    HRA_KEY_PATH_COUNTER_FIELDS
    uint64_t same;
    const uint8_t *incl, *self, *events, *last_name;
    size_t li, ls, le, last_len;
    size_t names_end; /* the bytes of its names, at its start */
    uint32_t depth;
};

/* Sets path counter number f (a RunPath field) of *pf to v. Returns 0
 * when f is none. */
static inline int path_counter(struct path_fields *pf, unsigned f,
                               uint64_t v)
{
#define COUNTER(name, runkey, runpath, merge, row)                    \
    HRA_KF_IF_PATH(runpath)(if (f == HRA_KF_PATHNUM(runpath)) {       \
        pf->name = v;                                                 \
        return 1;                                                     \
    })
    HRA_KEY_COUNTERS(COUNTER)
#undef COUNTER
    return 0;
}

/* Sets counter number f (a RunKey field) of *c to v. Returns 0 when f is
 * none. */
static inline int key_counter(struct hrr_runscan_values *c, unsigned f,
                              uint64_t v)
{
#define COUNTER(name, runkey, runpath, merge, row)                    \
    if (f == runkey) {                                                \
        c->name = v;                                                  \
        return 1;                                                     \
    }
    HRA_KEY_COUNTERS(COUNTER)
#undef COUNTER
    return 0;
}

/* Whether the counters of path *pf are those of its key, *c. */
static inline int path_counters_same(const struct path_fields *pf,
                                     const struct hrr_runscan_values *c)
{
    int same = 1;

#define COUNTER(name, runkey, runpath, merge, row)                    \
    HRA_KF_IF_PATH(runpath)(same &= pf->name == c->name;)
    HRA_KEY_COUNTERS(COUNTER)
#undef COUNTER
    return same;
}

/* Reads RunPath q[0..n) into *pf. Returns 1 when it is in the canonical
 * layout with known fields only. */
static int path_read(const uint8_t *q, size_t n, struct path_fields *pf)
{
    const uint8_t *p = q, *end = q + n;
    unsigned last = 0;

    memset(pf, 0, sizeof *pf);
    while (p < end) {
        uint64_t tag, v;
        const uint8_t *b;
        size_t bl;
        unsigned f;

        if (!get_varint(&p, end, &tag) || tag > 0xffff)
            return 0;
        f = (unsigned)(tag >> 3);
        if (!in_order(f, last, HRR_RUNPATH_PATH))
            return 0;
        last = f;
        switch (f) {
        case HRR_RUNPATH_PATH:
        case HRR_RUNPATH_INCLUSIVE:
        case HRR_RUNPATH_SELF:
        case HRR_RUNPATH_EVENTS:
            if ((tag & 7) != 2 || !get_len(&p, end, &b, &bl) || bl == 0)
                return 0;
            if (f == HRR_RUNPATH_PATH) {
                if (!name_ok(b, bl) || pf->depth == HRA_MAX_DEPTH_LIMIT)
                    return 0;
                pf->depth++;
                pf->last_name = b;
                pf->last_len = bl;
                pf->names_end = (size_t)(p - q);
            } else if (f == HRR_RUNPATH_INCLUSIVE) {
                pf->incl = b, pf->li = bl;
            } else if (f == HRR_RUNPATH_SELF) {
                pf->self = b, pf->ls = bl;
            } else {
                pf->events = b, pf->le = bl;
            }
            break;
        case HRR_RUNPATH_SAME_AS_KEY:
            if ((tag & 7) != 0 || !get_varint(&p, end, &v) || v != 1)
                return 0;
            pf->same = 1;
            break;
        default: /* a counter, or not simple */
            if ((tag & 7) != 0 || !get_varint(&p, end, &v) || v == 0 ||
                !path_counter(pf, f, v))
                return 0;
            break;
        }
    }
    return pf->depth > 0;
}

/* Whether path i of key s (whose own fields are given) is simple. */
static int path_ok(const struct hrr_runscan *s, uint32_t i, int format,
                   const uint8_t *incl, size_t li, const uint8_t *self,
                   size_t ls, const struct hrr_runscan_values *c)
{
    struct path_fields pf;

    if (!path_read(s->path[i], s->path_len[i], &pf) ||
        pf.last_len != s->n[3] || memcmp(pf.last_name, s->s[3], s->n[3]))
        return 0;
    if (format == HRR_FORMAT_SORTED) {
        if (pf.events != NULL || pf.same)
            return 0;
        if (pf.pairs == 0)
            return pf.incl == NULL && pf.self == NULL;
        if (pf.incl == NULL || pf.self == NULL)
            return 0;
        /* A path holding its key's very values was checked with them. */
        if (s->records == 0 && pf.li == li && pf.ls == ls &&
            pf.pairs == s->pairs && !memcmp(pf.incl, incl, li) &&
            !memcmp(pf.self, self, ls))
            return 1;
        return arrays_ok(pf.incl, pf.li, pf.self, pf.ls, 0, pf.pairs);
    }
    if (pf.incl != NULL || pf.self != NULL)
        return 0;
    if (pf.same)
        return pf.events == NULL && s->npaths == 1 && s->records == 0 &&
               path_counters_same(&pf, c);
    /* A key's one path holding all its events is made a mirror by a
     * load: not simple. */
    if (s->npaths == 1 && s->records == 0)
        return 0;
    if (pf.pairs == 0)
        return pf.events == NULL;
    return pf.events != NULL && events_ok(pf.events, pf.le, pf.pairs, 0);
}

/* The index in hrr_runscan.s of RunKey string field f. */
static unsigned string_index(unsigned f)
{
    switch (f) {
    case HRR_RUNKEY_NODE_ID:
        return 0;
    case HRR_RUNKEY_OPERATOR:
        return 1;
    case HRR_RUNKEY_BACKEND:
        return 2;
    default: /* HRR_RUNKEY_RANGE */
        return 3;
    }
}

/*
 * Reads the head of a RunKey of len bytes whose first avail bytes are at
 * p, its fields up to and with children (HRR_RUNKEY_NODE_ID to
 * HRR_RUNKEY_CHILDREN): the key's identity, ranks and counts. Returns 1
 * with them in
 * *s (and the children's count), and in *stop the offset of the first
 * field past them (len when none), when they are whole within avail bytes,
 * canonical and check out; 0 otherwise.
 */
static int scan_head(const uint8_t *p, size_t avail, size_t len,
                     struct hrr_runscan *s, size_t *stop,
                     uint64_t *children)
{
    const uint8_t *q = p, *end = p + avail;
    unsigned last = 0;
    int from = 0, to = 0;

    s->npaths = 0;
    s->phase = s->node_rank = s->range_rank = 0;
    s->pairs = s->records = 0;
    *children = 0;
    for (int i = 0; i < 4; i++)
        s->n[i] = 0;
    for (;;) {
        const uint8_t *at = q, *b;
        uint64_t tag, v;
        size_t bl;
        unsigned f;

        if (q == end) {
            if (avail != len)
                return 0; /* cut off here: not known to be whole */
            break;
        }
        if (!get_varint(&q, end, &tag) || tag > 0xffff)
            return 0;
        f = (unsigned)(tag >> 3);
        if (!in_order(f, last, 0))
            return 0;
        last = f;
        /* The ranks are the fields node_rank and range_rank: from the
         * first field at or past the one, to the first past the other. */
        if (f >= HRR_RUNKEY_NODE_RANK && !from) {
            s->rank_from = (size_t)(at - p);
            from = 1;
        }
        if (f > HRR_RUNKEY_RANGE_RANK && !to) {
            s->rank_to = (size_t)(at - p);
            to = 1;
        }
        if (f > HRR_RUNKEY_CHILDREN) {
            q = at;
            break;
        }
        switch (f) {
        case HRR_RUNKEY_NODE_ID:
        case HRR_RUNKEY_OPERATOR:
        case HRR_RUNKEY_BACKEND:
        case HRR_RUNKEY_RANGE:
            if ((tag & 7) != 2 || !get_len(&q, end, &b, &bl) ||
                !name_ok(b, bl))
                return 0;
            s->s[string_index(f)] = b;
            s->n[string_index(f)] = (uint32_t)bl;
            break;
        case HRR_RUNKEY_PHASE:
        case HRR_RUNKEY_NODE_RANK:
        case HRR_RUNKEY_RANGE_RANK:
        case HRR_RUNKEY_PAIRS:
        case HRR_RUNKEY_RECORDS:
        case HRR_RUNKEY_CHILDREN:
            if ((tag & 7) != 0 || !get_varint(&q, end, &v) || v == 0)
                return 0;
            if (f == HRR_RUNKEY_PAIRS)
                s->pairs = v;
            else if (f == HRR_RUNKEY_RECORDS)
                s->records = v;
            else if (f == HRR_RUNKEY_CHILDREN)
                *children = v;
            else if (v > UINT32_MAX) /* the uint32 fields */
                return 0;
            else if (f == HRR_RUNKEY_PHASE)
                s->phase = (uint32_t)v;
            else if (f == HRR_RUNKEY_NODE_RANK)
                s->node_rank = (uint32_t)v;
            else
                s->range_rank = (uint32_t)v;
            break;
        default:
            return 0;
        }
    }
    *stop = (size_t)(q - p);
    if (!from)
        s->rank_from = *stop;
    if (!to)
        s->rank_to = *stop;
    for (int i = 0; i < 4; i++) {
        if (s->n[i] == 0)
            return 0;
    }
    return hrp_phase_name(s->phase) != NULL &&
           s->pairs + s->records >= s->pairs;
}

int hrr_runscan_head(const uint8_t *p, size_t avail, size_t len,
                     struct hrr_runscan *s)
{
    uint64_t children;
    size_t stop;

    return avail <= len && scan_head(p, avail, len, s, &stop, &children);
}

int hrr_runscan_key(const uint8_t *p, size_t len, int format,
                    struct hrr_runscan *s)
{
    const uint8_t *q, *end = p + len;
    const uint8_t *incl = NULL, *self = NULL, *events = NULL;
    size_t li = 0, ls = 0, le = 0, stop;
    uint64_t children;
    struct hrr_runscan_values c = { 0 };
    unsigned last = HRR_RUNKEY_CHILDREN;

    if (!scan_head(p, len, len, s, &stop, &children))
        return 0;
    c.pairs = s->pairs;
    c.records = s->records;
    c.children = children;
    for (q = p + stop; q < end;) {
        const uint8_t *b;
        uint64_t tag, v;
        size_t bl;
        unsigned f;

        if (!get_varint(&q, end, &tag) || tag > 0xffff)
            return 0;
        f = (unsigned)(tag >> 3);
        if (!in_order(f, last, HRR_RUNKEY_PATHS))
            return 0;
        last = f;
        switch (f) {
        case HRR_RUNKEY_INCLUSIVE:
        case HRR_RUNKEY_SELF:
        case HRR_RUNKEY_EVENTS:
            if ((tag & 7) != 2 || !get_len(&q, end, &b, &bl) || bl == 0)
                return 0;
            if (f == HRR_RUNKEY_INCLUSIVE)
                incl = b, li = bl;
            else if (f == HRR_RUNKEY_SELF)
                self = b, ls = bl;
            else
                events = b, le = bl;
            break;
        case HRR_RUNKEY_PATHS:
            if ((tag & 7) != 2 || !get_len(&q, end, &b, &bl) ||
                s->npaths == HRR_RUNSCAN_PATHS)
                return 0;
            s->path[s->npaths] = b;
            s->path_len[s->npaths++] = (uint32_t)bl;
            break;
        default: /* a counter past the head, or not simple */
            if ((tag & 7) != 0 || !get_varint(&q, end, &v) || v == 0 ||
                !key_counter(&c, f, v))
                return 0;
            break;
        }
    }
    if (format == HRR_FORMAT_SORTED) {
        if (events != NULL)
            return 0;
        if (s->pairs + s->records == 0) {
            if (incl != NULL || self != NULL)
                return 0;
        } else if (incl == NULL || (self == NULL) != (s->pairs == 0) ||
                   !arrays_ok(incl, li, self, ls, s->records, s->pairs)) {
            return 0;
        }
    } else if (format == HRR_FORMAT_EVENTS) {
        if (incl != NULL || self != NULL)
            return 0;
        if (s->pairs + s->records == 0 ? events != NULL
                                       : events == NULL ||
                                         !events_ok(events, le, s->pairs,
                                                    s->records))
            return 0;
    } else {
        return 0;
    }
    for (uint32_t i = 0; i < s->npaths; i++) {
        if (!path_ok(s, i, format, incl, li, self, ls, &c))
            return 0;
    }
    c.incl = incl;
    c.li = li;
    c.self = self;
    c.ls = ls;
    c.names_end = 0;
    s->v = c;
    return 1;
}

void hrr_runscan_path_values(const struct hrr_runscan *s, uint32_t i,
                             struct hrr_runscan_values *v)
{
    struct path_fields pf;

    path_read(s->path[i], s->path_len[i], &pf); /* checked: simple */
    *v = (struct hrr_runscan_values){ 0 };
    v->incl = pf.incl;
    v->li = pf.li;
    v->self = pf.self;
    v->ls = pf.ls;
    HRA_KEY_PATH_COUNTERS_COPY(v, &pf);
    v->names_end = pf.names_end;
}

uint32_t hrr_runscan_path_names(const struct hrr_runscan *s, uint32_t i,
                                const uint8_t **names, uint32_t *lens)
{
    const uint8_t *p = s->path[i], *end = p + s->path_len[i];
    uint32_t depth = 0;

    /* Checked by hrr_runscan_key: names come first. */
    while (p < end && *p == (HRR_RUNPATH_PATH << 3 | 2u) &&
           depth < HRA_MAX_DEPTH_LIMIT) {
        const uint8_t *b;
        size_t bl;

        p++;
        if (!get_len(&p, end, &b, &bl))
            break;
        names[depth] = b;
        lens[depth++] = (uint32_t)bl;
    }
    return depth;
}

static size_t put_varint(uint8_t *out, uint64_t v)
{
    size_t n = 0;

    while (v >= 0x80) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

size_t hrr_runscan_put_ranks(uint8_t *out, uint32_t node_rank,
                             uint32_t range_rank)
{
    size_t n = 0;

    if (node_rank != 0) {
        out[n++] = HRR_RUNKEY_NODE_RANK << 3;
        n += put_varint(out + n, node_rank);
    }
    if (range_rank != 0) {
        out[n++] = HRR_RUNKEY_RANGE_RANK << 3;
        n += put_varint(out + n, range_rank);
    }
    return n;
}
