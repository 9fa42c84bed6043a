/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Firings held until their deadline. A timer with a handover is handed over early: its firing
 * reaches the client up to handover_usec before its deadline_usec. libtimerd gives a firing to the
 * program only once that deadline has come on the firing's own clock (an alarm clock counts like
 * its plain one), so the program sees one wake-up of lateness, as with an in-process timer.
 * Blocking waits sleep until then on a timerfd; the asynchronous mode keeps the firings here, per
 * clock in deadline order, until timerd_process() finds them due.
 *
 * A deadline further ahead than any handover (TIMERD_HANDOVER_MAX_USEC) is no handover but a wall
 * clock set back after the service fired: such a firing is due at once, never held for hours.
 * So is one whose clock cannot be read: early rather than lost.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "timerd/timerd.h"

struct held_firing {
        struct timerd_firing firing;
        timerd_firing_callback callback;
        void *userdata;
        const void *stream; /* the stream it came on, whose end releases it; NULL for a Wait */
};

/* One clock's firings, items[head..n) in deadline order (ties in arrival order). */
struct hold_lane {
        struct held_firing *items;
        size_t head, n, allocated;
};

enum {
        HOLD_LANE_MONOTONIC,
        HOLD_LANE_BOOTTIME,
        HOLD_LANE_REALTIME,
        HOLD_LANE_MAX,
};

struct hold {
        struct hold_lane lanes[HOLD_LANE_MAX];
        /* hold_sleep()'s timerfd per lane, made at its first use and kept until hold_done(): a
         * held firing costs no timerfd_create() and close(), and its return at the deadline
         * waits for no close(). -1: none yet. */
        int timerfds[HOLD_LANE_MAX];
};

void hold_init(struct hold *h);

/* Whether the firing is due now. */
bool hold_due(const struct timerd_firing *f);

/* Block until the firing is due, through signals. */
void hold_sleep(struct hold *h, const struct timerd_firing *f);

/* Keep a firing that is not due; -ENOMEM. */
int hold_put(struct hold *h, const struct held_firing *item);

/* Take the earliest held firing that is due (with `all`: any); false when there is none. */
bool hold_take(struct hold *h, bool all, struct held_firing *ret);

/* Take the earliest held firing of `stream`; false when there is none. */
bool hold_take_stream(struct hold *h, const void *stream, struct held_firing *ret);

size_t hold_count(const struct hold *h);

/* When the earliest held firing is due, absolute on CLOCK_MONOTONIC in microseconds: true, or
 * false when none is held. */
bool hold_next(const struct hold *h, uint64_t *ret_usec);

/* Drop what is held and close the timerfds: h is as hold_init() left it. */
void hold_done(struct hold *h);
