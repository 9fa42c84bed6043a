/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What a process holds, from /proc: resident memory and open file descriptors. */

#include <sys/types.h>

/* VmRSS in KiB, or -1. */
long proc_rss_kib(pid_t pid);
/* Entries of /proc/PID/fd, or -1. */
long proc_fd_count(pid_t pid);
/* User + system CPU time in clock ticks (1/100 s), or -1. */
long proc_cpu_ticks(pid_t pid);
