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

struct table_style {
        bool legend;  /* the header, and the count at the end */
        bool color;   /* ANSI colors: the header, failed and running states */
        size_t width; /* the terminal's; 0: as wide as the table takes */
        bool owners;  /* an OWNER column, for timers of every owner */
};

/*
 * The table of timers, soonest first. Wider than style->width, NAME is shortened and then the
 * LAST, PASSED, CLOCK and POLICY columns are left out, in that order. Returns 0 or -ENOMEM.
 */
int print_timer_table(FILE *f, const struct timerd_timer *timers, size_t n,
                      const struct clocks *now, const struct table_style *style);
void print_timer(FILE *f, const struct timerd_timer *timer, const struct clocks *now);
/* "exit 3", "signal KILL", "timeout (TERM)", "interrupted" as its runner reported; else the outcome
 * ("success"), "-" before any run ended. Returns buf or a constant. */
#define RUN_RESULT_MAX 32
const char *format_run_result(char buf[static RUN_RESULT_MAX], const struct timerd_timer *timer);
void print_status(FILE *f, const struct timerd_status *status);
/* "Next: Sat 2024-11-30 10:05:00 UTC (29s left)" */
void print_next(FILE *f, enum timerd_clock clock, uint64_t usec, const struct clocks *now);
/* "backup: run 3 fired Sat 2024-11-30 10:05:00 UTC, 2ms late" */
void print_firing(FILE *f, const struct timerd_firing *firing, const struct clocks *now);
/* "Sat 2024-11-30 10:05:00 UTC  registered    backup (scheduled)" */
void print_event(FILE *f, const struct timerd_event *e, bool owners);
