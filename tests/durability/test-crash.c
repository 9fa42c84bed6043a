/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * kill -9 at random moments. Workers, each on a connection of its own, create, change and remove
 * retained timers through libtimerd while the test kills the service after a random time, starts
 * it again on the same state directory and checks every timer: each acknowledged change is there,
 * and a change whose answer never arrived either happened whole or not at all (a Reschedule's new
 * deadline never without its new cadence; a Register's cadence never with the old generation).
 */

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "durability.h"

#define N_WORKERS 4
#define N_NAMES   8
#define N_KILLS   30
#define SEC       1000000ull

enum op_kind {
        OP_REGISTER,
        OP_RESCHEDULE,
        OP_UNREGISTER,
};

/* What the service acknowledged for a name. */
struct known {
        bool exists;
        uint64_t generation;
        uint64_t cadence_usec; /* unique per change: tells which change a timer carries */
        uint64_t deadline_usec;
};

struct in_flight {
        bool active;
        enum op_kind kind;
        int slot;
        uint64_t cadence_usec;
        uint64_t deadline_usec;
};

struct worker {
        int id;
        char socket[96];
        pthread_t thread;
        struct known names[N_NAMES];
        struct in_flight flight;
        uint64_t rng;
        uint64_t marker;
        uint64_t acknowledged;
        int unexpected; /* a typed error no acknowledged state explains */
};

struct totals {
        uint64_t acknowledged;
        uint64_t unanswered_made;
        uint64_t unanswered_not_made;
};

static uint64_t rnd(uint64_t *state, uint64_t n)
{
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        return *state % n;
}

static void slot_name(const struct worker *w, int slot, char *buf, size_t size)
{
        snprintf(buf, size, "w%d-n%d", w->id, slot);
}

/* One change to a random name; false when the connection broke (the service was killed). */
static bool worker_step(struct worker *w, struct timerd *t)
{
        int slot = (int)rnd(&w->rng, N_NAMES);
        struct known *k = &w->names[slot];
        struct timerd_claim claim = {.generation = k->generation}, got;
        struct timerd_declaration d;
        struct timerd_start at;
        char name[32];
        int r;

        slot_name(w, slot, name, sizeof(name));
        snprintf(claim.name, sizeof(claim.name), "%s", name);
        w->flight = (struct in_flight){
            .active = true,
            .kind = !k->exists ? OP_REGISTER : (enum op_kind)rnd(&w->rng, 3),
            .slot = slot,
            .cadence_usec = 3600 * SEC + ++w->marker,
            .deadline_usec = dur_now() + 7200 * SEC + w->marker,
        };
        at = (struct timerd_start){.kind = TIMERD_START_AT, .usec = w->flight.deadline_usec};
        switch (w->flight.kind) {
        case OP_REGISTER:
                timerd_declaration_init(&d, TIMERD_POLICY_INTERVAL, w->flight.cadence_usec);
                d.lifetime = TIMERD_LIFETIME_RETAINED;
                r = timerd_register(t, name, &d, &at, true, &got);
                if (r == 0)
                        *k = (struct known){true, got.generation, w->flight.cadence_usec,
                                            w->flight.deadline_usec};
                break;
        case OP_RESCHEDULE:
                r = timerd_reschedule(t, &claim, NULL, &at, w->flight.cadence_usec, NULL, NULL);
                if (r == 0) {
                        k->cadence_usec = w->flight.cadence_usec;
                        k->deadline_usec = w->flight.deadline_usec;
                }
                break;
        default:
                r = timerd_unregister(t, &claim);
                if (r == 0)
                        k->exists = false;
                break;
        }
        if (r == 0) {
                w->flight.active = false;
                w->acknowledged++;
                return true;
        }
        if (r <= -TIMERD_E_BASE && r != -TIMERD_E_DISCONNECTED) {
                fprintf(stderr, "worker %d: %s on %s: %s\n", w->id,
                        w->flight.kind == OP_REGISTER ? "Register" : "a control call", name,
                        timerd_strerror(r));
                w->unexpected++;
        }
        return false;
}

static void *worker_run(void *userdata)
{
        struct worker *w = userdata;
        struct timerd *t;

        if (timerd_connect(w->socket, &t) < 0)
                return NULL;
        while (worker_step(w, t))
                ;
        timerd_close(t);
        return NULL;
}

static bool carries(const struct timerd_timer *tm, const struct known *k)
{
        return tm->generation == k->generation && tm->live_cadence_usec == k->cadence_usec &&
               tm->has_next && tm->next_usec == k->deadline_usec &&
               tm->declaration.lifetime == TIMERD_LIFETIME_RETAINED;
}

/* Check one name against what was acknowledged; settle a change whose answer never came. */
static void verify_slot(struct timerd *t, struct worker *w, int slot, struct totals *totals)
{
        struct known *k = &w->names[slot];
        struct in_flight *f = &w->flight;
        struct timerd_timer tm;
        bool found, as_known, as_changed;
        char name[32];
        int r;

        slot_name(w, slot, name, sizeof(name));
        r = timerd_get(t, name, TIMERD_OWNER_SELF, &tm);
        if (r != -TIMERD_E_NOT_FOUND)
                assert_int_equal(r, 0);
        found = r == 0;
        as_known = found == k->exists && (!found || carries(&tm, k));
        if (!f->active || f->slot != slot) {
                if (!as_known)
                        fail_msg("%s: an acknowledged change is lost", name);
                return;
        }

        switch (f->kind) {
        case OP_REGISTER:
                as_changed = found && (!k->exists || tm.generation > k->generation) &&
                             carries(&tm, &(struct known){true, tm.generation, f->cadence_usec,
                                                          f->deadline_usec});
                break;
        case OP_RESCHEDULE:
                as_changed =
                    found && carries(&tm, &(struct known){true, k->generation, f->cadence_usec,
                                                          f->deadline_usec});
                break;
        default:
                as_changed = !found;
                break;
        }
        if (!as_known && !as_changed)
                fail_msg("%s: an unanswered change is there in part", name);
        if (as_changed && !as_known) {
                *k = found ? (struct known){true, tm.generation, f->cadence_usec, f->deadline_usec}
                           : (struct known){};
                totals->unanswered_made++;
        } else
                totals->unanswered_not_made++;
        f->active = false;
}

static void verify(const struct harness *h, struct worker *workers, struct totals *totals)
{
        struct timerd *t = harness_connect(h);
        struct timerd_timer *all;
        long n, expected = 0;

        for (int i = 0; i < N_WORKERS; i++) {
                assert_int_equal(workers[i].unexpected, 0);
                for (int slot = 0; slot < N_NAMES; slot++) {
                        verify_slot(t, &workers[i], slot, totals);
                        expected += workers[i].names[slot].exists;
                }
        }
        /* Nothing else came back either. */
        n = timerd_list(t, TIMERD_OWNER_SELF, false, &all);
        assert_int_equal(n, expected);
        free(all);
        timerd_close(t);
}

static void test_crash(void **state)
{
        struct worker workers[N_WORKERS] = {};
        uint64_t rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
        struct totals totals = {};
        struct dur *dur = *state;

        for (int i = 0; i < N_WORKERS; i++)
                workers[i] = (struct worker){.id = i, .rng = rng + (uint64_t)i * 7919};

        for (int kill = 0; kill < N_KILLS; kill++) {
                dur_start(dur);
                verify(&dur->h, workers, &totals);
                for (int i = 0; i < N_WORKERS; i++) {
                        snprintf(workers[i].socket, sizeof(workers[i].socket), "%s", dur->h.socket);
                        assert_int_equal(
                            pthread_create(&workers[i].thread, NULL, worker_run, &workers[i]), 0);
                }
                usleep((useconds_t)(5000 + rnd(&rng, 150000)));
                dur_crash(dur);
                for (int i = 0; i < N_WORKERS; i++)
                        assert_int_equal(pthread_join(workers[i].thread, NULL), 0);
        }
        /* And a clean stop saves everything too. */
        dur_start(dur);
        verify(&dur->h, workers, &totals);
        dur_stop(dur);
        dur_start(dur);
        verify(&dur->h, workers, &totals);
        dur_stop(dur);

        for (int i = 0; i < N_WORKERS; i++)
                totals.acknowledged += workers[i].acknowledged;
        printf("crash test: %d kills, %llu acknowledged changes all kept; %llu changes unanswered "
               "at a kill: %llu made whole, %llu not made\n",
               N_KILLS, (unsigned long long)totals.acknowledged,
               (unsigned long long)(totals.unanswered_made + totals.unanswered_not_made),
               (unsigned long long)totals.unanswered_made,
               (unsigned long long)totals.unanswered_not_made);
        assert_true(totals.acknowledged > N_KILLS);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_crash, dur_setup, dur_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
