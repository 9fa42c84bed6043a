/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Whether JSON text is valid UTF-8 (RFC 8259 §8.1) in the strict sense of RFC 3629, also what its
 * \u escapes spell. json-c checks only the shape of a sequence: it takes overlong forms, encoded
 * surrogates and code points above U+10FFFF, and turns a lone surrogate escape into U+FFFD.
 */

#include <stdbool.h>
#include <stddef.h>

/*
 * True when the len bytes at text hold no overlong form, no UTF-16 surrogate (U+D800..U+DFFF), no
 * code point above U+10FFFF, no sequence cut short or stray continuation byte, and every \u escape
 * of a surrogate in a string is a high one followed by a low one. Says nothing of the JSON grammar.
 */
bool vl_json_text_valid(const char *text, size_t len);

/* The code unit of a \uXXXX escape at text (n bytes left), -1 when text holds none. */
long vl_json_escaped_unit(const char *text, size_t n);

/* The length of the UTF-8 sequence at text (n > 0 bytes left), 0 when RFC 3629 does not allow it.
 */
size_t vl_utf8_sequence_length(const char *text, size_t n);
