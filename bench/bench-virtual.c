/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The virtual clock: virtual days per real second for 1k hourly after-completion timers on a
 * timerd --clock virtual, as a client test suite drives them: Advance one virtual hour, take
 * each firing (Wait) and complete it (Complete), again. The timers are spread over the hour, so
 * that each firing is a step of its own (24k steps and 48k calls a virtual day). The service's
 * CPU time per virtual day is reported beside: on a loaded machine the real time measures the
 * scheduler as much as timerd.
 * Usage: bench-virtual TIMERD [--quick]
 */

#include <stdio.h>
#include <string.h>

#include "bench/daemon.h"
#include "bench/harness.h"
#include "timerd/timerd-test.h"
#include "timerd/timerd.h"

#define TIMERS    1000
#define HOUR_USEC (3600 * UINT64_C(1000000))
#define DAY_USEC  (24 * HOUR_USEC)

static void register_timers(struct timerd *t)
{
        struct timerd_declaration d;
        struct timerd_claim claim;
        char name[32];

        timerd_declaration_init(&d, TIMERD_POLICY_AFTER_COMPLETION, HOUR_USEC);
        for (unsigned i = 0; i < TIMERS; i++) {
                struct timerd_start start = {.kind = TIMERD_START_AFTER,
                                             .usec = HOUR_USEC / TIMERS * (i + 1)};
                snprintf(name, sizeof(name), "t%04u", i);
                int r = timerd_register(t, name, &d, &start, false, &claim);
                if (r < 0)
                        die("Register %s: %s", name, timerd_strerror(r));
        }
}

/* The n firings an advance left pending, each taken and completed. */
static void complete_firings(struct timerd *t, uint64_t n)
{
        struct timerd_firing f;

        for (uint64_t i = 0; i < n; i++) {
                int r = timerd_wait(t, NULL, 0, 0, &f);
                if (r >= 0)
                        r = timerd_complete(t, &f.token, TIMERD_OUTCOME_SUCCESS,
                                            TIMERD_DIRECTIVE_CONTINUE, 0);
                if (r < 0)
                        die("Wait/Complete: %s", timerd_strerror(r));
        }
}

int main(int argc, char **argv)
{
        bool quick = argc > 2 && strcmp(argv[2], "--quick") == 0;
        unsigned days = quick ? 1 : 3;
        uint64_t firings = 0, n;
        struct daemon d;
        struct timerd *t;

        if (argc < 2)
                die("usage: bench-virtual TIMERD [--quick]");
        bench_pin(0, BENCH_CPU_CLIENT);
        daemon_start(
            &(struct daemon_options){.binary = argv[1], .backend = "auto", .virtual_clock = true},
            &d);
        int r = timerd_connect(d.socket, &t);
        if (r < 0)
                die("connect: %s", timerd_strerror(r));
        register_timers(t);

        uint64_t cpu0 = daemon_cpu_nsec(&d), start = now_nsec();
        for (unsigned hour = 0; hour < days * 24; hour++) {
                r = timerd_test_advance(t, HOUR_USEC, &n);
                if (r < 0)
                        die("Advance: %s", timerd_strerror(r));
                complete_firings(t, n);
                firings += n;
        }
        double seconds = (double)(now_nsec() - start) / 1e9;
        double cpu = (double)(daemon_cpu_nsec(&d) - cpu0) / 1e9;
        if (firings != (uint64_t)days * 24 * TIMERS)
                die("%llu firings over %u virtual days, expected %llu", (unsigned long long)firings,
                    days, (unsigned long long)days * 24 * TIMERS);
        note("virtual clock: %u virtual days of %u hourly timers (%llu firings) in %.3f s, service "
             "CPU %.3f s",
             days, TIMERS, (unsigned long long)firings, seconds, cpu);
        table_row(
            "virtual clock | %u hourly timers, virtual days per real second (Advance an hour, "
            "Wait and Complete each firing; %u days) | %.2f days/s (%.0f firings/s; service CPU "
            "%.1f ms per virtual "
            "day) | — | — | — | (info)",
            TIMERS, days, days / seconds, (double)firings / seconds, cpu * 1e3 / days);
        timerd_close(t);
        daemon_stop(&d);
        return 0;
}
