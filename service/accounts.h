/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Accounts: which person a uid's limits are charged to. The subordinate uid file
 * (config.subuid_file, subuid(5)) is read at start and on SIGHUP, and its table handed to the
 * registry, the parked queue and the connection table, which re-charge what every uid holds to
 * its new account. All three take the new table or none does: a reload that runs out of memory,
 * or cannot read the file, keeps the previous table (a missing file is a table of no ranges).
 */

struct service;

void accounts_load(struct service *s);
/* At teardown, after the registry, the parked queue and the connections are gone. */
void accounts_free(struct service *s);
