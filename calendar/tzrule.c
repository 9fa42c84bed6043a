/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <string.h>

#include "civil.h"
#include "tzrule.h"

struct cursor {
        const char *p, *end;
};

static bool at_end(const struct cursor *c)
{
        return c->p == c->end;
}

static bool peek_is(const struct cursor *c, char ch)
{
        return !at_end(c) && *c->p == ch;
}

static bool is_digit(char ch)
{
        return ch >= '0' && ch <= '9';
}

static bool is_alpha(char ch)
{
        return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z');
}

/* A designation: three or more letters, or <…> with letters, digits, '+' and '-'. */
static int parse_name(struct cursor *c)
{
        size_t n = 0;
        if (peek_is(c, '<')) {
                c->p++;
                while (!at_end(c) &&
                       (is_alpha(*c->p) || is_digit(*c->p) || *c->p == '+' || *c->p == '-')) {
                        c->p++;
                        n++;
                }
                if (!peek_is(c, '>'))
                        return -EINVAL;
                c->p++;
        } else {
                while (!at_end(c) && is_alpha(*c->p)) {
                        c->p++;
                        n++;
                }
        }
        return n >= 3 ? 0 : -EINVAL;
}

static int parse_number(struct cursor *c, unsigned max_digits, unsigned max, unsigned *ret)
{
        unsigned value = 0, digits = 0;
        while (!at_end(c) && is_digit(*c->p) && digits < max_digits) {
                value = value * 10 + (unsigned)(*c->p - '0');
                c->p++;
                digits++;
        }
        if (digits == 0 || value > max)
                return -EINVAL;
        *ret = value;
        return 0;
}

/* [+-]hh[:mm[:ss]] as seconds, hours up to max_hours. */
static int parse_hms(struct cursor *c, unsigned max_hours, int32_t *ret)
{
        int32_t sign = 1;
        unsigned h, m = 0, s = 0;
        if (peek_is(c, '+') || peek_is(c, '-')) {
                sign = *c->p == '-' ? -1 : 1;
                c->p++;
        }
        if (parse_number(c, 3, max_hours, &h) < 0)
                return -EINVAL;
        if (peek_is(c, ':')) {
                c->p++;
                if (parse_number(c, 2, 59, &m) < 0)
                        return -EINVAL;
                if (peek_is(c, ':')) {
                        c->p++;
                        if (parse_number(c, 2, 59, &s) < 0)
                                return -EINVAL;
                }
        }
        *ret = sign * (int32_t)(h * 3600 + m * 60 + s);
        return 0;
}

/* POSIX offsets count west of UTC; a UT offset counts east. */
static int parse_utoff(struct cursor *c, int32_t *ret)
{
        int32_t west;
        if (parse_hms(c, 24, &west) < 0 || west > TZ_UTOFF_MAX || west < -TZ_UTOFF_MAX)
                return -EINVAL;
        *ret = -west;
        return 0;
}

static int parse_date(struct cursor *c, struct tz_rule_date *ret)
{
        *ret = (struct tz_rule_date){.time = 2 * 3600};
        if (peek_is(c, 'J')) {
                c->p++;
                ret->kind = TZ_RULE_JULIAN_1;
                if (parse_number(c, 3, 365, &ret->day) < 0 || ret->day == 0)
                        return -EINVAL;
        } else if (peek_is(c, 'M')) {
                c->p++;
                ret->kind = TZ_RULE_MONTH_WEEK;
                if (parse_number(c, 2, 12, &ret->month) < 0 || ret->month == 0 || !peek_is(c, '.'))
                        return -EINVAL;
                c->p++;
                if (parse_number(c, 1, 5, &ret->week) < 0 || ret->week == 0 || !peek_is(c, '.'))
                        return -EINVAL;
                c->p++;
                if (parse_number(c, 1, 6, &ret->weekday) < 0)
                        return -EINVAL;
        } else {
                ret->kind = TZ_RULE_JULIAN_0;
                if (parse_number(c, 3, 365, &ret->day) < 0)
                        return -EINVAL;
        }
        if (peek_is(c, '/')) {
                c->p++;
                return parse_hms(c, 167, &ret->time);
        }
        return 0;
}

int tz_rule_parse(const char *text, size_t size, struct tz_rule *ret)
{
        struct cursor c = {text, text + size};
        struct tz_rule rule = {0};

        if (parse_name(&c) < 0 || parse_utoff(&c, &rule.std.utoff) < 0)
                return -EINVAL;
        if (at_end(&c)) {
                *ret = rule;
                return 0;
        }
        if (parse_name(&c) < 0)
                return -EINVAL;
        rule.has_dst = true;
        rule.dst = (struct tz_local){.utoff = rule.std.utoff + 3600, .isdst = true};
        if (!peek_is(&c, ','))
                if (parse_utoff(&c, &rule.dst.utoff) < 0)
                        return -EINVAL;
        /* A zone with daylight time and no rule would need a guessed default: refuse it. */
        if (!peek_is(&c, ','))
                return -EINVAL;
        c.p++;
        if (parse_date(&c, &rule.start) < 0 || !peek_is(&c, ','))
                return -EINVAL;
        c.p++;
        if (parse_date(&c, &rule.end) < 0 || !at_end(&c))
                return -EINVAL;
        *ret = rule;
        return 0;
}

/* The day (days since the epoch) a rule date falls on in `year`. */
static int64_t rule_day(const struct tz_rule_date *date, int64_t year)
{
        int64_t jan1 = civil_days_from_date(year, 1, 1);
        switch (date->kind) {
        case TZ_RULE_JULIAN_1:
                return jan1 + date->day - 1 + (civil_is_leap(year) && date->day >= 60);
        case TZ_RULE_JULIAN_0:
                return jan1 + date->day;
        case TZ_RULE_MONTH_WEEK:
        default: {
                int64_t first = civil_days_from_date(year, date->month, 1);
                /* POSIX counts weekdays from Sunday = 0; civil_weekday from Monday = 0. */
                unsigned first_weekday = (civil_weekday(first) + 1) % 7;
                int64_t day =
                    first + (date->weekday + 7 - first_weekday) % 7 + 7 * (int64_t)(date->week - 1);
                int64_t last = first + civil_days_in_month(year, date->month) - 1;
                while (day > last)
                        day -= 7;
                return day;
        }
        }
}

struct rule_change {
        int64_t at;
        bool to_dst;
};

/* The changes of years year-1 .. year+1, ascending; on a tie the end of daylight time comes
 * first, so that a zone in daylight time all year (a v3 footer like "…,0/0,J365/25") stays in it.
 */
static void rule_changes(const struct tz_rule *rule, int64_t year, struct rule_change ret[6])
{
        for (int i = 0; i < 3; i++) {
                int64_t y = year - 1 + i;
                ret[2 * i] = (struct rule_change){rule_day(&rule->end, y) * CIVIL_SEC_PER_DAY +
                                                      rule->end.time - rule->dst.utoff,
                                                  false};
                ret[2 * i + 1] =
                    (struct rule_change){rule_day(&rule->start, y) * CIVIL_SEC_PER_DAY +
                                             rule->start.time - rule->std.utoff,
                                         true};
        }
        for (int i = 1; i < 6; i++)
                for (int j = i; j > 0; j--) {
                        struct rule_change a = ret[j - 1], b = ret[j];
                        if (a.at < b.at || (a.at == b.at && !a.to_dst))
                                break;
                        ret[j - 1] = b;
                        ret[j] = a;
                }
}

static int64_t year_of(int64_t utc)
{
        return civil_date_from_days(civil_floor_div(utc, CIVIL_SEC_PER_DAY)).year;
}

struct tz_local tz_rule_local(const struct tz_rule *rule, int64_t utc)
{
        struct rule_change changes[6];
        bool dst = false;

        if (!rule->has_dst)
                return rule->std;
        rule_changes(rule, year_of(utc), changes);
        /* Year-1 ends with a change long before `utc`; the last one at or before it decides. */
        for (int i = 0; i < 6 && changes[i].at <= utc; i++)
                dst = changes[i].to_dst;
        return dst ? rule->dst : rule->std;
}

static bool same_local(struct tz_local a, struct tz_local b)
{
        return a.utoff == b.utoff && a.isdst == b.isdst;
}

bool tz_rule_next_transition(const struct tz_rule *rule, int64_t after, struct tz_transition *ret)
{
        if (!rule->has_dst)
                return false;
        /* Two changes a year: three years always hold the next real one. */
        for (int64_t year = year_of(after); year <= year_of(after) + 3; year++) {
                struct rule_change changes[6];
                rule_changes(rule, year, changes);
                for (int i = 0; i < 6; i++) {
                        if (changes[i].at <= after)
                                continue;
                        struct tz_local before = tz_rule_local(rule, changes[i].at - 1);
                        struct tz_local now = tz_rule_local(rule, changes[i].at);
                        if (same_local(before, now))
                                continue;
                        *ret = (struct tz_transition){changes[i].at, before.utoff, now.utoff};
                        return true;
                }
        }
        return false;
}
