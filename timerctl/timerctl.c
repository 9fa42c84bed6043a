/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clocks.h"
#include "print.h"
#include "timerd/timerd.h"
#include "timespan.h"
#include "varlink/names.h"

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

enum exit_status {
        EXIT_STATUS_SUCCESS = 0,
        EXIT_STATUS_FAILURE = 1,
        EXIT_STATUS_USAGE = 2,
        EXIT_STATUS_NOT_FOUND = 3,
        EXIT_STATUS_PERMISSION_DENIED = 4,
        EXIT_STATUS_UNREACHABLE = 5,
};

/* parse_options(): go on to run the verb. */
#define PARSE_CONTINUE (-1)

struct options {
        const char *socket;
        bool json;
        /* add only; the names are kept for error messages */
        const char *first_add_option;
        const char *policy_option;
        const char *lifetime_option;
        const char *start_option;
        struct timerd_declaration declaration;
        struct timerd_start start;
};

static void help(void)
{
        printf("Usage: timerctl [OPTIONS] [COMMAND]\n"
               "\n"
               "Control timerd, the host's timer service.\n"
               "\n"
               "Commands:\n"
               "  list                 List your timers (the default)\n"
               "  show NAME            Show one timer in detail\n"
               "  status               Show the service's state and performance\n"
               "  add NAME POLICY [OPTIONS]\n"
               "                       Register a timer; POLICY is one of:\n"
               "    --once [SPAN]        fire once (SPAN from now; without it, stay inactive)\n"
               "    --every SPAN         fire SPAN after each run completes\n"
               "    --watchdog SPAN      fire unless kicked within SPAN\n"
               "    --interval SPAN      fire every SPAN at a fixed rate\n"
               "  cancel NAME          Clear a timer's next firing, keep its declaration\n"
               "  remove NAME          Unregister a timer\n"
               "\n"
               "Options for add:\n"
               "  --retained           Keep the timer after timerctl exits and across service\n"
               "                       restarts (the default for timerctl)\n"
               "  --transient          Remove the timer when the registering connection\n"
               "                       closes, which for timerctl is at once\n"
               "  --clock CLOCK        monotonic (default), boottime, realtime,\n"
               "                       boottime-alarm, realtime-alarm\n"
               "  --accuracy SPAN      Allow firing up to SPAN late to share wake-ups\n"
               "  --in SPAN            First firing SPAN from now\n"
               "  --at USEC            First firing at USEC microseconds on the timer's clock\n"
               "\n"
               "Options:\n"
               "  --socket PATH        The service's socket (default: $TIMERD_SOCKET, else\n"
               "                       ./" TIMERD_SOCKET_EMBEDDED
               " if it exists, else " TIMERD_SOCKET_SYSTEM ")\n"
               "  --json               Print list, show and status as JSON\n"
               "  -h --help            Show this help\n"
               "  --version            Show the version\n"
               "\n"
               "SPAN is a time span like 90s, 5min, 1h 30min, 500ms or 2d; a bare number is\n"
               "seconds. timerctl runs in a process of its own, so cancel and remove act as the\n"
               "timer's owner: they look up the timer's current generation and present that\n"
               "claim.\n"
               "\n"
               "Exit status:\n"
               "  0 success, 1 other failure, 2 usage error, 3 no such timer,\n"
               "  4 permission denied, 5 service unreachable\n");
}

__attribute__((format(printf, 1, 2))) static int usage_error(const char *format, ...)
{
        va_list ap;

        fputs("timerctl: ", stderr);
        va_start(ap, format);
        vfprintf(stderr, format, ap);
        va_end(ap);
        fputs("\nTry 'timerctl --help' for more information.\n", stderr);
        return EXIT_STATUS_USAGE;
}

static int exit_status_of(int error)
{
        switch (error) {
        case -TIMERD_E_NOT_FOUND:
                return EXIT_STATUS_NOT_FOUND;
        case -TIMERD_E_PERMISSION_DENIED:
        case -EACCES:
        case -EPERM:
                return EXIT_STATUS_PERMISSION_DENIED;
        case -TIMERD_E_DISCONNECTED:
                return EXIT_STATUS_UNREACHABLE;
        default:
                return EXIT_STATUS_FAILURE;
        }
}

/* "timerctl: remove backup: no timer of that name (io.timerd.Timer.NotFound)" */
static int call_failed(struct timerd *t, const char *verb, const char *name, int error)
{
        const char *error_name = timerd_last_error_name(t);

        fprintf(stderr, "timerctl: %s%s%s: %s", verb, name ? " " : "", name ? name : "",
                timerd_strerror(error));
        if (error_name)
                fprintf(stderr, " (%s)", error_name);
        fputc('\n', stderr);
        return exit_status_of(error);
}

static int parse_span_option(const char *option, const char *arg, uint64_t *ret)
{
        int r = timespan_parse(arg, ret);

        if (r < 0)
                return usage_error("%s: \"%s\": %s", option, arg, timespan_parse_error(r));
        return PARSE_CONTINUE;
}

static int set_start(struct options *o, const char *option, int kind, uint64_t usec)
{
        if (o->start_option)
                return usage_error("%s and %s cannot be combined", o->start_option, option);
        o->start_option = option;
        o->start = (struct timerd_start){.kind = kind, .usec = usec};
        return PARSE_CONTINUE;
}

/* The cadence of --every, --watchdog, --interval; the optional delay of --once. */
static int set_policy(struct options *o, const char *option, enum timerd_policy policy,
                      const char *arg)
{
        uint64_t span = 0;
        int r;

        if (o->policy_option)
                return usage_error("%s and %s cannot be combined", o->policy_option, option);
        o->policy_option = option;
        o->declaration.policy = policy;
        if (arg) {
                r = parse_span_option(option, arg, &span);
                if (r != PARSE_CONTINUE)
                        return r;
        }
        if (policy == TIMERD_POLICY_ONCE)
                return arg ? set_start(o, option, TIMERD_START_AFTER, span) : PARSE_CONTINUE;
        if (span == 0)
                return usage_error("%s: the span must be longer than 0", option);
        o->declaration.cadence_usec = span;
        return PARSE_CONTINUE;
}

static int set_lifetime(struct options *o, const char *option, enum timerd_lifetime lifetime)
{
        if (o->lifetime_option && strcmp(o->lifetime_option, option) != 0)
                return usage_error("%s and %s cannot be combined", o->lifetime_option, option);
        o->lifetime_option = option;
        o->declaration.lifetime = lifetime;
        return PARSE_CONTINUE;
}

static int parse_usec(const char *option, const char *arg, uint64_t *ret)
{
        uint64_t value = 0;

        if (arg[0] == 0)
                return usage_error("%s: \"%s\": not a number of microseconds", option, arg);
        for (const char *p = arg; *p != 0; p++) {
                if (*p < '0' || *p > '9')
                        return usage_error("%s: \"%s\": not a number of microseconds", option, arg);
                if (__builtin_mul_overflow(value, 10, &value) ||
                    __builtin_add_overflow(value, (uint64_t)(*p - '0'), &value))
                        return usage_error("%s: \"%s\": too large", option, arg);
        }
        *ret = value;
        return PARSE_CONTINUE;
}

enum {
        ARG_VERSION = 0x100,
        ARG_SOCKET,
        ARG_JSON,
        ARG_ONCE,
        ARG_EVERY,
        ARG_WATCHDOG,
        ARG_INTERVAL,
        ARG_RETAINED,
        ARG_TRANSIENT,
        ARG_CLOCK,
        ARG_ACCURACY,
        ARG_IN,
        ARG_AT,
};

static const struct option long_options[] = {
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, ARG_VERSION},
    {"socket", required_argument, NULL, ARG_SOCKET},
    {"json", no_argument, NULL, ARG_JSON},
    {"once", optional_argument, NULL, ARG_ONCE},
    {"every", required_argument, NULL, ARG_EVERY},
    {"watchdog", required_argument, NULL, ARG_WATCHDOG},
    {"interval", required_argument, NULL, ARG_INTERVAL},
    {"retained", no_argument, NULL, ARG_RETAINED},
    {"transient", no_argument, NULL, ARG_TRANSIENT},
    {"clock", required_argument, NULL, ARG_CLOCK},
    {"accuracy", required_argument, NULL, ARG_ACCURACY},
    {"in", required_argument, NULL, ARG_IN},
    {"at", required_argument, NULL, ARG_AT},
    {},
};

/* "--once 5min" as well as "--once=5min": take the next word when it is a span. */
static const char *optional_span(int argc, char *argv[])
{
        uint64_t span;

        if (optarg)
                return optarg;
        if (optind < argc && timespan_parse(argv[optind], &span) >= 0)
                return argv[optind++];
        return NULL;
}

/* An option of add: the ones that describe the timer. */
static bool option_is_for_add(int c)
{
        return c >= ARG_ONCE && c <= ARG_AT;
}

static int parse_option(int c, int argc, char *argv[], struct options *o)
{
        enum timerd_clock clock;
        uint64_t usec;
        int r;

        switch (c) {
        case ARG_SOCKET:
                o->socket = optarg;
                return PARSE_CONTINUE;
        case ARG_JSON:
                o->json = true;
                return PARSE_CONTINUE;
        case ARG_ONCE:
                return set_policy(o, "--once", TIMERD_POLICY_ONCE, optional_span(argc, argv));
        case ARG_EVERY:
                return set_policy(o, "--every", TIMERD_POLICY_AFTER_COMPLETION, optarg);
        case ARG_WATCHDOG:
                return set_policy(o, "--watchdog", TIMERD_POLICY_WATCHDOG, optarg);
        case ARG_INTERVAL:
                return set_policy(o, "--interval", TIMERD_POLICY_INTERVAL, optarg);
        case ARG_RETAINED:
                return set_lifetime(o, "--retained", TIMERD_LIFETIME_RETAINED);
        case ARG_TRANSIENT:
                return set_lifetime(o, "--transient", TIMERD_LIFETIME_TRANSIENT);
        case ARG_CLOCK:
                clock = vl_clock_from_string(optarg);
                if (clock == TIMERD_CLOCK_INVALID)
                        return usage_error("--clock: \"%s\": not a clock (monotonic, boottime, "
                                           "realtime, boottime-alarm, realtime-alarm)",
                                           optarg);
                o->declaration.clock = clock;
                return PARSE_CONTINUE;
        case ARG_ACCURACY:
                return parse_span_option("--accuracy", optarg, &o->declaration.accuracy_usec);
        case ARG_IN:
                r = parse_span_option("--in", optarg, &usec);
                return r != PARSE_CONTINUE ? r : set_start(o, "--in", TIMERD_START_AFTER, usec);
        case ARG_AT:
                r = parse_usec("--at", optarg, &usec);
                return r != PARSE_CONTINUE ? r : set_start(o, "--at", TIMERD_START_AT, usec);
        case ':':
                return usage_error("option \"%s\" needs an argument", argv[optind - 1]);
        default:
                /* optopt is a short option's letter, or a long option's value. */
                if (optopt > 0 && optopt < ARG_VERSION)
                        return usage_error("invalid option \"-%c\"", optopt);
                return usage_error("invalid option \"%s\"", argv[optind - 1]);
        }
}

static int parse_options(int argc, char *argv[], struct options *o)
{
        int c, index, r;

        opterr = 0; /* our own messages, with our name rather than argv[0] */
        while ((c = getopt_long(argc, argv, ":h", long_options, &index)) >= 0) {
                if (c == 'h') {
                        help();
                        return EXIT_STATUS_SUCCESS;
                }
                if (c == ARG_VERSION) {
                        printf("timerctl %s\n", TIMERD_VERSION);
                        return EXIT_STATUS_SUCCESS;
                }
                /* Only long options have these values, so index is set. */
                if (option_is_for_add(c) && !o->first_add_option)
                        o->first_add_option = long_options[index].name;
                r = parse_option(c, argc, argv, o);
                if (r != PARSE_CONTINUE)
                        return r;
        }
        return PARSE_CONTINUE;
}

/* --json: the reply's parameters as the service sent them. */
static int print_reply_json(struct timerd *t, const char *verb, const char *name,
                            const char *method, json_object *parameters)
{
        const char *parameters_json = NULL;
        json_object *reply;
        char *text;
        int r;

        if (parameters) {
                parameters_json = json_object_to_json_string(parameters);
                if (!parameters_json)
                        return call_failed(t, verb, name, -ENOMEM);
        }
        r = timerd_call_raw(t, method, parameters_json, &text);
        if (r < 0) {
                free(text);
                return call_failed(t, verb, name, r);
        }
        reply = json_tokener_parse(text);
        free(text);
        if (!reply)
                return call_failed(t, verb, name, -TIMERD_E_PROTOCOL);
        printf("%s\n", json_object_to_json_string_ext(reply, JSON_C_TO_STRING_PRETTY |
                                                                 JSON_C_TO_STRING_SPACED |
                                                                 JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(reply);
        return EXIT_STATUS_SUCCESS;
}

static int read_clocks(struct clocks *ret)
{
        int r = clocks_read(ret);

        if (r < 0) {
                fprintf(stderr, "timerctl: cannot read the clocks: %s\n", timerd_strerror(r));
                return EXIT_STATUS_FAILURE;
        }
        return EXIT_STATUS_SUCCESS;
}

static int verb_list(struct timerd *t, const struct options *o, const char *name)
{
        struct timerd_timer *timers;
        struct clocks now;
        long n;
        int r;

        (void)name;
        if (o->json)
                return print_reply_json(t, "list", NULL, VL_INTERFACE_TIMER ".List", NULL);
        n = timerd_list(t, TIMERD_OWNER_SELF, false, &timers);
        if (n < 0)
                return call_failed(t, "list", NULL, (int)n);
        r = read_clocks(&now);
        if (r == EXIT_STATUS_SUCCESS && print_timer_table(stdout, timers, (size_t)n, &now) < 0) {
                fprintf(stderr, "timerctl: list: %s\n", timerd_strerror(-ENOMEM));
                r = EXIT_STATUS_FAILURE;
        }
        free(timers);
        return r;
}

static int verb_show(struct timerd *t, const struct options *o, const char *name)
{
        json_object *parameters, *name_json;
        struct timerd_timer timer;
        struct clocks now;
        int r;

        if (o->json) {
                parameters = json_object_new_object();
                name_json = json_object_new_string(name);
                if (!parameters || !name_json ||
                    json_object_object_add(parameters, "name", name_json) < 0) {
                        json_object_put(name_json);
                        json_object_put(parameters);
                        return call_failed(t, "show", name, -ENOMEM);
                }
                r = print_reply_json(t, "show", name, VL_INTERFACE_TIMER ".Get", parameters);
                json_object_put(parameters);
                return r;
        }
        r = timerd_get(t, name, TIMERD_OWNER_SELF, &timer);
        if (r < 0)
                return call_failed(t, "show", name, r);
        r = read_clocks(&now);
        if (r == EXIT_STATUS_SUCCESS)
                print_timer(stdout, &timer, &now);
        return r;
}

static int verb_status(struct timerd *t, const struct options *o, const char *name)
{
        struct timerd_status status;
        int r;

        (void)name;
        if (o->json)
                return print_reply_json(t, "status", NULL, VL_INTERFACE_STATUS ".Status", NULL);
        r = timerd_status(t, &status);
        if (r < 0)
                return call_failed(t, "status", NULL, r);
        print_status(stdout, &status);
        return EXIT_STATUS_SUCCESS;
}

static int verb_add(struct timerd *t, const struct options *o, const char *name)
{
        struct timerd_claim claim;
        int r;

        r = timerd_register(t, name, &o->declaration, &o->start, false, &claim);
        if (r < 0)
                return call_failed(t, "add", name, r);
        return EXIT_STATUS_SUCCESS;
}

/* timerctl did not register the timer: it learns the current generation to present a claim. */
static int current_claim(struct timerd *t, const char *verb, const char *name,
                         struct timerd_claim *ret)
{
        struct timerd_timer timer;
        int r;

        r = timerd_get(t, name, TIMERD_OWNER_SELF, &timer);
        if (r < 0)
                return call_failed(t, verb, name, r);
        memcpy(ret->name, timer.name, sizeof(ret->name));
        ret->generation = timer.generation;
        return EXIT_STATUS_SUCCESS;
}

static int verb_cancel(struct timerd *t, const struct options *o, const char *name)
{
        struct timerd_claim claim;
        int r;

        (void)o;
        r = current_claim(t, "cancel", name, &claim);
        if (r != EXIT_STATUS_SUCCESS)
                return r;
        r = timerd_cancel(t, &claim, NULL);
        if (r < 0)
                return call_failed(t, "cancel", name, r);
        return EXIT_STATUS_SUCCESS;
}

static int verb_remove(struct timerd *t, const struct options *o, const char *name)
{
        struct timerd_claim claim;
        int r;

        (void)o;
        r = current_claim(t, "remove", name, &claim);
        if (r != EXIT_STATUS_SUCCESS)
                return r;
        r = timerd_unregister(t, &claim);
        if (r < 0)
                return call_failed(t, "remove", name, r);
        return EXIT_STATUS_SUCCESS;
}

struct verb {
        const char *name;
        bool takes_name;
        int (*run)(struct timerd *t, const struct options *o, const char *name);
};

static const struct verb verbs[] = {
    {"list", false, verb_list}, {"show", true, verb_show},     {"status", false, verb_status},
    {"add", true, verb_add},    {"cancel", true, verb_cancel}, {"remove", true, verb_remove},
};

static const struct verb *find_verb(const char *name)
{
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (strcmp(verbs[i].name, name) == 0)
                        return &verbs[i];
        return NULL;
}

/* The verb and its arguments make sense together; the options were checked one by one. */
static int check_command(const struct verb *verb, int n_args, const struct options *o)
{
        bool add = verb->run == verb_add;

        if (verb->takes_name && n_args != 1)
                return usage_error("%s needs exactly one timer name", verb->name);
        if (!verb->takes_name && n_args != 0)
                return usage_error("%s takes no arguments", verb->name);
        if (!add && o->first_add_option)
                return usage_error("option \"--%s\" is only valid with add", o->first_add_option);
        if (add && !o->policy_option)
                return usage_error("add needs one of --once, --every, --watchdog, --interval");
        return PARSE_CONTINUE;
}

static int connect_failed(const char *path, int error)
{
        fprintf(stderr, "timerctl: cannot connect to the service at %s: %s\n", path,
                timerd_strerror(error));
        return error == -EACCES || error == -EPERM ? EXIT_STATUS_PERMISSION_DENIED
                                                   : EXIT_STATUS_UNREACHABLE;
}

int main(int argc, char *argv[])
{
        struct options o = {.start.kind = TIMERD_START_DEFAULT};
        const struct verb *verb;
        struct timerd *t;
        int r, n_args;

        /* timerctl's timers outlive it unless told otherwise: see --transient. */
        timerd_declaration_init(&o.declaration, TIMERD_POLICY_ONCE, 0);
        o.declaration.lifetime = TIMERD_LIFETIME_RETAINED;

        r = parse_options(argc, argv, &o);
        if (r != PARSE_CONTINUE)
                return r;
        verb = find_verb(optind < argc ? argv[optind] : "list");
        if (!verb)
                return usage_error("unknown command \"%s\"", argv[optind]);
        n_args = optind < argc ? argc - optind - 1 : 0;
        r = check_command(verb, n_args, &o);
        if (r != PARSE_CONTINUE)
                return r;

        if (!o.socket)
                o.socket = timerd_default_socket();
        r = timerd_connect(o.socket, &t);
        if (r < 0)
                return connect_failed(o.socket, r);
        r = verb->run(t, &o, verb->takes_name ? argv[optind + 1] : NULL);
        timerd_close(t);

        if (fflush(stdout) != 0 || ferror(stdout)) {
                fprintf(stderr, "timerctl: cannot write the output: %s\n", strerror(errno));
                return r == EXIT_STATUS_SUCCESS ? EXIT_STATUS_FAILURE : r;
        }
        return r;
}
