/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The io.timerd.Timer calls the benchmarks send on raw connections, as text (no NUL). Each
 * returns the length written into buf, and dies if buf is too small. Timers are once, notify,
 * monotonic; start_usec is absolute CLOCK_MONOTONIC.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

size_t call_register(char *buf, size_t size, const char *name, uint64_t start_usec,
                     uint64_t accuracy_usec, bool retained);
/* A calendar timer on one systemd expression in `timezone` (JSON-safe text). */
size_t call_register_calendar(char *buf, size_t size, const char *name, const char *calendar,
                              const char *timezone);
size_t call_unregister(char *buf, size_t size, const char *name, uint64_t generation);
size_t call_cancel(char *buf, size_t size, const char *name, uint64_t generation);

#define CALL_STATUS "{\"method\":\"io.timerd.Service.Status\",\"parameters\":{}}"
