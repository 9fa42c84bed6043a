/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A timer's calendar schedule, as the pure core holds it: one or more parsed expressions, the
 * zone they are read in and whether the randomized delay is fixed per timer. Immutable once made
 * and shared by reference count (a timer and the pre-images of a rollback hold it). The zone is
 * the edge's (service/zones.c): loaded from the zone files and kept for the service's life, so
 * that reloading it re-evaluates every calendar timer without touching them.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "calendar/calendar.h"
#include "calendar/tzif.h"
#include "timerd/timerd-types.h"

/* The expressions of one timer, each on a line, a cron one marked "cron:": what the journal keeps
 * (one length byte) and what Get answers from. */
#define TD_CALENDAR_SOURCE_MAX  TIMERD_CALENDAR_MAX
#define TD_CALENDAR_CRON_PREFIX TIMERD_CALENDAR_CRON_PREFIX

/* A zone as the edge loaded it; tz is NULL for UTC. The edge may replace tz (a tzdata update). */
struct td_zone {
        char name[CALENDAR_ZONE_MAX];
        struct tz_zone *tz;
};

struct td_calendar {
        unsigned refs;
        const struct td_zone *zone;
        bool fixed_random_delay;
        char source[TD_CALENDAR_SOURCE_MAX + 1];
        size_t n_specs;
        struct calendar_spec specs[];
};

/* Why a source is refused: which line (0-based) and what calendar_parse*() said. */
struct td_calendar_error {
        size_t line;
        struct calendar_error error;
};

/*
 * Parse `source` (lines as above; no empty line, at most TD_CALENDAR_SOURCE_MAX bytes).
 * 0; -EINVAL with *ret_error set for an expression that does not parse or never elapses;
 * -E2BIG for a source too long or empty; -ENOMEM. The result has one reference.
 */
int td_calendar_new(const char *source, const struct td_zone *zone, bool fixed_random_delay,
                    struct td_calendar **ret, struct td_calendar_error *ret_error);
const struct td_calendar *td_calendar_ref(const struct td_calendar *c);
void td_calendar_unref(const struct td_calendar *c);
/* The same expressions, fixed flag and zone name: a timer that follows the local zone equals one
 * that names the zone the service's local zone is now (what Reconcile compares). */
bool td_calendar_equal(const struct td_calendar *a, const struct td_calendar *b);

/* The first elapse of any expression strictly after after_usec (realtime µs). -ENOENT when none
 * is left (year 9999), -ERANGE for an instant outside the calendar's years. */
int td_calendar_next(const struct td_calendar *c, uint64_t after_usec, uint64_t *ret_usec);
