/* The inputs of a merge (see runmerge.h). */
#include "config.h"

#include "lib/run/runmerge.h"
#include "lib/agg/agg_impl.h"
#include "lib/util/grow.h"
#include "lib/run/runjoin.h"
#include "lib/run/runput.h"
#include "lib/run/runscan.h"
#include "proto/protocol.h"
#include "proto/unpack.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct hrr_runmerge_in {
    struct hrr_reader r;
    Hostrange__RunHeader *h;
    Hostrange__RunEnd *e;
    int open;
};

/* A key's record in an input. */
struct hrr_runmerge_rec {
    uint64_t offset;
    uint32_t file;
    uint32_t serial;   /* its key's, or UINT32_MAX: none made (it does not
                          check out; loading says why) */
    uint32_t len;
    uint32_t crc;
    uint32_t rank_from, rank_to; /* a simple one's (runscan.h) */
    uint32_t next;     /* the next record of its key + 1 (0: none) */
    uint8_t simple;    /* simple (runscan.h), or, deferred, may be */
    uint8_t deferred;  /* only its identity was read when scanned: its
                          checksum and values are checked when written */
};

/* How a key is written. */
enum { KEY_LOAD, KEY_COPY, KEY_JOIN };

/* A key's records. */
struct hrr_runmerge_key {
    uint32_t first, last; /* records + 1 */
    uint32_t count;
    uint8_t how;          /* KEY_* (set by hrr_runmerge_load) */
};

/* The bytes of a key read to know it (its identity) when scanning. */
#define SKIM_BYTES 1024u

int hrr_runmerge_init(struct hrr_runmerge *m, struct hra_agg *a, int format,
                      size_t nin)
{
    memset(m, 0, sizeof *m);
    m->a = a;
    m->format = format;
    m->nin = nin;
    hrr_runload_init_reader(&m->l, a);
    m->in = calloc(nin + 1, sizeof *m->in);
    return m->in == NULL ? -ENOMEM : 0;
}

void hrr_runmerge_fini(struct hrr_runmerge *m)
{
    for (size_t i = 0; i < m->nin && m->in != NULL; i++) {
        if (m->in[i].open)
            hrr_close(&m->in[i].r);
        if (m->in[i].h != NULL)
            hostrange__run_header__free_unpacked(m->in[i].h, NULL);
        if (m->in[i].e != NULL)
            hostrange__run_end__free_unpacked(m->in[i].e, NULL);
    }
    free(m->in);
    free(m->rec);
    free(m->keys);
    hrr_runload_fini(&m->l);
    memset(m, 0, sizeof *m);
}

/* Interns n bytes at s. Returns the string id, or 0 on ENOMEM. */
static uint32_t intern(struct hra_agg *a, const uint8_t *s, uint32_t n)
{
    char buf[HRP_MAX_STRING + 1];

    memcpy(buf, s, n);
    buf[n] = '\0';
    return hra_str(a, buf);
}

/* Notes record r as one of key serial's. Returns 0 or -ENOMEM. */
static int note_rec(struct hrr_runmerge *m, const struct hrr_runmerge_rec *r)
{
    if (m->nrec >= UINT32_MAX - 1 ||
        hru_grow(&m->rec, &m->caprec, m->nrec + 1, sizeof *m->rec, 1024) != 0)
        return -ENOMEM;
    if (r->serial != UINT32_MAX) {
        struct hrr_runmerge_key *k;

        if (r->serial >= m->capkeys) {
            uint32_t was = m->capkeys;

            if (hru_grow32(&m->keys, &m->capkeys, (size_t)r->serial + 1,
                           sizeof *m->keys, 1024) != 0)
                return -ENOMEM;
            memset(m->keys + was, 0, (m->capkeys - was) * sizeof *m->keys);
        }
        k = &m->keys[r->serial];
        if (k->count++ == 0)
            k->first = (uint32_t)m->nrec + 1;
        else
            m->rec[k->last - 1].next = (uint32_t)m->nrec + 1;
        k->last = (uint32_t)m->nrec + 1;
    }
    m->rec[m->nrec++] = *r;
    return 0;
}

/* Makes the key named by s (its identity read) and notes its ranks;
 * sets *serial. Returns 0 or -ENOMEM. */
static int make_key(struct hrr_runmerge *m, const struct hrr_runscan *s,
                    uint32_t *serial)
{
    struct hra_agg *a = m->a;
    uint32_t id[4];
    struct hra_key *k;

    for (int i = 0; i < 4; i++) {
        if ((id[i] = intern(a, s->s[i], s->n[i])) == 0)
            return -ENOMEM;
    }
    if (hrr_runload_note(&m->l, id[0], s->node_rank, id[3],
                         s->range_rank) != 0 ||
        (k = hra_agg_key(a, id[0], id[1], id[2], s->phase, id[3])) == NULL)
        return -ENOMEM;
    *serial = k->serial;
    return 0;
}

/* Interns the paths of simple key s, their ids into seen[0..npaths);
 * clears *simple when a load would not keep them as they are (too deep,
 * no room, one twice). Returns 0 or -ENOMEM. */
static int intern_paths(struct hrr_runmerge *m, const struct hrr_runscan *s,
                        uint8_t *simple, uint32_t *seen)
{

    for (uint32_t i = 0; i < s->npaths; i++) {
        const uint8_t *names[HRA_MAX_DEPTH_LIMIT];
        uint32_t lens[HRA_MAX_DEPTH_LIMIT], path = 0;
        uint32_t depth = hrr_runscan_path_names(s, i, names, lens);

        for (uint32_t d = 0; d < depth; d++) {
            uint32_t r = intern(m->a, names[d], lens[d]);

            if (r == 0)
                return -ENOMEM;
            path = hra_path(m->a, path, r);
            if (path == HRA_PATH_TOO_DEEP || path == 0)
                break;
        }
        if (path == HRA_PATH_TOO_DEEP || path == 0)
            *simple = 0;
        for (uint32_t j = 0; j < i && *simple; j++)
            *simple = seen[j] != path;
        seen[i] = path;
    }
    return 0;
}

/* Makes the key of a record that is not simple, when it names one. */
static int make_other(struct hrr_runmerge *m, const uint8_t *p, size_t len,
                      uint32_t *serial)
{
    Hostrange__RunKey *k;
    const char *s[4];
    uint32_t id[4];
    struct hra_key *key;
    int rc;

    k = hrp_unpack(&hostrange__run_key__descriptor, len, p, &rc);
    if (rc != 0)
        return rc;
    s[0] = k->node_id;
    s[1] = k->operator_;
    s[2] = k->backend;
    s[3] = k->range;
    *serial = UINT32_MAX;
    if (!hrp_key_names_ok(s[0], s[1], s[2], s[3]) ||
        hrp_phase_name(k->phase) == NULL)
        goto out; /* loading it says what is wrong */
    for (int i = 0; i < 4; i++) {
        if ((id[i] = hra_str(m->a, s[i])) == 0) {
            rc = -ENOMEM;
            goto out;
        }
    }
    key = hra_agg_key(m->a, id[0], id[1], id[2], k->phase, id[3]);
    if (key == NULL)
        rc = -ENOMEM;
    else
        *serial = key->serial;
out:
    hostrange__run_key__free_unpacked(k, NULL);
    return rc;
}

/* Notes that input `file` is read next: the input read before gives back
 * its buffer (which may hold a large record, or the records after it read
 * ahead), so that of all the inputs, only the one being read keeps more
 * than a small buffer. */
static void use_reader(struct hrr_runmerge *m, uint32_t file)
{
    if (m->reading != 0 && m->reading - 1 != file)
        hrr_reader_trim(&m->in[m->reading - 1].r);
    m->reading = file + 1;
}

/* Says in err that the record of type `type` at `offset` of `path` does
 * not decode. Returns -EINVAL. */
static int undecodable(const char *path, uint64_t offset, uint8_t type,
                       char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: damaged at byte %llu (a record of type "
             "0x%02x that does not decode)", path, (unsigned long long)offset,
             type);
    return -EINVAL;
}

/* Says in err that reading `path` ran out of memory. Returns -ENOMEM. */
static int out_of_memory(const char *path, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: out of memory", path);
    return -ENOMEM;
}

/* Decodes input in's end record (len bytes at p, at `offset`), which must
 * be the last bytes of the file. Returns 0, or a negative errno with the
 * reason in err. */
static int scan_end(struct hrr_runmerge_in *in, const char *path,
                    const uint8_t *p, size_t len, uint64_t offset, char *err,
                    size_t errlen)
{
    struct hrr_reader *r = &in->r;
    int rc;

    in->e = hrp_unpack(&hostrange__run_end__descriptor, len, p, &rc);
    if (rc == -ENOMEM)
        return out_of_memory(path, err, errlen);
    if (rc != 0)
        return undecodable(path, offset, 'E', err, errlen);
    if (r->offset != r->size) {
        snprintf(err, errlen, "%s: damaged at byte %llu (data after the "
                 "final record)", path, (unsigned long long)r->offset);
        return -EINVAL;
    }
    return 0;
}

/*
 * Reads the next record of input i (file `path`): a key, noted for the
 * merge (by its first bytes only when it can wait: see hrr_runmerge_rec),
 * or the end record, after which *end is set. Returns 0, or a negative
 * errno with the reason in err.
 */
static int scan_record(struct hrr_runmerge *m, size_t i, const char *path,
                       int *end, char *err, size_t errlen)
{
    struct hrr_reader *r = &m->in[i].r;
    uint32_t ids[HRR_RUNSCAN_PATHS];
    struct hrr_runmerge_rec rec;
    struct hrr_runscan s;
    const uint8_t *p;
    uint8_t type;
    size_t len, got;
    int rc;

    /* A key is known by its first bytes; the rest waits for writing (or
     * loading). Anything else is read whole at once. */
    rec.offset = r->offset;
    rc = hrr_skim(r, SKIM_BYTES, &type, &len, &p, &got, err, errlen);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        snprintf(err, errlen, "%s: truncated at byte %llu (its final "
                 "record is missing)", path, (unsigned long long)rec.offset);
        return -EINVAL;
    }
    rec.file = (uint32_t)i;
    rec.next = 0;
    rec.len = (uint32_t)len;
    rec.crc = r->crc;
    rec.deferred = !m->whole && type == 'K' &&
                   hrr_runscan_head(p, got, len, &s);
    if (rec.deferred) {
        rec.simple = 1;
    } else {
        rc = hrr_reread(r, rec.offset, len, rec.crc, &type, &p, err,
                            errlen);
        if (rc != 0)
            return rc;
        if (type == 'E') {
            *end = 1;
            return scan_end(&m->in[i], path, p, len, rec.offset, err,
                            errlen);
        }
        if (type != 'K')
            return undecodable(path, rec.offset, type, err, errlen);
        rec.simple = (uint8_t)hrr_runscan_key(p, len, m->format, &s);
    }
    rec.rank_from = rec.simple ? (uint32_t)s.rank_from : 0;
    rec.rank_to = rec.simple ? (uint32_t)s.rank_to : 0;
    if (rec.simple) {
        rc = make_key(m, &s, &rec.serial);
        if (rc == 0 && !rec.deferred)
            rc = intern_paths(m, &s, &rec.simple, ids);
    } else {
        rc = make_other(m, p, len, &rec.serial);
    }
    if (rc == -EINVAL)
        return undecodable(path, rec.offset, type, err, errlen);
    if (rc != 0 || note_rec(m, &rec) != 0)
        return out_of_memory(path, err, errlen);
    return 0;
}

int hrr_runmerge_scan(struct hrr_runmerge *m, size_t i, const char *path,
                      Hostrange__RunHeader **hp, Hostrange__RunEnd **ep,
                      hrr_progress_fn progress, void *ctx, char *err,
                      size_t errlen)
{
    struct hrr_runmerge_in *in = &m->in[i];
    struct hrr_reader *r = &in->r;
    uint64_t keys = 0, next_report = 0;
    int end = 0, rc = hrr_open(r, path, &in->h, err, errlen);

    if (rc != 0)
        return rc;
    in->open = 1;
    {
        /* A daemon's state (its snapshot read as a run): not part of the
         * run. */
        Hostrange__RunState *st = NULL;

        if ((rc = hrr_read_state(r, &st, err, errlen)) < 0)
            return rc;
        if (st != NULL)
            hostrange__run_state__free_unpacked(st, NULL);
    }
    m->l.run = (uint32_t)i;
    for (;;) {
        rc = scan_record(m, i, path, &end, err, errlen);
        if (rc != 0)
            return rc;
        if (end)
            break;
        keys++;
        if (progress != NULL && r->offset >= next_report) {
            progress(ctx, r->offset, r->size);
            next_report = r->offset + (4u << 20);
        }
    }
    if (in->e->keys != keys) {
        snprintf(err, errlen, "%s: damaged (its end counts %llu keys, it "
                 "holds %llu)", path, (unsigned long long)in->e->keys,
                 (unsigned long long)keys);
        return -EINVAL;
    }
    if (hrr_runload_end(&m->l, in->e) != 0)
        return out_of_memory(path, err, errlen);
    hrr_reader_trim(r);
    if (progress != NULL)
        progress(ctx, r->size, r->size);
    m->size += r->size;
    *hp = in->h;
    *ep = in->e;
    return 0;
}

/* How key serial is written (KEY_*). */
static int key_how(const struct hrr_runmerge *m, uint32_t serial)
{
    return serial < m->capkeys ? m->keys[serial].how : KEY_LOAD;
}

/* Decides how each key is written: copied when found once and simple;
 * joined when found several times, all simple, for run format 1, and
 * small enough to hold its records at once under the memory budget;
 * else loaded. */
static void decide(struct hrr_runmerge *m)
{
    for (uint32_t serial = 0; serial < m->capkeys; serial++) {
        struct hrr_runmerge_key *k = &m->keys[serial];
        uint64_t bytes = 0;
        int simple = k->count > 0;

        for (uint32_t r = k->first; r != 0; r = m->rec[r - 1].next) {
            simple &= m->rec[r - 1].simple;
            bytes += m->rec[r - 1].len;
        }
        if (simple && k->count == 1)
            k->how = KEY_COPY;
        else if (simple && m->format == HRR_FORMAT_SORTED &&
                 bytes <= m->a->max_bytes / 4)
            k->how = KEY_JOIN;
        else
            k->how = KEY_LOAD;
    }
}

/* Whether unpacked key k names key `want`. */
static int names_key(const struct hra_agg *a, const Hostrange__RunKey *k,
                     const struct hra_key *want)
{
    return k->phase == want->phase &&
           strcmp(k->node_id, hra_str_get(a, want->node)) == 0 &&
           strcmp(k->operator_, hra_str_get(a, want->op)) == 0 &&
           strcmp(k->backend, hra_str_get(a, want->backend)) == 0 &&
           strcmp(k->range, hra_str_get(a, want->range)) == 0;
}

/* Adds record rec (read, len bytes at p) to the aggregation; when want is
 * not NULL, the record must be a key of its names (as its first bytes
 * said when it was scanned). Returns 0, HRR_RUNMERGE_AGAIN when it is not,
 * or a negative errno with a one-line reason in err. */
static int load_rec(struct hrr_runmerge *m, const struct hrr_runmerge_rec *rec,
                    const uint8_t *p, const struct hra_key *want, char *err,
                    size_t errlen)
{
    const char *path = m->in[rec->file].r.path;
    Hostrange__RunKey *k;
    char why[512];
    int rc;

    k = hrp_unpack(&hostrange__run_key__descriptor, rec->len, p, &rc);
    if (rc == -ENOMEM) {
        snprintf(err, errlen, "%s: out of memory", path);
        return rc;
    }
    if (rc != 0) {
        snprintf(err, errlen, "%s: damaged at byte %llu (a record of type "
                 "0x4b that does not decode)", path,
                 (unsigned long long)rec->offset);
        return -EINVAL;
    }
    if (want != NULL && !names_key(m->a, k, want)) {
        snprintf(err, errlen, "%s: a key at byte %llu gives its names "
                 "twice", path, (unsigned long long)rec->offset);
        hostrange__run_key__free_unpacked(k, NULL);
        return HRR_RUNMERGE_AGAIN;
    }
    m->l.run = rec->file;
    rc = hrr_runload_key(&m->l, k, why, sizeof why);
    hostrange__run_key__free_unpacked(k, NULL);
    if (rc == -EINVAL) {
        snprintf(err, errlen, "%s: damaged at byte %llu (%s)", path,
                 (unsigned long long)rec->offset, why);
        return -EINVAL;
    }
    if (rc != 0) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -ENOMEM;
    }
    return 0;
}

int hrr_runmerge_load(struct hrr_runmerge *m, char *err, size_t errlen)
{
    struct hra_agg *a = m->a;
    struct hra_key **by_serial = calloc(a->next_serial + 1,
                                        sizeof *by_serial);
    int rc = 0;

    if (by_serial == NULL) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < a->nkeys; i++)
        by_serial[a->keys[i]->serial] = a->keys[i];
    decide(m);
    for (size_t i = 0; i < m->nrec && rc == 0; i++) {
        const struct hrr_runmerge_rec *rec = &m->rec[i];
        const uint8_t *p;
        uint8_t type;

        if (rec->serial != UINT32_MAX && key_how(m, rec->serial) != KEY_LOAD)
            continue;
        use_reader(m, rec->file);
        rc = hrr_reread(&m->in[rec->file].r, rec->offset, rec->len,
                            rec->crc, &type, &p, err, errlen);
        if (rc == 0)
            rc = load_rec(m, rec, p,
                          rec->deferred ? by_serial[rec->serial] : NULL, err,
                          errlen);
    }
    free(by_serial);
    if (rc != 0)
        return rc;
    m->l.run = (uint32_t)m->nin;
    if (hrr_runload_finish(&m->l) != 0) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    return 0;
}

static int cmp_serial(const void *pa, const void *pb)
{
    const struct hra_key *x = *(struct hra_key *const *)pa;
    const struct hra_key *y = *(struct hra_key *const *)pb;

    return (x->serial > y->serial) - (x->serial < y->serial);
}

/*
 * Makes key k fit the memory budget for writing: in run format 1 its
 * values are decoded and sorted to be written, which takes about six
 * times the room they take held (hrr_runput_scratch). A key that would
 * take more than half the budget (a quarter of --max-memory; the held
 * samples have the other half) becomes a histogram first, its paths with
 * it, as the largest keys held do. Returns 0 or -ENOMEM.
 */
static int fit(struct hrr_runmerge *m, struct hra_key *k)
{
    struct hra_agg *a = m->a;

    if (m->format != HRR_FORMAT_SORTED ||
        hrr_runput_scratch(k) <= a->max_bytes / 2)
        return 0;
    if (hra_key_to_hist(a, k) != 0)
        return -ENOMEM;
    for (struct hra_key *p = k->paths; p != NULL; p = p->pnext) {
        if (!p->mirror && hra_key_to_hist(a, p) != 0)
            return -ENOMEM;
    }
    a->compacted++;
    return 0;
}

/* Saves key k, held in the aggregation, made to fit first. Returns 0, or a
 * negative errno with a one-line reason in err. */
static int put_held(struct hrr_runmerge *m, struct hrr_writer *w,
                    struct hra_key *k, char *err, size_t errlen)
{
    if (fit(m, k) != 0) {
        snprintf(err, errlen, "%s: out of memory", w->file.path);
        return -ENOMEM;
    }
    return hrr_put_agg_key(w, m->a, k, m->format, err, errlen);
}

/* Saves key k, its records just loaded, from the aggregation, as if it
 * had been loaded with the others. Returns 0, or a negative errno with a
 * one-line reason in err. */
static int put_loaded(struct hrr_runmerge *m, struct hrr_writer *w,
                      struct hra_key *k, char *err, size_t errlen)
{
    /* A lone path holding its key's events is shared as then. */
    hra_paths_share(m->a);
    return put_held(m, w, k, err, errlen);
}

/* Writes key k from its one record: as its bytes with its new ranks
 * when it is simple, else loaded and saved as any merged key. A deferred
 * record is checked here, whole. Returns 0, HRR_RUNMERGE_AGAIN, or a
 * negative errno with a one-line reason in err. */
static int put_copy(struct hrr_runmerge *m, struct hrr_writer *w,
                    struct hra_key *k, char *err, size_t errlen)
{
    const struct hrr_runmerge_rec *rec = &m->rec[m->keys[k->serial].first - 1];
    struct hrr_reader *r = &m->in[rec->file].r;
    uint8_t mid[16], type, simple = 1;
    struct hrr_runscan s;
    const uint8_t *p;
    size_t n;
    int rc;

    /* The very record scanned (same length and checksum). */
    use_reader(m, rec->file);
    rc = hrr_reread(r, rec->offset, rec->len, rec->crc, &type, &p, err,
                        errlen);
    if (rc != 0)
        return rc;
    if (rec->deferred) {
        uint32_t ids[HRR_RUNSCAN_PATHS];

        if (!hrr_runscan_key(p, rec->len, m->format, &s) ||
            s.rank_from != rec->rank_from || s.rank_to != rec->rank_to)
            simple = 0;
        else if (intern_paths(m, &s, &simple, ids) != 0) {
            snprintf(err, errlen, "%s: out of memory", w->file.path);
            return -ENOMEM;
        }
    }
    if (!simple) {
        rc = load_rec(m, rec, p, k, err, errlen);
        return rc != 0 ? rc : put_loaded(m, w, k, err, errlen);
    }
    n = hrr_runscan_put_ranks(mid, m->a->str.rank[k->node - 1],
                              m->a->str.rank[k->range - 1]);
    /* Ranks that stay as they were leave the record, and its checksum
     * (checked as it was read again), as they were. */
    if (n == rec->rank_to - rec->rank_from &&
        memcmp(mid, p + rec->rank_from, n) == 0)
        return hrr_put_copied(w, p, rec->len, rec->crc, err, errlen);
    return hrr_put_spliced(w, p, rec->len, rec->rank_from, rec->rank_to,
                               mid, n, err, errlen);
}

/* Writes key k, found in several inputs, from its records joined (or, when
 * one is not simple after all, loaded as the others). Returns 0,
 * HRR_RUNMERGE_AGAIN, or a negative errno with a one-line reason in err. */
static int put_join(struct hrr_runmerge *m, struct hrr_writer *w,
                    struct hra_key *k, char *err, size_t errlen)
{
    const struct hrr_runmerge_key *mk = &m->keys[k->serial];
    struct hrr_runjoin_in *in = calloc(mk->count, sizeof *in);
    struct hrr_pbuf out = { NULL, 0, 0 };
    uint8_t simple = 1;
    size_t n = 0;
    int rc;

    if (in == NULL)
        goto nomem;
    /* Each record read whole and checked, and kept (a reader's buffer
     * holds one record). */
    for (uint32_t r = mk->first; r != 0; r = m->rec[r - 1].next, n++) {
        const struct hrr_runmerge_rec *rec = &m->rec[r - 1];
        const uint8_t *p;
        uint8_t type, *copy;

        use_reader(m, rec->file);
        rc = hrr_reread(&m->in[rec->file].r, rec->offset, rec->len,
                            rec->crc, &type, &p, err, errlen);
        if (rc != 0)
            goto out;
        copy = malloc(rec->len + 1);
        if (copy == NULL)
            goto nomem;
        memcpy(copy, p, rec->len);
        in[n].p = copy;
        in[n].len = rec->len;
        if (simple &&
            (!hrr_runscan_key(copy, rec->len, HRR_FORMAT_SORTED,
                              &in[n].s) ||
             (rec->deferred && (in[n].s.rank_from != rec->rank_from ||
                                in[n].s.rank_to != rec->rank_to))))
            simple = 0;
        if (simple && intern_paths(m, &in[n].s, &simple, in[n].path_id) != 0)
            goto nomem;
    }
    if (!simple) {
        n = 0;
        for (uint32_t r = mk->first; r != 0; r = m->rec[r - 1].next, n++) {
            rc = load_rec(m, &m->rec[r - 1], in[n].p, k, err, errlen);
            if (rc != 0)
                goto out;
        }
        rc = put_loaded(m, w, k, err, errlen);
        goto out;
    }
    if (hrr_runjoin(in, n, m->a->str.rank[k->node - 1],
                    m->a->str.rank[k->range - 1], &out) != 0)
        goto nomem;
    rc = hrr_put_packed(w, out.p, out.len, err, errlen);
    goto out;
nomem:
    snprintf(err, errlen, "%s: out of memory", w->file.path);
    rc = -ENOMEM;
out:
    for (size_t i = 0; in != NULL && i < mk->count; i++)
        free((void *)in[i].p);
    free(in);
    free(out.p);
    return rc;
}

int hrr_runmerge_write(struct hrr_runmerge *m, struct hrr_writer *w,
                       hrr_progress_fn progress, void *ctx, char *err,
                       size_t errlen)
{
    uint64_t next_report = 0;
    struct hra_agg *a = m->a;
    struct hra_key **ks = malloc((a->nkeys + 1) * sizeof *ks);
    int rc = 0;

    if (ks == NULL) {
        snprintf(err, errlen, "%s: out of memory", w->file.path);
        return -ENOMEM;
    }
    if (a->nkeys != 0)
        memcpy(ks, a->keys, a->nkeys * sizeof *ks);
    qsort(ks, a->nkeys, sizeof *ks, cmp_serial);
    for (uint32_t i = 0; i < a->nkeys && rc == 0; i++) {
        if (progress != NULL && w->bytes >= next_report) {
            progress(ctx, w->bytes, m->size);
            next_report = w->bytes + (4u << 20);
        }
        if (key_how(m, ks[i]->serial) == KEY_COPY) {
            rc = put_copy(m, w, ks[i], err, errlen);
            continue;
        }
        if (key_how(m, ks[i]->serial) == KEY_JOIN) {
            rc = put_join(m, w, ks[i], err, errlen);
            continue;
        }
        rc = put_held(m, w, ks[i], err, errlen);
    }
    if (rc == 0 && progress != NULL)
        progress(ctx, w->bytes, m->size);
    free(ks);
    return rc;
}
