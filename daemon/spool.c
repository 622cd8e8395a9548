/* Taking the files of the spool folder (see spool.h and proto/spool.h). */
#include "config.h"

#include "daemon/spool.h"
#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"
#include "proto/spool.h"
#include "proto/unpack.h"
#include "lib/util/grow.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A file being taken. */
struct hrd_spool_file {
    char name[HRP_SPOOL_FILE_NAME_MAX];
    int fd;
    uint8_t *buf;              /* the record being read */
    size_t cap;
    Hostrange__SpoolInfo *info;
    size_t next;               /* the next of info's batches */
    uint8_t *taken;            /* per batch: the daemon holds it */
    int aside;                 /* damage or foreign content: set aside */
    uint64_t bytes;
};

#define LOG(sp, ...) ((sp)->log != NULL ? (sp)->log((sp)->log_ctx, \
                                                     __VA_ARGS__) : (void)0)

int hrd_spool_open(struct hrd_spool *sp, const char *rundir, gid_t gid,
                   struct hrd_ingest *in, hrd_log_fn log, void *log_ctx,
                   char *err, size_t errlen)
{
    mode_t mode = gid == (gid_t)-1 ? HRP_SPOOL_DIR_MODE
                                   : HRP_SPOOL_DIR_MODE_GROUP;
    struct stat st;
    int e;

    memset(sp, 0, sizeof *sp);
    sp->dirfd = -1;
    sp->gid = gid;
    sp->in = in;
    sp->log = log;
    sp->log_ctx = log_ctx;
    if (snprintf(sp->info.dir, sizeof sp->info.dir, "%s/%s", rundir,
                 HRP_SPOOL_NAME) >= (int)sizeof sp->info.dir) {
        snprintf(err, errlen, "spool folder name too long: %s", rundir);
        return -ENAMETOOLONG;
    }
    if (mkdir(sp->info.dir, 0700) != 0 && errno != EEXIST)
        goto fail_errno;
    sp->dirfd = open(sp->info.dir,
                     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sp->dirfd < 0 || fstat(sp->dirfd, &st) != 0)
        goto fail_errno;
    if (st.st_uid != geteuid()) {
        snprintf(err, errlen, "spool folder %s is owned by uid %u, not by "
                 "this user (uid %u); refusing to serve it", sp->info.dir,
                 (unsigned)st.st_uid, (unsigned)geteuid());
        hrd_spool_close(sp);
        return -EPERM;
    }
    if ((gid != (gid_t)-1 && st.st_gid != gid &&
         fchown(sp->dirfd, (uid_t)-1, gid) != 0) ||
        ((st.st_mode & 07777) != mode && fchmod(sp->dirfd, mode) != 0)) {
        e = errno;
        snprintf(err, errlen, "cannot give spool folder %s mode %04o%s: %s",
                 sp->info.dir, (unsigned)mode,
                 gid != (gid_t)-1 ? " and the group" : "", strerror(e));
        hrd_spool_close(sp);
        return -EPERM;
    }
    sp->dirty = 1;
    return 0;
fail_errno:
    e = errno;
    snprintf(err, errlen, "cannot open spool folder %s: %s", sp->info.dir,
             e == ELOOP || e == ENOTDIR ? "not a directory" : strerror(e));
    hrd_spool_close(sp);
    return e == ELOOP || e == ENOTDIR ? -EPERM : -e;
}

void hrd_spool_poke(struct hrd_spool *sp)
{
    sp->dirty = 1;
    sp->deferred = 0;
}

static void file_free(struct hrd_spool_file *f)
{
    if (f == NULL)
        return;
    if (f->fd >= 0)
        close(f->fd);
    hostrange__spool_info__free_unpacked(f->info, NULL);
    free(f->buf);
    free(f->taken);
    free(f);
}

static void names_free(struct hrd_spool *sp)
{
    for (size_t i = 0; i < sp->nnames; i++)
        free(sp->names[i]);
    free(sp->names);
    sp->names = NULL;
    sp->nnames = sp->next = 0;
}

void hrd_spool_close(struct hrd_spool *sp)
{
    if (sp == NULL)
        return;
    file_free(sp->cur);
    sp->cur = NULL;
    names_free(sp);
    if (sp->dirfd >= 0)
        close(sp->dirfd);
    sp->dirfd = -1;
}

/* 1 when user uid may connect to this daemon, and so write its spool. */
static int may_connect(const struct hrd_spool *sp, uid_t uid)
{
    struct passwd pw, *res = NULL;
    gid_t groups[256];
    int n = 256;
    char buf[4096];

    if (uid == geteuid() || uid == 0)
        return 1;
    if (sp->gid == (gid_t)-1 ||
        getpwuid_r(uid, &pw, buf, sizeof buf, &res) != 0 || res == NULL)
        return 0;
    if (getgrouplist(pw.pw_name, pw.pw_gid, groups, &n) < 0)
        n = 256; /* more groups than that: look at the first ones */
    for (int i = 0; i < n; i++) {
        if (groups[i] == sp->gid)
            return 1;
    }
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lists the folder's spool files, and removes the temporary files of
 * writers that died. */
static void scan(struct hrd_spool *sp)
{
    int fd = openat(sp->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    time_t now = time(NULL);
    size_t cap = 0;
    struct dirent *e;
    DIR *d;

    names_free(sp);
    d = fd >= 0 ? fdopendir(fd) : NULL;
    if (d == NULL) {
        if (fd >= 0)
            close(fd);
        LOG(sp, "spool: cannot read %s: %s", sp->info.dir, strerror(errno));
        return;
    }
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name), tl = strlen(HRP_SPOOL_TMP_SUFFIX);
        uint32_t pid;
        uint64_t inst;
        struct stat st;

        if (hrp_spool_file_parse(e->d_name, &pid, &inst)) {
            if (hru_grow(&sp->names, &cap, sp->nnames + 1,
                         sizeof *sp->names, 16) != 0)
                break;
            if ((sp->names[sp->nnames] = strdup(e->d_name)) == NULL)
                break;
            sp->nnames++;
        } else if (len > tl &&
                   strcmp(e->d_name + len - tl, HRP_SPOOL_TMP_SUFFIX) == 0 &&
                   fstatat(sp->dirfd, e->d_name, &st,
                           AT_SYMLINK_NOFOLLOW) == 0 &&
                   now - st.st_mtime > HRD_SPOOL_TMP_AGE_S) {
            unlinkat(sp->dirfd, e->d_name, 0);
        }
    }
    closedir(d);
    if (sp->nnames > 1)
        qsort(sp->names, sp->nnames, sizeof *sp->names, cmp_name);
    sp->info.waiting = sp->nnames;
}

/* Renames file `name` aside (or removes it when that fails), and counts
 * it. */
static void set_aside(struct hrd_spool *sp, const char *name, const char *why)
{
    char aside[HRP_SPOOL_FILE_NAME_MAX + sizeof HRP_SPOOL_ASIDE_SUFFIX];

    snprintf(aside, sizeof aside, "%s%s", name, HRP_SPOOL_ASIDE_SUFFIX);
    if (renameat(sp->dirfd, name, sp->dirfd, aside) != 0)
        unlinkat(sp->dirfd, name, 0);
    sp->info.rejected_files++;
    LOG(sp, "spool: %s set aside: %s", name, why);
}

/* Reads exactly n bytes. Returns 0, -EBADMSG when the file ends first, or
 * another negative errno. */
static int read_full(int fd, uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t r = read(fd, p, n);

        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -errno;
        if (r == 0)
            return -EBADMSG;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

/* Reads the next record into f->buf. Returns 1 (type and length set), 0 at
 * the end of the file, -EBADMSG on damage, or another negative errno. */
static int read_record(struct hrd_spool_file *f, uint8_t *type, size_t *len)
{
    uint8_t h[HRP_SPOOL_REC_HEADER];
    uint64_t check;
    uint32_t n;
    ssize_t r;
    int rc;

    do
        r = read(f->fd, h, 1);
    while (r < 0 && errno == EINTR);
    if (r <= 0)
        return r == 0 ? 0 : -errno;
    if ((rc = read_full(f->fd, h + 1, sizeof h - 1)) != 0)
        return rc;
    hrp_spool_rec_parse(h, type, &n, &check);
    if (n > hrp_spool_rec_max(*type))
        return -EBADMSG;
    if (n > f->cap) {
        uint8_t *b = realloc(f->buf, n);
        if (b == NULL)
            return -ENOMEM;
        f->buf = b;
        f->cap = n;
    }
    if ((rc = read_full(f->fd, f->buf, n)) != 0)
        return rc;
    if (hrp_spool_check(*type, f->buf, n) != check)
        return -EBADMSG;
    *len = n;
    return 1;
}

static int string_ok(const char *s, int may_be_empty)
{
    size_t n = strnlen(s, HRP_MAX_STRING + 1);

    return n <= HRP_MAX_STRING && (may_be_empty || n > 0);
}

/* What a file is told when memory ran out reading it: it is left where
 * it is, for a later scan, never set aside. */
static const char g_no_memory[] = "out of memory";

/* Checks a SpoolInfo against the file's name. Returns NULL or what is
 * wrong (g_no_memory: nothing is known to be wrong). */
static const char *info_check(const Hostrange__SpoolInfo *m, uint32_t pid,
                              uint64_t instance)
{
    const Hostrange__Batch *b;
    uint64_t last = 0;
    const char *why = NULL;
    int rc;

    if (m->version != HRP_SPOOL_VERSION)
        return "another spool version";
    if (m->pid != pid || m->instance != instance)
        return "it names another process than its file name";
    for (size_t i = 0; i < m->n_labels; i++) {
        const Hostrange__LabelSet *l = m->labels[i];
        if (!string_ok(l->node_id, 0) || !string_ok(l->operator_, 1) ||
            !string_ok(l->backend, 1) || hrp_phase_name(l->phase) == NULL)
            return "a bad label set";
    }
    for (size_t i = 0; i < m->n_batches; i++) {
        const Hostrange__SpoolBatch *x = m->batches[i];
        uint64_t sum = 0;

        if (x->seq <= last || x->n_label != x->n_label_events)
            return "bad batch entries";
        for (size_t j = 0; j < x->n_label; j++) {
            if (x->label[j] >= m->n_labels)
                return "bad batch entries";
            sum += x->label_events[j];
        }
        if (sum != x->events)
            return "bad batch entries";
        last = x->seq;
    }
    b = hrp_unpack(&hostrange__batch__descriptor, m->final_batch.len,
                   m->final_batch.data, &rc);
    if (b == NULL)
        return rc == -ENOMEM ? g_no_memory
                             : "its last batch cannot be read";
    if (b->pid != pid || b->instance != instance || b->seq <= last)
        why = "its last batch is not this process's last";
    hostrange__batch__free_unpacked((Hostrange__Batch *)b, NULL);
    return why;
}

/* Opens spool file `name` and reads its SpoolInfo. Returns it, or NULL
 * when the file is gone, or was refused (then set aside). */
static struct hrd_spool_file *file_open(struct hrd_spool *sp,
                                        const char *name)
{
    struct hrd_spool_file *f = calloc(1, sizeof *f);
    uint8_t magic[HRP_SPOOL_MAGIC_LEN], type;
    const char *why = g_no_memory;
    uint64_t instance;
    uint32_t pid;
    struct stat st;
    size_t len;
    int rc;

    if (f == NULL || strlen(name) >= sizeof f->name ||
        !hrp_spool_file_parse(name, &pid, &instance)) {
        free(f);
        return NULL;
    }
    snprintf(f->name, sizeof f->name, "%s", name);
    f->fd = openat(sp->dirfd, name,
                   O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (f->fd < 0 && errno == ENOENT) {
        file_free(f);
        return NULL;
    }
    if (f->fd < 0) {
        why = errno == ELOOP ? "a symbolic link" : strerror(errno);
        goto refuse;
    }
    why = "not a regular file with one link";
    if (fstat(f->fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1)
        goto refuse;
    why = "owned by a user who may not connect";
    if (!may_connect(sp, st.st_uid))
        goto refuse;
    f->bytes = (uint64_t)st.st_size;
    why = "not a spool file";
    if (read_full(f->fd, magic, sizeof magic) != 0 ||
        memcmp(magic, HRP_SPOOL_MAGIC, sizeof magic) != 0)
        goto refuse;
    rc = read_record(f, &type, &len);
    why = rc == -ENOMEM ? g_no_memory : "its first record is damaged";
    if (rc != 1 || type != HRP_SPOOL_REC_INFO)
        goto refuse;
    f->info = hrp_unpack(&hostrange__spool_info__descriptor, len, f->buf,
                         &rc);
    why = rc == -ENOMEM ? g_no_memory
                        : "its first record is not a SpoolInfo";
    if (f->info == NULL)
        goto refuse;
    if ((why = info_check(f->info, pid, instance)) != NULL)
        goto refuse;
    why = "out of memory";
    f->taken = calloc(f->info->n_batches + 1, 1);
    if (f->taken == NULL)
        goto refuse;
    return f;
refuse:
    if (why == g_no_memory) {
        LOG(sp, "spool: %s left for later: out of memory", name);
        file_free(f);
        return NULL;
    }
    set_aside(sp, name, why);
    sp->info.files++;
    sp->info.bytes += f->bytes;
    file_free(f);
    return NULL;
}

/* Hands a batch to ingest; returns its verdict. */
static enum hrd_ingest_result take(struct hrd_spool *sp, const uint8_t *msg,
                                   size_t len)
{
    enum hrd_ingest_result r;
    enum hrd_reject why;
    uint8_t *ack;
    size_t ack_len;

    r = hrd_ingest_handle(sp->in, msg, len, &ack, &ack_len, &why);
    free(ack);
    if (r == HRD_INGEST_REJECTED)
        LOG(sp, "spool: a batch was rejected: %s", hrd_reject_name(why));
    return r;
}

static int same_labels(const Hostrange__LabelSet *a,
                       const Hostrange__LabelSet *b)
{
    return a->phase == b->phase && strcmp(a->node_id, b->node_id) == 0 &&
           strcmp(a->operator_, b->operator_) == 0 &&
           strcmp(a->backend, b->backend) == 0;
}

/*
 * The last batch of file f with lost_by[i] more events lost under label
 * set i of its SpoolInfo (total in all), packed into a new buffer (*out,
 * *len; caller frees). Returns 0, -EBADMSG or -ENOMEM.
 */
static int final_amend(const Hostrange__SpoolInfo *info,
                       const uint64_t *lost_by, uint64_t total,
                       uint8_t **out, size_t *len)
{
    Hostrange__Batch *b, m;
    Hostrange__LabelSet *ls = NULL, **lsp = NULL;
    uint32_t *ll = NULL;
    uint64_t *lc = NULL;
    size_t nl = info->n_labels, added = 0;
    int rc;

    b = hrp_unpack(&hostrange__batch__descriptor, info->final_batch.len,
                   info->final_batch.data, &rc);
    if (b == NULL)
        return rc == -ENOMEM ? -ENOMEM : -EBADMSG;
    rc = -ENOMEM;
    m = *b;
    ls = calloc(nl + 1, sizeof *ls);
    lsp = malloc((b->n_labels + nl + 1) * sizeof *lsp);
    ll = malloc((b->n_lost_label + nl + 1) * sizeof *ll);
    lc = malloc((b->n_lost_label + nl + 1) * sizeof *lc);
    if (ls == NULL || lsp == NULL || ll == NULL || lc == NULL ||
        b->n_lost_label != b->n_lost_by_label)
        goto out;
    /* An empty array may have no buffer. */
    if (b->n_labels != 0)
        memcpy(lsp, b->labels, b->n_labels * sizeof *lsp);
    if (b->n_lost_label != 0) {
        memcpy(ll, b->lost_label, b->n_lost_label * sizeof *ll);
        memcpy(lc, b->lost_by_label, b->n_lost_label * sizeof *lc);
    }
    m.labels = lsp;
    m.lost_label = ll;
    m.lost_by_label = lc;
    for (size_t i = 0; i < nl; i++) {
        size_t j, k;

        if (lost_by[i] == 0)
            continue;
        for (j = 0; j < m.n_labels; j++) {
            if (same_labels(m.labels[j], info->labels[i]))
                break;
        }
        if (j == m.n_labels) {
            ls[added] = *info->labels[i];
            ls[added].id = (uint32_t)j;
            lsp[m.n_labels++] = &ls[added++];
        }
        for (k = 0; k < m.n_lost_label; k++) {
            if (ll[k] == j)
                break;
        }
        if (k == m.n_lost_label) {
            ll[k] = (uint32_t)j;
            lc[k] = 0;
            m.n_lost_label = m.n_lost_by_label = k + 1;
        }
        lc[k] += lost_by[i];
    }
    m.lost_events += total;
    *len = hostrange__batch__get_packed_size(&m);
    if ((*out = malloc(*len ? *len : 1)) == NULL)
        goto out;
    hostrange__batch__pack(&m, *out);
    rc = 0;
out:
    free(ls);
    free(lsp);
    free(ll);
    free(lc);
    hostrange__batch__free_unpacked(b, NULL);
    return rc;
}

/*
 * Takes file f's last batch, with the events of the batches not taken
 * counted lost, and removes the file (or sets it aside). Returns 0, or
 * -EAGAIN when the journal refused it (the file stays for a later look).
 */
static int file_finish(struct hrd_spool *sp, struct hrd_spool_file *f)
{
    const Hostrange__SpoolInfo *info = f->info;
    uint64_t *lost_by = calloc(info->n_labels + 1, sizeof *lost_by);
    uint64_t total = 0;
    enum hrd_ingest_result r = HRD_INGEST_REJECTED;
    uint8_t *msg = NULL;
    size_t len = 0;

    if (lost_by == NULL)
        return -EAGAIN;
    for (size_t i = 0; i < info->n_batches; i++) {
        const Hostrange__SpoolBatch *x = info->batches[i];

        if (f->taken[i])
            continue;
        total += x->events;
        for (size_t j = 0; j < x->n_label; j++)
            lost_by[x->label[j]] += x->label_events[j];
    }
    if (total == 0)
        r = take(sp, info->final_batch.data, info->final_batch.len);
    else if (final_amend(info, lost_by, total, &msg, &len) == 0)
        r = take(sp, msg, len);
    else
        LOG(sp, "spool: %s: no memory to count its losses", f->name);
    free(msg);
    free(lost_by);
    if (r == HRD_INGEST_RETRY ||
        (sp->sync != NULL && sp->sync(sp->sync_ctx) != 0))
        return -EAGAIN;
    if (r == HRD_INGEST_REJECTED)
        sp->info.rejected++;
    sp->info.lost_events += total;
    sp->info.files++;
    sp->info.bytes += f->bytes;
    if (f->aside)
        set_aside(sp, f->name, "damaged");
    else
        unlinkat(sp->dirfd, f->name, 0);
    return 0;
}

/*
 * Takes batches of file f until it ends or *budget runs out. Returns 1
 * when the file has more, 0 when it is done, -EAGAIN when the journal
 * refused a batch (the file stays for a later look).
 */
static int file_step(struct hrd_spool *sp, struct hrd_spool_file *f,
                     unsigned *budget)
{
    const Hostrange__SpoolInfo *info = f->info;

    while (*budget > 0) {
        const Hostrange__SpoolBatch *x;
        enum hrd_ingest_result r;
        Hostrange__Batch *b;
        uint8_t type;
        size_t len;
        int rc = read_record(f, &type, &len);

        if (rc == 0 && f->next < info->n_batches)
            rc = -EBADMSG; /* cut short */
        if (rc == 1 && (type != HRP_SPOOL_REC_BATCH ||
                        f->next >= info->n_batches))
            rc = -EBADMSG; /* a record its SpoolInfo does not list */
        if (rc == -ENOMEM)
            return -EAGAIN;
        if (rc != 1) {
            if (rc != 0) {
                /* Damage: nothing after it is read. */
                sp->info.rejected++;
                f->aside = 1;
            }
            return file_finish(sp, f);
        }
        (*budget)--;
        sp->info.batches++;
        x = info->batches[f->next];
        /* A batch of another process, or another than listed, is
         * refused; one that does not decode is ingest's to reject. */
        b = hostrange__batch__unpack(NULL, len, f->buf);
        if (b != NULL && (b->pid != info->pid ||
                          b->instance != info->instance || b->seq != x->seq)) {
            hostrange__batch__free_unpacked(b, NULL);
            sp->info.rejected++;
            f->aside = 1;
            f->next++;
            continue;
        }
        hostrange__batch__free_unpacked(b, NULL);
        r = take(sp, f->buf, len);
        if (r == HRD_INGEST_RETRY)
            return -EAGAIN;
        if (r == HRD_INGEST_OK)
            sp->info.ingested++;
        else if (r == HRD_INGEST_DUPLICATE)
            sp->info.duplicates++;
        else
            sp->info.rejected++;
        /* A refused batch whose events ingest counted lost under its node
         * ids is not counted again by the file's last batch. */
        if (r == HRD_INGEST_REJECTED && sp->in->last_counted)
            sp->info.lost_events += x->events;
        f->taken[f->next++] = r == HRD_INGEST_OK ||
                              r == HRD_INGEST_DUPLICATE ||
                              (r == HRD_INGEST_REJECTED &&
                               sp->in->last_counted);
    }
    return 1;
}

int hrd_spool_step(struct hrd_spool *sp, unsigned budget)
{
    while (budget > 0) {
        int rc;

        if (sp->cur == NULL) {
            if (sp->next >= sp->nnames) {
                if (!sp->dirty)
                    return 0;
                sp->dirty = 0;
                scan(sp);
                if (sp->nnames == 0)
                    return 0;
            }
            sp->cur = file_open(sp, sp->names[sp->next++]);
            if (sp->cur == NULL) {
                sp->info.waiting = sp->nnames - sp->next;
                budget--;
                continue;
            }
        }
        rc = file_step(sp, sp->cur, &budget);
        if (rc == 1)
            continue;
        file_free(sp->cur);
        sp->cur = NULL;
        if (rc == -EAGAIN) {
            /* The journal refuses batches now: the rest waits too. */
            sp->deferred = 1;
            names_free(sp);
            return 0;
        }
        sp->info.waiting = sp->nnames - sp->next;
    }
    return 1;
}
