/*
 * libFuzzer target: the daemon's reader of spool files (daemon/spool.c), on
 * a file of process FUZZ_SPOOL_PID made from the input in fuzz_state's
 * input format (fuzz/common.h: a mode byte, then raw bytes after the magic
 * or records written with valid headers and checks), taken into an empty
 * aggregation.
 *
 * Checks: the file is taken (removed or set aside, never left to be read
 * again); every batch record read is ingested, a duplicate or rejected;
 * and the report is written.
 */
#include "config.h"

#include "lib/agg/agg_impl.h"
#include "daemon/spool.h"
#include "fuzz/common.h"
#include "proto/spool.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char g_dir[256], g_spool[300];

/* Removes the spool folder's files, and the directories when `all`. */
static void dir_clean(int all)
{
    DIR *d = opendir(g_spool);
    struct dirent *e;

    if (d != NULL) {
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                unlinkat(dirfd(d), e->d_name, 0);
        }
        closedir(d);
    }
    if (all) {
        rmdir(g_spool);
        rmdir(g_dir);
    }
}

static void dir_remove(void)
{
    dir_clean(1);
}

/* The private runtime directory (on tmpfs when there is one), made once and
 * removed at exit. */
static void dir_ready(void)
{
    if (g_dir[0] == '\0') {
        const char *tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm"
                          : getenv("TMPDIR") != NULL ? getenv("TMPDIR")
                                                     : "/tmp";
        snprintf(g_dir, sizeof g_dir, "%s/hostrange-fuzz-XXXXXX", tmp);
        FUZZ_CHECK(mkdtemp(g_dir) != NULL);
        snprintf(g_spool, sizeof g_spool, "%s/%s", g_dir, HRP_SPOOL_NAME);
        atexit(dir_remove);
    }
    dir_clean(0);
}

/* Writes the spool file from the input after its mode byte. */
static void write_file(uint8_t mode, const uint8_t *p, size_t n)
{
    char name[HRP_SPOOL_FILE_NAME_MAX], path[600];
    int fd;

    FUZZ_CHECK(hrp_spool_file_name(name, sizeof name, FUZZ_SPOOL_PID,
                                   FUZZ_SPOOL_INSTANCE,
                                   HRP_SPOOL_SUFFIX) == 0);
    snprintf(path, sizeof path, "%s/%s", g_spool, name);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    FUZZ_CHECK(fd >= 0);
    FUZZ_CHECK(write(fd, HRP_SPOOL_MAGIC, HRP_SPOOL_MAGIC_LEN) ==
               (ssize_t)HRP_SPOOL_MAGIC_LEN);
    if (mode & FUZZ_STATE_RAW) {
        FUZZ_CHECK(write(fd, p, n) == (ssize_t)n);
    } else {
        while (n >= 3) {
            uint8_t h[HRP_SPOOL_REC_HEADER], type = p[0];
            size_t len = (size_t)p[1] | (size_t)p[2] << 8;

            p += 3;
            n -= 3;
            if (len > n)
                len = n;
            hrp_spool_rec_header(h, type, p, (uint32_t)len);
            FUZZ_CHECK(write(fd, h, sizeof h) == (ssize_t)sizeof h);
            FUZZ_CHECK(write(fd, p, len) == (ssize_t)len);
            p += len;
            n -= len;
        }
    }
    FUZZ_CHECK(close(fd) == 0);
}

/* The number of files in the spool folder named as spool files. */
static int spool_files(void)
{
    DIR *d = opendir(g_spool);
    struct dirent *e;
    uint32_t pid;
    uint64_t inst;
    int n = 0;

    FUZZ_CHECK(d != NULL);
    while ((e = readdir(d)) != NULL)
        n += hrp_spool_file_parse(e->d_name, &pid, &inst);
    closedir(d);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hra_agg agg;
    struct hrd_ingest in;
    struct hrd_spool sp;
    char err[512];
    const struct hrd_spool_info *i = &sp.info;

    if (size < 1)
        return 0;
    dir_ready();
    hra_init(&agg);
    hrd_ingest_init(&in, &agg);
    FUZZ_CHECK(hrd_spool_open(&sp, g_dir, (gid_t)-1, &in, NULL, NULL, err,
                              sizeof err) == 0);
    write_file(data[0], data + 1, size - 1);
    hrd_spool_poke(&sp);
    for (int n = 0; hrd_spool_step(&sp, 8) != 0; n++)
        FUZZ_CHECK(n < 1000000);
    FUZZ_CHECK(spool_files() == 0);
    FUZZ_CHECK(i->files == 1 && i->waiting == 0 && !sp.deferred);
    FUZZ_CHECK(i->ingested + i->duplicates <= i->batches);
    FUZZ_CHECK(i->ingested + i->duplicates + i->rejected >= i->batches);
    free(fuzz_report(&agg, NULL));
    hrd_spool_close(&sp);
    hrd_ingest_fini(&in);
    hra_fini(&agg);
    return 0;
}
