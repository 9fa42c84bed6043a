/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The varlink interface descriptions the service publishes, embedded verbatim from the .varlink
 * files at build time (embed-idl.py), for org.varlink.service.GetInfo and
 * GetInterfaceDescription. Linked by the service only (varlink_idl_dep).
 */

/* The description of a qualified interface name ("io.timerd.Timer"); NULL when it is not ours. */
const char *vl_idl_lookup(const char *interface);

/* Every interface served, org.varlink.service first; NULL-terminated. */
extern const char *const vl_idl_interfaces[];
