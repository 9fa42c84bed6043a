/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Matching and searching. The search walks wall-clock time field by field (year, month, day,
 * hour, minute, seconds), jumping to the next matching value of each and carrying into the field
 * above when none is left, so its cost grows with the number of months and days visited, never
 * with seconds. Wall times become instants through the zone (tzif.h), with the DST rules of
 * docs/CALENDAR.md.
 */

#include <errno.h>

#include "calendar-internal.h"
#include "civil.h"

bool calendar_field_next(const struct calendar_field *field, int32_t value, int32_t max,
                         int32_t *ret)
{
        bool found = false;
        int32_t best = 0;
        if (value > max)
                return false;
        if (field->n == 0) {
                *ret = value;
                return true;
        }
        for (unsigned i = 0; i < field->n; i++) {
                const struct calendar_range *r = &field->ranges[i];
                int32_t candidate = r->start;
                if (candidate < value) {
                        if (r->repeat <= 0)
                                continue;
                        /* The first repetition at or after value; 64-bit against overflow. */
                        int64_t steps = ((int64_t)value - r->start + r->repeat - 1) / r->repeat;
                        int64_t k = r->start + steps * r->repeat;
                        if (k > max || (r->stop >= 0 && k > r->stop))
                                continue;
                        candidate = (int32_t)k;
                }
                if (candidate > max)
                        continue;
                if (!found || candidate < best) {
                        best = candidate;
                        found = true;
                }
        }
        if (found)
                *ret = best;
        return found;
}

/* Days counted from the end of the month: 1 is the last day. Ranges flip to run forwards. */
static bool day_of_month_matches(const struct calendar_spec *spec, int64_t year, int month, int day)
{
        const struct calendar_field *field = &spec->day;
        int32_t length = (int32_t)civil_days_in_month(year, (unsigned)month);
        if (!spec->end_of_month) {
                int32_t found;
                return calendar_field_next(field, day, day, &found);
        }
        for (unsigned i = 0; i < field->n; i++) {
                struct calendar_range r = field->ranges[i];
                int32_t start = length + 1 - r.start;
                int32_t stop = r.stop >= 0 ? length + 1 - r.stop : -1;
                if (stop >= 0) {
                        int32_t swap = start;
                        start = stop;
                        stop = swap;
                }
                struct calendar_field one = {.n = 1, .ranges = {{start, stop, r.repeat}}};
                int32_t found;
                if (calendar_field_next(&one, day, day, &found))
                        return true;
        }
        return false;
}

static bool day_matches(const struct calendar_spec *spec, int64_t year, int month, int day)
{
        bool weekday = true;
        if (spec->weekdays != 0) {
                unsigned wd =
                    civil_weekday(civil_days_from_date(year, (unsigned)month, (unsigned)day));
                weekday = spec->weekdays & (1u << wd);
        }
        bool dom = day_of_month_matches(spec, year, month, day);
        /* cron: when both are restricted, either one is enough. */
        return spec->day_or_weekday ? dom || weekday : dom && weekday;
}

bool calendar_matches(const struct calendar_spec *spec, const struct calendar_wall *w)
{
        int32_t v;
        if (w->month < 1 || w->month > 12 || w->day < 1 ||
            w->day > (int)civil_days_in_month(w->year, (unsigned)w->month))
                return false;
        return w->year >= INT32_MIN && w->year <= INT32_MAX &&
               calendar_field_next(&spec->year, (int32_t)w->year, (int32_t)w->year, &v) &&
               calendar_field_next(&spec->month, w->month, w->month, &v) &&
               day_matches(spec, w->year, w->month, w->day) &&
               calendar_field_next(&spec->hour, w->hour, w->hour, &v) &&
               calendar_field_next(&spec->minute, w->minute, w->minute, &v) &&
               calendar_field_next(&spec->usec, w->usec, w->usec, &v);
}

static void reset_below(struct calendar_wall *w, enum calendar_field_id field)
{
        if (field < FIELD_MONTH)
                w->month = 1;
        if (field < FIELD_DAY)
                w->day = 1;
        if (field < FIELD_HOUR)
                w->hour = 0;
        if (field < FIELD_MINUTE)
                w->minute = 0;
        if (field < FIELD_USEC)
                w->usec = 0;
}

/* Each step either returns, or moves w forwards to the start of a later month, day, hour or
 * minute; the year limit ends it. */
int calendar_next_wall(const struct calendar_spec *spec, const struct calendar_wall *from,
                       int64_t year_limit, struct calendar_wall *ret)
{
        struct calendar_wall w = *from;
        int32_t v;

        if (year_limit > CALENDAR_YEAR_LAST)
                year_limit = CALENDAR_YEAR_LAST;
        for (;;) {
                if (w.year > year_limit ||
                    !calendar_field_next(&spec->year, (int32_t)w.year, (int32_t)year_limit, &v))
                        return -ENOENT;
                if (v != w.year) {
                        w.year = v;
                        reset_below(&w, FIELD_YEAR);
                }
                if (!calendar_field_next(&spec->month, w.month, 12, &v)) {
                        w.year++;
                        reset_below(&w, FIELD_YEAR);
                        continue;
                }
                if (v != w.month) {
                        w.month = v;
                        reset_below(&w, FIELD_MONTH);
                }
                int length = (int)civil_days_in_month(w.year, (unsigned)w.month);
                int day = w.day;
                while (day <= length && !day_matches(spec, w.year, w.month, day))
                        day++;
                if (day > length) {
                        w.month++;
                        reset_below(&w, FIELD_MONTH);
                        continue;
                }
                if (day != w.day) {
                        w.day = day;
                        reset_below(&w, FIELD_DAY);
                }
                if (!calendar_field_next(&spec->hour, w.hour, 23, &v)) {
                        w.day++;
                        reset_below(&w, FIELD_DAY);
                        continue;
                }
                if (v != w.hour) {
                        w.hour = v;
                        reset_below(&w, FIELD_HOUR);
                }
                if (!calendar_field_next(&spec->minute, w.minute, 59, &v)) {
                        w.hour++;
                        reset_below(&w, FIELD_HOUR);
                        continue;
                }
                if (v != w.minute) {
                        w.minute = v;
                        reset_below(&w, FIELD_MINUTE);
                }
                if (!calendar_field_next(&spec->usec, w.usec, CALENDAR_USEC_PER_MINUTE - 1, &v)) {
                        w.minute++;
                        reset_below(&w, FIELD_MINUTE);
                        continue;
                }
                w.usec = v;
                *ret = w;
                return 0;
        }
}

bool calendar_every_hour(const struct calendar_spec *spec)
{
        for (int32_t hour = 0; hour < 24; hour++) {
                int32_t v;
                if (!calendar_field_next(&spec->hour, hour, hour, &v))
                        return false;
        }
        return true;
}

/* Wall time as microseconds since 1970-01-01 00:00 read as UTC, and back. */
static int64_t wall_to_local_usec(const struct calendar_wall *w)
{
        int64_t days = civil_days_from_date(w->year, (unsigned)w->month, (unsigned)w->day);
        int64_t minutes = (days * 24 + w->hour) * 60 + w->minute;
        return minutes * CALENDAR_USEC_PER_MINUTE + w->usec;
}

static struct calendar_wall wall_from_local_usec(int64_t local)
{
        int64_t minutes = civil_floor_div(local, CALENDAR_USEC_PER_MINUTE);
        int64_t days = civil_floor_div(minutes, 24 * 60);
        int64_t minute_of_day = minutes - days * 24 * 60;
        struct civil_date date = civil_date_from_days(days);
        return (struct calendar_wall){
            .year = date.year,
            .month = (int)date.month,
            .day = (int)date.day,
            .hour = (int)(minute_of_day / 60),
            .minute = (int)(minute_of_day % 60),
            .usec = (int32_t)(local - minutes * CALENDAR_USEC_PER_MINUTE),
        };
}

/* Year 1 to the end of year 9998 in µs: far inside int64 with room for offsets and windows. */
#define BASE_USEC_MIN (INT64_C(-62135596800) * CIVIL_USEC_PER_SEC)
#define BASE_USEC_MAX (INT64_C(253370764800) * CIVIL_USEC_PER_SEC)
#define SEARCH_AHEAD  (3 * CIVIL_SEC_PER_DAY)

/* The instants a matching wall time stands for: its first occurrence; also its second when the
 * expression matches every hour; the end of the gap when it does not exist. */
static unsigned wall_instants(const struct tz_zone *zone, int64_t local_usec, bool every_hour,
                              int64_t ret[2])
{
        int64_t local = civil_floor_div(local_usec, CIVIL_USEC_PER_SEC);
        int64_t fraction = local_usec - local * CIVIL_USEC_PER_SEC;
        int64_t instants[2], gap_end;
        unsigned n = tz_zone_resolve(zone, local, instants, &gap_end);
        if (n == 0) {
                ret[0] = gap_end * CIVIL_USEC_PER_SEC;
                return 1;
        }
        if (n == 2 && !every_hour)
                n = 1;
        for (unsigned i = 0; i < n; i++)
                ret[i] = instants[i] * CIVIL_USEC_PER_SEC + fraction;
        return n;
}

int calendar_next(const struct calendar_spec *spec, const struct tz_zone *zone, int64_t base_usec,
                  int64_t *ret_usec)
{
        int32_t low, high;
        bool found = false, every_hour = calendar_every_hour(spec);
        int64_t best = 0;

        if (base_usec < BASE_USEC_MIN || base_usec > BASE_USEC_MAX)
                return -ERANGE;
        if (spec->utc)
                zone = NULL;
        int64_t base = civil_floor_div(base_usec, CIVIL_USEC_PER_SEC);
        /* Any instant after base is the wall time of an instant after base: no wall time earlier
         * than base plus the smallest offset of the days ahead can map past base. */
        tz_zone_offset_range(zone, base, base + SEARCH_AHEAD, &low, &high);
        struct calendar_wall w = wall_from_local_usec(base_usec + 1 + low * CIVIL_USEC_PER_SEC);
        int64_t year_limit = w.year + CALENDAR_HORIZON_YEARS;

        while (calendar_next_wall(spec, &w, year_limit, &w) == 0) {
                int64_t local = wall_to_local_usec(&w), instants[2];
                /* A later wall time maps at or after itself minus the largest offset in effect
                 * up to the best instant so far: once that is past the best, stop. */
                if (found && local - (int64_t)high * CIVIL_USEC_PER_SEC > best)
                        break;
                unsigned n = wall_instants(zone, local, every_hour, instants);
                for (unsigned i = 0; i < n; i++)
                        if (instants[i] > base_usec && (!found || instants[i] < best)) {
                                best = instants[i];
                                found = true;
                                tz_zone_offset_range(zone, base,
                                                     civil_floor_div(best, CIVIL_USEC_PER_SEC),
                                                     &low, &high);
                        }
                w = wall_from_local_usec(local + 1);
        }
        if (!found)
                return -ENOENT;
        *ret_usec = best;
        return 0;
}
