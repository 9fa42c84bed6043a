/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * B5, start-up: the time from exec to READY=1 (sent to a NOTIFY_SOCKET this bench listens on),
 * with no timers, then with 100k retained timers (--full: and 1M; --quick: 10k) left in the state
 * directory by a previous run of the service. Status says whether they came back; a service
 * without a journal is reported as not measurable. Filling the state directory is timed too.
 * Usage: bench-startup TIMERD [--quick | --full]
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bulk.h"
#include "bench/calls.h"
#include "bench/daemon.h"
#include "bench/harness.h"
#include "bench/raw-conn.h"
#include "bench/stats.h"

#define EMPTY_STARTS    10
#define RETAINED_STARTS 3
#define HOUR_USEC       (3600 * UINT64_C(1000000))
/* Retained registrations are filled in over many connections: they share the journal's commits. */
#define FILL_CONNS 64

static uint64_t far_deadline(void *userdata, size_t i)
{
        const uint64_t *base = userdata;

        return *base + (((uint64_t)i + 1) * UINT64_C(0x9e3779b97f4a7c15) >> 20) % HOUR_USEC;
}

struct status {
        uint64_t timers;
        char store[64];
};

static void status_read(const struct daemon *d, struct status *ret)
{
        struct raw_conn c;

        raw_conn_open(d->socket, 1u << 20, &c);
        char *reply = raw_call(&c, CALL_STATUS);
        if (!reply || !reply_u64(reply, "timers", &ret->timers))
                die("Status failed: %s", reply ? reply : "connection closed");
        const char *store = strstr(reply, "\"store\":\"");
        snprintf(ret->store, sizeof(ret->store), "%s", store ? store + 9 : "?");
        ret->store[strcspn(ret->store, "\"")] = '\0';
        free(reply);
        raw_conn_close(&c);
}

/* retained: issue 21's target, READY=1 within 1 s of exec with 1M retained timers, is shown
 * (judged at 1M). */
static void report(const char *what, const double *ms, size_t n, bool retained, bool judged)
{
        struct spread s;

        spread_of(ms, n, &s);
        note("start-up, %s: %.1f ms (%.1f-%.1f) over %zu starts", what, s.median, s.min, s.max, n);
        table_row("B5 start-up | exec → READY=1, %s | %.1f ms (%.1f–%.1f, %zu starts) | — | — | %s "
                  "| %s",
                  what, s.median, s.min, s.max, n, retained ? "1M retained: ≤ 1 s" : "—",
                  judged ? verdict(s.median <= 1000) : "(info)");
}

/* Fill a state directory with n retained timers, then restart on it. False when they did not
 * come back. */
static bool measure_retained(const char *binary, size_t n)
{
        struct raw_conn conns[FILL_CONNS];
        double ms[RETAINED_STARTS];
        struct status st;
        struct daemon d;
        char dir[256], what[64];
        uint64_t base = now_usec() + HOUR_USEC;

        daemon_dir_new(dir, sizeof(dir));
        daemon_start(&(struct daemon_options){.binary = binary, .backend = "auto", .dir = dir}, &d);
        for (size_t i = 0; i < FILL_CONNS; i++)
                raw_conn_open(d.socket, 1u << 20, &conns[i]);
        uint64_t start = now_usec(), cpu = daemon_cpu_nsec(&d);
        bulk_register(conns, FILL_CONNS,
                      &(struct bulk_spec){.prefix = "r",
                                          .n = n,
                                          .retained = true,
                                          .deadline = far_deadline,
                                          .userdata = &base});
        double seconds = (double)(now_usec() - start) / 1e6;
        double cpu_usec = (double)(daemon_cpu_nsec(&d) - cpu) / 1000 / (double)n;
        note("%zu retained timers registered over %d connections in %.2f s (%.0f/s), service CPU "
             "%.1f us each",
             n, FILL_CONNS, seconds, (double)n / seconds, cpu_usec);
        table_row("B5 start-up | filling the journal: %zuk retained Register calls over %d "
                  "connections | %.1f s (%.1f k/s); service CPU %.1f µs/call | — | — | — | (info)",
                  n / 1000, FILL_CONNS, seconds, (double)n / seconds / 1000, cpu_usec);
        for (size_t i = 0; i < FILL_CONNS; i++)
                raw_conn_close(&conns[i]);
        daemon_stop(&d);

        snprintf(what, sizeof(what), "%zuk retained timers", n / 1000);
        for (int i = 0; i < RETAINED_STARTS; i++) {
                daemon_start(
                    &(struct daemon_options){.binary = binary, .backend = "auto", .dir = dir}, &d);
                ms[i] = (double)d.start_usec / 1000;
                status_read(&d, &st);
                daemon_stop(&d);
                if (st.timers != n) {
                        note("%" PRIu64 " of %zu retained timers came back (store: %s)", st.timers,
                             n, st.store);
                        table_row("B5 start-up | exec → READY=1, %s | n/a: %" PRIu64
                                  " of %zu came back (Status store \"%s\"; the service does not "
                                  "replay a journal yet) | — | — | — | n/a",
                                  what, st.timers, n, st.store);
                        daemon_dir_remove(dir);
                        return false;
                }
        }
        daemon_dir_remove(dir);
        report(what, ms, RETAINED_STARTS, true, n == 1000000);
        return true;
}

int main(int argc, char **argv)
{
        double ms[EMPTY_STARTS];
        size_t retained = 100000;
        bool full = false;

        if (argc < 2)
                die("usage: bench-startup TIMERD [--quick | --full]");
        if (argc > 2 && strcmp(argv[2], "--quick") == 0)
                retained = 10000;
        if (argc > 2 && strcmp(argv[2], "--full") == 0)
                full = true;
        bool pinned = bench_pin(0, BENCH_CPU_CLIENT);
        note("B5: start-up; %s",
             pinned ? "service on CPU 0, bench on CPU 1" : "not pinned (one CPU)");

        for (const char *const *backend = (const char *const[]){"io_uring", "timerfd", NULL};
             *backend; backend++) {
                char what[64];
                struct daemon d;

                daemon_start(&(struct daemon_options){.binary = argv[1], .backend = *backend}, &d);
                daemon_stop(&d);
                for (int i = 0; i < EMPTY_STARTS; i++) {
                        daemon_start(
                            &(struct daemon_options){.binary = argv[1], .backend = *backend}, &d);
                        ms[i] = (double)d.start_usec / 1000;
                        daemon_stop(&d);
                }
                snprintf(what, sizeof(what), "0 timers, %s", *backend);
                report(what, ms, EMPTY_STARTS, false, false);
        }
        if (measure_retained(argv[1], retained) && full)
                measure_retained(argv[1], 1000000);
        return EXIT_SUCCESS;
}
