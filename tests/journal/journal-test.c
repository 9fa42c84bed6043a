/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "journal-test.h"

struct jt_faults jt_faults;

void jt_dir_make(struct jt_dir *d)
{
        /* Under the build directory (the tests' working directory), not a tmpfs /tmp. */
        snprintf(d->root, sizeof(d->root), "journal-test-XXXXXX");
        assert_non_null(mkdtemp(d->root));
        snprintf(d->state, sizeof(d->state), "%s/state", d->root);
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        (void)st;
        (void)type;
        (void)ftw;
        return remove(path);
}

void jt_dir_remove(struct jt_dir *d)
{
        assert_int_equal(nftw(d->root, remove_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
}

char *jt_path(const struct jt_dir *d, const char *file)
{
        char *p;

        assert_true(asprintf(&p, "%s/%s", d->state, file) > 0);
        return p;
}

bool jt_exists(const struct jt_dir *d, const char *file)
{
        char *p = jt_path(d, file);
        bool exists = access(p, F_OK) == 0;

        free(p);
        return exists;
}

uint8_t *jt_read(const struct jt_dir *d, const char *file, size_t *ret_size)
{
        char *p = jt_path(d, file);
        FILE *f = fopen(p, "re");
        uint8_t *data;
        long size;

        assert_non_null(f);
        assert_int_equal(fseek(f, 0, SEEK_END), 0);
        size = ftell(f);
        assert_true(size >= 0);
        rewind(f);
        data = malloc((size_t)size + 1);
        assert_non_null(data);
        assert_int_equal(fread(data, 1, (size_t)size, f), (size_t)size);
        fclose(f);
        free(p);
        *ret_size = (size_t)size;
        return data;
}

void jt_write(const struct jt_dir *d, const char *file, const void *data, size_t size)
{
        char *p = jt_path(d, file);
        FILE *f = fopen(p, "we");

        assert_non_null(f);
        assert_int_equal(fwrite(data, 1, size, f), size);
        assert_int_equal(fclose(f), 0);
        free(p);
}

size_t jt_size(const struct jt_dir *d, const char *file)
{
        char *p = jt_path(d, file);
        struct stat st;

        assert_int_equal(stat(p, &st), 0);
        free(p);
        return (size_t)st.st_size;
}

struct journal_timer jt_timer(uint32_t owner, const char *name, uint64_t seed)
{
        struct journal_timer t = {
            .owner = owner,
            /* The policies of the first format as they were (fixtures depend on them), and
             * every tenth a calendar. */
            .policy = seed % 10 == 9 ? TIMERD_POLICY_CALENDAR
                                     : (enum timerd_policy)(seed % TIMERD_POLICY_CALENDAR),
            .cadence_usec = seed * 1000003,
            .clock = (enum timerd_clock)(seed % TIMERD_CLOCK_MAX),
            .lifetime = (enum timerd_lifetime)(seed % TIMERD_LIFETIME_MAX),
            .delivery = (enum timerd_delivery)(seed % TIMERD_DELIVERY_MAX),
            .signo = (int)(seed % 65),
            .accuracy_usec = seed * 7,
            .catch_up = seed % 2 == 0,
            .randomized_delay_usec = seed * 11,
            .handover_usec = seed % 3 == 1 ? seed * 61 : 0,
            .live_cadence_usec = seed % 5 == 2 ? seed * 67 : 0,
            .generation = seed + 1,
            .state = (enum timerd_state)(seed % TIMERD_STATE_MAX),
            .failure = (enum timerd_failure)(seed % TIMERD_FAILURE_MAX),
            .has_deadline = seed % 3 != 0,
            .deadline_usec = seed * 13,
            .run = seed * 17,
            .run_active = seed % 4 == 1,
            .run_deadline_usec = seed * 59,
            .run_cancelled = seed % 6 == 1,
            .pending = seed % 5 == 0,
            .runs = seed * 19,
            .consecutive_expected_failures = seed * 23,
            .overruns = seed * 29,
            .has_last_start = seed % 7 != 0,
            .last_start_usec = seed * 31,
            .has_last_finish = seed % 11 != 0,
            .last_finish_usec = seed * 37,
            .last_outcome = (enum timerd_outcome)(seed % TIMERD_OUTCOME_MAX),
            .last_duration_usec = seed * 41,
            .total_duration_usec = seed * 43,
            .last_exit = (enum timerd_exit)(seed % TIMERD_EXIT_MAX),
            .last_exit_code = seed % TIMERD_EXIT_MAX == 0 ? 0 : (uint32_t)(seed % 256),
            .last_catch_up = seed % 3 == 0,
            .written_realtime_usec = seed * 47,
            .written_clock_usec = seed * 53,
        };

        assert_true(strlen(name) < sizeof(t.name));
        strcpy(t.name, name);
        snprintf(t.boot_id, sizeof(t.boot_id), "%08llx-0000-4000-8000-%012llx",
                 (unsigned long long)(seed & 0xffffffff),
                 (unsigned long long)(seed & 0xffffffffffffULL));
        if (t.policy == TIMERD_POLICY_CALENDAR) {
                /* Every other one follows the local zone (""). */
                snprintf(t.calendar, sizeof(t.calendar), "*-*-* %02u:00\ncron:0 3 * * 1-5",
                         (unsigned)(seed % 24));
                snprintf(t.timezone, sizeof(t.timezone), "%s", seed % 2 ? "Europe/Berlin" : "");
                t.fixed_random_delay = seed % 3 == 0;
        }
        return t;
}

void jt_assert_timer_equal(const struct journal_timer *a, const struct journal_timer *b)
{
        assert_int_equal(a->owner, b->owner);
        assert_string_equal(a->name, b->name);
        assert_int_equal(a->policy, b->policy);
        assert_int_equal(a->cadence_usec, b->cadence_usec);
        assert_int_equal(a->clock, b->clock);
        assert_int_equal(a->lifetime, b->lifetime);
        assert_int_equal(a->delivery, b->delivery);
        assert_int_equal(a->signo, b->signo);
        assert_int_equal(a->accuracy_usec, b->accuracy_usec);
        assert_int_equal(a->catch_up, b->catch_up);
        assert_int_equal(a->randomized_delay_usec, b->randomized_delay_usec);
        assert_int_equal(a->handover_usec, b->handover_usec);
        assert_int_equal(a->last_exit, b->last_exit);
        assert_int_equal(a->last_exit_code, b->last_exit_code);
        assert_int_equal(a->live_cadence_usec, b->live_cadence_usec);
        assert_string_equal(a->calendar, b->calendar);
        assert_string_equal(a->timezone, b->timezone);
        assert_int_equal(a->fixed_random_delay, b->fixed_random_delay);
        assert_int_equal(a->last_catch_up, b->last_catch_up);
        assert_int_equal(a->generation, b->generation);
        assert_int_equal(a->state, b->state);
        assert_int_equal(a->failure, b->failure);
        assert_int_equal(a->has_deadline, b->has_deadline);
        assert_int_equal(a->deadline_usec, b->deadline_usec);
        assert_int_equal(a->run, b->run);
        assert_int_equal(a->run_active, b->run_active);
        assert_int_equal(a->run_deadline_usec, b->run_deadline_usec);
        assert_int_equal(a->run_cancelled, b->run_cancelled);
        assert_int_equal(a->pending, b->pending);
        assert_int_equal(a->runs, b->runs);
        assert_int_equal(a->consecutive_expected_failures, b->consecutive_expected_failures);
        assert_int_equal(a->overruns, b->overruns);
        assert_int_equal(a->has_last_start, b->has_last_start);
        assert_int_equal(a->last_start_usec, b->last_start_usec);
        assert_int_equal(a->has_last_finish, b->has_last_finish);
        assert_int_equal(a->last_finish_usec, b->last_finish_usec);
        assert_int_equal(a->last_outcome, b->last_outcome);
        assert_int_equal(a->last_duration_usec, b->last_duration_usec);
        assert_int_equal(a->total_duration_usec, b->total_duration_usec);
        assert_int_equal(a->written_realtime_usec, b->written_realtime_usec);
        assert_int_equal(a->written_clock_usec, b->written_clock_usec);
        assert_string_equal(a->boot_id, b->boot_id);
}

static int take_timer(void *userdata, const struct journal_timer *timer)
{
        struct jt_taken *taken = userdata;

        if (taken->n == taken->allocated) {
                taken->allocated = taken->allocated > 0 ? 2 * taken->allocated : 16;
                taken->timers =
                    reallocarray(taken->timers, taken->allocated, sizeof(*taken->timers));
                assert_non_null(taken->timers);
        }
        taken->timers[taken->n++] = *timer;
        return 0;
}

struct journal_take jt_take(struct jt_taken *taken)
{
        *taken = (struct jt_taken){};
        return (struct journal_take){.timer = take_timer, .userdata = taken};
}

struct journal *jt_open_expect(const struct jt_dir *d, const struct journal_timer *expected,
                               size_t n_expected, struct journal_open_result *ret_result)
{
        return jt_open_expect_ops(d, &jt_ops, expected, n_expected, ret_result);
}

struct journal *jt_open_expect_ops(const struct jt_dir *d, const struct journal_ops *ops,
                                   const struct journal_timer *expected, size_t n_expected,
                                   struct journal_open_result *ret_result)
{
        struct journal_open_result result;
        struct jt_taken taken;
        struct journal_take take = jt_take(&taken);
        struct journal *j;

        assert_int_equal(journal_open(d->state, ops, &take, &result, &j), 0);
        assert_int_equal(result.n_timers, n_expected);
        assert_int_equal(taken.n, n_expected);
        for (size_t i = 0; i < n_expected; i++)
                jt_assert_timer_equal(&taken.timers[i], &expected[i]);
        free(taken.timers);
        if (ret_result)
                *ret_result = result;
        return j;
}

void jt_faults_reset(void)
{
        jt_faults = (struct jt_faults){};
}

void jt_faults_arm(unsigned mask, unsigned at, unsigned count, int error)
{
        jt_faults.fail_mask = mask;
        jt_faults.fail_at = at;
        jt_faults.fail_count = count;
        jt_faults.counted = 0;
        jt_faults.error = error;
}

unsigned jt_calls(void)
{
        unsigned n = 0;

        for (size_t i = 0; i < JT_OP_MAX; i++)
                n += jt_faults.calls[i];
        return n;
}

/* Count the call; true when it must fail (errno set). */
static bool fault_hit(enum jt_op op)
{
        jt_faults.calls[op]++;
        if (!(jt_faults.fail_mask & (1u << op)) || jt_faults.fail_at == 0)
                return false;
        jt_faults.counted++;
        if (jt_faults.counted < jt_faults.fail_at ||
            jt_faults.counted - jt_faults.fail_at >= jt_faults.fail_count)
                return false;
        errno = jt_faults.error;
        return true;
}

static ssize_t fault_pwrite(int fd, const void *buf, size_t size, off_t offset)
{
        if (fault_hit(JT_PWRITE)) {
                int error = errno;

                /* Like a disk that fills up halfway: part of the data lands, then the error. */
                if (jt_faults.partial > 0 && jt_faults.partial < size)
                        assert_int_equal(pwrite(fd, buf, jt_faults.partial, offset),
                                         (ssize_t)jt_faults.partial);
                errno = error;
                return -1;
        }
        return pwrite(fd, buf, size, offset);
}

/* Durability against power loss is not what these tests can observe, and a real fdatasync
 * would make them as slow as the disk is busy: only check that a live descriptor is synced. */
static int fault_fdatasync(int fd)
{
        return fault_hit(JT_FDATASYNC) ? -1 : fcntl(fd, F_GETFD) < 0 ? -1 : 0;
}

static int fault_ftruncate(int fd, off_t length)
{
        return fault_hit(JT_FTRUNCATE) ? -1 : ftruncate(fd, length);
}

static int fault_renameat(int old_dir_fd, const char *old_path, int new_dir_fd,
                          const char *new_path)
{
        return fault_hit(JT_RENAMEAT) ? -1 : renameat(old_dir_fd, old_path, new_dir_fd, new_path);
}

const struct journal_ops jt_ops = {
    .pwrite = fault_pwrite,
    .fdatasync = fault_fdatasync,
    .ftruncate = fault_ftruncate,
    .renameat = fault_renameat,
};

int jt_teardown(void **state)
{
        jt_dir_remove(*state);
        free(*state);
        return 0;
}

void jt_put_commit(struct journal *j, const struct journal_timer *t)
{
        assert_int_equal(journal_put(j, t), 0);
        assert_int_equal(journal_commit(j), 0);
}
