/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * A and B4, firing throughput per backend: 100k once timers registered pipelined, due within one
 * second (random deadlines), delivered to libtimerd Wait streams (timerd_wait_stream_async) on
 * WAITERS connections — exact, and with accuracy 1 ms (coalescing) — and a burst of 100k due at
 * the same instant. For each: the rate, the service's wake-ups (Status `wakeups`, the loop's
 * returns from the kernel wait), lateness (when libtimerd hands the firing to the client's
 * callback − deadline) with the part spent before the service dispatched (fired_usec −
 * deadline), and the service's CPU time per arm and per firing. Each is run three times,
 * backends interleaved; the run with the median p99 is reported with the ranges.
 *
 * The rate: spread over a second, the deadlines themselves offer n / (last deadline − first
 * deadline) firings per second, and no receiver can take more; it is delivered at n / (last
 * receipt − first deadline), and the two differ by how far the last firing trailed the last
 * deadline. So the spread rows show delivered against offered (kept up when ≥ 99 %) and the
 * lateness against its target; the capacity, how many firings per second the service can hand
 * out at all, is the burst row's (all due at once: n / (last receipt − deadline)).
 * Usage: bench-firing TIMERD [--quick]
 */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bulk.h"
#include "bench/calls.h"
#include "bench/daemon.h"
#include "bench/harness.h"
#include "bench/raw-conn.h"
#include "bench/stats.h"
#include "timerd/timerd.h"

#define WAITERS       4
#define SPREAD_USEC   1000000
#define REPLY_MAX     (1u << 20)
#define COALESCE_USEC 1000
#define MAX_RUNS      3
#define FULL_N        100000 /* timers per run; --quick: QUICK_N */
#define QUICK_N       20000

struct shape {
        const char *name;
        uint64_t accuracy_usec;
        bool burst; /* all due at the same instant */
};

static const struct shape shapes[] = {
    {"due within 1 s, exact", 0, false},
    {"due within 1 s, accuracy 1 ms", COALESCE_USEC, false},
    {"burst: all due at once, exact", 0, true},
};
#define N_SHAPES (sizeof(shapes) / sizeof(shapes[0]))

struct plan {
        uint64_t first_deadline;
        bool burst;
};

static uint64_t plan_deadline(void *userdata, size_t i)
{
        const struct plan *p = userdata;
        uint64_t h = (uint64_t)i * UINT64_C(0x9e3779b97f4a7c15);

        return p->burst ? p->first_deadline : p->first_deadline + (h >> 32) % SPREAD_USEC;
}

struct receiver {
        struct samples lateness;
        struct samples dispatch; /* fired_usec − deadline: the service's own share */
        size_t received;
        uint64_t last_receive;
        uint64_t first_deadline, last_deadline; /* of the firings received */
};

static void on_firing(struct timerd *t, int error, const struct timerd_firing *f, void *userdata)
{
        struct receiver *r = userdata;
        uint64_t now = now_usec();
        (void)t;

        if (error < 0)
                die("a Wait stream ended: %s", timerd_strerror(error));
        samples_add(&r->lateness, now > f->deadline_usec ? now - f->deadline_usec : 0);
        samples_add(&r->dispatch,
                    f->fired_usec > f->deadline_usec ? f->fired_usec - f->deadline_usec : 0);
        if (r->received++ == 0 || f->deadline_usec < r->first_deadline)
                r->first_deadline = f->deadline_usec;
        if (f->deadline_usec > r->last_deadline)
                r->last_deadline = f->deadline_usec;
        r->last_receive = now;
}

static struct timerd *open_stream(const char *socket, struct receiver *rcv)
{
        struct timerd *t;
        int r = timerd_connect(socket, &t);

        if (r >= 0)
                r = timerd_wait_stream_async(t, NULL, 0, on_firing, rcv);
        if (r >= 0)
                r = timerd_process(t);
        if (r < 0)
                die("a Wait stream: %s", timerd_strerror(r));
        return t;
}

static void status_counters(struct raw_conn *c, uint64_t *ret_wakeups, uint64_t *ret_firings)
{
        char *reply = raw_call(c, CALL_STATUS);

        if (!reply)
                die("timerd closed the connection");
        if (!reply_u64(reply, "wakeups", ret_wakeups) || !reply_u64(reply, "firings", ret_firings))
                die("Status without wakeups or firings: %s", reply);
        free(reply);
}

struct result {
        double arm_ns, fire_ns; /* service CPU per operation */
        double firings_per_sec; /* delivered: n / (last receipt − first deadline) */
        double offered_per_sec; /* n / (last deadline − first deadline); 0 for a burst */
        uint64_t tail_usec;     /* last receipt − last deadline */
        uint64_t wakeups, firings;
        uint64_t late[4];     /* p50, p99, p99.9, max */
        uint64_t dispatch[2]; /* p50, p99 */
        bool overlapped;      /* registering was not done before the first deadline */
};

/*
 * usec_per_register: how long registering took per timer in the previous run on this backend;
 * the deadlines leave twice that (the machine may be busier now), and it is updated.
 */
static void run_shape(const char *binary, const char *backend, const struct shape *shape, size_t n,
                      double *usec_per_register, struct result *ret)
{
        struct timerd *waiters[WAITERS];
        struct raw_conn registrar;
        struct receiver rcv = {};
        struct daemon d;
        uint64_t wakeups0, firings0, wakeups1, firings1;

        daemon_start(&(struct daemon_options){.binary = binary, .backend = backend}, &d);
        samples_init(&rcv.lateness, n);
        samples_init(&rcv.dispatch, n);
        for (int i = 0; i < WAITERS; i++)
                waiters[i] = open_stream(d.socket, &rcv);
        raw_conn_open(d.socket, REPLY_MAX, &registrar);

        uint64_t start = now_usec();
        struct plan plan = {
            .first_deadline = start + 200000 + (uint64_t)(2 * *usec_per_register * (double)n),
            .burst = shape->burst,
        };
        uint64_t cpu0 = daemon_cpu_nsec(&d);
        bulk_register(&registrar, 1,
                      &(struct bulk_spec){.prefix = "f",
                                          .n = n,
                                          .accuracy_usec = shape->accuracy_usec,
                                          .deadline = plan_deadline,
                                          .userdata = &plan});
        uint64_t cpu1 = daemon_cpu_nsec(&d);
        ret->overlapped = now_usec() >= plan.first_deadline;
        *usec_per_register = (double)(now_usec() - start) / (double)n;
        status_counters(&registrar, &wakeups0, &firings0);

        while (rcv.received < n) {
                struct pollfd p[WAITERS];
                for (int i = 0; i < WAITERS; i++)
                        p[i] = (struct pollfd){.fd = timerd_get_fd(waiters[i]),
                                               .events = (short)timerd_get_events(waiters[i])};
                /* Nothing is due before the first deadline; after it, 10 s of silence is a hang. */
                uint64_t now = now_usec();
                int timeout_ms =
                    10000 +
                    (plan.first_deadline > now ? (int)((plan.first_deadline - now) / 1000) : 0);
                int r = poll(p, WAITERS, timeout_ms);
                if (r < 0)
                        die("poll: %m");
                if (r == 0)
                        die("no firing for 10 s (%zu of %zu received)", rcv.received, n);
                for (int i = 0; i < WAITERS; i++)
                        if (p[i].revents && (r = timerd_process(waiters[i])) < 0)
                                die("a waiter's connection: %s", timerd_strerror(r));
        }
        uint64_t cpu2 = daemon_cpu_nsec(&d);
        status_counters(&registrar, &wakeups1, &firings1);

        uint64_t span = rcv.last_receive - rcv.first_deadline;
        uint64_t offered_span = rcv.last_deadline - rcv.first_deadline;
        *ret = (struct result){
            .arm_ns = (double)(cpu1 - cpu0) / (double)n,
            .fire_ns = (double)(cpu2 - cpu1) / (double)n,
            .firings_per_sec = (double)n / ((double)(span ? span : 1) / 1e6),
            .offered_per_sec = offered_span ? (double)n / ((double)offered_span / 1e6) : 0,
            .tail_usec = rcv.last_receive - rcv.last_deadline,
            .wakeups = wakeups1 - wakeups0,
            .firings = firings1 - firings0,
            .late = {samples_percentile(&rcv.lateness, 50), samples_percentile(&rcv.lateness, 99),
                     samples_percentile(&rcv.lateness, 99.9), samples_max(&rcv.lateness)},
            .dispatch = {samples_percentile(&rcv.dispatch, 50),
                         samples_percentile(&rcv.dispatch, 99)},
            .overlapped = ret->overlapped,
        };
        for (int i = 0; i < WAITERS; i++)
                timerd_close(waiters[i]);
        raw_conn_close(&registrar);
        daemon_stop(&d);
        samples_done(&rcv.lateness);
        samples_done(&rcv.dispatch);
}

static void note_run(const char *backend, const struct shape *shape, const struct result *r)
{
        note("%-8s %-32s %8.0f firings/s (offered %.0f)  wakeups %7" PRIu64 " firings %7" PRIu64
             "  late p50 %6" PRIu64 " p99 %6" PRIu64 " p99.9 %6" PRIu64 " max %6" PRIu64
             " us  (service part p50 %" PRIu64 " p99 %" PRIu64 ")  CPU arm %.0f ns, fire %.0f ns%s",
             backend, shape->name, r->firings_per_sec, r->offered_per_sec, r->wakeups, r->firings,
             r->late[0], r->late[1], r->late[2], r->late[3], r->dispatch[0], r->dispatch[1],
             r->arm_ns, r->fire_ns,
             r->overlapped ? "  (registering overlapped the first deadlines)" : "");
}

/* The run with the median p99 stands for all; the ranges say how far the others were. */
static void report(const char *backend, const struct shape *shape, size_t n,
                   const struct result *runs, size_t n_runs)
{
        double p99[MAX_RUNS], rates[MAX_RUNS];
        struct spread sp, sr;
        const struct result *r = &runs[0];

        for (size_t i = 0; i < n_runs; i++) {
                p99[i] = (double)runs[i].late[1];
                rates[i] = runs[i].firings_per_sec;
        }
        spread_of(p99, n_runs, &sp);
        spread_of(rates, n_runs, &sr);
        for (size_t i = 0; i < n_runs; i++)
                if (p99[i] == sp.median)
                        r = &runs[i];
        if (r->late[1] != (uint64_t)sp.median)
                for (size_t i = 0; i < n_runs; i++)
                        if (fabs(p99[i] - sp.median) < fabs((double)r->late[1] - sp.median))
                                r = &runs[i];

        double per_wakeup = r->wakeups ? (double)r->firings / (double)r->wakeups : 0;
        bool coalesce_met = r->wakeups * 50 <= r->firings;
        bool overlapped = false;
        for (size_t i = 0; i < n_runs; i++)
                overlapped |= runs[i].overlapped;
        char rate[160];
        if (shape->burst)
                snprintf(rate, sizeof(rate), "capacity %.0f k/s (all due at once)",
                         r->firings_per_sec / 1000);
        else
                snprintf(rate, sizeof(rate),
                         "delivered %.0f k/s of %.0f k/s offered (%.1f %%; the last %.1f ms after "
                         "the last deadline)",
                         r->firings_per_sec / 1000, r->offered_per_sec / 1000,
                         100 * r->firings_per_sec / r->offered_per_sec,
                         (double)r->tail_usec / 1000);
        const char *target = "(capacity)", *met = "(info)";
        if (!shape->burst && shape->accuracy_usec > 0) {
                target = "wake-ups ≤ firings / 50";
                met = verdict(coalesce_met);
        } else if (!shape->burst) {
                /* Issue 21's row is 100k; a --quick run's 20k is shown, not judged. */
                target = "100k: p99 at the client ≤ 1 ms, kept up (≥ 99 % of offered)";
                met = n == FULL_N ? verdict(r->late[1] <= 1000 &&
                                            r->firings_per_sec >= 0.99 * r->offered_per_sec)
                                  : "(info)";
        }

        table_row("A/B4 firing | %zuk %s, %s, libtimerd, %d streams: rate · wake-ups · lateness "
                  "at the client p50 / p99 / p99.9 / max · service CPU per arm / per firing | %s · "
                  "%" PRIu64 " wake-ups for %" PRIu64 " firings (%.0f per wake-up) · %" PRIu64
                  " / %" PRIu64 " / %" PRIu64 " / %" PRIu64 " µs (in the service: p50 %" PRIu64
                  ", p99 %" PRIu64 ") · %.1f / %.1f µs; %zu runs: p99 %.0f–%.0f µs, %.0f–%.0f "
                  "k/s%s | — | — | %s | %s",
                  n / 1000, shape->name, backend, WAITERS, rate, r->wakeups, r->firings, per_wakeup,
                  r->late[0], r->late[1], r->late[2], r->late[3], r->dispatch[0], r->dispatch[1],
                  r->arm_ns / 1000, r->fire_ns / 1000, n_runs, sp.min, sp.max, sr.min / 1000,
                  sr.max / 1000, overlapped ? " (registering overlapped the first deadlines)" : "",
                  target, met);
}

int main(int argc, char **argv)
{
        static const char *const backends[] = {"io_uring", "timerfd"};
        struct result results[2][MAX_RUNS];
        double usec_per_register[2] = {25, 25};
        size_t n = FULL_N, n_runs = MAX_RUNS;

        if (argc < 2)
                die("usage: bench-firing TIMERD [--quick]");
        if (argc > 2 && strcmp(argv[2], "--quick") == 0) {
                n = QUICK_N;
                n_runs = 1;
        }
        bool pinned = bench_pin(0, BENCH_CPU_CLIENT);
        note("A/B4: firing throughput, %zu timers, %d streamed waiters, %zu runs; %s", n, WAITERS,
             n_runs, pinned ? "service on CPU 0, client on CPU 1" : "not pinned (one CPU)");
        for (size_t s = 0; s < N_SHAPES; s++) {
                for (size_t i = 0; i < n_runs; i++)
                        for (size_t b = 0; b < 2; b++) {
                                run_shape(argv[1], backends[b], &shapes[s], n,
                                          &usec_per_register[b], &results[b][i]);
                                note_run(backends[b], &shapes[s], &results[b][i]);
                        }
                for (size_t b = 0; b < 2; b++)
                        report(backends[b], &shapes[s], n, results[b], n_runs);
        }
        return EXIT_SUCCESS;
}
