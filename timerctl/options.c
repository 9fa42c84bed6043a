/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "help.h"
#include "option-values.h"
#include "options.h"
#include "timespan.h"

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
#define VERB_BIT(v)   (1U << (v))
#define ALL_VERBS     ((1U << VERB_MAX) - 1)

static const char *const verb_names[VERB_MAX] = {
    [VERB_LIST] = "list",
    [VERB_SHOW] = "show",
    [VERB_STATUS] = "status",
    [VERB_ADD] = "add",
    [VERB_RECONCILE] = "reconcile",
    [VERB_SCHEDULE] = "schedule",
    [VERB_RESCHEDULE] = "reschedule",
    [VERB_CANCEL] = "cancel",
    [VERB_KICK] = "kick",
    [VERB_REMOVE] = "remove",
    [VERB_WAIT] = "wait",
    [VERB_SLEEP] = "sleep",
    [VERB_MONITOR] = "monitor",
    [VERB_CALENDAR] = "calendar",
    [VERB_RUN] = "run",
    [VERB_ADVANCE] = "advance",
    [VERB_NOW] = "now",
};

const char *verb_name(enum verb verb)
{
        return verb >= 0 && verb < VERB_MAX ? verb_names[verb] : NULL;
}

static enum verb verb_from_string(const char *s)
{
        for (int i = 0; i < VERB_MAX; i++)
                if (strcmp(verb_names[i], s) == 0)
                        return (enum verb)i;
        return VERB_INVALID;
}

enum option_id {
        OPTION_HELP = 'h',
        OPTION_ALL = 'a',
        OPTION_PROPERTY = 'p',
        OPTION_COUNT = 'n',
        OPTION_USER = 'U',
        OPTION_VERSION = 0x100,
        OPTION_SOCKET,
        OPTION_JSON,
        OPTION_NO_LEGEND,
        OPTION_NO_PAGER,
        OPTION_ONCE,
        OPTION_EVERY,
        OPTION_WATCHDOG,
        OPTION_INTERVAL,
        OPTION_RETAINED,
        OPTION_TRANSIENT,
        OPTION_CLOCK,
        OPTION_ACCURACY,
        OPTION_DELIVERY,
        OPTION_NO_CATCH_UP,
        OPTION_RANDOMIZED_DELAY,
        OPTION_HANDOVER,
        OPTION_CALENDAR,
        OPTION_FIXED_RANDOM_DELAY,
        OPTION_IN,
        OPTION_AT,
        OPTION_DESIRED,
        OPTION_CADENCE,
        OPTION_VALUE,
        OPTION_TIMEOUT,
        OPTION_ALARM,
        OPTION_RESUME,
        OPTION_ITERATIONS,
        OPTION_BASE_TIME,
        OPTION_TIMEZONE,
        OPTION_CRON,
        OPTION_GRACE,
        OPTION_MAX_FAILURES,
        OPTION_SHELL,
        OPTION_JOURNAL,
        OPTION_FAILURE_IS_EXPECTED,
};

static const struct option long_options[] = {
    {"help", no_argument, NULL, OPTION_HELP},
    {"version", no_argument, NULL, OPTION_VERSION},
    {"socket", required_argument, NULL, OPTION_SOCKET},
    {"json", optional_argument, NULL, OPTION_JSON},
    {"no-legend", no_argument, NULL, OPTION_NO_LEGEND},
    {"no-pager", no_argument, NULL, OPTION_NO_PAGER},
    {"all", no_argument, NULL, OPTION_ALL},
    {"user", required_argument, NULL, OPTION_USER},
    {"once", optional_argument, NULL, OPTION_ONCE},
    {"every", required_argument, NULL, OPTION_EVERY},
    {"watchdog", required_argument, NULL, OPTION_WATCHDOG},
    {"interval", required_argument, NULL, OPTION_INTERVAL},
    {"retained", no_argument, NULL, OPTION_RETAINED},
    {"transient", no_argument, NULL, OPTION_TRANSIENT},
    {"clock", required_argument, NULL, OPTION_CLOCK},
    {"accuracy", required_argument, NULL, OPTION_ACCURACY},
    {"delivery", required_argument, NULL, OPTION_DELIVERY},
    {"no-catch-up", no_argument, NULL, OPTION_NO_CATCH_UP},
    {"randomized-delay", required_argument, NULL, OPTION_RANDOMIZED_DELAY},
    {"handover", required_argument, NULL, OPTION_HANDOVER},
    {"calendar", required_argument, NULL, OPTION_CALENDAR},
    {"fixed-random-delay", no_argument, NULL, OPTION_FIXED_RANDOM_DELAY},
    {"in", required_argument, NULL, OPTION_IN},
    {"at", required_argument, NULL, OPTION_AT},
    {"desired", required_argument, NULL, OPTION_DESIRED},
    {"cadence", required_argument, NULL, OPTION_CADENCE},
    {"property", required_argument, NULL, OPTION_PROPERTY},
    {"value", no_argument, NULL, OPTION_VALUE},
    {"count", required_argument, NULL, OPTION_COUNT},
    {"timeout", required_argument, NULL, OPTION_TIMEOUT},
    {"alarm", required_argument, NULL, OPTION_ALARM},
    {"resume", no_argument, NULL, OPTION_RESUME},
    {"iterations", required_argument, NULL, OPTION_ITERATIONS},
    {"base-time", required_argument, NULL, OPTION_BASE_TIME},
    {"timezone", required_argument, NULL, OPTION_TIMEZONE},
    {"cron", no_argument, NULL, OPTION_CRON},
    {"grace", required_argument, NULL, OPTION_GRACE},
    {"max-failures", required_argument, NULL, OPTION_MAX_FAILURES},
    {"shell", no_argument, NULL, OPTION_SHELL},
    {"journal", no_argument, NULL, OPTION_JOURNAL},
    {"failure-is-expected", no_argument, NULL, OPTION_FAILURE_IS_EXPECTED},
    {},
};

#define DECLARING (VERB_BIT(VERB_ADD) | VERB_BIT(VERB_RECONCILE) | VERB_BIT(VERB_RUN))
#define TIMING    (DECLARING | VERB_BIT(VERB_SCHEDULE) | VERB_BIT(VERB_RESCHEDULE))
/* The verbs that name timers (or list them): they may name another owner's. */
#define OWNED                                                                                      \
        (TIMING | VERB_BIT(VERB_LIST) | VERB_BIT(VERB_SHOW) | VERB_BIT(VERB_CANCEL) |              \
         VERB_BIT(VERB_KICK) | VERB_BIT(VERB_REMOVE) | VERB_BIT(VERB_WAIT))

/* The verbs each option is for. */
static unsigned option_verbs(int option)
{
        switch (option) {
        case OPTION_NO_LEGEND:
                return VERB_BIT(VERB_LIST);
        case OPTION_ALL:
                return VERB_BIT(VERB_LIST) | VERB_BIT(VERB_MONITOR);
        case OPTION_USER:
                return OWNED;
        case OPTION_ONCE:
        case OPTION_EVERY:
        case OPTION_WATCHDOG:
        case OPTION_INTERVAL:
        case OPTION_RETAINED:
        case OPTION_TRANSIENT:
        case OPTION_ACCURACY:
        case OPTION_DELIVERY:
        case OPTION_NO_CATCH_UP:
        case OPTION_RANDOMIZED_DELAY:
        case OPTION_HANDOVER:
        case OPTION_CALENDAR:
        case OPTION_FIXED_RANDOM_DELAY:
                return DECLARING;
        case OPTION_CLOCK:
                return DECLARING | VERB_BIT(VERB_SLEEP);
        case OPTION_IN:
        case OPTION_AT:
                return TIMING;
        case OPTION_DESIRED:
                return VERB_BIT(VERB_RECONCILE);
        case OPTION_CADENCE:
                return VERB_BIT(VERB_RESCHEDULE);
        case OPTION_PROPERTY:
        case OPTION_VALUE:
                return VERB_BIT(VERB_SHOW);
        case OPTION_COUNT:
                return VERB_BIT(VERB_WAIT) | VERB_BIT(VERB_MONITOR);
        case OPTION_TIMEOUT:
                return VERB_BIT(VERB_WAIT) | VERB_BIT(VERB_RUN);
        case OPTION_GRACE:
        case OPTION_MAX_FAILURES:
        case OPTION_SHELL:
        case OPTION_JOURNAL:
        case OPTION_FAILURE_IS_EXPECTED:
                return VERB_BIT(VERB_RUN);
        case OPTION_ALARM:
        case OPTION_RESUME:
                return VERB_BIT(VERB_SLEEP);
        case OPTION_ITERATIONS:
        case OPTION_BASE_TIME:
                return VERB_BIT(VERB_CALENDAR);
        case OPTION_TIMEZONE:
        case OPTION_CRON:
                return VERB_BIT(VERB_CALENDAR) | DECLARING;
        case OPTION_SOCKET:
        case OPTION_JSON:
        case OPTION_NO_PAGER:
                return ALL_VERBS & ~VERB_BIT(VERB_CALENDAR);
        default:
                return ALL_VERBS;
        }
}

/* The spelling each option was first given in, for messages. */
struct seen {
        int options[32];
        const char *spellings[32];
        size_t n;
};

static void remember(struct seen *seen, int option, const char *spelling)
{
        for (size_t i = 0; i < seen->n; i++)
                if (seen->options[i] == option)
                        return;
        if (seen->n < ELEMENTSOF(seen->options)) {
                seen->options[seen->n] = option;
                seen->spellings[seen->n] = spelling;
                seen->n++;
        }
}

/* The options that only switch something on (or off). */
static const struct flag_option {
        int option;
        size_t offset; /* of a bool in struct options */
        bool value;
} flag_options[] = {
    {OPTION_NO_LEGEND, offsetof(struct options, legend), false},
    {OPTION_ALL, offsetof(struct options, all), true},
    {OPTION_NO_CATCH_UP, offsetof(struct options, declaration.catch_up), false},
    {OPTION_FIXED_RANDOM_DELAY, offsetof(struct options, declaration.fixed_random_delay), true},
    {OPTION_VALUE, offsetof(struct options, value_only), true},
    {OPTION_RESUME, offsetof(struct options, resume), true},
    {OPTION_CRON, offsetof(struct options, cron), true},
    {OPTION_SHELL, offsetof(struct options, shell), true},
    {OPTION_JOURNAL, offsetof(struct options, journal), true},
    {OPTION_FAILURE_IS_EXPECTED, offsetof(struct options, failure_is_expected), true},
};

/* The options whose argument is a span or a count, read by `parse`. */
static const struct number_option {
        int option;
        const char *spelling;
        size_t offset; /* of a uint64_t in struct options */
        int (*parse)(const char *option, const char *arg, uint64_t *ret);
} number_options[] = {
    {OPTION_ACCURACY, "--accuracy", offsetof(struct options, declaration.accuracy_usec),
     parse_span},
    {OPTION_RANDOMIZED_DELAY, "--randomized-delay",
     offsetof(struct options, declaration.randomized_delay_usec), parse_span},
    {OPTION_GRACE, "--grace", offsetof(struct options, grace_usec), parse_span},
    {OPTION_CADENCE, "--cadence", offsetof(struct options, cadence_usec), parse_positive_span},
    {OPTION_TIMEOUT, "--timeout", offsetof(struct options, timeout_usec), parse_positive_span},
    {OPTION_COUNT, "--count", offsetof(struct options, count), parse_count},
    {OPTION_ITERATIONS, "--iterations", offsetof(struct options, iterations), parse_count},
    {OPTION_MAX_FAILURES, "--max-failures", offsetof(struct options, max_failures), parse_count},
};

/* False when c is neither a flag nor a number option; else *ret: PARSE_CONTINUE or an exit status.
 */
static bool parse_table_option(int c, struct options *o, int *ret)
{
        for (size_t i = 0; i < ELEMENTSOF(flag_options); i++)
                if (flag_options[i].option == c) {
                        *(bool *)((char *)o + flag_options[i].offset) = flag_options[i].value;
                        *ret = PARSE_CONTINUE;
                        return true;
                }
        for (size_t i = 0; i < ELEMENTSOF(number_options); i++)
                if (number_options[i].option == c) {
                        *ret = number_options[i].parse(
                            number_options[i].spelling, optarg,
                            (uint64_t *)(void *)((char *)o + number_options[i].offset));
                        return true;
                }
        return false;
}

/* getopt_long() found no option, or one without its argument. */
static int option_error(int c, char *argv[])
{
        if (c == ':')
                return usage_error("option \"%s\" needs an argument", argv[optind - 1]);
        /* optopt is a short option's letter, or a long option's value. */
        if (optopt > 0 && optopt < OPTION_VERSION)
                return usage_error("invalid option \"-%c\"", optopt);
        return usage_error("invalid option \"%s\"", argv[optind - 1]);
}

static int parse_option(int c, int argc, char *argv[], struct options *o)
{
        int r;

        if (parse_table_option(c, o, &r))
                return r;
        switch (c) {
        case OPTION_SOCKET:
                o->socket = optarg;
                return PARSE_CONTINUE;
        case OPTION_JSON:
                o->json = optarg ? json_mode_from_string(optarg) : JSON_SHORT;
                if (o->json == JSON_MODE_INVALID)
                        return usage_error("--json: \"%s\": not one of short, pretty, off", optarg);
                return PARSE_CONTINUE;
        case OPTION_NO_PAGER: /* timerctl never pages */
                return PARSE_CONTINUE;
        case OPTION_USER:
                return set_owner(o, optarg);
        case OPTION_ONCE:
                return set_once(o, optional_span(argc, argv, o));
        case OPTION_EVERY:
                return set_policy(o, "--every", TIMERD_POLICY_AFTER_COMPLETION, optarg);
        case OPTION_WATCHDOG:
                return set_policy(o, "--watchdog", TIMERD_POLICY_WATCHDOG, optarg);
        case OPTION_INTERVAL:
                return set_policy(o, "--interval", TIMERD_POLICY_INTERVAL, optarg);
        case OPTION_RETAINED:
                return set_lifetime(o, "--retained", TIMERD_LIFETIME_RETAINED);
        case OPTION_TRANSIENT:
                return set_lifetime(o, "--transient", TIMERD_LIFETIME_TRANSIENT);
        case OPTION_CLOCK:
                o->clock_given = true;
                o->declaration.clock = timerd_clock_from_string(optarg);
                return check_choice(
                    "--clock", o->declaration.clock,
                    "monotonic, boottime, realtime, boottime-alarm, realtime-alarm");
        case OPTION_DELIVERY:
                o->declaration.delivery = timerd_delivery_from_string(optarg);
                return check_choice("--delivery", o->declaration.delivery, "notify, alarm, signal");
        case OPTION_CALENDAR:
                return add_calendar_line(o, "--calendar", optarg);
        case OPTION_HANDOVER:
                return set_handover(o, optarg);
        case OPTION_IN:
                return set_in(o, optarg);
        case OPTION_AT:
                return set_at(o, optarg);
        case OPTION_DESIRED:
                o->desired = timerd_desired_from_string(optarg);
                return check_choice("--desired", o->desired, "inactive, scheduled, exact");
        case OPTION_PROPERTY:
                return add_properties(o, optarg);
        case OPTION_ALARM:
                o->has_alarm = true;
                return parse_span("--alarm", optarg, &o->alarm_usec);
        case OPTION_BASE_TIME:
                return set_base_time(o, optarg);
        case OPTION_TIMEZONE:
                o->timezone = optarg;
                return PARSE_CONTINUE;
        default:
                return option_error(c, argv);
        }
}

/* As given: a long option's name, or "-p". */
static const char *option_spelling(int c, int index)
{
        switch (c) {
        case OPTION_ALL:
                return index >= 0 ? long_options[index].name : "-a";
        case OPTION_PROPERTY:
                return index >= 0 ? long_options[index].name : "-p";
        case OPTION_COUNT:
                return index >= 0 ? long_options[index].name : "-n";
        case OPTION_USER:
                return index >= 0 ? long_options[index].name : "-U";
        default:
                return long_options[index].name;
        }
}

/* "add, reconcile": the verbs of a mask, for a message. */
static void verbs_of(unsigned mask, char *buf, size_t size)
{
        size_t len = 0;

        buf[0] = 0;
        for (int v = 0; v < VERB_MAX; v++)
                if (mask & VERB_BIT(v))
                        len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s",
                                                len > 0 ? ", " : "", verb_names[v]);
}

/* The end of a sleep: a span or a timestamp. */
static int parse_sleep_end(struct options *o)
{
        const char *arg = o->args[0];
        uint64_t span;

        if (timespan_parse(arg, &span) >= 0) {
                o->until = (struct timestamp){.relative = true, .usec = span};
                return PARSE_CONTINUE;
        }
        if (timestamp_parse(arg, &o->now, &o->until) < 0)
                return usage_error("sleep: \"%s\": neither a time span (like 90s, 5min) nor a "
                                   "timestamp (like 09:00, tomorrow)",
                                   arg);
        return PARSE_CONTINUE;
}

/* Every option given is one of the verb's. */
static int check_option_verbs(const struct options *o, const struct seen *seen)
{
        char verbs[128];

        for (size_t i = 0; i < seen->n; i++) {
                unsigned mask = option_verbs(seen->options[i]);
                const char *spelling = seen->spellings[i];

                if (mask & VERB_BIT(o->verb))
                        continue;
                verbs_of(mask, verbs, sizeof(verbs));
                return usage_error("option \"%s%s\" is only valid with %s",
                                   spelling[0] == '-' ? "" : "--", spelling, verbs);
        }
        return PARSE_CONTINUE;
}

/* add, reconcile: the cron expressions after the name, and the time zone of the calendar. */
static int take_calendar_arguments(struct options *o)
{
        const char *name = verb_names[o->verb];

        /* "add NAME --cron EXPR...": the expressions follow the name. */
        if (o->cron) {
                if (o->n_args < 2)
                        return usage_error("%s NAME --cron EXPR: no cron expression", name);
                for (size_t i = 1; i < o->n_args; i++) {
                        int r = add_calendar_line(o, "--cron", o->args[i]);
                        if (r != PARSE_CONTINUE)
                                return r;
                }
                o->n_args = 1;
        }
        if (o->timezone && snprintf(o->declaration.timezone, sizeof(o->declaration.timezone), "%s",
                                    o->timezone) >= (int)sizeof(o->declaration.timezone))
                return usage_error("--timezone: \"%s\": no such time zone", o->timezone);
        if ((o->timezone || o->declaration.fixed_random_delay) &&
            o->declaration.policy != TIMERD_POLICY_CALENDAR)
                return usage_error("%s needs --calendar or --cron",
                                   o->timezone ? "--timezone" : "--fixed-random-delay");
        return PARSE_CONTINUE;
}

/* The verb's arguments: how many, and what they say. */
static int check_arguments(struct options *o)
{
        const char *name = verb_names[o->verb];
        int r;

        switch (o->verb) {
        case VERB_ADVANCE:
                if (o->n_args != 1)
                        return usage_error("advance needs exactly one time span");
                return parse_span("advance", o->args[0], &o->advance_usec);
        case VERB_LIST:
        case VERB_STATUS:
        case VERB_MONITOR:
        case VERB_NOW:
                if (o->n_args != 0)
                        return usage_error("%s takes no arguments", name);
                return PARSE_CONTINUE;
        case VERB_WAIT:
                return PARSE_CONTINUE;
        case VERB_CALENDAR:
                if (o->n_args == 0)
                        return usage_error("calendar needs at least one expression");
                return PARSE_CONTINUE;
        case VERB_RUN:
                if (o->n_args != 1)
                        return usage_error("run needs exactly one timer name, then -- COMMAND");
                if (o->n_command == 0)
                        return usage_error("run needs a command after \"--\"");
                return PARSE_CONTINUE;
        case VERB_SLEEP:
                if (o->n_args != 1)
                        return usage_error("sleep needs exactly one time span or timestamp");
                if (parse_sleep_end(o) != PARSE_CONTINUE)
                        return EXIT_STATUS_USAGE;
                return PARSE_CONTINUE;
        case VERB_ADD:
        case VERB_RECONCILE:
                r = take_calendar_arguments(o);
                if (r != PARSE_CONTINUE)
                        return r;
                /* fall through */
        default:
                /* "add x --once abc": the name is x, and abc a span that is not one. */
                if (o->n_args > 1 && o->once_word) {
                        uint64_t span;

                        return parse_span("--once", o->once_word, &span);
                }
                if (o->n_args != 1)
                        return usage_error("%s needs exactly one timer name", name);
                return PARSE_CONTINUE;
        }
}

/* The options make sense together, and with the verb. */
static int check_combinations(const struct options *o)
{
        if ((o->verb == VERB_ADD || o->verb == VERB_RECONCILE || o->verb == VERB_RUN) &&
            !o->policy_option)
                return usage_error(
                    "%s needs one of --once, --every, --watchdog, --interval, --calendar, --cron",
                    verb_names[o->verb]);
        /* The service signals the registering process: timerctl, gone by then. */
        if ((o->verb == VERB_ADD || o->verb == VERB_RECONCILE) &&
            o->declaration.delivery == TIMERD_DELIVERY_SIGNAL)
                return usage_error(
                    "--delivery signal: the signal goes to the process that registers the timer, "
                    "and timerctl will have exited when it fires. The program that wants the "
                    "signal registers the timer itself, through libtimerd (timerd_register(3))");
        /* The runner takes its firings with Wait: only notify timers have them. */
        if (o->verb == VERB_RUN && o->declaration.delivery != TIMERD_DELIVERY_NOTIFY)
                return usage_error("run: --delivery: the runner takes notify firings only");
        if (o->verb == VERB_RUN && o->declaration.policy == TIMERD_POLICY_ONCE && !o->start_option)
                return usage_error("run --once needs its first firing: --once SPAN, --in or --at");
        if (o->verb == VERB_SCHEDULE && !o->start_option)
                return usage_error("schedule needs --in or --at");
        if (o->verb == VERB_RECONCILE && o->start_option && o->desired != TIMERD_DESIRED_EXACT)
                return usage_error("%s needs --desired=exact", o->start_option);
        if (o->verb == VERB_RECONCILE && !o->start_option && o->desired == TIMERD_DESIRED_EXACT)
                return usage_error("--desired=exact needs --in or --at");
        if (o->all && o->owner != TIMERD_OWNER_SELF)
                return usage_error("--all and --user cannot be combined");
        if (o->value_only && o->n_properties == 0)
                return usage_error("--value needs -p");
        if (o->resume && !o->has_alarm)
                return usage_error("--resume needs --alarm");
        return PARSE_CONTINUE;
}

/* The verb and its arguments make sense together; the options were checked one by one. */
static int check_command(struct options *o, const struct seen *seen)
{
        int r = check_option_verbs(o, seen);

        if (r == PARSE_CONTINUE)
                r = check_arguments(o);
        if (r == PARSE_CONTINUE)
                r = check_combinations(o);
        return r;
}

int parse_command_line(int argc, char *argv[], struct options *o)
{
        bool help = false, desired_given = false;
        struct seen seen = {};
        int c, index, r;

        /* "run NAME [OPTIONS] -- COMMAND [ARG…]": the command's words are not timerctl's. */
        for (int i = 1; i < argc; i++)
                if (strcmp(argv[i], "--") == 0) {
                        o->command = argv + i + 1;
                        o->n_command = (size_t)(argc - i - 1);
                        argc = i;
                        break;
                }
        opterr = 0; /* our own messages, with our name rather than argv[0] */
        for (;;) {
                index = -1;
                c = getopt_long(argc, argv, ":hap:n:U:", long_options, &index);
                if (c < 0)
                        break;
                if (c == OPTION_HELP) {
                        help = true;
                        continue;
                }
                if (c == OPTION_VERSION) {
                        printf("timerctl %s\n", TIMERD_VERSION);
                        return EXIT_STATUS_SUCCESS;
                }
                r = parse_option(c, argc, argv, o);
                if (r != PARSE_CONTINUE)
                        return r;
                desired_given |= c == OPTION_DESIRED;
                remember(&seen, c, option_spelling(c, index));
        }

        o->verb = optind < argc ? verb_from_string(argv[optind]) : VERB_LIST;
        if (o->verb == VERB_INVALID)
                return usage_error("unknown command \"%s\"", argv[optind]);
        if (help) {
                help_print(optind < argc ? o->verb : VERB_INVALID);
                return EXIT_STATUS_SUCCESS;
        }
        o->args = optind < argc ? argv + optind + 1 : argv + argc;
        o->n_args = optind < argc ? (size_t)(argc - optind - 1) : 0;
        /* Other verbs take the words after "--" as arguments, like getopt does. */
        if (o->verb != VERB_RUN && o->command) {
                memmove(argv + argc, o->command, o->n_command * sizeof(char *));
                o->n_args += o->n_command;
                o->command = NULL;
                o->n_command = 0;
        }
        /* A first firing makes reconcile exact unless told otherwise. */
        if (o->verb == VERB_RECONCILE && o->start_option && !desired_given)
                o->desired = TIMERD_DESIRED_EXACT;
        return check_command(o, &seen);
}
