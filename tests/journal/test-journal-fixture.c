/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * A store written by an older timerd still restores every field. fixtures/main-28308fb was
 * written by the journal of commit 28308fb (before the timer's fields became one table): a
 * snapshot of timers snap-0..snap-11 (snap-4 deleted since) and a format 3 journal of
 * journal-12..journal-23 in four batches, each timer jt_timer(1000 + seed % 2, name, seed), so
 * that they cover every optional part of a record (handover, calendar, live cadence, result,
 * catch-up mark). jt_timer() must therefore keep deriving the same values from a seed.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "journal-test.h"

#define FIXTURE_SEEDS 24

static void copy_fixture(const struct jt_dir *d, const char *file)
{
        char path[512];
        FILE *f;
        uint8_t *data;
        long size;

        snprintf(path, sizeof(path), "%s/main-28308fb/%s", JOURNAL_FIXTURES, file);
        f = fopen(path, "rb");
        assert_non_null(f);
        assert_int_equal(fseek(f, 0, SEEK_END), 0);
        size = ftell(f);
        assert_true(size > 0);
        rewind(f);
        data = malloc((size_t)size);
        assert_non_null(data);
        assert_int_equal(fread(data, 1, (size_t)size, f), (size_t)size);
        fclose(f);
        jt_write(d, file, data, (size_t)size);
        free(data);
}

static void test_restores_every_field(void **state)
{
        struct journal_open_result result;
        struct jt_taken taken;
        struct journal_take take = jt_take(&taken);
        bool seen[FIXTURE_SEEDS] = {false};
        struct jt_dir d;
        struct journal *j;

        (void)state;
        jt_dir_make(&d);
        assert_int_equal(mkdir(d.state, 0700), 0);
        copy_fixture(&d, "snapshot");
        copy_fixture(&d, "journal");

        assert_int_equal(journal_open(d.state, NULL, &take, &result, &j), 0);
        assert_int_equal(result.format_version, 3);
        assert_int_equal(result.tail, JOURNAL_TAIL_NONE);
        assert_int_equal(result.n_timers, FIXTURE_SEEDS - 1);
        assert_int_equal(taken.n, FIXTURE_SEEDS - 1);
        for (size_t i = 0; i < result.n_timers; i++) {
                const struct journal_timer *t = &taken.timers[i];
                unsigned seed;
                struct journal_timer expected;

                assert_true(sscanf(t->name, "snap-%u", &seed) == 1 ||
                            sscanf(t->name, "journal-%u", &seed) == 1);
                assert_true(seed < FIXTURE_SEEDS && seed != 4 && !seen[seed]);
                seen[seed] = true;
                expected = jt_timer(1000 + seed % 2, t->name, seed);
                jt_assert_timer_equal(t, &expected);
        }
        free(taken.timers);
        journal_close(j);
        jt_dir_remove(&d);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_restores_every_field),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
