/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The verbs of timerctl. Each runs on a connected service with the checked command line and
 * returns the exit status; it reports its own failures.
 */

#include "options.h"
#include "timerd/timerd.h"

typedef int (*verb_run_fn)(struct timerd *t, const struct options *o);

/* verb-read.c: what the service knows */
int verb_list(struct timerd *t, const struct options *o);
int verb_show(struct timerd *t, const struct options *o);
int verb_status(struct timerd *t, const struct options *o);

/* verb-control.c: declaring and steering timers */
int verb_add(struct timerd *t, const struct options *o);
int verb_reconcile(struct timerd *t, const struct options *o);
int verb_schedule(struct timerd *t, const struct options *o);
int verb_reschedule(struct timerd *t, const struct options *o);
int verb_cancel(struct timerd *t, const struct options *o);
int verb_kick(struct timerd *t, const struct options *o);
int verb_remove(struct timerd *t, const struct options *o);

/* verb-wait.c: blocking in the service */
int verb_wait(struct timerd *t, const struct options *o);
int verb_sleep(struct timerd *t, const struct options *o);

/* verb-run.c: a timer that runs a command */
int verb_run(struct timerd *t, const struct options *o);

/* verb-clock.c: moving a virtual-clock instance's clocks (timerd --clock virtual) */
int verb_advance(struct timerd *t, const struct options *o);
int verb_now(struct timerd *t, const struct options *o);

/* verb-monitor.c */
int verb_monitor(struct timerd *t, const struct options *o);

/* verb-calendar.c: previews calendar expressions, without the service */
int verb_calendar(const struct options *o);
