/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * service/io/sd.c against what systemd would do: sockets passed as fds 3.. with LISTEN_* set, and a
 * NOTIFY_SOCKET the test reads itself.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "loop/loop.h"
#include "service/io/sd.h"

static void ignore_expiry(enum timerd_clock clock, uint64_t generation, void *userdata)
{
        (void)clock;
        (void)generation;
        (void)userdata;
}

/* ---- the listening socket ---- */

static int listening_socket(void)
{
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(fd >= 0);
        struct sockaddr_un addr = {.sun_family = AF_UNIX};
        /* Abstract and autobound: nothing to clean up. */
        assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof(sa_family_t)), 0);
        assert_int_equal(listen(fd, 4), 0);
        return fd;
}

/* Place fds at 3, 4, … and describe them the way systemd does. */
static void pass_fds(const int *fds, int n, const char *names)
{
        char value[32];

        int moved[8];

        assert_true(n <= 8);
        /* Out of the way first: the sockets may already sit at 3, 4, … in another order. */
        for (int i = 0; i < n; i++) {
                moved[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 100);
                assert_true(moved[i] >= 100);
                close(fds[i]);
        }
        for (int i = 0; i < n; i++) {
                assert_true(dup2(moved[i], 3 + i) == 3 + i);
                close(moved[i]);
        }
        snprintf(value, sizeof(value), "%d", n);
        setenv("LISTEN_FDS", value, 1);
        snprintf(value, sizeof(value), "%d", (int)getpid());
        setenv("LISTEN_PID", value, 1);
        if (names)
                setenv("LISTEN_FDNAMES", names, 1);
        else
                unsetenv("LISTEN_FDNAMES");
}

static bool fd_open(int fd)
{
        return fcntl(fd, F_GETFD) >= 0;
}

static void test_listen_nothing_passed(void **state)
{
        int fd = -1;
        (void)state;

        unsetenv("LISTEN_FDS");
        unsetenv("LISTEN_PID");
        assert_int_equal(systemd_listen_socket(&fd), 0);
        assert_int_equal(fd, -1);
}

static void test_listen_takes_varlink(void **state)
{
        int fd = -1;
        int fds[] = {listening_socket()};
        (void)state;

        pass_fds(fds, 1, "varlink");
        assert_int_equal(systemd_listen_socket(&fd), 1);
        assert_int_equal(fd, 3);
        assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
        /* Taken once: the environment no longer offers it. */
        assert_null(getenv("LISTEN_FDS"));
        close(fd);
}

static void test_listen_closes_the_others(void **state)
{
        int fd = -1;
        int fds[] = {listening_socket(), listening_socket(), listening_socket()};
        (void)state;

        pass_fds(fds, 3, "metrics:varlink:varlink");
        assert_int_equal(systemd_listen_socket(&fd), 1);
        assert_int_equal(fd, 4);
        assert_false(fd_open(3));
        assert_false(fd_open(5));
        close(fd);
}

static void test_listen_none_named_varlink(void **state)
{
        int fd = -1;
        int fds[] = {listening_socket(), listening_socket()};
        (void)state;

        pass_fds(fds, 2, "timerd.socket:other");
        assert_int_equal(systemd_listen_socket(&fd), -ENOENT);
        assert_false(fd_open(3));
        assert_false(fd_open(4));
}

static void test_listen_unnamed(void **state)
{
        int fd = -1;
        int fds[] = {listening_socket()};
        (void)state;

        pass_fds(fds, 1, NULL);
        assert_int_equal(systemd_listen_socket(&fd), -ENOENT);
        assert_false(fd_open(3));
}

static void test_listen_garbage(void **state)
{
        int fd = -1;
        char pid[16];
        (void)state;

        snprintf(pid, sizeof(pid), "%d", (int)getpid());
        setenv("LISTEN_PID", pid, 1);
        setenv("LISTEN_FDS", "three", 1);
        assert_true(systemd_listen_socket(&fd) < 0);
        assert_int_equal(fd, -1);
}

static void test_listen_not_listening(void **state)
{
        int fd = -1;
        int pair[2];
        (void)state;

        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
        close(pair[1]);
        pass_fds(pair, 1, "varlink");
        assert_int_equal(systemd_listen_socket(&fd), -ENOTSOCK);
        assert_false(fd_open(3));

        int dgram[] = {socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)};
        assert_true(dgram[0] >= 0);
        pass_fds(dgram, 1, "varlink");
        assert_int_equal(systemd_listen_socket(&fd), -ENOTSOCK);
        assert_false(fd_open(3));
}

/* ---- notifications ---- */

struct notify_fixture {
        char dir[64];
        char path[108];
        int fd; /* what systemd would read */
        struct loop *loop;
};

static int notify_setup(void **state)
{
        struct notify_fixture *f = calloc(1, sizeof(*f));
        struct loop_callbacks cb = {.expired = ignore_expiry};

        assert_non_null(f);
        snprintf(f->dir, sizeof(f->dir), "/tmp/timerd-sd-test.XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        snprintf(f->path, sizeof(f->path), "%s/notify", f->dir);
        f->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        assert_true(f->fd >= 0);
        struct sockaddr_un addr = {.sun_family = AF_UNIX};
        memcpy(addr.sun_path, f->path, strlen(f->path) + 1);
        assert_int_equal(bind(f->fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
        setenv("NOTIFY_SOCKET", f->path, 1);
        unsetenv("WATCHDOG_USEC");
        unsetenv("WATCHDOG_PID");
        assert_int_equal(loop_new(LOOP_BACKEND_TIMERFD, &cb, &f->loop), 0);
        *state = f;
        return 0;
}

static int notify_teardown(void **state)
{
        struct notify_fixture *f = *state;

        loop_free(f->loop);
        close(f->fd);
        unlink(f->path);
        rmdir(f->dir);
        unsetenv("NOTIFY_SOCKET");
        unsetenv("WATCHDOG_USEC");
        unsetenv("WATCHDOG_PID");
        free(f);
        return 0;
}

static uint64_t now_usec(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* The next message systemd would receive, turning the loop for at most timeout_usec; "" when
 * none came. */
static const char *next_message(struct notify_fixture *f, uint64_t timeout_usec)
{
        static char buf[512];
        uint64_t end = now_usec() + timeout_usec;

        for (;;) {
                ssize_t n = recv(f->fd, buf, sizeof(buf) - 1, 0);
                if (n >= 0) {
                        buf[n] = '\0';
                        return buf;
                }
                assert_int_equal(errno, EAGAIN);
                uint64_t now = now_usec();
                if (now >= end) {
                        buf[0] = '\0';
                        return buf;
                }
                assert_true(loop_run_once(f->loop, (int64_t)(end - now)) >= 0);
        }
}

static const struct systemd_summary idle = {.timers = 0, .waiters = 0, .backend = "timerfd"};
static const struct systemd_summary busy = {.timers = 2, .waiters = 1, .backend = "io_uring"};
static const struct systemd_summary one = {.timers = 1, .waiters = 1, .backend = "io_uring"};

static void test_ready_carries_status(void **state)
{
        struct notify_fixture *f = *state;
        struct systemd_notifier *n;

        assert_int_equal(systemd_notifier_new(f->loop, &n), 0);
        systemd_notify_ready(n, &busy);
        assert_string_equal(next_message(f, 0),
                            "READY=1\nSTATUS=2 timers, 1 waiter; io_uring backend");
        systemd_notifier_free(n);
}

static void test_status_sent_only_on_change(void **state)
{
        struct notify_fixture *f = *state;
        struct systemd_notifier *n;

        assert_int_equal(systemd_notifier_new(f->loop, &n), 0);
        systemd_notify_ready(n, &idle);
        assert_string_equal(next_message(f, 0), "READY=1\nSTATUS=0 timers, 0 waiters; timerfd "
                                                "backend");
        /* The same summary, or a change undone before the second is over: nothing to say. */
        systemd_notify_status(n, &idle);
        systemd_notify_status(n, &busy);
        systemd_notify_status(n, &idle);
        assert_string_equal(next_message(f, 1500000), "");
        systemd_notifier_free(n);
}

static void test_status_rate_limited(void **state)
{
        struct notify_fixture *f = *state;
        struct systemd_notifier *n;

        assert_int_equal(systemd_notifier_new(f->loop, &n), 0);
        systemd_notify_ready(n, &idle);
        assert_string_equal(next_message(f, 0), "READY=1\nSTATUS=0 timers, 0 waiters; timerfd "
                                                "backend");
        /* Within the second: held back, and only the latest is sent when it is over. */
        systemd_notify_status(n, &busy);
        systemd_notify_status(n, &one);
        assert_string_equal(next_message(f, 0), "");
        assert_string_equal(next_message(f, 5000000), "STATUS=1 timer, 1 waiter; io_uring backend");
        assert_string_equal(next_message(f, 0), "");

        /* A second after the last one, a change goes out at once. */
        usleep(1100000);
        systemd_notify_status(n, &idle);
        assert_string_equal(next_message(f, 0), "STATUS=0 timers, 0 waiters; timerfd backend");
        systemd_notifier_free(n);
}

static void test_watchdog_pings_from_the_loop(void **state)
{
        struct notify_fixture *f = *state;
        struct systemd_notifier *n;
        char pid[16];

        setenv("WATCHDOG_USEC", "200000", 1);
        snprintf(pid, sizeof(pid), "%d", (int)getpid());
        setenv("WATCHDOG_PID", pid, 1);
        assert_int_equal(systemd_notifier_new(f->loop, &n), 0);
        /* Only a turning loop pings. */
        assert_string_equal(next_message(f, 0), "");
        assert_string_equal(next_message(f, 5000000), "WATCHDOG=1");
        assert_string_equal(next_message(f, 5000000), "WATCHDOG=1");
        systemd_notifier_free(n);
}

static void test_watchdog_for_another_process(void **state)
{
        struct notify_fixture *f = *state;
        struct systemd_notifier *n;

        setenv("WATCHDOG_USEC", "100000", 1);
        setenv("WATCHDOG_PID", "1", 1);
        assert_int_equal(systemd_notifier_new(f->loop, &n), 0);
        assert_string_equal(next_message(f, 500000), "");
        systemd_notifier_free(n);
}

static void test_watchdog_garbage_is_ignored(void **state)
{
        struct notify_fixture *f = *state;
        struct systemd_notifier *n;

        setenv("WATCHDOG_USEC", "soon", 1);
        assert_int_equal(systemd_notifier_new(f->loop, &n), 0);
        systemd_notify_ready(n, &idle);
        assert_string_equal(next_message(f, 0), "READY=1\nSTATUS=0 timers, 0 waiters; timerfd "
                                                "backend");
        systemd_notifier_free(n);
}

/* Without fds to spare the notifier cannot be set up, and says so. */
static void check_new_fails_without_fds(struct notify_fixture *f)
{
        struct systemd_notifier *n = NULL;
        struct rlimit saved, none;

        assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
        int probe = dup(0);
        assert_true(probe >= 0);
        close(probe);
        none = (struct rlimit){.rlim_cur = (rlim_t)probe, .rlim_max = saved.rlim_max};
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &none), 0);
        int r = systemd_notifier_new(f->loop, &n);
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
        assert_int_equal(r, -EMFILE);
        assert_null(n);
}

static void test_new_fails_for_watchdog(void **state)
{
        struct notify_fixture *f = *state;

        setenv("WATCHDOG_USEC", "1000000", 1);
        check_new_fails_without_fds(f);
}

static void test_new_fails_for_status(void **state)
{
        check_new_fails_without_fds(*state);
}

/* systemd went away: notifications fail, and nothing else does. */
static void test_notify_socket_gone(void **state)
{
        struct notify_fixture *f = *state;
        struct systemd_notifier *n;
        char gone[128];

        snprintf(gone, sizeof(gone), "%s/gone", f->dir);
        setenv("NOTIFY_SOCKET", gone, 1);
        assert_int_equal(systemd_notifier_new(f->loop, &n), 0);
        systemd_notify_ready(n, &idle);
        systemd_notify_status(n, &busy);
        systemd_notify_stopping();
        setenv("NOTIFY_SOCKET", f->path, 1);
        systemd_notify_reloading();
        assert_string_equal(next_message(f, 0), "RELOADING=1");
        systemd_notifier_free(n);
}

static void test_reload_and_stop(void **state)
{
        struct notify_fixture *f = *state;

        systemd_notify_reloading();
        assert_string_equal(next_message(f, 0), "RELOADING=1");
        systemd_notify_reloaded();
        assert_string_equal(next_message(f, 0), "READY=1");
        systemd_notify_stopping();
        assert_string_equal(next_message(f, 0), "STOPPING=1\nSTATUS=Shutting down");
}

static void test_without_systemd_nothing_is_set_up(void **state)
{
        struct notify_fixture *f = *state;
        struct systemd_notifier *n;

        /* Neither status nor watchdog needs an fd: this works with none to spare. */
        unsetenv("NOTIFY_SOCKET");
        struct rlimit saved, none;
        assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
        none = (struct rlimit){.rlim_cur = 0, .rlim_max = saved.rlim_max};
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &none), 0);
        int r = systemd_notifier_new(f->loop, &n);
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
        assert_int_equal(r, 0);
        systemd_notify_ready(n, &busy);
        systemd_notify_status(n, &idle);
        assert_string_equal(next_message(f, 0), "");
        systemd_notifier_free(n);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_listen_nothing_passed),
            cmocka_unit_test(test_listen_takes_varlink),
            cmocka_unit_test(test_listen_closes_the_others),
            cmocka_unit_test(test_listen_none_named_varlink),
            cmocka_unit_test(test_listen_unnamed),
            cmocka_unit_test(test_listen_garbage),
            cmocka_unit_test(test_listen_not_listening),
            cmocka_unit_test_setup_teardown(test_ready_carries_status, notify_setup,
                                            notify_teardown),
            cmocka_unit_test_setup_teardown(test_status_sent_only_on_change, notify_setup,
                                            notify_teardown),
            cmocka_unit_test_setup_teardown(test_status_rate_limited, notify_setup,
                                            notify_teardown),
            cmocka_unit_test_setup_teardown(test_watchdog_pings_from_the_loop, notify_setup,
                                            notify_teardown),
            cmocka_unit_test_setup_teardown(test_watchdog_for_another_process, notify_setup,
                                            notify_teardown),
            cmocka_unit_test_setup_teardown(test_watchdog_garbage_is_ignored, notify_setup,
                                            notify_teardown),
            cmocka_unit_test_setup_teardown(test_new_fails_for_watchdog, notify_setup,
                                            notify_teardown),
            cmocka_unit_test_setup_teardown(test_new_fails_for_status, notify_setup,
                                            notify_teardown),
            cmocka_unit_test_setup_teardown(test_notify_socket_gone, notify_setup, notify_teardown),
            cmocka_unit_test_setup_teardown(test_reload_and_stop, notify_setup, notify_teardown),
            cmocka_unit_test_setup_teardown(test_without_systemd_nothing_is_set_up, notify_setup,
                                            notify_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
