/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A view (varlink/view.h) against the json-c tree json.c builds of the same text: every getter
 * must read what its vl_get_*() twin reads, for every key the tree holds and the extra names
 * given, inside nested objects too. Shared by test-varlink-view and fuzz-json.
 */

#include <json-c/json.h>
#include <stddef.h>

#include "varlink/view.h"

/* NULL when they agree on object v / tree t; otherwise what differs. */
const char *view_disagreement(const struct vl_view *v, json_object *t, const char *const *extra,
                              size_t n_extra);
