/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * What a program using libtimerd gets from a service that is already running (the system one, or
 * $TIMERD_SOCKET): B6 runs it inside the container beside systemd-run. Prints numbers only, on
 * one line of stdout, for the caller to aggregate.
 *
 *   bench-libtimerd register N [transient]
 *       N one-shot timers 1 h out (retained unless `transient`), registered synchronously on one
 *       connection: prints the wall time of the N calls and the service's CPU time in them, in µs.
 *       Then unregisters them, untimed.
 *   bench-libtimerd lateness
 *       One one-shot timer 1 s out, waited for: prints, in µs after its deadline, when the
 *       waiting client got the firing and when the service fired it.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <timerd/timerd.h>

#include "bench/harness.h"

#define HOUR_USEC   (3600 * UINT64_C(1000000))
#define SECOND_USEC UINT64_C(1000000)

static struct timerd *connect_service(void)
{
        struct timerd *t;
        int r = timerd_connect(NULL, &t);

        if (r < 0)
                die("cannot connect to %s: %s", timerd_default_socket(), timerd_strerror(r));
        return t;
}

static void check(int r, const char *call)
{
        if (r < 0)
                die("%s: %s", call, timerd_strerror(r));
}

/* The service's process CPU clock: the same on-CPU time as /proc/<pid>/task/<tid>/schedstat. */
static clockid_t service_cpu_clock(struct timerd *t)
{
        struct timerd_status status;
        clockid_t clock;

        check(timerd_status(t, &status), "Status");
        if (clock_getcpuclockid((pid_t)status.pid, &clock) != 0)
                die("no CPU clock for timerd (pid %" PRIu64 ")", status.pid);
        return clock;
}

static uint64_t cpu_usec(clockid_t clock)
{
        struct timespec ts;

        if (clock_gettime(clock, &ts) < 0)
                die("clock_gettime of timerd's CPU clock: %m");
        return (uint64_t)ts.tv_sec * SECOND_USEC + (uint64_t)ts.tv_nsec / 1000;
}

static void measure_register(size_t n, enum timerd_lifetime lifetime)
{
        struct timerd *t = connect_service();
        struct timerd_claim *claims = xcalloc(n, sizeof(*claims));
        struct timerd_start start = {.kind = TIMERD_START_AFTER, .usec = HOUR_USEC};
        struct timerd_declaration d;
        clockid_t service_cpu = service_cpu_clock(t);
        char name[64];

        timerd_declaration_init(&d, TIMERD_POLICY_ONCE, 0);
        d.lifetime = lifetime;
        uint64_t cpu_before = cpu_usec(service_cpu);
        uint64_t wall_before = now_usec();
        for (size_t i = 0; i < n; i++) {
                snprintf(name, sizeof(name), "b6-libtimerd-%zu", i);
                check(timerd_register(t, name, &d, &start, false, &claims[i]), "Register");
        }
        uint64_t wall = now_usec() - wall_before;
        uint64_t cpu = cpu_usec(service_cpu) - cpu_before;
        for (size_t i = 0; i < n; i++)
                check(timerd_unregister(t, &claims[i]), "Unregister");
        free(claims);
        timerd_close(t);
        printf("%" PRIu64 " %" PRIu64 "\n", wall, cpu);
}

static void measure_lateness(void)
{
        struct timerd *t = connect_service();
        struct timerd_start start = {.kind = TIMERD_START_AFTER, .usec = SECOND_USEC};
        const char *name = "b6-libtimerd-lateness";
        struct timerd_declaration d;
        struct timerd_firing f;
        struct timerd_claim claim;

        timerd_declaration_init(&d, TIMERD_POLICY_ONCE, 0);
        check(timerd_register(t, name, &d, &start, true, &claim), "Register");
        check(timerd_wait(t, &name, 1, 10 * SECOND_USEC, &f), "Wait");
        uint64_t received = now_usec();
        check(timerd_complete(t, &f.token, TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_STOP, 0),
              "Complete");
        check(timerd_unregister(t, &claim), "Unregister");
        timerd_close(t);
        printf("%" PRId64 " %" PRId64 "\n", (int64_t)(received - f.deadline_usec),
               (int64_t)(f.fired_usec - f.deadline_usec));
}

static _Noreturn void usage(void)
{
        die("usage: bench-libtimerd register N [transient] | lateness");
}

int main(int argc, char **argv)
{
        if (argc >= 3 && argc <= 4 && strcmp(argv[1], "register") == 0) {
                char *end;
                unsigned long long n = strtoull(argv[2], &end, 10);

                if (*end != '\0' || n == 0 || n > 1000000)
                        usage();
                if (argc == 4 && strcmp(argv[3], "transient") != 0)
                        usage();
                measure_register((size_t)n,
                                 argc == 4 ? TIMERD_LIFETIME_TRANSIENT : TIMERD_LIFETIME_RETAINED);
        } else if (argc == 2 && strcmp(argv[1], "lateness") == 0) {
                measure_lateness();
        } else {
                usage();
        }
        return EXIT_SUCCESS;
}
