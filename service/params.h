/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Reading a call's parameters into the core's types. Every failure says which parameter was
 * wrong (its dotted path), so the reply can be org.varlink.service.InvalidParameter naming it, or
 * the more precise typed error (InvalidName, PermissionDenied).
 */

#include <json-c/json.h>
#include <stdbool.h>
#include <sys/types.h>

#include "service/core/registry.h"
#include "varlink/idl.h"
#include "varlink/view.h"

/* A typed failure with what its reply names: the timer, a detail (the parameter of
 * InvalidParameter, the reason of InvalidSchedule, …) and a number (a generation, a limit). */
struct param_error {
        int error; /* positive TIMERD_E_* */
        char name[TIMERD_NAME_MAX + 1];
        char detail[96];
        char description[192]; /* InvalidSchedule: what its reason means */
        uint64_t value;
};

/* A call's field maps while it is handled: its parameters' and each struct's in them. */
struct params_fields {
        struct vl_view_fields object[VL_IDL_OBJECTS_MAX];
        size_t n;
};

/*
 * The call's parameters against the parameters its method's IDL declares (struct vl_idl_method),
 * for a call its reader did not check as it scanned it (struct vl_call's checked):
 * a field it does not declare, at any level, or an int beyond the IDL's signed 64 bits is
 * InvalidParameter naming the field by its dotted path ("declaration.frobnicate"). *ret is the
 * parameters with the field maps made in `fields` as they were checked, which the handlers read
 * fields from by id (vl_view_get_*(), enum vl_idl_field_id): ret lives as long as `fields`.
 */
int params_check(const struct vl_idl_struct *type, const struct vl_view *params,
                 struct params_fields *fields, struct vl_view *ret, struct param_error *err);

/* The owner meant: "owner" when given (only a privileged caller, uid 0 or the admin group, may
 * name another uid), else the caller. */
int params_owner(const struct vl_view *params, uid_t caller, bool privileged, uint32_t *ret,
                 struct param_error *err);

/* A required (or, with optional, absent → *ret = NULL) valid timer name in field "name". */
int params_name(const struct vl_view *obj, bool optional, const char **ret,
                struct param_error *err);

struct zones;
/* The declaration; a calendar one holds a reference to its schedule, which the caller releases
 * with td_calendar_unref(ret->calendar). Zones the schedule names are looked up in `zones`. */
int params_declaration(const struct vl_view *params, struct zones *zones,
                       struct td_declaration *ret, struct param_error *err);

/* "claim" or "token" (exactly one), into a handle for owner. */
int params_handle(const struct vl_view *params, uint32_t owner, bool allow_token,
                  struct td_handle *ret, struct param_error *err);

/* A required token in field "token". */
int params_token(const struct vl_view *params, uint32_t owner, struct td_handle *ret,
                 struct param_error *err);

/*
 * An optional point in time: field `absolute` (named absolute_field: "<prefix>_usec") or
 * "delay_usec" (relative to now on clock). Returns 1 when given (*ret absolute), 0 when neither
 * is, or an error. -TIMERD_E_OVERFLOW (naming delay_usec) when now + delay is beyond the wire's
 * int64.
 */
int params_when(const struct vl_view *params, enum vl_idl_field_id absolute,
                const char *absolute_field, uint64_t now, uint64_t *ret, struct param_error *err);

/* A required field "signal" naming a signal a timer may send (see Declaration.signal). */
int params_signal(const struct vl_view *params, int *ret, struct param_error *err);

/* An optional string field (absent: *ret untouched, returns 0; present: returns 1); `path` names
 * it in an error. */
int params_string(const struct vl_view *obj, enum vl_idl_field_id field, const char *path,
                  const char **ret, struct param_error *err);

/* Fill err for InvalidParameter on path and return -TIMERD_E_INVALID_PARAMETER. */
int params_invalid(struct param_error *err, const char *path);

/* Fill err for a core failure (negative TIMERD_E_*) about timer `name`; returns failure. */
int params_fail(struct param_error *err, int failure, const char *name, const char *detail,
                uint64_t value);

/* The error's reply parameters, as the IDL declares them. */
json_object *params_error_json(const struct param_error *err);
