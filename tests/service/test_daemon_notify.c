/*
 * Built only with libsystemd (configure --with-systemd): hostranged tells
 * the service manager it is ready once it serves, and that it stops at
 * SIGTERM, through $NOTIFY_SOCKET as a Type=notify unit expects.
 */
#include "config.h"

#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/lib/harness.h"

/* Waits for one notification datagram; returns its text (static). */
static const char *receive(int fd)
{
    static char buf[4096];
    struct pollfd p = { fd, POLLIN, 0 };
    ssize_t n;

    if (poll(&p, 1, 20000) != 1)
        fail_msg("no notification from hostranged");
    n = recv(fd, buf, sizeof buf - 1, 0);
    assert_true(n > 0);
    buf[n] = '\0';
    return buf;
}

static void test_ready_and_stopping(void **state)
{
    struct harness_daemon d = { .pid = 0 };
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    const char *msg;
    int fd;

    (void)state;
    harness_mkdtemp(d.dir, sizeof d.dir, "notify");
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s/notify", d.dir);
    fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    setenv("NOTIFY_SOCKET", sa.sun_path, 1);

    harness_daemon_start_args(&d, NULL);
    msg = receive(fd);
    assert_non_null(strstr(msg, "READY=1"));
    assert_non_null(strstr(msg, "STATUS=serving "));
    assert_true(harness_exited(harness_daemon_signal(&d, SIGTERM), 0));
    msg = receive(fd);
    assert_non_null(strstr(msg, "STOPPING=1"));
    close(fd);
    unsetenv("NOTIFY_SOCKET");
    harness_daemon_stop(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ready_and_stopping),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
