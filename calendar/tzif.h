/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A time zone as data: parsed from a TZif file (RFC 8536, versions 1-4) held in memory, or from a
 * POSIX TZ rule string ("CET-1CEST,M3.5.0,M10.5.0/3"). Pure: no file, no clock, no TZ/tzset.
 * A NULL zone is UTC everywhere below. Times are seconds since the epoch (UTC); "local" seconds
 * are the wall clock read as if it were UTC.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Offsets beyond ±26 h are refused: RFC 8536 bounds real ones to about ±25 h, and the calendar's
 * search windows rely on the bound. */
#define TZ_UTOFF_MAX (26 * 3600)

enum tz_error {
        TZ_E_NONE,
        TZ_E_TRUNCATED,   /* the data ends inside a header, a block or the footer */
        TZ_E_MAGIC,       /* no "TZif" */
        TZ_E_VERSION,     /* an unknown version byte */
        TZ_E_COUNTS,      /* counts that RFC 8536 forbids or that are absurdly large */
        TZ_E_ORDER,       /* transition times not strictly ascending */
        TZ_E_TYPE_INDEX,  /* a transition names a type that does not exist */
        TZ_E_OFFSET,      /* a UT offset beyond ±26 h */
        TZ_E_DESIGNATION, /* an abbreviation index outside the designation block */
        TZ_E_LEAP,        /* leap-second zones ("right/…") are not supported */
        TZ_E_FOOTER,      /* the footer is not a valid POSIX TZ string */
        TZ_E_NOMEM,
        TZ_E_MAX,
};

struct tz_zone;

struct tz_local {
        int32_t utoff; /* seconds east of UTC */
        bool isdst;
};

struct tz_transition {
        int64_t at; /* the first second of the new offset */
        int32_t before, after;
};

/* Returns 0, or -EINVAL / -ENOMEM with *ret_error set. */
int tz_zone_parse_tzif(const uint8_t *data, size_t size, struct tz_zone **ret,
                       enum tz_error *ret_error);
/* A zone from a POSIX TZ rule string alone (what a TZif footer holds). */
int tz_zone_parse_rule(const char *rule, struct tz_zone **ret, enum tz_error *ret_error);
void tz_zone_free(struct tz_zone *zone);
const char *tz_error_message(enum tz_error error);

struct tz_local tz_zone_local(const struct tz_zone *zone, int64_t utc);
/* The first transition strictly after `after`; false when there is none. Transitions that keep
 * the offset (an isdst flip only) are reported too. */
bool tz_zone_next_transition(const struct tz_zone *zone, int64_t after, struct tz_transition *ret);
/* The UTC instants whose local time is `local`: 0 (a gap), 1, or 2 (an overlap), ascending in
 * ret_instants. For a gap, *ret_gap_end is the transition that skipped it. */
unsigned tz_zone_resolve(const struct tz_zone *zone, int64_t local, int64_t ret_instants[2],
                         int64_t *ret_gap_end);
/* The smallest and largest offsets in effect at any instant of [from, to]. */
void tz_zone_offset_range(const struct tz_zone *zone, int64_t from, int64_t to, int32_t *ret_min,
                          int32_t *ret_max);
