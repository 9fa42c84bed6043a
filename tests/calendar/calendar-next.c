/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * calendar-next [--cron] [--zone ZONE] [--iterations N] --base USEC EXPRESSION
 * Prints "Normalized form: …" and the next N elapses after USEC (µs since the epoch, UTC), one
 * per line in µs, then "end" if the expression stops elapsing first: what the differential tests
 * compare with `systemd-analyze calendar` and croniter. A parse error prints
 * "error OFFSET CODE: MESSAGE" and exits 1.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calendar/calendar.h"
#include "zoneinfo/zoneinfo.h"

struct options {
        bool cron;
        const char *zone;
        long iterations;
        int64_t base;
        const char *expression;
};

static int parse_options(int argc, char **argv, struct options *o)
{
        static const struct option long_options[] = {
            {"cron", no_argument, NULL, 'c'},
            {"zone", required_argument, NULL, 'z'},
            {"iterations", required_argument, NULL, 'n'},
            {"base", required_argument, NULL, 'b'},
            {0},
        };
        int c;
        *o = (struct options){.zone = "UTC", .iterations = 1};
        while ((c = getopt_long(argc, argv, "", long_options, NULL)) >= 0) {
                switch (c) {
                case 'c':
                        o->cron = true;
                        break;
                case 'z':
                        o->zone = optarg;
                        break;
                case 'n':
                        o->iterations = strtol(optarg, NULL, 10);
                        break;
                case 'b':
                        o->base = strtoll(optarg, NULL, 10);
                        break;
                default:
                        return -EINVAL;
                }
        }
        if (optind != argc - 1 || o->iterations < 1)
                return -EINVAL;
        o->expression = argv[optind];
        return 0;
}

int main(int argc, char **argv)
{
        struct options o;
        struct calendar_spec spec;
        struct calendar_error error;
        struct tz_zone *zone;
        char normalized[CALENDAR_FORMAT_MAX];

        if (parse_options(argc, argv, &o) < 0) {
                fprintf(stderr, "usage: calendar-next [--cron] [--zone ZONE] [--iterations N] "
                                "--base USEC EXPRESSION\n");
                return 2;
        }
        int r = o.cron ? calendar_parse_cron(o.expression, &spec, &error)
                       : calendar_parse(o.expression, &spec, &error);
        if (r < 0) {
                printf("error %zu %d: %s\n", error.offset, (int)error.code,
                       calendar_error_message(error.code));
                return 1;
        }
        r = zoneinfo_load(spec.zone[0] ? spec.zone : o.zone, &zone, NULL);
        if (r < 0) {
                printf("error zone: %s\n", strerror(-r));
                return 1;
        }
        if (calendar_format(&spec, normalized, sizeof(normalized)) < 0)
                return 3;
        printf("Normalized form: %s\n", normalized);
        int64_t t = o.base;
        for (long i = 0; i < o.iterations; i++) {
                r = calendar_next(&spec, zone, t, &t);
                if (r < 0) {
                        printf("end\n");
                        break;
                }
                printf("%" PRId64 "\n", t);
        }
        tz_zone_free(zone);
        return 0;
}
