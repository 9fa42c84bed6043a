/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Delivery `signal`: a firing becomes a real signal to the process that registered the timer,
 * through that process's pidfd (pidfd_send_signal, si_code SI_QUEUE, si_value = the claim's
 * generation). Never to a pid a client names: the target is the registering connection's
 * process, so the service's CAP_KILL cannot be borrowed.
 */

#include "service/core/registry.h"

struct peer;
struct service;

struct signal_stats {
        uint64_t sent;
        uint64_t coalesced;   /* not sent: the last one was still pending (an overrun) */
        uint64_t target_gone; /* ESRCH, or the registering connection is gone */
        uint64_t refused;     /* EPERM */
};

/*
 * Whether a timer's signal is still outstanding is known two ways. A process whose connection
 * called AcknowledgeSignals reports each signal it took (SignalTaken): from send to that report
 * its signal is outstanding, and a firing meanwhile is an overrun, whether or not the service can
 * read the client's /proc. For any other the service reads ShdPnd in /proc/PID/status; where /proc
 * is hidden (ProtectProc=invisible in the shipped unit) it cannot, and sends: a real-time signal
 * then queues, a standard one merges with the pending one, and neither counts as an overrun.
 */
/* From now on p's signals wait for SignalTaken. 0, or -ENOMEM. */
int signals_acknowledge(struct peer *p);
/* p took the signal signo of the timer of generation: 0, or -TIMERD_E_SIGNAL_NOT_OUTSTANDING
 * when no such signal awaits its acknowledgement (none sent, already taken, another timer's or
 * another connection's): nothing changes. */
int signals_taken(struct peer *p, int signo, uint64_t generation);

/* Send the signal of a dispatched run and end the run: a target that is gone or refuses stops
 * the timer with a typed failure. */
void signals_deliver(struct service *s, const struct td_now *now, const struct td_dispatch *d);

/* The firing of a restored timer that found no process pinned (it waits in the registry, one per
 * timer, its later periods counted as overruns): sent now that `session`, the owner's, re-pinned
 * it. */
void signals_deliver_held(struct service *s, const struct td_now *now, uint32_t owner,
                          const char *name, uint64_t session);
