/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bench/noise.h"

#include <stdio.h>
#include <unistd.h>

#include "bench/harness.h"
#include "tests/integration/schedstat.h"

/* The steal column of cpu<n> in /proc/stat, in microseconds; 0 unreadable. */
static void read_steal(uint64_t ret[2])
{
        long hz = sysconf(_SC_CLK_TCK);
        char line[512];
        FILE *f = fopen("/proc/stat", "re");

        ret[0] = ret[1] = 0;
        if (!f || hz <= 0) {
                if (f)
                        fclose(f);
                return;
        }
        while (fgets(line, sizeof(line), f)) {
                unsigned cpu;
                unsigned long long user, nice, system, idle, iowait, irq, softirq, steal;

                if (sscanf(line, "cpu%u %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &user,
                           &nice, &system, &idle, &iowait, &irq, &softirq, &steal) == 9 &&
                    (cpu == BENCH_CPU_SERVICE || cpu == BENCH_CPU_CLIENT))
                        ret[cpu == BENCH_CPU_CLIENT] = steal * 1000000 / (uint64_t)hz;
        }
        fclose(f);
}

/* A task's counters; 0 when they cannot be read. */
static void read_task(pid_t pid, uint64_t *ret_wait, uint64_t *ret_ran)
{
        struct schedstat st = {};

        (void)schedstat_read(pid, &st);
        *ret_wait = st.waited_usec;
        *ret_ran = st.ran_usec;
}

void noise_read(pid_t service, struct noise *ret)
{
        *ret = (struct noise){.usec = now_usec()};
        read_steal(ret->steal_usec);
        /* The client's thread and the service's main thread, which runs its loop. */
        read_task(0, &ret->client_wait_usec, &ret->client_ran_usec);
        ret->service = service > 0;
        if (ret->service)
                read_task(service, &ret->service_wait_usec, &ret->service_ran_usec);
}

static uint64_t delta(uint64_t start, uint64_t end)
{
        return end > start ? end - start : 0;
}

void noise_add(struct noise *acc, const struct noise *start, const struct noise *end)
{
        for (int cpu = 0; cpu < 2; cpu++)
                acc->steal_usec[cpu] += delta(start->steal_usec[cpu], end->steal_usec[cpu]);
        acc->client_wait_usec += delta(start->client_wait_usec, end->client_wait_usec);
        acc->service_wait_usec += delta(start->service_wait_usec, end->service_wait_usec);
        acc->client_ran_usec += delta(start->client_ran_usec, end->client_ran_usec);
        acc->service_ran_usec += delta(start->service_ran_usec, end->service_ran_usec);
        acc->usec += delta(start->usec, end->usec);
        acc->service |= end->service;
}

void noise_format(const struct noise *n, char *buf, size_t size)
{
        double s = n->usec > 0 ? (double)n->usec / 1e6 : 1;
        int len =
            snprintf(buf, size, "steal %.1f %% / %.1f %% (CPU %d / %d), waited for a CPU %.1f",
                     (double)n->steal_usec[0] / 1e4 / s, (double)n->steal_usec[1] / 1e4 / s,
                     BENCH_CPU_SERVICE, BENCH_CPU_CLIENT, (double)n->client_wait_usec / 1e3 / s);

        if (len < 0 || (size_t)len >= size)
                return;
        if (n->service)
                snprintf(buf + len, size - (size_t)len, " / %.1f ms per s (client / service)",
                         (double)n->service_wait_usec / 1e3 / s);
        else
                snprintf(buf + len, size - (size_t)len, " ms per s (client)");
}
