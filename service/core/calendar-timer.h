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

#include "base/hashmap.h"
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

/*
 * The schedules in use, one per (expressions, zone, fixed flag): timers declared alike share one
 * (a parsed expression is 4.7 KiB). A schedule leaves the set when its last reference goes; the
 * set must outlive its schedules and their zones.
 */
struct td_calendar_set {
        struct hashmap schedules; /* struct td_calendar */
};

struct td_calendar {
        unsigned refs;
        struct td_calendar_set *set; /* NULL: not shared */
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

void td_calendar_set_init(struct td_calendar_set *set);
/* Every schedule of the set has been released. */
void td_calendar_set_done(struct td_calendar_set *set);
/* How many distinct schedules are in use. */
size_t td_calendar_set_size(const struct td_calendar_set *set);

/*
 * Parse `source` (lines as above; no empty line, at most TD_CALENDAR_SOURCE_MAX bytes), or take
 * another reference to the schedule of `set` declared alike (set NULL: a schedule of its own).
 * 0; -EINVAL with *ret_error set for an expression that does not parse or never elapses;
 * -E2BIG for a source too long or empty; -ENOMEM. The caller releases its reference.
 */
int td_calendar_new(struct td_calendar_set *set, const char *source, const struct td_zone *zone,
                    bool fixed_random_delay, const struct td_calendar **ret,
                    struct td_calendar_error *ret_error);
const struct td_calendar *td_calendar_ref(const struct td_calendar *c);
void td_calendar_unref(const struct td_calendar *c);
/* The same expressions, fixed flag and zone name: a timer that follows the local zone equals one
 * that names the zone the service's local zone is now (what Reconcile compares). */
bool td_calendar_equal(const struct td_calendar *a, const struct td_calendar *b);

/* The first elapse of any expression strictly after after_usec (realtime µs). -ENOENT when none
 * is left (year 9999), -ERANGE for an instant outside the calendar's years. */
int td_calendar_next(const struct td_calendar *c, uint64_t after_usec, uint64_t *ret_usec);
