/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The top of the runtime: what wakes the loop (expired kernel timers, a set clock), the one
 * point per iteration where queued calls are handled, then the store's commit and the flush.
 * After each step it retires the sessions of the connections dropped meanwhile and hands over
 * what applying left.
 */

#include <stdint.h>

#include "loop/loop.h"

struct service;

/* The loop's callbacks. Before the loop runs. */
void service_loop_callbacks(struct service *s, struct loop_callbacks *ret);

/* Retire what the sessions of the connections dropped so far held. */
void service_retire_closed(struct service *s);

/* One loop iteration: wait at most timeout_usec (-1: forever), dispatch, drain intents. */
int service_iterate(struct service *s, int64_t timeout_usec);
