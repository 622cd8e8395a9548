/*
 * Integration test harness: a real hostranged on a private temporary
 * runtime directory, and real processes run against it with their output
 * captured. The daemon dies with the test process (PR_SET_PDEATHSIG), and
 * harness_daemon_stop is called by every test's teardown, pass or fail.
 *
 * The programs are found through the environment that `make check` sets:
 * HOSTRANGED, HOSTRANGECTL and HOSTRANGE_TEST_WORKLOAD.
 */
#ifndef HOSTRANGE_TESTS_HARNESS_H
#define HOSTRANGE_TESTS_HARNESS_H

#include <stddef.h>
#include <sys/types.h>

/* 1 when built with AddressSanitizer (gcc or clang): timings and memory
 * peaks are then the sanitizer's, not the code's. */
#if defined(__SANITIZE_ADDRESS__)
#define HARNESS_BUILT_WITH_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HARNESS_BUILT_WITH_ASAN 1
#endif
#endif
#ifndef HARNESS_BUILT_WITH_ASAN
#define HARNESS_BUILT_WITH_ASAN 0
#endif

struct harness_daemon {
    char dir[256];
    pid_t pid;
};

/* What a process did: its exit status (as from waitpid) and its output. */
struct harness_run {
    int status;
    char *out; /* stdout, NUL-terminated; free it with harness_run_free */
    char *err; /* stderr */
};

/* A program's path from the environment variable `var`; fails the test when
 * it is not set. */
const char *harness_program(const char *var);

/* Makes a fresh private directory and starts hostranged on it; waits until
 * it answers. Returns 0 or fails the test. */
int harness_daemon_start(struct harness_daemon *d);

/* Starts hostranged on d->dir (already made). Returns its pid; does not
 * wait for it. */
pid_t harness_daemon_spawn(const char *dir);

/*
 * Starts hostranged on d->dir (already made) with extra arguments after
 * --quiet --runtime-dir DIR (NULL-terminated `extra`, may be NULL), and
 * waits until it answers; fails the test when it does not. Sets d->pid.
 */
void harness_daemon_start_args(struct harness_daemon *d,
                               const char *const *extra);

/* Sends `sig` to the daemon and waits for it (SIGKILL after 10 s); returns
 * its wait status and clears d->pid. The directory stays. */
int harness_daemon_signal(struct harness_daemon *d, int sig);

/* SIGTERM, wait (SIGKILL after 10 s), remove the directory. */
void harness_daemon_stop(struct harness_daemon *d);

/* cmocka setup and teardown: a fresh daemon (a struct harness_daemon *) in
 * *state for the test, stopped and freed after it, pass or fail. */
int harness_setup_daemon(void **state);
int harness_teardown_daemon(void **state);
#define HARNESS_DAEMON_TEST(f) \
    cmocka_unit_test_setup_teardown(f, harness_setup_daemon, \
                                    harness_teardown_daemon)

/*
 * Runs argv (argv[0] a path) with HOSTRANGE_RUNTIME_DIR=dir when dir is not
 * NULL, captures its output, and waits for it; a process still running after
 * `limit_s` seconds is killed and fails the test (a hang guard, not a timing
 * check).
 */
void harness_run(char *const argv[], const char *dir, int limit_s,
                 struct harness_run *r);
void harness_run_free(struct harness_run *r);

/* Runs hostrangectl -r dir ARGS... (NULL-terminated). */
void harness_ctl(const char *dir, struct harness_run *r, ...);

/* 1 when status is a normal exit with code `code`. */
int harness_exited(int status, int code);



/* Starts argv (argv[0] a path) in the background with stdout and stderr to
 * the file out_path and HOSTRANGE_RUNTIME_DIR=dir when dir is not NULL;
 * returns its pid. Extra environment `env` ("NAME=VALUE") when not NULL. */
pid_t harness_spawn(char *const argv[], const char *dir, const char *env,
                    const char *out_path);

/* Waits for pid up to limit_s seconds (then kills it and fails the test);
 * returns its status. */
int harness_wait(pid_t pid, int limit_s);

/* --- Additions for the reliability tests ------------------------------ */

/*
 * 1 when HOSTRANGE_TEST_VALGRIND is set (and not 0): every hostranged and
 * workload helper the harness starts then runs under valgrind memcheck (any
 * error or definite leak: exit status 99), and harness_daemon_stop, which
 * always requires a clean stop (exit status 0 on SIGTERM), waits longer.
 */
int harness_valgrind(void);

/*
 * Runs fn(ctx) in a child whose address space is limited to what it uses
 * at the start plus `extra` bytes, so that an allocation past that fails
 * (malloc returns NULL) as on a machine out of memory. Returns fn's value
 * (the child's exit status, 0 to 255), or -1 where such a limit means
 * nothing (AddressSanitizer and valgrind reserve address space of their
 * own): the caller then skips.
 */
int harness_short_of_memory(int (*fn)(void *ctx), void *ctx, size_t extra);

/* The path of program `name` on PATH (written to buf), or NULL. */
const char *harness_tool(const char *name, char *buf, size_t len);

/* Makes a fresh private directory $TMPDIR/hostrange-TAG-XXXXXX in buf;
 * fails the test when it cannot. harness_rm_rf removes a tree. */
void harness_mkdtemp(char *buf, size_t len, const char *tag);
void harness_rm_rf(const char *path);

/* A whole file, NUL-terminated (caller frees); fails the test when it
 * cannot be read. harness_write_file writes one or fails the test. */
char *harness_read_file(const char *path);
void harness_write_file(const char *path, const void *data, size_t len);

/* Waits (a hang guard of limit_s seconds) until file `path` holds at least
 * n lines that start with tag; returns its text (caller frees), or fails
 * the test. */
char *harness_wait_lines(const char *path, const char *tag, int n,
                         int limit_s);

/* The path of tests/helpers/recorder, the fault tests' instrumented
 * program (under $top_builddir). */
const char *harness_recorder(void);

/* The number after ` key=` on the last line of text that starts with tag;
 * fails the test when there is none. */
unsigned long long harness_last_field(const char *text, const char *tag,
                                      const char *key);

/* The events the daemon on dir has taken from process pid (0 before any),
 * from its stats; harness_wait_events waits (a hang guard) until there
 * are some. */
unsigned long long harness_client_events(const char *dir, pid_t pid);
void harness_wait_events(const char *dir, pid_t pid);

struct harness_daemon_opts {
    const char *const *extra; /* arguments after --runtime-dir DIR, or NULL */
    const char *log_path;     /* not NULL: no --quiet, stderr appended here */
    unsigned long long fsize_limit; /* not 0: RLIMIT_FSIZE of the daemon,
                                       with SIGXFSZ ignored */
};

/* Starts hostranged on d->dir (already made) with options o and waits until
 * it answers; fails the test when it does not. Sets d->pid. */
void harness_daemon_start_opts(struct harness_daemon *d,
                               const struct harness_daemon_opts *o);

/* `hostrangectl stats` and `dump` (--fields FIELDS when not NULL) of the
 * daemon on dir, as text (caller frees); fail the test on an error. */
char *harness_stats(const char *dir);
char *harness_dump(const char *dir, const char *fields);

/* The value of `key` in stats text: a whole number (fails the test when it
 * is absent or not a number), or its text in buf. */
unsigned long long harness_stat(const char *text, const char *key);
const char *harness_stat_str(const char *text, const char *key, char *buf,
                             size_t buflen);

/* The N of the `client.N.*` lines of process pid in stats text, or 0. */
int harness_stat_client(const char *text, long pid);

/* The sum of every `rejected.*` counter in stats text. */
unsigned long long harness_stat_rejected(const char *text);

/* A client's counters as a program printed them on a line that starts
 * with `tag` and goes on `samples=S delivered=D lost=L` (the last such
 * line), and `spooled=P` further on that line when it says (0 when not).
 * Returns 0, or -1 when there is none. */
struct harness_counters {
    unsigned long long samples, delivered, lost, spooled;
};
int harness_counters(const char *text, const char *tag,
                     struct harness_counters *c);

#endif
