/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "harness.h"
#include "schedstat.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

const char *harness_backend(void)
{
        const char *b = getenv("TIMERD_TEST_BACKEND");
        return b && b[0] ? b : "timerfd";
}

unsigned long long harness_now_usec(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000;
}

/* Run timerd on h's directory (its state there) and wait until it answers. */
static void spawn(struct harness *h, const char *const *extra_args)
{
        const char *bin = getenv("TIMERD_BIN");
        char state[320], backend[64];
        const char *argv[32];
        size_t n = 0;

        assert_non_null(bin);
        snprintf(state, sizeof(state), "%s/state", h->dir);
        snprintf(backend, sizeof(backend), "--backend=%s", harness_backend());

        argv[n++] = bin;
        argv[n++] = "--socket";
        argv[n++] = h->socket;
        argv[n++] = "--state-dir";
        argv[n++] = state;
        argv[n++] = backend;
        argv[n++] = "--log-level=warning";
        /* Not the host's: a test that wants ranges names its own file (a later one wins). */
        argv[n++] = "--subuid-file=/dev/null";
        for (size_t i = 0; extra_args && extra_args[i] && n < 31; i++)
                argv[n++] = extra_args[i];
        argv[n] = NULL;

        h->pid = fork();
        assert_true(h->pid >= 0);
        if (h->pid == 0) {
                execv(bin, (char *const *)argv);
                _exit(127);
        }
        for (int i = 0; i < 500; i++) {
                struct timerd *t;
                if (timerd_connect(h->socket, &t) == 0) {
                        timerd_close(t);
                        return;
                }
                int status;
                if (waitpid(h->pid, &status, WNOHANG) == h->pid)
                        fail_msg("timerd exited at start (status %d)", status);
                usleep(10000);
        }
        fail_msg("timerd did not answer on %s", h->socket);
}

void harness_start(struct harness *h, const char *const *extra_args)
{
        snprintf(h->dir, sizeof(h->dir), "/tmp/timerd-test.XXXXXX");
        assert_non_null(mkdtemp(h->dir));
        snprintf(h->socket, sizeof(h->socket), "%s/io.timerd", h->dir);
        spawn(h, extra_args);
}

void harness_restart(struct harness *h, const char *const *extra_args)
{
        int status;

        assert_int_equal(kill(h->pid, SIGTERM), 0);
        assert_int_equal(waitpid(h->pid, &status, 0), h->pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        spawn(h, extra_args);
}

int harness_kill(struct harness *h, int signo)
{
        int status = -1;
        kill(h->pid, signo);
        /* 30 s: a sanitized service on a loaded 2-core machine can take over 10 s to exit. */
        for (int i = 0; i < 3000; i++) {
                if (waitpid(h->pid, &status, WNOHANG) == h->pid)
                        break;
                usleep(10000);
        }
        char cmd[300];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", h->dir);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", h->dir);
        return status;
}

void harness_stop(struct harness *h)
{
        int status = harness_kill(h, SIGTERM);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
}

struct timerd *harness_connect(const struct harness *h)
{
        struct timerd *t = NULL;
        assert_int_equal(timerd_connect(h->socket, &t), 0);
        return t;
}

int harness_raw_connect(const struct harness *h)
{
        struct sockaddr_un addr = {.sun_family = AF_UNIX};
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(fd >= 0);
        snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", h->socket);
        assert_int_equal(connect(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
        return fd;
}

void raw_send(int fd, const void *data, size_t len)
{
        const char *p = data;
        while (len > 0) {
                ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
                assert_true(n > 0);
                p += n;
                len -= (size_t)n;
        }
}

/* raw_recv, its silence timed as the clock runs or (peer >= 0) by a schedstat_watch on the peer. */
static long recv_message(int fd, char *buf, size_t size, int timeout_ms, pid_t peer)
{
        size_t len = 0;
        while (len < size) {
                struct pollfd pfd = {.fd = fd, .events = POLLIN};
                int r = poll(&pfd, 1, 0);

                if (r == 0 && peer < 0)
                        r = poll(&pfd, 1, timeout_ms);
                else if (r == 0) {
                        /* Silence: timed from here (the CPU waits read only then). */
                        struct schedstat_watch silent;
                        int wait_ms = timeout_ms;

                        schedstat_watch_start(&silent, peer);
                        while ((r = poll(&pfd, 1, wait_ms)) == 0) {
                                uint64_t usec = schedstat_watch_usec(&silent);

                                if (usec >= (uint64_t)timeout_ms * 1000)
                                        break;
                                wait_ms = timeout_ms - (int)(usec / 1000);
                        }
                }
                if (r == 0)
                        return -2;
                ssize_t n = recv(fd, buf + len, 1, 0);
                if (n <= 0)
                        return -1;
                if (buf[len] == '\0')
                        return (long)len;
                len++;
        }
        fail_msg("reply larger than %zu bytes", size);
        return -1;
}

long raw_recv(int fd, char *buf, size_t size, int timeout_ms)
{
        return recv_message(fd, buf, size, timeout_ms, -1);
}

long raw_recv_reply(int fd, char *buf, size_t size, int timeout_ms)
{
        struct ucred peer;
        socklen_t len = sizeof(peer);

        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) < 0)
                peer.pid = 0;
        return recv_message(fd, buf, size, timeout_ms, peer.pid);
}

int harness_setup_with(void **state, const char *const *extra_args)
{
        struct harness *h = calloc(1, sizeof(*h));
        assert_non_null(h);
        harness_start(h, extra_args);
        *state = h;
        return 0;
}

int harness_setup(void **state)
{
        return harness_setup_with(state, NULL);
}

int harness_teardown(void **state)
{
        struct harness *h = *state;
        harness_stop(h);
        free(h);
        return 0;
}
