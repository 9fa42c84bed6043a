/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

/*
 * The page failmalloc.so and a test share (a file mapped by both, $TIMERD_FAILMALLOC_CONTROL):
 * the test sets fail_at, span and count = failed = 0, then armed; the shim counts allocations
 * while armed and fails the fail_at-th and the span - 1 after it (span 0 is 1), counting them in
 * failed.
 */
struct failmalloc_control {
        uint64_t armed;
        uint64_t fail_at;
        uint64_t count;
        uint64_t failed;
        uint64_t span;
};
