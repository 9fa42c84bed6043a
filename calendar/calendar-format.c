/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The normalized form. A systemd expression prints exactly as `systemd-analyze calendar` prints
 * its "Normalized form:"; so does a cron expression that has a systemd equivalent. A cron
 * expression whose day of month and weekday are both restricted (either one matches, which no
 * systemd expression can say) prints as canonical cron: numbers, ascending.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "calendar-internal.h"

#define USEC_PER_SEC 1000000

struct out {
        char *buf;
        size_t size, used;
        bool overflow;
};

static void put(struct out *o, const char *format, ...) __attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *format, ...)
{
        va_list ap;
        va_start(ap, format);
        int n = vsnprintf(o->buf + o->used, o->size - o->used, format, ap);
        va_end(ap);
        if (n < 0 || (size_t)n >= o->size - o->used) {
                o->overflow = true;
                o->used = o->size - 1;
                return;
        }
        o->used += (size_t)n;
}

static void put_weekdays(struct out *o, uint8_t weekdays)
{
        static const char *const names[7] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
        bool comma = false;
        for (int d = 0; d < 7;) {
                if (!(weekdays & (1u << d))) {
                        d++;
                        continue;
                }
                int last = d;
                while (last + 1 < 7 && (weekdays & (1u << (last + 1))))
                        last++;
                put(o, "%s%s", comma ? "," : "", names[d]);
                if (last == d + 1)
                        put(o, ",%s", names[last]);
                else if (last > d + 1)
                        put(o, "..%s", names[last]);
                comma = true;
                d = last + 1;
        }
}

/* A value in its field's unit, with six fractional digits when seconds have a fraction. */
static void put_value(struct out *o, int width, int32_t value, bool usec)
{
        int32_t unit = usec ? USEC_PER_SEC : 1;
        put(o, "%0*d", width, value / unit);
        if (value % unit > 0)
                put(o, ".%06d", value % unit);
}

static void put_field(struct out *o, int width, const struct calendar_field *field, bool usec)
{
        int32_t unit = usec ? USEC_PER_SEC : 1;
        if (field->n == 0 ||
            (usec && field->n == 1 && field->ranges[0].start == 0 && field->ranges[0].stop < 0 &&
             field->ranges[0].repeat == USEC_PER_SEC)) {
                put(o, "*");
                return;
        }
        for (unsigned i = 0; i < field->n; i++) {
                const struct calendar_range *r = &field->ranges[i];
                if (i > 0)
                        put(o, ",");
                put_value(o, width, r->start, usec);
                if (r->stop > 0) {
                        put(o, "..");
                        put_value(o, width, r->stop, usec);
                }
                if (r->repeat > 0 && !(r->stop > 0 && r->repeat == unit)) {
                        put(o, "/");
                        put_value(o, 0, r->repeat, usec);
                }
        }
}

static void format_systemd(struct out *o, const struct calendar_spec *spec)
{
        if (spec->weekdays != 0) {
                put_weekdays(o, spec->weekdays);
                put(o, " ");
        }
        put_field(o, 4, &spec->year, false);
        put(o, "-");
        put_field(o, 2, &spec->month, false);
        put(o, spec->end_of_month ? "~" : "-");
        put_field(o, 2, &spec->day, false);
        put(o, " ");
        put_field(o, 2, &spec->hour, false);
        put(o, ":");
        put_field(o, 2, &spec->minute, false);
        put(o, ":");
        put_field(o, 2, &spec->usec, true);
        if (spec->utc)
                put(o, " UTC");
        else if (spec->zone[0] != '\0')
                put(o, " %s", spec->zone);
}

static void put_cron_field(struct out *o, const struct calendar_field *field)
{
        if (field->n == 0) {
                put(o, "*");
                return;
        }
        for (unsigned i = 0; i < field->n; i++) {
                const struct calendar_range *r = &field->ranges[i];
                put(o, "%s%d", i > 0 ? "," : "", r->start);
                if (r->stop >= 0)
                        put(o, "-%d", r->stop);
                if (r->repeat > 0 && !(r->stop >= 0 && r->repeat == 1))
                        put(o, "/%d", r->repeat);
        }
}

/* Weekdays as cron numbers, Sunday 0, runs of three or more as ranges. */
static void put_cron_weekdays(struct out *o, uint8_t weekdays)
{
        bool cron[7], comma = false;
        for (int d = 0; d < 7; d++)
                cron[d] = weekdays & (1u << ((d + 6) % 7));
        for (int d = 0; d < 7;) {
                if (!cron[d]) {
                        d++;
                        continue;
                }
                int last = d;
                while (last + 1 < 7 && cron[last + 1])
                        last++;
                put(o, "%s%d", comma ? "," : "", d);
                if (last == d + 1)
                        put(o, ",%d", last);
                else if (last > d + 1)
                        put(o, "-%d", last);
                comma = true;
                d = last + 1;
        }
}

static void format_cron(struct out *o, const struct calendar_spec *spec)
{
        put_cron_field(o, &spec->minute);
        put(o, " ");
        put_cron_field(o, &spec->hour);
        put(o, " ");
        put_cron_field(o, &spec->day);
        put(o, " ");
        put_cron_field(o, &spec->month);
        put(o, " ");
        put_cron_weekdays(o, spec->weekdays);
}

int calendar_format(const struct calendar_spec *spec, char *buf, size_t size)
{
        struct out o = {buf, size, 0, false};
        if (size == 0)
                return -ENOBUFS;
        buf[0] = '\0';
        if (spec->day_or_weekday)
                format_cron(&o, spec);
        else
                format_systemd(&o, spec);
        return o.overflow ? -ENOBUFS : 0;
}
