/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * How timerctl shows timers and the service to people: the list table (like systemctl
 * list-timers), one timer's details, the service's status. Times on a timer's clock are shown as
 * wall-clock times in the local time zone, as of the clocks read in `now`.
 */

#include <stddef.h>
#include <stdio.h>

#include "clocks.h"
#include "timerd/timerd.h"

/* Returns 0 or -ENOMEM. */
int print_timer_table(FILE *f, const struct timerd_timer *timers, size_t n,
                      const struct clocks *now);
void print_timer(FILE *f, const struct timerd_timer *timer, const struct clocks *now);
void print_status(FILE *f, const struct timerd_status *status);
