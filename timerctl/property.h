/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The properties of a timer for `timerctl show -p`, named like the fields of the IDL's Timer and
 * Declaration ("state", "next_usec", "policy"), printed like systemctl show prints them:
 * "state=scheduled", or only the value. Values are in the wire's spelling; absent ones are empty;
 * booleans are yes/no.
 */

#include <stdbool.h>
#include <stdio.h>

#include "timerd/timerd.h"

bool property_known(const char *name);

/* Every name, comma-separated, for an error message. */
void property_print_names(FILE *f);

/* Print one line; name must be known. */
void property_print(FILE *f, const struct timerd_timer *timer, const char *name, bool value_only);
