/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Journal replay on damaged or hostile files. An input is the state directory's content:
 *
 *   byte 0      bit 0: a `journal` file, bit 1: a `snapshot` file (neither: an empty directory)
 *   both files: bytes 1-2, little-endian, the snapshot's length, then the snapshot, then the
 *               journal; one file: the rest of the input is that file
 *
 * journal_open() must return a documented result, and then:
 *   - on success the live set is in (owner, name) order, without duplicates, with valid names;
 *     a second replay (the torn tail is truncated by then) finds the same set and drops nothing;
 *     a compaction of that set replays to the same set again;
 *   - on a store fault nothing on disk changed.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "service/io/journal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HAS_JOURNAL  0x1
#define HAS_SNAPSHOT 0x2

struct state_files {
        const uint8_t *journal;
        size_t journal_size;
        const uint8_t *snapshot;
        size_t snapshot_size;
        unsigned layout;
};

static void fail(const char *what, int error)
{
        fprintf(stderr, "fuzz-journal: %s: %s\n", what, strerror(error < 0 ? -error : error));
        abort();
}

static bool split_input(const uint8_t *data, size_t size, struct state_files *ret)
{
        *ret = (struct state_files){0};
        if (size < 1)
                return false;
        ret->layout = data[0] & (HAS_JOURNAL | HAS_SNAPSHOT);
        data++;
        size--;
        switch (ret->layout) {
        case HAS_JOURNAL:
                ret->journal = data;
                ret->journal_size = size;
                return true;
        case HAS_SNAPSHOT:
                ret->snapshot = data;
                ret->snapshot_size = size;
                return true;
        case HAS_JOURNAL | HAS_SNAPSHOT: {
                if (size < 2)
                        return false;
                size_t n = (size_t)data[0] | (size_t)data[1] << 8;
                data += 2;
                size -= 2;
                if (n > size)
                        return false;
                ret->snapshot = data;
                ret->snapshot_size = n;
                ret->journal = data + n;
                ret->journal_size = size - n;
                return true;
        }
        default:
                return true;
        }
}

static void write_file(int dir_fd, const char *name, const uint8_t *data, size_t size)
{
        int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0)
                fail(name, errno);
        for (size_t done = 0; done < size;) {
                ssize_t n = write(fd, data + done, size - done);
                if (n <= 0)
                        fail(name, n < 0 ? errno : EIO);
                done += (size_t)n;
        }
        close(fd);
}

/* Whether name holds exactly data (absent: data NULL). */
static bool file_is(int dir_fd, const char *name, const uint8_t *data, size_t size)
{
        struct stat st;
        int fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT && !data;
        if (!data || fstat(fd, &st) < 0 || (size_t)st.st_size != size) {
                close(fd);
                return false;
        }
        bool same = true;
        uint8_t buf[4096];
        for (size_t done = 0; same && done < size;) {
                ssize_t n = read(fd, buf, sizeof(buf));
                if (n <= 0 || memcmp(buf, data + done, (size_t)n) != 0)
                        same = false;
                else
                        done += (size_t)n;
        }
        close(fd);
        return same;
}

static int compare_key(const struct journal_timer *a, const struct journal_timer *b)
{
        if (a->owner != b->owner)
                return a->owner < b->owner ? -1 : 1;
        return strcmp(a->name, b->name);
}

/* The live set as journal_open() handed it over, as journal_compact() takes it. */
struct live_set {
        struct journal_timer *timers;
        size_t n;
        size_t allocated;
};

static int take_timer(void *userdata, const struct journal_timer *timer)
{
        struct live_set *set = userdata;

        if (set->n == set->allocated) {
                set->allocated = set->allocated > 0 ? 2 * set->allocated : 16;
                set->timers = reallocarray(set->timers, set->allocated, sizeof(*set->timers));
                if (!set->timers)
                        fail("reallocarray", ENOMEM);
        }
        set->timers[set->n++] = *timer;
        return 0;
}

static int open_taking(const char *dir, struct journal_open_result *ret, struct live_set *set,
                       struct journal **ret_journal)
{
        const struct journal_take take = {.timer = take_timer, .userdata = set};

        *set = (struct live_set){};
        int r = journal_open(dir, NULL, &take, ret, ret_journal);
        if (r >= 0 && set->n != ret->n_timers)
                fail("the live set handed over is not n_timers long", EBADMSG);
        if (r < 0)
                free(set->timers);
        return r;
}

static void check_live_set(const struct live_set *set)
{
        const struct journal_timer *timers = set->timers;

        for (size_t i = 0; i < set->n; i++) {
                const struct journal_timer *t = &timers[i];
                size_t len = strnlen(t->name, sizeof(t->name));
                if (len == 0 || len > TIMERD_NAME_MAX)
                        fail("a replayed timer has an invalid name", EBADMSG);
                if (strnlen(t->boot_id, sizeof(t->boot_id)) > JOURNAL_BOOT_ID_MAX)
                        fail("a replayed timer has an invalid boot id", EBADMSG);
                if (i > 0 && compare_key(&timers[i - 1], t) >= 0)
                        fail("the live set is not in (owner, name) order, or repeats a timer",
                             EBADMSG);
        }
}

/* The durable state of two timers is the same (field by field: padding is not state). */
static bool same_timer(const struct journal_timer *a, const struct journal_timer *b)
{
        return compare_key(a, b) == 0 && a->policy == b->policy &&
               a->cadence_usec == b->cadence_usec && a->clock == b->clock &&
               a->lifetime == b->lifetime && a->delivery == b->delivery &&
               a->accuracy_usec == b->accuracy_usec && a->catch_up == b->catch_up &&
               a->randomized_delay_usec == b->randomized_delay_usec &&
               a->handover_usec == b->handover_usec && a->generation == b->generation &&
               a->state == b->state && a->failure == b->failure &&
               a->has_deadline == b->has_deadline && a->deadline_usec == b->deadline_usec &&
               a->run == b->run && a->pending == b->pending && a->runs == b->runs &&
               a->consecutive_expected_failures == b->consecutive_expected_failures &&
               a->overruns == b->overruns && a->has_last_start == b->has_last_start &&
               a->last_start_usec == b->last_start_usec &&
               a->has_last_finish == b->has_last_finish &&
               a->last_finish_usec == b->last_finish_usec && a->last_outcome == b->last_outcome &&
               a->last_duration_usec == b->last_duration_usec &&
               a->total_duration_usec == b->total_duration_usec &&
               a->written_realtime_usec == b->written_realtime_usec &&
               a->written_clock_usec == b->written_clock_usec &&
               strcmp(a->boot_id, b->boot_id) == 0;
}

static void check_same_set(const struct live_set *a, const struct live_set *b, const char *what)
{
        if (a->n != b->n)
                fail(what, EBADMSG);
        for (size_t i = 0; i < a->n; i++)
                if (!same_timer(&a->timers[i], &b->timers[i]))
                        fail(what, EBADMSG);
}

static void reopen(const char *dir, struct live_set *set, struct journal **ret_journal,
                   const char *what)
{
        struct journal_open_result result;
        int r = open_taking(dir, &result, set, ret_journal);
        if (r < 0)
                fail(what, r);
        if (result.n_dropped > 0 || result.bytes_truncated > 0 || result.stale_journal)
                fail(what, EBADMSG);
}

static void check_replay(const char *dir, const struct live_set *first, struct journal *j)
{
        struct live_set second, third;
        struct journal *again;

        journal_close(j);
        reopen(dir, &second, &again, "a repaired journal does not replay cleanly");
        check_same_set(first, &second, "a second replay differs from the first");

        int r = journal_compact(again, second.timers, second.n);
        if (r < 0 && r != -EINVAL)
                fail("journal_compact", r);
        journal_close(again);
        reopen(dir, &third, &again, "a compacted journal does not replay cleanly");
        check_same_set(&second, &third, "a compaction changed the live set");
        journal_close(again);
        free(second.timers);
        free(third.timers);
}

/* One scratch state directory for the whole run (made once, removed at exit): each input rewrites
 * it. */
static char dir[64];
static int dir_fd = -1;

static const char *const state_files[] = {"journal", "journal.tmp", "snapshot", "snapshot.tmp"};

static void clear_state_dir(void)
{
        for (size_t i = 0; i < sizeof(state_files) / sizeof(state_files[0]); i++)
                if (unlinkat(dir_fd, state_files[i], 0) < 0 && errno != ENOENT)
                        fail(state_files[i], errno);
}

static void remove_state_dir(void)
{
        clear_state_dir();
        close(dir_fd);
        (void)rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct journal_open_result result;
        struct live_set set;
        struct state_files files;
        struct journal *j;

        if (!split_input(data, size, &files))
                return 0;
        if (dir_fd < 0) {
                const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
                snprintf(dir, sizeof(dir), "%s/timerd-fuzz-journal.XXXXXX", base);
                if (!mkdtemp(dir))
                        fail("mkdtemp", errno);
                dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (dir_fd < 0)
                        fail(dir, errno);
                atexit(remove_state_dir);
        }
        clear_state_dir();
        if (files.journal)
                write_file(dir_fd, "journal", files.journal, files.journal_size);
        if (files.snapshot)
                write_file(dir_fd, "snapshot", files.snapshot, files.snapshot_size);

        int r = open_taking(dir, &result, &set, &j);
        switch (r) {
        case 0:
                check_live_set(&set);
                check_replay(dir, &set, j);
                free(set.timers);
                break;
        case -EBADMSG:
        case -EPROTONOSUPPORT:
                if (!file_is(dir_fd, "journal", files.journal, files.journal_size) ||
                    !file_is(dir_fd, "snapshot", files.snapshot, files.snapshot_size))
                        fail("a store fault changed the files", r);
                break;
        default:
                fail("journal_open: an undocumented result", r);
        }
        return 0;
}
