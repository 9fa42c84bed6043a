/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Owners as people name them: a user name or a uid for --user, a user name where timerctl shows
 * one (a uid with no name in the user database is shown as its number).
 */

#include <stdint.h>

/* Fits any uid's number, and a user name of up to 63 bytes (longer ones are shown as numbers). */
#define USER_NAME_MAX 64

/*
 * A user name or a uid ("1000") as the owner's uid. Returns 0, -ESRCH when there is no such user,
 * -ERANGE for a number that is no uid, or another -errno when the user database cannot be read.
 */
int user_parse(const char *s, uint32_t *ret);

/* The uid's user name, or its number when it has none. Returns buf. */
char *user_name(uint32_t uid, char buf[static USER_NAME_MAX]);
