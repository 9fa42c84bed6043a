/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * JSON text (RFC 8259, strictly: no comments, no trailing commas, no raw control characters in
 * strings, no leading zeros) read into a json-c tree, built from the tokens of varlink/tokens.h.
 * Ours rather than json-c's tokener, which goes on with a NULL key after a failed allocation and
 * crashes (json-c 0.16, Debian 12); here every allocation failure is -ENOMEM and leaves nothing
 * behind. Numbers as json-c holds them:
 * integers as int64, above INT64_MAX as uint64, saturated to INT64_MIN or UINT64_MAX beyond;
 * others as doubles that keep their text.
 */

#include <json-c/json.h>
#include <stddef.h>

#include "varlink/message.h"
#include "varlink/tokens.h"

/*
 * Parse msg (len bytes) as exactly one value with optional white space around it, nested at most
 * max_depth deep (the root is 1, each value inside one more). *ret is NULL for null. -EILSEQ for
 * text that is not strict UTF-8, -EBADMSG for text that is not that value, -ENOMEM. p keeps its
 * tokens and a buffer for the next.
 */
int vl_json_parse(struct vl_parser *p, const char *msg, size_t len, int max_depth,
                  json_object **ret);

/* The tree of the value at tokens[root], tokens that vl_tokenize() made of the len bytes of text
 * (with p's buffer). 0 or -ENOMEM. */
int vl_json_tree(struct vl_parser *p, const char *text, size_t len, const struct vl_token *tokens,
                 size_t root, json_object **ret);
