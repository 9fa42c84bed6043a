/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Two unprivileged users against the real timerd. User A declares timers of every delivery and
 * keeps them busy; user B tries everything a client can to see, control, complete, wait on,
 * observe or be signalled by them, guessing names, generations, runs and continuations. B must
 * never succeed, and never learn whether a name of A exists: a guess at A's timer gets the same
 * answer as a guess at a name nobody has. Then A finds all of its timers intact.
 *
 * Each user is a child process that switches uid before it connects (the service reads
 * SO_PEERCRED); a child reports the first expectation that failed as its exit status, with a
 * message on stderr.
 */

#include <json-c/json.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "users.h"

#define MS 1000ull

/* A names its signal timer's signal, B its own: each must get only its own. */
#define SIGNAL_OF_A SIGUSR1
#define SIGNAL_OF_B SIGUSR2

struct scenario {
        const struct harness *harness;
        int to_a[2];   /* parent → A: "check now" */
        int from_a[2]; /* A → parent: "declared" */
};

/* Signals each user process got: a signal handler can only count into a global. */
static volatile sig_atomic_t signals_of_a, signals_of_b;

static void count_signal(int signo)
{
        if (signo == SIGNAL_OF_A)
                signals_of_a++;
        else
                signals_of_b++;
}

static void count_signals(void)
{
        struct sigaction sa = {.sa_handler = count_signal, .sa_flags = SA_RESTART};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGNAL_OF_A, &sa, NULL);
        sigaction(SIGNAL_OF_B, &sa, NULL);
}

/* Failed expectations in a child: say which, and exit with its number. */
#define EXPECT(step, cond)                                                                         \
        do {                                                                                       \
                if (!(cond)) {                                                                     \
                        fprintf(stderr, "isolation step %d failed: %s\n", step, #cond);            \
                        return step;                                                               \
                }                                                                                  \
        } while (0)

/* A raw call: its typed result, and the reply's parameters as text in *ret (may be NULL). */
static int call(struct timerd *t, const char *method, const char *params, char **ret)
{
        char *reply = NULL;
        int r = timerd_call_raw(t, method, params, &reply);
        if (ret)
                *ret = reply;
        else
                free(reply);
        return r;
}

static int callf(struct timerd *t, const char *method, char **ret, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int callf(struct timerd *t, const char *method, char **ret, const char *fmt, ...)
{
        char params[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(params, sizeof(params), fmt, ap);
        va_end(ap);
        return call(t, method, params, ret);
}

static int declare(struct timerd *t, const char *name, const char *declaration)
{
        return callf(t, "io.timerd.Timer.Register", NULL,
                     "{\"name\":\"%s\",\"delay_usec\":0,\"declaration\":%s}", name, declaration);
}

/* A's timers: each keeps firing while B probes. */
static int user_a_declares(struct timerd *t)
{
        EXPECT(1, declare(t, "a-notify", "{\"policy\":\"interval\",\"cadence_usec\":20000}") == 0);
        EXPECT(2,
               declare(t, "a-alarm",
                       "{\"policy\":\"interval\",\"cadence_usec\":20000,\"delivery\":\"alarm\"}") ==
                   0);
        EXPECT(3,
               callf(t, "io.timerd.Timer.Register", NULL,
                     "{\"name\":\"a-signal\",\"delay_usec\":0,\"declaration\":{\"policy\":"
                     "\"interval\",\"cadence_usec\":50000,\"delivery\":\"signal\",\"signal\":%d}}",
                     SIGNAL_OF_A) == 0);
        EXPECT(4, declare(t, "shared", "{\"policy\":\"watchdog\",\"cadence_usec\":60000000}") == 0);
        return 0;
}

/* After B's attempts: every timer of A is there and works, and only A's signal came. */
static int user_a_checks(struct timerd *t)
{
        const char *const names[] = {"a-notify", "a-alarm", "a-signal", "shared"};
        struct timerd_timer info;
        struct timerd_firing f;
        struct timerd_sleep_result slept;
        struct timerd_finish_result finished;

        for (size_t i = 0; i < 4; i++) {
                EXPECT(20, timerd_get(t, names[i], TIMERD_OWNER_SELF, &info) == 0);
                EXPECT(21, info.generation == 1 + i);
                EXPECT(22,
                       info.state == TIMERD_STATE_SCHEDULED || info.state == TIMERD_STATE_RUNNING);
        }
        /* B's watchdog of the same name did not touch A's: still a minute out. */
        EXPECT(23, timerd_get(t, "shared", TIMERD_OWNER_SELF, &info) == 0);
        EXPECT(24, info.remaining_usec > 50000000);
        /* Its pending firing is still there for A. */
        const char *notify[] = {"a-notify"};
        EXPECT(25, timerd_wait(t, notify, 1, 1000 * MS, &f) == 0);
        EXPECT(26,
               timerd_complete(t, &f.token, TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_STOP, 0) == 0);
        /* Its alarm still interrupts A's sleeps. */
        EXPECT(27, timerd_sleep(t, TIMERD_CLOCK_MONOTONIC, NULL, &slept) == 0);
        EXPECT(28, !slept.elapsed && strcmp(slept.observation.timer, "a-alarm") == 0);
        EXPECT(29, timerd_finish(t, &slept.observation, TIMERD_FINISH_TERMINATE, &finished) == 0);
        EXPECT(30, signals_of_a > 0);
        EXPECT(31, signals_of_b == 0);
        return 0;
}

static int user_a(void *userdata)
{
        struct scenario *sc = userdata;
        struct timerd *t;
        char c;

        count_signals();
        EXPECT(10, timerd_connect(sc->harness->socket, &t) == 0);
        int r = user_a_declares(t);
        if (r != 0)
                return r;
        EXPECT(11, write(sc->from_a[1], "d", 1) == 1);
        EXPECT(12, read(sc->to_a[0], &c, 1) == 1);
        r = user_a_checks(t);
        timerd_close(t);
        return r;
}

/* B's answer for A's name and for a name nobody has must be the same, name aside. */
static bool same_answer(struct timerd *t, const char *method, const char *params_of_a,
                        const char *params_of_nobody, int expected)
{
        char *a = NULL, *nobody = NULL;
        int ra = call(t, method, params_of_a, &a);
        int rn = call(t, method, params_of_nobody, &nobody);
        bool same = ra == expected && rn == expected && a && nobody;
        if (same) {
                /* Only the name differs: "a-notify" vs "z-notify", same length. */
                same = strlen(a) == strlen(nobody);
                for (size_t i = 0; same && a[i]; i++)
                        same = a[i] == nobody[i] || (a[i] == 'a' && nobody[i] == 'z');
        }
        if (!same)
                fprintf(stderr, "%s: %d %s vs %d %s (expected %d)\n", method, ra, a ? a : "-", rn,
                        nobody ? nobody : "-", expected);
        free(a);
        free(nobody);
        return same;
}

/* Every control call on a guessed claim or token of A: NotFound, exactly like a name nobody has. */
static int user_b_guesses_handles(struct timerd *t)
{
        static const char *const controls[] = {"io.timerd.Timer.Cancel", "io.timerd.Timer.Kick",
                                               "io.timerd.Timer.Unregister",
                                               "io.timerd.Timer.Reschedule"};
        char a[256], nobody[256];

        for (unsigned g = 1; g <= 8; g++) {
                for (size_t i = 0; i < 4; i++) {
                        snprintf(a, sizeof(a),
                                 "{\"claim\":{\"name\":\"a-notify\",\"generation\":%u}}", g);
                        snprintf(nobody, sizeof(nobody),
                                 "{\"claim\":{\"name\":\"z-notify\",\"generation\":%u}}", g);
                        EXPECT(40, same_answer(t, controls[i], a, nobody, -TIMERD_E_NOT_FOUND));
                }
                snprintf(a, sizeof(a),
                         "{\"claim\":{\"name\":\"a-notify\",\"generation\":%u},\"delay_usec\":1}",
                         g);
                snprintf(nobody, sizeof(nobody),
                         "{\"claim\":{\"name\":\"z-notify\",\"generation\":%u},\"delay_usec\":1}",
                         g);
                EXPECT(41,
                       same_answer(t, "io.timerd.Timer.Schedule", a, nobody, -TIMERD_E_NOT_FOUND));
                for (unsigned run = 1; run <= 4; run++) {
                        snprintf(a, sizeof(a),
                                 "{\"token\":{\"name\":\"a-notify\",\"generation\":%u,\"run\":%u},"
                                 "\"outcome\":\"success\"}",
                                 g, run);
                        snprintf(nobody, sizeof(nobody),
                                 "{\"token\":{\"name\":\"z-notify\",\"generation\":%u,\"run\":%u},"
                                 "\"outcome\":\"success\"}",
                                 g, run);
                        EXPECT(42, same_answer(t, "io.timerd.Timer.Complete", a, nobody,
                                               -TIMERD_E_NOT_FOUND));
                        snprintf(a, sizeof(a),
                                 "{\"token\":{\"name\":\"a-notify\",\"generation\":%u,\"run\":%u}}",
                                 g, run);
                        snprintf(nobody, sizeof(nobody),
                                 "{\"token\":{\"name\":\"z-notify\",\"generation\":%u,\"run\":%u}}",
                                 g, run);
                        EXPECT(43, same_answer(t, "io.timerd.Timer.Cancel", a, nobody,
                                               -TIMERD_E_NOT_FOUND));
                }
        }
        return 0;
}

/* Naming A as the owner is refused whether or not the name exists; so is everyone's inventory. */
static int user_b_names_a(struct timerd *t)
{
        char a[256], nobody[256];
        struct timerd_timer *all;

        snprintf(a, sizeof(a), "{\"name\":\"a-notify\",\"owner\":%u}", USER_A);
        snprintf(nobody, sizeof(nobody), "{\"name\":\"z-notify\",\"owner\":%u}", USER_A);
        EXPECT(50, same_answer(t, "io.timerd.Timer.Get", a, nobody, -TIMERD_E_PERMISSION_DENIED));
        snprintf(a, sizeof(a), "{\"claim\":{\"name\":\"a-notify\",\"generation\":1},\"owner\":%u}",
                 USER_A);
        snprintf(nobody, sizeof(nobody),
                 "{\"claim\":{\"name\":\"z-notify\",\"generation\":1},\"owner\":%u}", USER_A);
        EXPECT(51,
               same_answer(t, "io.timerd.Timer.Cancel", a, nobody, -TIMERD_E_PERMISSION_DENIED));
        EXPECT(52,
               callf(t, "io.timerd.Timer.Register", NULL,
                     "{\"name\":\"planted\",\"owner\":%u,\"declaration\":{\"policy\":\"once\"}}",
                     USER_A) == -TIMERD_E_PERMISSION_DENIED);
        EXPECT(53, callf(t, "io.timerd.Timer.List", NULL, "{\"owner\":%u}", USER_A) ==
                       -TIMERD_E_PERMISSION_DENIED);
        EXPECT(54, timerd_list(t, TIMERD_OWNER_SELF, true, &all) == -TIMERD_E_PERMISSION_DENIED);
        EXPECT(55, callf(t, "io.timerd.Timer.Wait", NULL, "{\"owner\":%u,\"timeout_usec\":1000}",
                         USER_A) == -TIMERD_E_PERMISSION_DENIED);
        EXPECT(56, callf(t, "io.timerd.Timer.Sleep", NULL, "{\"owner\":%u,\"for_usec\":1000}",
                         USER_A) == -TIMERD_E_PERMISSION_DENIED);
        return 0;
}

/* Events: B's stream carries B's own and nothing of A's (whose timers fire every 20 ms); the
 * stream of everyone's is refused. */
static int user_b_subscribes(struct timerd *t, const char *socket)
{
        struct timerd *all, *own;
        struct timerd_event e;

        EXPECT(90, timerd_connect(socket, &all) == 0);
        EXPECT(91, timerd_subscribe(all, true) == 0);
        EXPECT(92, timerd_subscribe_next(all, &e) == -TIMERD_E_PERMISSION_DENIED);
        timerd_close(all);

        EXPECT(93, timerd_connect(socket, &own) == 0);
        EXPECT(94, timerd_subscribe(own, false) == 0);
        usleep(100000);
        EXPECT(95, declare(t, "b-event", "{\"policy\":\"once\"}") == 0);
        do {
                EXPECT(96, timerd_subscribe_next(own, &e) == 0);
                EXPECT(97, e.owner == USER_B);
        } while (strcmp(e.name, "b-event") != 0);
        timerd_close(own);
        return 0;
}

/* B's own view: only its own timers; waits and sleeps see none of A's firings. */
static int user_b_waits(struct timerd *t)
{
        const char *a_names[] = {"a-notify", "a-alarm", "a-signal"};
        struct timerd_firing f;
        struct timerd_sleep_result slept;
        struct timerd_timer *mine;

        EXPECT(60, call(t, "io.timerd.Timer.Register",
                        "{\"name\":\"shared\",\"declaration\":{\"policy\":\"watchdog\","
                        "\"cadence_usec\":60000000}}",
                        NULL) == 0);
        long n = timerd_list(t, TIMERD_OWNER_SELF, false, &mine);
        EXPECT(61, n == 1 && strcmp(mine[0].name, "shared") == 0 && mine[0].owner == USER_B);
        /* Kicking its own "shared" leaves A's alone (A checks). */
        struct timerd_claim claim = {.name = "shared", .generation = mine[0].generation};
        free(mine);
        EXPECT(63, timerd_kick(t, &claim, NULL, NULL) == 0);

        /* A's names are names B has no timer of: NotFound, as for a name nobody has. */
        const char *nobody_names[] = {"z-notify"};
        EXPECT(64, timerd_wait(t, a_names, 3, 200 * MS, &f) == -TIMERD_E_NOT_FOUND);
        EXPECT(64, timerd_wait(t, nobody_names, 1, 200 * MS, &f) == -TIMERD_E_NOT_FOUND);
        EXPECT(65, timerd_wait(t, NULL, 0, 200 * MS, &f) == -TIMERD_E_TIMEOUT);
        struct timerd_start until = {.kind = TIMERD_START_AFTER, .usec = 200 * MS};
        EXPECT(66, timerd_sleep(t, TIMERD_CLOCK_MONOTONIC, &until, &slept) == 0);
        EXPECT(67, slept.elapsed);
        return 0;
}

/* Continuations: B learns the epoch from an observation of its own, then tries every nearby
 * continuation, lease and ticket; none is A's to take. */
static int user_b_guesses_continuations(struct timerd *t)
{
        struct timerd_sleep_result slept;
        struct timerd_finish_result finished;

        EXPECT(70, declare(t, "b-alarm",
                           "{\"policy\":\"interval\",\"cadence_usec\":1000000,\"delivery\":"
                           "\"alarm\"}") == 0);
        EXPECT(71, timerd_sleep(t, TIMERD_CLOCK_MONOTONIC, NULL, &slept) == 0 && !slept.elapsed);
        const struct timerd_continuation *own = &slept.observation.continuation;
        for (uint64_t nonce = 1; nonce <= 16; nonce++)
                for (uint64_t cycle = 1; cycle <= 3; cycle++)
                        for (uint64_t lease = 1; lease <= 3; lease++) {
                                if (nonce == own->nonce)
                                        continue;
                                int r =
                                    callf(t, "io.timerd.Timer.Finish", NULL,
                                          "{\"continuation\":{\"epoch\":%llu,\"nonce\":%llu,"
                                          "\"cycle\":%llu},\"lease\":%llu,\"action\":"
                                          "\"terminate\"}",
                                          (unsigned long long)own->epoch, (unsigned long long)nonce,
                                          (unsigned long long)cycle, (unsigned long long)lease);
                                EXPECT(72, r == -TIMERD_E_PROTOCOL_FAILURE);
                                r = callf(t, "io.timerd.Timer.Resume", NULL,
                                          "{\"ticket\":{\"continuation\":{\"epoch\":%llu,"
                                          "\"nonce\":%llu,\"cycle\":%llu},\"nonce\":%llu}}",
                                          (unsigned long long)own->epoch, (unsigned long long)nonce,
                                          (unsigned long long)cycle, (unsigned long long)lease);
                                EXPECT(73, r == -TIMERD_E_PROTOCOL_FAILURE);
                        }
        /* Its own observation is still its own to finish. */
        EXPECT(74, timerd_finish(t, &slept.observation, TIMERD_FINISH_TERMINATE, &finished) == 0);
        return 0;
}

/* B's signal timer signals B only. */
static int user_b_signals(struct timerd *t)
{
        EXPECT(80,
               callf(t, "io.timerd.Timer.Register", NULL,
                     "{\"name\":\"b-signal\",\"delay_usec\":0,\"declaration\":{\"policy\":"
                     "\"interval\",\"cadence_usec\":50000,\"delivery\":\"signal\",\"signal\":%d}}",
                     SIGNAL_OF_B) == 0);
        for (int i = 0; i < 50 && signals_of_b == 0; i++)
                usleep(10000);
        EXPECT(81, signals_of_b > 0);
        EXPECT(82, signals_of_a == 0);
        return 0;
}

static int user_b(void *userdata)
{
        struct scenario *sc = userdata;
        int (*const steps[])(struct timerd * t) = {user_b_guesses_handles, user_b_names_a,
                                                   user_b_waits, user_b_guesses_continuations,
                                                   user_b_signals};
        struct timerd *t;

        count_signals();
        EXPECT(39, timerd_connect(sc->harness->socket, &t) == 0);
        for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
                int r = steps[i](t);
                if (r != 0) {
                        timerd_close(t);
                        return r;
                }
        }
        int r = user_b_subscribes(t, sc->harness->socket);
        if (r != 0) {
                timerd_close(t);
                return r;
        }
        /* No signal of A reached B, however long it stayed. */
        EXPECT(83, signals_of_a == 0);
        timerd_close(t);
        return 0;
}

static void test_users_cannot_reach_each_others_timers(void **state)
{
        struct harness *h = *state;
        struct scenario sc = {.harness = h};
        char c;

        /* The socket is 0666; its temporary directory must let others reach it. */
        assert_int_equal(chmod(h->dir, 0755), 0);
        assert_int_equal(pipe(sc.to_a), 0);
        assert_int_equal(pipe(sc.from_a), 0);

        pid_t a = run_as_async(USER_A, user_a, &sc);
        assert_true(a > 0);
        assert_int_equal(read(sc.from_a[0], &c, 1), 1);
        assert_int_equal(run_as(USER_B, user_b, &sc), 0);
        assert_int_equal(write(sc.to_a[1], "c", 1), 1);
        assert_int_equal(run_wait(a), 0);
        for (int i = 0; i < 2; i++) {
                close(sc.to_a[i]);
                close(sc.from_a[i]);
        }
}

/* Root's raw call on fd, answered without an error. */
static void root_call(int fd, const char *msg)
{
        char buf[8192];

        raw_send(fd, msg, strlen(msg) + 1);
        assert_true(raw_recv(fd, buf, sizeof(buf), 10000) > 0);
        assert_null(strstr(buf, "\"error\""));
}

struct lent_wait {
        const struct harness *harness;
        int parked[2]; /* A → parent: "about to wait" */
        int lender;    /* root's connection: A closes its inherited copy */
};

/* A waits on "lent", which root registered for it on root's connection. */
static int user_a_waits_on_lent(void *userdata)
{
        struct lent_wait *lw = userdata;
        const char *names[] = {"lent"};
        struct timerd_firing f;
        struct timerd *t;

        close(lw->lender);
        EXPECT(90, timerd_connect(lw->harness->socket, &t) == 0);
        EXPECT(91, write(lw->parked[1], "w", 1) == 1);
        unsigned long long start = harness_now_usec();
        EXPECT(92, timerd_wait(t, names, 1, 30000 * MS, &f) == -TIMERD_E_NOTHING_TO_WAIT_FOR);
        /* At once when root's connection closed, not at the timeout. */
        EXPECT(93, harness_now_usec() - start < 5000 * MS);
        timerd_close(t);
        return 0;
}

/* Root registers a transient timer for A; A parks a Wait on it; root's connection closes and takes
 * the timer along: A's Wait learns at once that nothing it waits for can fire (NothingToWaitFor),
 * though the connection that closed was root's, not A's. */
static void test_closing_connection_ends_waits_of_other_owners(void **state)
{
        struct harness *h = *state;
        struct lent_wait lw = {.harness = h};
        char buf[8192], c;

        assert_int_equal(chmod(h->dir, 0755), 0);
        assert_int_equal(pipe(lw.parked), 0);
        int lender = harness_raw_connect(h), watch = harness_raw_connect(h);
        root_call(lender, "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":"
                          "\"lent\",\"owner\":64001,\"declaration\":{\"policy\":\"interval\","
                          "\"cadence_usec\":60000000,\"lifetime\":\"transient\"}}}");

        lw.lender = lender;
        pid_t a = run_as_async(USER_A, user_a_waits_on_lent, &lw);
        assert_true(a > 0);
        assert_int_equal(read(lw.parked[0], &c, 1), 1);
        /* Until A's Wait is parked (root's Status counts every owner's). */
        bool parked = false;
        for (int i = 0; i < 500 && !parked; i++) {
                static const char status[] = "{\"method\":\"io.timerd.Service.Status\"}";
                raw_send(watch, status, sizeof(status));
                assert_true(raw_recv(watch, buf, sizeof(buf), 10000) > 0);
                parked = strstr(buf, "\"waiters\":1") != NULL;
                if (!parked)
                        usleep(10000);
        }
        assert_true(parked);
        close(lender);
        assert_int_equal(run_wait(a), 0);
        close(watch);
        close(lw.parked[0]);
        close(lw.parked[1]);
}

int main(void)
{
        if (!users_available()) {
                fprintf(stderr, "skipped: switching to two unprivileged uids needs root\n");
                return 77;
        }
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_users_cannot_reach_each_others_timers,
                                            harness_setup, harness_teardown),
            cmocka_unit_test_setup_teardown(test_closing_connection_ends_waits_of_other_owners,
                                            harness_setup, harness_teardown),
        };
        return cmocka_run_group_tests_name(harness_backend(), tests, NULL, NULL);
}
