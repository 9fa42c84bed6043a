/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Varlink on the wire against the real timerd: framing, pipelining, oneway, more, bad input. */

#include <json-c/json.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "varlink/idl.h"
#include "varlink/utf8.h"

#define TIMEOUT_MS 5000

static int setup(void **state)
{
        static const char *const args[] = {"--max-message=1024", NULL};
        return harness_setup_with(state, args);
}

static void send_msg(int fd, const char *json)
{
        raw_send(fd, json, strlen(json) + 1);
}

/* Receive one reply and return it parsed (caller puts it). Every byte of it is valid UTF-8. */
static json_object *recv_json(int fd)
{
        char buf[65536];
        long n = raw_recv(fd, buf, sizeof(buf), TIMEOUT_MS);
        assert_true(n >= 0);
        assert_true(vl_json_text_valid(buf, (size_t)n));
        json_object *o = json_tokener_parse(buf);
        assert_non_null(o);
        return o;
}

static const char *error_of(json_object *reply)
{
        json_object *e;
        return json_object_object_get_ex(reply, "error", &e) ? json_object_get_string(e) : NULL;
}

static void expect_error(int fd, const char *name)
{
        json_object *r = recv_json(fd);
        assert_non_null(error_of(r));
        assert_string_equal(error_of(r), name);
        json_object_put(r);
}

static json_object *expect_reply(int fd)
{
        json_object *r = recv_json(fd), *params;
        assert_null(error_of(r));
        assert_true(json_object_object_get_ex(r, "parameters", &params));
        json_object_get(params);
        json_object_put(r);
        return params;
}

static void test_get_info_lists_interfaces(void **state)
{
        int fd = harness_raw_connect(*state);
        send_msg(fd, "{\"method\":\"org.varlink.service.GetInfo\"}");
        json_object *p = expect_reply(fd), *interfaces;
        assert_true(json_object_object_get_ex(p, "interfaces", &interfaces));
        const char *text = json_object_to_json_string(interfaces);
        assert_non_null(strstr(text, "io.timerd.Timer"));
        assert_non_null(strstr(text, "io.timerd.Service"));
        assert_non_null(strstr(text, "org.varlink.service"));
        json_object_put(p);

        send_msg(fd, "{\"method\":\"org.varlink.service.GetInterfaceDescription\","
                     "\"parameters\":{\"interface\":\"io.timerd.Timer\"}}");
        p = expect_reply(fd);
        json_object *desc;
        assert_true(json_object_object_get_ex(p, "description", &desc));
        assert_non_null(strstr(json_object_get_string(desc), "interface io.timerd.Timer"));
        json_object_put(p);

        send_msg(fd, "{\"method\":\"org.varlink.service.GetInterfaceDescription\","
                     "\"parameters\":{\"interface\":\"com.example.None\"}}");
        expect_error(fd, "org.varlink.service.InterfaceNotFound");
        close(fd);
}

static void test_split_and_pipelined_messages(void **state)
{
        int fd = harness_raw_connect(*state);
        const char *call =
            "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"none\"}}";

        /* One message in three writes. */
        size_t len = strlen(call) + 1;
        raw_send(fd, call, 10);
        usleep(20000);
        raw_send(fd, call + 10, 20);
        usleep(20000);
        raw_send(fd, call + 30, len - 30);
        expect_error(fd, "io.timerd.Timer.NotFound");

        /* Three calls in one write are answered in order. */
        char batch[1024];
        int n =
            snprintf(batch, sizeof(batch), "%s%c%s%c%s%c",
                     "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":\"p1\","
                     "\"declaration\":{\"policy\":\"once\"}}}",
                     0, "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"p1\"}}", 0,
                     "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"p2\"}}", 0);
        raw_send(fd, batch, (size_t)n);
        json_object *p = expect_reply(fd), *claim;
        assert_true(json_object_object_get_ex(p, "claim", &claim));
        json_object_put(p);
        p = expect_reply(fd);
        json_object *timer;
        assert_true(json_object_object_get_ex(p, "timer", &timer));
        json_object_put(p);
        expect_error(fd, "io.timerd.Timer.NotFound");
        close(fd);
}

/* Replies are written once per loop iteration, many at a time: they still come whole and in
 * the order of the calls, also when they outgrow what the socket takes at once. */
static void test_many_pipelined_calls_answered_in_order(void **state)
{
        enum { N_CALLS = 2000 };
        int fd = harness_raw_connect(*state);
        size_t size = N_CALLS * 128, len = 0;
        char *batch = malloc(size);
        assert_non_null(batch);

        for (int i = 0; i < N_CALLS; i++) {
                int n = snprintf(batch + len, size - len,
                                 "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{"
                                 "\"name\":\"order%d\",\"declaration\":{\"policy\":\"once\"}}}",
                                 i);
                assert_true(n > 0 && (size_t)n < size - len);
                len += (size_t)n + 1;
        }
        raw_send(fd, batch, len);
        free(batch);

        for (int i = 0; i < N_CALLS; i++) {
                json_object *p = expect_reply(fd), *claim, *name;
                char expected[32];
                snprintf(expected, sizeof(expected), "order%d", i);
                assert_true(json_object_object_get_ex(p, "claim", &claim));
                assert_true(json_object_object_get_ex(claim, "name", &name));
                assert_string_equal(json_object_get_string(name), expected);
                json_object_put(p);
        }
        close(fd);
}

/* A client that sends its calls and shuts down its write side at once still gets every reply,
 * whole, before the service hangs up: the replies leave before the connection is closed. */
static void test_replies_before_a_hang_up_arrive(void **state)
{
        for (int calls = 1; calls <= 3; calls++) {
                int fd = harness_raw_connect(*state);
                char buf[65536];

                for (int i = 0; i < calls; i++)
                        send_msg(fd, "{\"method\":\"org.varlink.service.GetInfo\"}");
                assert_int_equal(shutdown(fd, SHUT_WR), 0);
                for (int i = 0; i < calls; i++)
                        json_object_put(expect_reply(fd));
                assert_int_equal(raw_recv(fd, buf, sizeof(buf), TIMEOUT_MS), -1);
                close(fd);
        }
}

static void test_oneway_gets_no_reply(void **state)
{
        int fd = harness_raw_connect(*state);
        send_msg(fd, "{\"method\":\"io.timerd.Timer.Register\",\"oneway\":true,\"parameters\":"
                     "{\"name\":\"quiet\",\"declaration\":{\"policy\":\"once\"}}}");
        send_msg(fd, "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"quiet\"}}");
        /* The first reply on the wire is Get's: the oneway call was done and not answered. */
        json_object *p = expect_reply(fd), *timer;
        assert_true(json_object_object_get_ex(p, "timer", &timer));
        json_object_put(p);
        close(fd);
}

static void test_bad_messages_get_typed_errors(void **state)
{
        int fd = harness_raw_connect(*state);

        send_msg(fd, "this is not json");
        expect_error(fd, "io.timerd.Timer.InvalidMessage");
        send_msg(fd, "{\"parameters\":{}}");
        expect_error(fd, "io.timerd.Timer.InvalidMessage");
        send_msg(fd, "{\"method\":42}");
        expect_error(fd, "io.timerd.Timer.InvalidMessage");
        send_msg(
            fd, "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]");
        expect_error(fd, "io.timerd.Timer.InvalidMessage");
        send_msg(fd, "{\"method\":\"io.timerd.Timer.Unknown\"}");
        expect_error(fd, "org.varlink.service.MethodNotFound");
        send_msg(fd, "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":[]}}");
        expect_error(fd, "org.varlink.service.InvalidParameter");
        send_msg(fd, "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{}}");
        expect_error(fd, "org.varlink.service.InvalidParameter");
        /* The connection still works after all of that. */
        send_msg(fd, "{\"method\":\"io.timerd.Service.Status\"}");
        json_object_put(expect_reply(fd));
        close(fd);
}

static uint64_t timer_count(int fd)
{
        send_msg(fd, "{\"method\":\"io.timerd.Service.Status\"}");
        json_object *p = expect_reply(fd), *timers;
        assert_true(json_object_object_get_ex(p, "timers", &timers));
        uint64_t n = json_object_get_uint64(timers);
        json_object_put(p);
        return n;
}

/* Input that is not valid UTF-8 (RFC 3629: overlong forms, surrogates, above U+10FFFF, cut short,
 * a lone surrogate escape) is refused as a message, and no error reply echoes what failed
 * validation: its parameters are exactly the expected ones, which name the parameter. */
static void test_invalid_text_refused_and_never_echoed(void **state)
{
        static const struct {
                const char *call;
                const char *error;
                const char *parameters;
        } cases[] = {
#define REGISTER(name)                                                                             \
        "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":\"" name                \
        "\",\"declaration\":{\"policy\":\"once\"}}}"
#define NOT_UTF8 "io.timerd.Timer.InvalidMessage", "{\"reason\":\"not valid UTF-8\"}"
#define NOT_CALL "io.timerd.Timer.InvalidMessage", "{\"reason\":\"not a varlink call\"}"
            {REGISTER("a\xc0\xaf"
                      "b"),
             NOT_UTF8},
            {REGISTER("a\xe0\x80\xaf"), NOT_UTF8},
            {REGISTER("a\xed\xa0\x80"), NOT_UTF8},
            {REGISTER("a\xf4\x90\x80\x80"), NOT_UTF8},
            {REGISTER("a\xc3"), NOT_UTF8},
            {REGISTER("a\\ud800b"), NOT_UTF8},
            {REGISTER("a\\udc00"), NOT_UTF8},
            {"{\"method\":\"io.timerd.Timer.Get\xc0\xaf\"}", NOT_UTF8},
            {"{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"\xff\":1}}", NOT_UTF8},
            {REGISTER("a\\u0000b"), "io.timerd.Timer.InvalidName", "{\"parameter\":\"name\"}"},
            {REGISTER("\xc3\xa4"), "io.timerd.Timer.InvalidName", "{\"parameter\":\"name\"}"},
            {"{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"a b\"}}",
             "io.timerd.Timer.InvalidName", "{\"parameter\":\"name\"}"},
            {"{\"method\":\"io.timerd.Timer.Cancel\",\"parameters\":{\"claim\":{\"name\":"
             "\"a\\u0000b\",\"generation\":1}}}",
             "io.timerd.Timer.InvalidName", "{\"parameter\":\"claim.name\"}"},
            {"{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":{\"names\":[\"ok\",\"a\\u0000b\"]"
             "}}",
             "io.timerd.Timer.InvalidName", "{\"parameter\":\"names[1]\"}"},
            {"{\"method\":\"io.timerd.Timer.Get Now\"}", NOT_CALL},
            {"{\"method\":\"nodots\"}", NOT_CALL},
            {"{\"method\":\"io.timerd.Timer.\\u00e4\"}", NOT_CALL},
            {"{\"method\":\"io.timerd.Timer.Get\\u0000x\"}", NOT_CALL},
            {"{\"method\":\"org.varlink.service.GetInterfaceDescription\",\"parameters\":{"
             "\"interface\":\"a\\u0000b\"}}",
             "org.varlink.service.InvalidParameter", "{\"parameter\":\"interface\"}"},
            {"{\"method\":\"org.varlink.service.GetInterfaceDescription\",\"parameters\":{"
             "\"interface\":\"\\u00e4.b\"}}",
             "org.varlink.service.InvalidParameter", "{\"parameter\":\"interface\"}"},
            /* Well-formed names are echoed. */
            {"{\"method\":\"io.timerd.Timer.Nope\"}", "org.varlink.service.MethodNotFound",
             "{\"method\":\"io.timerd.Timer.Nope\"}"},
            {"{\"method\":\"com.example.Nope\"}", "org.varlink.service.InterfaceNotFound",
             "{\"interface\":\"com.example\"}"},
#undef REGISTER
#undef NOT_UTF8
#undef NOT_CALL
        };
        int fd = harness_raw_connect(*state);
        uint64_t timers = timer_count(fd);

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                json_object *r, *params;

                send_msg(fd, cases[i].call);
                r = recv_json(fd);
                assert_non_null(error_of(r));
                assert_string_equal(error_of(r), cases[i].error);
                assert_true(json_object_object_get_ex(r, "parameters", &params));
                assert_string_equal(json_object_to_json_string_ext(params, JSON_C_TO_STRING_PLAIN),
                                    cases[i].parameters);
                json_object_put(r);
        }
        /* Nothing was registered, and the connection still works. */
        assert_int_equal(timer_count(fd), timers);
        close(fd);
}

/* InvalidParameter naming `parameter`. */
static void expect_invalid_parameter(int fd, const char *parameter)
{
        json_object *r = recv_json(fd), *params, *name;
        assert_non_null(error_of(r));
        assert_string_equal(error_of(r), "org.varlink.service.InvalidParameter");
        assert_true(json_object_object_get_ex(r, "parameters", &params));
        assert_true(json_object_object_get_ex(params, "parameter", &name));
        assert_string_equal(json_object_get_string(name), parameter);
        json_object_put(r);
}

/* A field the IDL does not declare, at any level of any method, is refused by name: a client's
 * typo or a field of another version is never silently ignored. */
static void test_unknown_fields_are_refused_by_name(void **state)
{
        static const struct {
                const char *method, *parameters, *refused;
        } calls[] = {
            {"org.varlink.service.GetInfo", "{\"frobnicate\":1}", "frobnicate"},
            {"org.varlink.service.GetInterfaceDescription",
             "{\"interface\":\"io.timerd.Timer\",\"frobnicate\":1}", "frobnicate"},
            {"io.timerd.Service.Status", "{\"frobnicate\":1}", "frobnicate"},
            {"io.timerd.Service.Subscribe", "{\"all\":false,\"frobnicate\":1}", "frobnicate"},
            {"io.timerd.Timer.Register",
             "{\"name\":\"u\",\"declaration\":{\"policy\":\"once\"},\"frobnicate\":1}",
             "frobnicate"},
            {"io.timerd.Timer.Register",
             "{\"name\":\"u\",\"declaration\":{\"policy\":\"once\",\"frobnicate\":1}}",
             "declaration.frobnicate"},
            {"io.timerd.Timer.Reconcile",
             "{\"name\":\"u\",\"desired\":\"inactive\",\"declaration\":{\"policy\":"
             "\"once\",\"frobnicate\":{\"deeper\":1}}}",
             "declaration.frobnicate"},
            {"io.timerd.Timer.Schedule",
             "{\"claim\":{\"name\":\"known\",\"generation\":%llu,\"frobnicate\":1},"
             "\"delay_usec\":1}",
             "claim.frobnicate"},
            {"io.timerd.Timer.Reschedule",
             "{\"token\":{\"name\":\"known\",\"generation\":%llu,\"run\":1,\"x\":1}}", "token.x"},
            {"io.timerd.Timer.Cancel",
             "{\"claim\":{\"name\":\"known\",\"generation\":%llu},"
             "\"frobnicate\":1}",
             "frobnicate"},
            {"io.timerd.Timer.Kick",
             "{\"claim\":{\"name\":\"known\",\"generation\":%llu},"
             "\"force\":true}",
             "force"},
            /* A run token is no claim: Unregister takes neither the token nor its run. */
            {"io.timerd.Timer.Unregister",
             "{\"token\":{\"name\":\"known\",\"generation\":%llu,"
             "\"run\":1}}",
             "token"},
            {"io.timerd.Timer.Unregister",
             "{\"claim\":{\"name\":\"known\",\"generation\":%llu,\"run\":1}}", "claim.run"},
            {"io.timerd.Timer.Get", "{\"name\":\"known\",\"frobnicate\":1}", "frobnicate"},
            {"io.timerd.Timer.List", "{\"after\":{\"owner\":0,\"name\":\"a\",\"x\":1}}", "after.x"},
            {"io.timerd.Timer.Wait", "{\"names\":[\"known\"],\"timeout_usec\":1,\"x\":1}", "x"},
            {"io.timerd.Timer.Complete",
             "{\"token\":{\"name\":\"known\",\"generation\":%llu,\"run\":1},\"outcome\":"
             "\"success\",\"frobnicate\":1}",
             "frobnicate"},
            {"io.timerd.Timer.Sleep", "{\"for_usec\":1,\"frobnicate\":1}", "frobnicate"},
            {"io.timerd.Timer.Finish",
             "{\"continuation\":{\"epoch\":1,\"nonce\":1,\"cycle\":1,\"x\":1},\"lease\":1,"
             "\"action\":\"interrupt\"}",
             "continuation.x"},
            {"io.timerd.Timer.Resume",
             "{\"ticket\":{\"continuation\":{\"epoch\":1,\"nonce\":1,\"cycle\":1,\"x\":1},"
             "\"nonce\":1}}",
             "ticket.continuation.x"},
        };
        int fd = harness_raw_connect(*state);
        char msg[1024], parameters[512];

        send_msg(fd, "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":"
                     "\"known\",\"declaration\":{\"policy\":\"interval\","
                     "\"cadence_usec\":3600000000}}}");
        json_object *p = expect_reply(fd), *claim, *generation;
        assert_true(json_object_object_get_ex(p, "claim", &claim));
        assert_true(json_object_object_get_ex(claim, "generation", &generation));
        unsigned long long known = (unsigned long long)json_object_get_int64(generation);
        json_object_put(p);
        /* With the right generation, each call would do something were the field ignored. */
        for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
                snprintf(parameters, sizeof(parameters), calls[i].parameters, known);
                snprintf(msg, sizeof(msg), "{\"method\":\"%s\",\"parameters\":%s}", calls[i].method,
                         parameters);
                send_msg(fd, msg);
                expect_invalid_parameter(fd, calls[i].refused);
        }
        /* Nothing was done: no timer u, and known is still scheduled, not unregistered. */
        send_msg(fd, "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"u\"}}");
        expect_error(fd, "io.timerd.Timer.NotFound");
        send_msg(fd, "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"known\"}}");
        p = expect_reply(fd);
        json_object *timer, *state_field;
        assert_true(json_object_object_get_ex(p, "timer", &timer));
        assert_true(json_object_object_get_ex(timer, "state", &state_field));
        assert_string_equal(json_object_get_string(state_field), "scheduled");
        json_object_put(p);
        close(fd);
}

/* An error whose parameters are {field: value}. */
static void expect_error_naming(int fd, const char *error, const char *field, const char *value)
{
        json_object *r = recv_json(fd), *params, *v;

        assert_non_null(error_of(r));
        assert_string_equal(error_of(r), error);
        assert_true(json_object_object_get_ex(r, "parameters", &params));
        assert_true(json_object_object_get_ex(params, field, &v));
        assert_string_equal(json_object_get_string(v), value);
        json_object_put(r);
}

/* Every method of the IDL is taken as itself (its own parameters checked: an unknown field is
 * refused by name before it does anything), io.timerd.Test's only on a virtual instance; a name
 * one byte longer or shorter than a method's is no method. */
static void test_every_idl_method_is_dispatched_as_itself(void **state)
{
        int fd = harness_raw_connect(*state);
        char msg[512], name[160];

        for (size_t i = 0; i < _VL_IDL_METHOD_MAX; i++) {
                const struct vl_idl_method *m = &vl_idl_methods[i];
                bool test = m->interface == VL_IDL_IO_TIMERD_TEST;

                snprintf(msg, sizeof(msg), "{\"method\":\"%s\",\"parameters\":{\"frobnicate\":1}}",
                         m->name);
                send_msg(fd, msg);
                if (test)
                        expect_error_naming(fd, "org.varlink.service.InterfaceNotFound",
                                            "interface", "io.timerd.Test");
                else
                        expect_invalid_parameter(fd, "frobnicate");
                /* Longer, then shorter (a shorter one that is a method is left to the loop). */
                for (int cut = -1; cut <= 1; cut += 2) {
                        snprintf(name, sizeof(name), "%s%s", m->name, cut < 0 ? "X" : "");
                        if (cut > 0)
                                name[m->len - 1] = 0;
                        if (vl_idl_method_find(name, strlen(name)))
                                continue;
                        snprintf(msg, sizeof(msg), "{\"method\":\"%s\"}", name);
                        send_msg(fd, msg);
                        if (test)
                                expect_error_naming(fd, "org.varlink.service.InterfaceNotFound",
                                                    "interface", "io.timerd.Test");
                        else
                                expect_error_naming(fd, "org.varlink.service.MethodNotFound",
                                                    "method", name);
                }
        }
        close(fd);
}

/* Parameters read as a tree of the call reads them: of duplicate keys the last counts (also for
 * the IDL's check, which sees only that one), escapes in keys and values are unescaped, a null is
 * absent, and an unknown field is refused even when null or shadowed. */
static void test_parameters_read_as_a_tree_reads_them(void **state)
{
        int fd = harness_raw_connect(*state);
        json_object *p, *timer, *declaration, *policy;

        /* The first name is no name and the first declaration has an unknown field: both lose. */
        send_msg(fd, "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":"
                     "\"no name!\",\"declaration\":{\"policy\":\"once\",\"x\":1},\"n\\u0061me\":"
                     "\"d\\u0075p\",\"owner\":null,\"declaration\":{\"policy\":\"interval\","
                     "\"cadence_usec\":99999999999999999999,\"cadence_usec\":3600000000}}}");
        json_object_put(expect_reply(fd));
        send_msg(fd, "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"dup\"}}");
        p = expect_reply(fd);
        assert_true(json_object_object_get_ex(p, "timer", &timer));
        assert_true(json_object_object_get_ex(timer, "declaration", &declaration));
        assert_true(json_object_object_get_ex(declaration, "policy", &policy));
        assert_string_equal(json_object_get_string(policy), "interval");
        json_object_put(p);
        /* The last of two ints is checked against int64, and only it. */
        send_msg(fd, "{\"method\":\"io.timerd.Timer.List\",\"parameters\":{\"limit\":1,"
                     "\"limit\":99999999999999999999}}");
        expect_invalid_parameter(fd, "limit");
        /* Unknown fields, by their unescaped name, whatever they hold, at any depth. */
        send_msg(fd, "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"dup\","
                     "\"fr\\u006fb\":null}}");
        expect_invalid_parameter(fd, "frob");
        send_msg(fd, "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":\"n\","
                     "\"declaration\":{\"policy\":\"once\"},\"declaration\":{\"policy\":"
                     "\"once\",\"x\":{\"y\":1}}}}");
        expect_invalid_parameter(fd, "declaration.x");
        /* Of several faults the first in the order of first keys is named: a field's value (its
         * last) where its first key comes before the first unknown key. */
        static const struct {
                const char *parameters, *refused;
        } order[] = {
            {"{\"limit\":99999999999999999999,\"x\":1}", "limit"},
            {"{\"x\":1,\"limit\":99999999999999999999}", "x"},
            {"{\"limit\":1,\"x\":1,\"limit\":99999999999999999999}", "limit"},
            {"{\"after\":{\"owner\":0,\"name\":\"a\",\"y\":1},\"x\":1,\"y\":2}", "after.y"},
            {"{\"all\":true,\"y\":1,\"x\":1}", "y"},
        };
        for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
                char msg[256];

                snprintf(msg, sizeof(msg),
                         "{\"method\":\"io.timerd.Timer.List\",\"parameters\":%s}",
                         order[i].parameters);
                send_msg(fd, msg);
                expect_invalid_parameter(fd, order[i].refused);
        }
        /* A null declaration is none. */
        send_msg(fd, "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":\"n\","
                     "\"declaration\":null}}");
        expect_invalid_parameter(fd, "declaration");
        close(fd);
}

/* The declaration Get reports for timer `name`, field `field` of it as a string ("" when absent).
 */
static char *declared(int fd, const char *name, const char *field)
{
        char msg[128];
        json_object *p, *timer, *declaration, *v;
        char *text;

        snprintf(msg, sizeof(msg),
                 "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"%s\"}}", name);
        send_msg(fd, msg);
        p = expect_reply(fd);
        assert_true(json_object_object_get_ex(p, "timer", &timer));
        assert_true(json_object_object_get_ex(timer, "declaration", &declaration));
        text = strdup(json_object_object_get_ex(declaration, field, &v) ? json_object_get_string(v)
                                                                        : "");
        assert_non_null(text);
        json_object_put(p);
        return text;
}

static void expect_declared(int fd, const char *name, const char *field, const char *value)
{
        char *text = declared(fd, name, field);

        assert_string_equal(text, value);
        free(text);
}

/*
 * The handlers read each field from the map the IDL check made of the call: of a key given twice
 * the last counts whatever type the first had, at the top and inside a struct; a struct given
 * twice is read from the last alone, nothing of the first one's fields leaking into it; an
 * optional field absent or null in a nested struct is its default; a required one absent in a
 * nested struct is named.
 */
static void test_fields_are_read_from_the_check(void **state)
{
        int fd = harness_raw_connect(*state);

        /* The first name and policy are of the wrong type, the first cadence is a string, the last
         * clock is null: the first declaration's boottime clock does not count either. */
        send_msg(fd, "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":5,"
                     "\"name\":\"fx-a\",\"declaration\":{\"policy\":\"once\",\"clock\":"
                     "\"boottime\"},\"declaration\":{\"policy\":7,\"policy\":\"interval\","
                     "\"cadence_usec\":\"x\",\"cadence_usec\":3600000000,\"clock\":\"realtime\","
                     "\"clock\":null},\"replace\":\"no\",\"replace\":false}}");
        json_object_put(expect_reply(fd));
        expect_declared(fd, "fx-a", "policy", "interval");
        expect_declared(fd, "fx-a", "clock", "monotonic");
        expect_declared(fd, "fx-a", "cadence_usec", "3600000000");
        /* The first declaration's calendar would make the second's once policy InvalidSchedule. */
        send_msg(fd, "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":\"fx-b\","
                     "\"declaration\":{\"policy\":\"calendar\",\"calendar\":[\"daily\"],"
                     "\"timezone\":\"UTC\"},\"declaration\":{\"policy\":\"once\"}}}");
        json_object_put(expect_reply(fd));
        expect_declared(fd, "fx-b", "policy", "once");
        expect_declared(fd, "fx-b", "calendar", "");
        /* The last of two keys of different types is the one read, and refused. */
        static const struct {
                const char *method, *parameters, *refused;
        } last[] = {
            {"Register", "{\"name\":\"fx-c\",\"declaration\":{\"policy\":\"once\",\"policy\":7}}",
             "declaration.policy"},
            {"Register",
             "{\"name\":\"fx-c\",\"declaration\":{\"policy\":\"once\"},\"replace\":true,"
             "\"replace\":\"yes\"}",
             "replace"},
            {"Register",
             "{\"name\":\"fx-c\",\"declaration\":{\"policy\":\"once\",\"catch_up\":true,"
             "\"catch_up\":1}}",
             "declaration.catch_up"},
            {"Cancel", "{\"claim\":{\"name\":\"fx-a\",\"generation\":1,\"generation\":\"1\"}}",
             "claim.generation"},
            {"List", "{\"after\":{\"owner\":0,\"name\":\"a\"},\"after\":{\"owner\":0}}",
             "after.name"},
            {"List", "{\"after\":{\"owner\":0,\"name\":\"a\",\"name\":null}}", "after.name"},
        };
        for (size_t i = 0; i < sizeof(last) / sizeof(last[0]); i++) {
                char msg[256];

                snprintf(msg, sizeof(msg), "{\"method\":\"io.timerd.Timer.%s\",\"parameters\":%s}",
                         last[i].method, last[i].parameters);
                send_msg(fd, msg);
                expect_invalid_parameter(fd, last[i].refused);
        }
        send_msg(fd, "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"fx-c\"}}");
        expect_error(fd, "io.timerd.Timer.NotFound");
        close(fd);
}

/* An unknown field is refused whatever it holds: 30,000 elements are not skipped over. */
static void test_large_unknown_array_is_refused(void **state)
{
        enum { N = 30000 };
        static const char head[] = "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{"
                                   "\"name\":\"big\",\"declaration\":{\"policy\":\"once\"},"
                                   "\"frobnicate\":[";
        size_t size = sizeof(head) + 2 * N + 8, len = sizeof(head) - 1;
        char *msg = malloc(size);
        int fd = harness_raw_connect(*state);

        assert_non_null(msg);
        memcpy(msg, head, len);
        for (int i = 0; i < N; i++) {
                msg[len++] = '0';
                msg[len++] = i + 1 < N ? ',' : ']';
        }
        memcpy(msg + len, "}}", 3);
        send_msg(fd, msg);
        free(msg);
        expect_invalid_parameter(fd, "frobnicate");
        send_msg(fd, "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"big\"}}");
        expect_error(fd, "io.timerd.Timer.NotFound");
        close(fd);
}

static void test_oversize_message_is_refused_and_disconnected(void **state)
{
        int fd = harness_raw_connect(*state);
        char big[4096];
        memset(big, ' ', sizeof(big));
        raw_send(fd, big, sizeof(big));
        expect_error(fd, "io.timerd.Timer.RequestTooLarge");
        char buf[16];
        assert_int_equal(raw_recv(fd, buf, sizeof(buf), TIMEOUT_MS), -1);
        close(fd);

        /* Others are unaffected. */
        fd = harness_raw_connect(*state);
        send_msg(fd, "{\"method\":\"io.timerd.Service.Status\"}");
        json_object_put(expect_reply(fd));
        close(fd);
}

static void test_wait_with_more_streams(void **state)
{
        int fd = harness_raw_connect(*state);
        /* Three timers, each firing once: the stream hands over each firing as it comes. */
        for (int i = 1; i <= 3; i++) {
                char call[256];
                snprintf(call, sizeof(call),
                         "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":"
                         "\"rapid%d\",\"delay_usec\":%d,\"declaration\":{\"policy\":\"once\"}}}",
                         i, i * 20000);
                send_msg(fd, call);
                json_object_put(expect_reply(fd));
        }
        send_msg(fd, "{\"method\":\"io.timerd.Timer.Wait\",\"more\":true,\"parameters\":"
                     "{\"names\":[\"rapid1\",\"rapid2\",\"rapid3\"]}}");
        for (int i = 0; i < 3; i++) {
                json_object *r = recv_json(fd), *continues;
                assert_null(error_of(r));
                assert_true(json_object_object_get_ex(r, "continues", &continues));
                assert_true(json_object_get_boolean(continues));
                json_object_put(r);
        }
        close(fd);
}

static void test_disconnect_mid_call_is_harmless(void **state)
{
        for (int i = 0; i < 20; i++) {
                int fd = harness_raw_connect(*state);
                send_msg(fd, "{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":{}}");
                raw_send(fd, "{\"method\":\"io.timerd", 18);
                close(fd);
        }
        /* Every parked Wait of the vanished clients is retired. */
        int fd = harness_raw_connect(*state);
        int64_t waiters = -1;
        for (int i = 0; i < 500 && waiters != 0; i++) {
                send_msg(fd, "{\"method\":\"io.timerd.Service.Status\"}");
                json_object *p = expect_reply(fd), *w;
                assert_true(json_object_object_get_ex(p, "waiters", &w));
                waiters = json_object_get_int64(w);
                json_object_put(p);
                if (waiters != 0)
                        usleep(10000);
        }
        assert_int_equal(waiters, 0);
        close(fd);
}

static void test_subscribe_streams_events_of_others(void **state)
{
        int watcher = harness_raw_connect(*state);
        int actor = harness_raw_connect(*state);

        send_msg(watcher, "{\"method\":\"io.timerd.Service.Subscribe\"}");
        expect_error(watcher, "org.varlink.service.ExpectedMore");
        send_msg(watcher, "{\"method\":\"io.timerd.Service.Subscribe\",\"more\":true}");
        /* The subscription is in place once Status shows the watcher's call is taken. */
        usleep(100000);

        send_msg(actor, "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":"
                        "\"watched\",\"delay_usec\":1000,\"declaration\":{\"policy\":\"once\"}}}");
        json_object_put(expect_reply(actor));

        const char *expected[] = {"registered", "fired"};
        for (size_t i = 0; i < 2; i++) {
                json_object *r = recv_json(watcher), *params, *event, *kind, *name;
                assert_null(error_of(r));
                assert_true(json_object_object_get_ex(r, "parameters", &params));
                assert_true(json_object_object_get_ex(params, "event", &event));
                assert_true(json_object_object_get_ex(event, "kind", &kind));
                assert_true(json_object_object_get_ex(event, "name", &name));
                assert_string_equal(json_object_get_string(kind), expected[i]);
                assert_string_equal(json_object_get_string(name), "watched");
                json_object_put(r);
        }
        /* The actor leaves: its transient timer is announced as removed. */
        close(actor);
        json_object *r = recv_json(watcher);
        assert_non_null(strstr(json_object_to_json_string(r), "\"removed\""));
        json_object_put(r);
        close(watcher);
}

/* Messages off a socket a read at a time (raw_recv() reads a byte a syscall: too slow for
 * thousands). */
struct reader {
        int fd;
        char buf[1 << 16];
        size_t start, end;
};

/* The next whole message, parsed (caller puts it). */
static json_object *reader_next(struct reader *r)
{
        for (;;) {
                char *nul = memchr(r->buf + r->start, '\0', r->end - r->start);
                if (nul) {
                        json_object *o = json_tokener_parse(r->buf + r->start);
                        assert_non_null(o);
                        r->start = (size_t)(nul - r->buf) + 1;
                        return o;
                }
                memmove(r->buf, r->buf + r->start, r->end - r->start);
                r->end -= r->start;
                r->start = 0;
                assert_true(r->end < sizeof(r->buf));
                struct pollfd pfd = {.fd = r->fd, .events = POLLIN};
                assert_int_equal(poll(&pfd, 1, TIMEOUT_MS), 1);
                ssize_t n = recv(r->fd, r->buf + r->end, sizeof(r->buf) - r->end, 0);
                assert_true(n > 0);
                r->end += (size_t)n;
        }
}

static uint64_t param_u64(json_object *object, const char *key)
{
        json_object *v;
        assert_true(json_object_object_get_ex(object, key, &v));
        return (uint64_t)json_object_get_int64(v);
}

/* The event a Subscribe stream's message carries: its kind, name and time. */
static void event_of(json_object *message, const char **ret_kind, const char **ret_name,
                     uint64_t *ret_realtime)
{
        json_object *params, *event, *kind, *name;
        assert_null(error_of(message));
        assert_true(json_object_object_get_ex(message, "parameters", &params));
        assert_true(json_object_object_get_ex(params, "event", &event));
        assert_true(json_object_object_get_ex(event, "kind", &kind));
        assert_true(json_object_object_get_ex(event, "name", &name));
        *ret_kind = json_object_get_string(kind);
        *ret_name = json_object_get_string(name);
        *ret_realtime = param_u64(event, "realtime_usec");
}

static void register_msg(int fd, const char *name)
{
        char call[256];

        snprintf(call, sizeof(call),
                 "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":\"%s\","
                 "\"delay_usec\":3600000000,\"declaration\":{\"policy\":\"once\"},"
                 "\"replace\":true}}",
                 name);
        send_msg(fd, call);
}

/*
 * A connection holding many transient timers closes with a subscriber watching: every timer's
 * removal comes once, in the order they were registered, each stamped with the time of the close
 * (not of the step that freed it), a reap step at a time; another client's calls are answered
 * between the steps (Status: reap_steps grew while timers were still to free), and its events
 * come between the removals.
 */
static void test_subscribe_sees_a_mass_close_in_order(void **state)
{
        enum { N = 20000, BATCH = 500 };
        int actor = harness_raw_connect(*state), poller = harness_raw_connect(*state);
        struct reader *actor_in = calloc(1, sizeof(struct reader)),
                      *watch_in = calloc(1, sizeof(struct reader)),
                      *poll_in = calloc(1, sizeof(struct reader));
        const char *kind, *name;
        uint64_t realtime;
        char text[32];

        assert_non_null(actor_in);
        assert_non_null(watch_in);
        assert_non_null(poll_in);
        actor_in->fd = actor;
        poll_in->fd = poller;
        for (size_t i = 0; i < N; i += BATCH) {
                for (size_t j = i; j < i + BATCH; j++) {
                        snprintf(text, sizeof(text), "m%zu", j);
                        register_msg(actor, text);
                }
                for (size_t j = i; j < i + BATCH; j++) {
                        json_object *r = reader_next(actor_in);
                        assert_null(error_of(r));
                        json_object_put(r);
                }
        }
        int watcher = harness_raw_connect(*state);
        watch_in->fd = watcher;
        send_msg(watcher, "{\"method\":\"io.timerd.Service.Subscribe\",\"more\":true}");
        /* The subscription is in place once it sees the actor's next timer come: "probe", the
         * actor's last (registered again until seen, it stays the last). */
        for (bool placed = false; !placed;) {
                register_msg(actor, "probe");
                json_object_put(reader_next(actor_in));
                struct pollfd pfd = {.fd = watcher, .events = POLLIN};
                if (poll(&pfd, 1, 100) == 1) {
                        json_object *m = reader_next(watch_in);
                        event_of(m, &kind, &name, &realtime);
                        assert_string_equal(kind, "registered");
                        assert_string_equal(name, "probe");
                        json_object_put(m);
                        placed = true;
                }
        }

        send_msg(poller, "{\"method\":\"io.timerd.Service.Status\"}");
        json_object *r = reader_next(poll_in), *params;
        assert_true(json_object_object_get_ex(r, "parameters", &params));
        uint64_t steps_before = param_u64(params, "reap_steps");
        json_object_put(r);
        close(actor);
        /* A Register and a Status after another until the reap has stepped and nothing is left
         * to free. */
        size_t answered_between = 0, registered = 0;
        uint64_t steps = steps_before, reaping = 1;
        while (steps == steps_before || reaping > 0) {
                snprintf(text, sizeof(text), "x%zu", registered++);
                register_msg(poller, text);
                send_msg(poller, "{\"method\":\"io.timerd.Service.Status\"}");
                r = reader_next(poll_in);
                assert_null(error_of(r));
                json_object_put(r);
                r = reader_next(poll_in);
                assert_true(json_object_object_get_ex(r, "parameters", &params));
                steps = param_u64(params, "reap_steps");
                reaping = param_u64(params, "reaping");
                answered_between += steps > steps_before && reaping > 0;
                json_object_put(r);
                assert_true(registered < 1000000);
        }
        assert_true(steps - steps_before >= 2);
        assert_true(answered_between >= 1);

        /* Every removal once, in order; the poller's timers (registered after the close) come
         * between them and after. */
        size_t removed = 0, registered_seen = 0, registered_between = 0;
        uint64_t closed = 0, first_x = 0;
        while (removed < N + 1 || registered_seen < registered) {
                json_object *m = reader_next(watch_in);
                event_of(m, &kind, &name, &realtime);
                if (strcmp(kind, "registered") == 0) {
                        /* The probe as the wait above may have sent it again. */
                        if (name[0] == 'x') {
                                snprintf(text, sizeof(text), "x%zu", registered_seen++);
                                assert_string_equal(name, text);
                                /* After the close, though maybe before its first step. */
                                first_x = first_x ? first_x : realtime;
                                registered_between += removed > 0 && removed < N + 1;
                        } else
                                assert_true(strcmp(name, "probe") == 0 && removed == 0);
                        json_object_put(m);
                        continue;
                }
                assert_string_equal(kind, "removed");
                if (removed == 0)
                        closed = realtime;
                assert_int_equal(realtime, closed);
                if (removed < N)
                        snprintf(text, sizeof(text), "m%zu", removed);
                else
                        snprintf(text, sizeof(text), "probe");
                assert_string_equal(name, text);
                removed++;
                json_object_put(m);
        }
        assert_int_equal(removed, N + 1);
        assert_true(first_x >= closed);
        assert_true(registered_between >= 1);
        close(watcher);
        close(poller);
        free(poll_in);
        free(watch_in);
        free(actor_in);
}

/* Call method on the claim {name, generation}; its reply must be `reply`, byte for byte. */
static void expect_claim_call(int fd, const char *method, const char *name,
                              unsigned long long generation, const char *reply)
{
        char msg[256], buf[4096];

        snprintf(msg, sizeof(msg),
                 "{\"method\":\"io.timerd.Timer.%s\",\"parameters\":{\"claim\":{\"name\":\"%s\","
                 "\"generation\":%llu}}}",
                 method, name, generation);
        send_msg(fd, msg);
        assert_true(raw_recv_reply(fd, buf, sizeof(buf), TIMEOUT_MS) >= 0);
        assert_string_equal(buf, reply);
}

static unsigned long long registered(int fd, const char *name)
{
        char msg[256];

        snprintf(msg, sizeof(msg),
                 "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":\"%s\","
                 "\"declaration\":{\"policy\":\"once\"}}}",
                 name);
        send_msg(fd, msg);
        json_object *p = expect_reply(fd), *claim, *generation;
        assert_true(json_object_object_get_ex(p, "claim", &claim));
        assert_true(json_object_object_get_ex(claim, "generation", &generation));
        unsigned long long g = (unsigned long long)json_object_get_int64(generation);
        json_object_put(p);
        return g;
}

/* A claim on a name no timer has is NotFound, though the owner's history knows its generation;
 * on a name a timer has at another generation, RegistrationExpired. Byte for byte. */
static void test_claims_on_no_timer_are_not_found(void **state)
{
        static const char *const methods[] = {"Unregister", "Cancel"};
        int fd = harness_raw_connect(*state);
        unsigned long long first = registered(fd, "nf");

        expect_claim_call(fd, "Unregister", "nf", first, "{\"parameters\":{}}");
        for (size_t i = 0; i < 2; i++) {
                expect_claim_call(fd, methods[i], "nf", first,
                                  "{\"error\":\"io.timerd.Timer.NotFound\",\"parameters\":{"
                                  "\"name\":\"nf\"}}");
                expect_claim_call(fd, methods[i], "nf-never", 0,
                                  "{\"error\":\"io.timerd.Timer.NotFound\",\"parameters\":{"
                                  "\"name\":\"nf-never\"}}");
        }
        unsigned long long again = registered(fd, "nf");
        for (size_t i = 0; i < 2; i++)
                expect_claim_call(fd, methods[i], "nf", first,
                                  "{\"error\":\"io.timerd.Timer.RegistrationExpired\","
                                  "\"parameters\":{\"name\":\"nf\"}}");
        expect_claim_call(fd, "Unregister", "nf", again, "{\"parameters\":{}}");
        close(fd);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_get_info_lists_interfaces),
            cmocka_unit_test(test_split_and_pipelined_messages),
            cmocka_unit_test(test_many_pipelined_calls_answered_in_order),
            cmocka_unit_test(test_replies_before_a_hang_up_arrive),
            cmocka_unit_test(test_oneway_gets_no_reply),
            cmocka_unit_test(test_bad_messages_get_typed_errors),
            cmocka_unit_test(test_invalid_text_refused_and_never_echoed),
            cmocka_unit_test(test_unknown_fields_are_refused_by_name),
            cmocka_unit_test(test_every_idl_method_is_dispatched_as_itself),
            cmocka_unit_test(test_parameters_read_as_a_tree_reads_them),
            cmocka_unit_test(test_fields_are_read_from_the_check),
            cmocka_unit_test_setup_teardown(test_large_unknown_array_is_refused, harness_setup,
                                            harness_teardown),
            cmocka_unit_test(test_oversize_message_is_refused_and_disconnected),
            cmocka_unit_test(test_wait_with_more_streams),
            cmocka_unit_test(test_disconnect_mid_call_is_harmless),
            cmocka_unit_test(test_subscribe_streams_events_of_others),
            cmocka_unit_test(test_claims_on_no_timer_are_not_found),
            cmocka_unit_test_setup_teardown(test_subscribe_sees_a_mass_close_in_order,
                                            harness_setup, harness_teardown),
        };
        return cmocka_run_group_tests_name(harness_backend(), tests, setup, harness_teardown);
}
