/* Writing a spool file (see spool.h and proto/spool.h). */
#include "config.h"

#include "client/spool.h"
#include "proto/protocol.h"
#include "proto/hostrange.pb-c.h"
#include "proto/spool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define NONE UINT32_MAX

/* The SpoolInfo of s, packed into a new buffer (*out, *len; caller frees).
 * Returns 0, -ENOMEM, or -EINVAL when a label set has no name. */
static int info_pack(const struct hr__spool *s, uint8_t **out, size_t *len)
{
    Hostrange__SpoolInfo m = HOSTRANGE__SPOOL_INFO__INIT;
    Hostrange__SpoolBatch *sb = NULL, **sbp = NULL;
    Hostrange__LabelSet *ls = NULL, **lsp = NULL;
    uint32_t *map = NULL, *blab = NULL, maxid = 0, nl = 0;
    size_t nlab = 0, k = 0;
    int rc = -ENOMEM;

    for (uint32_t i = 0; i < s->nbatches; i++) {
        nlab += s->batches[i].nlab;
        for (uint32_t j = 0; j < s->batches[i].nlab; j++) {
            if (s->batches[i].lab[j] > maxid)
                maxid = s->batches[i].lab[j];
        }
    }
    map = malloc(((size_t)maxid + 1) * sizeof *map);
    ls = calloc(nlab + 1, sizeof *ls);
    lsp = calloc(nlab + 1, sizeof *lsp);
    blab = malloc((nlab + 1) * sizeof *blab);
    sb = calloc((size_t)s->nbatches + 1, sizeof *sb);
    sbp = calloc((size_t)s->nbatches + 1, sizeof *sbp);
    if (map == NULL || ls == NULL || lsp == NULL || blab == NULL ||
        sb == NULL || sbp == NULL)
        goto out;
    for (uint32_t i = 0; i <= maxid; i++)
        map[i] = NONE;
    rc = -EINVAL;
    for (uint32_t i = 0; i < s->nbatches; i++) {
        const struct hr__spool_batch *b = &s->batches[i];

        hostrange__spool_batch__init(&sb[i]);
        sb[i].seq = b->seq;
        sb[i].events = b->events;
        sb[i].sent = b->sent != 0;
        sb[i].n_label = sb[i].n_label_events = b->nlab;
        sb[i].label = blab + k;
        sb[i].label_events = (uint64_t *)b->lab_events;
        sbp[i] = &sb[i];
        for (uint32_t j = 0; j < b->nlab; j++) {
            uint32_t id = b->lab[j];

            if (map[id] == NONE) {
                const char *node, *op, *backend;
                unsigned phase;

                if (s->label_get(id, &node, &op, &backend, &phase) != 0)
                    goto out;
                hostrange__label_set__init(&ls[nl]);
                ls[nl].node_id = (char *)node;
                ls[nl].operator_ = (char *)op;
                ls[nl].backend = (char *)backend;
                ls[nl].phase = phase;
                ls[nl].id = nl;
                lsp[nl] = &ls[nl];
                map[id] = nl++;
            }
            blab[k++] = map[id];
        }
    }
    m.version = HRP_SPOOL_VERSION;
    m.pid = s->pid;
    m.instance = s->instance;
    m.samples = s->samples;
    m.delivered = s->delivered;
    m.lost = s->lost;
    m.unacknowledged = s->unacknowledged;
    m.spooled = s->spooled;
    m.over_limit = s->over_limit;
    m.n_labels = nl;
    m.labels = lsp;
    m.n_batches = s->nbatches;
    m.batches = sbp;
    m.final_batch.data = (uint8_t *)s->final_batch;
    m.final_batch.len = s->final_len;
    *len = hostrange__spool_info__get_packed_size(&m);
    rc = -EFBIG;
    if (*len > HRP_SPOOL_INFO_MAX)
        goto out;
    rc = -ENOMEM;
    if ((*out = malloc(*len ? *len : 1)) == NULL)
        goto out;
    hostrange__spool_info__pack(&m, *out);
    rc = 0;
out:
    free(map);
    free(ls);
    free(lsp);
    free(blab);
    free(sb);
    free(sbp);
    return rc;
}

/* Writes one record. Returns 0 or -errno. */
static int put_record(int fd, uint8_t type, const void *p, size_t len)
{
    uint8_t h[HRP_SPOOL_REC_HEADER];
    struct iovec iov[2];

    hrp_spool_rec_header(h, type, p, (uint32_t)len);
    iov[0].iov_base = h;
    iov[0].iov_len = sizeof h;
    iov[1].iov_base = (void *)p;
    iov[1].iov_len = len;
    return hrp_write_all(fd, iov, len > 0 ? 2 : 1);
}

int hr__spool_write(const char *dir, const struct hr__spool *s)
{
    char tmp[HRP_SPOOL_FILE_NAME_MAX], name[HRP_SPOOL_FILE_NAME_MAX];
    uint8_t *info = NULL;
    size_t info_len = 0;
    struct stat st;
    int dfd, fd = -1, rc;

    if (hrp_spool_file_name(tmp, sizeof tmp, s->pid, s->instance,
                            HRP_SPOOL_TMP_SUFFIX) != 0 ||
        hrp_spool_file_name(name, sizeof name, s->pid, s->instance,
                            HRP_SPOOL_SUFFIX) != 0)
        return -ENAMETOOLONG;
    /* A folder that is a link, or missing (no daemon ever made it), is
     * not written to. */
    dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return -errno;
    if (fstat(dfd, &st) != 0) {
        rc = -errno;
        goto fail_stat;
    }
    rc = info_pack(s, &info, &info_len);
    if (rc != 0)
        goto fail_stat;
    fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                st.st_uid == geteuid() ? 0600 : 0640);
    if (fd < 0) {
        rc = -errno;
        goto fail_stat;
    }
    {
        struct iovec iov = { (void *)HRP_SPOOL_MAGIC, HRP_SPOOL_MAGIC_LEN };
        rc = hrp_write_all(fd, &iov, 1);
    }
    if (rc == 0)
        rc = put_record(fd, HRP_SPOOL_REC_INFO, info, info_len);
    for (uint32_t i = 0; rc == 0 && i < s->nbatches; i++)
        rc = put_record(fd, HRP_SPOOL_REC_BATCH, s->batches[i].buf,
                        s->batches[i].len);
    if (rc == 0 && fsync(fd) != 0)
        rc = -errno;
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && renameat(dfd, tmp, dfd, name) != 0)
        rc = -errno;
    if (rc != 0) {
        unlinkat(dfd, tmp, 0);
        goto fail_stat;
    }
    /* The rename itself survives a crash of the machine. */
    fsync(dfd);
fail_stat:
    free(info);
    close(dfd);
    return rc;
}
