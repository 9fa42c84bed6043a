/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * timerctl calendar: what systemd-analyze calendar prints, computed by calendar/ with zones read
 * through zoneinfo/, so that a user can try an expression before a timer uses it. Needs no
 * service.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calendar/calendar.h"
#include "output.h"
#include "timespan.h"
#include "verbs.h"
#include "zoneinfo/zoneinfo.h"

/* Each line's label is right-aligned to systemd-analyze's width. */
#define LABEL_WIDTH 15

/* Where zone data comes from, for messages: --timezone, or the local zone. */
struct display_zone {
        char name[CALENDAR_ZONE_MAX];
        struct tz_zone *zone; /* NULL: UTC */
};

/* An expression's bad part: the text with a caret under it. */
static int expression_error(const char *text, const struct calendar_error *error)
{
        size_t offset = error->offset <= strlen(text) ? error->offset : strlen(text);

        fprintf(stderr, "timerctl: calendar: \"%s\": %s\n    %s\n    %*s^\n", text,
                calendar_error_message(error->code), text, (int)offset, "");
        return EXIT_STATUS_USAGE;
}

static int zone_error(const char *option, const char *name, int error, enum tz_error tz_error)
{
        if (error == -EINVAL && tz_error != TZ_E_NONE) {
                fprintf(stderr, "timerctl: %s\"%s\": not a time zone file: %s\n", option, name,
                        tz_error_message(tz_error));
                return EXIT_STATUS_FAILURE;
        }
        if (error == -EINVAL || error == -ENOENT || error == -ENOTDIR)
                return usage_error("%s\"%s\": no such time zone", option, name);
        fprintf(stderr, "timerctl: %s\"%s\": cannot read the time zone: %s\n", option, name,
                strerror(-error));
        return EXIT_STATUS_FAILURE;
}

static void print_elapse(const struct display_zone *display, int64_t usec, uint64_t now_usec,
                         const char *label)
{
        char time[ZONED_TIME_MAX], span[TIMESPAN_FORMAT_MAX];
        bool display_utc = !display->zone;

        printf("%*s: %s\n", LABEL_WIDTH, label,
               timestamp_format_zoned(time, display->zone, display_utc, usec));
        if (!display_utc)
                printf("%*s: %s\n", LABEL_WIDTH, "(in UTC)",
                       timestamp_format_zoned(time, NULL, true, usec));
        if (usec >= 0 && (uint64_t)usec > now_usec)
                printf("%*s: %s left\n", LABEL_WIDTH, "From now",
                       timespan_format(span, (uint64_t)usec - now_usec, USEC_PER_SEC));
        else
                printf("%*s: %s ago\n", LABEL_WIDTH, "From now",
                       timespan_format(span, now_usec - (uint64_t)usec, USEC_PER_SEC));
}

/* Etc/UTC, Zulu, Etc/GMT… are shown as UTC, with no second line "in UTC". */
static bool always_utc(const struct tz_zone *zone)
{
        const int64_t year_1 = -62135596800;
        struct tz_transition transition;

        return tz_zone_local(zone, year_1).utoff == 0 &&
               !tz_zone_next_transition(zone, year_1, &transition);
}

static int preview(const char *text, const struct options *o, const struct display_zone *display,
                   int64_t base_usec)
{
        struct calendar_spec spec;
        struct calendar_error error;
        char normalized[CALENDAR_FORMAT_MAX];
        struct tz_zone *own_zone = NULL;
        enum tz_error tz_error;
        int r;

        r = o->cron ? calendar_parse_cron(text, &spec, &error)
                    : calendar_parse(text, &spec, &error);
        if (r < 0)
                return expression_error(text, &error);
        /* An expression that names its zone is computed there, and shown in the display zone. */
        if (spec.zone[0]) {
                r = zoneinfo_load(spec.zone, &own_zone, &tz_error);
                if (r < 0)
                        return zone_error("calendar: ", spec.zone, r, tz_error);
        }
        r = calendar_format(&spec, normalized, sizeof(normalized));
        if (r < 0) {
                fprintf(stderr, "timerctl: calendar: \"%s\": cannot format it: %s\n", text,
                        strerror(-r));
                tz_zone_free(own_zone);
                return EXIT_STATUS_FAILURE;
        }
        /* As systemd-analyze, only when the two differ. */
        if (strcmp(text, normalized) != 0)
                printf("%*s: %s\n", LABEL_WIDTH, "Original form", text);
        printf("%*s: %s\n", LABEL_WIDTH, "Normalized form", normalized);

        const struct tz_zone *zone = spec.zone[0] ? own_zone : display->zone;
        int64_t t = base_usec;
        for (uint64_t i = 0; i < o->iterations; i++) {
                char label[32];

                r = calendar_next(&spec, zone, t, &t);
                if (r == -ENOENT) {
                        if (i == 0)
                                printf("%*s: never\n", LABEL_WIDTH, "Next elapse");
                        break;
                }
                if (r < 0) {
                        fprintf(stderr, "timerctl: calendar: \"%s\": %s\n", text,
                                r == -ERANGE ? "the base time is out of range" : strerror(-r));
                        tz_zone_free(own_zone);
                        return r == -ERANGE ? EXIT_STATUS_USAGE : EXIT_STATUS_FAILURE;
                }
                if (i == 0)
                        snprintf(label, sizeof(label), "Next elapse");
                else
                        snprintf(label, sizeof(label), "Iter. #%" PRIu64, i + 1);
                print_elapse(display, t, o->now.realtime_usec, label);
        }
        tz_zone_free(own_zone);
        return EXIT_STATUS_SUCCESS;
}

int verb_calendar(const struct options *o)
{
        struct display_zone display = {};
        enum tz_error tz_error;
        int status = EXIT_STATUS_SUCCESS;
        int r;

        if (o->timezone)
                snprintf(display.name, sizeof(display.name), "%s", o->timezone);
        else if (zoneinfo_local_name(display.name) == ZONEINFO_LOCAL_FALLBACK)
                fprintf(stderr, "timerctl: the local time zone is unknown (no /etc/timezone, and "
                                "/etc/localtime is no link into the zone files): using UTC\n");
        r = zoneinfo_load(display.name, &display.zone, &tz_error);
        if (r < 0)
                return zone_error(o->timezone ? "--timezone: " : "the local time zone: ",
                                  display.name, r, tz_error);
        if (display.zone && always_utc(display.zone)) {
                tz_zone_free(display.zone);
                display.zone = NULL;
        }
        uint64_t base = o->has_base_time ? o->base_time.usec : o->now.realtime_usec;
        if (base > INT64_MAX) {
                tz_zone_free(display.zone);
                return usage_error("--base-time: out of range");
        }

        /* Every expression is tried, as systemd-analyze does; the first failure is the status. */
        for (size_t i = 0; i < o->n_args; i++) {
                if (i > 0)
                        putchar('\n');
                r = preview(o->args[i], o, &display, (int64_t)base);
                if (status == EXIT_STATUS_SUCCESS)
                        status = r;
        }
        tz_zone_free(display.zone);
        return status;
}
