/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The varlink methods: a call taken from the intent queue becomes calls into the core, whose
 * transitions are applied and whose answer the method returns (struct reply): the dispatch in
 * api.c sends it, the method sends nothing. Answers to other, parked calls (a firing handed to a
 * Wait, a Sleep a Finish ends) are the transition's effects, sent as they are carried out.
 * Dispatch and the service-wide interfaces live in api.c; io.timerd.Timer's control methods in
 * api-timer.c; Wait and the parked queue in waits.c.
 */

#include <json-c/json.h>

#include "service/connection.h"
#include "service/params.h"
#include "service/core/registry.h"
#include "varlink/idl.h"
#include "varlink/message.h"

struct service;
struct peer;

/* Dispatch the call to its method and send what the method decided. */
void api_handle_call(struct service *s, struct peer *p, const struct vl_call *call);

/* io.timerd.Timer methods other than Wait, Sleep, Finish and Resume (the dispatch in api.c
 * calls it for no other): what it decided. */
struct reply api_timer_call(struct service *s, struct peer *p, enum vl_idl_method_id method,
                            const struct vl_view *params);

/* A snapshot as the IDL's Timer type, brought up to now (registry_snapshot_at()), written into o:
 * as `field` of the object being written, or (NULL) an element of the array being written. */
void api_timer_write(struct vl_text *o, const char *field, const struct registry *r,
                     const struct td_snapshot *t, const struct td_now *now);

/* waits.c: the methods, which return what they decided (REPLY_NONE: parked) */
struct reply api_wait(struct service *s, struct peer *p, const struct vl_view *params);
struct reply api_sleep(struct service *s, struct peer *p, const struct vl_view *params);
struct reply api_finish(struct service *s, struct peer *p, const struct vl_view *params);
struct reply api_resume(struct service *s, struct peer *p, const struct vl_view *params);
/* Carry out what applying left (apply.h): each dispatched run is counted, published and handed
 * to its waiter; each silenced owner's Waits are rechecked; until nothing is left. After any
 * service_apply() whose caller is not itself inside a hand-over. */
void api_hand_over(struct service *s);
/* service_apply(), then api_hand_over(). */
void api_apply(struct service *s, const struct td_now *now, struct td_transition t);
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
