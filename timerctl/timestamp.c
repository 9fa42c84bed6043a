/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "timespan.h"
#include "timestamp.h"

#define SECONDS_PER_DAY (24 * 60 * 60)

static const char *const weekdays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
static const char *const weekdays_long[] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                            "Thursday", "Friday", "Saturday"};

/* A date and time of day, as written; -1 for what was left out. */
struct written {
        int weekday;
        int year, month, day;
        int hour, minute, second;
        uint64_t fraction_usec;
        bool utc;
};

static const char *skip_spaces(const char *p)
{
        while (*p == ' ')
                p++;
        return p;
}

/* Exactly `digits` decimal digits. */
static bool parse_digits(const char **p, int digits, int *ret)
{
        int value = 0;

        for (int i = 0; i < digits; i++) {
                if ((*p)[i] < '0' || (*p)[i] > '9')
                        return false;
                value = value * 10 + ((*p)[i] - '0');
        }
        *p += digits;
        *ret = value;
        return true;
}

static bool parse_weekday(const char **p, int *ret)
{
        for (int i = 0; i < 7; i++) {
                const char *names[] = {weekdays_long[i], weekdays[i]};

                for (size_t k = 0; k < 2; k++) {
                        size_t len = strlen(names[k]);

                        if (strncasecmp(*p, names[k], len) == 0 && (*p)[len] == ' ') {
                                *p += len;
                                *ret = i;
                                return true;
                        }
                }
        }
        return false;
}

static bool parse_date(const char **p, struct written *w)
{
        const char *q = *p;

        if (!parse_digits(&q, 4, &w->year) || *q++ != '-' || !parse_digits(&q, 2, &w->month) ||
            *q++ != '-' || !parse_digits(&q, 2, &w->day))
                return false;
        *p = q;
        return true;
}

/* HH:MM[:SS[.ffffff]] */
static bool parse_time(const char **p, struct written *w)
{
        const char *q = *p;

        if (!parse_digits(&q, 2, &w->hour) || *q++ != ':' || !parse_digits(&q, 2, &w->minute))
                return false;
        w->second = 0;
        w->fraction_usec = 0;
        if (*q == ':') {
                q++;
                if (!parse_digits(&q, 2, &w->second))
                        return false;
                if (*q == '.') {
                        uint64_t scale = 100000;

                        q++;
                        if (*q < '0' || *q > '9')
                                return false;
                        for (; *q >= '0' && *q <= '9'; q++, scale /= 10)
                                w->fraction_usec += (uint64_t)(*q - '0') * scale;
                }
        }
        *p = q;
        return true;
}

/* The zone at the end: UTC, or the local zone's own name (which changes nothing). */
static bool parse_zone(const char *p, struct written *w)
{
        p = skip_spaces(p);
        if (*p == 0)
                return true;
        if (strcmp(p, "UTC") == 0 || strcmp(p, "Z") == 0) {
                w->utc = true;
                return true;
        }
        tzset();
        return strcmp(p, tzname[0]) == 0 || strcmp(p, tzname[1]) == 0;
}

static int parse_written(const char *s, struct written *w)
{
        const char *p = s;
        bool has_date;

        *w = (struct written){.weekday = -1, .year = -1, .hour = -1};
        if (parse_weekday(&p, &w->weekday))
                p = skip_spaces(p);
        has_date = parse_date(&p, w);
        if (has_date && (*p == ' ' || *p == 'T')) {
                const char *q = skip_spaces(p + 1);

                if (parse_time(&q, w))
                        p = q;
        } else if (!has_date && !parse_time(&p, w))
                return -EINVAL;
        return parse_zone(p, w) ? 0 : -EINVAL;
}

/* Seconds since the epoch of tm, local or UTC; -ERANGE when tm names a time that does not exist
 * (February 30th, 25:00). */
static int make_time(struct tm *tm, bool utc, time_t *ret)
{
        struct tm wanted = *tm;
        time_t t;

        tm->tm_isdst = -1;
        t = utc ? timegm(tm) : mktime(tm);
        if (t < 0) /* before 1970, or not representable */
                return -ERANGE;
        /* mktime() normalizes what is out of range; a normalized date was not a real one. */
        if (tm->tm_year != wanted.tm_year || tm->tm_mon != wanted.tm_mon ||
            tm->tm_mday != wanted.tm_mday || tm->tm_hour != wanted.tm_hour ||
            tm->tm_min != wanted.tm_min)
                return -ERANGE;
        *ret = t;
        return 0;
}

/* Midnight of the day `days_from_today` days from the day of now, local time. */
static int midnight(const struct clocks *now, int days_from_today, uint64_t *ret)
{
        time_t seconds = (time_t)(now->realtime_usec / USEC_PER_SEC);
        struct tm tm;
        time_t t;

        if (!localtime_r(&seconds, &tm))
                return -ERANGE;
        tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
        tm.tm_mday += days_from_today;
        tm.tm_isdst = -1;
        t = mktime(&tm);
        if (t < 0)
                return -ERANGE;
        *ret = (uint64_t)t * USEC_PER_SEC;
        return 0;
}

static int parse_absolute(const char *s, const struct clocks *now, uint64_t *ret)
{
        time_t seconds = (time_t)(now->realtime_usec / USEC_PER_SEC);
        struct written w;
        struct tm tm;
        time_t t;
        int r;

        r = parse_written(s, &w);
        if (r < 0)
                return r;
        if (!(w.utc ? gmtime_r(&seconds, &tm) : localtime_r(&seconds, &tm)))
                return -ERANGE;
        if (w.year >= 0) {
                tm.tm_year = w.year - 1900;
                tm.tm_mon = w.month - 1;
                tm.tm_mday = w.day;
        }
        tm.tm_hour = w.hour >= 0 ? w.hour : 0;
        tm.tm_min = w.hour >= 0 ? w.minute : 0;
        tm.tm_sec = w.hour >= 0 ? w.second : 0;
        if (tm.tm_sec > 59 || tm.tm_mon < 0 || tm.tm_mon > 11)
                return -ERANGE;
        r = make_time(&tm, w.utc, &t);
        if (r < 0)
                return r;
        if (w.weekday >= 0 && w.weekday != tm.tm_wday)
                return -EDOM;
        *ret = (uint64_t)t * USEC_PER_SEC + w.fraction_usec;
        return 0;
}

/* "@1700000000.5": seconds since the epoch. */
static int parse_epoch(const char *s, uint64_t *ret)
{
        uint64_t usec;
        int r;

        if (strpbrk(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"))
                return -EINVAL;
        r = timespan_parse(s, &usec);
        if (r < 0)
                return r == -EDOM ? -ERANGE : r;
        *ret = usec;
        return 0;
}

/* "5min ago" / "5min left": a span followed by a word. */
static int parse_span_with_suffix(const char *s, const char *suffix, uint64_t *ret)
{
        size_t len = strlen(s), suffix_len = strlen(suffix);
        char span[128];

        if (len <= suffix_len + 1 || len - suffix_len >= sizeof(span) ||
            strcmp(s + len - suffix_len, suffix) != 0 || s[len - suffix_len - 1] != ' ')
                return -EINVAL;
        memcpy(span, s, len - suffix_len);
        span[len - suffix_len] = 0;
        return timespan_parse(span, ret);
}

/* now - span, on the wall clock. */
static int before_now(const struct clocks *now, uint64_t span, struct timestamp *ret)
{
        if (span > now->realtime_usec)
                return -ERANGE;
        *ret = (struct timestamp){.relative = false, .usec = now->realtime_usec - span};
        return 0;
}

int timestamp_parse(const char *s, const struct clocks *now, struct timestamp *ret)
{
        static const struct {
                const char *word;
                int days;
        } days[] = {{"yesterday", -1}, {"today", 0}, {"tomorrow", 1}};
        uint64_t usec;
        int r;

        s = skip_spaces(s);
        if (strcmp(s, "now") == 0) {
                *ret = (struct timestamp){.relative = true, .usec = 0};
                return 0;
        }
        for (size_t i = 0; i < sizeof(days) / sizeof(days[0]); i++)
                if (strcmp(s, days[i].word) == 0) {
                        r = midnight(now, days[i].days, &usec);
                        if (r < 0)
                                return r;
                        *ret = (struct timestamp){.relative = false, .usec = usec};
                        return 0;
                }
        if (s[0] == '+' || s[0] == '-') {
                r = timespan_parse(s + 1, &usec);
                if (r < 0)
                        return r == -EDOM ? -EINVAL : r;
                if (s[0] == '-')
                        return before_now(now, usec, ret);
                *ret = (struct timestamp){.relative = true, .usec = usec};
                return 0;
        }
        if (s[0] == '@') {
                r = parse_epoch(s + 1, &usec);
                if (r < 0)
                        return r;
                *ret = (struct timestamp){.relative = false, .usec = usec};
                return 0;
        }
        r = parse_span_with_suffix(s, "left", &usec);
        if (r >= 0) {
                *ret = (struct timestamp){.relative = true, .usec = usec};
                return 0;
        }
        if (r == -ERANGE)
                return r;
        r = parse_span_with_suffix(s, "ago", &usec);
        if (r >= 0)
                return before_now(now, usec, ret);
        if (r == -ERANGE)
                return r;

        r = parse_absolute(s, now, &usec);
        if (r < 0)
                return r;
        *ret = (struct timestamp){.relative = false, .usec = usec};
        return 0;
}

const char *timestamp_parse_error(int error)
{
        switch (error) {
        case -ERANGE:
                return "no such time, or out of range";
        case -EDOM:
                return "the weekday does not match the date";
        default:
                return "not a timestamp (like 2026-12-01 09:00, 09:00, tomorrow, +5min, "
                       "@1700000000)";
        }
}

int timestamp_on_clock(const struct timestamp *ts, const struct clocks *now,
                       enum timerd_clock clock, uint64_t *ret)
{
        uint64_t clock_now = clocks_now(now, clock), usec;
        bool out_of_range;

        if (ts->relative)
                out_of_range = __builtin_add_overflow(clock_now, ts->usec, &usec);
        else if (ts->usec >= now->realtime_usec)
                out_of_range =
                    __builtin_add_overflow(clock_now, ts->usec - now->realtime_usec, &usec);
        else
                out_of_range =
                    __builtin_sub_overflow(clock_now, now->realtime_usec - ts->usec, &usec);
        if (out_of_range || usec > TIMESPAN_MAX_USEC)
                return -ERANGE;
        *ret = usec;
        return 0;
}

/* usec (µs since the epoch) on the wall clock of zone, with its offset ("UTC" in UTC). */
const char *timestamp_format_zoned(char buf[static ZONED_TIME_MAX], const struct tz_zone *zone,
                                   bool utc, int64_t usec)
{
        int64_t seconds = usec >= 0 ? usec / 1000000 : -((-usec + 999999) / 1000000);
        struct tz_local local = utc ? (struct tz_local){0} : tz_zone_local(zone, seconds);
        time_t wall = (time_t)(seconds + local.utoff);
        struct tm tm;
        size_t n;

        if (!gmtime_r(&wall, &tm) ||
            (n = strftime(buf, ZONED_TIME_MAX, "%a %Y-%m-%d %H:%M:%S", &tm)) == 0)
                return "-";
        int32_t offset = local.utoff < 0 ? -local.utoff : local.utoff;
        if (utc)
                snprintf(buf + n, ZONED_TIME_MAX - n, " UTC");
        else if (offset % 60 != 0)
                snprintf(buf + n, ZONED_TIME_MAX - n, " %c%02d:%02d:%02d",
                         local.utoff < 0 ? '-' : '+', offset / 3600, offset / 60 % 60, offset % 60);
        else
                snprintf(buf + n, ZONED_TIME_MAX - n, " %c%02d:%02d", local.utoff < 0 ? '-' : '+',
                         offset / 3600, offset / 60 % 60);
        return buf;
}
