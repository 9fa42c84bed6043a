/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libtimerd against the real timerd: the asynchronous mode (hundreds of pipelined calls on one
 * connection, streams of firings and events, callbacks in call order), the typed Sleep / Finish /
 * Resume calls, and the reconnect pattern across a restart of the service.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
#define MSEC          1000ull
#define SEC           1000000ull
/* Generous: only a hung service or a lost callback takes this long. */
#define PUMP_TIMEOUT_USEC (10 * SEC)

#define N_PIPELINED 500

/* Run the connections' loops until *counter reaches target; returns the last process() result
 * of each connection in results (may be NULL). Like any event loop of libtimerd's, it also wakes
 * when a held firing is due (timerd_get_timeout()). */
static void pump(struct timerd *const *ts, size_t n, const size_t *counter, size_t target,
                 int *results)
{
        unsigned long long deadline = harness_now_usec() + PUMP_TIMEOUT_USEC;

        while (*counter < target) {
                struct pollfd p[4];
                unsigned long long now = harness_now_usec(), wake = deadline;
                uint64_t held[4];

                assert_true(n <= ELEMENTSOF(p));
                if (now >= deadline)
                        fail_msg("only %zu of %zu callbacks came", *counter, target);
                for (size_t i = 0; i < n; i++) {
                        int events = timerd_get_events(ts[i]);

                        assert_true(events >= 0);
                        p[i] = (struct pollfd){.fd = timerd_get_fd(ts[i]), .events = (short)events};
                        assert_true(timerd_get_timeout(ts[i], &held[i]) >= 0);
                        if (held[i] < wake)
                                wake = held[i];
                }
                assert_true(poll(p, n, wake > now ? (int)((wake - now + MSEC - 1) / MSEC) : 0) >=
                            0);
                now = harness_now_usec();
                for (size_t i = 0; i < n; i++) {
                        int r;

                        if (p[i].revents == 0 && held[i] > now)
                                continue;
                        r = timerd_process(ts[i]);
                        if (results)
                                results[i] = r;
                        else
                                assert_true(r >= 0);
                }
        }
}

static void pump_one(struct timerd *t, const size_t *counter, size_t target)
{
        pump(&t, 1, counter, target, NULL);
}

/* The answers of pipelined calls, in the order their callbacks ran. */
struct answers {
        size_t n;
        size_t index[2 * N_PIPELINED + 2];
        int error[2 * N_PIPELINED + 2];
        struct timerd_claim claim[2 * N_PIPELINED + 2];
};

struct call_tag {
        struct answers *answers;
        size_t index;
};

static void record(struct answers *a, size_t index, int error)
{
        assert_true(a->n < ELEMENTSOF(a->index));
        a->index[a->n] = index;
        a->error[a->n] = error;
        a->n++;
}

static void on_claim(struct timerd *t, int error, const struct timerd_claim *claim, void *userdata)
{
        struct call_tag *tag = userdata;

        (void)t;
        assert_true(error < 0 ? claim == NULL : claim != NULL);
        if (claim)
                tag->answers->claim[tag->index] = *claim;
        record(tag->answers, tag->index, error);
}

static void on_done(struct timerd *t, int error, void *userdata)
{
        struct call_tag *tag = userdata;

        (void)t;
        record(tag->answers, tag->index, error);
}

static void timer_name(char *buf, size_t size, const char *prefix, size_t i)
{
        snprintf(buf, size, "%s%04zu", prefix, i);
}

/* Hundreds of calls in flight on one connection: each answer reaches its own callback, in order,
 * an error among them included. */
static void test_pipelined_calls(void **state)
{
        struct timerd *t = harness_connect(*state);
        struct answers *a = calloc(1, sizeof(*a));
        struct call_tag *tags = calloc(2 * N_PIPELINED + 2, sizeof(*tags));
        struct timerd_declaration d;
        struct timerd_timer *timers;
        struct timerd_status status;
        char name[32];

        assert_non_null(a);
        assert_non_null(tags);
        timerd_declaration_init(&d, TIMERD_POLICY_ONCE, 0);
        for (size_t i = 0; i <= N_PIPELINED; i++) {
                /* The one past the end names the middle timer again: AlreadyRegistered. */
                timer_name(name, sizeof(name), "p", i == N_PIPELINED ? N_PIPELINED / 2 : i);
                tags[i] = (struct call_tag){a, i};
                assert_int_equal(
                    timerd_register_async(t, name, &d, NULL, false, on_claim, &tags[i]), 0);
        }
        assert_int_equal(timerd_in_flight(t), N_PIPELINED + 1);
        /* Blocking calls wait their turn: refused while the pipeline is full. */
        assert_int_equal(timerd_status(t, &status), -EBUSY);

        pump_one(t, &a->n, N_PIPELINED + 1);
        assert_int_equal(timerd_in_flight(t), 0);
        for (size_t i = 0; i <= N_PIPELINED; i++) {
                assert_int_equal(a->index[i], i);
                if (i < N_PIPELINED) {
                        assert_int_equal(a->error[i], 0);
                        timer_name(name, sizeof(name), "p", i);
                        assert_string_equal(a->claim[i].name, name);
                }
        }
        assert_int_equal(a->error[N_PIPELINED], -TIMERD_E_ALREADY_REGISTERED);
        assert_int_equal(timerd_list(t, TIMERD_OWNER_SELF, false, &timers), N_PIPELINED);
        free(timers);

        /* Cancel and unregister each, alternating, all in flight at once. */
        a->n = 0;
        for (size_t i = 0; i < N_PIPELINED; i++) {
                tags[2 * i] = (struct call_tag){a, 2 * i};
                tags[2 * i + 1] = (struct call_tag){a, 2 * i + 1};
                assert_int_equal(timerd_cancel_async(t, &a->claim[i], NULL, on_done, &tags[2 * i]),
                                 0);
                assert_int_equal(
                    timerd_unregister_async(t, &a->claim[i], on_done, &tags[2 * i + 1]), 0);
        }
        pump_one(t, &a->n, 2 * N_PIPELINED);
        for (size_t i = 0; i < 2 * N_PIPELINED; i++) {
                assert_int_equal(a->index[i], i);
                assert_int_equal(a->error[i], 0);
        }
        assert_int_equal(timerd_list(t, TIMERD_OWNER_SELF, false, &timers), 0);

        free(tags);
        free(a);
        timerd_close(t);
}

struct firings {
        size_t n;
        char names[32][TIMERD_NAME_MAX + 1];
        int end; /* the error that ended the stream, 0 while it runs */
        struct timerd *control;
        struct answers completed;
        struct call_tag tags[32];
};

static void on_firing(struct timerd *t, int error, const struct timerd_firing *firing,
                      void *userdata)
{
        struct firings *f = userdata;

        (void)t;
        if (error < 0) {
                assert_null(firing);
                f->end = error;
                return;
        }
        assert_true(f->n < ELEMENTSOF(f->names));
        memcpy(f->names[f->n], firing->token.name, sizeof(f->names[f->n]));
        /* Fired up to the default handover early, handed on at its deadline. */
        assert_true(firing->fired_usec + TIMERD_HANDOVER_DEFAULT_USEC >= firing->deadline_usec);
        assert_true(harness_now_usec() >= firing->deadline_usec);
        /* The stream holds its connection: the run is completed on the other one. */
        f->tags[f->n] = (struct call_tag){&f->completed, f->n};
        assert_int_equal(timerd_complete_async(f->control, &firing->token, TIMERD_OUTCOME_SUCCESS,
                                               TIMERD_DIRECTIVE_CONTINUE, 0, on_done,
                                               &f->tags[f->n]),
                         0);
        f->n++;
}

/* A stream of firings on one connection, completed through another, both in one loop. */
static void test_wait_stream(void **state)
{
        struct timerd *waiter = harness_connect(*state);
        struct timerd *control = harness_connect(*state);
        struct timerd *both[] = {waiter, control};
        struct firings *f = calloc(1, sizeof(*f));
        struct timerd_declaration d;
        struct timerd_claim claim;
        struct timerd_timer timer;
        struct timerd_status status;
        char name[32];
        enum { N_TIMERS = 12 };

        assert_non_null(f);
        f->control = control;
        assert_int_equal(timerd_wait_stream_async(waiter, NULL, 0, on_firing, f), 0);
        /* The stream occupies its connection. */
        assert_int_equal(timerd_wait_async(waiter, NULL, 0, 0, on_firing, f), -EBUSY);
        assert_int_equal(timerd_status(waiter, &status), -EBUSY);

        timerd_declaration_init(&d, TIMERD_POLICY_ONCE, 0);
        for (size_t i = 0; i < N_TIMERS; i++) {
                const struct timerd_start start = {TIMERD_START_AFTER, (20 + 15 * i) * MSEC};

                timer_name(name, sizeof(name), "f", i);
                assert_int_equal(timerd_register(control, name, &d, &start, false, &claim), 0);
        }
        pump(both, 2, &f->completed.n, N_TIMERS, NULL);
        for (size_t i = 0; i < N_TIMERS; i++) {
                timer_name(name, sizeof(name), "f", i);
                assert_string_equal(f->names[i], name);
                assert_int_equal(f->completed.error[i], 0);
        }
        assert_int_equal(f->end, 0);
        assert_int_equal(timerd_in_flight(waiter), 1);

        assert_int_equal(timerd_get(control, "f0000", TIMERD_OWNER_SELF, &timer), 0);
        assert_int_equal(timer.runs, 1);
        assert_int_equal(timer.last_outcome, TIMERD_OUTCOME_SUCCESS);

        timerd_close(waiter);
        timerd_close(control);
        free(f);
}

struct raw_answer {
        size_t n;
        int error;
        bool continues;
        char json[4096];
        char error_name[128];
};

static void on_raw(struct timerd *t, int error, const char *parameters_json, bool continues,
                   void *userdata)
{
        struct raw_answer *a = userdata;
        const char *name = timerd_last_error_name(t);

        a->error = error;
        a->continues = continues;
        snprintf(a->json, sizeof(a->json), "%s", parameters_json ? parameters_json : "(null)");
        snprintf(a->error_name, sizeof(a->error_name), "%s", name ? name : "");
        a->n++;
}

struct stream_answers {
        size_t n;
        int error[2];
        bool continues[2];
        unsigned long long at_usec[2];
};

static void on_stream_answer(struct timerd *t, int error, const char *parameters_json,
                             bool continues, void *userdata)
{
        struct stream_answers *a = userdata;

        (void)t;
        assert_true(a->n < ELEMENTSOF(a->error));
        if (error == 0)
                assert_non_null(strstr(parameters_json, "\"name\":\"soon\""));
        a->error[a->n] = error;
        a->continues[a->n] = continues;
        a->at_usec[a->n] = harness_now_usec();
        a->n++;
}

/* A firing handed to a stream leaves the stream's own timeout armed: it still ends on time. */
static void test_wait_stream_timeout(void **state)
{
        struct timerd *waiter = harness_connect(*state);
        struct timerd *control = harness_connect(*state);
        struct timerd *both[] = {waiter, control};
        const struct timerd_start start = {TIMERD_START_AFTER, 30 * MSEC};
        struct stream_answers a = {};
        struct timerd_declaration d;
        struct timerd_claim claim;

        unsigned long long called = harness_now_usec();
        assert_int_equal(timerd_call_async(waiter, "io.timerd.Timer.Wait",
                                           "{\"timeout_usec\":300000}", TIMERD_CALL_MORE,
                                           on_stream_answer, &a),
                         0);
        timerd_declaration_init(&d, TIMERD_POLICY_ONCE, 0);
        assert_int_equal(timerd_register(control, "soon", &d, &start, false, &claim), 0);
        pump(both, 2, &a.n, 2, NULL);

        assert_int_equal(a.error[0], 0);
        assert_true(a.continues[0]);
        assert_true(a.at_usec[0] - called < 300 * MSEC);
        assert_int_equal(a.error[1], -TIMERD_E_TIMEOUT);
        assert_false(a.continues[1]);
        assert_true(a.at_usec[1] - called >= 300 * MSEC);
        assert_int_equal(timerd_in_flight(waiter), 0);
        timerd_close(waiter);
        timerd_close(control);
}

static void test_call_async(void **state)
{
        struct timerd *t = harness_connect(*state);
        struct raw_answer a = {};

        assert_int_equal(timerd_call_async(t, "org.varlink.service.GetInfo", NULL, 0, on_raw, &a),
                         0);
        pump_one(t, &a.n, 1);
        assert_int_equal(a.error, 0);
        assert_false(a.continues);
        assert_non_null(strstr(a.json, "\"io.timerd.Timer\""));

        /* An error: its parameters, and its name while the callback runs. */
        assert_int_equal(
            timerd_call_async(t, "io.timerd.Timer.Get", "{\"name\":\"nothing\"}", 0, on_raw, &a),
            0);
        pump_one(t, &a.n, 2);
        assert_int_equal(a.error, -TIMERD_E_NOT_FOUND);
        assert_string_equal(a.error_name, "io.timerd.Timer.NotFound");
        assert_non_null(strstr(a.json, "\"nothing\""));

        assert_int_equal(timerd_call_async(t, "io.timerd.Timer.Get", "{\"name\":", 0, on_raw, &a),
                         -EINVAL);
        assert_int_equal(timerd_call_async(t, "io.timerd.Timer.Get", NULL, 2, on_raw, &a), -EINVAL);
        assert_int_equal(timerd_call_async(t, NULL, NULL, 0, on_raw, &a), -EINVAL);
        assert_int_equal(timerd_call_async(t, "io.timerd.Timer.Get", NULL, 0, NULL, &a), -EINVAL);
        assert_int_equal(timerd_in_flight(t), 0);
        timerd_close(t);
}

static void on_status(struct timerd *t, int error, const struct timerd_status *status,
                      void *userdata)
{
        struct raw_answer *a = userdata;

        (void)t;
        a->error = error;
        snprintf(a->json, sizeof(a->json), "%s", status ? status->epoch : "");
        a->n++;
}

static void on_kick(struct timerd *t, int error, uint64_t next_usec, void *userdata)
{
        struct raw_answer *a = userdata;

        (void)t;
        a->error = error;
        snprintf(a->json, sizeof(a->json), "%llu", (unsigned long long)next_usec);
        a->n++;
}

struct reconciled {
        size_t n;
        int error[2];
        bool created[2];
        struct timerd_claim claim;
};

static void on_reconcile(struct timerd *t, int error, const struct timerd_claim *claim,
                         bool created, void *userdata)
{
        struct reconciled *r = userdata;

        (void)t;
        assert_true(r->n < ELEMENTSOF(r->error));
        r->error[r->n] = error;
        r->created[r->n] = created;
        if (claim)
                r->claim = *claim;
        r->n++;
}

/* The errors (or 0) of answers that carry nothing else of interest. */
struct disconnects {
        size_t n;
        int errors[4];
};

static void on_firing_end(struct timerd *t, int error, const struct timerd_firing *firing,
                          void *userdata)
{
        struct disconnects *d = userdata;

        (void)t;
        (void)firing;
        assert_true(d->n < ELEMENTSOF(d->errors));
        d->errors[d->n++] = error;
}

/* The other typed calls: status, reconcile, kick, a single wait that times out. */
static void test_typed_async(void **state)
{
        struct timerd *t = harness_connect(*state);
        struct timerd_status status;
        struct raw_answer a = {};
        struct reconciled rec = {};
        struct disconnects ends = {};
        struct timerd_declaration d;
        unsigned long long before;

        assert_int_equal(timerd_status(t, &status), 0);
        assert_int_equal(timerd_status_async(t, on_status, &a), 0);
        pump_one(t, &a.n, 1);
        assert_int_equal(a.error, 0);
        assert_string_equal(a.json, status.epoch);

        timerd_declaration_init(&d, TIMERD_POLICY_WATCHDOG, 10 * SEC);
        assert_int_equal(
            timerd_reconcile_async(t, "dog", &d, TIMERD_DESIRED_SCHEDULED, 0, on_reconcile, &rec),
            0);
        assert_int_equal(
            timerd_reconcile_async(t, "dog", &d, TIMERD_DESIRED_SCHEDULED, 0, on_reconcile, &rec),
            0);
        pump_one(t, &rec.n, 2);
        assert_int_equal(rec.error[0], 0);
        assert_true(rec.created[0]);
        assert_int_equal(rec.error[1], 0);
        assert_false(rec.created[1]); /* idempotent */

        before = harness_now_usec();
        assert_int_equal(timerd_kick_async(t, &rec.claim, NULL, on_kick, &a), 0);
        pump_one(t, &a.n, 2);
        assert_int_equal(a.error, 0);
        assert_true(strtoull(a.json, NULL, 10) >= before + 10 * SEC);

        /* One firing with a timeout that passes. */
        assert_int_equal(timerd_wait_async(t, NULL, 0, 20 * MSEC, on_firing_end, &ends), 0);
        pump_one(t, &ends.n, 1);
        assert_int_equal(ends.errors[0], -TIMERD_E_TIMEOUT);

        assert_int_equal(
            timerd_reconcile_async(t, "dog", &d, (enum timerd_desired)99, 0, on_reconcile, &rec),
            -EINVAL);
        assert_int_equal(timerd_complete_async(t, NULL, TIMERD_OUTCOME_SUCCESS,
                                               TIMERD_DIRECTIVE_CONTINUE, 0, on_done, &a),
                         -EINVAL);
        assert_int_equal(timerd_in_flight(t), 0);
        timerd_close(t);
}

static void close_in_callback(struct timerd *t, int error, void *userdata)
{
        size_t *n = userdata;

        (void)error;
        (*n)++;
        timerd_close(t);
}

/* A callback may close its connection: the rest of the calls in flight are dropped. */
static void test_close_from_callback(void **state)
{
        struct timerd *t = harness_connect(*state);
        const struct timerd_claim claim = {.name = "absent", .generation = 1};
        size_t n = 0;
        struct pollfd p;

        for (int i = 0; i < 5; i++)
                assert_int_equal(timerd_cancel_async(t, &claim, NULL, close_in_callback, &n), 0);
        p = (struct pollfd){.fd = timerd_get_fd(t), .events = POLLIN};
        assert_int_equal(poll(&p, 1, 10000), 1);
        /* Under ASan, anything touching t after its callback closed it would fail here. */
        assert_true(timerd_process(t) >= 0);
        assert_int_equal(n, 1);
}

struct events {
        size_t n;
        int end;
        char log[4096];
};

static void on_event(struct timerd *t, int error, const struct timerd_event *e, void *userdata)
{
        struct events *ev = userdata;
        size_t len = strlen(ev->log);

        (void)t;
        if (error < 0) {
                ev->end = error;
                return;
        }
        /* Probes only prove the subscription is live. */
        if (strncmp(e->name, "probe", 5) != 0)
                snprintf(ev->log + len, sizeof(ev->log) - len, "%s %s%s;",
                         timerd_event_kind_to_string(e->kind), e->name,
                         e->has_state ? "" : " (gone)");
        ev->n++;
}

/* Events caused by another connection reach a subscriber. */
static void test_subscribe_async(void **state)
{
        struct timerd *watcher = harness_connect(*state);
        struct timerd *actor = harness_connect(*state);
        struct events *ev = calloc(1, sizeof(*ev));
        struct timerd_declaration d;
        struct timerd_claim claim;
        const struct timerd_start later = {TIMERD_START_AFTER, 60 * SEC};

        assert_non_null(ev);
        assert_int_equal(timerd_subscribe_async(watcher, false, on_event, ev), 0);
        timerd_declaration_init(&d, TIMERD_POLICY_ONCE, 0);
        /* Nothing acknowledges a subscription: probe until one event comes through. */
        for (int i = 0; ev->n == 0; i++) {
                char probe[32];
                struct pollfd p = {.fd = timerd_get_fd(watcher), .events = POLLIN};

                assert_true(i < 200);
                snprintf(probe, sizeof(probe), "probe%d", i);
                assert_int_equal(timerd_register(actor, probe, &d, NULL, false, &claim), 0);
                if (poll(&p, 1, 50) > 0)
                        assert_true(timerd_process(watcher) >= 0);
        }

        ev->n = 0;
        assert_int_equal(timerd_register(actor, "watched", &d, NULL, false, &claim), 0);
        assert_int_equal(timerd_schedule(actor, &claim, NULL, &later), 0);
        assert_int_equal(timerd_cancel(actor, &claim, NULL), 0);
        assert_int_equal(timerd_unregister(actor, &claim), 0);
        pump_one(watcher, &ev->n, 4);
        assert_string_equal(ev->log, "registered watched;scheduled watched;cancelled watched;"
                                     "unregistered watched (gone);");
        assert_int_equal(ev->end, 0);

        timerd_close(actor);
        timerd_close(watcher);
        free(ev);
}

static void register_alarm(struct timerd *t, const char *name, uint64_t delay_usec)
{
        const struct timerd_start start = {TIMERD_START_AFTER, delay_usec};
        struct timerd_declaration d;
        struct timerd_claim claim;

        timerd_declaration_init(&d, TIMERD_POLICY_ONCE, 0);
        d.delivery = TIMERD_DELIVERY_ALARM;
        assert_int_equal(timerd_register(t, name, &d, &start, false, &claim), 0);
}

static void test_sleep(void **state)
{
        struct timerd *t = harness_connect(*state);
        const struct timerd_start short_sleep = {TIMERD_START_AFTER, 30 * MSEC};
        const struct timerd_start long_sleep = {TIMERD_START_AFTER, 500 * MSEC};
        struct timerd_finish_result finish;
        struct timerd_sleep_result sleep;
        unsigned long long start = harness_now_usec();

        assert_int_equal(timerd_sleep(t, TIMERD_CLOCK_MONOTONIC, &short_sleep, &sleep), 0);
        assert_true(sleep.elapsed);
        assert_true(harness_now_usec() - start >= 30 * MSEC);

        /* Observed, resumed: it ends at the original deadline. */
        register_alarm(t, "poke", 20 * MSEC);
        start = harness_now_usec();
        assert_int_equal(timerd_sleep(t, TIMERD_CLOCK_MONOTONIC, &long_sleep, &sleep), 0);
        assert_false(sleep.elapsed);
        assert_string_equal(sleep.observation.timer, "poke");
        assert_true(sleep.observation.alarms >= 1);
        assert_true(sleep.observation.has_remaining);
        assert_true(sleep.observation.remaining_usec <= 500 * MSEC);
        assert_int_equal(timerd_finish(t, &sleep.observation, TIMERD_FINISH_RESUME, &finish), 0);
        assert_true(finish.has_ticket);
        assert_int_equal(timerd_resume(t, &finish.ticket, &sleep), 0);
        assert_true(sleep.elapsed);
        assert_true(harness_now_usec() - start >= 500 * MSEC);
        /* A ticket is good once. */
        assert_int_equal(timerd_resume(t, &finish.ticket, &sleep), -TIMERD_E_PROTOCOL_FAILURE);
        assert_string_equal(timerd_last_error_name(t), "io.timerd.Timer.ProtocolFailure");

        /* Observed, interrupted: the time that was left. */
        register_alarm(t, "poke2", 20 * MSEC);
        assert_int_equal(timerd_sleep(t, TIMERD_CLOCK_MONOTONIC, &long_sleep, &sleep), 0);
        assert_false(sleep.elapsed);
        assert_int_equal(timerd_finish(t, &sleep.observation, TIMERD_FINISH_INTERRUPT, &finish), 0);
        assert_false(finish.has_ticket);
        assert_true(finish.has_remaining);
        assert_true(finish.remaining_usec > 0 && finish.remaining_usec <= 500 * MSEC);

        /* Without a deadline, only an alarm ends it; terminate retires it. */
        register_alarm(t, "poke3", 20 * MSEC);
        assert_int_equal(timerd_sleep(t, TIMERD_CLOCK_MONOTONIC, NULL, &sleep), 0);
        assert_false(sleep.elapsed);
        assert_false(sleep.observation.has_remaining);
        assert_int_equal(timerd_finish(t, &sleep.observation, TIMERD_FINISH_TERMINATE, &finish), 0);
        assert_false(finish.has_ticket);
        /* Finished once. */
        assert_int_equal(timerd_finish(t, &sleep.observation, TIMERD_FINISH_TERMINATE, &finish),
                         -TIMERD_E_PROTOCOL_FAILURE);

        assert_int_equal(timerd_sleep(t, TIMERD_CLOCK_MAX, NULL, &sleep), -EINVAL);
        assert_int_equal(timerd_finish(t, &sleep.observation, TIMERD_FINISH_MAX, &finish), -EINVAL);
        timerd_close(t);
}

/* A timerd of our own on a socket that outlives it, so that it can be restarted. */
struct service {
        char dir[64];
        char socket[96];
        pid_t pid;
};

static void service_start(struct service *s)
{
        const char *bin = getenv("TIMERD_BIN");
        char state[128], backend[64];

        assert_non_null(bin);
        snprintf(s->socket, sizeof(s->socket), "%s/io.timerd", s->dir);
        snprintf(state, sizeof(state), "%s/state", s->dir);
        snprintf(backend, sizeof(backend), "--backend=%s", harness_backend());
        s->pid = fork();
        assert_true(s->pid >= 0);
        if (s->pid == 0) {
                execl(bin, bin, "--socket", s->socket, "--state-dir", state, backend,
                      "--log-level=warning", (char *)NULL);
                _exit(127);
        }
        for (int i = 0; i < 500; i++) {
                struct timerd *t;
                int status;

                if (timerd_connect(s->socket, &t) == 0) {
                        timerd_close(t);
                        return;
                }
                if (waitpid(s->pid, &status, WNOHANG) == s->pid)
                        fail_msg("timerd exited at start (status %d)", status);
                usleep(10000);
        }
        fail_msg("timerd did not answer on %s", s->socket);
}

static void service_stop(struct service *s)
{
        int status;

        assert_int_equal(kill(s->pid, SIGTERM), 0);
        assert_int_equal(waitpid(s->pid, &status, 0), s->pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
}

static void service_remove(struct service *s)
{
        char command[128];

        snprintf(command, sizeof(command), "rm -rf '%s'", s->dir);
        assert_int_equal(system(command), 0);
}

static void on_status_end(struct timerd *t, int error, const struct timerd_status *status,
                          void *userdata)
{
        on_firing_end(t, error, NULL, userdata);
        (void)status;
}

/*
 * The reconnect pattern: a restart is seen as a broken connection, the epoch tells it from a lost
 * connection, and timerd_reconcile() restates a retained declaration.
 */
static void test_reconnect_after_restart(void **state)
{
        struct service s = {.dir = "/tmp/timerd-async.XXXXXX"};
        struct timerd_status before, after;
        struct timerd_declaration d;
        struct timerd_claim claim;
        struct timerd_timer timer;
        struct disconnects ends = {};
        struct timerd *t, *waiter;
        int result = 0;
        bool created;

        (void)state;
        assert_non_null(mkdtemp(s.dir));
        service_start(&s);
        assert_int_equal(timerd_connect(s.socket, &t), 0);
        assert_int_equal(timerd_connect(s.socket, &waiter), 0);
        assert_int_equal(timerd_status(t, &before), 0);
        timerd_declaration_init(&d, TIMERD_POLICY_AFTER_COMPLETION, 300 * SEC);
        d.lifetime = TIMERD_LIFETIME_RETAINED;
        assert_int_equal(
            timerd_reconcile(t, "job", &d, TIMERD_DESIRED_SCHEDULED, 0, &claim, &created), 0);
        assert_true(created);

        /* In flight at the restart: a parked Wait, and a Status queued behind it. */
        assert_int_equal(timerd_wait_async(waiter, NULL, 0, 0, on_firing_end, &ends), 0);
        assert_int_equal(timerd_status_async(waiter, on_status_end, &ends), 0);
        service_stop(&s);
        pump(&waiter, 1, &ends.n, 2, &result);
        assert_int_equal(ends.errors[0], -TIMERD_E_SHUTTING_DOWN);
        assert_true(ends.errors[1] == -TIMERD_E_DISCONNECTED ||
                    ends.errors[1] == -TIMERD_E_SHUTTING_DOWN);
        assert_int_equal(result, -TIMERD_E_DISCONNECTED);
        assert_int_equal(timerd_get_events(waiter), 0);
        assert_int_equal(timerd_status_async(waiter, on_status_end, &ends), -TIMERD_E_DISCONNECTED);

        /* The blocking connection learns at its next call, and stays broken. */
        assert_int_equal(timerd_status(t, &after), -TIMERD_E_DISCONNECTED);
        assert_int_equal(timerd_status(t, &after), -TIMERD_E_DISCONNECTED);
        assert_true(timerd_reconnect(t) < 0);
        assert_int_equal(timerd_status(t, &after), -TIMERD_E_DISCONNECTED);

        service_start(&s);
        assert_int_equal(timerd_reconnect(t), 0);
        assert_int_equal(timerd_reconnect(waiter), 0);
        assert_int_equal(timerd_status(t, &after), 0);
        assert_string_not_equal(after.epoch, before.epoch);
        /* Restated, whether or not the service kept it. */
        assert_int_equal(timerd_reconcile(t, "job", &d, TIMERD_DESIRED_SCHEDULED, 0, &claim, NULL),
                         0);
        assert_int_equal(timerd_get(t, "job", TIMERD_OWNER_SELF, &timer), 0);
        assert_int_equal(timer.declaration.policy, TIMERD_POLICY_AFTER_COMPLETION);
        assert_int_equal(timer.declaration.lifetime, TIMERD_LIFETIME_RETAINED);
        assert_int_equal(timer.state, TIMERD_STATE_SCHEDULED);
        assert_int_equal(timerd_cancel(t, &claim, NULL), 0);
        /* The reconnected async connection works as new. */
        assert_int_equal(timerd_status_async(waiter, on_status_end, &ends), 0);
        pump(&waiter, 1, &ends.n, 3, NULL);

        timerd_close(t);
        timerd_close(waiter);
        service_stop(&s);
        service_remove(&s);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_pipelined_calls, harness_setup, harness_teardown),
            cmocka_unit_test_setup_teardown(test_wait_stream, harness_setup, harness_teardown),
            cmocka_unit_test_setup_teardown(test_wait_stream_timeout, harness_setup,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_call_async, harness_setup, harness_teardown),
            cmocka_unit_test_setup_teardown(test_typed_async, harness_setup, harness_teardown),
            cmocka_unit_test_setup_teardown(test_close_from_callback, harness_setup,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_subscribe_async, harness_setup, harness_teardown),
            cmocka_unit_test_setup_teardown(test_sleep, harness_setup, harness_teardown),
            cmocka_unit_test(test_reconnect_after_restart),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
