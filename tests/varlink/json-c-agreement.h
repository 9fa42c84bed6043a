/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The tokenizer (varlink/tokens.h) against json-c's strict tokener (JSON_TOKENER_STRICT) on one
 * text: they must take and refuse the same texts, except where json-c's strict mode takes what
 * RFC 8259 refuses. Those principled differences are listed here, each with its RFC reason; a
 * difference outside the list is a failure. Shared by test-varlink-tokens and fuzz-json.
 */

#include <stdbool.h>
#include <stddef.h>

/* The nesting bound both get: json-c's default depth. */
#define AGREEMENT_DEPTH 32

/* NULL when the two agree on text, or disagree for a listed reason; otherwise what differs. */
const char *json_c_disagreement(const char *text, size_t len);
