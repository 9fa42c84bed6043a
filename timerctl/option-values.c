/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The values of timerctl's options: each reads its argument, reports a bad one, and sets its
 * part of struct options. The grammar (which option, which verb) is options.c's.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "option-values.h"
#include "property.h"
#include "timespan.h"
#include "users.h"

int parse_span(const char *option, const char *arg, uint64_t *ret)
{
        int r = timespan_parse(arg, ret);

        if (r < 0)
                return usage_error("%s: \"%s\": %s", option, arg, timespan_parse_error(r));
        return PARSE_CONTINUE;
}

int parse_positive_span(const char *option, const char *arg, uint64_t *ret)
{
        int r = parse_span(option, arg, ret);

        if (r == PARSE_CONTINUE && *ret == 0)
                return usage_error("%s: the span must be longer than 0", option);
        return r;
}

int parse_count(const char *option, const char *arg, uint64_t *ret)
{
        uint64_t value = 0;

        for (const char *p = arg; *p != 0; p++) {
                if (*p < '0' || *p > '9')
                        return usage_error("%s: \"%s\": not a number", option, arg);
                if (__builtin_mul_overflow(value, 10, &value) ||
                    __builtin_add_overflow(value, (uint64_t)(*p - '0'), &value))
                        return usage_error("%s: \"%s\": too large", option, arg);
        }
        if (arg[0] == 0 || value == 0)
                return usage_error("%s: \"%s\": must be a number above 0", option, arg);
        *ret = value;
        return PARSE_CONTINUE;
}

int set_start(struct options *o, const char *option, const struct timestamp *start)
{
        if (o->start_option)
                return usage_error("%s and %s cannot be combined", o->start_option, option);
        o->start_option = option;
        o->start = *start;
        return PARSE_CONTINUE;
}

/* The cadence of --every, --watchdog, --interval. */
int set_policy(struct options *o, const char *option, enum timerd_policy policy, const char *arg)
{
        if (o->policy_option)
                return usage_error("%s and %s cannot be combined", o->policy_option, option);
        o->policy_option = option;
        o->declaration.policy = policy;
        if (policy == TIMERD_POLICY_ONCE)
                return PARSE_CONTINUE;
        return parse_positive_span(option, arg, &o->declaration.cadence_usec);
}

/* One more calendar expression (cron: after TIMERD_CALENDAR_CRON_PREFIX): a calendar timer,
 * on realtime unless --clock says otherwise. */
int add_calendar_line(struct options *o, const char *option, const char *text)
{
        struct timerd_declaration *d = &o->declaration;
        size_t len = strlen(d->calendar);
        int n;

        if (o->policy_option && d->policy != TIMERD_POLICY_CALENDAR)
                return usage_error("%s and %s cannot be combined", o->policy_option, option);
        if (!text[0] || strchr(text, '\n'))
                return usage_error("%s: \"%s\": not an expression", option, text);
        n = snprintf(d->calendar + len, sizeof(d->calendar) - len, "%s%s%s", len > 0 ? "\n" : "",
                     strcmp(option, "--cron") == 0 ? TIMERD_CALENDAR_CRON_PREFIX : "", text);
        if (n < 0 || (size_t)n >= sizeof(d->calendar) - len)
                return usage_error("%s: the expressions are longer than %d bytes together", option,
                                   TIMERD_CALENDAR_MAX);
        if (!o->policy_option)
                o->policy_option = option;
        d->policy = TIMERD_POLICY_CALENDAR;
        if (!o->clock_given)
                d->clock = TIMERD_CLOCK_REALTIME;
        return PARSE_CONTINUE;
}

/* --once, with the delay of its first firing when given. */
int set_once(struct options *o, const char *arg)
{
        struct timestamp start = {.relative = true};
        int r;

        r = set_policy(o, "--once", TIMERD_POLICY_ONCE, NULL);
        if (r != PARSE_CONTINUE || !arg)
                return r;
        r = parse_span("--once", arg, &start.usec);
        return r != PARSE_CONTINUE ? r : set_start(o, "--once", &start);
}

int set_owner(struct options *o, const char *arg)
{
        int r = user_parse(arg, &o->owner);

        if (r == -ESRCH)
                return usage_error("--user: \"%s\": no such user", arg);
        if (r == -ERANGE)
                return usage_error("--user: \"%s\": not a uid (0 to %" PRIu32 ")", arg,
                                   UINT32_MAX - 1);
        if (r < 0) {
                fprintf(stderr, "timerctl: --user: cannot look up \"%s\": %s\n", arg, strerror(-r));
                return EXIT_STATUS_FAILURE;
        }
        return PARSE_CONTINUE;
}

int set_lifetime(struct options *o, const char *option, enum timerd_lifetime lifetime)
{
        if (o->lifetime_option && strcmp(o->lifetime_option, option) != 0)
                return usage_error("%s and %s cannot be combined", o->lifetime_option, option);
        o->lifetime_option = option;
        o->declaration.lifetime = lifetime;
        return PARSE_CONTINUE;
}

int set_at(struct options *o, const char *arg)
{
        struct timestamp ts;
        int r = timestamp_parse(arg, &o->now, &ts);

        if (r < 0)
                return usage_error("--at: \"%s\": %s", arg, timestamp_parse_error(r));
        return set_start(o, "--at", &ts);
}

int set_in(struct options *o, const char *arg)
{
        struct timestamp ts = {.relative = true};
        int r = parse_span("--in", arg, &ts.usec);

        return r != PARSE_CONTINUE ? r : set_start(o, "--in", &ts);
}

/* A "+5min" base time is from now, as systemd-analyze's. */
int set_base_time(struct options *o, const char *arg)
{
        int r = timestamp_parse(arg, &o->now, &o->base_time);

        if (r < 0)
                return usage_error("--base-time: \"%s\": %s", arg, timestamp_parse_error(r));
        if (o->base_time.relative)
                o->base_time = (struct timestamp){.usec = o->now.realtime_usec + o->base_time.usec};
        o->has_base_time = true;
        return PARSE_CONTINUE;
}

int add_properties(struct options *o, const char *arg)
{
        char name[64];

        if (o->n_properties >= PROPERTIES_MAX)
                return usage_error("-p: more than %d properties", PROPERTIES_MAX);
        for (const char *p = arg;; p++) {
                size_t len = strcspn(p, ",");

                if (len == 0 || len >= sizeof(name))
                        return usage_error("-p: \"%s\": not a list of properties", arg);
                memcpy(name, p, len);
                name[len] = 0;
                if (!property_known(name)) {
                        fprintf(stderr, "timerctl: -p: \"%s\": not a property of a timer (", name);
                        property_print_names(stderr);
                        return usage_error(")");
                }
                p += len;
                if (*p == 0)
                        break;
        }
        o->properties[o->n_properties++] = arg;
        return PARSE_CONTINUE;
}

/* value: optarg as one of the vocabulary's enums, negative when it is none of them. */
int check_choice(const char *option, int value, const char *choices)
{
        if (value < 0)
                return usage_error("%s: \"%s\": not one of %s", option, optarg, choices);
        return PARSE_CONTINUE;
}

/*
 * "--once 5min" as well as "--once=5min": take the next word when it is a span. Another word
 * stays an argument (the timer's name, perhaps), remembered in case it was meant as the span.
 */
const char *optional_span(int argc, char *argv[], struct options *o)
{
        uint64_t span;

        if (optarg)
                return optarg;
        if (optind >= argc || argv[optind][0] == '-')
                return NULL;
        if (timespan_parse(argv[optind], &span) >= 0)
                return argv[optind++];
        o->once_word = argv[optind];
        return NULL;
}

int set_handover(struct options *o, const char *arg)
{
        int r = parse_span("--handover", arg, &o->declaration.handover_usec);

        if (r == PARSE_CONTINUE && o->declaration.handover_usec > TIMERD_HANDOVER_MAX_USEC)
                return usage_error("--handover: \"%s\": at most 1s", arg);
        return r;
}
