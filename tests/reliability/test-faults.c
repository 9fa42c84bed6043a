/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Faults at the service's own effect boundaries, against the real timerd: a send that fails
 * (EPIPE, ECONNRESET) because the client left mid-reply, a send that would block (EAGAIN) because
 * the client's buffer is full, an accept that fails for lack of descriptors (EMFILE), and a
 * connection whose process is gone before it is accepted. Each has its outcome, and the registry
 * and the descriptor table stay as they were. And a client that leaves holding many transient
 * timers: they are gone at once and freed in steps, others served between them.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "probe.h"
#include "proc-stats.h"
#include "wire.h"

#define SLOW_ROUND_TRIP_USEC 1000000
#define IDLE_CPU_TICKS       10

/* The descriptors of timerd once what it dropped is freed (at the end of an iteration, which a
 * second answer proves passed). */
static long settled_fds(const struct harness *h, int control)
{
        (void)wire_status(control, "connections");
        (void)wire_status(control, "connections");
        return proc_fd_count(h->pid);
}

static void expect_fds_soon(const struct harness *h, long expected)
{
        long fds = -1;
        for (int i = 0; i < 200 && (fds = proc_fd_count(h->pid)) != expected; i++)
                usleep(10000);
        assert_int_equal(fds, expected);
}

/*
 * A connection holding 20000 transient timers closes: at once they are in no count and no Get, and
 * the name registers again; they are freed over several loop iterations (the first step frees 256,
 * a step at most twice the last), and the other connection's calls are answered throughout.
 */
static void test_closed_timers_gone_at_once_freed_in_steps(void **state)
{
        enum { N_TIMERS = 20000 };
        struct harness *h = *state;
        int control = harness_raw_connect(h), holder = harness_raw_connect(h);

        wire_bulk_register(holder, "gone", N_TIMERS,
                           "{\"policy\":\"interval\",\"cadence_usec\":3600000000}", WIRE_OWNER_SELF,
                           0);
        assert_int_equal(wire_status(control, "timers"), N_TIMERS);
        int64_t steps = wire_status(control, "reap_steps");
        close(holder);

        wire_expect_status(control, "connections", 1);
        assert_int_equal(wire_status(control, "timers"), 0);
        json_object *r = wire_call(
            control,
            "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"gone00007\"}}");
        assert_string_equal(wire_error(r), "io.timerd.Timer.NotFound");
        json_object_put(r);
        wire_bulk_register(control, "gone", 1, "{\"policy\":\"once\"}", WIRE_OWNER_SELF, 0);
        r = wire_call(
            control,
            "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"gone00000\"}}");
        assert_string_equal(wire_string(r, "timer.declaration.policy"), "once");
        json_object_put(r);

        wire_expect_status(control, "reaping", 0);
        assert_true(wire_status(control, "reap_steps") - steps > 1);
        assert_int_equal(wire_status(control, "timers"), 1);
        close(control);
}

static void expect_idle_cpu(pid_t pid)
{
        long before = proc_cpu_ticks(pid);
        usleep(1000000);
        long used = proc_cpu_ticks(pid) - before;
        if (used > IDLE_CPU_TICKS)
                fail_msg("timerd used %ld/100 s of CPU in 1 s while idle", used);
}

/*
 * EPIPE / ECONNRESET: clients ask for a List page of 1000 timers (~430 KB) and leave, before the
 * reply and in the middle of it. Each is dropped; nothing of the registry changes; no descriptor
 * stays.
 */
static void test_client_leaves_mid_reply(void **state)
{
        enum { N_TIMERS = 1000, ROUNDS = 20 };
        struct harness *h = *state;
        int control = harness_raw_connect(h);
        wire_bulk_register(control, "kept", N_TIMERS, "{\"policy\":\"once\"}", WIRE_OWNER_SELF, 0);
        long fds = settled_fds(h, control);

        for (int i = 0; i < ROUNDS; i++) {
                int fd = harness_raw_connect(h);
                wire_send(fd, "{\"method\":\"io.timerd.Timer.List\"}");
                if (i % 2) {
                        /* Some of it came: the service is writing when the client goes. */
                        char c;
                        assert_int_equal(recv(fd, &c, 1, 0), 1);
                }
                close(fd);
        }
        wire_expect_status(control, "connections", 1);
        expect_fds_soon(h, fds);
        assert_int_equal(wire_status(control, "timers"), N_TIMERS);
        close(control);
}

/*
 * EAGAIN: a client pipelines thousands of calls and reads nothing until the service's writes
 * block; then it reads. Every reply comes, whole and in order, and others were served meanwhile.
 */
static void test_full_socket_buffer_then_reads(void **state)
{
        enum { N_TIMERS = 100, N_CALLS = 5000 };
        struct harness *h = *state;
        int fd = harness_raw_connect(h);
        struct probe probe;

        wire_bulk_register(fd, "t", N_TIMERS, "{\"policy\":\"once\"}", WIRE_OWNER_SELF, 0);
        probe_start(&probe, h->socket, h->pid);
        for (int i = 0; i < N_CALLS; i++)
                wire_send(
                    fd, "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"t%05d\"}}",
                    i % N_TIMERS);
        usleep(300000);
        for (int i = 0; i < N_CALLS; i++) {
                char name[16];
                snprintf(name, sizeof(name), "t%05d", i % N_TIMERS);
                json_object *r = wire_recv(fd);
                assert_null(wire_error(r));
                assert_string_equal(wire_string(r, "timer.name"), name);
                json_object_put(r);
        }
        probe_stop(&probe);
        assert_int_equal(probe.failures, 0);
        assert_true(probe.max_usec < SLOW_ROUND_TRIP_USEC);
        close(fd);
}

/* timerd started with 64 descriptors, its log in a file. */
struct low_fds {
        struct harness harness;
        bool running;
        char log_path[64];
        int log_fd;
};

static int setup_low_fds(void **state)
{
        struct low_fds *l = calloc(1, sizeof(*l));
        struct rlimit saved, low;
        assert_non_null(l);

        snprintf(l->log_path, sizeof(l->log_path), "/tmp/timerd-faults-log.XXXXXX");
        l->log_fd = mkstemp(l->log_path);
        assert_true(l->log_fd >= 0);
        /* timerd inherits the limit and stderr; the test keeps its own. */
        int saved_stderr = dup(STDERR_FILENO);
        assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
        low = (struct rlimit){.rlim_cur = 64, .rlim_max = saved.rlim_max};
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
        assert_true(dup2(l->log_fd, STDERR_FILENO) >= 0);
        harness_start(&l->harness, NULL);
        assert_true(dup2(saved_stderr, STDERR_FILENO) >= 0);
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
        close(saved_stderr);
        l->running = true;
        *state = l;
        return 0;
}

static int teardown_low_fds(void **state)
{
        struct low_fds *l = *state;
        if (l->running)
                (void)harness_kill(&l->harness, SIGKILL);
        close(l->log_fd);
        unlink(l->log_path);
        free(l);
        return 0;
}

static unsigned count_lines(int fd)
{
        char buf[65536];
        unsigned lines = 0;
        ssize_t n;
        assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
        while ((n = read(fd, buf, sizeof(buf))) > 0)
                for (ssize_t i = 0; i < n; i++)
                        lines += buf[i] == '\n';
        return lines;
}

/*
 * EMFILE: timerd with 64 descriptors is sent more connections than it can take. Those it holds
 * are still served, it does not spin on the backlog it cannot accept nor log about it in a loop,
 * and once descriptors are free again the waiting connections are served.
 */
static void test_accept_without_descriptors(void **state)
{
        enum { N = 60 };
        struct low_fds *l = *state;
        struct harness *h = &l->harness;
        int fds[N];

        int control = harness_raw_connect(h);
        assert_int_equal(wire_status(control, "connections"), 1);
        for (int i = 0; i < N; i++)
                fds[i] = harness_raw_connect(h);
        usleep(300000);

        /* Served on: the held connection answers at once. */
        unsigned long long start = harness_now_usec();
        int64_t held = wire_status(control, "connections");
        assert_true(harness_now_usec() - start < SLOW_ROUND_TRIP_USEC);
        assert_true(held > 1 && held < N + 1);
        expect_idle_cpu(h->pid);
        /* A warning, not one per attempt. */
        unsigned lines = count_lines(l->log_fd);
        print_message("timerd logged %u lines\n", lines);
        assert_true(lines < 100);

        /* Descriptors come back: every connection is answered in turn. */
        for (int i = 0; i < N / 2; i++)
                close(fds[i]);
        for (int i = N / 2; i < N; i++) {
                wire_send(fds[i], STATUS_CALL);
                json_object_put(wire_recv(fds[i]));
                close(fds[i]);
        }
        close(control);
        l->running = false;
        harness_stop(h);
}

/* A process connects, parks a Wait on each connection and exits, all before timerd accepts: the
 * connections of a process that is gone are retired, descriptors and Waits alike. */
static void test_client_gone_before_accept(void **state)
{
        enum { N = 20 };
        struct harness *h = *state;
        int control = harness_raw_connect(h);
        long fds = settled_fds(h, control);

        assert_int_equal(kill(h->pid, SIGSTOP), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                for (int i = 0; i < N; i++) {
                        int fd = harness_raw_connect(h);
                        wire_send(fd, "{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":{}}");
                }
                _exit(0);
        }
        assert_int_equal(waitpid(pid, NULL, 0), pid);
        assert_int_equal(kill(h->pid, SIGCONT), 0);

        wire_expect_status(control, "connections", 1);
        wire_expect_status(control, "waiters", 0);
        expect_fds_soon(h, fds);
        close(control);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_closed_timers_gone_at_once_freed_in_steps,
                                            harness_setup, harness_teardown),
            cmocka_unit_test_setup_teardown(test_client_leaves_mid_reply, harness_setup,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_full_socket_buffer_then_reads, harness_setup,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_accept_without_descriptors, setup_low_fds,
                                            teardown_low_fds),
            cmocka_unit_test_setup_teardown(test_client_gone_before_accept, harness_setup,
                                            harness_teardown),
        };
        return cmocka_run_group_tests_name(harness_backend(), tests, NULL, NULL);
}
