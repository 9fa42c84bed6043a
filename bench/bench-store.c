/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Group commit through the service: retained Registers per second with 1, 8 and 64 clients, each
 * on a connection of its own with one call in flight (a blocking client), and one client that
 * pipelines 64 calls. Every answer waits for the journal's fdatasync; the changes of one loop
 * iteration share it. The baseline is one fdatasync per change: the journal alone (journal_put +
 * journal_commit per record, no service) on the same file system as the service's state
 * directory. With one blocking client the service, too, syncs once per change. Every figure is
 * the median of REPEATS runs, each on a fresh timerd, with its range.
 * Usage: bench-store TIMERD [--quick]
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>

#include "bench/calls.h"
#include "bench/daemon.h"
#include "bench/harness.h"
#include "bench/raw-conn.h"
#include "bench/stats.h"
#include "service/io/journal.h"

#define REPEATS   3
#define MAX_CONNS 64
#define FAR_USEC  (3600 * UINT64_C(1000000)) /* registered timers never fire during a run */

struct client {
        unsigned id;
        size_t sent;
        size_t total;
        uint64_t start_usec;
};

static size_t next_register(void *userdata, char *buf, size_t size)
{
        struct client *c = userdata;
        char name[32];

        if (c->sent == c->total)
                return 0;
        snprintf(name, sizeof(name), "c%u-%zu", c->id, c->sent++);
        return call_register(buf, size, name, c->start_usec, 0, true);
}

static void check_reply(void *userdata, const char *msg, size_t len)
{
        (void)userdata;
        (void)len;
        if (reply_is_error(msg))
                die("Register failed: %s", msg);
}

/* Retained Registers per second: n connections, `window` calls in flight on each. */
static double service_rate(const char *binary, size_t n, size_t window, size_t per_conn)
{
        static const struct pipeline_ops ops = {.next = next_register, .reply = check_reply};
        struct raw_conn conns[MAX_CONNS];
        struct client clients[MAX_CONNS];
        void *userdata[MAX_CONNS];
        struct daemon d;
        uint64_t start, elapsed;

        daemon_start(&(struct daemon_options){.binary = binary, .backend = "auto"}, &d);
        for (size_t i = 0; i < n; i++) {
                raw_conn_open(d.socket, 1u << 16, &conns[i]);
                clients[i] = (struct client){
                    .id = (unsigned)i, .total = per_conn, .start_usec = now_usec() + FAR_USEC};
                userdata[i] = &clients[i];
        }
        start = now_usec();
        pipeline_run(conns, userdata, n, window, &ops);
        elapsed = now_usec() - start;
        for (size_t i = 0; i < n; i++)
                raw_conn_close(&conns[i]);
        daemon_stop(&d);
        return (double)(n * per_conn) * 1e6 / (double)(elapsed > 0 ? elapsed : 1);
}

/* Records per second with one journal_commit — one fdatasync — per record. */
static double journal_rate(const char *dir, size_t records)
{
        struct journal_open_result result;
        struct journal *j;
        uint64_t start, elapsed;
        char state[300];
        int r;

        snprintf(state, sizeof(state), "%s/state", dir);
        r = journal_open(state, NULL, NULL, &result, &j);
        if (r < 0)
                die("journal_open %s: %s", state, strerror(-r));
        start = now_usec();
        for (size_t i = 0; i < records; i++) {
                struct journal_timer t = {
                    .owner = 1000,
                    .lifetime = TIMERD_LIFETIME_RETAINED,
                    .generation = i + 1,
                    .state = TIMERD_STATE_SCHEDULED,
                    .has_deadline = true,
                    .deadline_usec = now_usec() + FAR_USEC,
                    .catch_up = true,
                };

                snprintf(t.name, sizeof(t.name), "j%zu", i);
                if ((r = journal_put(j, &t)) < 0 || (r = journal_commit(j)) < 0)
                        die("journal: %s", strerror(-r));
        }
        elapsed = now_usec() - start;
        journal_close(j);
        return (double)records * 1e6 / (double)(elapsed > 0 ? elapsed : 1);
}

static const char *fs_name(const char *path)
{
        struct statfs st;

        if (statfs(path, &st) < 0)
                return "unknown";
        switch ((unsigned long)st.f_type) {
        case 0xEF53:
                return "ext4";
        case 0x01021994:
                return "tmpfs (fdatasync costs nothing here)";
        case 0x58465342:
                return "xfs";
        case 0x9123683E:
                return "btrfs";
        default:
                return "other";
        }
}

int main(int argc, char **argv)
{
        static const struct {
                size_t conns, window;
                const char *what;
        } rows[] = {
            {1, 1, "1 client"},
            {8, 1, "8 clients"},
            {64, 1, "64 clients"},
            {1, 64, "1 client, 64 calls pipelined"},
        };
        double baseline[REPEATS], rate[REPEATS];
        size_t total = 4000, records = 1000;
        struct spread base, s;
        char dir[256];

        if (argc < 2)
                die("usage: bench-store TIMERD [--quick]");
        if (argc > 2 && strcmp(argv[2], "--quick") == 0) {
                total = 1000;
                records = 300;
        }
        bool pinned = bench_pin(0, BENCH_CPU_CLIENT);
        note("store: retained Registers with group commit; %s",
             pinned ? "service on CPU 0, bench on CPU 1" : "not pinned (one CPU)");

        for (int i = 0; i < REPEATS; i++) {
                daemon_dir_new(dir, sizeof(dir));
                if (i == 0)
                        note("state directories on %s", fs_name(dir));
                baseline[i] = journal_rate(dir, records);
                daemon_dir_remove(dir);
        }
        spread_of(baseline, REPEATS, &base);
        table_row("store | retained changes/s, one fdatasync each (journal alone) | — | %.0f/s "
                  "(%.0f–%.0f) | — | — | (info)",
                  base.median, base.min, base.max);

        for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
                size_t per_conn = total / rows[r].conns;

                for (int i = 0; i < REPEATS; i++)
                        rate[i] = service_rate(argv[1], rows[r].conns, rows[r].window, per_conn);
                spread_of(rate, REPEATS, &s);
                note("%s: %.0f retained Registers/s (%.0f-%.0f)", rows[r].what, s.median, s.min,
                     s.max);
                table_row("store | retained Register/s, %s | %.0f/s (%.0f–%.0f) | %.0f/s | %.2fx | "
                          "— | (info)",
                          rows[r].what, s.median, s.min, s.max, base.median,
                          s.median / base.median);
        }
        return 0;
}
