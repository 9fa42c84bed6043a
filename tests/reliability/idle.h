/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Whether the real timerd idles: over a second, next to no CPU and no loop iterations but those
 * of the Status calls that read them. A count holds on a loaded machine where CPU time may not:
 * work left behind shows as iterations.
 */

#include "harness.h"

/* An idle service uses next to no CPU: a tenth of a second over a second is a busy loop. */
#define IDLE_CPU_TICKS 10
/* The iterations of one Status call on an open connection, with room to spare. */
#define IDLE_ITERATIONS 4

/* Idle for a second, asked on root's connection `control`; a cmocka failure otherwise. */
void expect_idle(const struct harness *h, int control);
