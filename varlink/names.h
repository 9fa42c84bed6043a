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

/* Each *_to_string returns NULL for an out-of-range value; each *_from_string returns the enum
 * value or the type's _INVALID (-1) for an unknown name. timerctl's hyphenated spellings
 * ("after-completion") are accepted too. */
const char *vl_clock_to_string(enum timerd_clock v);
enum timerd_clock vl_clock_from_string(const char *s);
const char *vl_policy_to_string(enum timerd_policy v);
enum timerd_policy vl_policy_from_string(const char *s);
const char *vl_lifetime_to_string(enum timerd_lifetime v);
enum timerd_lifetime vl_lifetime_from_string(const char *s);
const char *vl_delivery_to_string(enum timerd_delivery v);
enum timerd_delivery vl_delivery_from_string(const char *s);
const char *vl_state_to_string(enum timerd_state v);
enum timerd_state vl_state_from_string(const char *s);
const char *vl_outcome_to_string(enum timerd_outcome v);
enum timerd_outcome vl_outcome_from_string(const char *s);
const char *vl_exit_to_string(enum timerd_exit v);
enum timerd_exit vl_exit_from_string(const char *s);
const char *vl_directive_to_string(enum timerd_directive v);
enum timerd_directive vl_directive_from_string(const char *s);
const char *vl_failure_to_string(enum timerd_failure v);
enum timerd_failure vl_failure_from_string(const char *s);
const char *vl_desired_to_string(enum timerd_desired v);
enum timerd_desired vl_desired_from_string(const char *s);

/* "io.timerd.Timer.NotFound" for TIMERD_E_NOT_FOUND (positive); NULL for client-only errors. */
const char *vl_error_to_name(int error);
/* The error for a qualified name; TIMERD_E_UNKNOWN_ERROR when it is not one of ours. */
int vl_error_from_name(const char *name);
/* A short English sentence for a positive TIMERD_E_* value, NULL when out of range. */
const char *vl_error_message(int error);
