/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The connection table against hostile users (issue 14 holes 3 and 6), on the real timerd: many
 * uids (as one person gets from a user namespace's subordinate uids) fill the table and root is
 * still served; a uid under its fair share gets in; a half-sent message and an idle connection are
 * closed after their timeouts, and what holds something is not; the timeouts cost no wake-ups
 * while nothing is due; Status tells an unprivileged caller only its own figures.
 */

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "users.h"
#include "wire.h"

/* The table of the fairness test: 10 places shared by the other uids, 2 kept for root. */
#define TABLE        12
#define PER_UID      4
#define RESERVED     2
#define SHARED       (TABLE - RESERVED)
#define N_UIDS       4
#define FIRST_UID    64101
#define PARTIAL_USEC 300000
#define IDLE_USEC    500000

static int setup_table(void **state)
{
        static const char *const args[] = {"--max-connections=12", "--max-connections-per-uid=4",
                                           "--reserved-connections=2", NULL};
        return harness_setup_with(state, args);
}

static int setup_table_of_one(void **state)
{
        static const char *const args[] = {"--max-connections=1", "--log-level=debug", NULL};
        return harness_setup_with(state, args);
}

/* Longer than the 300 ms between the trickled bytes, shorter than the message takes. */
#define PARTIAL_TRICKLE_USEC 1500000
static int setup_trickle(void **state)
{
        static const char *const args[] = {"--partial-timeout=1500000", NULL};
        return harness_setup_with(state, args);
}

/* A group no test account has, and uids outside it. */
#define ADMIN_GID 64200
#define OUTSIDER  64300

static int setup_admin(void **state)
{
        static const char *const args[] = {"--admin-group=64200", NULL};
        return harness_setup_with(state, args);
}

static int setup_admin_table(void **state)
{
        static const char *const args[] = {"--max-connections=12", "--max-connections-per-uid=4",
                                           "--reserved-connections=2", "--admin-group=64200", NULL};
        return harness_setup_with(state, args);
}

static int setup_timeouts(void **state)
{
        static const char *const args[] = {"--partial-timeout=300000", "--idle-timeout=500000",
                                           NULL};
        return harness_setup_with(state, args);
}

/* timerd with 64 descriptors: room for 16 connections (32 kept for itself, 2 a connection), of
 * which 8 (half) are kept for root. */
#define LOW_FDS        64
#define LOW_FDS_SHARED 8
static int setup_low_fds(void **state)
{
        struct rlimit saved, low;

        assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
        low = (struct rlimit){.rlim_cur = LOW_FDS, .rlim_max = saved.rlim_max};
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
        int r = harness_setup(state);
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
        return r;
}

static void expect_success(json_object *reply)
{
        if (wire_error(reply))
                fail_msg("unexpected error %s", json_object_to_json_string(reply));
        json_object_put(reply);
}

static bool has_field(json_object *reply, const char *field)
{
        json_object *params;
        return json_object_object_get_ex(reply, "parameters", &params) &&
               json_object_object_get_ex(params, field, NULL);
}

/* --- A uid's client in a child process: no cmocka there, plain results. --- */

struct holder {
        const struct harness *h;
        int want;         /* connections to try */
        int report;       /* pipe: the child writes how many it got, then how many were lost */
        int release;      /* pipe: closed by the parent when the child may look and leave */
        int fds[PER_UID]; /* the admitted ones */
        char refusal[64]; /* the limit named by the last refusal */
};

/* The limit an error reply names, copied; "" for a success. */
static void limit_of(json_object *reply, char *buf, size_t size)
{
        json_object *params, *limit;
        buf[0] = '\0';
        if (json_object_object_get_ex(reply, "error", NULL) &&
            json_object_object_get_ex(reply, "parameters", &params) &&
            json_object_object_get_ex(params, "limit", &limit))
                snprintf(buf, size, "%s", json_object_get_string(limit));
}

static int hold(void *arg)
{
        struct holder *c = arg;
        char limit[64];
        int got = 0, lost = 0;

        /* The parent's pipe ends, and the other children's, are not ours to hold open. */
        for (int fd = 3; fd < 1024; fd++)
                if (fd != c->report && fd != c->release)
                        close(fd);
        for (int i = 0; i < c->want; i++) {
                int fd = user_connect(c->h->socket);
                if (fd < 0)
                        return 100;
                /* A refused connection is told why at once and closed: the send may fail. */
                (void)!send(fd, STATUS_CALL, sizeof(STATUS_CALL), MSG_NOSIGNAL);
                json_object *reply = user_recv(fd, 5000);
                if (!reply)
                        return 101;
                limit_of(reply, limit, sizeof(limit));
                json_object_put(reply);
                if (limit[0] == '\0')
                        c->fds[got++] = fd;
                else {
                        /* Refused: it must say which limit, and must be the table's. */
                        if (strcmp(limit, "connections") != 0)
                                return 102;
                        close(fd);
                }
        }
        if (write(c->report, &got, sizeof(got)) != sizeof(got))
                return 103;
        char byte;
        while (read(c->release, &byte, 1) > 0)
                ;
        /* Evicted ones were told LimitExceeded {limit: "connections"} and closed. */
        for (int i = 0; i < got; i++) {
                json_object *reply = user_recv(c->fds[i], 0);
                if (!reply)
                        continue;
                limit_of(reply, limit, sizeof(limit));
                json_object_put(reply);
                if (strcmp(limit, "connections") != 0)
                        return 104;
                if (user_recv(c->fds[i], 2000) != NULL)
                        return 105;
                lost++;
        }
        if (write(c->report, &lost, sizeof(lost)) != sizeof(lost))
                return 106;
        return 0;
}

struct uid_client {
        struct holder holder;
        int report[2], release[2];
        pid_t pid;
        int got, lost;
};

static void client_start(struct uid_client *u, const struct harness *h, uid_t uid, int want)
{
        *u = (struct uid_client){.holder = {.h = h, .want = want}};
        assert_int_equal(pipe2(u->report, O_CLOEXEC), 0);
        assert_int_equal(pipe2(u->release, O_CLOEXEC), 0);
        u->holder.report = u->report[1];
        u->holder.release = u->release[0];
        u->pid = run_as_async(uid, hold, &u->holder);
        assert_true(u->pid > 0);
        close(u->report[1]);
        close(u->release[0]);
        /* Its connections are made before the next uid's: the order is the test's. */
        assert_int_equal(read(u->report[0], &u->got, sizeof(u->got)), sizeof(u->got));
}

static void client_finish(struct uid_client *u)
{
        close(u->release[1]);
        assert_int_equal(read(u->report[0], &u->lost, sizeof(u->lost)), sizeof(u->lost));
        close(u->report[0]);
        assert_int_equal(run_wait(u->pid), 0);
}

/*
 * Four uids each try to hold their maximum (4) in a table of 12 with 2 kept for root: only 10
 * are theirs, shared fairly: a uid under its share evicts from the heaviest, never below it.
 * Root is served on the reserved places, and on a full table takes one from the heaviest uid.
 * Before: the uids filled the table and root got LimitExceeded.
 */
static void test_root_is_served_when_other_uids_fill_the_table(void **state)
{
        struct harness *h = *state;
        struct uid_client clients[N_UIDS];
        int root[RESERVED + 1], alive = 0, evicted = 0;

        if (!users_available())
                skip();
        assert_int_equal(chmod(h->dir, 0755), 0);
        for (int i = 0; i < N_UIDS; i++)
                client_start(&clients[i], h, FIRST_UID + (uid_t)i, PER_UID);

        for (int i = 0; i < RESERVED + 1; i++) {
                root[i] = harness_raw_connect(h);
                json_object *st = wire_call(root[i], STATUS_CALL);
                if (wire_error(st))
                        fail_msg("root refused: %s", json_object_to_json_string(st));
                assert_string_equal(wire_string(st, "scope"), "host");
                if (i == RESERVED)
                        assert_int_equal(wire_int(st, "connections"), TABLE);
                json_object_put(st);
        }

        /* The newcomer was under its fair share (10 / 4): it got in, by eviction. */
        assert_true(clients[N_UIDS - 1].got >= SHARED / N_UIDS);
        for (int i = 0; i < N_UIDS; i++) {
                client_finish(&clients[i]);
                alive += clients[i].got - clients[i].lost;
                evicted += clients[i].lost;
                /* Max-min fair: every uid keeps at least its share (root took one from a uid
                 * above it). */
                assert_true(clients[i].got - clients[i].lost >= SHARED / N_UIDS);
        }
        /* The shared places were full, then root took one of them. */
        assert_int_equal(alive, SHARED - 1);
        assert_true(evicted >= 1);
        for (int i = 0; i < RESERVED + 1; i++)
                close(root[i]);
}

/*
 * A table of one place, held by another uid: root takes it, the other is told and closed.
 * Before: evicting the last live connection freed the session table reserved for root's, and
 * the service aborted on the insertion.
 */
static void test_root_takes_the_only_place(void **state)
{
        struct harness *h = *state;
        struct uid_client other;

        if (!users_available())
                skip();
        assert_int_equal(chmod(h->dir, 0755), 0);
        /* The place is free once the service saw the harness's start-up probe close. */
        for (int tries = 0;; tries++) {
                client_start(&other, h, FIRST_UID, 1);
                if (other.got == 1)
                        break;
                client_finish(&other);
                assert_true(tries < 1000);
                usleep(10 * 1000);
        }

        int fd = harness_raw_connect(h);
        json_object *st = wire_call(fd, STATUS_CALL);
        if (wire_error(st))
                fail_msg("root refused: %s", json_object_to_json_string(st));
        assert_int_equal(wire_int(st, "connections"), 1);
        json_object_put(st);
        client_finish(&other);
        assert_int_equal(other.lost, 1);
        close(fd);
}

/* A uid at its share is refused when the table is full; the held connections are served on. */
static void test_uid_at_its_share_is_refused(void **state)
{
        struct harness *h = *state;
        struct uid_client a, b, again;

        if (!users_available())
                skip();
        assert_int_equal(chmod(h->dir, 0755), 0);
        client_start(&a, h, FIRST_UID, PER_UID);
        client_start(&b, h, FIRST_UID + 1, PER_UID);
        assert_int_equal(a.got, PER_UID);
        assert_int_equal(b.got, PER_UID);
        /* 8 of 10 taken: a third uid gets 2 freely, a third place from a uid holding 4 (it held
         * 2), and is refused the fourth (the heaviest holds 4, not more than 3 + 1). */
        client_start(&again, h, FIRST_UID + 2, PER_UID);
        assert_int_equal(again.got, 3);
        client_finish(&a);
        client_finish(&b);
        client_finish(&again);
        assert_int_equal(a.lost + b.lost + again.lost, 1);
        assert_int_equal(again.lost, 0);
}

/*
 * Out of descriptors, accept() fails for everyone: the other uids' share ends before the
 * descriptor limit would, so one uid's connections cannot keep root from being accepted. Before:
 * the uid's connections took every descriptor and root's connection waited unaccepted.
 */
static void test_descriptors_are_kept_for_root(void **state)
{
        enum { N = 10 }; /* 40 connections wanted: 80 descriptors */
        struct harness *h = *state;
        struct uid_client clients[N];
        int alive = 0;

        if (!users_available())
                skip();
        assert_int_equal(chmod(h->dir, 0755), 0);
        for (int i = 0; i < N; i++)
                client_start(&clients[i], h, FIRST_UID + (uid_t)i, PER_UID);
        for (int i = 0; i < 3; i++) {
                int fd = harness_raw_connect(h);
                json_object *st = wire_call(fd, STATUS_CALL);
                if (wire_error(st))
                        fail_msg("root refused: %s", json_object_to_json_string(st));
                json_object_put(st);
                close(fd);
        }
        for (int i = 0; i < N; i++) {
                client_finish(&clients[i]);
                alive += clients[i].got - clients[i].lost;
        }
        assert_int_equal(alive, LOW_FDS_SHARED);
}

/* Receive one message within timeout_ms; the parsed reply or NULL (EOF or timeout: *ret_eof). */
static json_object *recv_within(int fd, int timeout_ms, bool *ret_eof)
{
        static char buf[4096];
        long n = raw_recv(fd, buf, sizeof(buf), timeout_ms);
        *ret_eof = n == -1;
        return n >= 0 ? json_tokener_parse(buf) : NULL;
}

/* A message begun and never finished is InvalidMessage and closed after --partial-timeout of
 * silence; one finished in time is served. Before: kept forever. */
static void test_half_sent_message_is_reaped(void **state)
{
        static const char part[] = "{\"method\":\"io.timerd.Service.Status\"";
        struct harness *h = *state;
        int slow = harness_raw_connect(h), stuck = harness_raw_connect(h);
        bool eof;

        raw_send(stuck, part, sizeof(part) - 1);
        unsigned long long start = harness_now_usec();
        raw_send(slow, part, sizeof(part) - 1);
        usleep(PARTIAL_USEC / 3);
        raw_send(slow, "}", 2);
        expect_success(wire_recv(slow));

        json_object *r = recv_within(stuck, 5000, &eof);
        if (!r)
                fail_msg("no answer to the half-sent message (%s)", eof ? "closed" : "kept");
        assert_true(harness_now_usec() - start >= PARTIAL_USEC);
        assert_string_equal(wire_error(r), "io.timerd.Timer.InvalidMessage");
        assert_non_null(strstr(wire_string(r, "reason"), "incomplete"));
        json_object_put(r);
        wire_expect_eof(stuck);
        close(stuck);
        /* The one that finished its message is not reaped for it. */
        expect_success(wire_call(slow, STATUS_CALL));
        close(slow);
}

/*
 * A message trickled a byte every 300 ms, each gap well within --partial-timeout, is still closed
 * once --partial-timeout has passed since its first byte: the bound is on the whole message.
 * Before: every byte restarted the clock and the connection was held for as long as it trickled.
 */
static void test_trickled_message_is_bounded_in_total(void **state)
{
        static const char call[] = "{\"method\":\"io.timerd.Service.Status\",\"parameters\":{}}";
        enum { GAP_USEC = 300000, TRICKLE_LIMIT_USEC = 4 * PARTIAL_TRICKLE_USEC };
        struct harness *h = *state;
        int fd = harness_raw_connect(h);
        char buf[4096];
        long n = -2;

        /* A whole call first: a finished message does not count against the next one's time. */
        expect_success(wire_call(fd, STATUS_CALL));
        unsigned long long start = harness_now_usec();
        for (size_t i = 0; i < sizeof(call) - 1; i++) {
                if (send(fd, &call[i], 1, MSG_NOSIGNAL) < 0)
                        break; /* closed: the reply waits in the socket */
                n = raw_recv(fd, buf, sizeof(buf), GAP_USEC / 1000);
                if (n != -2 || harness_now_usec() - start > TRICKLE_LIMIT_USEC)
                        break;
        }
        unsigned long long took = harness_now_usec() - start;
        if (n == -2)
                n = raw_recv(fd, buf, sizeof(buf), 0);
        if (n < 0)
                fail_msg("a message trickled for %llu ms was %s", took / 1000,
                         n == -1 ? "closed unanswered" : "kept");
        json_object *r = json_tokener_parse(buf);
        assert_string_equal(wire_error(r), "io.timerd.Timer.InvalidMessage");
        assert_non_null(strstr(wire_string(r, "reason"), "incomplete"));
        json_object_put(r);
        wire_expect_eof(fd);
        close(fd);
        /* Closed at the bound (reaps batch within 250 ms), not a gap's silence before. */
        assert_true(took >= PARTIAL_TRICKLE_USEC);
        assert_true(took < PARTIAL_TRICKLE_USEC + 1000000);
}

#define REGISTER_TRANSIENT                                                                         \
        "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":\"mine\","              \
        "\"declaration\":{\"policy\":\"once\"}}}"
#define REGISTER_FAR                                                                               \
        "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":\"far\","               \
        "\"declaration\":{\"policy\":\"once\",\"lifetime\":\"retained\"},"                         \
        "\"delay_usec\":600000000}}"

/*
 * With no call, parked request, subscription or transient timer for --idle-timeout a connection
 * is told LimitExceeded {limit: "idle_usec"} and closed. A parked Wait, a Subscribe stream and a
 * transient timer keep theirs. Before: an idle connection was kept forever.
 */
static void test_idle_connection_is_reaped(void **state)
{
        struct harness *h = *state;
        int idle = harness_raw_connect(h), waiting = harness_raw_connect(h);
        int subscribed = harness_raw_connect(h), holding = harness_raw_connect(h);
        bool eof;

        unsigned long long start = harness_now_usec();
        expect_success(wire_call(idle, REGISTER_FAR));
        expect_success(wire_call(holding, REGISTER_TRANSIENT));
        wire_send(waiting, "{\"method\":\"io.timerd.Timer.Wait\",\"parameters\":{\"names\":"
                           "[\"far\"],\"timeout_usec\":2000000}}");
        wire_send(subscribed, "{\"method\":\"io.timerd.Service.Subscribe\",\"more\":true}");

        json_object *r = recv_within(idle, 5000, &eof);
        if (!r)
                fail_msg("the idle connection was not told (%s)", eof ? "closed" : "kept");
        assert_true(harness_now_usec() - start >= IDLE_USEC);
        assert_string_equal(wire_error(r), "io.timerd.Timer.LimitExceeded");
        assert_string_equal(wire_string(r, "limit"), "idle_usec");
        assert_int_equal(wire_int(r, "max"), IDLE_USEC);
        json_object_put(r);
        wire_expect_eof(idle);
        close(idle);

        /* Three idle timeouts on, the others are still there. */
        usleep(3 * IDLE_USEC);
        r = recv_within(waiting, 5000, &eof);
        assert_non_null(r);
        assert_string_equal(wire_error(r), "io.timerd.Timer.Timeout");
        json_object_put(r);
        expect_success(wire_call(holding, STATUS_CALL));
        while ((r = recv_within(subscribed, 0, &eof)))
                json_object_put(r); /* events, if any */
        assert_false(eof);
        /* Its Wait answered, the waiting connection is idle in its turn. */
        r = recv_within(waiting, 5000, &eof);
        assert_non_null(r);
        assert_string_equal(wire_string(r, "limit"), "idle_usec");
        json_object_put(r);
        close(waiting);
        close(subscribed);
        close(holding);
}

static uint64_t wakeups(int fd)
{
        json_object *st = wire_call(fd, STATUS_CALL);
        int64_t n = wire_int(st, "wakeups");
        json_object_put(st);
        assert_true(n >= 0);
        return (uint64_t)n;
}

/* Reaps are kernel timers armed for when one is due: connections that wait for nothing due soon
 * (default timeouts) cost no wake-up. */
static void test_timeouts_cost_no_wakeups(void **state)
{
        struct harness *h = *state;
        int control = harness_raw_connect(h), quiet[8];
        static const char part[] = "{\"method\":";

        for (int i = 0; i < 8; i++) {
                quiet[i] = harness_raw_connect(h);
                expect_success(wire_call(quiet[i], STATUS_CALL));
        }
        raw_send(quiet[0], part, sizeof(part) - 1);
        uint64_t before = wakeups(control);
        usleep(2000000);
        /* The Status call itself: its request and at most a stray completion. */
        assert_true(wakeups(control) - before <= 3);
        for (int i = 0; i < 8; i++)
                close(quiet[i]);
        close(control);
}

static int status_as_user(void *arg)
{
        const struct harness *h = arg;
        struct timerd *t;
        struct timerd_status st;

        if (timerd_connect(h->socket, &t) < 0)
                return 10;
        int fd = user_connect(h->socket);
        if (fd < 0)
                return 11;
        static const char reg[] = REGISTER_TRANSIENT;
        if (send(fd, reg, sizeof(reg), MSG_NOSIGNAL) < 0)
                return 12;
        json_object *r = user_recv(fd, 5000);
        if (!r || json_object_object_get_ex(r, "error", NULL))
                return 13;
        json_object_put(r);
        if (send(fd, STATUS_CALL, sizeof(STATUS_CALL), MSG_NOSIGNAL) < 0)
                return 14;
        r = user_recv(fd, 5000);
        if (!r)
                return 15;
        /* Its own timer and its two connections; none of the activity of others. */
        int result = 0;
        const char *scope = wire_string(r, "scope");
        if (!scope || strcmp(scope, "caller") != 0)
                result = 16;
        else if (wire_int(r, "timers") != 1 || wire_int(r, "scheduled") != 0 ||
                 wire_int(r, "connections") != 2 || wire_int(r, "waiters") != 0)
                result = 17;
        else if (has_field(r, "firings") || has_field(r, "iterations") || has_field(r, "wakeups") ||
                 has_field(r, "lateness") || has_field(r, "signals_sent") ||
                 has_field(r, "overruns"))
                result = 18;
        json_object_put(r);
        /* The library tells the two apart. */
        if (result == 0 && (timerd_status(t, &st) < 0 || st.host_wide || st.timers != 1 ||
                            st.connections != 2 || st.iterations != 0))
                result = 19;
        timerd_close(t);
        close(fd);
        return result;
}

/* Status as an unprivileged uid: its own timers, connections and parked requests only. Root sees
 * everyone's. Before: the unprivileged caller saw root's timers counted. */
static void test_status_is_per_caller(void **state)
{
        struct harness *h = *state;
        int root = harness_raw_connect(h);

        if (!users_available())
                skip();
        assert_int_equal(chmod(h->dir, 0755), 0);
        expect_success(wire_call(root, REGISTER_FAR));
        expect_success(wire_call(root, REGISTER_TRANSIENT));
        assert_int_equal(run_as(USER_A, status_as_user, h), 0);

        json_object *st = wire_call(root, STATUS_CALL);
        assert_string_equal(wire_string(st, "scope"), "host");
        /* Root's two, and the other's until the service notices its connection closed. */
        assert_true(wire_int(st, "timers") >= 2);
        assert_int_equal(wire_int(st, "scheduled"), 1);
        assert_true(wire_int(st, "iterations") > 0);
        assert_true(has_field(st, "lateness"));
        json_object_put(st);
        close(root);
}

/* Send a call from a child, and its reply within 5 s (NULL on EOF or timeout). */
/* The reply's error name is `error` (NULL: a success); the reply is released. */
static bool reply_is(json_object *reply, const char *error)
{
        const char *got = reply ? wire_error(reply) : "no reply";
        bool same = error ? got && strcmp(got, error) == 0 : got == NULL;
        json_object_put(reply);
        return same;
}

static bool status_scope_is(int fd, const char *scope)
{
        json_object *st = user_call(fd, STATUS_CALL);
        const char *got = st ? wire_string(st, "scope") : NULL;
        bool same = got && strcmp(got, scope) == 0;
        json_object_put(st);
        return same;
}

#define PERMISSION_DENIED "org.varlink.service.PermissionDenied"

struct other_owner {
        const struct harness *h;
        int64_t generation; /* of USER_B's timer "theirs" */
        bool control;       /* also cancel it */
};

/* A member of the admin group: lists every owner's timers, sees the host's Status, and controls
 * USER_B's timer as root would. */
static int act_as_admin(void *arg)
{
        const struct other_owner *o = arg;
        int fd = user_connect(o->h->socket);
        int result = 0;

        if (fd < 0)
                return 10;
        json_object *list = user_call(fd, "{\"method\":\"io.timerd.Timer.List\","
                                          "\"parameters\":{\"all\":true}}");
        json_object *timers = NULL;
        if (!list || wire_error(list) || !json_object_object_get_ex(list, "parameters", &timers) ||
            !json_object_object_get_ex(timers, "timers", &timers) ||
            json_object_array_length(timers) != 1 ||
            json_object_get_int64(
                json_object_object_get(json_object_array_get_idx(timers, 0), "owner")) != USER_B)
                result = 11;
        json_object_put(list);
        if (result == 0 && !status_scope_is(fd, "host"))
                result = 12;
        if (result == 0 && o->control &&
            !reply_is(user_call(fd,
                                "{\"method\":\"io.timerd.Timer.Cancel\",\"parameters\":{"
                                "\"claim\":{\"name\":\"theirs\",\"generation\":%lld},"
                                "\"owner\":%u}}",
                                (long long)o->generation, (unsigned)USER_B),
                      NULL))
                result = 13;
        close(fd);
        return result;
}

/* Not a member: its own timers and figures only. */
static int act_as_outsider(void *arg)
{
        const struct other_owner *o = arg;
        int fd = user_connect(o->h->socket);
        int result = 0;

        if (fd < 0)
                return 20;
        if (!reply_is(user_call(fd, "{\"method\":\"io.timerd.Timer.List\","
                                    "\"parameters\":{\"all\":true}}"),
                      PERMISSION_DENIED))
                result = 21;
        else if (!reply_is(user_call(fd,
                                     "{\"method\":\"io.timerd.Timer.Cancel\",\"parameters\":{"
                                     "\"claim\":{\"name\":\"theirs\",\"generation\":%lld},"
                                     "\"owner\":%u}}",
                                     (long long)o->generation, (unsigned)USER_B),
                           PERMISSION_DENIED))
                result = 22;
        else if (!status_scope_is(fd, "caller"))
                result = 23;
        close(fd);
        return result;
}

/*
 * With --admin-group, a member (by a supplementary group, and by its primary group) lists every
 * owner's timers, sees Status for the host and cancels another uid's timer; a non-member gets
 * PermissionDenied and its own figures. Before: only uid 0 could; a member was refused.
 */
static void test_admin_group_acts_for_every_owner(void **state)
{
        struct harness *h = *state;
        int root = harness_raw_connect(h);

        if (!users_available())
                skip();
        assert_int_equal(chmod(h->dir, 0755), 0);
        json_object *r = wire_call(root,
                                   "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{"
                                   "\"name\":\"theirs\",\"owner\":%u,\"declaration\":{"
                                   "\"policy\":\"once\",\"lifetime\":\"retained\"},"
                                   "\"delay_usec\":600000000}}",
                                   (unsigned)USER_B);
        struct other_owner o = {.h = h, .generation = wire_int(r, "claim.generation")};
        expect_success(r);
        assert_true(o.generation > 0);

        assert_int_equal(run_as(OUTSIDER, act_as_outsider, &o), 0);
        assert_int_equal(run_as_groups(USER_A, ADMIN_GID, (gid_t)-1, act_as_admin, &o), 0);
        o.control = true;
        assert_int_equal(run_as_groups(USER_A, USER_A, ADMIN_GID, act_as_admin, &o), 0);

        r = wire_call(root,
                      "{\"method\":\"io.timerd.Timer.Get\",\"parameters\":{"
                      "\"name\":\"theirs\",\"owner\":%u}}",
                      (unsigned)USER_B);
        assert_string_equal(wire_string(r, "timer.state"), "inactive");
        json_object_put(r);
        close(root);
}

/* A member of the admin group: three connections on a table the other uids filled, each served
 * with the host's Status. */
static int admin_connects(void *arg)
{
        const struct harness *h = arg;
        int fds[RESERVED + 1], result = 0;

        for (int i = 0; i < RESERVED + 1; i++) {
                fds[i] = user_connect(h->socket);
                if (fds[i] < 0)
                        return 30;
                json_object *st = user_call(fds[i], STATUS_CALL);
                const char *scope = st ? wire_string(st, "scope") : NULL;
                if (!st || wire_error(st) || !scope || strcmp(scope, "host") != 0)
                        result = 31;
                else if (i == RESERVED && wire_int(st, "connections") != TABLE)
                        result = 32;
                json_object_put(st);
                if (result)
                        return result;
        }
        for (int i = 0; i < RESERVED + 1; i++)
                close(fds[i]);
        return 0;
}

/* The admin group shares root's reserved places and evicts on a full table, as root does. Before:
 * its members were other uids, and were refused once those filled the table. */
static void test_admin_group_is_served_when_other_uids_fill_the_table(void **state)
{
        struct harness *h = *state;
        struct uid_client clients[N_UIDS];
        int alive = 0, evicted = 0;

        if (!users_available())
                skip();
        assert_int_equal(chmod(h->dir, 0755), 0);
        for (int i = 0; i < N_UIDS; i++)
                client_start(&clients[i], h, FIRST_UID + (uid_t)i, PER_UID);
        assert_int_equal(run_as_groups(USER_A, USER_A, ADMIN_GID, admin_connects, h), 0);
        for (int i = 0; i < N_UIDS; i++) {
                client_finish(&clients[i]);
                alive += clients[i].got - clients[i].lost;
                evicted += clients[i].lost;
        }
        /* The shared places were full, then the member took one of them. */
        assert_int_equal(alive, SHARED - 1);
        assert_true(evicted >= 1);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_root_is_served_when_other_uids_fill_the_table,
                                            setup_table, harness_teardown),
            cmocka_unit_test_setup_teardown(test_uid_at_its_share_is_refused, setup_table,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_root_takes_the_only_place, setup_table_of_one,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_descriptors_are_kept_for_root, setup_low_fds,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_half_sent_message_is_reaped, setup_timeouts,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_trickled_message_is_bounded_in_total,
                                            setup_trickle, harness_teardown),
            cmocka_unit_test_setup_teardown(test_idle_connection_is_reaped, setup_timeouts,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_timeouts_cost_no_wakeups, harness_setup,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_status_is_per_caller, harness_setup,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_admin_group_acts_for_every_owner, setup_admin,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(
                test_admin_group_is_served_when_other_uids_fill_the_table, setup_admin_table,
                harness_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
