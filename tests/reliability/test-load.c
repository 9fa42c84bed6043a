/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Load against the real timerd: 100000 active timers firing (alarm delivery, spread over their
 * period, so the service runs each firing to its end itself), 8 clients taking notify firings
 * from Wait streams and completing them, and 56 clients making every kind of control call as fast
 * as they can. After a warm-up, for the measured span:
 *   - every call succeeds: zero protocol errors, zero unexpected typed errors;
 *   - throughput, and the lateness of firings (the service's own figure in Status, and what the
 *     waiting clients see), are reported;
 *   - the service's resident memory does not grow under the same load, and once the clients are
 *     gone its descriptors are what they were before they came.
 *
 * TIMERD_LOAD_SECONDS sets the measured span (default 10: the short run of `meson test`; tools/soak
 * runs 60) and TIMERD_LOAD_TIMERS the active timers (default 100000).
 */

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "proc-stats.h"
#include "wire.h"

#define N_CALLERS       56
#define N_WAITERS       8
#define WARMUP_SECONDS  3
#define FLEET_PERIOD    5000000 /* µs: 100000 timers fire 20000 times a second */
#define FLEET_OWNER     64003
#define WAITER_PERIOD   50000
#define LATENESS_BUCKET 100 /* µs */
#define LATENESS_MAX    20000
#define MS              1000ull

struct load {
        const struct harness *harness;
        atomic_bool stop;
        atomic_uint_fast64_t calls;
        atomic_uint_fast64_t errors;
        atomic_int first_error;
        atomic_uint_fast64_t firings;
        /* Lateness seen by the waiting clients, in LATENESS_BUCKET buckets (the last: beyond). */
        atomic_uint_fast64_t lateness[LATENESS_MAX / LATENESS_BUCKET + 1];
        atomic_uint_fast64_t lateness_max;
};

struct worker {
        struct load *load;
        unsigned index;
        pthread_t thread;
};

static uint64_t env_u64(const char *name, uint64_t def)
{
        const char *v = getenv(name);
        return v && v[0] ? strtoull(v, NULL, 10) : def;
}

static uint64_t monotonic_usec(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Count a call: anything but success is a protocol error here. */
static bool counted(struct load *l, int r)
{
        atomic_fetch_add(&l->calls, 1);
        if (r >= 0)
                return true;
        if (atomic_fetch_add(&l->errors, 1) == 0)
                atomic_store(&l->first_error, r);
        return false;
}

/* A client that makes every kind of control call on timers of its own, as fast as it can. */
static void *caller_run(void *userdata)
{
        struct worker *w = userdata;
        struct load *l = w->load;
        struct timerd *t;
        struct timerd_declaration once, watchdog;
        struct timerd_claim dog, claim;
        struct timerd_timer info;
        struct timerd_status st;
        char name[64];

        if (!counted(l, timerd_connect(l->harness->socket, &t)))
                return NULL;
        timerd_declaration_init(&once, TIMERD_POLICY_ONCE, 0);
        timerd_declaration_init(&watchdog, TIMERD_POLICY_WATCHDOG, 3600 * 1000 * MS);
        snprintf(name, sizeof(name), "dog-%u", w->index);
        counted(l, timerd_register(t, name, &watchdog, NULL, false, &dog));
        for (uint64_t k = 0; !atomic_load(&l->stop); k++) {
                const struct timerd_start later = {.kind = TIMERD_START_AFTER,
                                                   .usec = 3600 * 1000 * MS};
                snprintf(name, sizeof(name), "call-%u-%" PRIu64, w->index, k % 4);
                if (!counted(l, timerd_register(t, name, &once, NULL, true, &claim)))
                        continue;
                counted(l, timerd_schedule(t, &claim, NULL, &later));
                counted(l, timerd_reschedule(t, &claim, NULL, NULL, 0, NULL, NULL));
                counted(l, timerd_get(t, name, TIMERD_OWNER_SELF, &info));
                counted(l, timerd_kick(t, &dog, NULL, NULL));
                if (k % 16 == 0) {
                        struct timerd_timer *mine;
                        long n = timerd_list(t, TIMERD_OWNER_SELF, false, &mine);
                        if (counted(l, (int)n))
                                free(mine);
                }
                if (k % 32 == 0)
                        counted(l, timerd_status(t, &st));
                counted(l, timerd_unregister(t, &claim));
        }
        timerd_close(t);
        return NULL;
}

static void record_lateness(struct load *l, uint64_t usec)
{
        size_t bucket = usec >= LATENESS_MAX ? LATENESS_MAX / LATENESS_BUCKET
                                             : (size_t)(usec / LATENESS_BUCKET);
        atomic_fetch_add(&l->lateness[bucket], 1);
        uint64_t max = atomic_load(&l->lateness_max);
        while (usec > max && !atomic_compare_exchange_weak(&l->lateness_max, &max, usec))
                ;
}

/* A client that takes the firings of its notify timer from a Wait stream and completes each
 * through a second connection. */
static void *waiter_run(void *userdata)
{
        struct worker *w = userdata;
        struct load *l = w->load;
        struct timerd *stream, *control;
        struct timerd_declaration d;
        struct timerd_claim claim;
        char name[64];

        if (!counted(l, timerd_connect(l->harness->socket, &stream)))
                return NULL;
        if (!counted(l, timerd_connect(l->harness->socket, &control))) {
                timerd_close(stream);
                return NULL;
        }
        snprintf(name, sizeof(name), "waited-%u", w->index);
        timerd_declaration_init(&d, TIMERD_POLICY_INTERVAL, WAITER_PERIOD);
        const char *names[] = {name};
        if (counted(l, timerd_register(stream, name, &d, NULL, false, &claim)) &&
            counted(l, timerd_wait_stream(stream, names, 1))) {
                while (!atomic_load(&l->stop)) {
                        struct timerd_firing f;
                        if (!counted(l, timerd_wait_next(stream, &f)))
                                break;
                        uint64_t now = monotonic_usec();
                        record_lateness(l, now > f.deadline_usec ? now - f.deadline_usec : 0);
                        atomic_fetch_add(&l->firings, 1);
                        counted(l, timerd_complete(control, &f.token, TIMERD_OUTCOME_SUCCESS,
                                                   TIMERD_DIRECTIVE_CONTINUE, 0));
                }
        }
        timerd_close(stream);
        timerd_close(control);
        return NULL;
}

static uint64_t lateness_percentile(struct load *l, unsigned permille)
{
        uint64_t total = 0, seen = 0;
        size_t n = sizeof(l->lateness) / sizeof(l->lateness[0]);
        for (size_t i = 0; i < n; i++)
                total += atomic_load(&l->lateness[i]);
        for (size_t i = 0; i < n; i++) {
                seen += atomic_load(&l->lateness[i]);
                if (total > 0 && seen * 1000 >= total * permille)
                        return (i + 1) * LATENESS_BUCKET;
        }
        return 0;
}

static void status_of(int fd, json_object **ret)
{
        *ret = wire_call(fd, "{\"method\":\"io.timerd.Service.Status\"}");
        assert_null(wire_error(*ret));
}

static void test_load(void **state)
{
        struct harness *h = *state;
        struct load l = {.harness = h};
        struct worker callers[N_CALLERS], waiters[N_WAITERS];
        uint64_t seconds = env_u64("TIMERD_LOAD_SECONDS", 10);
        unsigned n_timers = (unsigned)env_u64("TIMERD_LOAD_TIMERS", 100000);
        const char *sanitize = getenv("TIMERD_TEST_SANITIZE");
        bool sanitized = sanitize && sanitize[0] && strcmp(sanitize, "none") != 0;
        json_object *st;

        /* The fleet: alarm timers the service fires and ends by itself, on the open connection
         * that registered them, for another uid than the clients' (whose Lists stay short). */
        int fleet = harness_raw_connect(h);
        char declaration[160];
        snprintf(declaration, sizeof(declaration),
                 "{\"policy\":\"interval\",\"cadence_usec\":%u,\"delivery\":\"alarm\"}",
                 FLEET_PERIOD);
        uint64_t start = monotonic_usec();
        wire_bulk_register(fleet, "fleet", n_timers, declaration, FLEET_OWNER, FLEET_PERIOD);
        print_message("registered %u timers in %" PRIu64 " ms\n", n_timers,
                      (monotonic_usec() - start) / 1000);
        status_of(fleet, &st);
        json_object_put(st);
        status_of(fleet, &st);
        json_object_put(st);
        long fds_before = proc_fd_count(h->pid);

        for (unsigned i = 0; i < N_CALLERS; i++) {
                callers[i] = (struct worker){.load = &l, .index = i};
                assert_int_equal(pthread_create(&callers[i].thread, NULL, caller_run, &callers[i]),
                                 0);
        }
        for (unsigned i = 0; i < N_WAITERS; i++) {
                waiters[i] = (struct worker){.load = &l, .index = i};
                assert_int_equal(pthread_create(&waiters[i].thread, NULL, waiter_run, &waiters[i]),
                                 0);
        }

        sleep(WARMUP_SECONDS);
        long rss_warm = proc_rss_kib(h->pid);
        status_of(fleet, &st);
        uint64_t firings_warm = (uint64_t)wire_int(st, "firings");
        json_object_put(st);
        uint64_t calls_warm = atomic_load(&l.calls);
        start = monotonic_usec();

        /* Buffers and tables settle in the first half; a cost per call shows in both halves. */
        sleep((unsigned)(seconds / 2));
        long rss_mid = proc_rss_kib(h->pid);
        sleep((unsigned)(seconds - seconds / 2));
        uint64_t took = monotonic_usec() - start;
        uint64_t calls = atomic_load(&l.calls) - calls_warm;
        long rss_end = proc_rss_kib(h->pid);
        status_of(fleet, &st);
        uint64_t firings = (uint64_t)wire_int(st, "firings") - firings_warm;

        atomic_store(&l.stop, true);
        /* A waiter blocked in its stream ends when its next firing (50 ms) comes. */
        for (unsigned i = 0; i < N_CALLERS; i++)
                assert_int_equal(pthread_join(callers[i].thread, NULL), 0);
        for (unsigned i = 0; i < N_WAITERS; i++)
                assert_int_equal(pthread_join(waiters[i].thread, NULL), 0);

        print_message("%u clients, %" PRIu64 " s: %" PRIu64 " calls (%" PRIu64 "/s), %" PRIu64
                      " errors\n",
                      N_CALLERS + 2 * N_WAITERS, seconds, calls, calls * 1000000 / took,
                      (uint64_t)atomic_load(&l.errors));
        print_message("firings: %" PRIu64 "/s by the service; lateness p50 %" PRId64
                      " us, p99 %" PRId64 " us, max %" PRId64 " us (Status, whole run)\n",
                      firings * 1000000 / took, wire_int(st, "lateness.p50_usec"),
                      wire_int(st, "lateness.p99_usec"), wire_int(st, "lateness.max_usec"));
        print_message("waiting clients: %" PRIu64 " firings, lateness to the client p50 <%" PRIu64
                      " us, p99 <%" PRIu64 " us, max %" PRIu64 " us\n",
                      (uint64_t)atomic_load(&l.firings), lateness_percentile(&l, 500),
                      lateness_percentile(&l, 990), (uint64_t)atomic_load(&l.lateness_max));
        print_message("slowest iteration %" PRId64
                      " us; RSS %ld KiB after warm-up, %ld KiB half-way, "
                      "%ld KiB at the end\n",
                      wire_int(st, "slowest_iteration_usec"), rss_warm, rss_mid, rss_end);
        json_object_put(st);

        if (atomic_load(&l.errors) > 0)
                fail_msg("%" PRIu64 " calls failed, the first with %s",
                         (uint64_t)atomic_load(&l.errors), timerd_strerror(l.first_error));
        assert_true(calls > 0);
        assert_true(atomic_load(&l.firings) > 0);
        /* Under the same load memory stays flat once settled (here the first half grew 4–5 MiB
         * and the second 24–36 KiB); sanitizers keep freed memory in quarantine. */
        long slack = sanitized ? 256 * 1024 : rss_mid / 40 + 1024;
        if (rss_end > rss_mid + slack)
                fail_msg(
                    "RSS grew from %ld KiB half-way to %ld KiB at the end (after warm-up: %ld)",
                    rss_mid, rss_end, rss_warm);

        /* Every client's connection and pidfd are closed once they are gone. */
        long fds = -1;
        for (int i = 0; i < 500 && (fds = proc_fd_count(h->pid)) != fds_before; i++)
                usleep(10000);
        print_message("descriptors: %ld before the clients, %ld after\n", fds_before, fds);
        assert_int_equal(fds, fds_before);
        close(fleet);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_load, harness_setup, harness_teardown),
        };
        return cmocka_run_group_tests_name(harness_backend(), tests, NULL, NULL);
}
