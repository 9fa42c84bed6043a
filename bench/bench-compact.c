/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The loop while the journal compacts at 1M retained timers (--quick: 100k). The state directory
 * is written with this process's journal module: n retained timers in one batch and no snapshot,
 * so the service compacts after its first commit. On it, timerd starts, and one connection
 * registers a retained timer every millisecond until the compaction's child has come and gone
 * (/proc/<pid>/task/<pid>/children); then Status says the slowest iteration since the start, and
 * a restart on the compacted store must bring every timer back.
 * "before" is what compaction on the loop cost, measured in the same run: journal_compact() of
 * the same timers (encode, write, fdatasync, rename) in this process on the same file system,
 * the least an iteration that compacted took (it also listed the registry).
 * A second row takes the service out: the same compaction through journal_compact_start() in this
 * process, a commit every millisecond until journal_compact_finish() has swapped it in, and the
 * longest of those calls — what the compaction itself costs the thread that owns the journal.
 * Then what the child cost: how long it ran and its peak RSS. timerd runs with malloc on huge
 * pages, as units/timerd.service runs it (bench/daemon.c).
 * Scratch directories go under $TMPDIR (default /tmp); say which file system it is.
 * Usage: bench-compact TIMERD [--quick]
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bench/calls.h"
#include "bench/daemon.h"
#include "bench/harness.h"
#include "bench/raw-conn.h"
#include "bench/stats.h"
#include "service/io/journal.h"

#define FILL_CONNS 64
#define HOUR_USEC  (3600 * UINT64_C(1000000))

/* n retained, inactive once timers of this user, as the journal keeps them; on huge pages, as
 * timerd's memory is (units/timerd.service), so that this process forks as fast as timerd does.
 * munmap() them. */
static struct journal_timer *retained_timers(size_t n)
{
        struct journal_timer *timers = mmap(NULL, n * sizeof(*timers), PROT_READ | PROT_WRITE,
                                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        uint64_t now = now_usec();

        if (timers == MAP_FAILED)
                die("mmap: %m");
        /* Best effort, as for timerd: THP may be off. */
        (void)madvise(timers, n * sizeof(*timers), MADV_HUGEPAGE);
        for (size_t i = 0; i < n; i++) {
                timers[i] = (struct journal_timer){
                    .owner = (uint32_t)getuid(),
                    .policy = TIMERD_POLICY_ONCE,
                    .clock = TIMERD_CLOCK_MONOTONIC,
                    .lifetime = TIMERD_LIFETIME_RETAINED,
                    .delivery = TIMERD_DELIVERY_NOTIFY,
                    .generation = i + 1,
                    .state = TIMERD_STATE_INACTIVE,
                    .written_realtime_usec = now,
                    .written_clock_usec = now,
                };
                snprintf(timers[i].name, sizeof(timers[i].name), "r%zu", i);
        }
        return timers;
}

/* A scratch directory under $TMPDIR (default /tmp): a tmpfs there takes the disk out of both
 * figures, leaving what compaction itself costs the loop. */
static void scratch_dir(char *buf, size_t size)
{
        const char *base = getenv("TMPDIR");

        if (snprintf(buf, size, "%s/timerd-bench.XXXXXX", base ? base : "/tmp") >= (int)size ||
            !mkdtemp(buf))
                die("cannot make a temporary directory: %m");
}

static struct journal *journal_in(const char *dir)
{
        struct journal_open_result result;
        struct journal *j;
        int r = journal_open(dir, NULL, NULL, &result, &j);

        if (r < 0)
                die("journal_open: %s", strerror(-r));
        return j;
}

/* What the loop stood still for when it compacted itself: the synchronous compaction. */
static double on_loop_compaction_ms(const struct journal_timer *timers, size_t n)
{
        char dir[256];
        uint64_t start;
        int r;

        scratch_dir(dir, sizeof(dir));
        struct journal *j = journal_in(dir);
        start = now_usec();
        r = journal_compact(j, timers, n);
        if (r < 0)
                die("journal_compact: %s", strerror(-r));
        double ms = (double)(now_usec() - start) / 1000;
        journal_close(j);
        daemon_dir_remove(dir);
        return ms;
}

static const struct journal_timer **state_timers; /* in (owner, name) order */
static size_t n_state_timers;

static int name_compare(const void *a, const void *b)
{
        return strcmp((*(const struct journal_timer *const *)a)->name,
                      (*(const struct journal_timer *const *)b)->name);
}

static int state_of_bench(void *userdata, journal_emit_fn emit, void *emit_userdata)
{
        int r = 0;

        (void)userdata;
        for (size_t i = 0; i < n_state_timers && r >= 0; i++)
                r = emit(emit_userdata, state_timers[i]);
        return r;
}

/* The same compaction in a child, with a commit every millisecond meanwhile: the longest of the
 * calls the loop's thread makes (start: the fork; the commits; finish: the swap). */
static double off_loop_compaction_ms(const struct journal_timer *timers, size_t n,
                                     double *ret_fork_ms, double *ret_swap_ms)
{
        struct journal_timer extra = timers[0];
        double longest = 0;
        char dir[256];
        int pidfd, r;

        scratch_dir(dir, sizeof(dir));
        struct journal *j = journal_in(dir);
        /* One owner: (owner, name) order is the names'. */
        state_timers = xcalloc(n, sizeof(*state_timers));
        for (size_t i = 0; i < n; i++)
                state_timers[i] = &timers[i];
        qsort(state_timers, n, sizeof(*state_timers), name_compare);
        n_state_timers = n;
        uint64_t start = now_usec();
        pidfd = journal_compact_start(j, state_of_bench, NULL);
        if (pidfd < 0)
                die("journal_compact_start: %s", strerror(-pidfd));
        *ret_fork_ms = (double)(now_usec() - start) / 1000;
        for (r = -EAGAIN; r == -EAGAIN;) {
                nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
                start = now_usec();
                extra.generation++;
                if (journal_put(j, &extra) < 0 || journal_commit(j) < 0)
                        die("commit during the compaction failed");
                double ms = (double)(now_usec() - start) / 1000;
                longest = ms > longest ? ms : longest;
                start = now_usec();
                r = journal_compact_finish(j);
                *ret_swap_ms = (double)(now_usec() - start) / 1000;
        }
        if (r < 0)
                die("journal_compact_finish: %s", strerror(-r));
        journal_close(j);
        daemon_dir_remove(dir);
        free(state_timers);
        longest = *ret_fork_ms > longest ? *ret_fork_ms : longest;
        return *ret_swap_ms > longest ? *ret_swap_ms : longest;
}

/* The timers in one batch of a new journal in dir. */
static void journal_fill(const char *dir, const struct journal_timer *timers, size_t n)
{
        struct journal *j = journal_in(dir);
        int r = 0;

        for (size_t i = 0; i < n && r >= 0; i++)
                r = journal_put(j, &timers[i]);
        if (r >= 0)
                r = journal_commit(j);
        if (r < 0)
                die("filling the journal: %s", strerror(-r));
        journal_close(j);
}

/* The service's child (the compaction's), or 0. */
static pid_t child_of(pid_t pid)
{
        char path[64], buf[64] = "";
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
        f = fopen(path, "re");
        if (!f)
                die("%s: cannot open", path);
        if (!fgets(buf, sizeof(buf), f))
                buf[0] = '\0';
        fclose(f);
        return (pid_t)atoi(buf);
}

/* A process's peak RSS (VmHWM: the pages it shares with its parent count too), or 0 once gone. */
static uint64_t peak_rss_bytes(pid_t pid)
{
        char path[64], line[256];
        unsigned long long kib = 0;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
        f = fopen(path, "re");
        if (!f)
                return 0;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "VmHWM: %llu kB", &kib) == 1)
                        break;
        fclose(f);
        return kib * 1024;
}

static uint64_t status_u64(const struct daemon *d, const char *field)
{
        struct raw_conn c;
        uint64_t v = 0;

        raw_conn_open(d->socket, 1u << 20, &c);
        char *reply = raw_call(&c, CALL_STATUS);
        if (!reply || !reply_u64(reply, field, &v))
                die("Status failed: %s", reply ? reply : "connection closed");
        free(reply);
        raw_conn_close(&c);
        return v;
}

/* What light_load() saw of the compaction's child. */
struct child_seen {
        uint64_t first_usec, last_usec; /* first and last seen running */
        uint64_t peak_rss;
};

/* Retained Registers on one connection, one every millisecond, until the compaction the first
 * one started has ended; their answer times while the child ran and before it. */
static size_t light_load(const struct daemon *d, struct samples *during, struct samples *other,
                         struct child_seen *seen)
{
        size_t registered = 0;

        uint64_t deadline = now_usec() + HOUR_USEC, start = now_usec();
        struct raw_conn c;
        char call[512];

        *seen = (struct child_seen){};
        raw_conn_open(d->socket, 1u << 20, &c);
        for (size_t i = 0; now_usec() - start < 600 * UINT64_C(1000000); i++) {
                pid_t before = child_of(d->pid);
                char name[32];

                snprintf(name, sizeof(name), "probe%zu", i);
                call_register(call, sizeof(call), name, deadline, 0, true);
                uint64_t sent = now_usec();
                char *reply = raw_call(&c, call);
                uint64_t rtt = now_usec() - sent;
                pid_t after = child_of(d->pid);

                if (!reply || reply_is_error(reply))
                        die("Register failed: %s", reply ? reply : "connection closed");
                free(reply);
                registered++;
                samples_add(before || after ? during : other, rtt);
                if (before || after) {
                        uint64_t rss = peak_rss_bytes(after ? after : before);

                        seen->first_usec = seen->first_usec ? seen->first_usec : sent;
                        seen->last_usec = now_usec();
                        seen->peak_rss = rss > seen->peak_rss ? rss : seen->peak_rss;
                }
                if (seen->first_usec && !before && !after)
                        break;
                nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
        }
        raw_conn_close(&c);
        return registered;
}

int main(int argc, char **argv)
{
        struct samples during, other;
        struct child_seen child;
        size_t n = 1000000;
        struct daemon d;
        char dir[256];

        if (argc < 2)
                die("usage: bench-compact TIMERD [--quick]");
        if (argc > 2 && strcmp(argv[2], "--quick") == 0)
                n = 100000;
        bool pinned = bench_pin(0, BENCH_CPU_CLIENT);
        note("store: the loop while the journal compacts at %zuk retained; %s; state under %s",
             n / 1000, pinned ? "service on CPU 0, bench on CPU 1" : "not pinned (one CPU)",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");

        struct journal_timer *timers = retained_timers(n);
        double before_ms = on_loop_compaction_ms(timers, n);
        note("journal_compact() of %zuk timers on the loop's thread: %.1f ms", n / 1000, before_ms);
        double fork_ms, swap_ms, off_ms = off_loop_compaction_ms(timers, n, &fork_ms, &swap_ms);
        note("the same in a child, a commit every millisecond meanwhile: the longest call %.1f ms "
             "(start, the fork: %.1f ms; finish, the swap: %.1f ms)",
             off_ms, fork_ms, swap_ms);
        table_row("store | longest call of the journal's owner while it compacts %zuk retained "
                  "(journal alone: fork, commits, swap) | %.1f ms | before: %.1f ms | %.3fx | ≤ "
                  "10 ms | %s",
                  n / 1000, off_ms, before_ms, off_ms / before_ms, verdict(off_ms <= 10));

        /* A journal of n retained timers and no snapshot: due for compaction at the first commit.
         */
        scratch_dir(dir, sizeof(dir));
        char state[300];
        snprintf(state, sizeof(state), "%s/state", dir); /* where bench/daemon.c points timerd */
        journal_fill(state, timers, n);
        munmap(timers, n * sizeof(*timers));
        daemon_start(&(struct daemon_options){.binary = argv[1], .backend = "auto", .dir = dir},
                     &d);
        note("timerd started on %zuk retained timers in %.1f s; RSS %.0f MB", n / 1000,
             (double)d.start_usec / 1e6, (double)daemon_rss_bytes(&d) / 1e6);
        samples_init(&during, 1u << 16);
        samples_init(&other, 1u << 16);
        uint64_t service_rss = daemon_rss_bytes(&d);
        size_t registered = light_load(&d, &during, &other, &child);
        uint64_t slowest = status_u64(&d, "slowest_iteration_usec");
        daemon_stop(&d);
        /* The compacted store holds every timer: restart on it. */
        daemon_start(&(struct daemon_options){.binary = argv[1], .backend = "auto", .dir = dir},
                     &d);
        uint64_t restored = status_u64(&d, "timers");
        daemon_stop(&d);
        daemon_dir_remove(dir);
        if (restored != n + registered)
                die("%" PRIu64 " of %zu timers came back after the compaction", restored,
                    n + registered);

        if (during.n == 0)
                die("no compaction seen");
        double slowest_ms = (double)slowest / 1000;
        note("the compaction's child: seen for %.2f s; peak RSS %.0f MB (the pages it shares with "
             "the service, %.0f MB, count too)",
             (double)(child.last_usec - child.first_usec) / 1e6, (double)child.peak_rss / 1e6,
             (double)service_rss / 1e6);
        note("Register answers while compacting: %zu, p50 %.2f ms, max %.2f ms; after: %zu, p50 "
             "%.2f ms, max %.2f ms; the service's slowest iteration since its start: %.2f ms",
             during.n, (double)samples_percentile(&during, 50) / 1000,
             (double)samples_max(&during) / 1000, other.n,
             (double)samples_percentile(&other, 50) / 1000, (double)samples_max(&other) / 1000,
             slowest_ms);
        table_row("store | longest loop iteration while compacting at %zuk retained | %.1f ms | "
                  "before: %.1f ms | %.3fx | ≤ 10 ms | %s",
                  n / 1000, slowest_ms, before_ms, slowest_ms / before_ms,
                  verdict(slowest_ms <= 10));
        samples_done(&during);
        samples_done(&other);
        return EXIT_SUCCESS;
}
