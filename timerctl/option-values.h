/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The values of timerctl's options (option-values.c). Each returns PARSE_CONTINUE, or an exit
 * status when it reported a bad value; `option` is the option as given, for messages.
 */

#include "options.h"

/* A span, a span above 0, a count above 0. */
int parse_span(const char *option, const char *arg, uint64_t *ret);
int parse_positive_span(const char *option, const char *arg, uint64_t *ret);
int parse_count(const char *option, const char *arg, uint64_t *ret);

/* value: optarg as one of the vocabulary's enums, negative when it is none of them. */
int check_choice(const char *option, int value, const char *choices);

/* The first firing: --once SPAN, --in, --at; only one of them. */
int set_start(struct options *o, const char *option, const struct timestamp *start);
int set_once(struct options *o, const char *arg);
int set_in(struct options *o, const char *arg);
int set_at(struct options *o, const char *arg);

/*
 * "--once 5min" as well as "--once=5min": take the next word when it is a span. Another word
 * stays an argument (the timer's name, perhaps), remembered in case it was meant as the span.
 */
const char *optional_span(int argc, char *argv[], struct options *o);

/* The cadence of --every, --watchdog, --interval. */
int set_policy(struct options *o, const char *option, enum timerd_policy policy, const char *arg);

/* One more calendar expression (cron: after TIMERD_CALENDAR_CRON_PREFIX): a calendar timer,
 * on realtime unless --clock says otherwise. */
int add_calendar_line(struct options *o, const char *option, const char *text);

int set_lifetime(struct options *o, const char *option, enum timerd_lifetime lifetime);
int set_handover(struct options *o, const char *arg);
int set_owner(struct options *o, const char *arg);
/* A "+5min" base time is from now, as systemd-analyze's. */
int set_base_time(struct options *o, const char *arg);
int add_properties(struct options *o, const char *arg);
