/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Delivery `signal`: a firing becomes a real signal to the process that registered the timer,
 * through that process's pidfd (pidfd_send_signal, si_code SI_QUEUE, si_value = the claim's
 * generation). Never to a pid a client names: the target is the registering connection's
 * process, so the service's CAP_KILL cannot be borrowed.
 */

#include "service/core/registry.h"

struct service;

struct signal_stats {
        uint64_t sent;
        uint64_t coalesced;   /* not sent: the last one was still pending (an overrun) */
        uint64_t target_gone; /* ESRCH, or the registering connection is gone */
        uint64_t refused;     /* EPERM */
};

/* Send the signal of a dispatched run and end the run: a target that is gone or refuses stops
 * the timer with a typed failure. */
void signals_deliver(struct service *s, const struct td_now *now, const struct td_dispatch *d);

/* The firing of a restored timer that found no process pinned (it waits in the registry, one per
 * timer, its later periods counted as overruns): sent now that `session`, the owner's, re-pinned
 * it. */
void signals_deliver_held(struct service *s, const struct td_now *now, uint32_t owner,
                          const char *name, uint64_t session);
