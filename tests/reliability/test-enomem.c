/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * ENOMEM in the request path of the real timerd: failmalloc.so (LD_PRELOAD) makes one in 50 of
 * its allocations fail while it is switched on (SIGUSR2), those of json-c and glibc (strdup,
 * asprintf) as well as timerd's own. Clients make every kind of call
 * meanwhile. Each call must end with a reply (a success or a typed error) or with the connection
 * closed — never a crash, never a call left hanging. Once allocations succeed again, the service
 * works and holds exactly the timers it says it holds, the ones made before the failures among
 * them, and it shuts down cleanly. Plain builds only: the sanitizers replace the allocator
 * themselves.
 */

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "wire.h"

#define N_KEPT   20
#define ROUNDS   40
#define N_CLIENT 4

static int setup(void **state)
{
        const char *shim = getenv("TIMERD_FAILMALLOC");
        assert_non_null(shim);
        assert_int_equal(setenv("LD_PRELOAD", shim, 1), 0);
        int r = harness_setup(state);
        assert_int_equal(unsetenv("LD_PRELOAD"), 0);
        return r;
}

/* One call that may fail in any typed way: true when answered, false when the service closed
 * the connection. A call left unanswered fails the test. */
static bool call_leniently(int fd, const char *msg)
{
        char buf[1 << 16];
        if (send(fd, msg, strlen(msg) + 1, MSG_NOSIGNAL) < 0)
                return false;
        long n = raw_recv_reply(fd, buf, sizeof(buf), WIRE_TIMEOUT_MS);
        if (n == -2)
                fail_msg("no answer to %s", msg);
        return n >= 0;
}

static const char *const calls[] = {
    "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":\"n%d\",\"replace\":true,"
    "\"declaration\":{\"policy\":\"interval\",\"cadence_usec\":1000}}}",
    "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":\"r%d\",\"replace\":true,"
    "\"declaration\":{\"policy\":\"once\",\"lifetime\":\"retained\"},\"delay_usec\":1000}}",
    "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"n%d\"}}",
    "{\"method\":\"io.timerd.Timer.List\",\"parameters\":{\"all\":%d}}",
    "{\"method\":\"io.timerd.Service.Status\",\"parameters\":{}}",
    "{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":{\"timeout_usec\":%d000}}",
    "{\"method\":\"io.timerd.Timer.Sleep\",\"parameters\":{\"for_usec\":%d000}}",
    "{\"method\":\"io.timerd.Timer.Unregister\",\"parameters\":{\"claim\":{\"name\":\"n%d\","
    "\"generation\":1}}}",
    "{\"method\":\"org.varlink.service.GetInfo\",\"parameters\":{}}",
    "not json %d",
};

static void test_allocation_failures_in_the_request_path(void **state)
{
        struct harness *h = *state;
        int control = harness_raw_connect(h);
        wire_bulk_register(control, "kept", N_KEPT,
                           "{\"policy\":\"once\",\"lifetime\":\"retained\"}", WIRE_OWNER_SELF, 0);
        /* A heartbeat: an alarm every 5 ms; each firing a Sleep of root takes lets it fire again
         * (untaken, the service keeps it pending and holds its schedule). */
        wire_bulk_register(control, "beat", 1,
                           "{\"policy\":\"interval\",\"cadence_usec\":5000,\"delivery\":\"alarm\"}",
                           WIRE_OWNER_SELF, 0);

        assert_int_equal(kill(h->pid, SIGUSR2), 0);
        unsigned answered = 0, dropped = 0;
        for (int round = 0; round < ROUNDS; round++) {
                int fds[N_CLIENT];
                for (int c = 0; c < N_CLIENT; c++)
                        fds[c] = harness_raw_connect(h);
                for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
                        for (int c = 0; c < N_CLIENT; c++) {
                                char msg[512];
                                if (fds[c] < 0)
                                        continue;
                                snprintf(msg, sizeof(msg), calls[i], c + 1 + round % 2);
                                if (call_leniently(fds[c], msg))
                                        answered++;
                                else {
                                        dropped++;
                                        close(fds[c]);
                                        fds[c] = -1;
                                }
                        }
                for (int c = 0; c < N_CLIENT; c++)
                        if (fds[c] >= 0)
                                close(fds[c]);
        }
        assert_int_equal(kill(h->pid, SIGUSR2), 0);
        print_message("under allocation failures: %u calls answered, %u connections dropped\n",
                      answered, dropped);

        /* Working again, and consistent: what List holds is what Status counts, the timers made
         * before are all there, and a new one can be made. */
        int fd = harness_raw_connect(h);
        for (int i = 0; i < N_KEPT; i++) {
                json_object *r = wire_call(
                    fd,
                    "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"kept%05d\"}}",
                    i);
                assert_null(wire_error(r));
                json_object_put(r);
        }
        json_object *st = wire_call(fd, "{\"method\":\"io.timerd.Service.Status\"}");
        int64_t timers = wire_int(st, "timers");
        json_object_put(st);
        json_object *list =
            wire_call(fd, "{\"method\":\"io.timerd.Timer.List\",\"parameters\":{\"all\":true}}");
        json_object *params, *array;
        assert_true(json_object_object_get_ex(list, "parameters", &params));
        assert_true(json_object_object_get_ex(params, "timers", &array));
        assert_int_equal((int64_t)json_object_array_length(array), timers);
        json_object_put(list);
        json_object *r =
            wire_call(fd, "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{"
                          "\"name\":\"after\",\"declaration\":{\"policy\":\"once\"}}}");
        assert_null(wire_error(r));
        json_object_put(r);

        /* The heartbeat goes on: timers still fire. Each Sleep observes it and ends the run, so
         * it fires again for the next. */
        st = wire_call(fd, "{\"method\":\"io.timerd.Service.Status\"}");
        int64_t firings = wire_int(st, "firings");
        json_object_put(st);
        for (int beat = 0; beat < 3; beat++) {
                r = wire_call(fd, "{\"method\":\"io.timerd.Timer.Sleep\",\"parameters\":{"
                                  "\"for_usec\":5000000}}");
                assert_null(wire_error(r));
                assert_string_equal(wire_string(r, "observation.timer"), "beat00000");
                json_object *finished = wire_call(
                    fd,
                    "{\"method\":\"io.timerd.Timer.Finish\",\"parameters\":{\"continuation\":"
                    "{\"epoch\":%" PRId64 ",\"nonce\":%" PRId64 ",\"cycle\":%" PRId64
                    "},\"lease\":%" PRId64 ",\"action\":\"terminate\"}}",
                    wire_int(r, "observation.continuation.epoch"),
                    wire_int(r, "observation.continuation.nonce"),
                    wire_int(r, "observation.continuation.cycle"),
                    wire_int(r, "observation.lease"));
                assert_null(wire_error(finished));
                json_object_put(finished);
                json_object_put(r);
        }
        st = wire_call(fd, "{\"method\":\"io.timerd.Service.Status\"}");
        print_message("heartbeat: %" PRId64 " firings over 3 Sleeps\n",
                      wire_int(st, "firings") - firings);
        assert_true(wire_int(st, "firings") >= firings + 2);
        json_object_put(st);
        close(fd);
        close(control);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_allocation_failures_in_the_request_path, setup,
                                            harness_teardown),
        };
        return cmocka_run_group_tests_name(harness_backend(), tests, NULL, NULL);
}
