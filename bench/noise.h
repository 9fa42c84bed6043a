/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the machine took from a measurement while it ran, read from counters and so not
 * disturbed by the load it measures: the time the hypervisor gave the benchmark's two CPUs to
 * other guests (steal, /proc/stat), and the time the client and the service were runnable but
 * waited for a CPU in this guest (/proc/<pid>/schedstat); beside it, the time they ran, which is
 * what they ask of a CPU they share. A stall of either kind delays a timer's
 * wake-up however well the timer is made.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct noise {
        uint64_t steal_usec[2]; /* BENCH_CPU_SERVICE, BENCH_CPU_CLIENT */
        uint64_t client_wait_usec, service_wait_usec;
        uint64_t client_ran_usec, service_ran_usec; /* on a CPU */
        bool service;                               /* a service ran: its counters were read */
        uint64_t usec;                              /* the time the counters cover */
};

/* The counters now (service: its pid, or 0 when none runs); 0 for what cannot be read. */
void noise_read(pid_t service, struct noise *ret);

/* Add to acc what the counters went up by from `start` to `end`. */
void noise_add(struct noise *acc, const struct noise *start, const struct noise *end);

/* "steal 1.2 % / 3.4 % (CPU 0 / 1), waited for a CPU 0.5 / 0.1 ms per s (client / service)",
 * without the service's when none ran. */
void noise_format(const struct noise *n, char *buf, size_t size);
