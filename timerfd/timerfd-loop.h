/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The timerfd backend: epoll for fd readiness (level-triggered), one timerfd per clock for the
 * kernel timers, and a realtime clock-set watch. Works wherever epoll and timerfd do.
 */

#include "loop/loop.h"

int timerfd_loop_new(const struct loop_callbacks *cb, struct loop **ret);
