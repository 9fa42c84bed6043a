/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/io/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The one process-wide setting: written once at start-up from the command line. */
static int max_level = LOG_INFO;

void log_set_max_level(int level)
{
        max_level = level;
}

static void log_emit(int level, const char *suffix, const char *fmt, va_list ap)
{
        char line[2048];

        vsnprintf(line, sizeof(line), fmt, ap);
        fprintf(stderr, "<%d>%s%s\n", level, line, suffix ? suffix : "");
}

void log_at(int level, const char *fmt, ...)
{
        va_list ap;

        if (level > max_level)
                return;
        va_start(ap, fmt);
        log_emit(level, NULL, fmt, ap);
        va_end(ap);
}

int log_errno(int error, const char *fmt, ...)
{
        char suffix[256];
        va_list ap;

        if (LOG_ERR > max_level)
                return error;
        snprintf(suffix, sizeof(suffix), ": %s", error < 0 ? strerror(-error) : "unknown error");
        va_start(ap, fmt);
        log_emit(LOG_ERR, suffix, fmt, ap);
        va_end(ap);
        return error;
}
