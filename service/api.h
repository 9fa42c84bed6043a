/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The varlink methods: a call taken from the intent queue becomes calls into the core, whose
 * transitions are applied and whose answer is the reply. Dispatch and the service-wide interfaces
 * live in api.c; io.timerd.Timer's control methods in api-timer.c; Wait and the parked queue in
 * waits.c.
 */

#include <json-c/json.h>

#include "service/params.h"
#include "service/core/registry.h"
#include "varlink/message.h"

struct service;
struct peer;

void api_handle_call(struct service *s, struct peer *p, const struct vl_call *call);

/* io.timerd.Timer methods other than Wait; false when `method` is not one of them. */
bool api_timer_call(struct service *s, struct peer *p, const char *method, json_object *params);

/* The JSON of a snapshot, as the IDL's Timer type. */
json_object *api_timer_json(const struct td_snapshot *t, const struct td_now *now);

/* waits.c */
void api_wait(struct service *s, struct peer *p, json_object *params);
void api_sleep(struct service *s, struct peer *p, json_object *params);
void api_finish(struct service *s, struct peer *p, json_object *params);
void api_resume(struct service *s, struct peer *p, json_object *params);
/* A run was dispatched: hand it to the oldest matching waiter, or leave it pending. */
void api_offer_firing(struct service *s, const struct td_now *now, const struct td_dispatch *d);
/* owner's timers changed: answer its Waits none of whose timers can fire any more. */
void api_waits_recheck(struct service *s, uint32_t owner);
/* Answer parked requests whose deadline passed. */
void api_expire_parked(struct service *s, const struct td_now *now);
/* Retire the parked requests of a closed session (no replies: nobody is left to read them). */
void api_session_closed(struct service *s, uint64_t session);
/* Answer every parked request ShuttingDown. */
void api_shutdown_parked(struct service *s);
/* Parked Waits, for Status. */
uint64_t api_waiters(const struct service *s);
