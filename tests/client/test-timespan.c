/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* timerctl's time spans: what people may type, what is refused and why, how spans are shown. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "timespan.h"

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

#define SEC    1000000ULL
#define MINUTE (60ULL * SEC)
#define HOUR   (60ULL * MINUTE)
#define DAY    (24ULL * HOUR)

struct parse_case {
        const char *text;
        int error;
        uint64_t usec;
};

static const struct parse_case parse_cases[] = {
    {"90s", 0, 90 * SEC},
    {"5min", 0, 5 * MINUTE},
    {"1h 30min", 0, HOUR + 30 * MINUTE},
    {"1h30min", 0, HOUR + 30 * MINUTE},
    {"  1h   30min  ", 0, HOUR + 30 * MINUTE},
    {"2h", 0, 2 * HOUR},
    {"500ms", 0, 500000},
    {"10us", 0, 10},
    {"10usec", 0, 10},
    {"1d", 0, DAY},
    {"2 days", 0, 2 * DAY},
    {"1w", 0, 7 * DAY},
    {"1y", 0, 31557600 * SEC},
    {"1M", 0, 2629800 * SEC},
    {"3m", 0, 3 * MINUTE},
    {"5 min", 0, 5 * MINUTE},
    {"1 hour 2 minutes 3 seconds", 0, HOUR + 2 * MINUTE + 3 * SEC},
    {"42", 0, 42 * SEC},
    {"0", 0, 0},
    {"1h 30", 0, HOUR + 30 * SEC},
    {"1.5h", 0, HOUR + 30 * MINUTE},
    {"0.25s", 0, 250000},
    {"1.0000005s", 0, SEC}, /* finer than a microsecond is dropped */
    {"2.5ms", 0, 2500},
    {"1.5us", 0, 1},
    {"1h1h", 0, 2 * HOUR},
    /* The longest span the service's wire carries: INT64_MAX microseconds. */
    {"9223372036854775807us", 0, INT64_MAX},
    {"292000y", 0, 292000ULL * 31557600ULL * SEC},
    {"", -EINVAL, 0},
    {"   ", -EINVAL, 0},
    {"abc", -EINVAL, 0},
    {"5 parsecs", -EINVAL, 0},
    {"5mins!", -EINVAL, 0},
    {"s", -EINVAL, 0},
    {"1.s", -EINVAL, 0},
    {".5s", -EINVAL, 0},
    {"1.5.3s", -EINVAL, 0},
    {"+5s", -EINVAL, 0},
    {"5MIN", -EINVAL, 0},
    {"0x10s", -EINVAL, 0},
    {"-5s", -EDOM, 0},
    {" -1", -EDOM, 0},
    {"1h -5min", -EDOM, 0},
    {"9223372036854775808us", -ERANGE, 0},
    {"9223372036854775807us 1us", -ERANGE, 0},
    {"292272y", -ERANGE, 0},
    {"18446744073709551615us", -ERANGE, 0},
    {"18446744073709551616us", -ERANGE, 0},
    {"99999999999999999999999s", -ERANGE, 0},
    {"18446744073709551615s", -ERANGE, 0},
    {"600000y", -ERANGE, 0},
    {"18446744073709551615us 1us", -ERANGE, 0},
};

static void test_parse(void **state)
{
        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(parse_cases); i++) {
                const struct parse_case *c = &parse_cases[i];
                uint64_t usec = 12345;
                int r = timespan_parse(c->text, &usec);

                if (r != c->error)
                        fail_msg("\"%s\": returned %d, expected %d", c->text, r, c->error);
                if (c->error == 0 && usec != c->usec)
                        fail_msg("\"%s\": %llu usec, expected %llu", c->text,
                                 (unsigned long long)usec, (unsigned long long)c->usec);
                if (c->error != 0 && usec != 12345)
                        fail_msg("\"%s\": refused but wrote the result", c->text);
        }
}

static void test_parse_error_messages(void **state)
{
        (void)state;
        assert_string_equal(timespan_parse_error(-ERANGE),
                            "time span too large (at most about 292,000 years)");
        assert_string_equal(timespan_parse_error(-EDOM), "time span must not be negative");
        assert_string_equal(timespan_parse_error(-EINVAL),
                            "not a time span (like 90s, 5min, 1h 30min, 500ms)");
}

struct format_case {
        uint64_t usec;
        uint64_t accuracy;
        const char *text;
};

static const struct format_case format_cases[] = {
    {0, 1, "0"},
    {1, 1, "1us"},
    {250000, 1, "250ms"},
    {90 * SEC, 1, "1min 30s"},
    {HOUR + 30 * MINUTE, 1, "1h 30min"},
    {4 * MINUTE + 12 * SEC, 1, "4min 12s"},
    {2 * DAY + 5 * SEC, 1, "2d 5s"},
    {SEC + 500, 1, "1s 500us"},
    /* With an accuracy, smaller parts go once a larger one is shown. */
    {4 * MINUTE + 12 * SEC + 500000, SEC, "4min 12s"},
    {250000, SEC, "250ms"},
    {3 * SEC + 999999, SEC, "3s"},
    {HOUR + 59 * SEC, MINUTE, "1h"},
    {5, 0, "5us"},
    {INT64_MAX, 1, "106751991d 4h 54s 775ms 807us"},
    /* Longer than any span typed in, but shown whole. */
    {UINT64_MAX, 1, "213503982d 8h 1min 49s 551ms 615us"},
};

static void test_format(void **state)
{
        char buf[TIMESPAN_FORMAT_MAX];

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(format_cases); i++) {
                const struct format_case *c = &format_cases[i];

                assert_string_equal(timespan_format(buf, c->usec, c->accuracy), c->text);
        }
}

/* What is shown can be typed back. */
static void test_format_parses_back(void **state)
{
        char buf[TIMESPAN_FORMAT_MAX];
        uint64_t usec;

        (void)state;
        for (size_t i = 0; i < ELEMENTSOF(format_cases); i++) {
                if (format_cases[i].accuracy > 1 || format_cases[i].usec > TIMESPAN_MAX_USEC)
                        continue;
                assert_int_equal(
                    timespan_parse(timespan_format(buf, format_cases[i].usec, 1), &usec), 0);
                assert_true(usec == format_cases[i].usec);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_parse),
            cmocka_unit_test(test_parse_error_messages),
            cmocka_unit_test(test_format),
            cmocka_unit_test(test_format_parses_back),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
