/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * A journal that cannot be trusted is a store fault: timerd refuses to start (exit status 6)
 * rather than guess — a damaged record before the last commit, another format version, a timer
 * the registry would never have written, a state directory another timerd holds. A damaged end
 * is not: it is kept aside, dropped and logged for what it is (a torn write never acknowledged, or
 * acknowledged batches lost), and the service starts with the rest.
 */

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "durability.h"
#include "../integration/schedstat.h"
#include "service/io/crc32c.h"
#include "service/io/journal.h"

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

        assert_int_equal(journal_open(state_dir, NULL, NULL, &result, &j), 0);
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

static bool file_contains(const char *path, const char *text)
{
        char buf[65536];
        size_t n;
        FILE *f = fopen(path, "re");

        assert_non_null(f);
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = 0;
        return strstr(buf, text) != NULL;
}

/* Run timerd on state_dir until it exits on its own (within 10 s), its log in log_path (NULL:
 * not kept); its exit status. */
static int exit_status_logged(const char *state_dir, const char *log_path)
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
                int fd = log_path ? open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)
                                  : STDERR_FILENO;

                if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
                        _exit(127);
                execl(bin, bin, "--socket", socket, "--state-dir", state_dir, backend,
                      "--log-level=err", (char *)NULL);
                _exit(127);
        }
        /* 10 s to refuse, not counting its waits for a CPU. */
        struct schedstat_watch refusing;
        schedstat_watch_start(&refusing, pid);
        while (waitpid(pid, &status, WNOHANG) == 0) {
                if (schedstat_watch_usec(&refusing) >= 10 * 1000000) {
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

static int exit_status(const char *state_dir)
{
        return exit_status_logged(state_dir, NULL);
}

static void test_damage_before_the_last_commit(void **state)
{
        struct dur *dur = *state;
        struct journal_timer a = timer_named("a", 1), b = timer_named("b", 2);
        const uint8_t flip = 0xff;

        write_journal(dur->dir, &a, &b);
        /* Inside the first record's payload: the second commit proves it had been synced. */
        patch_file(dur->dir, "journal", 1536 + 8 + 20, &flip, 1, false);
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

/* A name the registry refuses is a store fault, logged without the name (a calendar timer's
 * too, whose schedule, here not one either, is read before the registry sees the name). */
static void test_invalid_name(void **state)
{
        struct dur *dur = *state;
        struct journal_timer a = timer_named("a", 1), b = timer_named("no/such name", 2),
                             c = timer_named("bad/calendar", 2);
        char log_path[256];

        snprintf(log_path, sizeof(log_path), "%s.log", dur->dir);
        write_journal(dur->dir, &a, &b);
        assert_int_equal(exit_status_logged(dur->dir, log_path), STORE_FAULT);
        assert_true(file_contains(log_path, "with an invalid name"));
        assert_false(file_contains(log_path, "no/such"));

        c.policy = TIMERD_POLICY_CALENDAR;
        snprintf(c.calendar, sizeof(c.calendar), "no calendar either");
        write_journal(dur->dir, &a, &c);
        assert_int_equal(exit_status_logged(dur->dir, log_path), STORE_FAULT);
        assert_true(file_contains(log_path, "with an invalid name"));
        assert_false(file_contains(log_path, "bad/calendar"));
        unlink(log_path);
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

/* Anything but a regular file where a file of the store belongs: refused at once, unread. */
static void test_not_regular_files(void **state)
{
        struct dur *dur = *state;
        struct journal_timer a = timer_named("a", 1), b = timer_named("b", 2);
        const char *const files[] = {"snapshot", "journal"};
        char path[256], target[256];

        write_journal(dur->dir, &a, &b);
        snprintf(target, sizeof(target), "%s/journal.kept", dur->dir);
        snprintf(path, sizeof(path), "%s/journal", dur->dir);
        assert_int_equal(rename(path, target), 0);
        for (size_t i = 0; i < 2; i++) {
                for (int kind = 0; kind < 3; kind++) {
                        uint64_t start = dur_now();

                        snprintf(path, sizeof(path), "%s/%s", dur->dir, files[i]);
                        if (kind == 0)
                                assert_int_equal(mkfifo(path, 0600), 0);
                        else if (kind == 1) /* to a valid journal: still never followed */
                                assert_int_equal(symlink(target, path), 0);
                        else
                                assert_int_equal(mkdir(path, 0700), 0);
                        assert_int_equal(exit_status(dur->dir), STORE_FAULT);
                        /* Not a wait that something else ended. */
                        assert_true(dur_now() - start < 3000000);
                        assert_int_equal(kind == 2 ? rmdir(path) : unlink(path), 0);
                }
        }
        /* Left as they were: the journal starts the service again. */
        snprintf(path, sizeof(path), "%s/journal", dur->dir);
        assert_int_equal(rename(target, path), 0);
        assert_int_equal(mkfifo(target, 0600), 0); /* not a file of the store: ignored */
        dur_start(dur);
        dur_stop(dur);
}

/* Whether SIGTERM is blocked in process pid (the service's signals step ran). */
static bool sigterm_blocked(pid_t pid)
{
        char path[64], line[256];
        bool blocked = false;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
        f = fopen(path, "re");
        if (!f)
                return false;
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, "SigBlk:", 7) == 0)
                        blocked = strtoull(line + 7, NULL, 16) & (1ull << (SIGTERM - 1));
        fclose(f);
        return blocked;
}

/* Whether process pid has the file `path` open. */
static bool has_open(pid_t pid, const char *path)
{
        char dir[64], target[256];
        bool found = false;
        struct dirent *e;
        DIR *d;

        snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
        d = opendir(dir);
        if (!d)
                return false;
        while (!found && (e = readdir(d))) {
                ssize_t n;

                n = readlinkat(dirfd(d), e->d_name, target, sizeof(target) - 1);
                if (n > 0) {
                        target[n] = 0;
                        found = strcmp(target, path) == 0;
                }
        }
        closedir(d);
        return found;
}

enum stop_at {
        STOP_NEVER,   /* run until it answers, then SIGTERM */
        STOP_SIGNALS, /* SIGTERM as soon as start-up blocked it (its signals step ran) */
        STOP_SOCKET,  /* SIGTERM as soon as the socket exists: a client may take it for started */
        STOP_REPLAY,  /* SIGTERM once the store step opened the journal */
};

/* The CPU time the service `pid` has used (schedstat.h): also once it exited, until it is reaped.
 */
static uint64_t service_ran_usec(pid_t pid)
{
        struct schedstat st;

        assert_int_equal(schedstat_read(pid, &st), 0);
        return st.ran_usec;
}

/* Run timerd on state_dir with its log in log_path, stopped as `at` says (STOP_NEVER: once it
 * answers with the timer t000000). Its exit status; in *ret_usec the CPU time it used from start
 * to ready (STOP_NEVER) or from the SIGTERM to its exit: the work it did, which the load of the
 * machine does not stretch as it does the wall-clock time. */
static int run_start_up(const char *state_dir, const char *log_path, enum stop_at at,
                        uint64_t *ret_usec)
{
        bool stop = at != STOP_NEVER;
        char journal[256];
        const char *bin = getenv("TIMERD_BIN");
        char dir[] = "/tmp/timerd-start.XXXXXX", socket[64];
        uint64_t start = 0;
        siginfo_t exited;
        int status = 0;
        pid_t pid;

        assert_non_null(bin);
        assert_non_null(mkdtemp(dir));
        snprintf(socket, sizeof(socket), "%s/io.timerd", dir);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

                if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
                        _exit(127);
                execl(bin, bin, "--socket", socket, "--state-dir", state_dir, "--log-level=info",
                      (char *)NULL);
                _exit(127);
        }
        snprintf(journal, sizeof(journal), "%s/journal", state_dir);
        if (stop) {
                while (!(at == STOP_SIGNALS  ? sigterm_blocked(pid)
                         : at == STOP_SOCKET ? access(socket, F_OK) == 0
                                             : has_open(pid, journal)) &&
                       waitpid(pid, &status, WNOHANG) == 0)
                        usleep(100);
                start = service_ran_usec(pid);
                assert_int_equal(kill(pid, SIGTERM), 0);
        } else {
                /* Ready: it answers (connecting works as soon as the socket is bound). */
                struct timerd_timer got;
                struct timerd *t = NULL;

                for (int i = 0; i < 6000 && timerd_connect(socket, &t) < 0; i++)
                        usleep(10000);
                assert_non_null(t);
                assert_int_equal(timerd_get(t, "t000000", TIMERD_OWNER_SELF, &got), 0);
                *ret_usec = service_ran_usec(pid);
                timerd_close(t);
                assert_int_equal(kill(pid, SIGTERM), 0);
        }
        /* Exited, not reaped yet: its CPU time can still be read. */
        assert_int_equal(waitid(P_PID, (id_t)pid, &exited, WEXITED | WNOWAIT), 0);
        if (stop)
                *ret_usec = service_ran_usec(pid) - start;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        unlink(socket);
        rmdir(dir);
        assert_true(WIFEXITED(status));
        return WEXITSTATUS(status);
}

/* Journal batches of one timer each, t000000 on; ret_ends[i] is the journal's size after batch
 * i + 1. */
static void write_batches(const char *state_dir, unsigned n, off_t *ret_ends)
{
        struct journal_open_result result;
        char path[256];
        struct journal *j;

        snprintf(path, sizeof(path), "%s/journal", state_dir);
        assert_int_equal(journal_open(state_dir, NULL, NULL, &result, &j), 0);
        for (unsigned i = 0; i < n; i++) {
                struct journal_timer t;
                struct stat st;
                char name[32];

                snprintf(name, sizeof(name), "t%06u", i);
                t = timer_named(name, i + 1);
                assert_int_equal(journal_put(j, &t), 0);
                assert_int_equal(journal_commit(j), 0);
                assert_int_equal(stat(path, &st), 0);
                ret_ends[i] = st.st_size;
        }
        journal_close(j);
}

static uint8_t *read_file(const char *path, size_t *ret_size)
{
        uint8_t *data;
        struct stat st;
        FILE *f = fopen(path, "re");

        assert_non_null(f);
        assert_int_equal(fstat(fileno(f), &st), 0);
        data = malloc((size_t)st.st_size + 1);
        assert_non_null(data);
        assert_int_equal(fread(data, 1, (size_t)st.st_size, f), (size_t)st.st_size);
        fclose(f);
        *ret_size = (size_t)st.st_size;
        return data;
}

/* The one journal.damaged-* file in state_dir, which holds exactly `size` bytes of `data`; then
 * removed. */
static void assert_kept_once(const char *state_dir, const uint8_t *data, size_t size)
{
        char path[512] = "";
        struct dirent *e;
        uint8_t *kept;
        size_t kept_size;
        DIR *d = opendir(state_dir);

        assert_non_null(d);
        while ((e = readdir(d))) {
                if (strncmp(e->d_name, "journal.damaged-", 16) != 0)
                        continue;
                assert_string_equal(path, "");
                snprintf(path, sizeof(path), "%s/%s", state_dir, e->d_name);
        }
        closedir(d);
        assert_string_not_equal(path, "");
        kept = read_file(path, &kept_size);
        assert_int_equal(kept_size, size);
        assert_memory_equal(kept, data, size);
        free(kept);
        assert_int_equal(unlink(path), 0);
}

/*
 * The real timerd on a damaged journal of 40 one-timer batches. A cut inside the last batch is a
 * torn write after the proof: a warning, never acknowledged. A zeroed 4 KiB block at the end hides
 * batches the journal proves were acknowledged: an error with the exact loss, logged once. Either
 * way the dropped bytes are kept and the rest of the timers come back.
 */
static void test_damaged_journal_logged(void **state)
{
        enum { N = 40 };
        struct dur *dur = *state;
        char log_path[256], journal[256], expected[1024];
        unsigned first_hit = 0;
        off_t ends[N];
        uint64_t usec;
        uint8_t *data;
        size_t size;

        snprintf(log_path, sizeof(log_path), "%s.log", dur->dir);
        snprintf(journal, sizeof(journal), "%s/journal", dur->dir);

        /* (a) 50 bytes of the last batch's record. */
        write_batches(dur->dir, N, ends);
        data = read_file(journal, &size);
        assert_int_equal(truncate(journal, ends[N - 2] + 50), 0);
        assert_int_equal(run_start_up(dur->dir, log_path, STOP_NEVER, &usec), 0);
        snprintf(expected, sizeof(expected),
                 "<4>Dropped the incomplete last batch 40 of the journal, after batch 39, the last "
                 "one proven acknowledged: 50 bytes, 1 records dropped, 0 of them readable. A "
                 "write cut short by a crash: never synced, never acknowledged. Kept in "
                 "%s/journal.damaged-",
                 dur->dir);
        assert_true(file_contains(log_path, expected));
        assert_false(file_contains(log_path, "<3>"));
        assert_kept_once(dur->dir, data + ends[N - 2], 50);
        free(data);

        /* (b) The last 4 KiB zeroed. The first batch it changes is first_hit + 1 (these timers'
         * records end in zeros). */
        assert_int_equal(unlink(journal), 0);
        write_batches(dur->dir, N, ends);
        data = read_file(journal, &size);
        for (size_t i = size - 4096; i < size; i++)
                if (data[i] != 0) {
                        while (ends[first_hit] <= (off_t)i)
                                first_hit++;
                        break;
                }
        memset(data + size - 4096, 0, 4096);
        assert_true(first_hit > 0 && N - 1 - first_hit >= 8);
        patch_file(dur->dir, "journal", (long)(size - 4096), data + size - 4096, 4096, false);
        assert_int_equal(run_start_up(dur->dir, log_path, STOP_NEVER, &usec), 0);
        snprintf(expected, sizeof(expected),
                 "<3>Lost acknowledged changes: the journal proves batches up to 39 were synced "
                 "and acknowledged, but batches %u-39 (%u batches, %u records, %lld bytes) are "
                 "damaged or missing. Dropped %lld bytes from there, 0 records of them readable. "
                 "Kept in %s/journal.damaged-",
                 first_hit + 1, N - 1 - first_hit, N - 1 - first_hit,
                 (long long)(ends[N - 2] - ends[first_hit - 1]),
                 (long long)(ends[N - 1] - ends[first_hit - 1]), dur->dir);
        assert_true(file_contains(log_path, expected));
        assert_false(file_contains(log_path, "never acknowledged"));
        assert_kept_once(dur->dir, data + ends[first_hit - 1],
                         (size_t)(ends[N - 1] - ends[first_hit - 1]));
        free(data);

        /* Told once: the proof now names what is left. */
        assert_int_equal(run_start_up(dur->dir, log_path, STOP_NEVER, &usec), 0);
        assert_false(file_contains(log_path, "Lost acknowledged"));
        assert_false(file_contains(log_path, "Dropped"));
        unlink(log_path);
}

/* SIGTERM during a long replay ends the start-up there: status 0, never ready, in a fraction of
 * the time the whole start-up takes. Also when it comes as soon as the socket exists: a client
 * that connected then takes the service for started, and a stop must end it cleanly, never kill it.
 */
static void test_stop_during_start_up(void **state)
{
        enum { N_TIMERS = 200000, PER_BATCH = 1000 };
        struct dur *dur = *state;
        struct journal_open_result result;
        uint64_t full_usec, stop_usec;
        char log_path[256];
        struct journal *j;

        assert_int_equal(journal_open(dur->dir, NULL, NULL, &result, &j), 0);
        for (unsigned i = 0; i < N_TIMERS; i++) {
                struct journal_timer t;
                char name[32];

                snprintf(name, sizeof(name), "t%06u", i);
                t = timer_named(name, i + 1);
                assert_int_equal(journal_put(j, &t), 0);
                if (i % PER_BATCH == PER_BATCH - 1)
                        assert_int_equal(journal_commit(j), 0);
        }
        journal_close(j);
        snprintf(log_path, sizeof(log_path), "%s.log", dur->dir);

        assert_int_equal(run_start_up(dur->dir, log_path, STOP_NEVER, &full_usec), 0);
        print_message("start-up with %u timers: %.3f s of CPU\n", N_TIMERS,
                      (double)full_usec / 1e6);
        for (enum stop_at at = STOP_SIGNALS; at <= STOP_REPLAY; at++) {
                assert_int_equal(run_start_up(dur->dir, log_path, at, &stop_usec), 0);
                print_message("stopped %s in %.3f s of CPU\n",
                              at == STOP_SIGNALS  ? "after the signals step"
                              : at == STOP_SOCKET ? "once its socket existed"
                                                  : "during the replay",
                              (double)stop_usec / 1e6);
                assert_true(file_contains(log_path, "Stop requested"));
                assert_false(file_contains(log_path, " ready (epoch"));
                assert_true(stop_usec < full_usec / 2);
        }
        unlink(log_path);
}

/* A snapshot record is checked where it is restored: one malformed after timers were restored
 * (its checksum right) is refused as it was before any was, when the whole snapshot was checked
 * first: a store fault, logged as damage to the snapshot, and no file changed (the journal's torn
 * tail is not cut, nothing is kept aside). */
static void test_snapshot_refused_after_restoring(void **state)
{
        struct dur *dur = *state;
        struct journal_timer t[3] = {timer_named("a", 1), timer_named("b", 2), timer_named("c", 3)};
        const char garbage[] = "\x30\x00\x00\x00torn";
        struct journal_open_result result;
        uint8_t *snapshot, *journal, *frame, *after;
        size_t size, journal_size, after_size;
        char path[256], log_path[256];
        struct journal *j;
        DIR *dir;

        assert_int_equal(journal_open(dur->dir, NULL, NULL, &result, &j), 0);
        assert_int_equal(journal_compact(j, t, 3), 0);
        journal_close(j);
        patch_file(dur->dir, "journal", 0, garbage, sizeof(garbage) - 1, true);
        snprintf(path, sizeof(path), "%s/snapshot", dur->dir);
        snapshot = read_file(path, &size);
        /* The third record, after the 32-byte header: a policy out of range, resealed. */
        frame = snapshot + 32;
        for (int i = 0; i < 2; i++)
                frame += 8 + (frame[0] | frame[1] << 8);
        frame[8 + 16] = 99;
        uint32_t crc = crc32c(0, frame + 8, frame[0] | frame[1] << 8);
        for (int i = 0; i < 4; i++)
                frame[4 + i] = (uint8_t)(crc >> (8 * i));
        patch_file(dur->dir, "snapshot", 0, snapshot, size, false);
        snprintf(path, sizeof(path), "%s/journal", dur->dir);
        journal = read_file(path, &journal_size);

        snprintf(log_path, sizeof(log_path), "%s.log", dur->dir);
        assert_int_equal(exit_status_logged(dur->dir, log_path), STORE_FAULT);
        assert_true(file_contains(log_path, "at snapshot (damaged before its last commit)"));
        unlink(log_path);
        after = read_file(path, &after_size);
        assert_int_equal(after_size, journal_size);
        assert_memory_equal(after, journal, journal_size);
        free(after);
        snprintf(path, sizeof(path), "%s/snapshot", dur->dir);
        after = read_file(path, &after_size);
        assert_int_equal(after_size, size);
        assert_memory_equal(after, snapshot, size);
        free(after);
        dir = opendir(dur->dir);
        assert_non_null(dir);
        for (struct dirent *e; (e = readdir(dir));)
                assert_true(e->d_name[0] == '.' || strcmp(e->d_name, "snapshot") == 0 ||
                            strcmp(e->d_name, "journal") == 0);
        closedir(dir);
        free(journal);
        free(snapshot);
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
            cmocka_unit_test_setup_teardown(test_snapshot_refused_after_restoring, dur_setup,
                                            dur_teardown),
            cmocka_unit_test_setup_teardown(test_damaged_journal_logged, dur_setup, dur_teardown),
            cmocka_unit_test_setup_teardown(test_not_regular_files, dur_setup, dur_teardown),
            cmocka_unit_test_setup_teardown(test_stop_during_start_up, dur_setup, dur_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
