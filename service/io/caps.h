/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The service's privileges. It needs two capabilities and nothing else: CAP_KILL, to signal a
 * client of another uid through the pidfd the client itself handed over, and CAP_WAKE_ALARM, for
 * the alarm clocks. Under systemd the unit grants exactly these; started by hand as root, the
 * service drops everything else itself.
 */

/*
 * Switch to `user` (NULL or "": stay), which needs root; `state_dir`, already created, is handed
 * to that user first. Then keep only CAP_KILL and CAP_WAKE_ALARM of what is held: the rest leaves
 * every set and, when CAP_SETPCAP allows, the bounding set. Sets no-new-privs and logs what is
 * kept. -ESRCH for an unknown user, -EPERM when a switch is asked for without root or when a
 * capability beyond the two cannot be dropped (a seccomp filter forbids capset()), else -errno.
 */
int caps_drop(const char *user, const char *state_dir);

/*
 * The capabilities in effect, named like "CAP_KILL", in ascending order: a NULL-terminated array
 * for caps_names_free(). Returns how many, or -errno.
 */
int caps_held(char ***ret);
void caps_names_free(char **names);
