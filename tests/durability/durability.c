/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "durability.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

struct dur *dur_new(const char *parent)
{
        struct dur *d = calloc(1, sizeof(*d));

        assert_non_null(d);
        snprintf(d->dir, sizeof(d->dir), "%s/timerd-durability.XXXXXX", parent);
        assert_non_null(mkdtemp(d->dir));
        return d;
}

void dur_free(struct dur *d)
{
        char cmd[256];

        if (d->running)
                harness_kill(&d->h, SIGKILL);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->dir);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", d->dir);
        free(d);
}

int dur_setup(void **state)
{
        *state = dur_new("/tmp");
        return 0;
}

int dur_teardown(void **state)
{
        dur_free(*state);
        return 0;
}

void dur_start(struct dur *d)
{
        const char *args[] = {"--state-dir", d->dir, NULL};

        assert_false(d->running);
        harness_start(&d->h, args);
        d->running = true;
}

void dur_stop(struct dur *d)
{
        d->running = false;
        harness_stop(&d->h);
}

void dur_crash(struct dur *d)
{
        int status;

        d->running = false;
        status = harness_kill(&d->h, SIGKILL);
        assert_true(WIFSIGNALED(status));
        assert_int_equal(WTERMSIG(status), SIGKILL);
}

struct timerd *dur_restart(struct dur *d, bool crash)
{
        if (crash)
                dur_crash(d);
        else
                dur_stop(d);
        dur_start(d);
        return harness_connect(&d->h);
}

int dur_call(struct timerd *t, json_object **ret, const char *method, const char *fmt, ...)
{
        char *params, *reply = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        assert_true(vasprintf(&params, fmt, ap) >= 0);
        va_end(ap);
        r = timerd_call_raw(t, method, params, &reply);
        free(params);
        if (ret) {
                *ret = reply ? json_tokener_parse(reply) : NULL;
                assert_true(!reply || *ret);
        }
        free(reply);
        return r;
}

void dur_store_status(struct timerd *t, char *buf, size_t size)
{
        json_object *o, *store;

        assert_int_equal(dur_call(t, &o, "io.timerd.Service.Status", "{}"), 0);
        assert_true(json_object_object_get_ex(o, "store", &store));
        snprintf(buf, size, "%s", json_object_get_string(store));
        json_object_put(o);
}

uint64_t dur_now(void)
{
        return harness_now_usec();
}
