/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bench/calls.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "bench/harness.h"

__attribute__((format(printf, 3, 4))) static size_t format(char *buf, size_t size, const char *fmt,
                                                           ...)
{
        va_list ap;

        va_start(ap, fmt);
        int n = vsnprintf(buf, size, fmt, ap);
        va_end(ap);
        if (n < 0 || (size_t)n >= size)
                die("a call does not fit in %zu bytes", size);
        return (size_t)n;
}

size_t call_register(char *buf, size_t size, const char *name, uint64_t start_usec,
                     uint64_t accuracy_usec, bool retained)
{
        return format(buf, size,
                      "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":\"%s\","
                      "\"declaration\":{\"policy\":\"once\",\"accuracy_usec\":%" PRIu64 "%s},"
                      "\"start_usec\":%" PRIu64 "}}",
                      name, accuracy_usec, retained ? ",\"lifetime\":\"retained\"" : "",
                      start_usec);
}

size_t call_register_calendar(char *buf, size_t size, const char *name, const char *calendar,
                              const char *timezone)
{
        return format(buf, size,
                      "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":\"%s\","
                      "\"declaration\":{\"policy\":\"calendar\",\"calendar\":[\"%s\"],"
                      "\"timezone\":\"%s\"}}}",
                      name, calendar, timezone);
}

size_t call_unregister(char *buf, size_t size, const char *name, uint64_t generation)
{
        return format(buf, size,
                      "{\"method\":\"io.timerd.Timer.Unregister\",\"parameters\":{\"claim\":{"
                      "\"name\":\"%s\",\"generation\":%" PRIu64 "}}}",
                      name, generation);
}

size_t call_cancel(char *buf, size_t size, const char *name, uint64_t generation)
{
        return format(buf, size,
                      "{\"method\":\"io.timerd.Timer.Cancel\",\"parameters\":{\"claim\":{"
                      "\"name\":\"%s\",\"generation\":%" PRIu64 "}}}",
                      name, generation);
}
