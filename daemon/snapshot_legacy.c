/*
 * Snapshots written by earlier releases: record files (recfile.h, magic
 * "HRSNAP1\n") of format versions 1 to 5, read once to migrate a state
 * directory (see snapshot.h), never written.
 *
 * Records, all little-endian: one 'H' (format version, the last journal
 * generation the snapshot covers, rank counters, and how many strings,
 * keys and clients follow), 'S' records of strings in id order, 'C' records
 * of clients, 'K' records of keys, from version 4 on 'P' records of the
 * path table and 'Q' records of path keys, and one 'E' that repeats the
 * counts. A snapshot without its 'E' is truncated.
 *
 * Loading checks every field as ingest checks a batch (ids in bounds,
 * phases, exact encodings that decode to their counts, sorted histogram
 * buckets whose counts add up); at the first damaged or inconsistent record
 * it stops, keeping what came before.
 */
#include "config.h"

#include "daemon/snapshot.h"
#include "lib/agg/agg_impl.h"
#include "proto/protocol.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Version 2 added each key's sum of children after its records, version 3
 * its sum of descendants after that; older snapshots still load, their
 * keys with no children (1) or no descendants (2). Version 4 added the
 * calling contexts (agg.h): the numbers of paths and path keys at the end
 * of the header, 'P' records of the path table in id order (after the
 * strings) and 'Q' records of path keys (after the keys): the labels and
 * range of the range key a path key belongs to, its path id, then as a
 * key's from `exact` on (no records). Older snapshots load without
 * paths. Version 5 added each key's clock paths (one byte of HRP_PATH_*
 * bits) after its sum of descendants; older ones load with paths not
 * known. */
#define FORMAT_VERSION_MAX 5u
#define FORMAT_VERSION_MIN 1u
#define REC_HEADER 'H'
#define REC_STRINGS 'S'
#define REC_CLIENT 'C'
#define REC_KEY 'K'
#define REC_PATHS 'P'
#define REC_PKEY 'Q'
#define REC_END 'E'

/* --- decoding ------------------------------------------------------------ */

struct dec {
    const uint8_t *p;
    size_t len, pos;
    int bad;
};

static const uint8_t *get_bytes(struct dec *d, size_t n)
{
    const uint8_t *p;

    if (d->bad || d->len - d->pos < n) {
        d->bad = 1;
        return NULL;
    }
    p = d->p + d->pos;
    d->pos += n;
    return p;
}

static uint8_t get_u8(struct dec *d)
{
    const uint8_t *p = get_bytes(d, 1);
    return p ? *p : 0;
}

/* An unsigned little-endian number of n bytes (0 past the end). */
static uint64_t get_le(struct dec *d, size_t n)
{
    const uint8_t *p = get_bytes(d, n);
    uint64_t v = 0;

    for (size_t i = n; p != NULL && i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

static uint16_t get_u16(struct dec *d)
{
    return (uint16_t)get_le(d, 2);
}

static uint32_t get_u32(struct dec *d)
{
    return (uint32_t)get_le(d, 4);
}

static uint64_t get_u64(struct dec *d)
{
    return get_le(d, 8);
}

static double get_f64(struct dec *d)
{
    uint64_t v = get_u64(d);
    double x;

    memcpy(&x, &v, 8);
    return x;
}

/* A string of at most HRP_MAX_STRING bytes, copied into buf (which holds
 * HRP_MAX_STRING + 1). */
static const char *get_str(struct dec *d, char *buf)
{
    uint32_t n = get_u32(d);
    const uint8_t *p;

    if (n > HRP_MAX_STRING) {
        d->bad = 1;
        return "";
    }
    p = get_bytes(d, n);
    if (p == NULL)
        return "";
    memcpy(buf, p, n);
    buf[n] = '\0';
    if (strlen(buf) != n)
        d->bad = 1; /* an embedded NUL */
    return buf;
}

/* --- loading ------------------------------------------------------------ */

struct loader {
    struct hra_agg *a;
    struct hrd_ingest *in;
    struct hrd_snapshot_loaded *out;
    uint32_t version;          /* the header's format version */
    uint32_t nstrings, nkeys;  /* announced by the header */
    uint64_t nclients;
    uint32_t npaths, npkeys;   /* likewise (version 4) */
    uint32_t pkeys;            /* path keys loaded */
    int have_header;
    char s1[HRP_MAX_STRING + 1], s2[HRP_MAX_STRING + 1];
};

static int string_id_ok(const struct hra_agg *a, uint32_t id)
{
    return id >= 1 && id <= a->str.n;
}

/* Each load_* below takes one record into the loader's state. Returns 0,
 * or -EBADMSG when the record is damaged or does not fit what came before
 * (memory running out while it is taken reads the same: the load stops
 * there either way, keeping what came before). */

static int load_header(struct loader *l, struct dec *d)
{
    uint32_t version = get_u32(d);

    if (l->have_header || version < FORMAT_VERSION_MIN ||
        version > FORMAT_VERSION_MAX)
        return -EBADMSG;
    l->version = version;
    l->out->covers = get_u64(d);
    l->a->node_ranks = get_u32(d);
    l->a->range_ranks = get_u32(d);
    l->a->next_serial = get_u32(d);
    l->nstrings = get_u32(d);
    l->nkeys = get_u32(d);
    l->nclients = get_u64(d);
    if (version >= 4) {
        l->npaths = get_u32(d);
        l->npkeys = get_u32(d);
    }
    l->have_header = 1;
    return d->bad ? -EBADMSG : 0;
}

static int load_strings(struct loader *l, struct dec *d)
{
    uint32_t first = get_u32(d), n = get_u32(d);

    if (first != l->a->str.n + 1 || n > l->nstrings - l->a->str.n)
        return -EBADMSG;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t rank = get_u32(d);
        const char *s = get_str(d, l->s1);
        uint32_t id;

        if (d->bad)
            return -EBADMSG;
        id = hra_str(l->a, s);
        if (id != first + i)
            return -EBADMSG; /* a repeated string, or no memory */
        l->a->str.rank[id - 1] = rank;
    }
    return 0;
}

static int load_client(struct loader *l, struct dec *d)
{
    uint32_t pid = get_u32(d);
    uint64_t instance = get_u64(d);
    const char *label = get_str(d, l->s1);
    const char *clock = get_str(d, l->s2);
    struct hrd_client *c;
    uint64_t v[12];
    uint32_t nlost;

    for (int i = 0; i < 12; i++)
        v[i] = get_u64(d);
    nlost = get_u32(d);
    if (d->bad || hrd_ingest_client_find(l->in, pid, instance) != NULL)
        return -EBADMSG;
    c = hrd_ingest_client(l->in, pid, instance, label, clock);
    if (c == NULL)
        return -EBADMSG;
    c->max_seq = v[0];
    c->batches = v[1];
    c->events = v[2];
    c->duplicates = v[3];
    c->gaps = v[4];
    c->lost = v[5];
    c->out_of_order = v[6];
    c->open_at_window_end = v[7];
    c->foreign_thread = v[8];
    c->label_in_window = v[9];
    c->too_deep = v[10];
    c->rejected = v[11];
    /* Whether it sent its final counters is not kept: not accused. */
    c->finished = 1;
    for (uint32_t i = 0; i < nlost; i++) {
        uint32_t node = get_u32(d), op = get_u32(d), backend = get_u32(d);
        uint32_t phase = get_u32(d);
        uint64_t count = get_u64(d);

        if (d->bad || !string_id_ok(l->a, node) || !string_id_ok(l->a, op) ||
            !string_id_ok(l->a, backend) || hrp_phase_name(phase) == NULL ||
            hrd_ingest_lost_set(l->in, c, node, op, backend, phase,
                                count) != 0)
            return -EBADMSG;
    }
    l->out->clients++;
    return 0;
}

/* Reads a histogram into a new heap one. Returns it or NULL. */
static struct hrs_hist *load_hist(struct dec *d)
{
    struct hrs_hist *h = calloc(1, sizeof *h);
    uint64_t lo, hi, total = 0;
    double sq_hi, sq_lo;
    uint16_t *idx = NULL;
    uint32_t nb;

    if (h == NULL)
        return NULL;
    h->n = get_u64(d);
    h->min = get_u64(d);
    h->max = get_u64(d);
    lo = get_u64(d);
    hi = get_u64(d);
    h->sum = (unsigned __int128)hi << 64 | lo;
    sq_hi = get_f64(d);
    sq_lo = get_f64(d);
    h->sumsq_big = (long double)sq_hi + (long double)sq_lo;
    nb = get_u32(d);
    if (d->bad || nb > HRS_HIST_BUCKETS || h->min > h->max)
        goto fail;
    idx = malloc((nb + 1) * sizeof *idx);
    if (idx == NULL)
        goto fail;
    for (uint32_t i = 0; i < nb; i++) {
        idx[i] = get_u16(d);
        if (idx[i] >= HRS_HIST_BUCKETS || (i > 0 && idx[i] <= idx[i - 1]))
            goto fail;
    }
    for (uint32_t i = 0; i < nb; i++) {
        uint64_t cnt = get_u64(d);
        if (d->bad || cnt == 0 || hrs_hist_set_bucket(h, idx[i], cnt) != 0)
            goto fail;
        total += cnt;
    }
    if (d->bad || total != h->n)
        goto fail;
    free(idx);
    return h;
fail:
    free(idx);
    hrs_hist_fini(h);
    free(h);
    return NULL;
}

static int load_key(struct loader *l, struct dec *d)
{
    uint32_t node = get_u32(d), op = get_u32(d), backend = get_u32(d);
    uint32_t phase = get_u32(d), range = get_u32(d), serial = get_u32(d);
    uint8_t exact = get_u8(d);
    uint64_t pairs = get_u64(d), records = get_u64(d);
    uint64_t children = l->version >= 2 ? get_u64(d) : 0;
    uint64_t descendants = l->version >= 3 ? get_u64(d) : 0;
    uint8_t paths = l->version >= 5 ? get_u8(d) : 0;
    uint32_t before = l->a->nkeys;
    struct hra_key *k;
    int rc;

    if (d->bad || !string_id_ok(l->a, node) || !string_id_ok(l->a, op) ||
        !string_id_ok(l->a, backend) || !string_id_ok(l->a, range) ||
        hrp_phase_name(phase) == NULL || exact > 1 ||
        (paths & ~HRP_PATHS_ALL) != 0 || l->a->nkeys >= l->nkeys)
        return -EBADMSG;
    k = hra_agg_key(l->a, node, op, backend, phase, range);
    if (k == NULL || l->a->nkeys == before)
        return -EBADMSG; /* no memory, or the key came twice */
    k->serial = serial;
    if (exact) {
        uint64_t len = get_u64(d);
        const uint8_t *p = get_bytes(d, len);
        rc = p == NULL ? -EBADMSG
                       : hra_key_set_exact(l->a, k, p, len, pairs, records);
    } else {
        struct hrs_hist *hi = load_hist(d), *hs = load_hist(d);
        rc = hi == NULL || hs == NULL
                 ? -EBADMSG
                 : hra_key_set_hist(l->a, k, hi, hs, pairs, records);
        if (rc != 0) {
            hrs_hist_fini(hi);
            hrs_hist_fini(hs);
            free(hi);
            free(hs);
        }
    }
    if (rc != 0) {
        hra_key_remove(l->a, k);
        return -EBADMSG;
    }
    k->children = children;
    k->descendants = descendants;
    k->clock_paths = paths;
    if (serial >= l->a->next_serial)
        l->a->next_serial = serial + 1;
    l->out->keys++;
    return 0;
}

static int load_paths(struct loader *l, struct dec *d)
{
    struct hra_agg *a = l->a;
    uint32_t first = get_u32(d), n = get_u32(d);
    uint32_t max_paths = a->max_paths, max_depth = a->max_depth;
    int rc = 0;

    if (first != a->path.n + 1 || n > l->npaths - a->path.n)
        return -EBADMSG;
    /* The snapshot's paths are taken whatever the limits now. */
    a->max_paths = UINT32_MAX - 3;
    a->max_depth = HRA_MAX_DEPTH_LIMIT;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        uint32_t parent = get_u32(d), range = get_u32(d);

        if (d->bad || parent >= first + i || !string_id_ok(a, range) ||
            hra_path(a, parent, range) != first + i)
            rc = -EBADMSG; /* out of order, repeated, too deep, or no memory */
    }
    a->max_paths = max_paths;
    a->max_depth = max_depth;
    return rc;
}

static int load_pkey(struct loader *l, struct dec *d)
{
    struct hra_agg *a = l->a;
    uint32_t node = get_u32(d), op = get_u32(d), backend = get_u32(d);
    uint32_t phase = get_u32(d), range = get_u32(d), path = get_u32(d);
    uint8_t exact = get_u8(d);
    uint64_t pairs = get_u64(d), children = get_u64(d);
    uint64_t descendants = get_u64(d);
    uint32_t before = a->nkeys, pbefore = a->npkeys;
    struct hra_key *k, *pk;
    int rc;

    if (d->bad || !string_id_ok(a, node) || !string_id_ok(a, op) ||
        !string_id_ok(a, backend) || !string_id_ok(a, range) ||
        hrp_phase_name(phase) == NULL || exact > 1 || path == 0 ||
        path > a->path.n || a->path.range[path - 1] != range ||
        l->pkeys >= l->npkeys)
        return -EBADMSG;
    k = hra_agg_key(a, node, op, backend, phase, range);
    if (k != NULL && a->nkeys != before) {
        hra_key_remove(a, k); /* made here: none came before */
        return -EBADMSG;
    }
    if (k == NULL || !k->has_scopes)
        return -EBADMSG; /* no range key of its own */
    pk = hra_path_key(a, k, path);
    if (pk == NULL || a->npkeys == pbefore)
        return -EBADMSG; /* no memory, or the key came twice */
    if (exact) {
        uint64_t len = get_u64(d);
        const uint8_t *p = get_bytes(d, len);
        rc = p == NULL ? -EBADMSG : hra_path_set_exact(a, pk, p, len, pairs);
    } else {
        struct hrs_hist *hi = load_hist(d), *hs = load_hist(d);
        rc = hi == NULL || hs == NULL
                 ? -EBADMSG
                 : hra_path_set_hist(a, pk, hi, hs, pairs);
        if (rc != 0) {
            hrs_hist_fini(hi);
            hrs_hist_fini(hs);
            free(hi);
            free(hs);
        }
    }
    if (rc != 0)
        return -EBADMSG; /* the empty path key stays: it holds nothing */
    pk->children = children;
    pk->descendants = descendants;
    l->pkeys++;
    return 0;
}

int hrd_snapshot_legacy_load(struct hrr_recreader *r, struct hra_agg *a,
                             struct hrd_ingest *in,
                             struct hrd_snapshot_loaded *out)
{
    struct loader *l;
    const uint8_t *p;
    size_t len;
    uint8_t type;
    int rc;

    memset(out, 0, sizeof *out);
    out->legacy = 1;
    l = calloc(1, sizeof *l);
    if (l == NULL)
        return -ENOMEM;
    l->a = a;
    l->in = in;
    l->out = out;
    for (;;) {
        uint64_t at = r->offset;
        struct dec d;
        int bad; /* 0 or -EBADMSG, as the load_* functions return */

        rc = hrr_recreader_next(r, &type, &p, &len);
        if (rc == 0) {
            snprintf(out->why, sizeof out->why,
                     "ends at byte %llu without its final record",
                     (unsigned long long)at);
            rc = -EBADMSG;
            break;
        }
        if (rc < 0) {
            if (rc == -EBADMSG)
                snprintf(out->why, sizeof out->why, "%s at byte %llu",
                         r->why, (unsigned long long)at);
            break;
        }
        d = (struct dec){ p, len, 0, 0 };
        if (!l->have_header && type != REC_HEADER) {
            bad = -EBADMSG;
        } else if (type == REC_HEADER) {
            bad = load_header(l, &d);
        } else if (type == REC_STRINGS) {
            bad = load_strings(l, &d);
        } else if (type == REC_CLIENT) {
            bad = load_client(l, &d);
        } else if (type == REC_KEY) {
            bad = load_key(l, &d);
        } else if (type == REC_PATHS && l->version >= 4) {
            bad = load_paths(l, &d);
        } else if (type == REC_PKEY && l->version >= 4) {
            bad = load_pkey(l, &d);
        } else if (type == REC_END) {
            uint32_t nkeys = get_u32(&d);
            uint64_t nclients = get_u64(&d);
            bad = d.bad || nkeys != out->keys || nclients != out->clients ||
                          nkeys != l->nkeys || nclients != l->nclients ||
                          l->pkeys != l->npkeys || l->a->path.n != l->npaths
                      ? -EBADMSG
                      : 0;
            if (!bad) {
                out->complete = 1;
                rc = 0;
                break;
            }
        } else {
            bad = -EBADMSG;
        }
        if (bad || d.pos != d.len) {
            snprintf(out->why, sizeof out->why,
                     "inconsistent record '%c' at byte %llu", type,
                     (unsigned long long)at);
            rc = -EBADMSG;
            break;
        }
    }
    free(l);
    return rc;
}
