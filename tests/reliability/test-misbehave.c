/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Clients that misbehave, against the real timerd: each misbehaviour runs while a well-behaved
 * client (the probe) measures its round trips, which must all succeed and stay under a second;
 * afterwards the service holds nothing of the misbehaving clients and does not burn CPU.
 */

#include <errno.h>
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
#include "idle.h"
#include "probe.h"
#include "proc-stats.h"
#include "wire.h"

#define SLOW_ROUND_TRIP_USEC 1000000

static void expect_probe_fine(const struct probe *p, const char *what)
{
        print_message("%s: %" PRIu64 " round trips, slowest %" PRIu64 " us (%" PRIu64
                      " us less the CPU waits), %" PRIu64 " failed\n",
                      what, (uint64_t)atomic_load(&p->calls), p->max_wall_usec, p->max_usec,
                      p->failures);
        if (p->failures > 0)
                fail_msg("%s: a round trip failed: %s", what, timerd_strerror(p->first_error));
        assert_true(p->max_usec < SLOW_ROUND_TRIP_USEC);
}

/* Many connections send half a message and then nothing, for good. */
static void test_half_written_messages_then_silence(void **state)
{
        enum { N = 200 };
        struct harness *h = *state;
        int control = harness_raw_connect(h);
        int fds[N];
        struct probe probe;

        probe_start(&probe, h->socket, h->pid);
        for (int i = 0; i < N; i++) {
                fds[i] = harness_raw_connect(h);
                raw_send(fds[i], "{\"method\":\"io.timerd.Timer.Reg", 30);
        }
        usleep(500000);
        probe_stop(&probe);
        expect_probe_fine(&probe, "half-written messages");
        wire_expect_status(control, "connections", N + 1);

        for (int i = 0; i < N; i++)
                close(fds[i]);
        wire_expect_status(control, "connections", 1);
        expect_idle(h, control);
        close(control);
}

/* Connect and close as fast as possible, from two processes, for two seconds. */
static void test_connect_and_close_storm(void **state)
{
        struct harness *h = *state;
        int control = harness_raw_connect(h);
        /* Accepted once it answered; a connection dropped in an iteration is freed at its end,
         * which the second answer proves passed. */
        assert_int_equal(wire_status(control, "connections"), 1);
        assert_int_equal(wire_status(control, "connections"), 1);
        long fds_before = proc_fd_count(h->pid);
        pid_t stormers[2];
        struct probe probe;

        probe_start(&probe, h->socket, h->pid);
        for (int i = 0; i < 2; i++) {
                stormers[i] = fork();
                assert_true(stormers[i] >= 0);
                if (stormers[i] == 0) {
                        unsigned long long end = harness_now_usec() + 2000000;
                        while (harness_now_usec() < end) {
                                int fd = harness_raw_connect(h);
                                /* Half of them say something first. */
                                if (fd % 2)
                                        (void)!send(fd, STATUS_CALL, sizeof(STATUS_CALL),
                                                    MSG_NOSIGNAL);
                                close(fd);
                        }
                        _exit(0);
                }
        }
        for (int i = 0; i < 2; i++) {
                int status;
                assert_int_equal(waitpid(stormers[i], &status, 0), stormers[i]);
                assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        }
        probe_stop(&probe);
        expect_probe_fine(&probe, "connect-and-close storm");
        /* The stormers' last connections may still wait to be accepted, and the socket count can
         * fall back between two batches of them. A connection made now is accepted after them
         * all (the listen queue is first in, first out): once it is answered and gone, so are
         * they. */
        int last = harness_raw_connect(h);
        assert_true(wire_status(last, "connections") >= 2);
        close(last);
        wire_expect_status(control, "connections", 1);
        /* Every connection's socket and pidfd were closed (a dropped connection's pidfd is
         * closed at the end of its iteration). */
        long fds = -1;
        for (int i = 0; i < 200 && (fds = proc_fd_count(h->pid)) != fds_before; i++)
                usleep(10000);
        assert_int_equal(fds, fds_before);
        expect_idle(h, control);
        close(control);
}

/* A process parks a Wait on each of hundreds of connections, then is killed. */
static void test_client_that_parks_many_waits_then_dies(void **state)
{
        /* Two descriptors a connection in timerd (socket, pidfd): stay under a 1024 limit. */
        enum { N = 400 };
        struct harness *h = *state;
        int control = harness_raw_connect(h);
        int ready[2];
        struct probe probe;

        assert_int_equal(pipe(ready), 0);
        probe_start(&probe, h->socket, h->pid);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                static int fds[N];
                for (int i = 0; i < N; i++) {
                        fds[i] = harness_raw_connect(h);
                        wire_send(fds[i],
                                  "{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":{}}");
                }
                (void)!write(ready[1], "r", 1);
                pause();
                _exit(0);
        }
        char c;
        assert_int_equal(read(ready[0], &c, 1), 1);
        wire_expect_status(control, "waiters", N);
        assert_int_equal(kill(pid, SIGKILL), 0);
        assert_int_equal(waitpid(pid, NULL, 0), pid);
        wire_expect_status(control, "waiters", 0);
        wire_expect_status(control, "connections", 2);
        probe_stop(&probe);
        expect_probe_fine(&probe, "parked waits of a killed client");
        expect_idle(h, control);
        close(ready[0]);
        close(ready[1]);
        close(control);
}

/* A client floods Kick on its watchdog: pipelined, 50000 calls, reading as it goes. */
static void test_kick_flood(void **state)
{
        enum { N = 50000, BATCH = 500 };
        struct harness *h = *state;
        int fd = harness_raw_connect(h);
        struct probe probe;

        json_object *r = wire_call(fd, "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":"
                                       "{\"name\":\"deadman\",\"declaration\":{\"policy\":"
                                       "\"watchdog\",\"cadence_usec\":60000000}}}");
        int64_t generation = wire_int(r, "claim.generation");
        json_object_put(r);

        char kick[160];
        int len = snprintf(kick, sizeof(kick),
                           "{\"method\":\"io.timerd.Timer.Kick\",\"parameters\":{\"claim\":{"
                           "\"name\":\"deadman\",\"generation\":%" PRId64 "}}}",
                           generation);
        char batch[BATCH * sizeof(kick)];
        size_t batch_len = 0;
        for (int i = 0; i < BATCH; i++) {
                memcpy(batch + batch_len, kick, (size_t)len + 1);
                batch_len += (size_t)len + 1;
        }

        probe_start(&probe, h->socket, h->pid);
        unsigned long long start = harness_now_usec();
        unsigned answered = 0;
        char buf[65536];
        for (int sent = 0; sent < N; sent += BATCH) {
                raw_send(fd, batch, batch_len);
                /* Keep at most two batches in flight: read what came back. */
                while (answered + 2 * BATCH < (unsigned)sent + BATCH) {
                        ssize_t n = recv(fd, buf, sizeof(buf), 0);
                        assert_true(n > 0);
                        for (ssize_t i = 0; i < n; i++)
                                answered += buf[i] == '\0';
                        assert_null(memmem(buf, (size_t)n, "\"error\"", 7));
                }
        }
        while (answered < N) {
                ssize_t n = recv(fd, buf, sizeof(buf), 0);
                assert_true(n > 0);
                for (ssize_t i = 0; i < n; i++)
                        answered += buf[i] == '\0';
        }
        unsigned long long took = harness_now_usec() - start;
        probe_stop(&probe);
        print_message("%d Kicks in %llu ms\n", N, took / 1000);
        expect_probe_fine(&probe, "Kick flood");

        /* The watchdog is intact: armed a minute out. */
        r = wire_call(fd, "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":"
                          "\"deadman\"}}");
        assert_string_equal(wire_string(r, "timer.state"), "scheduled");
        assert_true(wire_int(r, "timer.remaining_usec") > 50000000);
        json_object_put(r);
        close(fd);
}

/*
 * A client pipelines expensive calls (List pages of 1000 timers, ~15 ms of the loop's time each)
 * and reads the answers: the others are served between them, not after all of them.
 */
static void test_pipelined_expensive_calls(void **state)
{
        enum { N_TIMERS = 1000, N_LISTS = 64 };
        struct harness *h = *state;
        int fd = harness_raw_connect(h);
        struct probe probe;

        wire_bulk_register(fd, "listed", N_TIMERS, "{\"policy\":\"once\"}", WIRE_OWNER_SELF, 0);
        probe_start(&probe, h->socket, h->pid);
        for (int i = 0; i < N_LISTS; i++)
                wire_send(fd, "{\"method\":\"io.timerd.Timer.List\"}");
        /* Two round trips more, the second begun after the Lists were all sent: a call that
         * came while they were pending, answered, before this client reads any of them. */
        probe_wait(&probe, atomic_load(&probe.calls) + 2);
        wire_skip_replies(fd, N_LISTS);
        probe_stop(&probe);
        expect_probe_fine(&probe, "pipelined Lists");
        close(fd);
}

/*
 * A client pipelines a buffer full of calls behind a Wait that stays parked, then closes its
 * socket (and lives on): nobody is left to answer, so the connection and its Wait must be retired
 * and the service must not spin on the hang-up it cannot read past.
 */
static void test_hang_up_behind_a_parked_wait(void **state)
{
        enum { N_CALLS = 4000 }; /* 4000 Status calls: more than one 64 KiB message buffer */
        struct harness *h = *state;
        int control = harness_raw_connect(h);
        int fd = harness_raw_connect(h);

        wire_send(fd, "{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":{}}");
        wire_expect_status(control, "waiters", 1);
        char *calls = malloc(N_CALLS * sizeof(STATUS_CALL));
        assert_non_null(calls);
        for (int i = 0; i < N_CALLS; i++)
                memcpy(calls + i * sizeof(STATUS_CALL), STATUS_CALL, sizeof(STATUS_CALL));
        raw_send(fd, calls, N_CALLS * sizeof(STATUS_CALL));
        free(calls);
        usleep(200000);
        close(fd);

        wire_expect_status(control, "waiters", 0);
        wire_expect_status(control, "connections", 1);
        expect_idle(h, control);
        close(control);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_half_written_messages_then_silence, harness_setup,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_connect_and_close_storm, harness_setup,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_client_that_parks_many_waits_then_dies,
                                            harness_setup, harness_teardown),
            cmocka_unit_test_setup_teardown(test_kick_flood, harness_setup, harness_teardown),
            cmocka_unit_test_setup_teardown(test_pipelined_expensive_calls, harness_setup,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_hang_up_behind_a_parked_wait, harness_setup,
                                            harness_teardown),
        };
        return cmocka_run_group_tests_name(harness_backend(), tests, NULL, NULL);
}
