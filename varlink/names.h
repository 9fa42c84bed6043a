/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The wire spelling of timerd's vocabulary: enum values as varlink enum names
 * ("after_completion"), errors as qualified varlink error names ("io.timerd.Timer.NotFound").
 * One table per enum, used by the service and libtimerd alike.
 */

#include "timerd/timerd-types.h"

#define VL_INTERFACE_SERVICE "org.varlink.service"
#define VL_INTERFACE_TIMER   TIMERD_INTERFACE_TIMER
#define VL_INTERFACE_STATUS  TIMERD_INTERFACE_SERVICE
#define VL_INTERFACE_TEST    TIMERD_INTERFACE_TEST /* a virtual-clock instance only */

/* vl_NAME_to_string() returns NULL for an out-of-range value; vl_NAME_from_string() returns the
 * enum value or the type's _INVALID (-1) for an unknown name. timerctl's hyphenated spellings
 * ("after-completion") are accepted too. Defined by DEFINE_NAME_LOOKUP in names.c. */
#define DECLARE_NAME_LOOKUP(name, type)                                                            \
        const char *vl_##name##_to_string(type v);                                                 \
        type vl_##name##_from_string(const char *s)

DECLARE_NAME_LOOKUP(clock, enum timerd_clock);
DECLARE_NAME_LOOKUP(policy, enum timerd_policy);
DECLARE_NAME_LOOKUP(lifetime, enum timerd_lifetime);
DECLARE_NAME_LOOKUP(delivery, enum timerd_delivery);
DECLARE_NAME_LOOKUP(state, enum timerd_state);
DECLARE_NAME_LOOKUP(outcome, enum timerd_outcome);
DECLARE_NAME_LOOKUP(exit, enum timerd_exit);
DECLARE_NAME_LOOKUP(directive, enum timerd_directive);
DECLARE_NAME_LOOKUP(failure, enum timerd_failure);
DECLARE_NAME_LOOKUP(desired, enum timerd_desired);

/* "io.timerd.Timer.NotFound" for TIMERD_E_NOT_FOUND (positive); NULL for client-only errors. */
const char *vl_error_to_name(int error);
/* The error for a qualified name; TIMERD_E_UNKNOWN_ERROR when it is not one of ours. */
int vl_error_from_name(const char *name);
/* A short English sentence for a positive TIMERD_E_* value, NULL when out of range. */
const char *vl_error_message(int error);
