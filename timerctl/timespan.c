/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "timespan.h"

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

#define USEC_PER_MINUTE (60ULL * USEC_PER_SEC)
#define USEC_PER_HOUR   (60ULL * USEC_PER_MINUTE)
#define USEC_PER_DAY    (24ULL * USEC_PER_HOUR)
#define USEC_PER_WEEK   (7ULL * USEC_PER_DAY)
#define USEC_PER_MONTH  (2629800ULL * USEC_PER_SEC)  /* 30.44 days, as systemd counts */
#define USEC_PER_YEAR   (31557600ULL * USEC_PER_SEC) /* 365.25 days */

/* A fraction is kept to six digits: nothing finer than a microsecond survives the longest unit. */
#define FRACTION_DIGITS_MAX 6

struct unit {
        const char *name;
        uint64_t usec;
};

static const struct unit parse_units[] = {
    {"us", 1},
    {"usec", 1},
    {"ms", USEC_PER_MSEC},
    {"msec", USEC_PER_MSEC},
    {"s", USEC_PER_SEC},
    {"sec", USEC_PER_SEC},
    {"second", USEC_PER_SEC},
    {"seconds", USEC_PER_SEC},
    {"m", USEC_PER_MINUTE},
    {"min", USEC_PER_MINUTE},
    {"minute", USEC_PER_MINUTE},
    {"minutes", USEC_PER_MINUTE},
    {"h", USEC_PER_HOUR},
    {"hr", USEC_PER_HOUR},
    {"hour", USEC_PER_HOUR},
    {"hours", USEC_PER_HOUR},
    {"d", USEC_PER_DAY},
    {"day", USEC_PER_DAY},
    {"days", USEC_PER_DAY},
    {"w", USEC_PER_WEEK},
    {"week", USEC_PER_WEEK},
    {"weeks", USEC_PER_WEEK},
    {"M", USEC_PER_MONTH},
    {"month", USEC_PER_MONTH},
    {"months", USEC_PER_MONTH},
    {"y", USEC_PER_YEAR},
    {"year", USEC_PER_YEAR},
    {"years", USEC_PER_YEAR},
};

/* Largest first; every one of them parses back. */
static const struct unit format_units[] = {
    {"d", USEC_PER_DAY}, {"h", USEC_PER_HOUR},  {"min", USEC_PER_MINUTE},
    {"s", USEC_PER_SEC}, {"ms", USEC_PER_MSEC}, {"us", 1},
};

static bool is_digit(char c)
{
        return c >= '0' && c <= '9';
}

static bool is_letter(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static const char *skip_spaces(const char *p)
{
        while (*p == ' ' || *p == '\t')
                p++;
        return p;
}

static int parse_unit(const char **p, uint64_t *ret)
{
        const char *word = *p;
        size_t len = 0;

        while (is_letter(word[len]))
                len++;
        *p = word + len;
        if (len == 0) {
                *ret = USEC_PER_SEC;
                return 0;
        }
        for (size_t i = 0; i < ELEMENTSOF(parse_units); i++)
                if (strlen(parse_units[i].name) == len &&
                    memcmp(parse_units[i].name, word, len) == 0) {
                        *ret = parse_units[i].usec;
                        return 0;
                }
        return -EINVAL;
}

static int parse_integer(const char **p, uint64_t *ret)
{
        uint64_t value = 0;

        if (!is_digit(**p))
                return -EINVAL;
        for (; is_digit(**p); (*p)++)
                if (__builtin_mul_overflow(value, 10, &value) ||
                    __builtin_add_overflow(value, (uint64_t)(**p - '0'), &value))
                        return -ERANGE;
        *ret = value;
        return 0;
}

/* ".5" → 5/10: numerator and denominator, digits past FRACTION_DIGITS_MAX dropped. */
static int parse_fraction(const char **p, uint64_t *ret_numerator, uint64_t *ret_denominator)
{
        uint64_t numerator = 0, denominator = 1;

        if (**p != '.') {
                *ret_numerator = 0;
                *ret_denominator = 1;
                return 0;
        }
        (*p)++;
        if (!is_digit(**p))
                return -EINVAL;
        for (unsigned digits = 0; is_digit(**p); (*p)++, digits++)
                if (digits < FRACTION_DIGITS_MAX) {
                        numerator = numerator * 10 + (uint64_t)(**p - '0');
                        denominator *= 10;
                }
        *ret_numerator = numerator;
        *ret_denominator = denominator;
        return 0;
}

/* One "1.5h" of a span, in microseconds. */
static int parse_component(const char **p, uint64_t *ret)
{
        uint64_t integer, numerator, denominator, unit, whole, part;
        int r;

        if (**p == '-')
                return -EDOM;
        r = parse_integer(p, &integer);
        if (r < 0)
                return r;
        r = parse_fraction(p, &numerator, &denominator);
        if (r < 0)
                return r;
        *p = skip_spaces(*p);
        r = parse_unit(p, &unit);
        if (r < 0)
                return r;

        /* unit * numerator / denominator without overflow: numerator < denominator <= 10^6. */
        part = unit / denominator * numerator + unit % denominator * numerator / denominator;
        if (__builtin_mul_overflow(integer, unit, &whole) ||
            __builtin_add_overflow(whole, part, ret))
                return -ERANGE;
        return 0;
}

int timespan_parse(const char *s, uint64_t *ret)
{
        uint64_t total = 0, component;
        const char *p = skip_spaces(s);
        int r;

        if (*p == 0)
                return -EINVAL;
        while (*p != 0) {
                r = parse_component(&p, &component);
                if (r < 0)
                        return r;
                if (__builtin_add_overflow(total, component, &total))
                        return -ERANGE;
                p = skip_spaces(p);
        }
        if (total > TIMESPAN_MAX_USEC)
                return -ERANGE;
        *ret = total;
        return 0;
}

const char *timespan_parse_error(int error)
{
        switch (error) {
        case -ERANGE:
                return "time span too large (at most about 292,000 years)";
        case -EDOM:
                return "time span must not be negative";
        default:
                return "not a time span (like 90s, 5min, 1h 30min, 500ms)";
        }
}

char *timespan_format(char buf[static TIMESPAN_FORMAT_MAX], uint64_t usec, uint64_t accuracy_usec)
{
        size_t len = 0;

        if (usec == 0) {
                strcpy(buf, "0");
                return buf;
        }
        buf[0] = 0;
        for (size_t i = 0; i < ELEMENTSOF(format_units) && usec > 0; i++) {
                if (len > 0 && usec < accuracy_usec)
                        break;
                if (usec < format_units[i].usec)
                        continue;
                /* Cannot truncate: TIMESPAN_FORMAT_MAX holds the longest span. */
                len += (size_t)snprintf(buf + len, TIMESPAN_FORMAT_MAX - len, "%s%" PRIu64 "%s",
                                        len > 0 ? " " : "", usec / format_units[i].usec,
                                        format_units[i].name);
                usec %= format_units[i].usec;
        }
        return buf;
}
