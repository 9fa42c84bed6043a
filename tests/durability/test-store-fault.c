/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * A journal that cannot be trusted is a store fault: timerd refuses to start (exit status 6)
 * rather than guess — a damaged record before the last commit, another format version, a timer
 * the registry would never have written, a state directory another timerd holds. A torn tail is
 * not: it was never acknowledged, so it is dropped and the service starts with the rest.
 */

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "durability.h"
#include "service/journal.h"

#define STORE_FAULT 6

static struct journal_timer timer_named(const char *name, uint64_t generation)
{
        struct journal_timer t = {
            .owner = getuid(),
            .policy = TIMERD_POLICY_ONCE,
            .lifetime = TIMERD_LIFETIME_RETAINED,
            .generation = generation,
            .catch_up = true,
        };

        snprintf(t.name, sizeof(t.name), "%s", name);
        return t;
}

/* A journal of two commits, one timer each. */
static void write_journal(const char *state_dir, const struct journal_timer *a,
                          const struct journal_timer *b)
{
        struct journal_open_result result;
        struct journal *j;

        assert_int_equal(journal_open(state_dir, NULL, &result, &j), 0);
        free(result.timers);
        assert_int_equal(journal_put(j, a), 0);
        assert_int_equal(journal_commit(j), 0);
        assert_int_equal(journal_put(j, b), 0);
        assert_int_equal(journal_commit(j), 0);
        journal_close(j);
}

static void patch_file(const char *state_dir, const char *file, long offset, const void *data,
                       size_t size, bool append)
{
        char path[256];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", state_dir, file);
        f = fopen(path, append ? "ab" : "r+b");
        assert_non_null(f);
        if (!append)
                assert_int_equal(fseek(f, offset, SEEK_SET), 0);
        assert_int_equal(fwrite(data, 1, size, f), size);
        assert_int_equal(fclose(f), 0);
}

/* Run timerd on state_dir until it exits on its own (within 10 s); its exit status. */
static int exit_status(const char *state_dir)
{
        const char *bin = getenv("TIMERD_BIN");
        char dir[] = "/tmp/timerd-fault.XXXXXX", socket[64], backend[64];
        int status = 0;
        pid_t pid;

        assert_non_null(bin);
        assert_non_null(mkdtemp(dir));
        snprintf(socket, sizeof(socket), "%s/io.timerd", dir);
        snprintf(backend, sizeof(backend), "--backend=%s", harness_backend());
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                execl(bin, bin, "--socket", socket, "--state-dir", state_dir, backend,
                      "--log-level=err", (char *)NULL);
                _exit(127);
        }
        for (int i = 0; waitpid(pid, &status, WNOHANG) == 0; i++) {
                if (i == 1000) {
                        kill(pid, SIGKILL);
                        waitpid(pid, &status, 0);
                        fail_msg("timerd started on a journal it should refuse");
                }
                usleep(10000);
        }
        unlink(socket);
        rmdir(dir);
        assert_true(WIFEXITED(status));
        return WEXITSTATUS(status);
}

static void test_damage_before_the_last_commit(void **state)
{
        struct dur *dur = *state;
        struct journal_timer a = timer_named("a", 1), b = timer_named("b", 2);
        const uint8_t flip = 0xff;

        write_journal(dur->dir, &a, &b);
        /* Inside the first record's payload: the second commit proves it had been synced. */
        patch_file(dur->dir, "journal", 24 + 8 + 20, &flip, 1, false);
        assert_int_equal(exit_status(dur->dir), STORE_FAULT);
}

static void test_other_format_version(void **state)
{
        struct dur *dur = *state;
        struct journal_timer a = timer_named("a", 1), b = timer_named("b", 2);
        const uint8_t version = 99;

        write_journal(dur->dir, &a, &b);
        patch_file(dur->dir, "journal", 8, &version, 1, false);
        assert_int_equal(exit_status(dur->dir), STORE_FAULT);
}

static void test_invalid_name(void **state)
{
        struct dur *dur = *state;
        struct journal_timer a = timer_named("a", 1), b = timer_named("no/such name", 2);

        write_journal(dur->dir, &a, &b);
        assert_int_equal(exit_status(dur->dir), STORE_FAULT);
}

static void test_timer_the_registry_refuses(void **state)
{
        struct dur *dur = *state;
        struct journal_timer a = timer_named("a", 1), b = timer_named("b", 2);

        b.runs = 3; /* completed runs it never started */
        write_journal(dur->dir, &a, &b);
        assert_int_equal(exit_status(dur->dir), STORE_FAULT);
}

static void test_state_dir_in_use(void **state)
{
        struct dur *dur = *state;

        dur_start(dur);
        assert_int_equal(exit_status(dur->dir), STORE_FAULT);
        dur_stop(dur);
}

/* The last commit torn: dropped, never acknowledged; the rest comes back. */
static void test_torn_tail(void **state)
{
        struct dur *dur = *state;
        struct journal_timer a = timer_named("a", 7), b = timer_named("b", 8);
        const char garbage[] = "\x30\x00\x00\x00torn";
        struct timerd_timer got;
        struct timerd *t;

        write_journal(dur->dir, &a, &b);
        patch_file(dur->dir, "journal", 0, garbage, sizeof(garbage) - 1, true);
        dur_start(dur);
        t = harness_connect(&dur->h);
        assert_int_equal(timerd_get(t, "a", TIMERD_OWNER_SELF, &got), 0);
        assert_int_equal(got.generation, 7);
        assert_int_equal(timerd_get(t, "b", TIMERD_OWNER_SELF, &got), 0);
        assert_int_equal(got.generation, 8);
        timerd_close(t);
        dur_stop(dur);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_damage_before_the_last_commit, dur_setup,
                                            dur_teardown),
            cmocka_unit_test_setup_teardown(test_other_format_version, dur_setup, dur_teardown),
            cmocka_unit_test_setup_teardown(test_invalid_name, dur_setup, dur_teardown),
            cmocka_unit_test_setup_teardown(test_timer_the_registry_refuses, dur_setup,
                                            dur_teardown),
            cmocka_unit_test_setup_teardown(test_state_dir_in_use, dur_setup, dur_teardown),
            cmocka_unit_test_setup_teardown(test_torn_tail, dur_setup, dur_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
