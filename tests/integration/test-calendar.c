/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Calendar timers against the real service (issue 17): Register with expressions and a zone, Get
 * answers the zone in effect and the normalized forms, typed refusals that point at the bad part,
 * firings at whole elapses that never overlap a run, and the re-evaluation a SIGHUP makes (it
 * reloads the time zones), counted in Status.
 */

#include <json-c/json.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "zoneinfo/zoneinfo.h"

#define SEC    UINT64_C(1000000)
#define MINUTE (60 * SEC)

static uint64_t realtime_usec(void)
{
        struct timespec ts;

        assert_int_equal(clock_gettime(CLOCK_REALTIME, &ts), 0);
        return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec / 1000;
}

static struct timerd_declaration calendar_decl(const char *calendar, const char *zone)
{
        struct timerd_declaration d;

        timerd_declaration_init(&d, TIMERD_POLICY_CALENDAR, 0);
        snprintf(d.calendar, sizeof(d.calendar), "%s", calendar);
        snprintf(d.timezone, sizeof(d.timezone), "%s", zone);
        return d;
}

/* One raw call; the reply parsed (the caller puts it). */
static json_object *raw_call(int fd, const char *json)
{
        char buf[65536];
        json_object *o;
        long n;

        raw_send(fd, json, strlen(json) + 1);
        n = raw_recv(fd, buf, sizeof(buf), 10000);
        assert_true(n >= 0);
        o = json_tokener_parse(buf);
        assert_non_null(o);
        return o;
}

static const char *string_at(json_object *o, const char *a, const char *b)
{
        json_object *v;

        assert_true(json_object_object_get_ex(o, a, &v));
        assert_true(json_object_object_get_ex(v, b, &v));
        return json_object_get_string(v);
}

static void test_register_and_get(void **state)
{
        struct timerd *t = harness_connect(*state);
        struct timerd_declaration d =
            calendar_decl("Mon..Fri *-*-* 03:00\n*:0/15\ncron:0 3 * * 1-5", "Europe/Berlin");
        struct timerd_claim claim;
        struct timerd_timer timer;
        uint64_t before = realtime_usec();

        d.lifetime = TIMERD_LIFETIME_RETAINED;
        assert_int_equal(timerd_register(t, "nightly", &d, NULL, false, &claim), 0);
        assert_int_equal(timerd_get(t, "nightly", TIMERD_OWNER_SELF, &timer), 0);
        assert_int_equal(timer.declaration.policy, TIMERD_POLICY_CALENDAR);
        assert_int_equal(timer.declaration.clock, TIMERD_CLOCK_REALTIME);
        assert_string_equal(timer.declaration.calendar, d.calendar);
        assert_string_equal(timer.declaration.timezone, "Europe/Berlin");
        assert_string_equal(timer.calendar_normalized,
                            "Mon..Fri *-*-* 03:00:00\n*-*-* *:00/15:00\nMon..Fri *-*-* 03:00:00");
        /* Berlin is a whole number of hours off UTC: the next quarter hour, strictly after now. */
        assert_true(timer.has_next);
        assert_int_equal(timer.next_usec % (15 * MINUTE), 0);
        assert_true(timer.next_usec > before && timer.next_usec <= realtime_usec() + 15 * MINUTE);
        timerd_close(t);
}

/* Without a zone a timer follows the service's local zone, and Get names it. */
static void test_local_zone_is_named(void **state)
{
        struct timerd *t = harness_connect(*state);
        struct timerd_declaration d = calendar_decl("daily", "");
        char local[CALENDAR_ZONE_MAX];
        struct timerd_claim claim;
        struct timerd_timer timer;

        zoneinfo_local_name(local);
        assert_int_equal(timerd_register(t, "daily", &d, NULL, false, &claim), 0);
        assert_int_equal(timerd_get(t, "daily", TIMERD_OWNER_SELF, &timer), 0);
        assert_string_equal(timer.declaration.timezone, local);
        assert_string_equal(timer.calendar_normalized, "*-*-* 00:00:00");
        timerd_close(t);
}

/* Issue 17: a client that leaves the zone out and one that names the service's local zone declare
 * the same timer; a restarted client spelling it the other way reconciles without a conflict. */
static void test_reconcile_local_zone_either_way(void **state)
{
        struct timerd *t = harness_connect(*state);
        struct timerd_declaration implicit = calendar_decl("daily", ""), named;
        char local[CALENDAR_ZONE_MAX];
        struct timerd_claim claim;
        bool created;

        zoneinfo_local_name(local);
        named = calendar_decl("daily", local);
        implicit.lifetime = named.lifetime = TIMERD_LIFETIME_RETAINED;
        assert_int_equal(
            timerd_reconcile(t, "job", &implicit, TIMERD_DESIRED_SCHEDULED, 0, &claim, &created),
            0);
        assert_true(created);
        assert_int_equal(
            timerd_reconcile(t, "job", &named, TIMERD_DESIRED_SCHEDULED, 0, &claim, &created), 0);
        assert_false(created);
        assert_int_equal(
            timerd_reconcile(t, "job", &implicit, TIMERD_DESIRED_SCHEDULED, 0, &claim, &created),
            0);
        assert_false(created);
        timerd_close(t);
}

static void test_refusals(void **state)
{
        static const struct {
                const char *calendar, *zone;
                int clock;
                const char *error, *reason, *description;
        } bad[] = {
            {"*-02-30", "UTC", TIMERD_CLOCK_REALTIME, "io.timerd.Timer.InvalidSchedule",
             "calendar_never",
             "declaration.calendar[0] at byte 0 (\"*-02-30\"): the expression can never elapse"},
            {"Mon..Fri 25:00", "UTC", TIMERD_CLOCK_REALTIME, "io.timerd.Timer.InvalidSchedule",
             "calendar_invalid",
             "declaration.calendar[0] at byte 9 (\"25:00\"): a value is outside its field, or a "
             "range is empty"},
            {"cron:0 3 * 13 *", "UTC", TIMERD_CLOCK_REALTIME, "io.timerd.Timer.InvalidSchedule",
             "calendar_invalid",
             "declaration.cron[0] at byte 6 (\"13 *\"): a value is outside its field, or a range "
             "is empty"},
            {"daily", "UTC", TIMERD_CLOCK_MONOTONIC, "io.timerd.Timer.InvalidSchedule",
             "calendar_clock", NULL},
            {"daily", "Mars/Olympus_Mons", TIMERD_CLOCK_REALTIME,
             "org.varlink.service.InvalidParameter", NULL, NULL},
            {"daily", "../../etc/passwd", TIMERD_CLOCK_REALTIME,
             "org.varlink.service.InvalidParameter", NULL, NULL},
        };
        struct timerd *t = harness_connect(*state);
        struct timerd_claim claim;
        struct timerd_timer timer;
        int fd = harness_raw_connect(*state);
        json_object *reply;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                struct timerd_declaration d = calendar_decl(bad[i].calendar, bad[i].zone);

                d.clock = (enum timerd_clock)bad[i].clock;
                assert_true(timerd_register(t, "bad", &d, NULL, false, &claim) < 0);
                assert_string_equal(timerd_last_error_name(t), bad[i].error);
                if (bad[i].reason)
                        assert_string_equal(timerd_last_error_reason(t), bad[i].reason);
                /* libtimerd keeps what points at the bad part. */
                if (bad[i].description)
                        assert_string_equal(timerd_last_error_description(t), bad[i].description);
        }
        /* Nothing was made. */
        assert_int_equal(timerd_get(t, "bad", TIMERD_OWNER_SELF, &timer), -TIMERD_E_NOT_FOUND);

        /* The description names the expression and the byte where the bad part starts; an unknown
         * zone names the parameter. */
        reply = raw_call(fd, "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":"
                             "\"bad\",\"declaration\":{\"policy\":\"calendar\",\"calendar\":["
                             "\"daily\"],\"cron\":[\"0 3 * 13 *\"]}}}");
        assert_non_null(
            strstr(string_at(reply, "parameters", "description"), "declaration.cron[0] at byte 6"));
        json_object_put(reply);
        reply = raw_call(fd, "{\"method\":\"io.timerd.Timer.Register\",\"parameters\":{\"name\":"
                             "\"bad\",\"declaration\":{\"policy\":\"calendar\",\"calendar\":["
                             "\"daily\"],\"timezone\":\"Nowhere/Zone\"}}}");
        assert_string_equal(string_at(reply, "parameters", "parameter"), "declaration.timezone");
        json_object_put(reply);
        close(fd);
        timerd_close(t);
}

/* Every second: each firing is a whole second; a run that takes 2.5 s gets one firing at its end
 * (the last elapse that passed), the others counted as overruns. */
static void test_fires_at_elapses_without_overlap(void **state)
{
        struct timerd *t = harness_connect(*state);
        struct timerd_declaration d = calendar_decl("*:*:*", "UTC");
        struct timerd_firing first, second;
        struct timerd_claim claim;
        struct timerd_timer timer;

        assert_int_equal(timerd_register(t, "tick", &d, NULL, false, &claim), 0);
        assert_int_equal(timerd_wait(t, (const char *[]){"tick"}, 1, 5 * SEC, &first), 0);
        assert_int_equal(first.deadline_usec % SEC, 0);
        usleep(2500000);
        assert_int_equal(
            timerd_complete(t, &first.token, TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_CONTINUE, 0),
            0);
        assert_int_equal(timerd_wait(t, (const char *[]){"tick"}, 1, 5 * SEC, &second), 0);
        assert_int_equal(second.deadline_usec % SEC, 0);
        assert_true(second.deadline_usec >= first.deadline_usec + 2 * SEC);
        assert_int_equal(timerd_get(t, "tick", TIMERD_OWNER_SELF, &timer), 0);
        assert_true(timer.overruns >= 1);
        assert_int_equal(
            timerd_complete(t, &second.token, TIMERD_OUTCOME_SUCCESS, TIMERD_DIRECTIVE_STOP, 0), 0);
        timerd_close(t);
}

static uint64_t reevaluations(int fd)
{
        json_object *reply = raw_call(fd, "{\"method\":\"io.timerd.Service.Status\"}"), *v;
        uint64_t n;

        assert_true(json_object_object_get_ex(reply, "parameters", &v) &&
                    json_object_object_get_ex(v, "calendar_reevaluations", &v));
        n = (uint64_t)json_object_get_uint64(v);
        json_object_put(reply);
        return n;
}

/* SIGHUP reloads the zones and re-evaluates every calendar timer; Status counts it. */
static void test_sighup_reevaluates(void **state)
{
        struct harness *h = *state;
        struct timerd *t = harness_connect(h);
        struct timerd_declaration d = calendar_decl("*-*-* 03:00", "Europe/Berlin");
        struct timerd_timer before, after;
        struct timerd_claim claim;
        int fd = harness_raw_connect(h);
        uint64_t n = reevaluations(fd);

        assert_int_equal(timerd_register(t, "berlin", &d, NULL, false, &claim), 0);
        assert_int_equal(timerd_get(t, "berlin", TIMERD_OWNER_SELF, &before), 0);
        assert_int_equal(kill(h->pid, SIGHUP), 0);
        for (int i = 0; i < 100 && reevaluations(fd) == n; i++)
                usleep(20000);
        assert_int_equal(reevaluations(fd), n + 1);
        /* The zone data did not change: the same elapse. */
        assert_int_equal(timerd_get(t, "berlin", TIMERD_OWNER_SELF, &after), 0);
        assert_int_equal(after.next_usec, before.next_usec);
        assert_int_equal(after.generation, before.generation);
        close(fd);
        timerd_close(t);
}

/* A private zone directory (".../zoneinfo", as /etc/localtime's link must say) and a private
 * /etc, for the service to watch. */
struct zone_fixture {
        struct harness *h;
        char dir[64];
};

static void run(const char *command)
{
        assert_int_equal(system(command), 0);
}

static int zone_files_setup(void **state)
{
        struct zone_fixture *z = calloc(1, sizeof(*z));
        char command[512];
        void *h;

        assert_non_null(z);
        snprintf(z->dir, sizeof(z->dir), "/tmp/timerd-zones.XXXXXX");
        assert_non_null(mkdtemp(z->dir));
        snprintf(command, sizeof(command),
                 "cd %s && mkdir -p zoneinfo/Europe zoneinfo/Asia zoneinfo/America etc && "
                 "cp /usr/share/zoneinfo/Europe/Berlin zoneinfo/Europe/ && "
                 "cp /usr/share/zoneinfo/Asia/Tokyo zoneinfo/Asia/ && "
                 "cp /usr/share/zoneinfo/America/New_York zoneinfo/America/ && "
                 "ln -s %s/zoneinfo/Europe/Berlin etc/localtime",
                 z->dir, z->dir);
        run(command);
        snprintf(command, sizeof(command), "%s/zoneinfo", z->dir);
        assert_int_equal(setenv("TZDIR", command, 1), 0);
        snprintf(command, sizeof(command), "%s/etc", z->dir);
        assert_int_equal(setenv("TIMERD_ZONE_CONFIG_DIR", command, 1), 0);
        harness_setup(&h);
        unsetenv("TZDIR");
        unsetenv("TIMERD_ZONE_CONFIG_DIR");
        z->h = h;
        *state = z;
        return 0;
}

static int zone_files_teardown(void **state)
{
        struct zone_fixture *z = *state;
        char command[128];
        void *h = z->h;

        harness_teardown(&h);
        snprintf(command, sizeof(command), "rm -rf %s", z->dir);
        run(command);
        free(z);
        return 0;
}

/* The next 03:00 after now in `zone`, as the system's zone files say. */
static uint64_t next_0300(const char *zone)
{
        struct calendar_error error;
        struct calendar_spec *spec = calloc(1, sizeof(*spec));
        struct tz_zone *tz;
        int64_t next;

        assert_non_null(spec);
        assert_int_equal(zoneinfo_load(zone, &tz, NULL), 0);
        assert_int_equal(calendar_parse("*-*-* 03:00", spec, &error), 0);
        assert_int_equal(calendar_next(spec, tz, (int64_t)realtime_usec(), &next), 0);
        tz_zone_free(tz);
        free(spec);
        return (uint64_t)next;
}

static void wait_reevaluations(int fd, uint64_t n)
{
        for (int i = 0; i < 250 && reevaluations(fd) < n; i++)
                usleep(20000);
        assert_int_equal(reevaluations(fd), n);
}

/* Issue 17: a tzdata update (a zone file replaced) and a new local zone (the /etc/localtime link
 * replaced) re-evaluate the calendar timers without a restart or SIGHUP; a file no timer uses
 * does not. */
static void test_zone_files_watched(void **state)
{
        struct zone_fixture *z = *state;
        struct timerd *t = harness_connect(z->h);
        struct timerd_declaration named = calendar_decl("*-*-* 03:00", "Europe/Berlin"),
                                  local = calendar_decl("*-*-* 03:00", "");
        struct timerd_claim claim;
        struct timerd_timer timer;
        int fd = harness_raw_connect(z->h);
        uint64_t n = reevaluations(fd);
        char command[512];

        assert_int_equal(timerd_register(t, "named", &named, NULL, false, &claim), 0);
        assert_int_equal(timerd_register(t, "local", &local, NULL, false, &claim), 0);
        assert_int_equal(timerd_get(t, "local", TIMERD_OWNER_SELF, &timer), 0);
        assert_string_equal(timer.declaration.timezone, "Europe/Berlin");
        assert_int_equal(timer.next_usec, next_0300("Europe/Berlin"));

        /* The local zone becomes Tokyo, as timedatectl does it: a new link renamed over it. */
        snprintf(command, sizeof(command),
                 "ln -s %s/zoneinfo/Asia/Tokyo %s/etc/localtime.new && "
                 "mv -T %s/etc/localtime.new %s/etc/localtime",
                 z->dir, z->dir, z->dir, z->dir);
        run(command);
        wait_reevaluations(fd, ++n);
        assert_int_equal(timerd_get(t, "local", TIMERD_OWNER_SELF, &timer), 0);
        assert_string_equal(timer.declaration.timezone, "Asia/Tokyo");
        assert_int_equal(timer.next_usec, next_0300("Asia/Tokyo"));
        assert_int_equal(timerd_get(t, "named", TIMERD_OWNER_SELF, &timer), 0);
        assert_int_equal(timer.next_usec, next_0300("Europe/Berlin"));

        /* A file no timer reads changes nothing. */
        snprintf(command, sizeof(command),
                 "cp /usr/share/zoneinfo/Asia/Tokyo %s/zoneinfo/Europe/Paris", z->dir);
        run(command);
        usleep(200000);
        assert_int_equal(reevaluations(fd), n);

        /* A tzdata update: Europe/Berlin's file replaced (here by New York's rules). */
        snprintf(command, sizeof(command),
                 "cp /usr/share/zoneinfo/America/New_York %s/zoneinfo/Europe/Berlin.new && "
                 "mv %s/zoneinfo/Europe/Berlin.new %s/zoneinfo/Europe/Berlin",
                 z->dir, z->dir, z->dir);
        run(command);
        wait_reevaluations(fd, ++n);
        assert_int_equal(timerd_get(t, "named", TIMERD_OWNER_SELF, &timer), 0);
        assert_string_equal(timer.declaration.timezone, "Europe/Berlin");
        assert_int_equal(timer.next_usec, next_0300("America/New_York"));
        close(fd);
        timerd_close(t);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_register_and_get, harness_setup, harness_teardown),
            cmocka_unit_test_setup_teardown(test_local_zone_is_named, harness_setup,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_reconcile_local_zone_either_way, harness_setup,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_refusals, harness_setup, harness_teardown),
            cmocka_unit_test_setup_teardown(test_fires_at_elapses_without_overlap, harness_setup,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_sighup_reevaluates, harness_setup,
                                            harness_teardown),
            cmocka_unit_test_setup_teardown(test_zone_files_watched, zone_files_setup,
                                            zone_files_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
