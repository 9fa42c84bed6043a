/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>

#include "help.h"

#define SPAN_HELP                                                                                  \
        "SPAN is a time span like 90s, 5min, 1h 30min, 500ms or 2d; a bare number is seconds.\n"   \
        "The longest is about 292,000 years (2^63-1 microseconds, what the service holds).\n"
#define TIME_HELP                                                                                  \
        "TIME is a timestamp like 2026-12-01 09:00, \"Tue 2026-12-01 09:00:30 UTC\", 09:00\n"      \
        "(today), tomorrow, now, +5min (from now), \"5min ago\" or @1700000000 (seconds\n"         \
        "since 1970); local time unless it ends in UTC.\n"

#define USER_HELP "  -U --user USER       Act on USER's timer (a user name or a uid; root only)\n"

#define DECLARATION_HELP                                                                           \
        "Policy, one of:\n"                                                                        \
        "  --once [SPAN]        Fire once (SPAN from now; without it, stay inactive)\n"            \
        "  --every SPAN         Fire SPAN after each run completes\n"                              \
        "  --watchdog SPAN      Fire unless kicked within SPAN\n"                                  \
        "  --interval SPAN      Fire every SPAN at a fixed rate\n"                                 \
        "  --calendar EXPR      Fire at a calendar expression's elapses (repeatable;\n"            \
        "                       \"Mon..Fri *-*-* 03:00\", *:0/15, daily), never\n"                 \
        "                       overlapping a run: see timerctl calendar\n"                        \
        "  --cron               The arguments after NAME are 5-field cron expressions\n"           \
        "                       (add NAME --cron \"0 3 * * 1-5\"), also beside --calendar\n"       \
        "\n"                                                                                       \
        "Options:\n"                                                                               \
        "  --retained           Keep the timer after timerctl exits and across service\n"          \
        "                       restarts (the default for timerctl)\n"                             \
        "  --transient          Remove the timer when the registering connection\n"                \
        "                       closes, which for timerctl is at once\n"                           \
        "  --clock CLOCK        monotonic (default), boottime, realtime,\n"                        \
        "                       boottime-alarm, realtime-alarm; a calendar timer\n"                \
        "                       realtime (default) or realtime-alarm\n"                            \
        "  --timezone ZONE      The calendar's IANA zone (default: the service's\n"                \
        "                       local zone, followed when it changes)\n"                           \
        "  --delivery HOW       notify (default: a firing goes to a waiting client, like\n"        \
        "                       timerctl wait) or alarm (it interrupts a sleep); a signal\n"       \
        "                       timer is registered by the program that wants the signal\n"        \
        "                       (through libtimerd), since the signal goes to the\n"               \
        "                       registering process\n"                                             \
        "  --accuracy SPAN      Allow firing up to SPAN late to share wake-ups\n"                  \
        "  --no-catch-up        Skip a firing missed while the service was down, rather\n"         \
        "                       than fire it once when it starts\n"                                \
        "  --randomized-delay SPAN\n"                                                              \
        "                       Delay such a catch-up firing by a random part of SPAN;\n"          \
        "                       a calendar timer every elapse\n"                                   \
        "  --fixed-random-delay The calendar's delay is one fixed part of SPAN, from\n"            \
        "                       the timer's identity, rather than fresh each time\n"               \
        "  --handover SPAN      Hand each firing over up to SPAN (at most 1s) early;\n"            \
        "                       the waiting client holds it until the deadline\n"                  \
        "                       (default 1ms for notify timers; 0: exact)\n"                       \
        "  --in SPAN            First firing SPAN from now\n"                                      \
        "  --at TIME            First firing at TIME\n" USER_HELP

static const char *const verb_help[VERB_MAX] = {
    [VERB_LIST] = "Usage: timerctl [list] [OPTIONS]\n"
                  "\n"
                  "List timers, soonest first: NEXT, LEFT, LAST, PASSED, NAME, POLICY, CLOCK,\n"
                  "STATE. Times are shown on the wall clock.\n"
                  "\n"
                  "Options:\n"
                  "  -a --all             Every owner's timers, with an OWNER column of user\n"
                  "                       names (root)\n"
                  "  -U --user USER       USER's timers (a user name or a uid; root only)\n"
                  "  --no-legend          Leave out the header and the count\n"
                  "  --json[=MODE]        The service's answer as JSON\n",
    [VERB_SHOW] = "Usage: timerctl show NAME [OPTIONS]\n"
                  "\n"
                  "Show every field of a timer.\n"
                  "\n"
                  "Options:\n"
                  "  -p --property=NAME   Print only these properties, as NAME=VALUE (repeat it,\n"
                  "                       or separate names with commas): owner, name, policy,\n"
                  "                       cadence_usec, clock, lifetime, delivery,\n"
                  "                       accuracy_usec, signal, catch_up,\n"
                  "                       randomized_delay_usec, handover_usec, generation,\n"
                  "                       state, failure, next_usec, remaining_usec, run,\n"
                  "                       run_active, pending, runs,\n"
                  "                       consecutive_expected_failures, overruns,\n"
                  "                       live_cadence_usec, last_start_usec,\n"
                  "                       last_finish_usec, last_outcome,\n"
                  "                       last_duration_usec, total_duration_usec, last_exit,\n"
                  "                       last_exit_code\n"
                  "  --value              With -p: only the values\n" USER_HELP
                  "  --json[=MODE]        The service's answer as JSON\n",
    [VERB_STATUS] = "Usage: timerctl status [OPTIONS]\n"
                    "\n"
                    "Show the service: version, epoch, backend, uptime, timers, connections,\n"
                    "clock changes, store, performance, capabilities.\n"
                    "\n"
                    "Options:\n"
                    "  --json[=MODE]        The service's answer as JSON\n",
    [VERB_ADD] = "Usage: timerctl add NAME POLICY [OPTIONS]\n"
                 "\n"
                 "Register a timer.\n"
                 "\n" DECLARATION_HELP "\n" SPAN_HELP TIME_HELP,
    [VERB_RECONCILE] =
        "Usage: timerctl reconcile NAME POLICY [OPTIONS]\n"
        "\n"
        "Declare a timer if it is missing, and make its schedule the desired one;\n"
        "again and again with the same result. Fails when the timer exists with\n"
        "another declaration.\n"
        "\n" DECLARATION_HELP "  --desired=STATE      scheduled (the default: one firing is due),\n"
        "                       inactive (none), exact (the one of --in or --at,\n"
        "                       the default with them)\n"
        "\n" SPAN_HELP TIME_HELP,
    [VERB_RUN] =
        "Usage: timerctl run NAME POLICY [OPTIONS] -- COMMAND [ARG...]\n"
        "\n"
        "Run COMMAND at each firing of the retained timer NAME, declared (as reconcile\n"
        "does, so a restarted runner changes nothing) with POLICY. The command runs\n"
        "without a shell, in timerctl's environment and directory; runs never overlap.\n"
        "Each run is completed with how the command ended (timerctl show NAME): exit 0\n"
        "is a success, another exit status an expected failure, a signal or a timeout\n"
        "an invariant failure, which stops the timer (failed). Two runners of one\n"
        "timer share its firings: each goes to one of them. SIGTERM or SIGINT stops\n"
        "the runner: a running command gets SIGTERM and the grace, and its run ends as\n"
        "an expected failure, interrupted. A lost service is reconnected to.\n"
        "\n" DECLARATION_HELP
        "  --timeout SPAN       End a run after SPAN: SIGTERM, then SIGKILL after the grace\n"
        "  --grace SPAN         How long SIGTERM has before SIGKILL (default 10s)\n"
        "  --max-failures N     Stop the timer after N failures in a row\n"
        "  --failure-is-expected\n"
        "                       A signal or timeout is an expected failure too\n"
        "  --shell              Run \"COMMAND ARG...\" with /bin/sh -c\n"
        "  --journal            The command's output to the journal, NAME as its\n"
        "                       identifier (the default under systemd: $JOURNAL_STREAM)\n"
        "\n"
        "Exit status: 0 once stopped, or when the timer fires no more after a\n"
        "successful run; 1 when it fires no more after a failed one.\n"
        "\n" SPAN_HELP TIME_HELP,
    [VERB_SCHEDULE] = "Usage: timerctl schedule NAME --in SPAN | --at TIME\n"
                      "\n"
                      "Set a timer's next firing.\n"
                      "\n"
                      "Options:\n" USER_HELP "\n" SPAN_HELP TIME_HELP,
    [VERB_RESCHEDULE] = "Usage: timerctl reschedule NAME [--in SPAN | --at TIME] [--cadence SPAN]\n"
                        "\n"
                        "Replace a timer's next firing (without --in or --at: clear it) and,\n"
                        "with --cadence, its cadence. Prints what they were.\n"
                        "\n"
                        "Options:\n" USER_HELP "\n" SPAN_HELP TIME_HELP,
    [VERB_CANCEL] = "Usage: timerctl cancel NAME\n"
                    "\n"
                    "Clear a timer's next firing; the declaration stays.\n"
                    "\n"
                    "Options:\n" USER_HELP,
    [VERB_KICK] = "Usage: timerctl kick NAME\n"
                  "\n"
                  "Push a watchdog's deadline out to now + its cadence, and print it.\n"
                  "\n"
                  "Options:\n" USER_HELP,
    [VERB_REMOVE] = "Usage: timerctl remove NAME\n"
                    "\n"
                    "Unregister a timer.\n"
                    "\n"
                    "Options:\n" USER_HELP,
    [VERB_WAIT] = "Usage: timerctl wait [NAME...] [OPTIONS]\n"
                  "\n"
                  "Wait for a firing of one of your notify timers (of the NAMEs given), print it\n"
                  "and complete its run with success.\n"
                  "\n"
                  "Options:\n"
                  "  -n --count N         Wait for N firings (default 1)\n"
                  "  --timeout SPAN       Give up after SPAN (exit status 6)\n"
                  "  -U --user USER       Wait for USER's timers, taking their firings (root)\n"
                  "  --json[=MODE]        Each firing as JSON\n"
                  "\n" SPAN_HELP,
    [VERB_SLEEP] = "Usage: timerctl sleep SPAN|TIME [OPTIONS]\n"
                   "\n"
                   "Sleep in the service until SPAN has passed (or until TIME). An alarm timer\n"
                   "of the same connection that fires meanwhile interrupts the sleep: it is\n"
                   "printed, and the sleep ends with the time that was left and exit status 7\n"
                   "(with --resume it sleeps on to the deadline instead).\n"
                   "\n"
                   "Options:\n"
                   "  --clock CLOCK        The clock to sleep on (default monotonic)\n"
                   "  --alarm SPAN         Arm a one-shot alarm timer SPAN from now first\n"
                   "  --resume             After an interruption, sleep on to the deadline\n"
                   "  --json[=MODE]        Each answer as JSON\n"
                   "\n" SPAN_HELP TIME_HELP,
    [VERB_MONITOR] = "Usage: timerctl monitor [OPTIONS]\n"
                     "\n"
                     "Print the registry's events as they happen, one line each: registered,\n"
                     "reconciled, scheduled, rescheduled, cancelled, kicked, unregistered,\n"
                     "fired, completed, removed.\n"
                     "\n"
                     "Options:\n"
                     "  -a --all             Every owner's events (root)\n"
                     "  -n --count N         Stop after N events\n"
                     "  --json[=MODE]        Each event as JSON\n",
    [VERB_CALENDAR] =
        "Usage: timerctl calendar EXPRESSION... [OPTIONS]\n"
        "\n"
        "Preview calendar expressions as systemd-analyze calendar does: the original and\n"
        "normalized forms and the next elapses, on the wall clock of the time zone (with\n"
        "its UTC offset) and in UTC. Needs no service. An expression that names a zone\n"
        "(\"Mon..Fri 03:00 Europe/Berlin\") is computed there.\n"
        "\n"
        "EXPRESSION is a systemd.time(7) calendar event: daily, \"Mon..Fri *-*-* 03:00\",\n"
        "*:0/15, \"*-*~1 12:00\" (the last day of each month); with --cron, the 5-field\n"
        "cron form: \"0 3 * * 1-5\", @daily. A bad expression exits with status 2 and a\n"
        "caret under its bad part.\n"
        "\n"
        "Options:\n"
        "  --iterations N       Show the next N elapses (default 1)\n"
        "  --base-time TIME     Compute from TIME instead of now\n"
        "  --timezone ZONE      The IANA time zone (Europe/Berlin, UTC); default the\n"
        "                       local one (/etc/timezone, else /etc/localtime's link)\n"
        "  --cron               The expressions are in the cron form\n"
        "\n" TIME_HELP,
    [VERB_ADVANCE] =
        "Usage: timerctl advance SPAN [OPTIONS]\n"
        "\n"
        "Let SPAN pass on the clocks of a virtual-clock instance (timerd --clock virtual):\n"
        "every clock moves by SPAN, and each timer that comes due on the way fires at its\n"
        "own deadline, handed to a waiting client or left pending for the next wait.\n"
        "Prints the firings made and the clocks, as now does. A service on the real clock\n"
        "refuses it (exit status 1).\n"
        "\n"
        "Options:\n"
        "  --json[=MODE]        The firings and the clocks as JSON\n"
        "\n" SPAN_HELP,
    [VERB_NOW] = "Usage: timerctl now [OPTIONS]\n"
                 "\n"
                 "Show the clocks of a virtual-clock instance (timerd --clock virtual), in\n"
                 "microseconds: monotonic, boottime and realtime (also as a UTC time).\n"
                 "\n"
                 "Options:\n"
                 "  --json[=MODE]        The clocks as JSON\n",
};

static void help_overview(void)
{
        printf("Usage: timerctl [OPTIONS] [COMMAND] ...\n"
               "\n"
               "Control timerd, the host's timer service.\n"
               "\n"
               "Commands:\n"
               "  list                 List timers (the default)\n"
               "  show NAME            Show a timer, or some of its properties (-p)\n"
               "  status               Show the service's state and performance\n"
               "  add NAME POLICY      Register a timer: --once [SPAN], --every SPAN,\n"
               "                       --watchdog SPAN, --interval SPAN, --calendar EXPR\n"
               "                       or --cron EXPR\n"
               "  reconcile NAME POLICY\n"
               "                       Declare a timer if missing (idempotent)\n"
               "  schedule NAME        Set a timer's next firing (--in, --at)\n"
               "  reschedule NAME      Replace a timer's next firing and cadence\n"
               "  cancel NAME          Clear a timer's next firing, keep its declaration\n"
               "  kick NAME            Push a watchdog's deadline out\n"
               "  remove NAME          Unregister a timer\n"
               "  wait [NAME...]       Wait for a firing, print it and complete it\n"
               "  run NAME POLICY -- COMMAND...\n"
               "                       Run a command at each firing of a timer\n"
               "  sleep SPAN           Sleep in the service; an alarm interrupts it\n"
               "  monitor              Print the registry's events as they happen\n"
               "  calendar EXPRESSION...\n"
               "                       Preview a calendar expression's next elapses\n"
               "  advance SPAN         Let SPAN pass on a virtual clock (timerd --clock\n"
               "                       virtual), firing what comes due on the way\n"
               "  now                  Show a virtual-clock instance's clocks\n"
               "\n"
               "Options:\n"
               "  --socket PATH        The service's socket (default: $TIMERD_SOCKET, else\n"
               "                       ./" TIMERD_SOCKET_EMBEDDED
               " if it exists, else " TIMERD_SOCKET_SYSTEM ")\n"
               "  --json[=MODE]        Print results as JSON: short (one line, the default)\n"
               "                       or pretty\n"
               "  --no-pager           Accepted for systemctl's sake; timerctl never pages\n"
               "  -h --help            Show this help, or a command's (timerctl add --help)\n"
               "  -U --user USER       Act on USER's timers (root): a user name or a uid\n"
               "  --version            Show the version\n"
               "\n"
               "Timers added with timerctl are retained (see --transient). timerctl runs in a\n"
               "process of its own, so the commands that act on a timer look up its current\n"
               "generation and present that claim.\n"
               "\n" SPAN_HELP TIME_HELP "\n"
               "Exit status:\n"
               "  0 success, 1 other failure, 2 usage error, 3 no such timer,\n"
               "  4 permission denied, 5 service unreachable, 6 timed out,\n"
               "  7 interrupted (sleep)\n");
}

void help_print(enum verb verb)
{
        if (verb < 0 || verb >= VERB_MAX) {
                help_overview();
                return;
        }
        fputs(verb_help[verb], stdout);
}
