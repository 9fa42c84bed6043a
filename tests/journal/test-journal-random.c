/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Random puts, deletes, commits, compactions, reopens and kills, some of them with disk faults,
 * against an in-memory model: after every reopen the live set is exactly what the model committed.
 * Fixed seeds, so a failure is reproducible.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "journal-test.h"

#define N_OWNERS 3
#define N_NAMES  8
#define N_KEYS   (N_OWNERS * N_NAMES)
#define N_STEPS  3000

static const uint32_t owners[N_OWNERS] = {1, 2, 1000}; /* ascending */
static const char *const names[N_NAMES] = {"a", "b", "c", "d", "e", "f", "g", "h"};

struct slot {
        bool live;
        struct journal_timer timer;
};

struct model {
        struct slot committed[N_KEYS]; /* in (owner, name) order */
        struct slot pending[N_KEYS];
        bool touched[N_KEYS]; /* pending holds a change */
        uint64_t rng;
};

static uint64_t next_random(struct model *m)
{
        /* xorshift64* */
        m->rng ^= m->rng >> 12;
        m->rng ^= m->rng << 25;
        m->rng ^= m->rng >> 27;
        return m->rng * UINT64_C(2685821657736338717);
}

static unsigned pick(struct model *m, unsigned n)
{
        return (unsigned)(next_random(m) % n);
}

static size_t committed_set(const struct model *m, struct journal_timer *ret)
{
        size_t n = 0;

        for (size_t k = 0; k < N_KEYS; k++)
                if (m->committed[k].live)
                        ret[n++] = m->committed[k].timer;
        return n;
}

static void drop_pending(struct model *m)
{
        memset(m->touched, 0, sizeof(m->touched));
}

static void apply_pending(struct model *m)
{
        for (size_t k = 0; k < N_KEYS; k++)
                if (m->touched[k])
                        m->committed[k] = m->pending[k];
        drop_pending(m);
}

static bool has_pending(const struct model *m)
{
        for (size_t k = 0; k < N_KEYS; k++)
                if (m->touched[k])
                        return true;
        return false;
}

static void arm_random_fault(struct model *m)
{
        jt_faults_reset();
        jt_faults_arm(JT_ALL_OPS, 1 + pick(m, 9), 1 + pick(m, 3), pick(m, 2) ? EIO : ENOSPC);
        jt_faults.partial = pick(m, 400);
}

static struct journal *reopen(const struct jt_dir *d, struct model *m, struct journal *j,
                              bool killed)
{
        struct journal_timer expected[N_KEYS];
        struct journal_open_result result;
        size_t n = committed_set(m, expected);

        if (killed)
                drop_pending(m);
        else {
                assert_int_equal(journal_commit(j), 0);
                apply_pending(m);
                n = committed_set(m, expected);
        }
        journal_close(j);
        j = jt_open_expect(d, expected, n, &result);
        assert_int_equal(result.n_dropped, 0);
        assert_int_equal(result.bytes_truncated, 0);
        return j;
}

static void run(uint64_t seed)
{
        struct model m = {.rng = seed};
        struct jt_dir d;
        struct journal *j;
        unsigned failures = 0, compactions = 0, reopens = 0;

        jt_dir_make(&d);
        jt_faults_reset();
        j = jt_open_expect(&d, NULL, 0, NULL);
        for (unsigned step = 0; step < N_STEPS; step++) {
                unsigned k = pick(&m, N_KEYS), action = pick(&m, 100);
                uint32_t owner = owners[k / N_NAMES];
                const char *name = names[k % N_NAMES];
                struct journal_timer live[N_KEYS];
                size_t n;
                int r;

                jt_faults_reset();
                if (action < 40) {
                        m.pending[k] = (struct slot){
                            .live = true,
                            .timer = jt_timer(owner, name, next_random(&m)),
                        };
                        m.touched[k] = true;
                        assert_int_equal(journal_put(j, &m.pending[k].timer), 0);
                } else if (action < 55) {
                        m.pending[k] = (struct slot){};
                        m.touched[k] = true;
                        assert_int_equal(journal_delete(j, owner, name), 0);
                } else if (action < 75) {
                        bool wrote = has_pending(&m);

                        assert_int_equal(journal_commit(j), 0);
                        apply_pending(&m);
                        /* An empty commit repairs but proves nothing: the error stays. */
                        if (wrote)
                                assert_int_equal(journal_error(j), 0);
                } else if (action < 82) {
                        arm_random_fault(&m);
                        r = journal_commit(j);
                        if (r == 0)
                                apply_pending(&m);
                        else {
                                assert_true(r == -EIO || r == -ENOSPC);
                                assert_int_equal(journal_error(j), r);
                                drop_pending(&m);
                                failures++;
                        }
                } else if (action < 92) {
                        if (has_pending(&m)) {
                                assert_int_equal(journal_compact(j, NULL, 0), -EBUSY);
                                assert_int_equal(journal_commit(j), 0);
                                apply_pending(&m);
                        }
                        n = committed_set(&m, live);
                        /* Any order: the snapshot sorts. */
                        for (size_t i = n; i > 1; i--) {
                                size_t other = pick(&m, (unsigned)i);
                                struct journal_timer t = live[i - 1];

                                live[i - 1] = live[other];
                                live[other] = t;
                        }
                        if (action < 87)
                                arm_random_fault(&m);
                        r = journal_compact(j, live, n);
                        assert_true(r == 0 || r == -EIO || r == -ENOSPC);
                        compactions += r == 0;
                        failures += r < 0;
                } else {
                        /* Killed only when no failed write may still be on disk: a failed batch
                         * that could not be truncated away is unknown, not lost, after a kill. */
                        jt_faults_reset();
                        j = reopen(&d, &m, j, action < 96 && journal_error(j) == 0);
                        reopens++;
                }
        }
        jt_faults_reset();
        j = reopen(&d, &m, j, false);
        journal_close(j);
        jt_dir_remove(&d);

        /* The run exercised what it claims to. */
        assert_true(failures > 50);
        assert_true(compactions > 50);
        assert_true(reopens > 100);
}

static void test_random(void **state)
{
        (void)state;
        for (uint64_t seed = 1; seed <= 3; seed++)
                run(UINT64_C(0x9e3779b97f4a7c15) * seed);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_random),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
