/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * bench-calendar ZONE BASE_SECONDS REPEATS EXPRESSION [--cron]
 * The cost of one next-elapse computation in calendar/, from the same base each time, REPEATS
 * times after a warm-up: prints "next NS parse+next NS" (nanoseconds per computation, the best
 * of five rounds), the second including the parse as the external tools' figures do.
 * bench/calendar-compare sets them beside systemd-analyze calendar and croniter.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calendar/calendar.h"
#include "zoneinfo/zoneinfo.h"

#define ROUNDS 5

static int64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int parse(const char *text, bool cron, struct calendar_spec *spec)
{
        struct calendar_error error;
        int r = cron ? calendar_parse_cron(text, spec, &error) : calendar_parse(text, spec, &error);

        if (r < 0)
                fprintf(stderr, "bench-calendar: \"%s\": %s at %zu\n", text,
                        calendar_error_message(error.code), error.offset);
        return r;
}

int main(int argc, char **argv)
{
        static struct calendar_spec spec; /* 4.7 KiB: not on the stack of each round */
        struct tz_zone *zone;
        int64_t next, sink = 0;

        if (argc < 5 || argc > 6 || (argc == 6 && strcmp(argv[5], "--cron") != 0)) {
                fprintf(stderr, "usage: bench-calendar ZONE BASE_SECONDS REPEATS EXPRESSION "
                                "[--cron]\n");
                return 2;
        }
        bool cron = argc == 6;
        int64_t base = strtoll(argv[2], NULL, 10) * 1000000;
        long repeats = strtol(argv[3], NULL, 10);
        if (repeats < 1)
                return 2;
        int r = zoneinfo_load(argv[1], &zone, NULL);
        if (r < 0) {
                fprintf(stderr, "bench-calendar: %s: %s\n", argv[1], strerror(-r));
                return 1;
        }
        if (parse(argv[4], cron, &spec) < 0)
                return 1;
        r = calendar_next(&spec, zone, base, &next);
        if (r < 0) {
                fprintf(stderr, "bench-calendar: no next elapse: %s\n", strerror(-r));
                return 1;
        }

        int64_t best_next = INT64_MAX, best_both = INT64_MAX;
        for (int round = 0; round < ROUNDS; round++) {
                int64_t start = now_ns();
                for (long i = 0; i < repeats; i++) {
                        (void)calendar_next(&spec, zone, base, &next);
                        sink += next;
                }
                int64_t elapsed = now_ns() - start;
                best_next = elapsed < best_next ? elapsed : best_next;

                start = now_ns();
                for (long i = 0; i < repeats; i++) {
                        (void)parse(argv[4], cron, &spec);
                        (void)calendar_next(&spec, zone, base, &next);
                        sink += next;
                }
                elapsed = now_ns() - start;
                best_both = elapsed < best_both ? elapsed : best_both;
        }
        /* The elapses, so that the loops are not optimized away and can be checked. */
        fprintf(stderr, "bench-calendar: next elapse %" PRId64 " (checksum %" PRIx64 ")\n", next,
                (uint64_t)sink);
        printf("next %.0f parse+next %.0f\n", (double)best_next / (double)repeats,
               (double)best_both / (double)repeats);
        tz_zone_free(zone);
        return 0;
}
