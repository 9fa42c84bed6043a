/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The virtual clock of `timerd --clock virtual`: io.timerd.Test moves the clocks, stepping to
 * each deadline the cores want on the way and firing there exactly as a kernel expiry would.
 * An Advance waits (parked, the loop serving others) for the runs it handed out to end; only that
 * wait reads the real clock, to bound it.
 */

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "varlink/idl.h"

struct service;
struct peer;
struct vl_view;

/* An Advance (AdvanceTo, Suspend) under way: its caller's call stays open until it is done. */
struct virtual_advance {
        uint64_t session; /* the caller's; 0: none under way */
        uint64_t left;    /* usec still to pass */
        uint64_t firings_before;
        uint32_t workers; /* peers that took a run during it */
        bool suspended;   /* monotonic stands still */
        bool holding;     /* waiting for its workers, since held_since (real monotonic) */
        uint64_t held_since;
};

struct reply;

/* io.timerd.Test's methods, on a virtual clock (the dispatch in api.c calls it for nothing
 * else): what it decided. */
struct reply virtual_clock_call(struct service *s, struct peer *p, enum vl_idl_method_id method,
                                const struct vl_view *params);

/* Fire what is due at the time the virtual clocks read (a deadline set in the past fires at
 * once, as an armed kernel timer would), and step an Advance under way on. Once per loop
 * iteration; true when the next iteration must not wait (something still due after the bounded
 * rounds, or an Advance with more to step). */
bool virtual_clock_settle(struct service *s);

/* The loop's timeout: no longer than an Advance's wait for its workers may last. */
int64_t virtual_clock_timeout(const struct service *s, int64_t timeout_usec);
