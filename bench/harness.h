/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * How a benchmark program runs and reports. The service and the client get a core each (on a
 * 2-core machine the kernel would otherwise move them around and the numbers would measure the
 * scheduler); everything fatal ends the program with a message; results are rows of the one
 * table bench/run prints, written to stdout, while progress and details go to stderr.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The cores: timerd and in-bench servers on one, the measuring client on the other. */
#define BENCH_CPU_SERVICE 0
#define BENCH_CPU_CLIENT  1

/* Pin pid (0: the caller) to cpu. False when the machine has too few CPUs: nothing is pinned. */
bool bench_pin(pid_t pid, int cpu);

uint64_t now_usec(void);
uint64_t now_nsec(void);

_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void *xcalloc(size_t n, size_t size);

/* Progress and details, to stderr. */
void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * One row of the result table: the cells separated by " | " in fmt, in the columns
 * bench · measure · timerd · baseline · ratio · target · met.
 */
void table_row(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "met" or "NOT met". */
const char *verdict(bool met);
