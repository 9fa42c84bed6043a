/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "timerd/timerd.h"
#include "varlink/names.h"

const char *timerd_strerror(int error)
{
        /* Widened first: negating INT_MIN as an int would overflow. */
        long long magnitude = error < 0 ? -(long long)error : error;
        const char *message = NULL;

        if (magnitude >= TIMERD_E_BASE && magnitude < TIMERD_E_MAX)
                message = vl_error_message((int)magnitude);
        else if (magnitude < TIMERD_E_BASE)
                message = strerrordesc_np((int)magnitude);
        return message ? message : "Unknown error";
}
