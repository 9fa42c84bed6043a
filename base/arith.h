/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Overflow-checked arithmetic on times and counts, the one set every part uses. */

#include <stdbool.h>
#include <stdint.h>

/* Every time and count the service takes or gives is a varlink int, signed 64-bit: internally
 * unsigned, never above this. A sum beyond it is an overflow. */
#define TD_VALUE_MAX ((uint64_t)INT64_MAX)

/* a + b, or UINT64_MAX when it does not fit: for instants that only order ("never" is last). */
static inline uint64_t saturating_add(uint64_t a, uint64_t b)
{
        return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Whether a + b is beyond what the wire carries (TD_VALUE_MAX); else *ret is the sum. */
static inline bool value_add_overflow(uint64_t a, uint64_t b, uint64_t *ret)
{
        return __builtin_add_overflow(a, b, ret) || *ret > TD_VALUE_MAX;
}

/* a + b, or TD_VALUE_MAX when the wire could not carry it: for statistics. */
static inline uint64_t value_saturating_add(uint64_t a, uint64_t b)
{
        uint64_t sum;

        return value_add_overflow(a, b, &sum) ? TD_VALUE_MAX : sum;
}
