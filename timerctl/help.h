/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "options.h"

/* `timerctl --help` for VERB_INVALID, `timerctl VERB --help` for a verb. */
void help_print(enum verb verb);
