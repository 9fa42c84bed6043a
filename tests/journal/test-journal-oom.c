/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Out of memory at every allocation of open, put and compaction: -ENOMEM, nothing half-done, no
 * leak (under ASan). The journal's allocations are wrapped at link time.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "journal-test.h"

void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__real_reallocarray(void *p, size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
void *__wrap_reallocarray(void *p, size_t n, size_t size);

static struct {
        bool armed;
        unsigned calls;
        unsigned fail_at; /* 1-based */
} oom;

static void oom_arm(unsigned fail_at)
{
        oom.armed = true;
        oom.calls = 0;
        oom.fail_at = fail_at;
}

/* Whether the armed failure was reached; disarms. */
static bool oom_disarm(void)
{
        oom.armed = false;
        return oom.calls >= oom.fail_at;
}

static bool oom_fails(void)
{
        return oom.armed && ++oom.calls == oom.fail_at;
}

void *__wrap_calloc(size_t n, size_t size)
{
        return oom_fails() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
        return oom_fails() ? NULL : __real_realloc(p, size);
}

void *__wrap_reallocarray(void *p, size_t n, size_t size)
{
        return oom_fails() ? NULL : __real_reallocarray(p, n, size);
}

static int setup(void **state)
{
        struct jt_dir *d;

        oom.armed = false;
        d = calloc(1, sizeof(*d));

        assert_non_null(d);
        jt_dir_make(d);
        jt_faults_reset();
        *state = d;
        return 0;
}

static struct journal_timer timer_number(unsigned i)
{
        char name[16];

        snprintf(name, sizeof(name), "t%03u", i);
        return jt_timer(1, name, i);
}

static void test_open(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer t[100];
        struct journal *j;
        bool reached = true;

        /* A snapshot, then enough journal records to grow the replay's tables. */
        for (unsigned i = 0; i < 100; i++)
                t[i] = timer_number(i);
        j = jt_open_expect(d, NULL, 0, NULL);
        assert_int_equal(journal_compact(j, t, 50), 0);
        for (unsigned i = 50; i < 100; i++)
                assert_int_equal(journal_put(j, &t[i]), 0);
        assert_int_equal(journal_commit(j), 0);
        journal_close(j);

        for (unsigned k = 1; reached; k++) {
                struct journal_open_result result;
                int r;

                j = NULL;
                oom_arm(k);
                r = journal_open(d->state, &jt_ops, NULL, &result, &j);
                reached = oom_disarm();
                if (!reached) {
                        assert_int_equal(r, 0);
                        assert_int_equal(result.n_timers, 100);
                        journal_close(j);
                        /* The journal, the live set, the snapshot's records, the replay's
                         * growing table, the merged live set: each failed once. */
                        assert_true(k > 5);
                        break;
                }
                assert_int_equal(r, -ENOMEM);
                assert_null(j);
        }
        j = jt_open_expect(d, t, 100, NULL);
        journal_close(j);
}

static void test_put(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer t = timer_number(0);
        struct journal *j = jt_open_expect(d, NULL, 0, NULL);
        int r = 0;

        oom_arm(1);
        assert_int_equal(journal_put(j, &t), -ENOMEM);
        assert_true(oom_disarm());
        assert_int_equal(journal_put(j, &t), 0);

        /* Until the batch must grow. */
        oom_arm(1);
        for (unsigned i = 0; r == 0; i++) {
                assert_true(i < 1000);
                r = journal_delete(j, 1, "t001");
        }
        assert_int_equal(r, -ENOMEM);
        assert_true(oom_disarm());
        assert_int_equal(journal_commit(j), 0);
        journal_close(j);

        j = jt_open_expect(d, &t, 1, NULL);
        journal_close(j);
}

static void test_compact(void **state)
{
        struct jt_dir *d = *state;
        struct journal_timer t[40];
        struct journal *j;
        bool reached = true;

        for (unsigned i = 0; i < 40; i++)
                t[i] = timer_number(i);
        j = jt_open_expect(d, NULL, 0, NULL);
        assert_int_equal(journal_put(j, &t[0]), 0);
        assert_int_equal(journal_commit(j), 0);
        for (unsigned k = 1; reached; k++) {
                int r;

                oom_arm(k);
                r = journal_compact(j, t, 40);
                reached = oom_disarm();
                if (!reached) {
                        assert_int_equal(r, 0);
                        assert_true(k > 2); /* the sort, the snapshot buffer */
                        break;
                }
                assert_int_equal(r, -ENOMEM);
                assert_false(jt_exists(d, "snapshot"));
                assert_int_equal(journal_error(j), 0);
        }
        journal_close(j);
        j = jt_open_expect(d, t, 40, NULL);
        journal_close(j);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_open, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_put, setup, jt_teardown),
            cmocka_unit_test_setup_teardown(test_compact, setup, jt_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
