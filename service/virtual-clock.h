/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The virtual clock of `timerd --clock virtual`: io.timerd.Test moves the clocks, stepping to
 * each deadline the cores want on the way and firing there exactly as a kernel expiry would.
 * Nothing here reads a real clock.
 */

#include <json-c/json.h>
#include <stdbool.h>

struct service;
struct peer;

/* io.timerd.Test's methods; false when `method` is not one of them (or the clock is real). */
bool virtual_clock_call(struct service *s, struct peer *p, const char *method, json_object *params);

/* Fire what is due at the time the virtual clocks read (a deadline set in the past fires at
 * once, as an armed kernel timer would). Once per loop iteration; true when something is still
 * due after its bounded rounds (the next iteration must not wait). */
bool virtual_clock_settle(struct service *s);
