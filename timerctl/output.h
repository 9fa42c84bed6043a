/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What timerctl says besides its results: exit statuses, error messages naming the verb and the
 * timer, JSON in the chosen layout, and what the terminal allows (colors, width).
 */

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "timerd/timerd.h"

enum exit_status {
        EXIT_STATUS_SUCCESS = 0,
        EXIT_STATUS_FAILURE = 1,
        EXIT_STATUS_USAGE = 2,
        EXIT_STATUS_NOT_FOUND = 3,
        EXIT_STATUS_PERMISSION_DENIED = 4,
        EXIT_STATUS_UNREACHABLE = 5,
        EXIT_STATUS_TIMEOUT = 6,
        EXIT_STATUS_INTERRUPTED = 7, /* an alarm ended a sleep early */
};

enum json_mode {
        JSON_OFF,
        JSON_SHORT,  /* one line per value */
        JSON_PRETTY, /* indented */
        JSON_MODE_MAX,
        JSON_MODE_INVALID = -1,
};

/* "off", "short", "pretty". */
enum json_mode json_mode_from_string(const char *s);

/* "timerctl: MESSAGE" and the hint at --help; returns EXIT_STATUS_USAGE. */
__attribute__((format(printf, 1, 2))) int usage_error(const char *format, ...);

/* The exit status that goes with a failed call's error. */
int exit_status_of(int error);

/*
 * "timerctl: remove backup: no timer of that name (io.timerd.Timer.NotFound)". name may be NULL.
 * Returns exit_status_of(error).
 */
int call_failed(struct timerd *t, const char *verb, const char *name, int error);

/* Print a JSON value on stdout in the mode (not JSON_OFF), and release it. NULL: -ENOMEM. */
int json_print(json_object *value, enum json_mode mode);

/* Colors only on a terminal that has them, and not with $NO_COLOR set. */
bool output_color(void);
/* The terminal's width: $COLUMNS, else the width of stdout's terminal, else 0 (unlimited). */
size_t output_width(void);
