/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * List a page at a time against the real timerd: cursors, limits, the configured page, bad
 * cursors and limits on the wire, libtimerd following the pages, a walk of many pages while
 * another client changes the timers, and pipelined pages answered one a loop turn. The service
 * runs with --list-page=3, so that a handful of timers makes several pages.
 */

#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#define PAGE       3
#define TIMEOUT_MS 5000

struct fixture {
        struct harness h;
        struct timerd *t; /* holds the (transient) timers of the test */
        int fd;           /* a raw connection for the calls under test */
};

static int setup_with(void **state, const char *const *args)
{
        struct fixture *f = calloc(1, sizeof(*f));

        assert_non_null(f);
        harness_start(&f->h, args);
        f->t = harness_connect(&f->h);
        f->fd = harness_raw_connect(&f->h);
        *state = f;
        return 0;
}

static int setup(void **state)
{
        static const char *const args[] = {"--list-page=3", NULL};

        return setup_with(state, args);
}

static int setup_default_page(void **state)
{
        return setup_with(state, NULL);
}

static int teardown(void **state)
{
        struct fixture *f = *state;

        close(f->fd);
        timerd_close(f->t);
        harness_stop(&f->h);
        free(f);
        return 0;
}

/* The last reply's text. */
static char buf[1 << 20];

/* One call on the raw connection; the whole reply, parsed (put it). */
__attribute__((format(printf, 2, 3))) static json_object *call(struct fixture *f,
                                                               const char *format, ...)
{
        char *message;
        va_list ap;
        int n;

        va_start(ap, format);
        n = vasprintf(&message, format, ap);
        va_end(ap);
        assert_true(n > 0);
        raw_send(f->fd, message, (size_t)n + 1);
        free(message);
        assert_true(raw_recv(f->fd, buf, sizeof(buf), TIMEOUT_MS) >= 0);
        json_object *reply = json_tokener_parse(buf);
        assert_non_null(reply);
        return reply;
}

static json_object *field(json_object *o, const char *name)
{
        json_object *v = NULL;

        json_object_object_get_ex(o, name, &v);
        return v;
}

/* A List call's parameters (JSON text inside {}) must fail with InvalidParameter `parameter`. */
static void expect_invalid(struct fixture *f, const char *parameters, const char *parameter)
{
        json_object *reply =
            call(f, "{\"method\":\"io.timerd.Timer.List\",\"parameters\":{%s}}", parameters);
        json_object *error = field(reply, "error");

        if (!error)
                fail_msg("List {%s} answered %s", parameters, json_object_to_json_string(reply));
        assert_string_equal(json_object_get_string(error), "org.varlink.service.InvalidParameter");
        assert_string_equal(json_object_get_string(field(field(reply, "parameters"), "parameter")),
                            parameter);
        json_object_put(reply);
}

/*
 * A List page: its names joined by ",", and its cursor as "owner/name" ("" when none). The
 * parameters are JSON text inside {}.
 */
struct page {
        char names[512];
        char next[160];
        size_t n, bytes; /* timers, and the reply's length */
};

static struct page list(struct fixture *f, const char *parameters)
{
        json_object *reply =
            call(f, "{\"method\":\"io.timerd.Timer.List\",\"parameters\":{%s}}", parameters);
        json_object *p = field(reply, "parameters"), *timers = field(p, "timers"),
                    *next = field(p, "next");
        struct page page = {0};

        if (!timers)
                fail_msg("List {%s} answered %s", parameters, json_object_to_json_string(reply));
        page.n = json_object_array_length(timers);
        page.bytes = strlen(buf);
        for (size_t i = 0; i < json_object_array_length(timers); i++) {
                json_object *timer = json_object_array_get_idx(timers, i);
                size_t len = strlen(page.names);

                snprintf(page.names + len, sizeof(page.names) - len, "%s%s", i > 0 ? "," : "",
                         json_object_get_string(field(timer, "name")));
        }
        if (next)
                snprintf(page.next, sizeof(page.next), "%s/%s",
                         json_object_get_string(field(next, "owner")),
                         json_object_get_string(field(next, "name")));
        json_object_put(reply);
        return page;
}

static void assert_list(struct fixture *f, const char *parameters, const char *names,
                        const char *next)
{
        struct page page = list(f, parameters);

        assert_string_equal(page.names, names);
        assert_string_equal(page.next, next);
}

static struct timerd_claim add(struct fixture *f, const char *name)
{
        struct timerd_declaration d;
        struct timerd_claim claim;

        timerd_declaration_init(&d, TIMERD_POLICY_ONCE, 0);
        assert_int_equal(timerd_register(f->t, name, &d, NULL, false, &claim), 0);
        return claim;
}

static void add_all(struct fixture *f, const char *const *names, size_t n)
{
        for (size_t i = 0; i < n; i++)
                add(f, names[i]);
}

static const char *const seven[] = {"g", "c", "e", "a", "f", "b", "d"};

/* Pages of the configured size, each after the cursor of the one before; the last has none. */
static void test_pages_follow_cursors(void **state)
{
        struct fixture *f = *state;

        assert_list(f, "", "", "");
        add_all(f, seven, 7);
        assert_list(f, "", "a,b,c", "0/c");
        assert_list(f, "\"after\":{\"owner\":0,\"name\":\"c\"}", "d,e,f", "0/f");
        assert_list(f, "\"after\":{\"owner\":0,\"name\":\"f\"}", "g", "");
        /* After the last, or past every timer: an empty page, and no cursor. */
        assert_list(f, "\"after\":{\"owner\":0,\"name\":\"g\"}", "", "");
        assert_list(f, "\"after\":{\"owner\":4294967294,\"name\":\"z\"}", "", "");
        /* Exactly a page left: no cursor either. */
        assert_list(f, "\"after\":{\"owner\":0,\"name\":\"d\"}", "e,f,g", "");
}

/* limit picks a smaller page; a larger one is lowered to the configured page. */
static void test_limit(void **state)
{
        struct fixture *f = *state;

        add_all(f, seven, 7);
        assert_list(f, "\"limit\":1", "a", "0/a");
        assert_list(f, "\"limit\":2,\"after\":{\"owner\":0,\"name\":\"a\"}", "b,c", "0/c");
        assert_list(f, "\"limit\":1000000", "a,b,c", "0/c");
        assert_list(f, "\"limit\":9223372036854775807", "a,b,c", "0/c");
        assert_list(f, "\"limit\":null", "a,b,c", "0/c");
}

/* Bad limits and cursors: InvalidParameter naming the field, and nothing listed. */
static void test_bad_limits_and_cursors(void **state)
{
        struct fixture *f = *state;

        add_all(f, seven, 3);
        expect_invalid(f, "\"limit\":0", "limit");
        expect_invalid(f, "\"limit\":-1", "limit");
        expect_invalid(f, "\"limit\":\"3\"", "limit");
        expect_invalid(f, "\"limit\":2.5", "limit");
        expect_invalid(f, "\"limit\":true", "limit");
        expect_invalid(f, "\"limit\":18446744073709551616", "limit");
        expect_invalid(f, "\"after\":\"c\"", "after");
        expect_invalid(f, "\"after\":[0,\"c\"]", "after");
        expect_invalid(f, "\"after\":{}", "after.owner");
        expect_invalid(f, "\"after\":{\"name\":\"c\"}", "after.owner");
        expect_invalid(f, "\"after\":{\"owner\":-1,\"name\":\"c\"}", "after.owner");
        expect_invalid(f, "\"after\":{\"owner\":4294967295,\"name\":\"c\"}", "after.owner");
        expect_invalid(f, "\"after\":{\"owner\":\"0\",\"name\":\"c\"}", "after.owner");
        expect_invalid(f, "\"after\":{\"owner\":0}", "after.name");
        expect_invalid(f, "\"after\":{\"owner\":0,\"name\":5}", "after.name");
        expect_invalid(f, "\"after\":{\"owner\":0,\"name\":\"\"}", "after.name");
        expect_invalid(f, "\"after\":{\"owner\":0,\"name\":\"a b\"}", "after.name");
        expect_invalid(f, "\"after\":{\"owner\":0,\"name\":\"a\\u0000b\"}", "after.name");
        expect_invalid(f, "\"all\":1", "all");
        /* The connection still works and nothing changed. */
        assert_list(f, "", "c,e,g", "");
}

/* A cursor is a place: the timer it names may be gone, the next page starts after it. */
static void test_cursor_of_a_removed_timer(void **state)
{
        struct fixture *f = *state;
        struct timerd_claim c;

        add_all(f, (const char *const[]){"a", "b"}, 2);
        c = add(f, "c");
        add_all(f, (const char *const[]){"d", "e", "f"}, 3);
        assert_list(f, "", "a,b,c", "0/c");
        assert_int_equal(timerd_unregister(f->t, &c), 0);
        assert_list(f, "\"after\":{\"owner\":0,\"name\":\"c\"}", "d,e,f", "");
        add(f, "cc");
        assert_list(f, "\"after\":{\"owner\":0,\"name\":\"c\"}", "cc,d,e", "0/e");
}

/* uid 0 lists one owner (pages stop at its last timer) or all of them, in (owner, name) order. */
static void test_owner_boundaries(void **state)
{
        struct fixture *f = *state;
        static const struct {
                unsigned owner;
                const char *name;
        } timers[] = {{2000, "b"}, {1000, "y"}, {2000, "a"}, {1000, "x"}, {3000, "a"}};

        for (size_t i = 0; i < sizeof(timers) / sizeof(timers[0]); i++)
                json_object_put(call(f,
                                     "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{"
                                     "\"name\":\"%s\",\"owner\":%u,\"declaration\":{\"policy\":"
                                     "\"once\",\"lifetime\":\"retained\"}}}",
                                     timers[i].name, timers[i].owner));
        assert_list(f, "\"owner\":1000", "x,y", "");
        assert_list(f, "\"owner\":2000,\"limit\":1", "a", "2000/a");
        assert_list(f, "\"owner\":2000,\"limit\":1,\"after\":{\"owner\":2000,\"name\":\"a\"}", "b",
                    "");
        /* A cursor of an earlier owner starts at this owner's first; of a later one, past it. */
        assert_list(f, "\"owner\":2000,\"after\":{\"owner\":1000,\"name\":\"zzz\"}", "a,b", "");
        assert_list(f, "\"owner\":2000,\"after\":{\"owner\":2001,\"name\":\"a\"}", "", "");
        assert_list(f, "\"owner\":4000", "", "");
        assert_list(f, "\"all\":true", "x,y,a", "2000/a");
        assert_list(f, "\"all\":true,\"after\":{\"owner\":2000,\"name\":\"a\"}", "b,a", "");
}

/* timerd_list() follows every page; timerd_list_page() walks them. */
static void test_libtimerd_follows_pages(void **state)
{
        struct fixture *f = *state;
        struct timerd_list_cursor cursor = {0};
        struct timerd_timer *timers;
        size_t pages = 0, seen = 0;
        long n;

        add_all(f, seven, 7);
        n = timerd_list(f->t, TIMERD_OWNER_SELF, false, &timers);
        assert_int_equal(n, 7);
        for (long i = 0; i < n; i++)
                assert_int_equal(timers[i].name[0], 'a' + i);
        free(timers);
        n = timerd_list(f->t, TIMERD_OWNER_SELF, true, &timers);
        assert_int_equal(n, 7);
        free(timers);

        while (!cursor.done) {
                n = timerd_list_page(f->t, TIMERD_OWNER_SELF, false, 2, &cursor, &timers);
                assert_true(n >= 0 && n <= 2);
                for (long i = 0; i < n; i++)
                        assert_int_equal(timers[i].name[0], 'a' + (long)seen + i);
                seen += (size_t)n;
                pages++;
                free(timers);
        }
        assert_int_equal(seen, 7);
        assert_int_equal(pages, 4);

        /* Started after a place by hand, with the service's page. */
        cursor = (struct timerd_list_cursor){.has_after = true, .after_owner = 0};
        strcpy(cursor.after_name, "bb");
        assert_int_equal(timerd_list_page(f->t, TIMERD_OWNER_SELF, false, 0, &cursor, &timers),
                         PAGE);
        assert_string_equal(timers[0].name, "c");
        assert_string_equal(cursor.after_name, "e");
        free(timers);
}

/* Without --list-page: at most 1000 timers a page, also when more are asked for; fewer once the
 * page holds 128 KiB (1000 of these take more). */
static void test_default_page(void **state)
{
        struct fixture *f = *state;
        struct timerd_timer *timers;
        char name[16];

        for (int i = 0; i < 1001; i++) {
                snprintf(name, sizeof(name), "t%04d", i);
                add(f, name);
        }
        struct page page = list(f, "");
        assert_true(page.n > 0 && page.n < 1000);
        assert_true(page.bytes < 128 * 1024 + 1024);
        assert_true(page.next[0]);
        page = list(f, "\"limit\":5000");
        assert_true(page.n > 0 && page.n < 1000);
        assert_true(page.next[0]);
        assert_list(f, "\"after\":{\"owner\":0,\"name\":\"t0999\"}", "t1000", "");
        assert_int_equal(timerd_list(f->t, TIMERD_OWNER_SELF, false, &timers), 1001);
        assert_string_equal(timers[1000].name, "t1000");
        free(timers);
}

/* Status's count of loop iterations (the test runs as uid 0: the host's figures). */
static uint64_t iterations(struct fixture *f)
{
        json_object *reply = call(f, "{\"method\":\"io.timerd.Service.Status\"}");
        json_object *n = field(field(reply, "parameters"), "iterations");

        assert_non_null(n);
        uint64_t v = (uint64_t)json_object_get_int64(n);
        json_object_put(reply);
        return v;
}

#define WALK_TIMERS 1500
#define WALK_AHEAD  40 /* how far past the cursor the changes between pages land */

/*
 * Many timers at the default page, page after page, while another client registers and
 * unregisters timers between the pages (each of its calls answered before the next page is
 * asked for): the walk comes back in (owner, name) order, without a duplicate, with every timer
 * that was there throughout, each added after the cursor, and none removed after it.
 */
static void test_walk_while_changing(void **state)
{
        struct fixture *f = *state;
        static struct timerd_claim claims[WALK_TIMERS];
        /* Per initial timer: 1 must be listed (there throughout, or its "-new" sibling added
         * ahead), 0 must not (removed ahead); its sibling "-new" added: 2 ahead, 3 behind. */
        static unsigned char removed[WALK_TIMERS], sibling[WALK_TIMERS];
        char name[32], last[32] = "", after[96] = "";
        size_t pages = 0, listed = 0, expected = WALK_TIMERS, changes = 0;

        for (size_t i = 0; i < WALK_TIMERS; i++) {
                snprintf(name, sizeof(name), "t%05zu", i);
                claims[i] = add(f, name);
        }
        for (;;) {
                json_object *reply =
                    call(f, "{\"method\":\"io.timerd.Timer.List\",\"parameters\":{%s}}", after);
                json_object *p = field(reply, "parameters"), *timers = field(p, "timers"),
                            *next = field(p, "next");

                if (!timers)
                        fail_msg("List answered %s", json_object_to_json_string(reply));
                for (size_t i = 0; i < json_object_array_length(timers); i++) {
                        const char *n = json_object_get_string(
                            field(json_object_array_get_idx(timers, i), "name"));
                        size_t index;

                        assert_non_null(n);
                        if (strcmp(n, last) <= 0)
                                fail_msg("%s listed after %s", n, last);
                        assert_true(strlen(n) < sizeof(last));
                        memcpy(last, n, strlen(n) + 1);
                        assert_int_equal(sscanf(n, "t%05zu", &index), 1);
                        assert_true(index < WALK_TIMERS);
                        if (strchr(n, '-'))
                                assert_int_equal(sibling[index], 2);
                        else
                                assert_false(removed[index]);
                        listed++;
                }
                pages++;
                if (!next) {
                        json_object_put(reply);
                        break;
                }
                snprintf(after, sizeof(after), "\"after\":{\"owner\":%s,\"name\":\"%s\"}",
                         json_object_get_string(field(next, "owner")),
                         json_object_get_string(field(next, "name")));
                json_object_put(reply);

                /* Between pages, on the other connection: one timer ahead of the cursor goes and
                 * one comes, one behind it goes and one comes. */
                size_t at;
                assert_int_equal(sscanf(last, "t%05zu", &at), 1);
                if (at + WALK_AHEAD < WALK_TIMERS && !removed[at + WALK_AHEAD]) {
                        assert_int_equal(timerd_unregister(f->t, &claims[at + WALK_AHEAD]), 0);
                        removed[at + WALK_AHEAD] = 1;
                        expected--;
                        changes++;
                }
                if (at + WALK_AHEAD + 1 < WALK_TIMERS && !sibling[at + WALK_AHEAD + 1]) {
                        snprintf(name, sizeof(name), "t%05zu-new", at + WALK_AHEAD + 1);
                        add(f, name);
                        sibling[at + WALK_AHEAD + 1] = 2;
                        expected++;
                        changes++;
                }
                if (at >= WALK_AHEAD && !removed[at - WALK_AHEAD]) {
                        assert_int_equal(timerd_unregister(f->t, &claims[at - WALK_AHEAD]), 0);
                        removed[at - WALK_AHEAD] = 1;
                        changes++;
                }
                if (at >= WALK_AHEAD + 1 && !sibling[at - WALK_AHEAD - 1]) {
                        snprintf(name, sizeof(name), "t%05zu-new", at - WALK_AHEAD - 1);
                        add(f, name);
                        sibling[at - WALK_AHEAD - 1] = 3;
                        changes++;
                }
        }
        assert_true(pages >= 4);
        assert_true(changes >= 4 * (pages - 2));
        assert_int_equal(listed, expected);
}

/*
 * Pages a client pipelines (here six first pages, written at once) are answered one a loop turn,
 * however cheap each is: between two of them the loop goes back to serve everyone else.
 */
static void test_pipelined_pages_take_a_turn_each(void **state)
{
        static const char page[] = "{\"method\":\"io.timerd.Timer.List\",\"parameters\":"
                                   "{\"limit\":1}}";
        struct fixture *f = *state;
        char calls[6 * sizeof(page)];

        add_all(f, seven, 7);
        for (size_t i = 0; i < 6; i++)
                memcpy(calls + i * sizeof(page), page, sizeof(page));
        uint64_t before = iterations(f);
        raw_send(f->fd, calls, sizeof(calls));
        for (size_t i = 0; i < 6; i++) {
                assert_true(raw_recv(f->fd, buf, sizeof(buf), TIMEOUT_MS) >= 0);
                assert_non_null(strstr(buf, "\"name\":\"a\""));
        }
        /* Status's own turn is not counted yet when it answers: the six pages' turns are. */
        assert_true(iterations(f) - before >= 6);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_pages_follow_cursors, setup, teardown),
            cmocka_unit_test_setup_teardown(test_limit, setup, teardown),
            cmocka_unit_test_setup_teardown(test_bad_limits_and_cursors, setup, teardown),
            cmocka_unit_test_setup_teardown(test_cursor_of_a_removed_timer, setup, teardown),
            cmocka_unit_test_setup_teardown(test_owner_boundaries, setup, teardown),
            cmocka_unit_test_setup_teardown(test_libtimerd_follows_pages, setup, teardown),
            cmocka_unit_test_setup_teardown(test_default_page, setup_default_page, teardown),
            cmocka_unit_test_setup_teardown(test_walk_while_changing, setup_default_page, teardown),
            cmocka_unit_test_setup_teardown(test_pipelined_pages_take_a_turn_each, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
