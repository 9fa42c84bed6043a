/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "json-texts.h"
#include "varlink/idl.h"
#include "varlink/json.h"
#include "varlink/message.h"

#define STR_AND_LEN(s) (s), (sizeof(s) - 1)

/* A call read in place in p: valid until p's next message. */
static int call_parse(struct vl_parser *p, const char *text, struct vl_call *ret)
{
        return vl_call_parse_with(p, text, strlen(text), VL_MAX_DEPTH_DEFAULT, ret);
}

static int call_parse_len(const char *text, size_t len, int max_depth)
{
        struct vl_parser p;
        struct vl_call c;
        int r;

        vl_parser_init(&p);
        r = vl_call_parse_with(&p, text, len, max_depth, &c);
        vl_parser_done(&p);
        return r;
}

static int call_parse_status(const char *text)
{
        return call_parse_len(text, strlen(text), VL_MAX_DEPTH_DEFAULT);
}

static int reply_parse(const char *text, struct vl_reply *ret)
{
        return vl_reply_parse(text, strlen(text), VL_MAX_DEPTH_DEFAULT, ret);
}

static int reply_parse_status(const char *text)
{
        struct vl_reply reply;
        int r = reply_parse(text, &reply);

        if (r == 0)
                vl_reply_done(&reply);
        return r;
}

static json_object *parse_object(const char *text)
{
        json_object *obj = json_tokener_parse(text);

        assert_non_null(obj);
        return obj;
}

static void call_full(void **state)
{
        struct vl_view m;
        struct vl_parser p;
        struct vl_call c;
        bool all = false;

        (void)state;
        vl_parser_init(&p);
        assert_int_equal(call_parse(&p,
                                    "{\"method\":\"io.timerd.Timer.List\",\"parameters\":{\"all\":"
                                    "true},\"more\":true,\"oneway\":false,\"upgrade\":true,"
                                    "\"unknown\":[1]}",
                                    &c),
                         0);
        assert_string_equal(c.method, "io.timerd.Timer.List");
        assert_int_equal(c.method_len, strlen("io.timerd.Timer.List"));
        assert_true(c.more);
        assert_false(c.oneway);
        assert_true(c.upgrade);
        assert_int_equal(vl_view_member(&c.parameters, "all", &m), 0);
        assert_int_equal(vl_view_bool(&m, &all), 0);
        assert_true(all);
        vl_parser_done(&p);
}

static void call_defaults(void **state)
{
        struct vl_parser p;
        struct vl_call c;

        (void)state;
        vl_parser_init(&p);
        assert_int_equal(call_parse(&p, " {\"method\":\"a.b.C\"} ", &c), 0);
        assert_string_equal(c.method, "a.b.C");
        assert_int_equal(c.method_len, 5);
        /* The length is the unescaped name's. */
        assert_int_equal(call_parse(&p, "{\"method\":\"a.b.\\u0043d\"}", &c), 0);
        assert_string_equal(c.method, "a.b.Cd");
        assert_int_equal(c.method_len, 6);
        assert_int_equal(vl_view_type(&c.parameters), VL_TOKEN_OBJECT);
        assert_int_equal(vl_view_size(&c.parameters), 0);
        assert_false(c.more);
        assert_false(c.oneway);
        assert_false(c.upgrade);

        assert_int_equal(
            call_parse(&p, "{\"method\":\"a.b.C\",\"parameters\":null,\"more\":null}", &c), 0);
        assert_int_equal(vl_view_type(&c.parameters), VL_TOKEN_OBJECT);
        assert_int_equal(vl_view_size(&c.parameters), 0);
        assert_false(c.more);
        vl_parser_done(&p);
}

static void call_bad_json(void **state)
{
        static const char *const bad[] = {
            "",
            " ",
            "{",
            "nope",
            "{\"method\":\"a.b.C\",}",
            "[1,]",
            "{'method':1",
            "{\"method\":\"a.b.C\"",
        };
        (void)state;
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                assert_int_equal(call_parse_status(bad[i]), -EBADMSG);
        assert_int_equal(call_parse_len("{\"method\":\"a.b.C\"}", SIZE_MAX, 16), -EMSGSIZE);
        assert_int_equal(call_parse_len("{\"method\":\"a.b.C\"}", 16, 0), -EINVAL);
}

static void call_trailing_garbage(void **state)
{
        (void)state;
        assert_int_equal(call_parse_status("{\"method\":\"a.b.C\"} x"), -EBADMSG);
        assert_int_equal(call_parse_status("{\"method\":\"a.b.C\"}{}"), -EBADMSG);
        assert_int_equal(call_parse_status("{\"method\":\"a.b.C\"}1"), -EBADMSG);
        /* A NUL inside the given length is not the end of the message. */
        assert_int_equal(call_parse_len(STR_AND_LEN("{\"method\":\"a.b.C\"}\0{}"), 16), -EBADMSG);
}

/* json-c counts every value: {"method":"a.b.C"} is 2 deep, an empty object inside it 3. */
static void call_depth(void **state)
{
        static const char flat[] = "{\"method\":\"a.b.C\"}";
        static const char nested[] = "{\"method\":\"a.b.C\",\"parameters\":{}}";
        static const char deeper[] = "{\"method\":\"a.b.C\",\"parameters\":{\"x\":{}}}";
        (void)state;
        assert_int_equal(call_parse_len(STR_AND_LEN(flat), 1), -EBADMSG);
        assert_int_equal(call_parse_len(STR_AND_LEN(flat), 2), 0);
        assert_int_equal(call_parse_len(STR_AND_LEN(nested), 2), 0);
        assert_int_equal(call_parse_len(STR_AND_LEN(deeper), 2), -EBADMSG);
        assert_int_equal(call_parse_len(STR_AND_LEN(deeper), 3), 0);
}

/* One parser for a stream of messages: an error in one (half a value, trailing text, too deep,
 * a number cut short) leaves nothing behind for the next, and a new depth bound takes effect. */
static void parser_reused(void **state)
{
        struct vl_view m;
        static const char good[] = "{\"method\":\"a.b.C\",\"parameters\":{\"n\":7}}";
        static const char *const bad[] = {"{\"method\":\"a.b.C\"", "{\"method\":\"a.b.C\"} x",
                                          "[[[[1]]]]", "12", "{\"method\":\"a.b\\u0000C\"}"};
        struct vl_parser p;
        struct vl_call c;
        struct vl_reply reply;
        uint64_t n;

        (void)state;
        vl_parser_init(&p);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                int r = vl_call_parse_with(&p, bad[i], strlen(bad[i]), 4, &c);
                assert_true(r == -EBADMSG || r == -EPROTO);
                assert_int_equal(vl_call_parse_with(&p, STR_AND_LEN(good), 4, &c), 0);
                assert_string_equal(c.method, "a.b.C");
                assert_int_equal(vl_view_member(&c.parameters, "n", &m), 0);
                assert_int_equal(vl_view_u64(&m, &n), 0);
                assert_int_equal(n, 7);
        }
        assert_int_equal(vl_call_parse_with(&p, STR_AND_LEN(good), 2, &c), -EBADMSG);
        assert_int_equal(vl_call_parse_with(&p, STR_AND_LEN(good), 3, &c), 0);
        assert_int_equal(vl_reply_parse_with(&p, STR_AND_LEN("{\"parameters\":{}}"), 3, &reply), 0);
        vl_reply_done(&reply);
        vl_parser_done(&p);
}

static void call_not_a_call(void **state)
{
        static const char *const bad[] = {
            "[]",
            "\"a.b.C\"",
            "12",
            "null",
            "{}",
            "{\"parameters\":{}}",
            "{\"method\":null}",
            "{\"method\":1}",
            "{\"method\":[\"a.b.C\"]}",
            "{\"method\":\"a.b.C\",\"parameters\":[]}",
            "{\"method\":\"a.b.C\",\"parameters\":\"x\"}",
            "{\"method\":\"a.b.C\",\"parameters\":1}",
            "{\"method\":\"a.b.C\",\"more\":\"yes\"}",
            "{\"method\":\"a.b.C\",\"more\":1}",
            "{\"method\":\"a.b.C\",\"oneway\":0}",
            "{\"method\":\"a.b.C\",\"upgrade\":{}}",
        };

        (void)state;
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                assert_int_equal(call_parse_status(bad[i]), -EPROTO);
}

/* The envelope's members are found in one pass over its keys: each by its unescaped name (cut at
 * a NUL, as a tree keeps a key), the last of duplicates, null as absent; other keys ignored. */
/* With the IDL, a call is checked as it is scanned when the scan can vouch for it: its method
 * found, its fields in the maps by id, nested structs in theirs. The rest is left to the walk (the
 * service's params_check()), which names what is wrong. */
static void call_checked_as_scanned(void **state)
{
        static const struct {
                const char *text;
                bool checked;
        } calls[] = {
            {"{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"name\":\"a\"}}", true},
            {"{\"method\":\"io.timerd.Timer.Get\"}", true},
            {"{\"method\":\"io.timerd.Timer.Get\",\"parameters\":null}", true},
            {"{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"n\\u0061me\":\"a\",\"name\":1}"
             "}",
             true},
            /* Parameters before the method, an unknown field at any level, an int beyond the
             * IDL's, a second method. */
            {"{\"parameters\":{\"name\":\"a\"},\"method\":\"io.timerd.Timer.Get\"}", false},
            {"{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{\"frobnicate\":1}}", false},
            {"{\"method\":\"io.timerd.Timer.Unregister\",\"parameters\":{\"claim\":{\"name\":\"a\","
             "\"run\":1}}}",
             false},
            {"{\"method\":\"io.timerd.Timer.Unregister\",\"parameters\":{\"claim\":{\"name\":\"a\","
             "\"generation\":9223372036854775808}}}",
             false},
            {"{\"method\":\"io.timerd.Timer.Get\",\"method\":\"io.timerd.Timer.Get\"}", false},
            /* Not a method of the IDL: nothing to check it against. */
            {"{\"method\":\"io.timerd.Timer.Frobnicate\",\"parameters\":{}}", false},
        };
        struct vl_view_fields maps[VL_IDL_OBJECTS_MAX];
        const struct vl_call_check check = {vl_idl_method_find, maps, VL_IDL_OBJECTS_MAX};
        struct vl_parser p;
        struct vl_view claim;
        const char *s;
        uint64_t u;
        struct vl_call c;
        (void)state;

        vl_parser_init(&p);
        p.check = &check;
        for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
                assert_int_equal(call_parse(&p, calls[i].text, &c), 0);
                assert_int_equal(c.checked, calls[i].checked);
                assert_true(!c.checked || c.idl);
        }
        assert_null(c.idl);

        assert_int_equal(call_parse(&p,
                                    "{\"method\":\"io.timerd.Timer.Unregister\",\"parameters\":{"
                                    "\"claim\":{\"name\":\"a\",\"generation\":7}}}",
                                    &c),
                         0);
        assert_true(c.checked);
        assert_ptr_equal(c.idl, &vl_idl_methods[VL_IDL_IO_TIMERD_TIMER_UNREGISTER]);
        assert_int_equal(vl_view_get_object(&c.parameters, VL_IDL_FIELD_CLAIM, &claim), 0);
        assert_int_equal(vl_view_get_string(&claim, VL_IDL_FIELD_NAME, &s), 0);
        assert_string_equal(s, "a");
        assert_int_equal(vl_view_get_u64(&claim, VL_IDL_FIELD_GENERATION, &u), 0);
        assert_int_equal(u, 7);
        assert_int_equal(vl_view_get_string(&c.parameters, VL_IDL_FIELD_NAME, &s), -ENOENT);
        vl_parser_done(&p);
}

static void call_envelope_keys(void **state)
{
        static const char *const bad[] = {
            "{\"method\":\"a.b.C\",\"more\":true,\"more\":2}",
            "{\"method\":\"a.b.C\",\"oneway\\u0000x\":5}",
            "{\"method\":\"a.b.C\",\"upgrad\\u0065\":\"x\"}",
            "{\"method\":\"a.b.C\",\"parameters\":{},\"parameters\":[]}",
            "{\"method\":\"a.b.C\",\"method\":null}",
        };
        struct vl_parser p;
        struct vl_call c;

        (void)state;
        vl_parser_init(&p);
        assert_int_equal(
            call_parse(&p,
                       "{\"meth\":1,\"\\u006dethod\":\"a.b.C\",\"more\":true,\"more\":null,"
                       "\"parameters\":{\"x\":1},\"parameters\":null,\"one\":7,"
                       "\"onewa\\u0079\":true,\"upgrade\\u0000\":true,\"methods\":3}",
                       &c),
            0);
        assert_string_equal(c.method, "a.b.C");
        assert_false(c.more);
        assert_int_equal(vl_view_size(&c.parameters), 0);
        assert_true(c.oneway);
        assert_true(c.upgrade);
        assert_int_equal(call_parse(&p, "{\"method\":\"x.y.Z\",\"method\":\"a.b.C\"}", &c), 0);
        assert_string_equal(c.method, "a.b.C");
        vl_parser_done(&p);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                assert_int_equal(call_parse_status(bad[i]), -EPROTO);
}

static void reply_success(void **state)
{
        struct vl_reply reply;
        uint64_t next = 0;

        (void)state;
        assert_int_equal(reply_parse("{\"parameters\":{\"next_usec\":5}}", &reply), 0);
        assert_null(reply.error);
        assert_false(reply.continues);
        assert_int_equal(vl_get_u64(reply.parameters, "next_usec", &next), 0);
        assert_int_equal(next, 5);
        vl_reply_done(&reply);
        assert_null(reply.root);

        assert_int_equal(reply_parse("{\"continues\":true}", &reply), 0);
        assert_true(reply.continues);
        assert_int_equal(json_object_object_length(reply.parameters), 0);
        vl_reply_done(&reply);
}

static void reply_error(void **state)
{
        struct vl_reply reply;
        const char *name = NULL;

        (void)state;
        assert_int_equal(
            reply_parse("{\"error\":\"io.timerd.Timer.NotFound\",\"parameters\":{\"name\":\"t\"}}",
                        &reply),
            0);
        assert_string_equal(reply.error, "io.timerd.Timer.NotFound");
        assert_int_equal(vl_get_string(reply.parameters, "name", &name), 0);
        assert_string_equal(name, "t");
        vl_reply_done(&reply);

        assert_int_equal(reply_parse("{\"error\":\"io.timerd.Timer.Busy\"}", &reply), 0);
        assert_string_equal(reply.error, "io.timerd.Timer.Busy");
        assert_int_equal(json_object_object_length(reply.parameters), 0);
        vl_reply_done(&reply);

        assert_int_equal(reply_parse("{\"error\":null,\"parameters\":{}}", &reply), 0);
        assert_null(reply.error);
        vl_reply_done(&reply);
}

static void reply_bad(void **state)
{
        static const char *const not_reply[] = {
            "[]",
            "true",
            "{\"error\":5}",
            "{\"error\":\"\"}",
            "{\"error\":{}}",
            "{\"parameters\":[]}",
            "{\"parameters\":0}",
            "{\"continues\":\"yes\"}",
        };

        (void)state;
        for (size_t i = 0; i < sizeof(not_reply) / sizeof(not_reply[0]); i++)
                assert_int_equal(reply_parse_status(not_reply[i]), -EPROTO);
        assert_int_equal(reply_parse_status("{\"parameters\":"), -EBADMSG);
        assert_int_equal(reply_parse_status("{} {}"), -EBADMSG);
}

/*
 * A reply read as tokens (what libtimerd's calls read): its envelope's members found in one pass,
 * each by its unescaped name, the last of duplicates, null as absent, other keys (also of the same
 * lengths, or nested) ignored; and the same verdict as the tree's.
 */
static void reply_envelope_tokens(void **state)
{
        static const struct {
                const char *text;
                int status;
                bool failed, continues;
                const char *first_parameter; /* the parameters' first key; NULL: absent */
        } replies[] = {
            {"{\"parameters\":{\"a\":1}}", 0, false, false, "a"},
            {"{\"parameters\":{}}", 0, false, false, NULL},
            {"{}", 0, false, false, NULL},
            {"{\"p\\u0061rameters\":{\"b\":1},\"continue\\u0073\":true}", 0, false, true, "b"},
            {"{\"parameters\":{\"a\":1},\"parameters\":{\"c\":2}}", 0, false, false, "c"},
            {"{\"parameters\":null,\"continues\":null,\"error\":null}", 0, false, false, NULL},
            {"{\"parameterz\":{\"a\":1},\"continuez\":5,\"erroR\":5,\"x\":[]}", 0, false, false,
             NULL},
            {"{\"parameters\":{\"error\":\"a.b.C\",\"continues\":1}}", 0, false, false, "error"},
            {"{\"continues\":false,\"continues\":true,\"parameters\":{\"d\":1}}", 0, false, true,
             "d"},
            {"{\"error\":\"a.b.C\",\"parameters\":{\"e\":1}}", 0, true, false, "e"},
            {"{\"\\u0065rror\":\"a.b.C\"}", 0, true, false, NULL},
            {"{\"error\":\"\"}", -EPROTO, false, false, NULL},
            {"{\"error\":1}", -EPROTO, false, false, NULL},
            {"{\"parameters\":[]}", -EPROTO, false, false, NULL},
            {"{\"continues\":\"yes\"}", -EPROTO, false, false, NULL},
            {"{\"continues\":true,\"continues\":1}", -EPROTO, false, false, NULL},
            {"{\"continues\":18446744073709551616}", -EPROTO, false, false, NULL},
            {"[]", -EPROTO, false, false, NULL},
            /* Cut short, and two messages in one. */
            {"{\"parameters\":{\"claim\":{\"name\":\"a\",\"generation\":1}}", -EBADMSG, false,
             false, NULL},
            {"{\"parameters\":{\"claim\":{\"name\":\"a\",\"generation\":1", -EBADMSG, false, false,
             NULL},
            {"{} {}", -EBADMSG, false, false, NULL},
        };
        struct vl_parser p;

        (void)state;
        vl_parser_init(&p);
        for (size_t i = 0; i < sizeof(replies) / sizeof(replies[0]); i++) {
                const char *text = replies[i].text;
                struct vl_reply reply;
                int r = vl_reply_tokenize(&p, text, strlen(text), VL_MAX_DEPTH_DEFAULT, &reply);

                assert_int_equal(r, replies[i].status);
                assert_int_equal(reply_parse_status(text), r);
                if (r < 0)
                        continue;
                assert_int_equal(reply.failed, replies[i].failed);
                assert_int_equal(reply.continues, replies[i].continues);
                if (!replies[i].first_parameter) {
                        assert_true(reply.parameters_token < 0 ||
                                    reply.tokens[reply.parameters_token].size == 0);
                        continue;
                }
                assert_true(reply.parameters_token > 0);
                const struct vl_token *key = &reply.tokens[reply.parameters_token + 1];
                assert_int_equal(key->len, strlen(replies[i].first_parameter));
                assert_memory_equal(text + key->start, replies[i].first_parameter, key->len);
        }
        vl_parser_done(&p);
}

/* {"method":"a.b.C","parameters":{"x":[[...]]}} nested depth levels deep (the root is level 1). */
static char *nested_call(size_t depth)
{
        static const char head[] = "{\"method\":\"a.b.C\",\"parameters\":{\"x\":";
        size_t arrays = depth - 2;
        size_t len = strlen(head) + 2 * arrays + 2;
        char *text = malloc(len + 1);

        assert_non_null(text);
        memcpy(text, head, strlen(head));
        memset(text + strlen(head), '[', arrays);
        memset(text + strlen(head) + arrays, ']', arrays);
        memcpy(text + len - 2, "}}", 3);
        return text;
}

static void default_depth(void **state)
{
        char *ok = nested_call(VL_MAX_DEPTH_DEFAULT);
        char *deep = nested_call(VL_MAX_DEPTH_DEFAULT + 1);

        (void)state;
        assert_int_equal(call_parse_status(ok), 0);
        assert_int_equal(call_parse_status(deep), -EBADMSG);
        assert_int_equal(reply_parse_status(deep), -EBADMSG);
        free(ok);
        free(deep);
}

/* What a writer holds queued, from its first unwritten byte. */
static const char *queued(const struct vl_writer *w)
{
        return w->buf + w->start;
}

static void encode_call(void **state)
{
        struct vl_view m;
        static const char get[] = "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{}}";
        struct vl_parser p;
        struct vl_writer w;
        struct vl_text t;
        struct vl_call c;
        const char *name;

        (void)state;
        vl_parser_init(&p);
        vl_writer_init(&w, 1024);
        vl_text_call_begin(&t, &w, "io.timerd.Timer.Get", false, false);
        assert_int_equal(vl_text_call_end(&t, &w, 1024), 0);
        assert_int_equal(vl_writer_pending(&w), sizeof(get));
        assert_memory_equal(queued(&w), get, sizeof(get));

        vl_text_call_begin(&t, &w, "io.timerd.Timer.Wait", true, true);
        vl_text_add_string(&t, "name", "a/b");
        vl_text_array_begin(&t, "names");
        vl_text_array_add_string(&t, "x\"yz", 2);
        vl_text_array_add_string(&t, "", 0);
        vl_text_array_end(&t);
        vl_text_array_begin(&t, "none");
        vl_text_array_end(&t);
        vl_text_add_u64(&t, "n", 7);
        assert_int_equal(vl_text_call_end(&t, &w, 1024), 0);
        /* The bytes on the wire, after the first call: flags before the parameters, no "a\/b". */
        const char *text = queued(&w) + sizeof(get);
        assert_string_equal(text, "{\"method\":\"io.timerd.Timer.Wait\",\"more\":true,"
                                  "\"oneway\":true,\"parameters\":{\"name\":\"a/b\","
                                  "\"names\":[\"x\\\"\",\"\"],\"none\":[],\"n\":7}}");

        assert_int_equal(call_parse(&p, text, &c), 0);
        assert_string_equal(c.method, "io.timerd.Timer.Wait");
        assert_true(c.more);
        assert_true(c.oneway);
        assert_false(c.upgrade);
        assert_int_equal(vl_view_member(&c.parameters, "name", &m), 0);
        assert_int_equal(vl_view_string(&m, &name), 0);
        assert_string_equal(name, "a/b");
        vl_parser_done(&p);
        vl_writer_done(&w);
}

/* The members of a tree (a raw call's parameters) are written as the tree encoder writes them. */
static void encode_call_members(void **state)
{
        json_object *parameters = json_object_new_object(), *array = json_object_new_array();
        struct vl_writer w;
        struct vl_text t;

        (void)state;
        assert_non_null(parameters);
        assert_non_null(array);
        assert_int_equal(vl_add_string(parameters, "k\"ey", "a/b"), 0);
        assert_int_equal(vl_add_i64(parameters, "neg", -5), 0);
        assert_int_equal(vl_array_add(array, json_object_new_boolean(false)), 0);
        assert_int_equal(vl_add_object(parameters, "a", array), 0);
        vl_writer_init(&w, 1024);
        vl_text_call_begin(&t, &w, "io.timerd.Timer.Get", false, false);
        vl_text_add_members(&t, parameters);
        vl_text_add_u64(&t, "owner", 3);
        assert_int_equal(vl_text_call_end(&t, &w, 1024), 0);
        assert_string_equal(queued(&w), "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{"
                                        "\"k\\\"ey\":\"a/b\",\"neg\":-5,\"a\":[false],"
                                        "\"owner\":3}}");

        /* A tree that lost a part: nothing is queued. */
        assert_int_equal(vl_add_object(parameters, "lost", NULL), -ENOMEM);
        size_t before = vl_writer_pending(&w);
        vl_text_call_begin(&t, &w, "io.timerd.Timer.Get", false, false);
        vl_text_add_members(&t, parameters);
        assert_int_equal(vl_text_call_end(&t, &w, 1024), -ENOMEM);
        assert_int_equal(vl_writer_pending(&w), before);
        json_object_put(parameters);
        vl_writer_done(&w);
}

/* A call that is too long, does not fit the queue or is dropped leaves the queue as it was. */
static void encode_call_refused(void **state)
{
        static const char first[] = "{\"method\":\"a.b.C\",\"parameters\":{}}";
        struct vl_writer w;
        struct vl_text t;

        (void)state;
        vl_writer_init(&w, 64);
        vl_text_call_begin(&t, &w, "a.b.C", false, false);
        assert_int_equal(vl_text_call_end(&t, &w, 64), 0);
        assert_int_equal(vl_writer_pending(&w), sizeof(first));

        /* 40 bytes: not under a limit of 36. */
        vl_text_call_begin(&t, &w, "a.b.C", false, false);
        vl_text_add_u64(&t, "x", 1);
        assert_int_equal(vl_text_call_end(&t, &w, 36), -EMSGSIZE);
        assert_int_equal(vl_writer_pending(&w), sizeof(first));

        /* Fits the limit of one message, not what is queued already. */
        vl_text_call_begin(&t, &w, "a.b.C", false, false);
        vl_text_add_u64(&t, "x", 1);
        assert_int_equal(vl_text_call_end(&t, &w, 64), -ENOBUFS);
        assert_int_equal(vl_writer_pending(&w), sizeof(first));

        vl_text_call_begin(&t, &w, "a.b.C", false, false);
        vl_text_add_string(&t, "x", "dropped");
        vl_text_call_drop(&t, &w);
        assert_int_equal(vl_writer_pending(&w), sizeof(first));
        assert_memory_equal(queued(&w), first, sizeof(first));

        /* Once the first is written (as a flush would), the next goes where it was. */
        w.start = w.len;
        vl_text_call_begin(&t, &w, "a.b.C", false, false);
        assert_int_equal(vl_text_call_end(&t, &w, 64), 0);
        assert_int_equal(w.start, 0);
        assert_memory_equal(queued(&w), first, sizeof(first));
        vl_writer_done(&w);
}

static void encode_reply(void **state)
{
        json_object *parameters;
        struct vl_reply reply;
        uint64_t big = 0;
        int64_t negative = 0;
        char *text;

        (void)state;
        text = vl_reply_encode(NULL, false);
        assert_non_null(text);
        assert_string_equal(text, "{\"parameters\":{}}");
        free(text);

        parameters = json_object_new_object();
        assert_non_null(parameters);
        assert_int_equal(vl_add_u64(parameters, "big", UINT64_MAX - 1), 0);
        assert_int_equal(vl_add_i64(parameters, "negative", INT64_MIN + 1), 0);
        assert_int_equal(vl_add_string(parameters, "path", "a/b\"c"), 0);
        text = vl_reply_encode(parameters, true);
        assert_non_null(text);
        /* Plain, slashes as they are, the flag first. */
        assert_string_equal(text,
                            "{\"continues\":true,\"parameters\":{\"big\":18446744073709551614,"
                            "\"negative\":-9223372036854775807,\"path\":\"a/b\\\"c\"}}");

        assert_int_equal(reply_parse(text, &reply), 0);
        assert_null(reply.error);
        assert_true(reply.continues);
        assert_int_equal(vl_get_u64(reply.parameters, "big", &big), 0);
        assert_true(big == UINT64_MAX - 1);
        assert_int_equal(vl_get_i64(reply.parameters, "negative", &negative), 0);
        assert_true(negative == INT64_MIN + 1);
        vl_reply_done(&reply);
        free(text);
}

/* The writer's bytes are those json-c's serializer wrote before it (what clients have seen). */
static void encode_like_json_c(void **state)
{
        char every_byte[256];
        json_object *v = json_object_new_object(), *a = json_object_new_array();

        (void)state;
        for (int i = 0; i < 256; i++)
                every_byte[i] = (char)i;
        assert_non_null(v);
        assert_non_null(a);
        json_object_object_add(v, "bytes", json_object_new_string_len(every_byte, 256));
        json_object_object_add(v, "k\"e/y\n\x01\xc3\xa9", json_object_new_string("a/b"));
        json_object_object_add(v, "min", json_object_new_int64(INT64_MIN));
        json_object_object_add(v, "max", json_object_new_int64(INT64_MAX));
        json_object_object_add(v, "umax", json_object_new_uint64(UINT64_MAX));
        json_object_object_add(v, "zero", json_object_new_int64(0));
        json_object_object_add(v, "double", json_object_new_double(0.1));
        json_object_object_add(v, "true", json_object_new_boolean(1));
        json_object_object_add(v, "false", json_object_new_boolean(0));
        json_object_object_add(v, "null", NULL);
        json_object_object_add(v, "empty", json_object_new_object());
        json_object_array_add(a, NULL);
        json_object_array_add(a, json_object_new_array());
        json_object_array_add(a, json_object_new_string(""));
        json_object_array_add(a, json_object_new_int64(-1));
        json_object_object_add(v, "array", a);

        char *ours = vl_json_encode(v);
        assert_non_null(ours);
        assert_string_equal(ours, json_object_to_json_string_ext(
                                      v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
        free(ours);
        json_object_put(v);
}

/* Strings are written a plain run at a time, found eight bytes at a time: each byte, at each place
 * around the eight-byte steps and with a second one after it, written as json-c writes it. */
static void encode_string_every_place(void **state)
{
        char text[24];

        (void)state;
        for (int b = 0; b < 256; b++)
                for (size_t at = 0; at < 18; at++) {
                        memset(text, 'a', sizeof(text));
                        text[at] = (char)b;
                        text[at + 5] = (char)(255 - b);
                        json_object *v = json_object_new_string_len(text, sizeof(text));
                        assert_non_null(v);
                        char *ours = vl_json_encode(v);
                        assert_non_null(ours);
                        assert_string_equal(
                            ours, json_object_to_json_string_ext(
                                      v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
                        free(ours);
                        json_object_put(v);
                }
}

/* Integers are written two digits at a time: each count of digits, and its edges. */
static void encode_u64_digits(void **state)
{
        uint64_t p = 1;

        (void)state;
        for (int digits = 1; digits <= 20; digits++, p *= 10) {
                const uint64_t values[] = {p - 1, p, p + 1, p * 5 + 7,
                                           digits == 20 ? UINT64_MAX : p * 10 - 1};

                for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
                        struct vl_text t;
                        char expected[64];

                        vl_text_reply_begin(&t, false, 0);
                        vl_text_add_u64(&t, "n", values[i]);
                        char *ours = vl_text_reply_end(&t);
                        assert_non_null(ours);
                        snprintf(expected, sizeof(expected), "{\"parameters\":{\"n\":%" PRIu64 "}}",
                                 values[i]);
                        assert_string_equal(ours, expected);
                        free(ours);
                }
                if (digits == 20)
                        break;
        }
}

/* A reply written field by field is byte for byte the reply encoded from the same tree. */
static void encode_reply_as_text(void **state)
{
        json_object *parameters = json_object_new_object(), *outer = json_object_new_object();
        json_object *inner = json_object_new_object();
        struct vl_text t;

        (void)state;
        assert_non_null(parameters);
        assert_non_null(outer);
        assert_non_null(inner);
        assert_int_equal(vl_add_string(inner, "name", "a/b\"c\n"), 0);
        assert_int_equal(vl_add_u64(inner, "zero", 0), 0);
        assert_int_equal(vl_add_bool(inner, "yes", true), 0);
        assert_int_equal(vl_add_bool(inner, "no", false), 0);
        assert_int_equal(vl_add_object(outer, "inner", inner), 0);
        assert_int_equal(vl_add_object(outer, "empty", json_object_new_object()), 0);
        assert_int_equal(vl_add_u64(outer, "max", UINT64_MAX), 0);
        assert_int_equal(vl_add_object(parameters, "outer", outer), 0);
        assert_int_equal(vl_add_u64(parameters, "after", 1234567890), 0);

        for (int continues = 0; continues <= 1; continues++) {
                vl_text_reply_begin(&t, continues, 0);
                vl_text_object_begin(&t, "outer");
                vl_text_object_begin(&t, "inner");
                vl_text_add_string(&t, "name", "a/b\"c\n");
                vl_text_add_u64(&t, "zero", 0);
                vl_text_add_bool(&t, "yes", true);
                vl_text_add_bool(&t, "no", false);
                vl_text_object_end(&t);
                vl_text_object_begin(&t, "empty");
                vl_text_object_end(&t);
                vl_text_add_u64(&t, "max", UINT64_MAX);
                vl_text_object_end(&t);
                vl_text_add_u64(&t, "after", 1234567890);
                char *ours = vl_text_reply_end(&t);
                char *tree = vl_reply_encode(json_object_get(parameters), continues);

                assert_non_null(ours);
                assert_non_null(tree);
                assert_string_equal(ours, tree);
                free(ours);
                free(tree);
        }
        json_object_put(parameters);

        vl_text_reply_begin(&t, false, 0);
        char *empty = vl_text_reply_end(&t);
        assert_non_null(empty);
        assert_string_equal(empty, "{\"parameters\":{}}");
        free(empty);
}

/* Arrays written element by element are the tree's arrays. */
static void encode_arrays_as_text(void **state)
{
        json_object *parameters = json_object_new_object(), *list = json_object_new_array();
        json_object *element = json_object_new_object();
        struct vl_text t;

        (void)state;
        assert_int_equal(vl_array_add(list, json_object_new_string("a\"b")), 0);
        assert_int_equal(vl_add_u64(element, "n", 7), 0);
        assert_int_equal(vl_array_add(list, element), 0);
        assert_int_equal(vl_add_object(parameters, "list", list), 0);
        assert_int_equal(vl_add_object(parameters, "empty", json_object_new_array()), 0);
        assert_int_equal(vl_add_bool(parameters, "after", true), 0);

        vl_text_reply_begin(&t, false, 0);
        vl_text_array_begin(&t, "list");
        vl_text_add_string(&t, NULL, "a\"b");
        vl_text_object_begin(&t, NULL);
        vl_text_add_u64(&t, "n", 7);
        vl_text_object_end(&t);
        vl_text_array_end(&t);
        vl_text_array_begin(&t, "empty");
        vl_text_array_end(&t);
        vl_text_add_bool(&t, "after", true);
        char *ours = vl_text_reply_end(&t);
        char *tree = vl_reply_encode(parameters, false);
        assert_non_null(ours);
        assert_non_null(tree);
        assert_string_equal(ours, tree);
        free(ours);
        free(tree);
}

/* Written in place, after what a buffer holds: the same messages, each ending with its NUL. */
static void encode_in_place(void **state)
{
        struct vl_text t;
        char *buf = malloc(4);
        json_object *parameters = json_object_new_object();

        (void)state;
        assert_non_null(buf);
        memcpy(buf, "ab", 3);
        assert_int_equal(vl_add_string(parameters, "reason", "full"), 0);
        vl_text_attach(&t, buf, 3, 4, 0);
        assert_int_equal(
            vl_text_error_tree(&t, "io.timerd.Timer.StoreUnavailable", json_object_get(parameters)),
            0);
        size_t first = t.len;
        assert_int_equal(vl_text_reply_tree(&t, NULL, true), 0);
        size_t second = t.len;
        vl_text_reply_head(&t, false);
        vl_text_add_u64(&t, "n", 1);
        assert_int_equal(vl_text_reply_close(&t), 0);

        char *error = vl_error_encode("io.timerd.Timer.StoreUnavailable", parameters);
        assert_string_equal(t.buf, "ab");
        assert_string_equal(t.buf + 3, error);
        assert_int_equal(first, 3 + strlen(error) + 1);
        assert_string_equal(t.buf + first, "{\"continues\":true,\"parameters\":{}}");
        assert_string_equal(t.buf + second, "{\"parameters\":{\"n\":1}}");
        assert_int_equal(t.len, second + strlen(t.buf + second) + 1);
        free(error);
        free(t.buf);
}

/* A tree that lost a part to a failed allocation is never written as if whole. */
static void encode_refuses_a_tree_missing_a_part(void **state)
{
        json_object *parameters = json_object_new_object(), *inner = json_object_new_object();
        json_object *array = json_object_new_array();

        (void)state;
        assert_non_null(parameters);
        assert_non_null(inner);
        assert_non_null(array);
        assert_int_equal(vl_add_u64(parameters, "kept", 1), 0);
        /* What a failed json_object_new_*() hands on. */
        assert_int_equal(vl_add_object(inner, "lost", NULL), -ENOMEM);
        assert_int_equal(vl_add_object(parameters, "inner", inner), 0);
        assert_null(vl_reply_encode(json_object_get(parameters), false));
        assert_null(vl_error_encode("io.timerd.Timer.NotFound", json_object_get(parameters)));
        assert_null(vl_json_encode(parameters));
        json_object_put(parameters);

        assert_int_equal(vl_array_add(array, NULL), -ENOMEM);
        assert_null(vl_json_encode(array));
        json_object_put(array);

        /* Adding to an object that was never made takes the value and fails, never asserts. */
        assert_int_equal(vl_add_string(NULL, "name", "x"), -ENOMEM);
        assert_int_equal(vl_add_object(NULL, "o", json_object_new_object()), -ENOMEM);
        assert_int_equal(vl_array_add(NULL, json_object_new_string("x")), -ENOMEM);
}

/* json-c's strict tokener as it reads one value: NULL when it refuses the text. */
static json_object *json_c_parse(const char *text, bool *ok)
{
        json_tokener *tok = json_tokener_new_ex(VL_MAX_DEPTH_DEFAULT);
        size_t len = strlen(text);
        json_object *v;

        assert_non_null(tok);
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        v = json_tokener_parse_ex(tok, text, (int)len);
        if (json_tokener_get_error(tok) == json_tokener_continue) {
                /* All taken, but a number at the top may go on: end the input. */
                v = json_tokener_parse_ex(tok, "", 1);
                *ok = json_tokener_get_error(tok) == json_tokener_success;
        } else
                *ok = json_tokener_get_error(tok) == json_tokener_success &&
                      json_tokener_get_parse_end(tok) == len;
        json_tokener_free(tok);
        return v;
}

/* What json-c's "strict" tokener took that is not JSON (RFC 8259): refused now. */
static void parse_refuses_what_is_not_json(void **state)
{
        static const char *const texts[] = {"\"a\tb\"", "\"\x01\"", "{'a':1}",   "'a'",
                                            "NaN",      "Infinity", "-Infinity", "1.",
                                            "[1.e5]",   "-.5",      "00"};

        (void)state;
        for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
                struct vl_parser p;
                json_object *v = NULL;

                vl_parser_init(&p);
                assert_int_equal(vl_json_parse(&p, texts[i], strlen(texts[i]), 4, &v), -EBADMSG);
                vl_parser_done(&p);
        }
}

/* Otherwise the reader takes and refuses what json-c's strict tokener did, making the same tree. */
static void parse_like_json_c(void **state)
{
        const char *const *texts = json_texts_like_json_c;

        (void)state;
        for (size_t i = 0; i < sizeof(json_texts_like_json_c) / sizeof(*texts); i++) {
                struct vl_parser p;
                json_object *ours = NULL;
                bool json_c_ok;
                json_object *theirs = json_c_parse(texts[i], &json_c_ok);

                vl_parser_init(&p);
                int r = vl_json_parse(&p, texts[i], strlen(texts[i]), VL_MAX_DEPTH_DEFAULT, &ours);
                vl_parser_done(&p);
                if ((r < 0) != !json_c_ok)
                        fail_msg("%s: ours %d, json-c %s", texts[i], r,
                                 json_c_ok ? "ok" : "refused");
                if (r == 0) {
                        char *a = ours ? vl_json_encode(ours) : strdup("null");
                        char *b = theirs ? vl_json_encode(theirs) : strdup("null");

                        assert_non_null(a);
                        assert_non_null(b);
                        if (strcmp(a, b) != 0 ||
                            json_object_get_type(ours) != json_object_get_type(theirs))
                                fail_msg("%s: ours %s, json-c %s", texts[i], a, b);
                        free(a);
                        free(b);
                }
                json_object_put(ours);
                json_object_put(theirs);
        }
}

static void encode_error(void **state)
{
        json_object *parameters;
        struct vl_reply reply;
        uint64_t max = 0;
        char *text;

        (void)state;
        text = vl_error_encode("io.timerd.Timer.Timeout", NULL);
        assert_non_null(text);
        assert_string_equal(text, "{\"error\":\"io.timerd.Timer.Timeout\",\"parameters\":{}}");
        free(text);

        parameters = json_object_new_object();
        assert_non_null(parameters);
        assert_int_equal(vl_add_u64(parameters, "max", 65536), 0);
        text = vl_error_encode("io.timerd.Timer.RequestTooLarge", parameters);
        assert_non_null(text);
        assert_string_equal(
            text, "{\"error\":\"io.timerd.Timer.RequestTooLarge\",\"parameters\":{\"max\":65536}}");
        assert_int_equal(reply_parse(text, &reply), 0);
        assert_string_equal(reply.error, "io.timerd.Timer.RequestTooLarge");
        assert_false(reply.continues);
        assert_int_equal(vl_get_u64(reply.parameters, "max", &max), 0);
        assert_int_equal(max, 65536);
        vl_reply_done(&reply);
        free(text);
}

static void get_string_and_bool(void **state)
{
        json_object *obj =
            parse_object("{\"s\":\"x\",\"b\":false,\"n\":null,\"i\":1,\"z\":\"a\\u0000b\"}");
        const char *s = "untouched";
        bool b = true;

        (void)state;
        assert_int_equal(vl_get_string(obj, "s", &s), 0);
        assert_string_equal(s, "x");
        assert_int_equal(vl_get_string(obj, "i", &s), -EINVAL);
        assert_int_equal(vl_get_string(obj, "b", &s), -EINVAL);
        assert_int_equal(vl_get_string(obj, "n", &s), -ENOENT);
        assert_int_equal(vl_get_string(obj, "absent", &s), -ENOENT);
        /* An embedded NUL cannot be a C string: refused rather than cut short. */
        assert_int_equal(vl_get_string(obj, "z", &s), -EINVAL);
        assert_string_equal(s, "x");

        assert_int_equal(vl_get_bool(obj, "b", &b), 0);
        assert_false(b);
        assert_int_equal(vl_get_bool(obj, "i", &b), -EINVAL);
        assert_int_equal(vl_get_bool(obj, "s", &b), -EINVAL);
        assert_int_equal(vl_get_bool(obj, "n", &b), -ENOENT);
        assert_int_equal(vl_get_bool(obj, "absent", &b), -ENOENT);
        json_object_put(obj);
}

static void get_u64(void **state)
{
        json_object *obj =
            parse_object("{\"zero\":0,\"small\":42,\"i64max\":9223372036854775807,"
                         "\"above_i64\":9223372036854775808,\"near_max\":18446744073709551614,"
                         "\"u64max\":18446744073709551615,\"over\":18446744073709551616,"
                         "\"huge\":99999999999999999999,\"minus\":-1,\"double\":1.0,\"exp\":1e3,"
                         "\"string\":\"1\",\"bool\":true,\"null\":null,\"array\":[1]}");
        static const char *const invalid[] = {"u64max", "over",   "huge", "minus", "double",
                                              "exp",    "string", "bool", "array"};
        uint64_t v = 7;

        (void)state;
        assert_int_equal(vl_get_u64(obj, "zero", &v), 0);
        assert_true(v == 0);
        assert_int_equal(vl_get_u64(obj, "small", &v), 0);
        assert_true(v == 42);
        assert_int_equal(vl_get_u64(obj, "i64max", &v), 0);
        assert_true(v == INT64_MAX);
        assert_int_equal(vl_get_u64(obj, "above_i64", &v), 0);
        assert_true(v == (uint64_t)INT64_MAX + 1);
        assert_int_equal(vl_get_u64(obj, "near_max", &v), 0);
        assert_true(v == UINT64_MAX - 1);

        v = 7;
        for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++)
                assert_int_equal(vl_get_u64(obj, invalid[i], &v), -EINVAL);
        assert_int_equal(vl_get_u64(obj, "null", &v), -ENOENT);
        assert_int_equal(vl_get_u64(obj, "absent", &v), -ENOENT);
        assert_true(v == 7);
        json_object_put(obj);
}

static void get_i64(void **state)
{
        json_object *obj = parse_object(
            "{\"minus\":-5,\"max\":9223372036854775807,\"min1\":-9223372036854775807,"
            "\"min\":-9223372036854775808,\"under\":-9223372036854775809,"
            "\"above\":9223372036854775808,\"double\":-1.5,\"string\":\"-1\",\"null\":null}");
        static const char *const invalid[] = {"min", "under", "above", "double", "string"};
        int64_t v = 7;

        (void)state;
        assert_int_equal(vl_get_i64(obj, "minus", &v), 0);
        assert_true(v == -5);
        assert_int_equal(vl_get_i64(obj, "max", &v), 0);
        assert_true(v == INT64_MAX);
        assert_int_equal(vl_get_i64(obj, "min1", &v), 0);
        assert_true(v == INT64_MIN + 1);

        v = 7;
        for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++)
                assert_int_equal(vl_get_i64(obj, invalid[i], &v), -EINVAL);
        assert_int_equal(vl_get_i64(obj, "null", &v), -ENOENT);
        assert_int_equal(vl_get_i64(obj, "absent", &v), -ENOENT);
        assert_true(v == 7);
        json_object_put(obj);
}

static void get_object_and_array(void **state)
{
        json_object *obj = parse_object("{\"o\":{\"k\":1},\"a\":[1,2],\"n\":null}");
        json_object *v = NULL;

        (void)state;
        assert_int_equal(vl_get_object(obj, "o", &v), 0);
        assert_int_equal(json_object_object_length(v), 1);
        assert_int_equal(vl_get_object(obj, "a", &v), -EINVAL);
        assert_int_equal(vl_get_object(obj, "n", &v), -ENOENT);
        assert_int_equal(vl_get_array(obj, "a", &v), 0);
        assert_int_equal(json_object_array_length(v), 2);
        assert_int_equal(vl_get_array(obj, "o", &v), -EINVAL);
        assert_int_equal(vl_get_array(obj, "absent", &v), -ENOENT);
        json_object_put(obj);
}

static void add_fields(void **state)
{
        json_object *obj = json_object_new_object();
        json_object *inner = json_object_new_object();
        json_object *got = NULL;
        const char *s = NULL;
        bool b = false;
        uint64_t u = 0;
        int64_t i = 0;

        (void)state;
        assert_non_null(obj);
        assert_non_null(inner);
        assert_int_equal(vl_add_string(obj, "s", "text"), 0);
        assert_int_equal(vl_add_bool(obj, "b", true), 0);
        assert_int_equal(vl_add_u64(obj, "u", (uint64_t)INT64_MAX + 5), 0);
        assert_int_equal(vl_add_i64(obj, "i", -12), 0);
        assert_int_equal(vl_add_object(obj, "o", inner), 0);
        assert_int_equal(vl_add_string(obj, "s", "replaced"), 0);

        assert_int_equal(vl_get_string(obj, "s", &s), 0);
        assert_string_equal(s, "replaced");
        assert_int_equal(vl_get_bool(obj, "b", &b), 0);
        assert_true(b);
        assert_int_equal(vl_get_u64(obj, "u", &u), 0);
        assert_true(u == (uint64_t)INT64_MAX + 5);
        assert_int_equal(vl_get_i64(obj, "i", &i), 0);
        assert_true(i == -12);
        assert_int_equal(vl_get_object(obj, "o", &got), 0);
        assert_ptr_equal(got, inner);
        json_object_put(obj);
}

/* The method of a call is echoed in MethodNotFound: nothing but the varlink grammar gets through.
 */
static void method_names(void **state)
{
        static const char *const valid[] = {
            "io.timerd.Timer.List", "org.varlink.service.GetInfo", "a.b.C", "a-b.1--c.D9", "A.b.Cx",
        };
        static const char *const invalid[] = {
            "",
            "List",
            ".List",
            "io.timerd.Timer.",
            "io..Timer.List",
            ".",
            "a.",
            "..B",
            "a.B",
            "a.b.c",
            "1a.b.C",
            "a-.b.C",
            "a.-b.C",
            "a.b.C-D",
            "a.b.C.",
            "a b.c.D",
            "a.b.C\xc3\xa4",
        };

        (void)state;
        for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++) {
                char text[128];
                snprintf(text, sizeof(text), "{\"method\":\"%s\"}", valid[i]);
                assert_true(vl_method_name_valid(valid[i]));
                assert_int_equal(call_parse_status(text), 0);
        }
        for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
                char text[128];
                snprintf(text, sizeof(text), "{\"method\":\"%s\"}", invalid[i]);
                assert_false(vl_method_name_valid(invalid[i]));
                assert_int_equal(call_parse_status(text), -EPROTO);
        }

        assert_true(vl_interface_name_valid("io.timerd.Timer"));
        assert_true(vl_interface_name_valid("org.varlink.service"));
        assert_false(vl_interface_name_valid("io"));
        assert_false(vl_interface_name_valid("io.timerd.Timer."));
        assert_false(vl_interface_name_valid("io.timerd/Timer"));
        assert_false(vl_interface_name_valid(""));
}

/* Text that is not valid UTF-8 is refused before json-c, which would take it: in a call, in a
 * reply (what libtimerd reads), in a string or a key, and also as an escape of a lone surrogate,
 * which json-c turns into U+FFFD. */
static void not_utf8_refused(void **state)
{
        struct vl_view m;
        static const char *const bad[] = {
            "{\"method\":\"a.b.C\",\"parameters\":{\"name\":\"a\xc0\xaf\x62\"}}",
            "{\"method\":\"a.b.C\",\"parameters\":{\"name\":\"a\xed\xa0\x80\"}}",
            "{\"method\":\"a.b.C\",\"parameters\":{\"name\":\"a\xf4\x90\x80\x80\"}}",
            "{\"method\":\"a.b.C\",\"parameters\":{\"name\":\"a\xc3\"}}",
            "{\"method\":\"a.b.C\",\"parameters\":{\"name\":\"\xff\"}}",
            "{\"method\":\"a.b.C\",\"parameters\":{\"a\xe0\x80\xaf\":1}}",
            "{\"method\":\"a.b.C\",\"parameters\":{\"name\":\"a\\ud800b\"}}",
            "{\"method\":\"a.b.C\",\"parameters\":{\"name\":\"\\udc00\"}}",
            "{\"method\":\"a.b.C\",\"parameters\":{\"name\":\"\\ud800\\u0041\"}}",
            "\"\xff\"",
        };
        struct vl_parser p;
        struct vl_call c;

        (void)state;
        vl_parser_init(&p);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                assert_int_equal(call_parse_status(bad[i]), -EILSEQ);
                assert_int_equal(reply_parse_status(bad[i]), -EILSEQ);
        }

        /* What is valid stays so: a pair of escapes, four-byte text, an escaped NUL (refused by
         * vl_get_string, not by the parser). */
        assert_int_equal(call_parse(&p,
                                    "{\"method\":\"a.b.C\",\"parameters\":{\"p\":\"\\ud83d"
                                    "\\ude00\xf0\x9f\x98\x80\xc3\xa4\",\"z\":\"a\\u0000b\"}}",
                                    &c),
                         0);
        const char *v;
        assert_int_equal(vl_view_member(&c.parameters, "p", &m), 0);
        assert_int_equal(vl_view_string(&m, &v), 0);
        assert_string_equal(v, "\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xc3\xa4");
        assert_int_equal(vl_view_member(&c.parameters, "z", &m), 0);
        assert_int_equal(vl_view_string(&m, &v), -EINVAL);
        vl_parser_done(&p);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(call_full),
            cmocka_unit_test(call_defaults),
            cmocka_unit_test(call_bad_json),
            cmocka_unit_test(call_trailing_garbage),
            cmocka_unit_test(call_depth),
            cmocka_unit_test(parser_reused),
            cmocka_unit_test(default_depth),
            cmocka_unit_test(call_not_a_call),
            cmocka_unit_test(call_envelope_keys),
            cmocka_unit_test(call_checked_as_scanned),
            cmocka_unit_test(reply_success),
            cmocka_unit_test(reply_error),
            cmocka_unit_test(reply_bad),
            cmocka_unit_test(reply_envelope_tokens),
            cmocka_unit_test(encode_call),
            cmocka_unit_test(encode_call_members),
            cmocka_unit_test(encode_call_refused),
            cmocka_unit_test(encode_reply),
            cmocka_unit_test(encode_like_json_c),
            cmocka_unit_test(encode_reply_as_text),
            cmocka_unit_test(encode_string_every_place),
            cmocka_unit_test(encode_u64_digits),
            cmocka_unit_test(encode_arrays_as_text),
            cmocka_unit_test(encode_in_place),
            cmocka_unit_test(encode_refuses_a_tree_missing_a_part),
            cmocka_unit_test(encode_error),
            cmocka_unit_test(parse_like_json_c),
            cmocka_unit_test(parse_refuses_what_is_not_json),
            cmocka_unit_test(get_string_and_bool),
            cmocka_unit_test(get_u64),
            cmocka_unit_test(get_i64),
            cmocka_unit_test(get_object_and_array),
            cmocka_unit_test(add_fields),
            cmocka_unit_test(method_names),
            cmocka_unit_test(not_utf8_refused),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
