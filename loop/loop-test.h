/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Hooks for tests only. The realtime clock-set path cannot be triggered without setting the
 * host's clock, so tests inject it: this runs exactly what a -ECANCELED read of the clock-set
 * watch runs (re-arm the watch, count it, call callbacks.clock_set), synchronously.
 */

#include "loop/loop.h"

void loop_inject_clock_set(struct loop *l);
