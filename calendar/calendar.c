/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The systemd.time(7) calendar grammar, as systemd 252 accepts it:
 *   [WEEKDAYS] [[YEAR-]MONTH(-|~)DAY] [HOUR:MINUTE[:SECOND]] [ZONE]
 * or a shorthand (minutely … semiannually) or @EPOCH-SECONDS. Each component is "*" or a list of
 * VALUE, VALUE..VALUE, VALUE/REPEAT, VALUE..VALUE/REPEAT; seconds may have six fractional
 * digits. Offsets in errors point into the caller's text.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "calendar-internal.h"
#include "civil.h"

#define USEC_PER_SEC 1000000
/* Longer text is no calendar expression; bounding it bounds every offset. */
#define CALENDAR_TEXT_MAX 1024

struct parser {
        const char *text; /* the caller's text; offsets count from here */
        const char *p;
        struct calendar_spec *spec;
        struct calendar_error *error;
        size_t field_offset[FIELD_MAX];
        size_t date_offset, weekday_offset;
};

static int fail_at(struct parser *ps, const char *at, enum calendar_error_code code)
{
        *ps->error = (struct calendar_error){code, (size_t)(at - ps->text)};
        return -EINVAL;
}

static bool is_digit(char c)
{
        return c >= '0' && c <= '9';
}

static bool is_alpha(char c)
{
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

struct calendar_field *calendar_field_of(struct calendar_spec *spec, enum calendar_field_id id)
{
        struct calendar_field *fields[FIELD_MAX] = {&spec->year, &spec->month,  &spec->day,
                                                    &spec->hour, &spec->minute, &spec->usec};
        return fields[id];
}

static int add_range(struct parser *ps, struct calendar_field *field, const char *at,
                     struct calendar_range range)
{
        if (field->n >= CALENDAR_RANGES_MAX)
                return fail_at(ps, at, CALENDAR_E_TOO_MANY);
        field->ranges[field->n++] = range;
        return 0;
}

static void set_const(struct calendar_field *field, int32_t value)
{
        field->n = 1;
        field->ranges[0] = (struct calendar_range){value, -1, 0};
}

/* Digits, and for seconds an optional fraction ("7.5", but "7..9" is a range). */
static int parse_value(struct parser *ps, bool usec, int32_t *ret)
{
        const char *start = ps->p;
        int64_t value = 0;
        if (!is_digit(*ps->p))
                return fail_at(ps, ps->p, CALENDAR_E_NUMBER);
        while (is_digit(*ps->p)) {
                value = value * 10 + (*ps->p - '0');
                if (value > INT32_MAX)
                        return fail_at(ps, start, CALENDAR_E_NUMBER);
                ps->p++;
        }
        if (usec) {
                value *= USEC_PER_SEC;
                if (ps->p[0] == '.' && ps->p[1] != '.') {
                        int64_t scale = USEC_PER_SEC / 10;
                        if (!is_digit(*++ps->p))
                                return fail_at(ps, ps->p, CALENDAR_E_NUMBER);
                        for (; is_digit(*ps->p) && scale > 0; ps->p++, scale /= 10)
                                value += (*ps->p - '0') * scale;
                        /* Rounded to the microsecond; further digits are ignored. */
                        if (is_digit(*ps->p) && *ps->p >= '5')
                                value++;
                        while (is_digit(*ps->p))
                                ps->p++;
                }
                if (value > INT32_MAX)
                        return fail_at(ps, start, CALENDAR_E_NUMBER);
        }
        *ret = (int32_t)value;
        return 0;
}

static bool ends_component(char c)
{
        return c == '\0' || c == ' ' || c == ',' || c == '-' || c == '~' || c == ':';
}

static int parse_chain(struct parser *ps, bool usec, struct calendar_field *field)
{
        int r;
        *field = (struct calendar_field){0};
        if (*ps->p == '*') {
                ps->p++;
                if (usec)
                        *field = (struct calendar_field){.n = 1, .ranges = {{0, -1, USEC_PER_SEC}}};
                return 0;
        }
        for (;;) {
                const char *item = ps->p;
                struct calendar_range range = {.stop = -1};
                if ((r = parse_value(ps, usec, &range.start)) < 0)
                        return r;
                if (ps->p[0] == '.' && ps->p[1] == '.') {
                        ps->p += 2;
                        if ((r = parse_value(ps, usec, &range.stop)) < 0)
                                return r;
                        range.repeat = usec ? USEC_PER_SEC : 1;
                }
                if (*ps->p == '/') {
                        const char *repeat = ++ps->p;
                        if ((r = parse_value(ps, usec, &range.repeat)) < 0)
                                return r;
                        if (range.repeat == 0)
                                return fail_at(ps, repeat, CALENDAR_E_REPEAT);
                } else if (usec && range.stop >= 0 && range.start + USEC_PER_SEC > range.stop) {
                        /* Seconds repeat by whole seconds: a shorter range is refused. */
                        return fail_at(ps, item, CALENDAR_E_RANGE);
                }
                if (!ends_component(*ps->p))
                        return fail_at(ps, ps->p, CALENDAR_E_SYNTAX);
                if ((r = add_range(ps, field, item, range)) < 0)
                        return r;
                if (*ps->p != ',')
                        return 0;
                ps->p++;
        }
}

static void skip_spaces(struct parser *ps)
{
        while (*ps->p == ' ')
                ps->p++;
}

static int weekday_prefix(const char *p, size_t *ret_length)
{
        static const char *const names[] = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                            "Friday", "Saturday", "Sunday"};
        for (int i = 0; i < 7; i++) {
                size_t full = strlen(names[i]);
                if (strncasecmp(p, names[i], full) == 0) {
                        *ret_length = full;
                        return i;
                }
                if (strncasecmp(p, names[i], 3) == 0) {
                        *ret_length = 3;
                        return i;
                }
        }
        return -1;
}

/* "Mon,Wed..Fri " — a list of days and ranges ("-" is an old spelling of ".."). */
static int parse_weekdays(struct parser *ps)
{
        int range_start = -1;
        ps->weekday_offset = (size_t)(ps->p - ps->text);
        for (bool first = true;; first = false) {
                size_t length;
                int day = weekday_prefix(ps->p, &length);
                if (day < 0)
                        return first ? 0 : fail_at(ps, ps->p, CALENDAR_E_WEEKDAY);
                char after = ps->p[length];
                if (!(after == '\0' || after == '-' || after == '.' || after == ',' ||
                      after == ' '))
                        return fail_at(ps, ps->p, CALENDAR_E_WEEKDAY);
                if (range_start > day)
                        return fail_at(ps, ps->p, CALENDAR_E_WEEKDAY);
                for (int d = range_start >= 0 ? range_start : day; d <= day; d++)
                        ps->spec->weekdays |= (uint8_t)(1u << d);
                ps->p += length;
                if (*ps->p == '\0')
                        return 0;
                if (*ps->p == ' ') {
                        skip_spaces(ps);
                        return 0;
                }
                if (*ps->p == '.' || *ps->p == '-') {
                        if (range_start >= 0 || (*ps->p == '.' && ps->p[1] != '.'))
                                return fail_at(ps, ps->p, CALENDAR_E_WEEKDAY);
                        range_start = day;
                        ps->p += *ps->p == '.' ? 2 : 1;
                } else if (*ps->p == ',') {
                        range_start = -1;
                        ps->p++;
                }
                /* A trailing comma is fine, an open range is not. */
                if (*ps->p == '\0' || *ps->p == ' ') {
                        skip_spaces(ps);
                        return range_start < 0 ? 0 : fail_at(ps, ps->p, CALENDAR_E_WEEKDAY);
                }
        }
}

/* "@1700000000": one instant, in UTC. */
static int parse_epoch(struct parser *ps)
{
        const char *start = ++ps->p;
        int64_t value = 0;
        if (!is_digit(*ps->p))
                return fail_at(ps, ps->p, CALENDAR_E_NUMBER);
        while (is_digit(*ps->p)) {
                value = value * 10 + (*ps->p - '0');
                /* Beyond year 9999 there is nothing to schedule. */
                if (value > INT64_C(253402300799))
                        return fail_at(ps, start, CALENDAR_E_NUMBER);
                ps->p++;
        }
        int64_t days = civil_floor_div(value, CIVIL_SEC_PER_DAY);
        int64_t second = value - days * CIVIL_SEC_PER_DAY;
        struct civil_date date = civil_date_from_days(days);
        struct calendar_spec *s = ps->spec;
        set_const(&s->year, (int32_t)date.year);
        set_const(&s->month, (int32_t)date.month);
        set_const(&s->day, (int32_t)date.day);
        set_const(&s->hour, (int32_t)(second / 3600));
        set_const(&s->minute, (int32_t)(second / 60 % 60));
        set_const(&s->usec, (int32_t)(second % 60) * USEC_PER_SEC);
        s->utc = true;
        return 1;
}

static int date_separator(struct parser *ps)
{
        if (*ps->p == '~')
                ps->spec->end_of_month = true;
        else if (*ps->p != '-')
                return fail_at(ps, ps->p, CALENDAR_E_SYNTAX);
        ps->p++;
        return 0;
}

/* MONTH-DAY or YEAR-MONTH-DAY; returns 1 when an @epoch left no time to parse. */
static int parse_date(struct parser *ps)
{
        struct calendar_field first, second;
        size_t offsets[3];
        int r;

        if (*ps->p == '\0')
                return 0;
        if (*ps->p == '@')
                return parse_epoch(ps);
        const char *start = ps->p;
        ps->date_offset = offsets[0] = (size_t)(ps->p - ps->text);
        if ((r = parse_chain(ps, false, &first)) < 0)
                return r;
        if (*ps->p == '\0' || *ps->p == ':') {
                ps->p = start; /* a time, not a date */
                return 0;
        }
        if ((r = date_separator(ps)) < 0)
                return r;
        offsets[1] = (size_t)(ps->p - ps->text);
        if ((r = parse_chain(ps, false, &second)) < 0)
                return r;
        if (*ps->p == '\0' || *ps->p == ' ') {
                skip_spaces(ps);
                ps->spec->month = first;
                ps->spec->day = second;
                ps->field_offset[FIELD_MONTH] = offsets[0];
                ps->field_offset[FIELD_DAY] = offsets[1];
                return 0;
        }
        if (ps->spec->end_of_month)
                return fail_at(ps, ps->p, CALENDAR_E_SYNTAX);
        if ((r = date_separator(ps)) < 0)
                return r;
        offsets[2] = (size_t)(ps->p - ps->text);
        if ((r = parse_chain(ps, false, &ps->spec->day)) < 0)
                return r;
        if (*ps->p != '\0' && *ps->p != ' ')
                return fail_at(ps, ps->p, CALENDAR_E_SYNTAX);
        skip_spaces(ps);
        ps->spec->year = first;
        ps->spec->month = second;
        for (int i = 0; i < 3; i++)
                ps->field_offset[FIELD_YEAR + i] = offsets[i];
        return 0;
}

/* HOUR:MINUTE[:SECOND]; nothing at all means 00:00:00. */
static int parse_time(struct parser *ps)
{
        struct calendar_spec *s = ps->spec;
        int r;

        set_const(&s->hour, 0);
        set_const(&s->minute, 0);
        set_const(&s->usec, 0);
        if (*ps->p == '\0')
                return 0;
        ps->field_offset[FIELD_HOUR] = (size_t)(ps->p - ps->text);
        if ((r = parse_chain(ps, false, &s->hour)) < 0)
                return r;
        if (*ps->p != ':')
                return fail_at(ps, ps->p, CALENDAR_E_SYNTAX);
        ps->p++;
        ps->field_offset[FIELD_MINUTE] = (size_t)(ps->p - ps->text);
        if ((r = parse_chain(ps, false, &s->minute)) < 0)
                return r;
        if (*ps->p == '\0')
                return 0;
        if (*ps->p != ':')
                return fail_at(ps, ps->p, CALENDAR_E_SYNTAX);
        ps->p++;
        ps->field_offset[FIELD_USEC] = (size_t)(ps->p - ps->text);
        if ((r = parse_chain(ps, true, &s->usec)) < 0)
                return r;
        return *ps->p == '\0' ? 0 : fail_at(ps, ps->p, CALENDAR_E_SYNTAX);
}

static bool parse_shorthand(const char *text, struct calendar_spec *s)
{
        static const struct {
                const char *name;
                int depth;       /* 1: seconds, 2: +minutes, 3: +hours, 4: +day 1 */
                uint16_t months; /* a bit per month from January; 0: every month */
                bool monday;
        } shorthands[] = {
            {"minutely", 1, 0, false},
            {"hourly", 2, 0, false},
            {"daily", 3, 0, false},
            {"weekly", 3, 0, true},
            {"monthly", 4, 0, false},
            {"yearly", 4, 0x001, false},
            {"annually", 4, 0x001, false},
            {"anually", 4, 0x001, false},
            {"quarterly", 4, 0x249, false},
            {"semiannually", 4, 0x041, false},
            {"semi-annually", 4, 0x041, false},
            {"biannually", 4, 0x041, false},
            {"bi-annually", 4, 0x041, false},
        };
        for (size_t i = 0; i < sizeof(shorthands) / sizeof(shorthands[0]); i++) {
                if (strcasecmp(text, shorthands[i].name) != 0)
                        continue;
                set_const(&s->usec, 0);
                if (shorthands[i].depth >= 2)
                        set_const(&s->minute, 0);
                if (shorthands[i].depth >= 3)
                        set_const(&s->hour, 0);
                if (shorthands[i].depth >= 4)
                        set_const(&s->day, 1);
                for (int m = 0; m < 12; m++)
                        if (shorthands[i].months & (1u << m))
                                s->month.ranges[s->month.n++] =
                                    (struct calendar_range){m + 1, -1, 0};
                s->weekdays = shorthands[i].monday ? 1 : 0;
                return true;
        }
        return false;
}

static bool zone_char(char c)
{
        return is_alpha(c) || is_digit(c) || c == '/' || c == '_' || c == '-' || c == '+';
}

/* A trailing " UTC" or IANA zone name; returns the length of what precedes it. */
static int split_zone(struct parser *ps, size_t length, size_t *ret_length)
{
        const char *text = ps->text;
        *ret_length = length;
        if (length >= 4 && strncasecmp(text + length - 4, " UTC", 4) == 0) {
                ps->spec->utc = true;
                *ret_length = length - 4;
                return 0;
        }
        const char *space = strrchr(text, ' ');
        if (!space || !is_alpha(space[1]))
                return 0;
        const char *name = space + 1;
        size_t n = length - (size_t)(name - text);
        if (n >= CALENDAR_ZONE_MAX || strstr(name, "//") || name[n - 1] == '/')
                return fail_at(ps, name, CALENDAR_E_ZONE);
        for (size_t i = 0; i < n; i++)
                if (!zone_char(name[i]))
                        return fail_at(ps, name + i, CALENDAR_E_ZONE);
        if (strcmp(name, "UTC") == 0)
                ps->spec->utc = true;
        else
                memcpy(ps->spec->zone, name, n + 1);
        *ret_length = (size_t)(space - text);
        return 0;
}

static int parse_expression(struct parser *ps)
{
        int r;
        if ((r = parse_weekdays(ps)) < 0)
                return r;
        if ((r = parse_date(ps)) < 0)
                return r;
        if (r == 0 && (r = parse_time(ps)) < 0)
                return r;
        return *ps->p == '\0' ? 0 : fail_at(ps, ps->p, CALENDAR_E_SYNTAX);
}

/* Checks, and finds an expression that can never elapse by searching 401 years of wall time. */
static int finish(struct parser *ps)
{
        enum calendar_field_id field;
        struct calendar_wall found, epoch = {CALENDAR_YEAR_MIN, 1, 1, 0, 0, 0};

        calendar_normalize(ps->spec);
        enum calendar_error_code code = calendar_validate(ps->spec, &field);
        if (code != CALENDAR_E_NONE)
                return fail_at(ps, ps->text + ps->field_offset[field], code);
        if (calendar_next_wall(ps->spec, &epoch, CALENDAR_YEAR_MIN + CALENDAR_HORIZON_YEARS,
                               &found) < 0)
                return fail_at(
                    ps, ps->text + (ps->spec->weekdays ? ps->weekday_offset : ps->date_offset),
                    CALENDAR_E_NEVER);
        return 0;
}

int calendar_parse(const char *text, struct calendar_spec *ret, struct calendar_error *ret_error)
{
        char expression[CALENDAR_TEXT_MAX + 1];
        struct calendar_spec spec = {.syntax = CALENDAR_SYNTAX_SYSTEMD};
        struct parser ps = {.text = text, .spec = &spec, .error = ret_error};
        size_t length = strnlen(text, CALENDAR_TEXT_MAX + 1), expression_length;
        int r;

        *ret_error = (struct calendar_error){0};
        if (length > CALENDAR_TEXT_MAX)
                return fail_at(&ps, text + CALENDAR_TEXT_MAX, CALENDAR_E_SYNTAX);
        if ((r = split_zone(&ps, length, &expression_length)) < 0)
                return r;
        if (expression_length == 0)
                return fail_at(&ps, text, CALENDAR_E_EMPTY);
        /* The expression without its zone, at the same offsets as in the caller's text. */
        memcpy(expression, text, expression_length);
        expression[expression_length] = '\0';
        ps.text = ps.p = expression;
        if (!parse_shorthand(expression, &spec) && (r = parse_expression(&ps)) < 0)
                return r;
        if ((r = finish(&ps)) < 0)
                return r;
        *ret = spec;
        return 0;
}

static int compare_ranges(const void *a, const void *b)
{
        const struct calendar_range *x = a, *y = b;
        if (x->start != y->start)
                return x->start < y->start ? -1 : 1;
        if (x->stop != y->stop)
                return x->stop < y->stop ? -1 : 1;
        return x->repeat < y->repeat ? -1 : x->repeat > y->repeat;
}

static void normalize_field(struct calendar_field *field)
{
        unsigned kept = 0;
        for (unsigned i = 0; i < field->n; i++) {
                struct calendar_range *r = &field->ranges[i];
                if (r->stop > r->start && r->repeat > 0)
                        r->stop -= (r->stop - r->start) % r->repeat;
                /* A range too short to repeat even once is its start alone ("5..5", "18..19/4"). */
                if (r->stop >= r->start && r->repeat > 0 && r->start + r->repeat > r->stop)
                        *r = (struct calendar_range){r->start, -1, 0};
        }
        qsort(field->ranges, field->n, sizeof(field->ranges[0]), compare_ranges);
        for (unsigned i = 0; i < field->n; i++)
                if (kept == 0 || compare_ranges(&field->ranges[kept - 1], &field->ranges[i]) != 0)
                        field->ranges[kept++] = field->ranges[i];
        field->n = kept;
}

/* Two-digit years: 0..69 are 2000..2069, 70..99 are 1970..1999. */
static int32_t full_year(int32_t year)
{
        if (year >= 0 && year < 70)
                return year + 2000;
        if (year >= 70 && year < 100)
                return year + 1900;
        return year;
}

void calendar_normalize(struct calendar_spec *spec)
{
        if (spec->weekdays == 0x7f)
                spec->weekdays = 0;
        if (spec->end_of_month && spec->day.n == 0)
                spec->end_of_month = false;
        for (unsigned i = 0; i < spec->year.n; i++) {
                spec->year.ranges[i].start = full_year(spec->year.ranges[i].start);
                spec->year.ranges[i].stop = full_year(spec->year.ranges[i].stop);
        }
        for (int f = 0; f < FIELD_MAX; f++)
                normalize_field(calendar_field_of(spec, (enum calendar_field_id)f));
}

static enum calendar_error_code validate_field(const struct calendar_field *field, int32_t from,
                                               int32_t to, bool end_of_month)
{
        /* Days counted from the month's end reach back at most 28 days. */
        if (end_of_month)
                to -= 3;
        for (unsigned i = 0; i < field->n; i++) {
                const struct calendar_range *r = &field->ranges[i];
                if (r->start < from || r->start > to)
                        return CALENDAR_E_RANGE;
                if (r->repeat > to - from)
                        return CALENDAR_E_REPEAT;
                if (r->stop >= 0) {
                        if (r->stop < from || r->stop > to || r->start + r->repeat > r->stop)
                                return CALENDAR_E_RANGE;
                } else if (end_of_month ? r->start - r->repeat < from : r->start + r->repeat > to) {
                        return CALENDAR_E_REPEAT;
                }
        }
        return CALENDAR_E_NONE;
}

enum calendar_error_code calendar_validate(const struct calendar_spec *spec,
                                           enum calendar_field_id *ret_field)
{
        static const int32_t bounds[FIELD_MAX][2] = {
            [FIELD_YEAR] = {CALENDAR_YEAR_MIN, CALENDAR_YEAR_MAX},
            [FIELD_MONTH] = {1, 12},
            [FIELD_DAY] = {1, 31},
            [FIELD_HOUR] = {0, 23},
            [FIELD_MINUTE] = {0, 59},
            [FIELD_USEC] = {0, CALENDAR_USEC_PER_MINUTE - 1},
        };
        for (int f = 0; f < FIELD_MAX; f++) {
                const struct calendar_field *field =
                    calendar_field_of((struct calendar_spec *)spec, (enum calendar_field_id)f);
                enum calendar_error_code code = validate_field(
                    field, bounds[f][0], bounds[f][1], f == FIELD_DAY && spec->end_of_month);
                if (code != CALENDAR_E_NONE) {
                        *ret_field = (enum calendar_field_id)f;
                        return code;
                }
        }
        return CALENDAR_E_NONE;
}

const char *calendar_error_message(enum calendar_error_code code)
{
        static const char *const messages[CALENDAR_E_MAX] = {
            [CALENDAR_E_NONE] = "no error",
            [CALENDAR_E_EMPTY] = "the expression is empty",
            [CALENDAR_E_SYNTAX] = "unexpected character",
            [CALENDAR_E_WEEKDAY] = "invalid weekday or weekday range",
            [CALENDAR_E_NUMBER] = "a number is expected here, or it is too large",
            [CALENDAR_E_RANGE] = "a value is outside its field, or a range is empty",
            [CALENDAR_E_REPEAT] = "a repetition is 0 or longer than its field",
            [CALENDAR_E_TOO_MANY] = "too many list items",
            [CALENDAR_E_ZONE] = "invalid time zone name",
            [CALENDAR_E_FIELDS] = "a cron expression has five fields",
            [CALENDAR_E_NEVER] = "the expression can never elapse",
        };
        return code < CALENDAR_E_MAX ? messages[code] : "unknown error";
}
