/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Every allocation of every method, one at a time: failmalloc.so (LD_PRELOAD, its control page)
 * fails the n-th allocation timerd makes after the call is armed — its own, json-c's or glibc's —
 * for n = 1, 2, … until the call goes through without reaching it. Each time the call must be
 * answered as it was without the failure (a success of the same shape, or the same error), or
 * Busy; the connection stays usable; and the registry stays consistent: what List holds is what
 * Status counts, and every timer listed is whole (Get answers it). At the end the service
 * restarts on its journal and holds the same timers. In sanitized builds too: the shim then hands
 * on to the sanitizer's allocator.
 *
 * Then a new connection and its first call, with one, two and three allocations in a row failing
 * from each one on (the accept's, the connection's buffers', the call's, its answer's): the call
 * is answered or the connection closed, never left hanging (a new connection's output buffer is
 * allocated by its first answer, so a failed answer may leave no room for Busy either), and the
 * next connection is taken and answered.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "failmalloc.h"
#include "harness.h"
#include "wire.h"

#define BUSY      "io.timerd.Timer.Busy"
#define ONE_HOUR  "3600000000"
#define MAX_ALLOC 5000 /* a bound on the sweep, far above what any call makes */

struct sweep {
        struct harness *h;
        struct failmalloc_control *control;
        char control_path[64];
        int fd;
};

/* The call a case makes, or what sets up before its call (never failing) and writes it. */
struct method_case {
        const char *name;
        const char *call;
        void (*prepare)(int fd, char *call, size_t size);
};

static const char *const sweep_names[] = {"sweep", "sweep2", "sweep3"};

/* Register name (must succeed); its generation. */
static int64_t reg(int fd, const char *name, const char *declaration, const char *extra)
{
        json_object *r = wire_call(fd,
                                   "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{"
                                   "\"name\":\"%s\",\"declaration\":%s%s}}",
                                   name, declaration, extra);
        if (wire_error(r))
                fail_msg("Register %s: %s", name, wire_error(r));
        int64_t generation = wire_int(r, "claim.generation");
        json_object_put(r);
        return generation;
}

/* Remove whatever the sweep timers left. */
static void remove_sweep_timers(int fd)
{
        for (size_t i = 0; i < sizeof(sweep_names) / sizeof(sweep_names[0]); i++) {
                json_object *g = wire_call(
                    fd, "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"%s\"}}",
                    sweep_names[i]);
                if (!wire_error(g)) {
                        json_object *u = wire_call(
                            fd,
                            "{\"method\":\"io.timerd.Timer.Unregister\",\"parameters\":{\"claim\":"
                            "{\"name\":\"%s\",\"generation\":%" PRId64 "}}}",
                            sweep_names[i], wire_int(g, "timer.generation"));
                        if (wire_error(u))
                                fail_msg("Unregister %s: %s", sweep_names[i], wire_error(u));
                        json_object_put(u);
                }
                json_object_put(g);
        }
}

#define RETAINED                                                                                   \
        "{\"policy\":\"after_completion\",\"cadence_usec\":" ONE_HOUR ",\"lifetime\":"             \
        "\"retained\"}"
#define ONCE "{\"policy\":\"once\"}"

static void prepare_get(int fd, char *call, size_t size)
{
        reg(fd, "sweep", RETAINED, "");
        snprintf(call, size,
                 "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"sweep\"}}");
}

static void prepare_list(int fd, char *call, size_t size)
{
        reg(fd, "sweep", RETAINED, "");
        reg(fd, "sweep2", ONCE, "");
        reg(fd, "sweep3", "{\"policy\":\"calendar\",\"calendar\":[\"*-*-* 03:00\"]}", "");
        snprintf(call, size, "{\"method\":\"io.timerd.Timer.List\",\"parameters\":{}}");
}

/* A call on the claim of a timer registered with `declaration`. */
static void prepare_claim_call(int fd, char *call, size_t size, const char *declaration,
                               const char *method, const char *extra)
{
        int64_t generation = reg(fd, "sweep", declaration, ",\"delay_usec\":" ONE_HOUR);
        snprintf(call, size,
                 "{\"method\":\"io.timerd.Timer.%s\",\"parameters\":{\"claim\":{\"name\":\"sweep\","
                 "\"generation\":%" PRId64 "}%s}}",
                 method, generation, extra);
}

static void prepare_schedule(int fd, char *call, size_t size)
{
        prepare_claim_call(fd, call, size, ONCE, "Schedule", ",\"delay_usec\":7200000000");
}

static void prepare_reschedule(int fd, char *call, size_t size)
{
        prepare_claim_call(fd, call, size, RETAINED, "Reschedule",
                           ",\"delay_usec\":7200000000,\"cadence_usec\":7200000000");
}

static void prepare_cancel(int fd, char *call, size_t size)
{
        prepare_claim_call(fd, call, size, RETAINED, "Cancel", "");
}

static void prepare_kick(int fd, char *call, size_t size)
{
        prepare_claim_call(fd, call, size,
                           "{\"policy\":\"watchdog\",\"cadence_usec\":" ONE_HOUR "}", "Kick", "");
}

static void prepare_unregister(int fd, char *call, size_t size)
{
        prepare_claim_call(fd, call, size, RETAINED, "Unregister", "");
}

/* A firing waiting to be taken. */
static void prepare_wait_pending(int fd, char *call, size_t size)
{
        reg(fd, "sweep", ONCE, ",\"delay_usec\":0");
        usleep(20 * 1000);
        snprintf(call, size,
                 "{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":{\"names\":[\"sweep\"],"
                 "\"timeout_usec\":5000000}}");
}

/* A Wait that parks and is answered by the firing. */
static void prepare_wait_parked(int fd, char *call, size_t size)
{
        reg(fd, "sweep", ONCE, ",\"delay_usec\":30000");
        snprintf(call, size,
                 "{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":{\"names\":[\"sweep\"],"
                 "\"timeout_usec\":5000000}}");
}

static void prepare_complete(int fd, char *call, size_t size)
{
        reg(fd, "sweep", ONCE, ",\"delay_usec\":0");
        json_object *w = wire_call(fd, "{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":{"
                                       "\"names\":[\"sweep\"],\"timeout_usec\":5000000}}");
        if (wire_error(w))
                fail_msg("Wait: %s", wire_error(w));
        snprintf(call, size,
                 "{\"method\":\"io.timerd.Timer.Complete\",\"parameters\":{\"token\":{\"name\":"
                 "\"sweep\",\"generation\":%" PRId64 ",\"run\":%" PRId64
                 "},\"outcome\":\"success\","
                 "\"result\":{\"exit\":\"exited\",\"code\":0}}}",
                 wire_int(w, "firing.token.generation"), wire_int(w, "firing.token.run"));
        json_object_put(w);
}

#define CALL(method, parameters) "{\"method\":\"" method "\",\"parameters\":" parameters "}"

static const struct method_case cases[] = {
    {"Register (retained)",
     CALL("io.timerd.Timer.Register", "{\"name\":\"sweep\",\"declaration\":" RETAINED "}"), NULL},
    {"Register (calendar)",
     CALL("io.timerd.Timer.Register",
          "{\"name\":\"sweep\",\"declaration\":{\"policy\":\"calendar\",\"calendar\":[\"Mon..Fri "
          "*-*-* 03:00\"],\"cron\":[\"0 4 * * *\"],\"timezone\":\"UTC\"}}"),
     NULL},
    {"Register (InvalidParameter)",
     CALL("io.timerd.Timer.Register",
          "{\"name\":\"sweep\",\"declaration\":{\"policy\":\"sometimes\"}}"),
     NULL},
    {"Reconcile",
     CALL("io.timerd.Timer.Reconcile",
          "{\"name\":\"sweep\",\"declaration\":" RETAINED ",\"desired\":\"scheduled\"}"),
     NULL},
    {"Get", NULL, prepare_get},
    {"Get (NotFound)", CALL("io.timerd.Timer.Get", "{\"name\":\"nosuch\"}"), NULL},
    {"List", NULL, prepare_list},
    {"Schedule", NULL, prepare_schedule},
    {"Reschedule", NULL, prepare_reschedule},
    {"Cancel", NULL, prepare_cancel},
    {"Kick", NULL, prepare_kick},
    {"Unregister", NULL, prepare_unregister},
    {"Wait (pending)", NULL, prepare_wait_pending},
    {"Wait (parked)", NULL, prepare_wait_parked},
    {"Complete", NULL, prepare_complete},
    {"Sleep", CALL("io.timerd.Timer.Sleep", "{\"for_usec\":1000}"), NULL},
    {"AcknowledgeSignals", CALL("io.timerd.Timer.AcknowledgeSignals", "{}"), NULL},
    {"SignalTaken (SignalNotOutstanding)",
     CALL("io.timerd.Timer.SignalTaken", "{\"signal\":10,\"generation\":1}"), NULL},
    {"Status", CALL("io.timerd.Service.Status", "{}"), NULL},
    {"GetInfo", CALL("org.varlink.service.GetInfo", "{}"), NULL},
    {"GetInterfaceDescription",
     CALL("org.varlink.service.GetInterfaceDescription", "{\"interface\":\"io.timerd.Service\"}"),
     NULL},
    {"an unknown method", CALL("io.timerd.Timer.Nope", "{}"), NULL},
};

static json_object *parameters_of(json_object *reply)
{
        json_object *p;
        return json_object_object_get_ex(reply, "parameters", &p) ? p : NULL;
}

/* The same fields, nested the same way, of the same types; values may differ. */
static bool same_shape(json_object *a, json_object *b)
{
        if (json_object_get_type(a) != json_object_get_type(b))
                return false;
        if (json_object_is_type(a, json_type_array)) {
                size_t n = json_object_array_length(a);
                if (n != json_object_array_length(b))
                        return false;
                for (size_t i = 0; i < n; i++)
                        if (!same_shape(json_object_array_get_idx(a, i),
                                        json_object_array_get_idx(b, i)))
                                return false;
                return true;
        }
        if (!json_object_is_type(a, json_type_object))
                return true;
        if (json_object_object_length(a) != json_object_object_length(b))
                return false;
        json_object_object_foreach(a, key, value)
        {
                json_object *other;
                if (!json_object_object_get_ex(b, key, &other) || !same_shape(value, other))
                        return false;
        }
        return true;
}

/* List holds what Status counts, and each timer it lists is whole. */
static void check_registry(int fd, const char *name, unsigned n)
{
        json_object *st = wire_call(fd, "{\"method\":\"io.timerd.Service.Status\"}");
        json_object *list = wire_call(fd, "{\"method\":\"io.timerd.Timer.List\"}");
        json_object *timers;

        if (wire_error(st) || wire_error(list))
                fail_msg("%s, allocation %u: afterwards Status %s, List %s", name, n,
                         wire_error(st) ? wire_error(st) : "ok",
                         wire_error(list) ? wire_error(list) : "ok");
        assert_true(json_object_object_get_ex(parameters_of(list), "timers", &timers));
        if ((int64_t)json_object_array_length(timers) != wire_int(st, "timers"))
                fail_msg("%s, allocation %u: List has %zu timers, Status counts %" PRId64, name, n,
                         json_object_array_length(timers), wire_int(st, "timers"));
        for (size_t i = 0; i < json_object_array_length(timers); i++) {
                json_object *t = json_object_array_get_idx(timers, i), *v;
                assert_true(json_object_object_get_ex(t, "name", &v));
                json_object *g = wire_call(
                    fd, "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"%s\"}}",
                    json_object_get_string(v));
                json_object *got;
                if (wire_error(g) || !json_object_object_get_ex(parameters_of(g), "timer", &got) ||
                    !json_object_object_get_ex(got, "declaration", &v) ||
                    !json_object_object_get_ex(got, "state", &v))
                        fail_msg("%s, allocation %u: listed timer %s is not whole: %s", name, n,
                                 json_object_get_string(json_object_array_get_idx(timers, i)),
                                 json_object_to_json_string(g));
                json_object_put(g);
        }
        json_object_put(st);
        json_object_put(list);
}

static void arm(struct sweep *s, uint64_t fail_at, uint64_t span)
{
        s->control->fail_at = fail_at;
        s->control->span = span;
        s->control->count = 0;
        s->control->failed = 0;
        __atomic_store_n(&s->control->armed, 1, __ATOMIC_RELEASE);
}

/* Disarm; whether the armed allocation was reached. */
static bool disarm(struct sweep *s)
{
        __atomic_store_n(&s->control->armed, 0, __ATOMIC_RELEASE);
        return __atomic_load_n(&s->control->failed, __ATOMIC_ACQUIRE) != 0;
}

/* The call of c, failing its fail_at-th allocation (0: none); the reply. */
static json_object *run_case(struct sweep *s, const struct method_case *c, uint64_t fail_at,
                             bool *ret_reached)
{
        char call[1024];
        char buf[1 << 16];

        if (c->prepare)
                c->prepare(s->fd, call, sizeof(call));
        else
                snprintf(call, sizeof(call), "%s", c->call);
        if (fail_at > 0)
                arm(s, fail_at, 1);
        raw_send(s->fd, call, strlen(call) + 1);
        long n = raw_recv(s->fd, buf, sizeof(buf), WIRE_TIMEOUT_MS);
        *ret_reached = fail_at > 0 && disarm(s);
        if (n < 0)
                fail_msg("%s, allocation %" PRIu64 ": %s", c->name, fail_at,
                         n == -1 ? "the service closed the connection" : "no answer");
        json_object *reply = json_tokener_parse(buf);
        assert_non_null(reply);
        return reply;
}

static void sweep_case(struct sweep *s, const struct method_case *c)
{
        bool reached;
        unsigned busy = 0, n;

        json_object *reference = run_case(s, c, 0, &reached);
        remove_sweep_timers(s->fd);
        for (n = 1; n < MAX_ALLOC; n++) {
                json_object *reply = run_case(s, c, n, &reached);
                const char *error = wire_error(reply), *expected = wire_error(reference);

                if (error && strcmp(error, BUSY) == 0)
                        busy++;
                else if ((error == NULL) != (expected == NULL) ||
                         (error && strcmp(error, expected) != 0) ||
                         !same_shape(parameters_of(reply), parameters_of(reference)))
                        fail_msg("%s, allocation %u failed: answered %s, untouched %s", c->name, n,
                                 json_object_to_json_string(reply),
                                 json_object_to_json_string(reference));
                json_object_put(reply);
                check_registry(s->fd, c->name, n);
                remove_sweep_timers(s->fd);
                if (!reached)
                        break;
        }
        assert_true(n < MAX_ALLOC);
        print_message("%-28s %4u allocations, %4u answered Busy\n", c->name, n - 1, busy);
        json_object_put(reference);
}

static int setup(void **state)
{
        struct sweep *s = calloc(1, sizeof(*s));
        const char *shim = getenv("TIMERD_FAILMALLOC");

        assert_non_null(s);
        assert_non_null(shim);
        snprintf(s->control_path, sizeof(s->control_path), "/tmp/timerd-sweep-XXXXXX");
        int fd = mkstemp(s->control_path);
        assert_true(fd >= 0);
        assert_int_equal(ftruncate(fd, sizeof(*s->control)), 0);
        s->control = mmap(NULL, sizeof(*s->control), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        assert_true(s->control != MAP_FAILED);
        close(fd);

        /* Sanitized, the shim comes before the sanitizer's runtime, which would refuse that. */
        const char *asan = getenv("ASAN_OPTIONS");
        char *asan_saved = asan ? strdup(asan) : NULL, *asan_shim = NULL;
        assert_true(asprintf(&asan_shim, "%s%sverify_asan_link_order=0", asan ? asan : "",
                             asan ? ":" : "") > 0);

        assert_int_equal(setenv("TIMERD_FAILMALLOC_CONTROL", s->control_path, 1), 0);
        assert_int_equal(setenv("ASAN_OPTIONS", asan_shim, 1), 0);
        assert_int_equal(setenv("LD_PRELOAD", shim, 1), 0);
        void *h = NULL;
        int r = harness_setup(&h);
        assert_int_equal(unsetenv("LD_PRELOAD"), 0);
        assert_int_equal(unsetenv("TIMERD_FAILMALLOC_CONTROL"), 0);
        if (asan_saved)
                assert_int_equal(setenv("ASAN_OPTIONS", asan_saved, 1), 0);
        else
                assert_int_equal(unsetenv("ASAN_OPTIONS"), 0);
        free(asan_saved);
        free(asan_shim);
        s->h = h;
        *state = s;
        return r;
}

static int teardown(void **state)
{
        struct sweep *s = *state;
        void *h = s->h;

        munmap(s->control, sizeof(*s->control));
        unlink(s->control_path);
        free(s);
        return harness_teardown(&h);
}

static void test_every_allocation_of_every_method(void **state)
{
        struct sweep *s = *state;

        s->fd = harness_raw_connect(s->h);
        /* Timers that are there throughout, retained: they must survive it all. */
        reg(s->fd, "kept", RETAINED, "");
        reg(s->fd, "kept-calendar",
            "{\"policy\":\"calendar\",\"calendar\":[\"*-*-* 05:00\"],"
            "\"lifetime\":\"retained\"}",
            "");
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                sweep_case(s, &cases[i]);
        check_registry(s->fd, "the end", 0);
        close(s->fd);

        /* The journal holds what the registry held: the kept timers, nothing of the sweep. */
        harness_restart(s->h, NULL);
        s->fd = harness_raw_connect(s->h);
        json_object *list = wire_call(s->fd, "{\"method\":\"io.timerd.Timer.List\"}");
        json_object *timers;
        assert_true(json_object_object_get_ex(parameters_of(list), "timers", &timers));
        assert_int_equal(json_object_array_length(timers), 2);
        json_object_put(list);
        check_registry(s->fd, "after a restart", 0);
        close(s->fd);
}

/* The first calls made on a new connection: the one answered from a tree, the one written in
 * place, and one that changes the registry. */
static const char *const first_calls[] = {
    CALL("org.varlink.service.GetInfo", "{}"),
    CALL("io.timerd.Service.Status", "{}"),
    /* Replacing the one the last case's connection may still hold. */
    CALL("io.timerd.Timer.Register",
         "{\"name\":\"sweep\",\"replace\":true,\"declaration\":" ONCE "}"),
};

/*
 * A new connection whose accept and first call meet span failed allocations from the n-th on
 * (counted from the connect): the call is answered or the connection closed, never left hanging.
 * Whether the n-th allocation was reached.
 */
static bool first_call_case(struct sweep *s, const char *call, uint64_t n, uint64_t span)
{
        char buf[1 << 16];

        arm(s, n, span);
        int fd = harness_raw_connect(s->h);
        /* Refused at once (the accept failed): the close is the answer. */
        (void)!send(fd, call, strlen(call) + 1, MSG_NOSIGNAL);
        long r = raw_recv_reply(fd, buf, sizeof(buf), WIRE_TIMEOUT_MS);
        bool reached = disarm(s);
        if (r == -2)
                fail_msg("%s, allocations %" PRIu64 "+%" PRIu64 " failed: the call was left "
                         "unanswered",
                         call, n, span);
        close(fd);
        return reached;
}

/* Connections until Status counts only the sweep's own (the closes are seen in their time). */
static void check_connections_closed(struct sweep *s)
{
        /* 10 ms apart: far more than a loaded machine takes to see them. */
        for (int polls = 0;; polls++) {
                json_object *st = wire_call(s->fd, "{\"method\":\"io.timerd.Service.Status\"}");
                int64_t connections = wire_int(st, "connections");
                json_object_put(st);
                if (connections == 1)
                        return;
                if (polls == 3000)
                        fail_msg("%" PRId64 " connections left, 1 expected", connections);
                usleep(10 * 1000);
        }
}

static void test_every_allocation_of_a_new_connection(void **state)
{
        struct sweep *s = *state;

        s->fd = harness_raw_connect(s->h);
        /* Started up (the socket is there before the journal is read) and in its loop. */
        json_object_put(wire_call(s->fd, "{\"method\":\"org.varlink.service.GetInfo\"}"));
        /* One failure; two in a row, the second failing the Busy that answers the first; three. */
        for (size_t i = 0; i < sizeof(first_calls) / sizeof(first_calls[0]); i++)
                for (uint64_t span = 1; span <= 3; span++) {
                        uint64_t n = 1;
                        while (first_call_case(s, first_calls[i], n, span) && n < MAX_ALLOC) {
                                /* The next connection is taken and answered: no connection slot,
                                 * watch or wake-up of the listening socket was lost. */
                                int next = harness_raw_connect(s->h);
                                json_object_put(wire_call(
                                    next, "{\"method\":\"org.varlink.service.GetInfo\"}"));
                                close(next);
                                n++;
                        }
                        assert_true(n < MAX_ALLOC);
                        print_message("first call %.40s…, %" PRIu64 " failing: %" PRIu64
                                      " allocations\n",
                                      first_calls[i], span, n - 1);
                }
        check_connections_closed(s);
        check_registry(s->fd, "new connections", 0);
        close(s->fd);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_every_allocation_of_every_method, setup, teardown),
            cmocka_unit_test_setup_teardown(test_every_allocation_of_a_new_connection, setup,
                                            teardown),
        };
        return cmocka_run_group_tests_name(harness_backend(), tests, NULL, NULL);
}
