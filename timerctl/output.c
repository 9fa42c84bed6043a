/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "output.h"

static const char *const json_mode_names[JSON_MODE_MAX] = {
    [JSON_OFF] = "off",
    [JSON_SHORT] = "short",
    [JSON_PRETTY] = "pretty",
};

enum json_mode json_mode_from_string(const char *s)
{
        for (int i = 0; i < JSON_MODE_MAX; i++)
                if (strcmp(json_mode_names[i], s) == 0)
                        return (enum json_mode)i;
        return JSON_MODE_INVALID;
}

int usage_error(const char *format, ...)
{
        va_list ap;

        fputs("timerctl: ", stderr);
        va_start(ap, format);
        vfprintf(stderr, format, ap);
        va_end(ap);
        fputs("\nTry 'timerctl --help' for more information.\n", stderr);
        return EXIT_STATUS_USAGE;
}

int exit_status_of(int error)
{
        switch (error) {
        case -TIMERD_E_NOT_FOUND:
        case -TIMERD_E_NOTHING_TO_WAIT_FOR:
                return EXIT_STATUS_NOT_FOUND;
        case -TIMERD_E_PERMISSION_DENIED:
        case -EACCES:
        case -EPERM:
                return EXIT_STATUS_PERMISSION_DENIED;
        case -TIMERD_E_DISCONNECTED:
        case -TIMERD_E_SHUTTING_DOWN:
                return EXIT_STATUS_UNREACHABLE;
        case -TIMERD_E_TIMEOUT:
                return EXIT_STATUS_TIMEOUT;
        default:
                return EXIT_STATUS_FAILURE;
        }
}

int call_failed(struct timerd *t, const char *verb, const char *name, int error)
{
        const char *error_name = timerd_last_error_name(t);
        const char *reason = timerd_last_error_reason(t);
        const char *description = timerd_last_error_description(t);
        uint64_t max;
        const char *limit = timerd_last_error_limit(t, &max);

        fprintf(stderr, "timerctl: %s%s%s: ", verb, name ? " " : "", name ? name : "");
        if (limit) {
                /* Which bound, and its number: what the user can act on. */
                fprintf(stderr, "limit exceeded: %s (max %" PRIu64 ")\n", limit, max);
                return exit_status_of(error);
        }
        fputs(timerd_strerror(error), stderr);
        if (error_name && reason)
                fprintf(stderr, " (%s: %s)", error_name, reason);
        else if (error_name)
                fprintf(stderr, " (%s)", error_name);
        if (description)
                fprintf(stderr, ": %s", description);
        fputc('\n', stderr);
        return exit_status_of(error);
}

int json_print(json_object *value, enum json_mode mode)
{
        int flags = JSON_C_TO_STRING_NOSLASHESCAPE;
        const char *text;

        if (!value)
                return -ENOMEM;
        flags |= mode == JSON_PRETTY ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED
                                     : JSON_C_TO_STRING_PLAIN;
        text = json_object_to_json_string_ext(value, flags);
        if (text)
                printf("%s\n", text);
        json_object_put(value);
        return text ? 0 : -ENOMEM;
}

bool output_color(void)
{
        const char *term = getenv("TERM");

        if (getenv("NO_COLOR"))
                return false;
        return isatty(STDOUT_FILENO) && term && strcmp(term, "dumb") != 0;
}

size_t output_width(void)
{
        const char *columns = getenv("COLUMNS");
        struct winsize size;
        char *end;

        if (columns && columns[0] != 0) {
                unsigned long n;

                errno = 0;
                n = strtoul(columns, &end, 10);
                if (errno == 0 && *end == 0 && n > 0 && n < 100000)
                        return n;
        }
        if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) >= 0 &&
            size.ws_col > 0)
                return size.ws_col;
        return 0;
}
