/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The wire form of libtimerd's structs, as io.timerd.Timer and io.timerd.Service spell them.
 * Encoders write fields of a call's parameters (varlink/message.h's vl_text, whose error keeps an
 * allocation failure) and return 0, or -EINVAL for a value the protocol cannot carry. Decoders
 * return 0 or -TIMERD_E_PROTOCOL for a reply that breaks the IDL.
 */

#include "timerd/timerd.h"
#include "varlink/message.h"

/* The clock a declaration of `policy` has when it names none (the IDL's default). */
enum timerd_clock wire_default_clock(enum timerd_policy policy);
/* "declaration", without the fields whose values are the IDL's defaults. */
int wire_add_declaration(struct vl_text *t, const struct timerd_declaration *d);
/* Exactly one of claim and token, as "claim" or "token". */
int wire_add_claim_or_token(struct vl_text *t, const struct timerd_claim *claim,
                            const struct timerd_token *token);
void wire_add_token(struct vl_text *t, const struct timerd_token *token);
/* "result": how a run's program ended; -EINVAL for TIMERD_EXIT_NONE or a code above 255. */
int wire_add_run_result(struct vl_text *t, const struct timerd_run_result *result);
/* An AT start as `absolute_field`, an AFTER start as "delay_usec"; a DEFAULT start adds nothing. */
int wire_add_start(struct vl_text *t, const struct timerd_start *start, const char *absolute_field);
void wire_add_continuation(struct vl_text *t, const struct timerd_continuation *c);
void wire_add_ticket(struct vl_text *t, const struct timerd_ticket *ticket);

/* An object among the tokens of a reply (varlink/message.h's vl_reply_tokenize, with
 * connection_send(tokens) or CONNECTION_TOKEN_HANDLER): decoded without a tree or an allocation. */
struct wire_object {
        const char *text;
        const struct vl_token *tokens;
        size_t index;
};

/* The parameters of a success reply; -TIMERD_E_PROTOCOL when absent ({}). */
int wire_reply_parameters(const struct vl_reply *reply, struct wire_object *ret);
/* Fields that must be there: an integer >= 0, a string that fits size bytes whole, an object. */
int wire_get_u64(const struct wire_object *o, const char *field, uint64_t *ret);
int wire_get_string_into(const struct wire_object *o, const char *field, char *buf, size_t size);
int wire_get_object(const struct wire_object *o, const char *field, struct wire_object *ret);
/* An object that may be absent (or null): *ret_has false. */
int wire_get_optional_object(const struct wire_object *o, const char *field,
                             struct wire_object *ret, bool *ret_has);

int wire_decode_timer(const struct wire_object *obj, struct timerd_timer *ret);
int wire_decode_status(const struct wire_object *obj, struct timerd_status *ret);
/* The parameters of a Sleep or Resume reply. */
int wire_decode_sleep_result(const struct vl_reply *reply, struct timerd_sleep_result *ret);
/* The parameters of a Finish reply. */
int wire_decode_finish_result(const struct vl_reply *reply, struct timerd_finish_result *ret);
int wire_decode_event(const struct wire_object *obj, struct timerd_event *ret);

/* Fields of a success reply's parameters that must be there; "claim" as a struct; "firing" as a
 * struct. */
int wire_reply_u64(const struct vl_reply *reply, const char *field, uint64_t *ret);
int wire_reply_bool(const struct vl_reply *reply, const char *field, bool *ret);
int wire_reply_claim(const struct vl_reply *reply, struct timerd_claim *ret);
int wire_reply_firing(const struct vl_reply *reply, struct timerd_firing *ret);
