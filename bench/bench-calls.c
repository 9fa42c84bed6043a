/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * B2, call throughput: Register+Unregister pairs per second against timerd — synchronously and
 * pipelined, each through libtimerd (blocking calls; the *_async calls) and on a raw connection,
 * and over 8 and 64 raw connections with one call in flight on each — beside a raw AF_UNIX
 * ping-pong and a pipelined echo of a message of the same size (the Register call's text), served
 * by a process of this bench on the service's core. Every figure is the median of REPEATS runs
 * after a warm-up run, with its range. Usage: bench-calls TIMERD [--quick]
 */

#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/bulk.h"
#include "bench/calls.h"
#include "bench/daemon.h"
#include "bench/harness.h"
#include "bench/raw-conn.h"
#include "bench/stats.h"
#include "timerd/timerd.h"

#define REPEATS     5
#define WINDOW      128 /* calls in flight on one pipelined connection */
#define REPLY_MAX   (1u << 20)
#define FAR_USEC    (3600 * UINT64_C(1000000)) /* registered timers never fire during a run */
#define ECHO_BUFFER (64 * 1024)

struct config {
        size_t sync_pairs;
        size_t pipelined_pairs;
        size_t echo_messages;
};

/* ---- the raw baselines: echo servers on the service's core ---- */

static void write_all(int fd, const char *p, size_t len)
{
        while (len > 0) {
                ssize_t w = write(fd, p, len);
                if (w <= 0)
                        _exit(1);
                p += w;
                len -= (size_t)w;
        }
}

/*
 * per_message: answer each NUL-terminated message with its own write, as a varlink server answers
 * each call; else write back whatever one read returned (the upper bound: one write for many).
 */
static void echo_connection(int fd, bool per_message)
{
        static char buf[ECHO_BUFFER];
        size_t held = 0;

        for (;;) {
                ssize_t n = read(fd, buf + held, sizeof(buf) - held);
                if (n <= 0)
                        return;
                if (!per_message) {
                        write_all(fd, buf, (size_t)n);
                        continue;
                }
                held += (size_t)n;
                size_t start = 0;
                for (char *nul; (nul = memchr(buf + start, 0, held - start));) {
                        size_t end = (size_t)(nul - buf) + 1;
                        write_all(fd, buf + start, end - start);
                        start = end;
                }
                memmove(buf, buf + start, held - start);
                held -= start;
                if (held == sizeof(buf))
                        _exit(1);
        }
}

static pid_t echo_start(const char *path, bool per_message)
{
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        if (fd < 0)
                die("socket: %m");
        if (strlen(path) >= sizeof(a.sun_path))
                die("socket path too long: %s", path);
        memcpy(a.sun_path, path, strlen(path) + 1);
        if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 16) < 0)
                die("echo server on %s: %m", path);
        pid_t pid = fork();
        if (pid < 0)
                die("fork: %m");
        if (pid == 0) {
                bench_pin(0, BENCH_CPU_SERVICE);
                for (;;) {
                        int c = accept(fd, NULL, NULL);
                        if (c < 0)
                                _exit(1);
                        echo_connection(c, per_message);
                        close(c);
                }
        }
        close(fd);
        return pid;
}

static void echo_stop(pid_t pid)
{
        if (kill(pid, SIGTERM) < 0 || waitpid(pid, NULL, 0) < 0)
                die("stopping an echo server: %m");
}

struct echo_client {
        const char *msg;
        size_t len;
        size_t total, sent, received;
};

static size_t echo_next(void *userdata, char *buf, size_t size)
{
        struct echo_client *e = userdata;

        if (e->sent == e->total || e->len > size)
                return 0;
        memcpy(buf, e->msg, e->len);
        e->sent++;
        return e->len;
}

static void echo_reply(void *userdata, const char *msg, size_t len)
{
        struct echo_client *e = userdata;
        (void)msg;

        if (len != e->len)
                die("the echo server changed a message");
        e->received++;
}

static const struct pipeline_ops echo_ops = {.next = echo_next, .reply = echo_reply};

static uint64_t cpu_nsec(clockid_t clock)
{
        struct timespec ts;

        if (clock_gettime(clock, &ts) < 0)
                die("clock_gettime: %m");
        return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

/* Messages per second through the echo server with `window` in flight, and its CPU per message. */
static double echo_rate(const char *path, clockid_t server_cpu, const char *msg, size_t messages,
                        size_t window, double *ret_cpu_ns)
{
        struct echo_client e = {.msg = msg, .len = strlen(msg), .total = messages};
        struct raw_conn c;
        void *userdata[] = {&e};

        raw_conn_open(path, REPLY_MAX, &c);
        uint64_t cpu0 = cpu_nsec(server_cpu), start = now_nsec();
        pipeline_run(&c, userdata, 1, window, &echo_ops);
        double seconds = (double)(now_nsec() - start) / 1e9;
        *ret_cpu_ns = (double)(cpu_nsec(server_cpu) - cpu0) / (double)messages;
        raw_conn_close(&c);
        return (double)messages / seconds;
}

/* ---- Register+Unregister pairs on raw connections ---- */

enum call_kind { CALL_KIND_REGISTER, CALL_KIND_UNREGISTER };

struct pair_client {
        unsigned id;
        uint64_t start_usec;
        size_t total;      /* pairs */
        size_t registered; /* Register calls sent */
        size_t done;       /* Unregister replies */
        /* Claims whose Unregister is still to be sent, and the kinds of the calls in flight:
         * both rings hold at most WINDOW entries. */
        uint64_t claim_generation[WINDOW];
        size_t claim_index[WINDOW];
        size_t claims_head, claims_len;
        enum call_kind flight_kind[WINDOW];
        size_t flight_index[WINDOW];
        size_t flight_head, flight_len;
};

static void pair_name(char *buf, size_t size, unsigned id, size_t index)
{
        snprintf(buf, size, "c%u-%zu", id, index);
}

static void flight_push(struct pair_client *p, enum call_kind kind, size_t index)
{
        size_t slot = (p->flight_head + p->flight_len++) % WINDOW;
        p->flight_kind[slot] = kind;
        p->flight_index[slot] = index;
}

static size_t pair_next(void *userdata, char *buf, size_t size)
{
        struct pair_client *p = userdata;
        char name[64];

        if (p->flight_len == WINDOW)
                return 0;
        if (p->claims_len > 0) {
                size_t slot = p->claims_head;
                p->claims_head = (p->claims_head + 1) % WINDOW;
                p->claims_len--;
                pair_name(name, sizeof(name), p->id, p->claim_index[slot]);
                flight_push(p, CALL_KIND_UNREGISTER, p->claim_index[slot]);
                return call_unregister(buf, size, name, p->claim_generation[slot]);
        }
        if (p->registered == p->total)
                return 0;
        pair_name(name, sizeof(name), p->id, p->registered);
        flight_push(p, CALL_KIND_REGISTER, p->registered);
        p->registered++;
        return call_register(buf, size, name, p->start_usec, 0, false);
}

static void pair_reply(void *userdata, const char *msg, size_t len)
{
        struct pair_client *p = userdata;
        uint64_t generation;
        (void)len;

        if (p->flight_len == 0)
                die("a reply to no call");
        enum call_kind kind = p->flight_kind[p->flight_head];
        size_t index = p->flight_index[p->flight_head];
        p->flight_head = (p->flight_head + 1) % WINDOW;
        p->flight_len--;
        if (reply_is_error(msg))
                die("timerd answered an error: %s", msg);
        if (kind == CALL_KIND_UNREGISTER) {
                p->done++;
                return;
        }
        if (!reply_u64(msg, "generation", &generation))
                die("a Register reply without a generation: %s", msg);
        size_t slot = (p->claims_head + p->claims_len++) % WINDOW;
        p->claim_generation[slot] = generation;
        p->claim_index[slot] = index;
}

static const struct pipeline_ops pair_ops = {.next = pair_next, .reply = pair_reply};

struct run_result {
        double calls_per_sec;
        double service_ns_per_call;
};

/* Pairs over n_conns raw connections, `window` calls in flight on each. */
static struct run_result pairs_raw(struct daemon *d, size_t pairs, size_t n_conns, size_t window,
                                   unsigned run)
{
        struct raw_conn *conns = xcalloc(n_conns, sizeof(*conns));
        struct pair_client *clients = xcalloc(n_conns, sizeof(*clients));
        void **userdata = xcalloc(n_conns, sizeof(void *));
        uint64_t start_usec = now_usec() + FAR_USEC;

        for (size_t i = 0; i < n_conns; i++) {
                raw_conn_open(d->socket, REPLY_MAX, &conns[i]);
                clients[i] = (struct pair_client){
                    .id = run * 1000 + (unsigned)i,
                    .start_usec = start_usec,
                    .total = pairs / n_conns,
                };
                userdata[i] = &clients[i];
        }
        uint64_t cpu0 = daemon_cpu_nsec(d), start = now_nsec();
        pipeline_run(conns, userdata, n_conns, window, &pair_ops);
        uint64_t elapsed = now_nsec() - start, cpu = daemon_cpu_nsec(d) - cpu0;

        size_t calls = 0;
        for (size_t i = 0; i < n_conns; i++) {
                if (clients[i].done != clients[i].total)
                        die("connection %zu finished %zu of %zu pairs", i, clients[i].done,
                            clients[i].total);
                calls += 2 * clients[i].done;
                raw_conn_close(&conns[i]);
        }
        free(conns);
        free(clients);
        free(userdata);
        return (struct run_result){
            .calls_per_sec = (double)calls / ((double)elapsed / 1e9),
            .service_ns_per_call = (double)cpu / (double)calls,
        };
}

/* Pairs through libtimerd, one call at a time. */
static struct run_result pairs_libtimerd(struct daemon *d, size_t pairs, unsigned run)
{
        struct timerd_declaration decl;
        struct timerd_start start = {.kind = TIMERD_START_AT, .usec = now_usec() + FAR_USEC};
        struct timerd *t;
        char name[64];
        int r;

        timerd_declaration_init(&decl, TIMERD_POLICY_ONCE, 0);
        r = timerd_connect(d->socket, &t);
        if (r < 0)
                die("timerd_connect: %s", timerd_strerror(r));
        uint64_t cpu0 = daemon_cpu_nsec(d), begin = now_nsec();
        for (size_t i = 0; i < pairs; i++) {
                struct timerd_claim claim;
                pair_name(name, sizeof(name), run, i);
                r = timerd_register(t, name, &decl, &start, false, &claim);
                if (r >= 0)
                        r = timerd_unregister(t, &claim);
                if (r < 0)
                        die("libtimerd pair %zu: %s", i, timerd_strerror(r));
        }
        uint64_t elapsed = now_nsec() - begin, cpu = daemon_cpu_nsec(d) - cpu0;
        timerd_close(t);
        return (struct run_result){
            .calls_per_sec = (double)(2 * pairs) / ((double)elapsed / 1e9),
            .service_ns_per_call = (double)cpu / (double)(2 * pairs),
        };
}

/* Pairs through libtimerd's asynchronous calls, WINDOW in flight: each Register's callback
 * queues its Unregister. */
struct async_pairs {
        struct timerd_declaration decl;
        struct timerd_start start;
        unsigned id;
        size_t total, registered, done;
};

static void on_unregistered(struct timerd *t, int error, void *userdata)
{
        struct async_pairs *a = userdata;
        (void)t;

        if (error < 0)
                die("Unregister: %s", timerd_strerror(error));
        a->done++;
}

static void on_registered(struct timerd *t, int error, const struct timerd_claim *claim,
                          void *userdata)
{
        if (error < 0)
                die("Register: %s", timerd_strerror(error));
        int r = timerd_unregister_async(t, claim, on_unregistered, userdata);
        if (r < 0)
                die("timerd_unregister_async: %s", timerd_strerror(r));
}

static struct run_result pairs_libtimerd_async(struct daemon *d, size_t pairs, unsigned run)
{
        struct async_pairs a = {
            .start = {.kind = TIMERD_START_AT, .usec = now_usec() + FAR_USEC},
            .id = run,
            .total = pairs,
        };
        struct timerd *t;
        char name[64];
        int r;

        timerd_declaration_init(&a.decl, TIMERD_POLICY_ONCE, 0);
        r = timerd_connect(d->socket, &t);
        if (r < 0)
                die("timerd_connect: %s", timerd_strerror(r));
        uint64_t cpu0 = daemon_cpu_nsec(d), begin = now_nsec();
        while (a.done < a.total) {
                while (a.registered < a.total && timerd_in_flight(t) < WINDOW) {
                        pair_name(name, sizeof(name), a.id, a.registered++);
                        r = timerd_register_async(t, name, &a.decl, &a.start, false, on_registered,
                                                  &a);
                        if (r < 0)
                                die("timerd_register_async: %s", timerd_strerror(r));
                }
                libtimerd_turn(t);
        }
        uint64_t elapsed = now_nsec() - begin, cpu = daemon_cpu_nsec(d) - cpu0;
        timerd_close(t);
        return (struct run_result){
            .calls_per_sec = (double)(2 * pairs) / ((double)elapsed / 1e9),
            .service_ns_per_call = (double)cpu / (double)(2 * pairs),
        };
}

enum mode {
        MODE_LIBTIMERD_SYNC,
        MODE_RAW_SYNC,
        MODE_LIBTIMERD_PIPELINED,
        MODE_PIPELINED,
        MODE_CONNS_8,
        MODE_CONNS_64,
        _MODE_MAX
};

static const char *const mode_names[_MODE_MAX] = {
    [MODE_LIBTIMERD_SYNC] = "libtimerd, synchronous",
    [MODE_RAW_SYNC] = "raw socket, synchronous",
    [MODE_LIBTIMERD_PIPELINED] = "libtimerd async, pipelined (128 in flight)",
    [MODE_PIPELINED] = "raw socket, pipelined (128 in flight)",
    [MODE_CONNS_8] = "8 connections, synchronous each",
    [MODE_CONNS_64] = "64 connections, synchronous each",
};

static struct run_result run_mode(struct daemon *d, const struct config *cfg, enum mode m,
                                  unsigned run)
{
        switch (m) {
        case MODE_LIBTIMERD_SYNC:
                return pairs_libtimerd(d, cfg->sync_pairs, run);
        case MODE_RAW_SYNC:
                return pairs_raw(d, cfg->sync_pairs, 1, 1, run);
        case MODE_LIBTIMERD_PIPELINED:
                return pairs_libtimerd_async(d, cfg->pipelined_pairs, run);
        case MODE_PIPELINED:
                return pairs_raw(d, cfg->pipelined_pairs, 1, WINDOW, run);
        case MODE_CONNS_8:
                return pairs_raw(d, cfg->pipelined_pairs, 8, 1, run);
        case MODE_CONNS_64:
                return pairs_raw(d, cfg->pipelined_pairs, 64, 1, run);
        case _MODE_MAX:
                break;
        }
        die("unknown mode");
}

/* Round trips per second (window 1) or messages per second (WINDOW) through an echo server. */
static void echo_measure(const char *dir, bool per_message, const char *sample, size_t messages,
                         size_t window, struct spread *ret, struct spread *ret_cpu)
{
        double rate[REPEATS], cpu[REPEATS];
        char path[300];
        clockid_t clock;

        snprintf(path, sizeof(path), "%s/echo-%s-%zu", dir, per_message ? "message" : "chunk",
                 window);
        pid_t pid = echo_start(path, per_message);
        if (clock_getcpuclockid(pid, &clock) != 0)
                die("clock_getcpuclockid: no CPU clock for the echo server");
        (void)echo_rate(path, clock, sample, messages / 4, window, &cpu[0]);
        for (int i = 0; i < REPEATS; i++)
                rate[i] = echo_rate(path, clock, sample, messages, window, &cpu[i]);
        echo_stop(pid);
        spread_of(rate, REPEATS, ret);
        spread_of(cpu, REPEATS, ret_cpu);
}

struct baseline {
        struct spread ping;                              /* round trips/s */
        struct spread echo;                              /* messages/s, one write per message */
        struct spread echo_bulk;                         /* messages/s, one write per read */
        struct spread ping_cpu, echo_cpu, echo_bulk_cpu; /* the server's ns per message */
        size_t message_len;
};

static void measure_baseline(const struct config *cfg, const char *sample, struct baseline *ret)
{
        char dir[256];

        daemon_dir_new(dir, sizeof(dir));
        echo_measure(dir, true, sample, cfg->echo_messages / 4, 1, &ret->ping, &ret->ping_cpu);
        echo_measure(dir, true, sample, cfg->echo_messages * 5, WINDOW, &ret->echo, &ret->echo_cpu);
        echo_measure(dir, false, sample, cfg->echo_messages * 5, WINDOW, &ret->echo_bulk,
                     &ret->echo_bulk_cpu);
        daemon_dir_remove(dir);
        ret->message_len = strlen(sample);
        note("raw ping-pong %.0f round trips/s (%.0f-%.0f) = %.1f us, server CPU %.1f us/msg",
             ret->ping.median, ret->ping.min, ret->ping.max, 1e6 / ret->ping.median,
             ret->ping_cpu.median / 1000);
        note("pipelined echo, a write per message: %.0f msgs/s (%.0f-%.0f), server CPU %.2f us/msg",
             ret->echo.median, ret->echo.min, ret->echo.max, ret->echo_cpu.median / 1000);
        note("pipelined echo, a write per read: %.0f msgs/s (%.0f-%.0f), server CPU %.2f us/msg",
             ret->echo_bulk.median, ret->echo_bulk.min, ret->echo_bulk.max,
             ret->echo_bulk_cpu.median / 1000);
}

static void report(const char *backend, enum mode m, const struct spread *s,
                   const struct spread *cpu, const struct baseline *b)
{
        double ping_rtt = 1e6 / b->ping.median;

        note("%-8s %-38s %9.0f calls/s (%.0f-%.0f)  %7.0f pairs/s  service %.0f ns/call", backend,
             mode_names[m], s->median, s->min, s->max, s->median / 2, cpu->median);
        switch (m) {
        case MODE_LIBTIMERD_SYNC:
        case MODE_RAW_SYNC: {
                double rtt = 1e6 / s->median, ratio = rtt / ping_rtt;
                table_row(
                    "B2 calls | %s, %s: round trip per call | %.1f µs (%.1f–%.1f); service "
                    "CPU %.1f µs/call | raw ping-pong %.1f µs (%zu B; echo CPU %.1f µs/msg) | "
                    "%.2f× | ≤ 1.3× | %s",
                    mode_names[m], backend, rtt, 1e6 / s->max, 1e6 / s->min, cpu->median / 1000,
                    ping_rtt, b->message_len, b->ping_cpu.median / 1000, ratio,
                    m == MODE_LIBTIMERD_SYNC ? verdict(ratio <= 1.3) : "(info)");
                break;
        }
        case MODE_LIBTIMERD_PIPELINED:
        case MODE_PIPELINED: {
                double ratio = s->median / b->echo.median;
                table_row("B2 calls | %s, %s: calls/s | %.0f k/s (%.0f–%.0f); service CPU %.1f "
                          "µs/call | pipelined echo %.0f k msgs/s (a write per read: %.0f k, %.0f "
                          "%%) | %.0f %% | ≥ 60 %% | %s",
                          mode_names[m], backend, s->median / 1000, s->min / 1000, s->max / 1000,
                          cpu->median / 1000, b->echo.median / 1000, b->echo_bulk.median / 1000,
                          100 * s->median / b->echo_bulk.median, 100 * ratio,
                          m == MODE_LIBTIMERD_PIPELINED ? verdict(ratio >= 0.6) : "(info)");
                break;
        }
        case MODE_CONNS_8:
        case MODE_CONNS_64:
                table_row("B2 calls | %s, %s: calls/s | %.0f k/s (%.0f–%.0f); service CPU %.1f "
                          "µs/call | pipelined echo %.0f k msgs/s | %.0f %% | — | (info)",
                          mode_names[m], backend, s->median / 1000, s->min / 1000, s->max / 1000,
                          cpu->median / 1000, b->echo.median / 1000,
                          100 * s->median / b->echo.median);
                break;
        case _MODE_MAX:
                break;
        }
}

int main(int argc, char **argv)
{
        static const char *const backends[] = {"io_uring", "timerfd"};
        struct config cfg = {.sync_pairs = 5000, .pipelined_pairs = 50000, .echo_messages = 40000};
        double rate[_MODE_MAX][REPEATS], cpu[_MODE_MAX][REPEATS];
        struct baseline base;
        char sample[512];
        unsigned run = 0;

        if (argc < 2)
                die("usage: bench-calls TIMERD [--quick]");
        if (argc > 2 && strcmp(argv[2], "--quick") == 0)
                cfg = (struct config){
                    .sync_pairs = 1000, .pipelined_pairs = 10000, .echo_messages = 10000};
        bool pinned = bench_pin(0, BENCH_CPU_CLIENT);

        /* The echo payload: a Register call as the pairs send it. */
        call_register(sample, sizeof(sample), "c1000-100000", now_usec() + FAR_USEC, 0, false);
        note("B2: call throughput, %s",
             pinned ? "service on CPU 0, client on CPU 1" : "not pinned (one CPU)");
        measure_baseline(&cfg, sample, &base);

        for (size_t b = 0; b < sizeof(backends) / sizeof(backends[0]); b++) {
                struct daemon d;
                daemon_start(&(struct daemon_options){.binary = argv[1], .backend = backends[b]},
                             &d);
                for (int m = 0; m < _MODE_MAX; m++)
                        (void)run_mode(&d, &cfg, (enum mode)m, ++run);
                for (int i = 0; i < REPEATS; i++)
                        for (int m = 0; m < _MODE_MAX; m++) {
                                struct run_result r = run_mode(&d, &cfg, (enum mode)m, ++run);
                                rate[m][i] = r.calls_per_sec;
                                cpu[m][i] = r.service_ns_per_call;
                        }
                daemon_stop(&d);
                for (int m = 0; m < _MODE_MAX; m++) {
                        struct spread s, sc;
                        spread_of(rate[m], REPEATS, &s);
                        spread_of(cpu[m], REPEATS, &sc);
                        report(backends[b], (enum mode)m, &s, &sc, &base);
                }
        }
        return EXIT_SUCCESS;
}
