/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * timerd --clock virtual, driven with libtimerd's test helpers (timerd/timerd-test.h) on the
 * backend of the run: a month of an hourly job in a fraction of a second with every deadline
 * exact, also with a worker thread and one advance; suspend and clock-set simulations,
 * determinism, the loop serving others during an advance, and the real service refusing
 * io.timerd.Test.
 */

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "timerd/timerd-test.h"

#define SEC  1000000ull
#define MIN  (60 * SEC)
#define HOUR (60 * MIN)
#define DAY  (24 * HOUR)
/* A firing left pending by an advance is there at once: a Wait never needs long. */
#define WAIT_BOUND (5 * SEC)

static const char *const virtual_args[] = {"--clock", "virtual", NULL};

static int virtual_setup(void **state)
{
        return harness_setup_with(state, virtual_args);
}

static void reg(struct timerd *t, const char *name, enum timerd_policy policy,
                enum timerd_clock clock, uint64_t cadence, uint64_t after)
{
        struct timerd_declaration d;
        struct timerd_start start = {.kind = TIMERD_START_AFTER, .usec = after};
        struct timerd_claim claim;

        timerd_declaration_init(&d, policy, cadence);
        d.clock = clock;
        assert_int_equal(timerd_register(t, name, &d, after ? &start : NULL, false, &claim), 0);
}

static uint64_t next_of(struct timerd *t, const char *name)
{
        struct timerd_timer info;

        assert_int_equal(timerd_get(t, name, TIMERD_OWNER_SELF, &info), 0);
        assert_true(info.has_next);
        return info.next_usec;
}

/* The firing of `name` an advance left pending: its deadline exact, no lateness. */
static void take(struct timerd *t, const char *name, uint64_t deadline, uint64_t run)
{
        const char *names[] = {name};
        struct timerd_firing f;

        assert_int_equal(timerd_wait(t, names, 1, WAIT_BOUND, &f), 0);
        assert_int_equal(f.deadline_usec, deadline);
        assert_int_equal(f.fired_usec, deadline);
        assert_int_equal(f.token.run, run);
        assert_int_equal(
            timerd_complete(t, &f.token, TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0), 0);
}

/* An hourly after-completion job for 30 virtual days: 720 runs, each at its exact deadline. */
static void test_hourly_job_for_30_days(void **state)
{
        struct timerd *t = harness_connect(*state);
        struct timerd_test_clocks start, end;
        struct timerd_timer info;
        uint64_t firings;

        assert_int_equal(timerd_test_now(t, &start), 0);
        reg(t, "hourly", TIMERD_POLICY_AFTER_COMPLETION, TIMERD_CLOCK_MONOTONIC, HOUR, 0);
        unsigned long long began = harness_now_usec();
        for (uint64_t run = 1; run <= 720; run++) {
                assert_int_equal(timerd_test_advance(t, HOUR, &firings), 0);
                assert_int_equal(firings, 1);
                take(t, "hourly", start.monotonic + run * HOUR, run);
        }
        unsigned long long took = harness_now_usec() - began;
        print_message("720 hourly runs over 30 virtual days in %llu.%03llu s of real time (%s)\n",
                      took / SEC, took % SEC / 1000, harness_backend());

        assert_int_equal(timerd_test_now(t, &end), 0);
        assert_int_equal(end.monotonic - start.monotonic, 30 * DAY);
        assert_int_equal(end.boottime - start.boottime, 30 * DAY);
        assert_int_equal(end.realtime - start.realtime, 30 * DAY);
        assert_int_equal(timerd_get(t, "hourly", TIMERD_OWNER_SELF, &info), 0);
        assert_int_equal(info.runs, 720);
        assert_int_equal(info.next_usec, end.monotonic + HOUR);
        timerd_close(t);
}

/* A virtual clock ignores handovers: a run starts at its deadline, not before (Get still shows the
 * declared handover), so that test suites see exact times with libtimerd's default too. */
static void test_handover_ignored(void **state)
{
        struct timerd *t = harness_connect(*state);
        const struct timerd_start start = {.kind = TIMERD_START_AFTER, .usec = MIN};
        struct timerd_test_clocks now;
        struct timerd_declaration d;
        struct timerd_claim claim;
        struct timerd_timer info;
        uint64_t firings;

        assert_int_equal(timerd_test_now(t, &now), 0);
        timerd_declaration_init(&d, TIMERD_POLICY_ONCE, 0);
        d.handover_usec = TIMERD_HANDOVER_MAX_USEC;
        assert_int_equal(timerd_register(t, "early", &d, &start, false, &claim), 0);
        assert_int_equal(timerd_test_advance(t, MIN - 1, &firings), 0);
        assert_int_equal(firings, 0);
        assert_int_equal(timerd_test_advance(t, 1, &firings), 0);
        assert_int_equal(firings, 1);
        take(t, "early", now.monotonic + MIN, 1);
        assert_int_equal(timerd_get(t, "early", TIMERD_OWNER_SELF, &info), 0);
        assert_int_equal(info.declaration.handover_usec, TIMERD_HANDOVER_MAX_USEC);
        timerd_close(t);
}

/* One advance over many deadlines stops at each: an interval timer fires at every period, the
 * first left pending and the rest counted as overruns, as the real service does. */
static void test_advance_steps_through_deadlines(void **state)
{
        struct timerd *t = harness_connect(*state);
        struct timerd_test_clocks start;
        const char *names[] = {"tick"};
        struct timerd_firing f;
        uint64_t firings;

        assert_int_equal(timerd_test_now(t, &start), 0);
        reg(t, "tick", TIMERD_POLICY_INTERVAL, TIMERD_CLOCK_MONOTONIC, 10 * MIN, 0);
        reg(t, "once", TIMERD_POLICY_ONCE, TIMERD_CLOCK_BOOTTIME, 0, 25 * MIN);
        assert_int_equal(timerd_test_advance(t, HOUR, &firings), 0);
        assert_int_equal(firings, 2); /* tick's first period, once */
        assert_int_equal(timerd_wait(t, names, 1, WAIT_BOUND, &f), 0);
        assert_int_equal(f.deadline_usec, start.monotonic + 10 * MIN);
        assert_int_equal(f.fired_usec, f.deadline_usec);
        assert_int_equal(f.overruns, 5);
        assert_int_equal(next_of(t, "tick"), start.monotonic + HOUR + 10 * MIN);
        take(t, "once", start.boottime + 25 * MIN, 1);

        /* A time already passed is refused and moves nothing. */
        assert_int_equal(
            timerd_test_advance_to(t, TIMERD_CLOCK_MONOTONIC, start.monotonic, &firings),
            -TIMERD_E_INVALID_PARAMETER);
        assert_int_equal(
            timerd_test_advance_to(t, TIMERD_CLOCK_REALTIME, start.realtime + 2 * HOUR, &firings),
            0);
        struct timerd_test_clocks now;
        assert_int_equal(timerd_test_now(t, &now), 0);
        assert_int_equal(now.monotonic, start.monotonic + 2 * HOUR);
        assert_int_equal(timerd_test_advance(t, INT64_MAX, NULL), -TIMERD_E_OVERFLOW);
        assert_int_equal(timerd_test_now(t, &now), 0);
        assert_int_equal(now.monotonic, start.monotonic + 2 * HOUR);
        timerd_close(t);
}

/*
 * A suspend: monotonic stands still, boottime and the wall clock move. An alarm timer wakes the
 * machine at its deadline and fires on time; a boottime timer due meanwhile fires at that
 * wake-up, late; a monotonic one is not due yet.
 */
static void test_suspend(void **state)
{
        struct timerd *t = harness_connect(*state);
        struct timerd_test_clocks start, now;
        const char *names[] = {"boot"};
        struct timerd_firing f;
        uint64_t firings;

        assert_int_equal(timerd_test_now(t, &start), 0);
        reg(t, "mono", TIMERD_POLICY_ONCE, TIMERD_CLOCK_MONOTONIC, 0, HOUR);
        reg(t, "boot", TIMERD_POLICY_ONCE, TIMERD_CLOCK_BOOTTIME, 0, 30 * MIN);
        reg(t, "alarm", TIMERD_POLICY_ONCE, TIMERD_CLOCK_BOOTTIME_ALARM, 0, 2 * HOUR);
        assert_int_equal(timerd_test_suspend(t, 3 * HOUR, &firings), 0);
        assert_int_equal(firings, 2);
        assert_int_equal(timerd_test_now(t, &now), 0);
        assert_int_equal(now.monotonic, start.monotonic);
        assert_int_equal(now.boottime, start.boottime + 3 * HOUR);
        assert_int_equal(now.realtime, start.realtime + 3 * HOUR);
        take(t, "alarm", start.boottime + 2 * HOUR, 1);
        assert_int_equal(timerd_wait(t, names, 1, WAIT_BOUND, &f), 0);
        assert_int_equal(f.deadline_usec, start.boottime + 30 * MIN);
        assert_int_equal(f.fired_usec, start.boottime + 2 * HOUR);
        assert_int_equal(
            timerd_complete(t, &f.token, TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0), 0);
        assert_int_equal(next_of(t, "mono"), start.monotonic + HOUR);

        /* Without an alarm, what came due fires when the suspend ends. */
        reg(t, "boot2", TIMERD_POLICY_ONCE, TIMERD_CLOCK_BOOTTIME, 0, 10 * MIN);
        assert_int_equal(timerd_test_suspend(t, HOUR, &firings), 0);
        assert_int_equal(firings, 1);
        names[0] = "boot2";
        assert_int_equal(timerd_wait(t, names, 1, WAIT_BOUND, &f), 0);
        assert_int_equal(f.fired_usec, start.boottime + 4 * HOUR);
        assert_int_equal(
            timerd_complete(t, &f.token, TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0), 0);
        assert_int_equal(timerd_test_advance(t, HOUR, &firings), 0);
        take(t, "mono", start.monotonic + HOUR, 1);
        timerd_close(t);
}

/*
 * A wall-clock set, as the real service's clock-set tests expect: set forward past a realtime
 * deadline, the timer fires at once; a daily calendar timer set back a day is due at the next
 * 03:00 of the new time (tests/registry/test-registry-calendar.c test_clock_set_reevaluates).
 */
static void test_set_realtime(void **state)
{
        struct timerd *t = harness_connect(*state);
        struct timerd_test_clocks start;
        struct timerd_declaration d;
        struct timerd_claim claim;
        struct timerd_status status;
        const char *names[] = {"wall"};
        struct timerd_firing f;
        uint64_t firings;

        assert_int_equal(timerd_test_now(t, &start), 0);
        /* 2030-01-01T00:00:00Z: the daily 03:00 UTC is three hours away. */
        timerd_declaration_init(&d, TIMERD_POLICY_CALENDAR, 0);
        snprintf(d.calendar, sizeof(d.calendar), "*-*-* 03:00");
        snprintf(d.timezone, sizeof(d.timezone), "UTC");
        assert_int_equal(timerd_register(t, "daily", &d, NULL, false, &claim), 0);
        assert_int_equal(next_of(t, "daily"), start.realtime + 3 * HOUR);

        uint64_t back = start.realtime - DAY;
        assert_int_equal(timerd_test_set_realtime(t, back, &firings), 0);
        assert_int_equal(firings, 0);
        assert_int_equal(next_of(t, "daily"), back + 3 * HOUR);
        assert_int_equal(timerd_status(t, &status), 0);
        assert_int_equal(status.clock_changes, 1);

        /* Set forward past a realtime deadline: it fires at once, late by the jump. */
        reg(t, "wall", TIMERD_POLICY_ONCE, TIMERD_CLOCK_REALTIME, 0, 2 * HOUR);
        assert_int_equal(timerd_test_set_realtime(t, back + 150 * MIN, &firings), 0);
        assert_int_equal(firings, 1);
        assert_int_equal(timerd_wait(t, names, 1, WAIT_BOUND, &f), 0);
        assert_int_equal(f.deadline_usec, back + 2 * HOUR);
        assert_int_equal(f.fired_usec, back + 150 * MIN);
        assert_int_equal(
            timerd_complete(t, &f.token, TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0), 0);
        assert_int_equal(timerd_test_advance(t, 30 * MIN, &firings), 0);
        assert_int_equal(firings, 1);
        take(t, "daily", back + 3 * HOUR, 1);
        timerd_close(t);
}

/* A worker on its own connection: Wait, Complete, again, `runs` times; what it saw. */
struct worker {
        struct timerd *t;
        uint64_t first_deadline;
        uint64_t runs;
        bool complete;    /* false: take one run and never end it */
        uint64_t taken;   /* runs taken */
        uint64_t inexact; /* runs not fired at start + run * HOUR, or with the wrong run number */
        int error;
};

static void *worker_main(void *arg)
{
        struct worker *w = arg;
        const char *names[] = {"hourly"};
        struct timerd_firing f;

        while (w->taken < w->runs) {
                w->error = timerd_wait(w->t, names, 1, 0, &f);
                if (w->error < 0)
                        break;
                w->taken++;
                if (f.deadline_usec != w->first_deadline + (w->taken - 1) * HOUR ||
                    f.fired_usec != f.deadline_usec || f.token.run != w->taken)
                        w->inexact++;
                if (!w->complete)
                        break;
                w->error = timerd_complete(w->t, &f.token, TIMERD_OUTCOME_SUCCESS,
                                           TIMERD_DIRECTIVE_CONTINUE, 0);
                if (w->error < 0)
                        break;
        }
        return NULL;
}

/* Until the worker's Wait is parked: the advance must find it waiting for the first firing. */
static void await_waiter(struct timerd *t)
{
        struct timerd_status status;

        for (int i = 0; i < 5000; i++) {
                assert_int_equal(timerd_status(t, &status), 0);
                if (status.waiters > 0)
                        return;
                usleep(1000);
        }
        fail_msg("the worker's Wait never parked");
}

/* An hourly after-completion timer and w's thread parked in a Wait for it; *start: the clocks. */
static void start_worker(struct timerd *t, struct worker *w, pthread_t *thread,
                         struct timerd_test_clocks *start)
{
        assert_int_equal(timerd_test_now(t, start), 0);
        reg(t, "hourly", TIMERD_POLICY_AFTER_COMPLETION, TIMERD_CLOCK_MONOTONIC, HOUR, 0);
        w->first_deadline = start->monotonic + HOUR;
        assert_int_equal(pthread_create(thread, NULL, worker_main, w), 0);
        await_waiter(t);
}

/* ONE advance of 30 days while a worker thread completes each run: the advance waits at each
 * deadline for the run to end, so the after-completion deadlines stay exact: 720 runs. */
static void test_one_advance_with_a_worker(void **state)
{
        struct timerd *t = harness_connect(*state);
        struct worker w = {.t = harness_connect(*state), .runs = 720, .complete = true};
        struct timerd_test_clocks start;
        struct timerd_timer info;
        uint64_t firings;
        pthread_t thread;

        start_worker(t, &w, &thread, &start);
        unsigned long long began = harness_now_usec();
        assert_int_equal(timerd_test_advance(t, 30 * DAY, &firings), 0);
        unsigned long long took = harness_now_usec() - began;
        assert_int_equal(pthread_join(thread, NULL), 0);
        print_message("one advance, 720 runs completed by a worker thread: %llu.%03llu s (%s)\n",
                      took / SEC, took % SEC / 1000, harness_backend());

        assert_int_equal(w.error, 0);
        assert_int_equal(w.taken, 720);
        assert_int_equal(w.inexact, 0);
        assert_int_equal(firings, 720);
        assert_int_equal(timerd_get(t, "hourly", TIMERD_OWNER_SELF, &info), 0);
        assert_int_equal(info.runs, 720);
        assert_int_equal(info.next_usec, start.monotonic + 30 * DAY + HOUR);
        timerd_close(w.t);
        timerd_close(t);
}

struct advance_call {
        struct timerd *t;
        uint64_t usec;
        int result;
};

static void *advance_main(void *arg)
{
        struct advance_call *a = arg;

        a->result = timerd_test_advance(a->t, a->usec, NULL);
        return NULL;
}

/* A client that takes a run and never ends it: the advance waits for it a bounded real time (5
 * s) and answers Timeout, the clocks stopped at that run's deadline; meanwhile the service
 * answers others. A firing nobody waits for holds nothing (the single-threaded tests above). */
static void test_run_never_completed(void **state)
{
        struct timerd *t = harness_connect(*state);
        struct worker w = {.t = harness_connect(*state), .runs = 1, .complete = false};
        struct advance_call a = {.t = harness_connect(*state), .usec = 3 * HOUR};
        struct timerd_test_clocks start, now;
        pthread_t worker, advance;

        start_worker(t, &w, &worker, &start);
        unsigned long long began = harness_now_usec();
        assert_int_equal(pthread_create(&advance, NULL, advance_main, &a), 0);
        assert_int_equal(pthread_join(worker, NULL), 0);
        assert_int_equal(w.taken, 1);
        /* Held at the run's deadline, and serving. */
        assert_int_equal(timerd_test_now(t, &now), 0);
        assert_int_equal(now.monotonic, start.monotonic + HOUR);
        /* One move at a time: another is Busy and moves nothing. */
        assert_int_equal(timerd_test_advance(t, HOUR, NULL), -TIMERD_E_BUSY);
        assert_int_equal(pthread_join(advance, NULL), 0);
        unsigned long long took = harness_now_usec() - began;
        assert_int_equal(a.result, -TIMERD_E_TIMEOUT);
        assert_true(took >= 5 * SEC);
        assert_true(took < 30 * SEC);
        assert_int_equal(timerd_test_now(t, &now), 0);
        assert_int_equal(now.monotonic, start.monotonic + HOUR);
        timerd_close(w.t);
        timerd_close(a.t);
        timerd_close(t);
}

/* One long advance of a 1 ms timer (60000 deadlines; it signals this process, which blocks the
 * signal, so the service ends each run itself) steps in batches: another client's calls are
 * answered while it is under way, seeing the clocks part of the way. */
static void test_long_advance_serves_others(void **state)
{
        struct timerd *t = harness_connect(*state);
        struct advance_call a = {.t = harness_connect(*state), .usec = MIN};
        struct timerd_test_clocks start, now;
        struct timerd_status status;
        struct timerd_declaration d;
        struct timerd_claim claim;
        struct timerd_timer info;
        unsigned midway = 0;
        pthread_t advance;
        sigset_t block;

        sigemptyset(&block);
        sigaddset(&block, SIGUSR2);
        assert_int_equal(pthread_sigmask(SIG_BLOCK, &block, NULL), 0);
        assert_int_equal(timerd_test_now(t, &start), 0);
        timerd_declaration_init(&d, TIMERD_POLICY_INTERVAL, 1000);
        d.delivery = TIMERD_DELIVERY_SIGNAL;
        d.signal = SIGUSR2;
        assert_int_equal(timerd_register(t, "fast", &d, NULL, false, &claim), 0);
        assert_int_equal(pthread_create(&advance, NULL, advance_main, &a), 0);
        do {
                assert_int_equal(timerd_status(t, &status), 0);
                assert_int_equal(timerd_test_now(t, &now), 0);
                midway +=
                    now.monotonic > start.monotonic && now.monotonic < start.monotonic + a.usec;
        } while (now.monotonic < start.monotonic + a.usec);
        assert_int_equal(pthread_join(advance, NULL), 0);
        assert_int_equal(a.result, 0);
        print_message("%u Now calls answered during the advance\n", midway);
        assert_true(midway > 0);
        assert_int_equal(timerd_get(t, "fast", TIMERD_OWNER_SELF, &info), 0);
        assert_int_equal(info.runs, 60000);
        timerd_close(a.t);
        timerd_close(t);
}

/* Take and complete the n firings an advance left pending, so that the timers fire again. */
static void complete_pending(struct timerd *t, uint64_t n)
{
        struct timerd_firing f;

        for (uint64_t i = 0; i < n; i++) {
                assert_int_equal(timerd_wait(t, NULL, 0, WAIT_BOUND, &f), 0);
                assert_int_equal(timerd_complete(t, &f.token, TIMERD_OUTCOME_SUCCESS,
                                                 TIMERD_DIRECTIVE_CONTINUE, 0),
                                 0);
        }
}

/* A script of timers and advances on a fresh instance: every firing event in order, with its
 * run and virtual wall-clock time, as text. */
static char *run_script(void)
{
        struct harness h;
        struct timerd *t, *events;
        struct timerd_event e;
        char *log = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&log, &size);
        uint64_t firings, total = 0;

        assert_non_null(f);
        harness_start(&h, virtual_args);
        t = harness_connect(&h);
        events = harness_connect(&h);
        assert_int_equal(timerd_subscribe(events, false), 0);
        reg(t, "a-interval", TIMERD_POLICY_INTERVAL, TIMERD_CLOCK_MONOTONIC, 7 * MIN, 0);
        reg(t, "b-watchdog", TIMERD_POLICY_WATCHDOG, TIMERD_CLOCK_BOOTTIME, 13 * MIN, 0);
        reg(t, "c-once", TIMERD_POLICY_ONCE, TIMERD_CLOCK_REALTIME, 0, 50 * MIN);
        reg(t, "d-same", TIMERD_POLICY_INTERVAL, TIMERD_CLOCK_MONOTONIC, 7 * MIN, 0);
        for (int i = 1; i <= 12; i++) {
                assert_int_equal(timerd_test_advance(t, (uint64_t)i * 11 * MIN, &firings), 0);
                complete_pending(t, firings);
                total += firings;
                if (i % 4 == 0) {
                        assert_int_equal(timerd_test_suspend(t, 20 * MIN, &firings), 0);
                        complete_pending(t, firings);
                        total += firings;
                }
        }
        assert_true(total > 30);
        for (uint64_t n = 0; n < total;) {
                assert_int_equal(timerd_subscribe_next(events, &e), 0);
                if (e.kind != TIMERD_EVENT_FIRED)
                        continue;
                fprintf(f, "%s run %llu at %llu\n", e.name, (unsigned long long)e.run,
                        (unsigned long long)e.realtime_usec);
                n++;
        }
        timerd_close(events);
        timerd_close(t);
        harness_stop(&h);
        fclose(f);
        return log;
}

/* The same script twice: the same firings, in the same order, at the same virtual times. */
static void test_deterministic(void **state)
{
        (void)state;
        char *first = run_script(), *second = run_script();

        assert_string_equal(first, second);
        free(first);
        free(second);
}

/* A private instance from the helpers: started, answering on its socket, stopped clean, its
 * temporary directory gone. */
static void test_helpers_start_and_stop(void **state)
{
        struct timerd_test *vt;
        struct timerd_test_clocks now;
        struct timerd *t;
        char dir[256];
        struct stat st;

        (void)state;
        assert_int_equal(timerd_test_start(&vt), 0);
        snprintf(dir, sizeof(dir), "%s", timerd_test_socket(vt));
        *strrchr(dir, '/') = '\0';
        assert_int_equal(timerd_connect(timerd_test_socket(vt), &t), 0);
        assert_int_equal(timerd_test_now(t, &now), 0);
        assert_int_equal(now.monotonic, 1000000000ull * SEC);
        assert_int_equal(timerd_test_advance(t, DAY, NULL), 0);
        timerd_close(t);
        assert_int_equal(timerd_test_stop(vt), 0);
        assert_int_equal(stat(dir, &st), -1);
        assert_int_equal(errno, ENOENT);
}

/* The virtual instance: an io.timerd.Test method it lacks is MethodNotFound. */
static void test_unknown_test_method(void **state)
{
        struct timerd *t = harness_connect(*state);
        char *reply = NULL;

        assert_int_equal(timerd_call_raw(t, "io.timerd.Test.Rewind", NULL, &reply),
                         -TIMERD_E_METHOD_NOT_FOUND);
        free(reply);
        /* Nor is a name one byte off one it has. */
        static const char *const near[] = {"io.timerd.Test.AdvanceT", "io.timerd.Test.AdvanceToo",
                                           "io.timerd.Test.No", "io.timerd.Test.NowX",
                                           "io.timerd.Test.Suspende"};
        for (size_t i = 0; i < sizeof(near) / sizeof(near[0]); i++) {
                reply = NULL;
                assert_int_equal(timerd_call_raw(t, near[i], NULL, &reply),
                                 -TIMERD_E_METHOD_NOT_FOUND);
                free(reply);
        }
        assert_int_equal(timerd_call_raw(t, "org.varlink.service.GetInfo", NULL, &reply), 0);
        assert_non_null(strstr(reply, "io.timerd.Test"));
        free(reply);
        timerd_close(t);
}

/* The service on the real clock refuses the interface, whatever the parameters. */
static void test_real_service_refuses(void **state)
{
        struct timerd *t = harness_connect(*state);
        struct timerd_test_clocks now;
        char *reply = NULL;

        assert_int_equal(timerd_test_advance(t, HOUR, NULL), -TIMERD_E_INTERFACE_NOT_FOUND);
        assert_int_equal(timerd_test_now(t, &now), -TIMERD_E_INTERFACE_NOT_FOUND);
        assert_int_equal(timerd_call_raw(t, "io.timerd.Test.Advance", "{\"bogus\":1}", &reply),
                         -TIMERD_E_INTERFACE_NOT_FOUND);
        free(reply);
        assert_int_equal(timerd_call_raw(t, "org.varlink.service.GetInterfaceDescription",
                                         "{\"interface\":\"io.timerd.Test\"}", &reply),
                         -TIMERD_E_INTERFACE_NOT_FOUND);
        free(reply);
        assert_int_equal(timerd_call_raw(t, "org.varlink.service.GetInfo", NULL, &reply), 0);
        assert_null(strstr(reply, "io.timerd.Test"));
        free(reply);
        timerd_close(t);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_hourly_job_for_30_days, virtual_setup,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_one_advance_with_a_worker, virtual_setup,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_run_never_completed, virtual_setup,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_long_advance_serves_others, virtual_setup,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_handover_ignored, virtual_setup, harness_teardown),
            cmocka_unit_test_setup_teardown(test_advance_steps_through_deadlines, virtual_setup,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_suspend, virtual_setup, harness_teardown),
            cmocka_unit_test_setup_teardown(test_set_realtime, virtual_setup, harness_teardown),
            cmocka_unit_test_setup_teardown(test_unknown_test_method, virtual_setup,
                                            harness_teardown),
            cmocka_unit_test(test_deterministic),
            cmocka_unit_test(test_helpers_start_and_stop),
            cmocka_unit_test_setup_teardown(test_real_service_refuses, harness_setup,
                                            harness_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
