/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Kernel-timer arbitration. The kernel timer of one clock serves two cores, and on the monotonic
 * clock the connection table's reaps: it is armed at the earliest of their demands.
 */

#include <stdbool.h>
#include <stdint.h>

#include "service/core/registry.h"

struct service;

struct clock_wake {
        bool registry_armed;
        uint64_t registry_deadline;
        uint64_t registry_generation;
        bool parked_armed;
        uint64_t parked_deadline;
        bool conns_armed;
        uint64_t conns_deadline;
        bool kernel_armed;
        uint64_t kernel_deadline;
        uint64_t kernel_generation;
        uint64_t kernel_armed_usec; /* monotonic clock: when it was armed; UINT64_MAX unknown */
};

struct wakes {
        struct clock_wake clock[TIMERD_CLOCK_MAX];
        uint64_t last_generation;
        uint64_t stale; /* wake-ups of a kernel timer armed again since */
};

/* The earliest deadline the registry and the parked queue want clock c woken at; false when
 * neither wants it. On a virtual clock no kernel timer serves it: virtual-clock.c steps to it. */
bool service_core_deadline(const struct service *s, enum timerd_clock c, uint64_t *ret);

/* Arm clock's kernel timer at the earliest demand on it (or disarm it). -errno from the loop. */
int service_sync_wake(struct service *s, enum timerd_clock clock);

/* Re-arm the parked queue's wake-up of every clock after it changed. */
void service_sync_parked_wake(struct service *s);

/* Take the registry's ARM or DISARM effect: the outcome, for registry_confirm_arm(). */
int wake_take_registry_arm(struct service *s, const struct td_effect *e);

/* clock's kernel timer expired with `generation`: false when it was armed again since (stale). */
bool wake_expired(struct service *s, enum timerd_clock clock, uint64_t generation);

/* The monotonic kernel timer expired and was run at now: how long after it was due. */
void wake_record_loop_lag(struct service *s, const struct td_now *now);
