/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bench/harness.h"

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

bool bench_pin(pid_t pid, int cpu)
{
        cpu_set_t set;

        if (sysconf(_SC_NPROCESSORS_ONLN) <= cpu)
                return false;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(pid, sizeof(set), &set) < 0) {
                note("cannot pin to CPU %d: %m", cpu);
                return false;
        }
        return true;
}

uint64_t now_nsec(void)
{
        struct timespec ts;

        if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
                die("clock_gettime: %m");
        return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

uint64_t now_usec(void)
{
        return now_nsec() / 1000;
}

void die(const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        fputs("bench: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
        exit(EXIT_FAILURE);
}

void *xcalloc(size_t n, size_t size)
{
        void *p = calloc(n, size);

        if (!p)
                die("out of memory (%zu × %zu bytes)", n, size);
        return p;
}

void note(const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
}

void table_row(const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        fputs("| ", stdout);
        vprintf(fmt, ap);
        fputs(" |\n", stdout);
        fflush(stdout);
        va_end(ap);
}

const char *verdict(bool met)
{
        return met ? "met" : "NOT met";
}
