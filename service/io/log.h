/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Logging to stderr with sd-daemon priority prefixes ("<6>"), which journald understands. */

#include <syslog.h>

#define log_error(...)   log_at(LOG_ERR, __VA_ARGS__)
#define log_warning(...) log_at(LOG_WARNING, __VA_ARGS__)
#define log_notice(...)  log_at(LOG_NOTICE, __VA_ARGS__)
#define log_info(...)    log_at(LOG_INFO, __VA_ARGS__)
#define log_debug(...)   log_at(LOG_DEBUG, __VA_ARGS__)

void log_set_max_level(int level);
void log_at(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Logs and returns `error` (negative), for `return log_errno(r, "...")`. */
int log_errno(int error, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
