/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Many clients at once against the real timerd: waiters, clients that die, a full intent queue. */

#include <json-c/json.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#define MS         1000ull
#define FIRE_BOUND (5000 * MS)
#define N_WAITERS  5

static int setup_two_intents(void **state)
{
        static const char *const args[] = {"--max-intents=2", NULL};
        return harness_setup_with(state, args);
}

static uint64_t waiters(struct timerd *t)
{
        struct timerd_status st;
        assert_int_equal(timerd_status(t, &st), 0);
        return st.waiters;
}

static void wait_for_waiters(struct timerd *t, uint64_t n)
{
        for (int i = 0; i < 500 && waiters(t) != n; i++)
                usleep(10000);
        assert_int_equal(waiters(t), n);
}

/* Each waiter parks in its own child, in order; each firing goes to exactly one, oldest first. */
static void test_each_firing_goes_to_the_oldest_waiter(void **state)
{
        struct harness *h = *state;
        struct timerd *control = harness_connect(h);
        int pipes[N_WAITERS][2];
        pid_t pids[N_WAITERS];

        /* Declared first, far out: a Wait names a timer that exists. Scheduled once all wait. */
        struct timerd_declaration d;
        struct timerd_claim claim;
        const struct timerd_start later = {.kind = TIMERD_START_AFTER, .usec = 3600000000ull};
        const struct timerd_start soon = {.kind = TIMERD_START_AFTER, .usec = 30 * MS};
        timerd_declaration_init(&d, TIMERD_POLICY_INTERVAL, 30 * MS);
        assert_int_equal(timerd_register(control, "shared", &d, &later, false, &claim), 0);

        for (int i = 0; i < N_WAITERS; i++) {
                /* [0] is the parent's end, [1] the child's: each way has its own direction. */
                assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, pipes[i]), 0);
                pids[i] = fork();
                assert_true(pids[i] >= 0);
                if (pids[i] == 0) {
                        struct timerd *t;
                        struct timerd_firing f;
                        const char *names[] = {"shared"};
                        if (timerd_connect(h->socket, &t) < 0 ||
                            timerd_wait(t, names, 1, FIRE_BOUND, &f) < 0)
                                _exit(1);
                        uint64_t run = f.token.run;
                        if (write(pipes[i][1], &run, sizeof(run)) != sizeof(run))
                                _exit(2);
                        /* Stay connected until told to go: the run stays delivered to us. */
                        char c;
                        if (read(pipes[i][1], &c, 1) < 0)
                                _exit(3);
                        _exit(0);
                }
                wait_for_waiters(control, (uint64_t)i + 1);
        }

        assert_int_equal(timerd_schedule(control, &claim, NULL, &soon), 0);

        for (int i = 0; i < N_WAITERS; i++) {
                uint64_t run;
                assert_int_equal(read(pipes[i][0], &run, sizeof(run)), (ssize_t)sizeof(run));
                assert_int_equal(run, (uint64_t)i + 1);
                /* Complete it so the next period starts a new run. */
                struct timerd_token token = {.generation = claim.generation, .run = run};
                snprintf(token.name, sizeof(token.name), "shared");
                assert_int_equal(timerd_complete(control, &token, TIMERD_OUTCOME_SUCCESS,
                                                 TIMERD_DIRECTIVE_CONTINUE, 0),
                                 0);
        }
        for (int i = 0; i < N_WAITERS; i++) {
                int status;
                assert_int_equal(write(pipes[i][0], "x", 1), 1);
                assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
                assert_true(WIFEXITED(status));
                assert_int_equal(WEXITSTATUS(status), 0);
                close(pipes[i][0]);
                close(pipes[i][1]);
        }
        assert_int_equal(timerd_unregister(control, &claim), 0);
        timerd_close(control);
}

/* A client killed mid-wait: its wait and transient timer are retired, nobody else notices. */
static void test_killed_client_is_retired(void **state)
{
        struct harness *h = *state;
        struct timerd *other = harness_connect(h);
        struct timerd_timer info;
        int ready[2];

        assert_int_equal(pipe(ready), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct timerd *t;
                struct timerd_declaration d;
                struct timerd_claim claim;
                struct timerd_firing f;
                const char *names[] = {"doomed"};
                timerd_declaration_init(&d, TIMERD_POLICY_WATCHDOG, 3600000000ull);
                if (timerd_connect(h->socket, &t) < 0 ||
                    timerd_register(t, "doomed", &d, NULL, false, &claim) < 0)
                        _exit(1);
                if (write(ready[1], "r", 1) != 1)
                        _exit(2);
                timerd_wait(t, names, 1, 0, &f);
                _exit(3);
        }
        char c;
        assert_int_equal(read(ready[0], &c, 1), 1);
        wait_for_waiters(other, 1);
        assert_int_equal(timerd_get(other, "doomed", TIMERD_OWNER_SELF, &info), 0);

        assert_int_equal(kill(pid, SIGKILL), 0);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        wait_for_waiters(other, 0);
        int r = 0;
        for (int i = 0; i < 500; i++) {
                r = timerd_get(other, "doomed", TIMERD_OWNER_SELF, &info);
                if (r == -TIMERD_E_NOT_FOUND)
                        break;
                usleep(10000);
        }
        assert_int_equal(r, -TIMERD_E_NOT_FOUND);

        struct timerd_status st;
        assert_int_equal(timerd_status(other, &st), 0);
        assert_int_equal(st.connections, 1);
        close(ready[0]);
        close(ready[1]);
        timerd_close(other);
}

/* More requests in one iteration than intents allowed: the rest are answered Busy, all answered. */
static void test_full_intent_queue_answers_busy(void **state)
{
        struct harness *h = *state;
        enum { N = 8 };
        int fds[N];
        const char call[] = "{\"method\":\"io.timerd.Service.Status\"}";

        for (int i = 0; i < N; i++)
                fds[i] = harness_raw_connect(h);
        /* Let the service accept them all, then stop it so the calls arrive together. */
        struct timerd *t = harness_connect(h);
        struct timerd_status st;
        for (int i = 0; i < 500; i++) {
                assert_int_equal(timerd_status(t, &st), 0);
                if (st.connections == N + 1)
                        break;
                usleep(10000);
        }
        assert_int_equal(st.connections, N + 1);
        timerd_close(t);

        assert_int_equal(kill(h->pid, SIGSTOP), 0);
        for (int i = 0; i < N; i++)
                raw_send(fds[i], call, sizeof(call));
        assert_int_equal(kill(h->pid, SIGCONT), 0);

        int busy = 0, ok = 0;
        for (int i = 0; i < N; i++) {
                char buf[8192];
                assert_true(raw_recv(fds[i], buf, sizeof(buf), 5000) >= 0);
                if (strstr(buf, "io.timerd.Timer.Busy"))
                        busy++;
                else if (strstr(buf, "\"epoch\""))
                        ok++;
                close(fds[i]);
        }
        assert_int_equal(busy + ok, N);
        assert_true(ok >= 2);
        assert_true(busy >= 1);
}

/* SIGTERM with requests parked: each is answered ShuttingDown, and the service exits 0. */
static void test_shutdown_answers_every_parked_request(void **state)
{
        struct harness *h = *state;
        enum { N = 32 };
        int fds[N];
        struct timerd *t = harness_connect(h);

        for (int i = 0; i < N; i++) {
                fds[i] = harness_raw_connect(h);
                const char *call = i % 2 ? "{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":{}}"
                                         : "{\"method\":\"io.timerd.Timer.Sleep\",\"parameters\":"
                                           "{\"for_usec\":60000000}}";
                raw_send(fds[i], call, strlen(call) + 1);
        }
        wait_for_waiters(t, N);
        timerd_close(t);

        int status = harness_kill(h, SIGTERM);
        for (int i = 0; i < N; i++) {
                char buf[1024];
                assert_true(raw_recv(fds[i], buf, sizeof(buf), 5000) >= 0);
                assert_non_null(strstr(buf, "io.timerd.Timer.ShuttingDown"));
                close(fds[i]);
        }
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
}

/* The test stopped the service itself (harness_kill reaped it and removed its directory). */
static int teardown_stopped(void **state)
{
        free(*state);
        return 0;
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_each_firing_goes_to_the_oldest_waiter,
                                            harness_setup, harness_teardown),
            cmocka_unit_test_setup_teardown(test_killed_client_is_retired, harness_setup,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_full_intent_queue_answers_busy, setup_two_intents,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_shutdown_answers_every_parked_request,
                                            harness_setup, teardown_stopped),
        };
        return cmocka_run_group_tests_name(harness_backend(), tests, NULL, NULL);
}
