/*
 * An instrumented program for the integration tests. For each of -n node
 * ids it runs one call in a cold window and -c calls in a warm window, then
 * records -r end_to_end values. A call is the range `workload.outer` (busy
 * for 15 us) containing `workload.inner` (busy for 5 us), both busy-waits
 * timed by hr_now_ns. It prints the cost of one clock read as `timer_ns=X`,
 * and exits with -x's code after returning from main (so the exit flush is
 * what delivers its samples).
 *
 * Other modes: -T N runs each warm window's calls on N threads; -F forks
 * (see fork_mode); -w FILE creates FILE.ready after the first node and
 * waits for FILE to exist before going on; -p flushes at the end and prints
 * the client's counters as `samples=S delivered=D lost=L`; -N PREFIX names
 * the nodes PREFIX::node[i] (default tests/workload); -P runs, for each
 * node, one window of 1 + CALLS calls under HR_PHASE_BY_PATH instead of a
 * cold and a warm one, and counts 3 marks (hr_marks_add); -K forks with
 * batches unsent and counters set (see fork_clean_mode); -I MS sleeps MS
 * milliseconds after its work (and after -p's flush), idle, before it
 * returns from main.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hostrange.h"

static hr_site s_outer = HR_SITE_INIT("workload.outer");
static hr_site s_inner = HR_SITE_INIT("workload.inner");
static hr_site s_forked = HR_SITE_INIT("workload.forked");
static hr_site s_order = HR_SITE_INIT("workload.order");
static hr_site s_e2e = HR_SITE_INIT("end_to_end");

static int busy = 1;

static void spin(uint64_t ns)
{
    uint64_t t0 = hr_now_ns();

    while (busy && hr_now_ns() - t0 < ns)
        ;
}

static void call(void)
{
    HR_SCOPE(outer, &s_outer);
    spin(15000);
    {
        HR_SCOPE(inner, &s_inner);
        spin(5000);
    }
}

static void *calls_thread(void *arg)
{
    int n = *(int *)arg;

    for (int i = 0; i < n; i++)
        call();
    return NULL;
}

static void warm_calls(int calls, int threads)
{
    pthread_t th[64];
    int share[64];

    if (threads <= 1) {
        for (int i = 0; i < calls; i++)
            call();
        return;
    }
    for (int t = 0; t < threads; t++) {
        share[t] = calls / threads + (t < calls % threads);
        pthread_create(&th[t], NULL, calls_thread, &share[t]);
    }
    for (int t = 0; t < threads; t++)
        pthread_join(th[t], NULL);
}

static int window(const char *node, int phase, int calls, int threads)
{
    if (hr_labels_set(node, "synthetic", "cpu", phase) != 0 ||
        hr_window_begin() != 0) {
        fprintf(stderr, "workload: cannot open a window\n");
        return -1;
    }
    warm_calls(calls, threads);
    hr_window_end();
    return 0;
}

/*
 * Node fork-a: `calls` calls in the parent before the fork. Then, inside
 * an open window of node fork-d and an open range workload.forked, a child
 * is forked: it makes `calls` calls, ends the inherited range (silently),
 * closes the window, makes `calls` calls for node fork-b and exits; the
 * parent makes `calls` calls, ends its range, closes the window, waits for
 * the child, and makes `calls` calls for node fork-c.
 */
static int fork_mode(int calls)
{
    hr_scope forked;
    pid_t pid;
    int status;

    window("tests/workload::fork-a", HR_PHASE_WARM, calls, 1);
    hr_labels_set("tests/workload::fork-d", "synthetic", "cpu",
                  HR_PHASE_WARM);
    hr_window_begin();
    forked = hr_begin(&s_forked);
    pid = fork();
    if (pid < 0)
        return 1;
    warm_calls(calls, 1);
    hr_end(forked);
    hr_window_end();
    if (pid == 0) {
        window("tests/workload::fork-b", HR_PHASE_WARM, calls, 1);
        return 0;
    }
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        return 1;
    window("tests/workload::fork-c", HR_PHASE_WARM, calls, 1);
    return 0;
}

static void print_counters(const char *who, const hr_counters *c)
{
    printf("%s samples=%llu delivered=%llu lost=%llu batches=%llu "
           "out_of_order=%llu label_in_window=%llu\n", who,
           (unsigned long long)c->samples, (unsigned long long)c->delivered,
           (unsigned long long)c->lost, (unsigned long long)c->batches_sent,
           (unsigned long long)c->out_of_order,
           (unsigned long long)c->label_in_window);
    fflush(stdout);
}

/*
 * -K: inside an open window of node fork-e, the parent takes one range
 * ended out of order (workload.order, counted once), sets labels inside
 * the window (refused and counted), counts 5 marks, makes `calls` calls
 * and forks at once, its last samples not yet shipped. Each process
 * prints its counters ("before", "child", "parent": right after the
 * fork); the child makes `calls` calls in the window it inherited, and
 * both flush and print them again ("child-end", "parent-end"). The parent
 * waits for the child before it flushes.
 */
static int fork_clean_mode(int calls)
{
    hr_counters c;
    hr_scope a, b;
    pid_t pid;
    int status;

    hr_labels_set("tests/workload::fork-e", "synthetic", "cpu",
                  HR_PHASE_WARM);
    hr_window_begin();
    a = hr_begin(&s_order);
    b = hr_begin(&s_inner);
    hr_end(a);
    hr_end(b);
    hr_labels_set("tests/workload::fork-x", "synthetic", "cpu",
                  HR_PHASE_WARM);
    hr_marks_add(5);
    warm_calls(calls, 1);
    hr_counters_get(&c);
    pid = fork();
    if (pid < 0)
        return 1;
    if (pid != 0)
        print_counters("before", &c);
    hr_counters_get(&c);
    print_counters(pid == 0 ? "child" : "parent", &c);
    if (pid == 0) {
        warm_calls(calls, 1);
        hr_window_end();
        hr_flush(10000);
        hr_counters_get(&c);
        print_counters("child-end", &c);
        return 0;
    }
    hr_window_end();
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        return 1;
    hr_flush(10000);
    hr_counters_get(&c);
    print_counters("parent-end", &c);
    return 0;
}

static void wait_for(const char *file)
{
    char ready[4200];
    struct stat st;
    FILE *f;

    snprintf(ready, sizeof ready, "%s.ready", file);
    f = fopen(ready, "w");
    if (f != NULL)
        fclose(f);
    while (stat(file, &st) != 0)
        usleep(10000);
}

int main(int argc, char **argv)
{
    int calls = 1000, nodes = 2, records = 10, code = 0, threads = 1, c;
    int fork_it = 0, fork_clean = 0, print = 0, by_path = 0, idle_ms = 0;
    const char *wait_file = NULL, *prefix = "tests/workload";
    uint64_t t0, t1;

    while ((c = getopt(argc, argv, "c:n:r:x:T:FKw:pqN:PI:")) != -1) {
        switch (c) {
        case 'c':
            calls = atoi(optarg);
            break;
        case 'n':
            nodes = atoi(optarg);
            break;
        case 'r':
            records = atoi(optarg);
            break;
        case 'x':
            code = atoi(optarg);
            break;
        case 'T':
            threads = atoi(optarg) > 64 ? 64 : atoi(optarg);
            break;
        case 'F':
            fork_it = 1;
            break;
        case 'K':
            fork_clean = 1;
            break;
        case 'w':
            wait_file = optarg;
            break;
        case 'p':
            print = 1;
            break;
        case 'q':
            busy = 0; /* no busy-waits: as many samples as fast as it can */
            break;
        case 'N':
            prefix = optarg;
            break;
        case 'P':
            by_path = 1;
            break;
        case 'I':
            idle_ms = atoi(optarg);
            break;
        default:
            fprintf(stderr, "usage: workload [-c CALLS] [-n NODES] "
                    "[-r RECORDS] [-x EXIT_CODE] [-T THREADS] [-F | -K] "
                    "[-w FILE] [-p] [-q] [-N PREFIX] [-P] [-I MS]\n");
            return 2;
        }
    }

    t0 = hr_now_ns();
    for (int i = 0; i < 10000; i++)
        hr_now_ns();
    t1 = hr_now_ns();
    printf("timer_ns=%.1f\n", (double)(t1 - t0) / 10001.0);
    fflush(stdout);

    if (fork_it)
        return fork_mode(calls);
    if (fork_clean)
        return fork_clean_mode(calls);
    for (int n = 0; n < nodes; n++) {
        char node[256];

        if (n == 1 && wait_file != NULL)
            wait_for(wait_file);
        snprintf(node, sizeof node, "%s::node[%d]", prefix, n);
        if (by_path) {
            if (window(node, HR_PHASE_BY_PATH, 1 + calls, threads) != 0)
                return 1;
            hr_marks_add(3);
        } else if (window(node, HR_PHASE_COLD, 1, 1) != 0 ||
                   window(node, HR_PHASE_WARM, calls, threads) != 0) {
            return 1;
        }
        for (int i = 0; i < records; i++)
            hr_record(&s_e2e, 20000 + (uint64_t)i);
    }
    if (print) {
        hr_counters k;
        int rc = hr_flush(30000);
        hr_counters_get(&k);
        printf("flush=%d samples=%llu delivered=%llu lost=%llu\n", rc,
               (unsigned long long)k.samples,
               (unsigned long long)k.delivered, (unsigned long long)k.lost);
        fflush(stdout);
    }
    if (idle_ms > 0) {
        struct timespec left = { idle_ms / 1000, idle_ms % 1000 * 1000000L };

        while (nanosleep(&left, &left) != 0 && errno == EINTR)
            ;
    }
    return code;
}
