/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * timerfds of a clock, shared by both backends: a clock's kernel timer (the timerfd backend uses
 * one per clock, the io_uring backend for the alarm clocks) and the realtime clock-set watch.
 * Each registers its fd with the loop through an internal watch and reports through
 * loop_dispatch_*(), so it behaves the same under either backend.
 */

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "loop/loop-backend.h"

clockid_t clock_timerfd_clockid(enum timerd_clock clock);

/*
 * One clock's timerfd, created on the first arm, and the deadline and generation of its current
 * arm.
 *
 * With `read_late`, an expiry is reported without reading the timerfd: the arm or disarm that
 * usually follows resets its count anyway (timerfd_settime zeroes it), and an arm already due
 * while the count is unread needs no timerfd_settime at all on a clock that never goes back (the
 * fd stays readable, and its next report is the new arm's expiry). The owner then calls
 * clock_timer_settle() before each wait, which reads what neither reset. Without it (the io_uring
 * backend's alarm clocks), every report reads the timerfd first.
 */
struct clock_timer {
        struct loop *loop;
        enum timerd_clock clock;
        int fd;
        struct loop_watch *watch;
        bool read_late;
        bool armed;
        bool unread; /* read_late: an expiry was reported and no timerfd_settime reset the fd */
        uint64_t deadline_usec;
        uint64_t generation;
};

void clock_timer_init(struct clock_timer *t, struct loop *l, enum timerd_clock clock,
                      bool read_late);
/* -EPERM for an alarm clock without CAP_WAKE_ALARM. A deadline in the past expires at once. */
int clock_timer_arm(struct clock_timer *t, uint64_t deadline_usec, uint64_t generation);
int clock_timer_disarm(struct clock_timer *t);
/* read_late: before the loop waits, read an expiry that no arm or disarm has reset. */
int clock_timer_settle(struct clock_timer *t);
void clock_timer_close(struct clock_timer *t);

/* A realtime timerfd armed far in the future with TFD_TIMER_CANCEL_ON_SET: read → -ECANCELED. */
struct clock_set_watch {
        struct loop *loop;
        int fd;
        struct loop_watch *watch;
};

int clock_set_watch_open(struct clock_set_watch *c, struct loop *l);
void clock_set_watch_close(struct clock_set_watch *c);
/* The clock was set: re-arm the watch and report it (what a -ECANCELED read leads to). */
void clock_set_watch_fire(struct clock_set_watch *c);
