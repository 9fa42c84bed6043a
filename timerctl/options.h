/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * timerctl's command line: the verb, its arguments and options, each checked on its own and then
 * against the verb, before anything is sent to the service.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clocks.h"
#include "output.h"
#include "timerd/timerd.h"
#include "timestamp.h"

enum verb {
        VERB_LIST,
        VERB_SHOW,
        VERB_STATUS,
        VERB_ADD,
        VERB_RECONCILE,
        VERB_SCHEDULE,
        VERB_RESCHEDULE,
        VERB_CANCEL,
        VERB_KICK,
        VERB_REMOVE,
        VERB_WAIT,
        VERB_SLEEP,
        VERB_MONITOR,
        VERB_CALENDAR,
        VERB_RUN,
        VERB_ADVANCE,
        VERB_NOW,
        VERB_MAX,
        VERB_INVALID = -1,
};

#define PROPERTIES_MAX 32

struct options {
        enum verb verb;
        char *const *args; /* after the verb */
        size_t n_args;
        const char *socket;
        enum json_mode json;
        bool legend;
        bool all;
        uint32_t owner;    /* --user: whose timers; TIMERD_OWNER_SELF for the caller's own */
        struct clocks now; /* read once, for timestamps */

        /* add, reconcile */
        const char *policy_option;
        const char *lifetime_option;
        bool clock_given; /* --clock: a calendar timer is otherwise on realtime */
        struct timerd_declaration declaration;
        enum timerd_desired desired;

        /* add, reconcile, schedule, reschedule: the first firing (--once SPAN, --in, --at) */
        const char *start_option;
        struct timestamp start;
        /* The word after a bare --once that is no span: it may have been meant as one. */
        const char *once_word;

        /* reschedule */
        uint64_t cadence_usec;

        /* show -p */
        const char *properties[PROPERTIES_MAX]; /* each may list several, comma-separated */
        size_t n_properties;
        bool value_only;

        /* wait, monitor */
        uint64_t count; /* 0: no end */
        uint64_t timeout_usec;

        /* sleep */
        struct timestamp until;
        bool has_alarm;
        uint64_t alarm_usec;
        bool resume;

        /* run: the command after "--", and how its runs go */
        char *const *command;
        size_t n_command;
        bool shell;
        bool journal;
        bool failure_is_expected;
        uint64_t grace_usec;
        uint64_t max_failures; /* 0: no limit */
        /* calendar (which needs no service) */
        uint64_t iterations;
        bool has_base_time;
        struct timestamp base_time;
        const char *timezone; /* also add, reconcile: the calendar's zone */
        /* advance (a virtual-clock instance) */
        uint64_t advance_usec;
        bool cron; /* add, reconcile: the arguments after the name are cron expressions */
};

/* parse_command_line(): go on to run the verb. */
#define PARSE_CONTINUE (-1)

/*
 * Fill o from the command line. Returns PARSE_CONTINUE, or an exit status when timerctl is done
 * (--help, --version: EXIT_STATUS_SUCCESS; a usage error, reported: EXIT_STATUS_USAGE).
 */
int parse_command_line(int argc, char *argv[], struct options *o);

const char *verb_name(enum verb verb);
