/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "idle.h"
#include "proc-stats.h"
#include "wire.h"

void expect_idle(const struct harness *h, int control)
{
        int64_t iterations = wire_status(control, "iterations");
        long before = proc_cpu_ticks(h->pid);
        usleep(1000000);
        long used = proc_cpu_ticks(h->pid) - before;
        int64_t ran = wire_status(control, "iterations") - iterations;
        print_message("idle: %ld/100 s of CPU, %" PRId64 " loop iterations in 1 s\n", used, ran);
        if (used > IDLE_CPU_TICKS)
                fail_msg("timerd used %ld/100 s of CPU in 1 s while idle", used);
        if (ran > IDLE_ITERATIONS)
                fail_msg("timerd ran %" PRId64 " loop iterations in 1 s while idle", ran);
}
