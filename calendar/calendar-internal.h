/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by the parts of calendar/: the fields' bounds and the spec's final checks. */

#include "calendar.h"

#define CALENDAR_USEC_PER_MINUTE (60 * 1000000)

enum calendar_field_id {
        FIELD_YEAR,
        FIELD_MONTH,
        FIELD_DAY,
        FIELD_HOUR,
        FIELD_MINUTE,
        FIELD_USEC,
        FIELD_MAX,
};

struct calendar_field *calendar_field_of(struct calendar_spec *spec, enum calendar_field_id id);
/* Sorts and deduplicates each field, shortens ranges to a whole number of repetitions. */
void calendar_normalize(struct calendar_spec *spec);
/* Checks the normalized spec; on failure sets *ret_field to the offending field. */
enum calendar_error_code calendar_validate(const struct calendar_spec *spec,
                                           enum calendar_field_id *ret_field);
/* The smallest value >= value in the field, up to max; false if none. */
bool calendar_field_next(const struct calendar_field *field, int32_t value, int32_t max,
                         int32_t *ret);
