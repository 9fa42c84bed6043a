/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

/*
 * The page failmalloc.so and a test share (a file mapped by both, $TIMERD_FAILMALLOC_CONTROL):
 * the test sets fail_at and count = failed = 0, then armed; the shim counts allocations while
 * armed and fails the fail_at-th, setting failed.
 */
struct failmalloc_control {
        uint64_t armed;
        uint64_t fail_at;
        uint64_t count;
        uint64_t failed;
};
