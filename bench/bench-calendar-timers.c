/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * bench-calendar-timers TIMERD [--quick]: calendar timers in the service (issue 17).
 * N calendar timers (100k; --quick 20k) on one expression in Europe/Berlin, registered pipelined:
 * the service's RSS per calendar timer beside a once timer's (the same N, in a service of its
 * own). Then SIGHUP, which reloads the zones and re-evaluates every one of them: while it runs,
 * a second client calls Status back to back, and the longest round trip is how long the loop
 * served nobody (with Status's slowest_iteration_usec since the start, registering included, and
 * the service CPU the pass took).
 * Prints rows of bench/run's table on stdout, details on stderr.
 */

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bulk.h"
#include "bench/calls.h"
#include "bench/daemon.h"
#include "bench/harness.h"
#include "bench/raw-conn.h"

#define EXPRESSION "*-*-* 03:00:00"
#define ZONE       "Europe/Berlin"
#define PASS_MAX   (60 * UINT64_C(1000000))

static uint64_t far_deadline(void *userdata, size_t i)
{
        (void)userdata;
        (void)i;
        return now_usec() + 3600 * UINT64_C(1000000);
}

static uint64_t status_u64(struct raw_conn *c, const char *field)
{
        char *reply = raw_call(c, CALL_STATUS);
        uint64_t v;

        if (!reply || !reply_u64(reply, field, &v))
                die("Status without %s: %.200s", field, reply ? reply : "(closed)");
        free(reply);
        return v;
}

/* VmRSS growth per timer of n timers of `spec` in a fresh service. */
static double rss_per_timer(const char *binary, struct bulk_spec *spec, struct daemon *d,
                            struct raw_conn *c)
{
        daemon_start(&(struct daemon_options){.binary = binary, .backend = "auto"}, d);
        raw_conn_open(d->socket, 1u << 20, c);
        uint64_t rss0 = daemon_rss_bytes(d);
        bulk_register(c, 1, spec);
        return ((double)daemon_rss_bytes(d) - (double)rss0) / (double)spec->n;
}

struct pass {
        uint64_t wall_usec, longest_call_usec, slowest_iteration_usec, cpu_usec, calls;
};

/* SIGHUP, then Status back to back until the re-evaluation is counted. */
static void reevaluate(struct daemon *d, struct raw_conn *c, struct pass *ret)
{
        uint64_t before = status_u64(c, "calendar_reevaluations"), cpu0 = daemon_cpu_nsec(d);
        uint64_t start = now_usec();

        *ret = (struct pass){};
        if (kill(d->pid, SIGHUP) < 0)
                die("SIGHUP: %m");
        for (;;) {
                uint64_t t0 = now_usec();
                uint64_t count = status_u64(c, "calendar_reevaluations");
                uint64_t took = now_usec() - t0;

                ret->calls++;
                if (took > ret->longest_call_usec)
                        ret->longest_call_usec = took;
                if (count > before)
                        break;
                if (now_usec() - start > PASS_MAX)
                        die("the re-evaluation was not counted within %" PRIu64 " s",
                            PASS_MAX / 1000000);
        }
        ret->wall_usec = now_usec() - start;
        ret->cpu_usec = (daemon_cpu_nsec(d) - cpu0) / 1000;
        /* Since the start: registering counts too, so it bounds the pass's from above. */
        ret->slowest_iteration_usec = status_u64(c, "slowest_iteration_usec");
}

int main(int argc, char **argv)
{
        size_t n = 100000;
        struct bulk_spec once = {.prefix = "o", .deadline = far_deadline};
        struct bulk_spec calendar = {.prefix = "c", .calendar = EXPRESSION, .timezone = ZONE};
        struct raw_conn c, probe;
        struct daemon d;
        struct pass p;

        if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "--quick") != 0))
                die("usage: bench-calendar-timers TIMERD [--quick]");
        if (argc == 3)
                n = 20000;
        once.n = calendar.n = n;
        bool pinned = bench_pin(0, BENCH_CPU_CLIENT);
        FILE *cpuinfo = fopen("/proc/cpuinfo", "re");
        char line[256], model[256] = "?";
        while (cpuinfo && fgets(line, sizeof(line), cpuinfo))
                if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
                        snprintf(model, sizeof(model), "%s", strchr(line, ':') + 2);
                        model[strcspn(model, "\n")] = 0;
                        break;
                }
        if (cpuinfo)
                fclose(cpuinfo);
        note("calendar timers: %zu, \"%s\" in %s; CPU %s; %s", n, EXPRESSION, ZONE, model,
             pinned ? "service on CPU 0, client on CPU 1" : "not pinned (one CPU)");

        double once_rss = rss_per_timer(argv[1], &once, &d, &c);
        raw_conn_close(&c);
        daemon_stop(&d);
        double calendar_rss = rss_per_timer(argv[1], &calendar, &d, &c);
        raw_conn_open(d.socket, 1u << 20, &probe);
        reevaluate(&d, &probe, &p);
        raw_conn_close(&probe);
        raw_conn_close(&c);
        daemon_stop(&d);

        note("RSS per timer: calendar %.0f B, once %.0f B", calendar_rss, once_rss);
        note("re-evaluation of %zu: %.1f ms wall, service CPU %.1f ms, %" PRIu64
             " Status calls meanwhile, longest %.2f ms; slowest loop iteration %.2f ms",
             n, (double)p.wall_usec / 1000, (double)p.cpu_usec / 1000, p.calls,
             (double)p.longest_call_usec / 1000, (double)p.slowest_iteration_usec / 1000);
        table_row("calendar timers | %zuk on one expression: RSS per timer | %.0f B | once timer "
                  "%.0f B | %.2f× | shared schedule: ≤ 2× once | %s",
                  n / 1000, calendar_rss, once_rss, calendar_rss / once_rss,
                  verdict(calendar_rss <= 2 * once_rss));
        table_row("calendar timers | %zuk re-evaluated (SIGHUP): longest Status round trip "
                  "meanwhile (slowest loop iteration since start) | %.2f ms (%.2f ms); pass %.0f "
                  "ms, service "
                  "CPU %.0f ms | — | — | ≤ 10 ms (%s) | %s",
                  n / 1000, (double)p.longest_call_usec / 1000,
                  (double)p.slowest_iteration_usec / 1000, (double)p.wall_usec / 1000,
                  (double)p.cpu_usec / 1000, model, verdict(p.longest_call_usec <= 10000));
        return 0;
}
