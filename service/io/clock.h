/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Reading the clocks: the only place the service asks the kernel what time it is. */

#include <stdbool.h>
#include <time.h>

#include "service/core/registry.h"

/* Read every clock. -errno when one cannot be read: a fault, never an invented time. */
int clock_read_all(struct td_now *ret);

/* One clock, in microseconds. */
int clock_read(enum timerd_clock clock, uint64_t *ret);

/* Whether alarm clocks can be armed here (CAP_WAKE_ALARM): a probe, once at start. */
bool clock_alarm_available(void);
