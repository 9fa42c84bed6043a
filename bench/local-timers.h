/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The in-process timers timerd is compared with, running a schedule (bench/schedule.h) in the
 * calling thread: one timerfd over a binary heap (the least any program can do), and libsystemd's
 * sd-event with a time source per timer (what a systemd-style program does). Lateness is the
 * CLOCK_MONOTONIC time the program sees the expiry minus the deadline, in microseconds.
 */

#include "bench/schedule.h"
#include "bench/stats.h"

void local_timerfd_run(const struct schedule_spec *spec, struct samples *ret_lateness);
void local_sd_event_run(const struct schedule_spec *spec, struct samples *ret_lateness);
