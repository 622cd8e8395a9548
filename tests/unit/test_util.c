/*
 * lib/util: files written whole or not at all (atomic.c), in place when the
 * target is not a regular file; sizes with K/M/G and the option getopt
 * stopped at (options.c); a table of distinct strings (strset.c); the
 * growable array (grow.c).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/util/atomic.h"
#include "lib/util/grow.h"
#include "lib/util/options.h"
#include "lib/util/strset.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/hr-util-XXXXXX");
    return mkdtemp(dir) != NULL ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[128];

    (void)state;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static size_t slurp(const char *p, char *buf, size_t cap)
{
    FILE *f = fopen(p, "r");
    size_t n;

    assert_non_null(f);
    n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
    return n;
}

/* Entries of dir besides . and .. */
static int entries(void)
{
    char cmd[128];
    FILE *p;
    int n = 0, c;

    snprintf(cmd, sizeof cmd, "ls -A '%s'", dir);
    p = popen(cmd, "r");
    assert_non_null(p);
    while ((c = fgetc(p)) != EOF)
        n += c == '\n';
    pclose(p);
    return n;
}

static void test_whole_or_nothing(void **state)
{
    struct hru_atomic a;
    char path[128], buf[64];

    (void)state;
    snprintf(path, sizeof path, "%s/out", dir);
    /* A new file, committed. */
    assert_int_equal(hru_atomic_open(&a, path, 1), 0);
    fputs("first", a.f);
    assert_int_equal(entries(), 1); /* the temporary file only */
    assert_int_equal(hru_atomic_commit(&a), 0);
    slurp(path, buf, sizeof buf);
    assert_string_equal(buf, "first");
    assert_int_equal(entries(), 1);
    /* Written again and aborted: the target as it was, nothing left. */
    assert_int_equal(hru_atomic_open(&a, path, 1), 0);
    fputs("second", a.f);
    hru_atomic_abort(&a);
    hru_atomic_abort(&a); /* twice: nothing more */
    slurp(path, buf, sizeof buf);
    assert_string_equal(buf, "first");
    assert_int_equal(entries(), 1);
    /* Through the descriptor only. */
    assert_int_equal(hru_atomic_open(&a, path, 0), 0);
    assert_int_equal(write(a.fd, "third", 5), 5);
    assert_int_equal(hru_atomic_commit(&a), 0);
    slurp(path, buf, sizeof buf);
    assert_string_equal(buf, "third");
    /* A directory is refused; a folder that does not exist too. */
    assert_int_equal(hru_atomic_open(&a, dir, 1), -EISDIR);
    snprintf(path, sizeof path, "%s/none/out", dir);
    assert_int_equal(hru_atomic_open(&a, path, 1), -ENOENT);
}

struct reader {
    char path[128];
    char got[64];
};

static void *read_fifo(void *arg)
{
    struct reader *r = arg;

    slurp(r->path, r->got, sizeof r->got);
    return NULL;
}

/* A target that is not a regular file (here a FIFO, as /dev/null or a
 * pipe would be) is written in place: it is still what it was after the
 * commit, and its reader got the bytes. */
static void test_in_place(void **state)
{
    struct reader r = { { 0 }, { 0 } };
    struct hru_atomic a;
    struct stat st;
    pthread_t t;

    (void)state;
    snprintf(r.path, sizeof r.path, "%s/fifo", dir);
    assert_int_equal(mkfifo(r.path, 0600), 0);
    assert_int_equal(pthread_create(&t, NULL, read_fifo, &r), 0);
    assert_int_equal(hru_atomic_open(&a, r.path, 1), 0);
    assert_true(a.in_place);
    fputs("report", a.f);
    assert_int_equal(hru_atomic_commit(&a), 0);
    /* Checked before the reader is waited for: a FIFO renamed over would
     * leave it waiting for ever. */
    assert_int_equal(stat(r.path, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    assert_int_equal(entries(), 1);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_string_equal(r.got, "report");
}

static void test_sizes(void **state)
{
    uint64_t n = 7;

    (void)state;
    assert_int_equal(hru_parse_size("4096", 1, 1, 1u << 20, &n), 0);
    assert_int_equal(n, 4096);
    assert_int_equal(hru_parse_size("3k", 1, 1, 1u << 20, &n), 0);
    assert_int_equal(n, 3u << 10);
    assert_int_equal(hru_parse_size("1G", 1, 1, UINT64_MAX, &n), 0);
    assert_int_equal(n, 1u << 30);
    assert_int_equal(hru_parse_size("2M", 1, 1, UINT64_MAX, &n), 0);
    assert_int_equal(n, 2u << 20);
    n = 7;
    /* No suffix where none is taken; nothing but digits first; one
     * letter at most; within [min, max]. */
    assert_int_equal(hru_parse_size("2M", 0, 1, UINT64_MAX, &n), -EINVAL);
    assert_int_equal(hru_parse_size("-1", 1, 0, 10, &n), -EINVAL);
    assert_int_equal(hru_parse_size("", 1, 0, 10, &n), -EINVAL);
    assert_int_equal(hru_parse_size("1MB", 1, 0, UINT64_MAX, &n), -EINVAL);
    assert_int_equal(hru_parse_size("11", 0, 0, 10, &n), -ERANGE);
    assert_int_equal(hru_parse_size("1K", 1, 2048, UINT64_MAX, &n), -ERANGE);
    assert_int_equal(hru_parse_size("99999999999999999999", 0, 0, UINT64_MAX,
                                    &n),
                     -ERANGE);
    assert_int_equal(n, 7); /* untouched on failure */
}

static void test_culprit(void **state)
{
    char buf[3];

    (void)state;
    assert_string_equal(hru_getopt_culprit('?', 'x', "-qx", buf), "-x");
    assert_string_equal(hru_getopt_culprit('?', 0, "--nope", buf), "--nope");
    assert_string_equal(hru_getopt_culprit(':', 'o', "-o", buf), "-o");
}

/* Each string once, numbered in the order first added, found again
 * after the table has grown many times; one not added is not found; the
 * addresses of the strings do not move. */
static void test_strset(void **state)
{
    struct hru_strset t;
    char name[32];
    const char *first;
    size_t i, n;

    (void)state;
    memset(&t, 0, sizeof t);
    assert_int_equal(hru_strset_find(&t, "a", &i), -ENOENT);
    assert_int_equal(hru_strset_add(&t, "a", &i), 0);
    assert_int_equal(i, 0);
    first = t.v[0];
    for (n = 0; n < 5000; n++) {
        snprintf(name, sizeof name, "node-%zu", n);
        assert_int_equal(hru_strset_add(&t, name, &i), 0);
        assert_int_equal(i, n + 1);
    }
    for (n = 0; n < 5000; n++) {
        snprintf(name, sizeof name, "node-%zu", n);
        assert_int_equal(hru_strset_add(&t, name, &i), 0);
        assert_int_equal(i, n + 1);
        assert_int_equal(hru_strset_find(&t, name, &i), 0);
        assert_int_equal(i, n + 1);
        assert_string_equal(t.v[i], name);
    }
    assert_int_equal(t.n, 5001);
    assert_ptr_equal(t.v[0], first);
    assert_int_equal(hru_strset_find(&t, "node-5000", &i), -ENOENT);
    assert_int_equal(hru_strset_add(&t, "", &i), 0);
    assert_int_equal(i, 5001);
    hru_strset_fini(&t);
    assert_int_equal(t.n, 0);
    assert_int_equal(hru_strset_find(&t, "a", &i), -ENOENT);
    hru_strset_fini(&t);
}

/* The growable array keeps what it held as it doubles, starts at its
 * first room, does nothing when there is room, and refuses counts whose
 * bytes would pass a size_t (or 32 bits) with the array as it was. */
static void test_grow(void **state)
{
    int *v = NULL;
    size_t cap = 0, i;
    uint32_t cap32 = 0;
    uint64_t *w = NULL;

    (void)state;
    assert_int_equal(hru_grow(&v, &cap, 1, sizeof *v, 4), 0);
    assert_int_equal(cap, 4);
    for (i = 0; i < 1000; i++) {
        assert_int_equal(hru_grow(&v, &cap, i + 1, sizeof *v, 4), 0);
        v[i] = (int)i;
    }
    assert_int_equal(cap, 1024);
    for (i = 0; i < 1000; i++)
        assert_int_equal(v[i], (int)i);
    assert_int_equal(hru_grow(&v, &cap, 1000, sizeof *v, 4), 0);
    assert_int_equal(cap, 1024);
    /* A jump past several doublings lands on the first power that fits. */
    assert_int_equal(hru_grow(&v, &cap, 5000, sizeof *v, 4), 0);
    assert_int_equal(cap, 8192);
    assert_int_equal(v[999], 999);
    /* Bytes that would pass a size_t: refused, the array kept. */
    assert_int_equal(hru_grow(&v, &cap, SIZE_MAX / 2, sizeof *v, 4),
                     -ENOMEM);
    assert_int_equal(cap, 8192);
    assert_int_equal(v[999], 999);
    assert_int_equal(hru_grow_room(0, 3, 8, 0), 4);
    assert_int_equal(hru_grow_room(16, 3, 8, 4), 16);
    assert_int_equal(hru_grow_room(1, SIZE_MAX, 1, 1), 0);
    assert_int_equal(hru_resize(&v, SIZE_MAX / 2, sizeof *v), -ENOMEM);
    assert_int_equal(v[999], 999);
    free(v);

    assert_int_equal(hru_grow32(&w, &cap32, 10, sizeof *w, 8), 0);
    assert_int_equal(cap32, 16);
    w[9] = 9;
    assert_int_equal(hru_grow32(&w, &cap32, (size_t)UINT32_MAX + 1,
                                sizeof *w, 8), -ENOMEM);
    assert_int_equal(cap32, 16);
    assert_int_equal(w[9], 9);
    free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_whole_or_nothing, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_in_place, setup, teardown),
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_culprit),
        cmocka_unit_test(test_strset),
        cmocka_unit_test(test_grow),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
