/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The timer table against hostile users, on the real timerd: many uids (as one person gets from
 * a user namespace's subordinate uids), each within its own limit, fill the table with live
 * timers, each held to its share (half of what the ones before it left), and root and the admin
 * group are still served from the places --reserved-timers keeps: Register, Reconcile, and a
 * Wait that receives the firing. libtimerd names the bound that refused each of them.
 */

#include <inttypes.h>
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "users.h"
#include "wire.h"

/* 32 live timers for the other uids, 8 kept for root and the admin group. */
#define TABLE     40
#define RESERVED  8
#define SHARED    (TABLE - RESERVED)
#define PER_OWNER 12
/* What each uid gets in turn: its own limit, then half of what the ones before it left of the
 * 32, rounded up; the last takes the last place. */
#define N_UIDS 6
static const int got_in_turn[N_UIDS] = {12, 10, 5, 3, 1, 1};
#define FIRST_UID 64501
#define ADMIN_GID 64600
/* Retained, so that they stay when their uid's client is gone; none fires while the test runs. */
#define FAR_DECLARATION "{\"policy\":\"once\",\"lifetime\":\"retained\"}"
#define FAR_DELAY_USEC  3600000000

static int setup_table(void **state)
{
        static const char *const args[] = {"--max-timers=40", "--reserved-timers=8",
                                           "--max-timers-per-owner=12", "--admin-group=64600",
                                           NULL};
        return harness_setup_with(state, args);
}

/* Whether reply refuses with LimitExceeded naming limit, with max. */
static bool refused_at(json_object *reply, const char *limit, int64_t max)
{
        const char *error = reply ? wire_error(reply) : NULL;
        const char *named = reply ? wire_string(reply, "limit") : NULL;

        return error && strcmp(error, "io.timerd.Timer.LimitExceeded") == 0 && named &&
               strcmp(named, limit) == 0 && wire_int(reply, "max") == max;
}

/* Whether reply refuses with LimitExceeded naming the others' part of the table; released. */
static bool refused_at_share(json_object *reply)
{
        bool refused = refused_at(reply, "timers", SHARED);

        json_object_put(reply);
        return refused;
}

/* A uid's client, in a child (no cmocka there): registers until it is refused or at its own
 * limit. Its result: how many it registered (0..PER_OWNER), or 100 and more when a refusal was
 * not its share's (timers_share, max what it got) or the table's, or a call failed. */
static int fill(void *arg)
{
        const struct harness *h = arg;
        int fd = user_connect(h->socket), got;

        if (fd < 0)
                return 100;
        for (got = 0; got < PER_OWNER; got++) {
                json_object *r =
                    user_call(fd,
                              "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":"
                              "{\"name\":\"t%d\",\"declaration\":%s,\"delay_usec\":"
                              "%" PRIu64 "}}",
                              got, FAR_DECLARATION, (uint64_t)FAR_DELAY_USEC);
                if (!r)
                        return 101;
                if (wire_error(r)) {
                        bool held =
                            refused_at(r, "timers_share", got) || refused_at(r, "timers", SHARED);

                        json_object_put(r);
                        if (!held)
                                return 102;
                        break;
                }
                json_object_put(r);
        }
        close(fd);
        return got;
}

/* One more Register of an unprivileged uid: 0 when it is refused at the others' share. */
static int refused(void *arg)
{
        const struct harness *h = arg;
        int fd = user_connect(h->socket);

        if (fd < 0)
                return 100;
        json_object *r =
            user_call(fd,
                      "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":"
                      "{\"name\":\"late\",\"declaration\":%s,\"delay_usec\":%" PRIu64 "}}",
                      FAR_DECLARATION, (uint64_t)FAR_DELAY_USEC);
        close(fd);
        return refused_at_share(r) ? 0 : 101;
}

/* The uids fill the others' part in turn: SHARED live timers in all, the first at its own limit,
 * each after it at its share (refused naming it), the last refused naming the table. */
static void fill_share(const struct harness *h)
{
        int total = 0;

        if (!users_available())
                fail_msg("needs root to switch uids");
        /* The other uids reach the socket. */
        assert_int_equal(chmod(h->dir, 0755), 0);
        for (int i = 0; i < N_UIDS; i++) {
                int got = run_as(FIRST_UID + i, fill, (void *)h);
                assert_int_equal(got, got_in_turn[i]);
                total += got;
        }
        assert_int_equal(total, SHARED);
        /* The last uid, which the others left no place (it holds none), is refused at the share,
         * not at its own limit. */
        assert_int_equal(run_as(FIRST_UID + N_UIDS - 1, refused, (void *)h), 0);
}

static void expect_success(json_object *reply)
{
        if (wire_error(reply))
                fail_msg("refused: %s", json_object_to_json_string(reply));
        json_object_put(reply);
}

/*
 * Root on a table the other uids filled: registers a timer that fires and receives its firing by
 * Wait, reconciles one into being and takes every reserved place; past them it is refused naming
 * the whole table. Before: root got LimitExceeded timers as soon as the others filled the table.
 */
static void test_root_is_served_when_other_uids_fill_the_timers(void **state)
{
        struct harness *h = *state;

        fill_share(h);
        int root = harness_raw_connect(h);
        json_object *st = wire_call(root, STATUS_CALL);
        assert_int_equal(wire_int(st, "timers"), SHARED);
        json_object_put(st);

        expect_success(wire_call(root, "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":"
                                       "{\"name\":\"fires\",\"declaration\":{\"policy\":\"once\"},"
                                       "\"delay_usec\":1000}}"));
        json_object *r =
            wire_call(root,
                      "{\"method\":\"io.timerd.Timer.Reconcile\",\"parameters\":"
                      "{\"name\":\"reconciled\",\"declaration\":%s,\"desired\":\"inactive\"}}",
                      FAR_DECLARATION);
        assert_null(wire_error(r));
        assert_true(json_object_get_boolean(
            json_object_object_get(json_object_object_get(r, "parameters"), "created")));
        json_object_put(r);
        for (int i = 2; i < RESERVED; i++)
                expect_success(wire_call(root,
                                         "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":"
                                         "{\"name\":\"r%d\",\"declaration\":%s,\"delay_usec\":"
                                         "%" PRIu64 "}}",
                                         i, FAR_DECLARATION, (uint64_t)FAR_DELAY_USEC));
        r = wire_call(root,
                      "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":"
                      "{\"name\":\"over\",\"declaration\":%s}}",
                      FAR_DECLARATION);
        assert_string_equal(wire_error(r), "io.timerd.Timer.LimitExceeded");
        assert_string_equal(wire_string(r, "limit"), "timers");
        assert_int_equal(wire_int(r, "max"), TABLE);
        json_object_put(r);

        /* The firing, to a parked Wait of root's on the full table. */
        r = wire_call(root, "{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":"
                            "{\"names\":[\"fires\"],\"timeout_usec\":60000000}}");
        assert_null(wire_error(r));
        assert_string_equal(wire_string(r, "firing.token.name"), "fires");
        assert_int_equal(wire_int(r, "firing.token.run"), 1);
        json_object_put(r);

        /* The others are still held at their share. */
        assert_int_equal(run_as(FIRST_UID + N_UIDS - 1, refused, h), 0);
        st = wire_call(root, STATUS_CALL);
        assert_int_equal(wire_int(st, "timers"), TABLE);
        json_object_put(st);
        close(root);
}

/* A member of the admin group (through a supplementary group) on the filled table: its Register
 * and Reconcile take reserved places. Result 0, or which call failed. */
static int member_registers(void *arg)
{
        const struct harness *h = arg;
        int fd = user_connect(h->socket), result = 0;

        if (fd < 0)
                return 100;
        json_object *r = user_call(fd,
                                   "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":"
                                   "{\"name\":\"member\",\"declaration\":%s,\"delay_usec\":"
                                   "%" PRIu64 "}}",
                                   FAR_DECLARATION, (uint64_t)FAR_DELAY_USEC);
        if (!r || wire_error(r))
                result = 101;
        json_object_put(r);
        r = user_call(fd,
                      "{\"method\":\"io.timerd.Timer.Reconcile\",\"parameters\":"
                      "{\"name\":\"member.reconciled\",\"declaration\":%s,\"desired\":"
                      "\"inactive\"}}",
                      FAR_DECLARATION);
        if (!result && (!r || wire_error(r)))
                result = 102;
        json_object_put(r);
        close(fd);
        return result;
}

/* The admin group shares root's reserved timers. Before: its members were other uids, refused
 * once those filled the table. */
static void test_admin_group_is_served_when_other_uids_fill_the_timers(void **state)
{
        struct harness *h = *state;

        fill_share(h);
        assert_int_equal(
            run_as_groups(FIRST_UID + N_UIDS, FIRST_UID + N_UIDS, ADMIN_GID, member_registers, h),
            0);
        int root = harness_raw_connect(h);
        json_object *st = wire_call(root, STATUS_CALL);
        assert_int_equal(wire_int(st, "timers"), SHARED + 2);
        json_object_put(st);
        close(root);
}

/* What a client should be told when libtimerd registers timers "lib<i>" until refused. */
struct limit_job {
        const struct harness *h;
        int want;          /* registered before the refusal */
        const char *limit; /* timerd_last_error_limit() after it */
        uint64_t max;
};

/*
 * Registers through libtimerd until refused. 0 when the refusal came after j->want timers and
 * timerd_last_error_limit() named j->limit and j->max, and a Status after it left no limit
 * behind; else which check failed (100 and more). In a child: no cmocka there.
 */
static int libtimerd_refusal_child(void *arg)
{
        const struct limit_job *j = arg;
        struct timerd_start far = {.kind = TIMERD_START_AFTER, .usec = FAR_DELAY_USEC};
        struct timerd_declaration d;
        struct timerd_claim claim;
        struct timerd_status status;
        struct timerd *t;
        const char *limit;
        uint64_t max = 0;
        int got, r = 0, result = 0;
        char name[16];

        if (timerd_connect(j->h->socket, &t) < 0)
                return 100;
        timerd_declaration_init(&d, TIMERD_POLICY_ONCE, 0);
        d.lifetime = TIMERD_LIFETIME_RETAINED;
        for (got = 0; got <= j->want; got++) {
                snprintf(name, sizeof(name), "lib%d", got);
                r = timerd_register(t, name, &d, &far, false, &claim);
                if (r < 0)
                        break;
        }
        limit = timerd_last_error_limit(t, &max);
        if (r != -TIMERD_E_LIMIT_EXCEEDED)
                result = 101;
        else if (got != j->want)
                result = 102;
        else if (!limit || strcmp(limit, j->limit) != 0 || max != j->max)
                result = 103;
        else if (timerd_status(t, &status) < 0)
                result = 104;
        else if (timerd_last_error_limit(t, &max))
                result = 105;
        timerd_close(t);
        return result;
}

/* libtimerd tells each client which bound refused it and its max: the first uid its own limit,
 * the second and the fifth their share of what the others left, the last the others' part of the
 * table; a later call clears it. */
static void test_libtimerd_names_the_limit(void **state)
{
        struct harness *h = *state;
        struct limit_job own = {h, got_in_turn[0], "timers_per_owner", PER_OWNER};
        struct limit_job share = {h, got_in_turn[1], "timers_share", got_in_turn[1]};
        struct limit_job last_share = {h, got_in_turn[4], "timers_share", got_in_turn[4]};
        struct limit_job table = {h, got_in_turn[5], "timers", SHARED};

        if (!users_available())
                fail_msg("needs root to switch uids");
        assert_int_equal(chmod(h->dir, 0755), 0);
        assert_int_equal(run_as(FIRST_UID, libtimerd_refusal_child, &own), 0);
        assert_int_equal(run_as(FIRST_UID + 1, libtimerd_refusal_child, &share), 0);
        assert_int_equal(run_as(FIRST_UID + 2, fill, h), got_in_turn[2]);
        assert_int_equal(run_as(FIRST_UID + 3, fill, h), got_in_turn[3]);
        assert_int_equal(run_as(FIRST_UID + 4, libtimerd_refusal_child, &last_share), 0);
        assert_int_equal(run_as(FIRST_UID + 5, libtimerd_refusal_child, &table), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_root_is_served_when_other_uids_fill_the_timers,
                                            setup_table, harness_teardown),
            cmocka_unit_test_setup_teardown(
                test_admin_group_is_served_when_other_uids_fill_the_timers, setup_table,
                harness_teardown),
            cmocka_unit_test_setup_teardown(test_libtimerd_names_the_limit, setup_table,
                                            harness_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
