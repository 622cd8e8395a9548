/*
 * 32 client processes at once, each making 1,000,000 range events as fast
 * as it can (the workload helper -q: 1 cold call and 499,999 warm calls of two
 * nested ranges), into one real hostranged: every count exact, no batch
 * rejected, no event lost.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/lib/harness_rows.h"
#include "tests/lib/harness.h"

#define CLIENTS 32
#define WARM_CALLS 499999
/* Two range samples per call: (1 + WARM_CALLS) * 2 = 1,000,000. */
#define EVENTS 1000000ull

static void test_many_clients(void **state)
{
    struct harness_daemon d = { { 0 }, 0 };
    struct harness_counters c[CLIENTS];
    char out[CLIENTS][300], prefix[CLIENTS][64], node[96], key[64];
    char *st, *rep, *line, *save = NULL;
    unsigned long long delivered = 0, rows_sum = 0, stall = 0;
    static struct flat row;
    pid_t pid[CLIENTS];
    int seen[CLIENTS][4] = { { 0 } };

    (void)state;
    harness_daemon_start(&d);
    for (int k = 0; k < CLIENTS; k++) {
        char calls[16];
        char *argv[] = { (char *)harness_program("HOSTRANGE_TEST_WORKLOAD"),
                         "-q", "-N", prefix[k], "-n", "1", "-c", calls, "-r",
                         "0", "-p", NULL };

        snprintf(calls, sizeof calls, "%d", WARM_CALLS);
        snprintf(prefix[k], sizeof prefix[k], "tests/scale/client%02d", k);
        snprintf(out[k], sizeof out[k], "%s.out%d", d.dir, k);
        pid[k] = harness_spawn(argv, d.dir, NULL, out[k]);
    }
    for (int k = 0; k < CLIENTS; k++) {
        char *text;

        assert_true(harness_exited(harness_wait(pid[k], 1800), 0));
        text = harness_read_file(out[k]);
        if (harness_counters(text, "flush=0", &c[k]) != 0)
            fail_msg("client %d did not flush: %s", k, text);
        free(text);
        unlink(out[k]);
        /* Its million events and the library's own samples (a
         * `hostrange.stall` for each time it waited for room, a
         * `hostrange.handoff` for each time it woke the shipper): all
         * delivered. */
        assert_true(c[k].samples >= EVENTS);
        assert_int_equal(c[k].lost, 0);
        assert_int_equal(c[k].delivered, c[k].samples);
        delivered += c[k].delivered;
    }

    st = harness_stats(d.dir);
    assert_int_equal(harness_stat(st, "daemon.clients"), CLIENTS);
    assert_int_equal(harness_stat_rejected(st), 0);
    assert_int_equal(harness_stat(st, "daemon.retries"), 0);
    for (int k = 0; k < CLIENTS; k++) {
        int ci = harness_stat_client(st, (long)pid[k]);

        assert_true(ci != 0);
        snprintf(key, sizeof key, "client.%d.events", ci);
        assert_int_equal(harness_stat(st, key), c[k].samples);
        snprintf(key, sizeof key, "client.%d.lost_events", ci);
        assert_int_equal(harness_stat(st, key), 0);
        snprintf(key, sizeof key, "client.%d.rejected", ci);
        assert_int_equal(harness_stat(st, key), 0);
        snprintf(key, sizeof key, "client.%d.gaps", ci);
        assert_int_equal(harness_stat(st, key), 0);
    }
    free(st);

    /* Per client: 1 cold and 499,999 warm samples of each range; in all,
     * the report holds exactly what was delivered. */
    rep = harness_dump(d.dir, NULL);
    for (line = strtok_r(rep, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        const char *range, *phase;
        unsigned long long count;
        int k = -1, slot;

        if (flat_parse(line, &row) != 0)
            fail_msg("not a report row: %s", line);
        if (strcmp(flat_get(&row, "metric"), "inclusive") != 0)
            continue;
        count = strtoull(flat_get(&row, "count"), NULL, 10);
        rows_sum += count;
        range = flat_get(&row, "range");
        phase = flat_get(&row, "phase");
        /* The library's own ranges: its waits for room and its
         * hand-offs to the shipper. */
        if (strncmp(range, "hostrange.", 10) == 0) {
            stall += count;
            continue;
        }
        for (int j = 0; j < CLIENTS; j++) {
            snprintf(node, sizeof node, "%s::node[0]", prefix[j]);
            if (strcmp(flat_get(&row, "nodeid"), node) == 0)
                k = j;
        }
        if (k < 0)
            fail_msg("a row of no client: %s", line);
        slot = (strcmp(range, "workload.inner") == 0) * 2 +
               (strcmp(phase, "warm") == 0);
        if (count != ((slot & 1) ? WARM_CALLS : 1))
            fail_msg("client %d: %s", k, line);
        seen[k][slot]++;
    }
    free(rep);
    for (int k = 0; k < CLIENTS; k++) {
        for (int slot = 0; slot < 4; slot++)
            assert_int_equal(seen[k][slot], 1);
    }
    assert_int_equal(rows_sum, delivered);
    assert_int_equal(rows_sum - stall, CLIENTS * EVENTS);
    printf("# %d clients: %llu events delivered, %llu of them the "
           "library's own, none lost\n", CLIENTS, delivered, stall);
    harness_daemon_stop(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_many_clients),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
