/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the passing of a clock does, whether the kernel woke the loop or io.timerd.Test moved a
 * virtual clock: fire the registry's due timers and expire parked requests, re-evaluate after
 * the realtime clock was set, and step a calendar re-evaluation under way.
 */

#include "service/core/registry.h"

struct service;

/* What an expiry of clock c does: fire the registry's due timers, expire parked requests. */
void service_expire(struct service *s, enum timerd_clock c, const struct td_now *now);

/* The realtime clock was set: realtime deadlines and calendar schedules are evaluated again. */
void service_clock_was_set(struct service *s);

/* One step of a calendar re-evaluation under way, sized so that each iteration still serves the
 * peers. */
void service_reevaluate_step(struct service *s);
/* Finish a calendar re-evaluation under way at once, rather than a step per iteration: a virtual
 * clock answers only once the world is settled. */
void service_finish_reevaluation(struct service *s);
/* One step of freeing the timers of closed connections, with their memory given back. */
void service_reap_step(struct service *s);
