/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "liburing-backend/uring-loop.h"
#include "service/io/backend.h"
#include "timerfd/timerfd-loop.h"

#define REFUSE_ENV "TIMERD_TEST_IO_URING_REFUSE"

static void reason_set(char *reason, size_t reason_size, const char *format, ...)
{
        va_list ap;

        if (!reason || reason_size == 0)
                return;
        va_start(ap, format);
        (void)vsnprintf(reason, reason_size, format, ap);
        va_end(ap);
}

static bool io_uring_refusal_forced(void)
{
        const char *e = secure_getenv(REFUSE_ENV);

        return e && strcmp(e, "1") == 0;
}

static bool io_uring_refused(int r)
{
        return r == -ENOSYS || r == -EPERM || r == -EACCES || r == -EOPNOTSUPP;
}

static int uring_open(const struct loop_callbacks *cb, struct loop **ret, char *reason,
                      size_t reason_size)
{
        const char *missing = NULL;
        int r;

        if (io_uring_refusal_forced()) {
                reason_set(reason, reason_size, "io_uring refused: forced by %s=1", REFUSE_ENV);
                return -EPERM;
        }
        r = uring_loop_new(cb, &missing, ret);
        if (r == -EOPNOTSUPP && missing)
                reason_set(reason, reason_size, "io_uring lacks %s", missing);
        else if (r < 0)
                reason_set(reason, reason_size, "io_uring %s: %s",
                           io_uring_refused(r) ? "refused" : "failed", strerror(-r));
        return r;
}

static int timerfd_open(const struct loop_callbacks *cb, struct loop **ret, char *reason,
                        size_t reason_size)
{
        int r = timerfd_loop_new(cb, ret);

        if (r < 0)
                reason_set(reason, reason_size, "timerfd failed: %s", strerror(-r));
        return r;
}

int loop_new(enum loop_backend backend, const struct loop_callbacks *cb, struct loop **ret)
{
        switch (backend) {
        case LOOP_BACKEND_TIMERFD:
                return timerfd_open(cb, ret, NULL, 0);
        case LOOP_BACKEND_IO_URING:
                return uring_open(cb, ret, NULL, 0);
        default:
                return -EINVAL;
        }
}

int backend_open(const char *requested, const struct loop_callbacks *cb, struct loop **ret,
                 char *reason, size_t reason_size)
{
        char why[256] = "";
        enum loop_backend b;
        int r;

        reason_set(reason, reason_size, "%s", "");
        if (!ret)
                return -EINVAL;

        if (!requested || strcmp(requested, "auto") == 0) {
                r = uring_open(cb, ret, why, sizeof(why));
                if (r >= 0 || !io_uring_refused(r)) {
                        reason_set(reason, reason_size, "%s", why);
                        return r;
                }
                r = timerfd_loop_new(cb, ret);
                if (r < 0)
                        reason_set(reason, reason_size, "%s; timerfd failed: %s", why,
                                   strerror(-r));
                else
                        reason_set(reason, reason_size, "%s", why);
                return r;
        }

        b = loop_backend_from_string(requested);
        switch (b) {
        case LOOP_BACKEND_IO_URING:
                return uring_open(cb, ret, reason, reason_size);
        case LOOP_BACKEND_TIMERFD:
                return timerfd_open(cb, ret, reason, reason_size);
        default:
                reason_set(reason, reason_size,
                           "unknown backend '%s' (expected auto, io_uring or timerfd)", requested);
                return -EINVAL;
        }
}
