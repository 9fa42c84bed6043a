/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "timerd/timerd.h"
#include "varlink/names.h"

/* The public face of varlink/names.c's tables: one table per enum serves the service and clients.
 */

#define PUBLIC_NAMES(name)                                                                         \
        const char *timerd_##name##_to_string(enum timerd_##name value)                            \
        {                                                                                          \
                return vl_##name##_to_string(value);                                               \
        }                                                                                          \
        enum timerd_##name timerd_##name##_from_string(const char *s)                              \
        {                                                                                          \
                return vl_##name##_from_string(s);                                                 \
        }

PUBLIC_NAMES(clock)
PUBLIC_NAMES(policy)
PUBLIC_NAMES(lifetime)
PUBLIC_NAMES(delivery)
PUBLIC_NAMES(state)
PUBLIC_NAMES(outcome)
PUBLIC_NAMES(exit)
PUBLIC_NAMES(directive)
PUBLIC_NAMES(failure)
PUBLIC_NAMES(desired)
