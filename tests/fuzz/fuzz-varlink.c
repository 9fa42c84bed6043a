/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The service's request path, in process: varlink framing, the JSON decoder and every method's
 * dispatch, on a real service context (registry, parked queue, intent queue, timerfd loop). Each
 * input is the byte stream of one client connection. The connection is accepted, read and answered
 * by the service's own loop (service_iterate), exactly as timerd does it, and retained timers go to
 * a journal in a scratch state directory. The client drains every reply so that nothing blocks.
 * Every reply must be valid UTF-8 and a varlink reply, whatever the input was. When the input is
 * spent and the service is idle, the client hangs up, and the registry and the parked queue must
 * pass their invariant checks with nothing of the closed session left.
 *
 * Each message of the input is also read twice beside the service: by a parser that checks calls
 * against the IDL as it scans them, as a connection's does, and by one that does not, whose call
 * params_check() then walks. They must agree on the call, and where the scan vouched for the
 * parameters, the walk must accept them and make the same field maps.
 */

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "service/api.h"
#include "service/params.h"
#include "service/io/backend.h"
#include "service/io/clock.h"
#include "service/io/log.h"
#include "service/core/parked.h"
#include "service/io/peer.h"
#include "service/service.h"
#include "service/store.h"
#include "varlink/message.h"
#include "varlink/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Bounds small enough for short inputs to reach them: RequestTooLarge, Busy, a dropped reader. */
#define FUZZ_MAX_MESSAGE 2048
#define FUZZ_MAX_OUTPUT  (256 * 1024)
#define FUZZ_MAX_INTENTS 4

/* A stream that keeps producing (an interval timer with a tiny cadence and a Wait stream) never
 * goes idle: stop after this many loop iterations. */
#define MAX_ITERATIONS 4000

struct fuzz_context {
        struct service service;
        struct sockaddr_un address;
        socklen_t address_len;
        /* The reply being received: no reply outgrows the output a connection may buffer. */
        char reply[FUZZ_MAX_OUTPUT];
        size_t reply_len;
};

static void fail(const char *what, int error)
{
        fprintf(stderr, "fuzz-varlink: %s: %s\n", what, strerror(error < 0 ? -error : error));
        abort();
}

static void core_new(struct service *s)
{
        const struct registry_config rc = {
            .max_timers = s->config.max_timers,
            .reserved_timers = s->config.reserved_timers,
            .max_timers_per_owner = s->config.max_timers_per_owner,
            .first_generation = 1,
            .first_handle_generation = 1,
        };
        /* What main.c's setup_core gives the service, but for a fixed epoch: an input that
         * presents a continuation must replay the same way in every run. */
        const struct parked_config pc = {
            .max_per_session = 1024,
            .max_per_owner = 65536,
            .max_names = 64,
            .epoch = 1,
            .first_nonce = 1,
            .first_cycle = 1,
        };
        int r;

        if ((r = registry_new(&rc, &s->registry)) < 0)
                fail("registry_new", r);
        if ((r = parked_new(&pc, &s->parked)) < 0)
                fail("parked_new", r);
}

/* The store of retained timers, on a scratch state directory that starts empty. */
static void store_new(struct service *s)
{
        static const char *const files[] = {"journal", "journal.tmp", "snapshot", "snapshot.tmp"};
        char path[sizeof(s->config.state_dir) + 32];
        int r;

        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
                snprintf(path, sizeof(path), "%s/%s", s->config.state_dir, files[i]);
                if (unlink(path) < 0 && errno != ENOENT)
                        fail(path, errno);
        }
        if ((r = store_open(s)) < 0)
                fail("store_open", r);
}

/* Retained timers outlive a connection: start every input from an empty core and store, so that
 * an input replays the same way on its own. */
static void core_reset(struct service *s)
{
        store_close(s);
        for (int c = 0; c < TIMERD_CLOCK_MAX; c++)
                if (s->wake.clock[c].kernel_armed)
                        (void)loop_disarm(s->loop, (enum timerd_clock)c);
        memset(s->wake.clock, 0, sizeof(s->wake.clock));
        parked_free(s->parked);
        registry_free(s->registry);
        core_new(s);
        store_new(s);
}

static void context_init(struct fuzz_context *ctx)
{
        struct service *s = &ctx->service;
        struct loop_callbacks cb;
        int r;

        *s = (struct service){.listen.fd = -1, .signal_fd = -1};
        service_peers_init(&s->peers);
        config_defaults(&s->config);
        s->config.max_message = FUZZ_MAX_MESSAGE;
        s->config.max_output = FUZZ_MAX_OUTPUT;
        s->config.max_intents = FUZZ_MAX_INTENTS;
        log_set_max_level(getenv("FUZZ_VERBOSE") ? LOG_DEBUG : LOG_EMERG);
        lifecycle_init(&s->lifecycle, s->config.shutdown_grace_usec);
        if ((r = clock_read(TIMERD_CLOCK_MONOTONIC, &s->started_usec)) < 0)
                fail("clock_read", r);
        snprintf(s->epoch, sizeof(s->epoch), "fuzz-%d", (int)getpid());

        service_loop_callbacks(s, &cb);
        if ((r = backend_open("timerfd", &cb, &s->loop, s->backend_reason,
                              sizeof(s->backend_reason))) < 0)
                fail("backend_open", r);
        /* Alarm clocks would wake the machine: the fuzzed service runs as one without them. */
        s->alarm_clocks = false;
        core_new(s);
        if ((r = intent_queue_init(&s->intents, s->config.max_intents)) < 0)
                fail("intent_queue_init", r);
        const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(s->config.state_dir, sizeof(s->config.state_dir), "%s/timerd-fuzz.XXXXXX", base);
        if (!mkdtemp(s->config.state_dir))
                fail("mkdtemp", errno);
        store_new(s);

        /* An abstract socket: nothing on disk, private to this process's network namespace. */
        ctx->address = (struct sockaddr_un){.sun_family = AF_UNIX};
        int n = snprintf(ctx->address.sun_path + 1, sizeof(ctx->address.sun_path) - 1,
                         "timerd-fuzz-%d", (int)getpid());
        ctx->address_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *)&ctx->address, ctx->address_len) < 0 ||
            listen(fd, 16) < 0)
                fail("listen", errno);
        if ((r = service_start_listening(s, fd)) < 0)
                fail("service_start_listening", r);
}

/* RFC 8259 §8.1: what the service writes is valid UTF-8 JSON, and varlink. */
static void check_reply(const char *msg, size_t len)
{
        struct vl_reply reply;
        int r;

        if (!vl_json_text_valid(msg, len))
                fail("a reply is not valid UTF-8", EILSEQ);
        r = vl_reply_parse(msg, len, VL_MAX_DEPTH_DEFAULT, &reply);
        if (r < 0)
                fail("a reply is not a varlink reply", r);
        vl_reply_done(&reply);
}

/* Read whatever the service answered and check each whole reply (shown with FUZZ_VERBOSE, one
 * reply a line); true when something came. */
static bool drain(struct fuzz_context *c, int client, bool verbose)
{
        char buf[65536];
        bool got = false;

        for (;;) {
                ssize_t n = recv(client, buf, sizeof(buf), MSG_DONTWAIT);
                if (n <= 0)
                        return got;
                got = true;
                for (ssize_t i = 0; verbose && i < n; i++)
                        fputc(buf[i] ? buf[i] : '\n', stderr);
                for (ssize_t i = 0; i < n; i++) {
                        if (buf[i] == 0) {
                                check_reply(c->reply, c->reply_len);
                                c->reply_len = 0;
                        } else if (c->reply_len == sizeof(c->reply))
                                fail("a reply outgrew the output bound", EMSGSIZE);
                        else
                                c->reply[c->reply_len++] = buf[i];
                }
        }
}

static struct peer *accept_client(struct service *s)
{
        for (int i = 0; i < 100 && list_empty(&s->peers.live); i++)
                if (service_iterate(s, 10 * 1000) < 0)
                        fail("service_iterate", EIO);
        if (list_empty(&s->peers.live) || s->peers.live.next != s->peers.live.prev)
                fail("accept", EPROTO);
        struct peer *p = list_entry(s->peers.live.next, struct peer, node);
        /* The fuzzer is the peer's process: a signal-delivery timer must never signal it (it could
         * be SIGKILL). A peer whose process cannot be pinned down is a state the service knows:
         * signal delivery is refused with Unsupported. */
        loop_unwatch(p->pidfd_watch);
        p->pidfd_watch = NULL;
        if (p->pidfd >= 0)
                close(p->pidfd);
        p->pidfd = -1;
        return p;
}

static void feed(struct fuzz_context *c, int client, const uint8_t *data, size_t size, bool verbose)
{
        struct service *s = &c->service;
        size_t written = 0;
        int idle = 0;

        for (int i = 0; i < MAX_ITERATIONS && idle < 2; i++) {
                bool progress = false;
                if (written < size) {
                        ssize_t n = send(client, data + written, size - written,
                                         MSG_DONTWAIT | MSG_NOSIGNAL);
                        if (n > 0) {
                                written += (size_t)n;
                                progress = true;
                        } else if (n < 0 && errno != EAGAIN)
                                written = size; /* the service hung up */
                }
                int r = service_iterate(s, 0);
                if (r < 0)
                        fail("service_iterate", r);
                if (r > 0 || s->intents.count > 0)
                        progress = true;
                if (drain(c, client, verbose))
                        progress = true;
                idle = progress || written < size ? 0 : idle + 1;
        }
}

static void hang_up(struct service *s, int client, uint64_t session)
{
        close(client);
        for (int i = 0;
             i < MAX_ITERATIONS &&
             (!list_empty(&s->peers.live) || !list_empty(&s->peers.closed) || s->intents.count > 0);
             i++)
                if (service_iterate(s, 1000) < 0)
                        fail("service_iterate", EIO);
        if (!list_empty(&s->peers.live) || !list_empty(&s->peers.closed))
                fail("the closed connection was not retired", EBUSY);

        if (registry_check(s->registry) < 0)
                fail("registry_check", EUCLEAN);
        if (parked_check(s->parked) < 0)
                fail("parked_check", EUCLEAN);

        struct parked_stats ps;
        parked_get_stats(s->parked, &ps);
        if (ps.waiters + ps.sleepers > 0)
                fail("parked requests of a closed connection are left", EUCLEAN);
        if (s->peers.n_subscribers > 0)
                fail("a subscription of a closed connection is left", EUCLEAN);

        struct td_snapshot *timers;
        long n = registry_list(s->registry, 0, true, &timers);
        if (n < 0)
                fail("registry_list", (int)n);
        for (long i = 0; i < n; i++)
                if (timers[i].session == session &&
                    timers[i].declaration.lifetime == TIMERD_LIFETIME_TRANSIENT)
                        fail("a transient timer outlived its connection", EUCLEAN);
        free(timers);
}

/* Field maps a and b hold the same fields, at the same values, a struct's nested alike (type's
 * fields; the walk leaves an array's place in `object` as it was). */
static bool maps_equal(const struct vl_token *tokens, const struct vl_idl_struct *type,
                       const struct vl_view_fields *a, const struct vl_view_fields *b)
{
        if (a->present != b->present)
                return false;
        for (size_t i = 0; i < type->n_fields; i++) {
                const struct vl_idl_field *f = &type->fields[i];
                bool nested;

                if (!(a->present & UINT64_C(1) << f->id))
                        continue;
                if (a->value[f->id] != b->value[f->id])
                        return false;
                nested =
                    f->kind == VL_IDL_STRUCT && tokens[a->value[f->id]].type == VL_TOKEN_OBJECT;
                if (nested != !!a->object[f->id] || (nested && !b->object[f->id]))
                        return false;
                if (nested && !maps_equal(tokens, f->fields, a->object[f->id], b->object[f->id]))
                        return false;
        }
        return true;
}

/* The one-pass check against the walk, on message msg (len bytes). */
static void check_reader(const char *msg, size_t len)
{
        static struct vl_parser scanned, walked;
        static struct vl_view_fields maps[VL_IDL_OBJECTS_MAX];
        static const struct vl_call_check check = {vl_idl_method_find, maps, VL_IDL_OBJECTS_MAX};
        struct params_fields fields;
        struct param_error err;
        struct vl_call a, b;
        struct vl_view v;
        int ra, rb;

        scanned.check = &check;
        ra = vl_call_parse_with(&scanned, msg, len, VL_MAX_DEPTH_DEFAULT, &a);
        rb = vl_call_parse_with(&walked, msg, len, VL_MAX_DEPTH_DEFAULT, &b);
        if (ra != rb)
                fail("the checking reader and the plain one disagree", ra);
        if (ra < 0)
                return;
        if (a.method_len != b.method_len || memcmp(a.method, b.method, a.method_len) != 0 ||
            a.more != b.more || a.oneway != b.oneway || a.upgrade != b.upgrade ||
            a.idl != vl_idl_method_find(b.method, b.method_len) || (a.checked && !a.idl))
                fail("the checking reader read another envelope", EPROTO);
        if (!a.checked)
                return;
        if (params_check(a.idl->parameters, &b.parameters, &fields, &v, &err) < 0)
                fail("the walk refused parameters the scan checked", EINVAL);
        if (!a.parameters.tokens != !v.tokens ||
            (v.tokens && !maps_equal(v.tokens, a.idl->parameters, a.parameters.fields, v.fields)))
                fail("the scan and the walk made other field maps", EINVAL);
}

/* The messages of an input as varlink frames them: each ends with a NUL. */
static void check_readers(const uint8_t *data, size_t size)
{
        const char *p = (const char *)data, *end = p + size;

        while (p < end) {
                const char *nul = memchr(p, 0, (size_t)(end - p));

                if (!nul)
                        break;
                check_reader(p, (size_t)(nul - p));
                p = nul + 1;
        }
}

/* libFuzzer calls LLVMFuzzerTestOneInput once per input in one process: the context (an epoll
 * loop, its timerfds, a listening socket, a state directory) is built once and reset between
 * inputs, and the state directory removed at exit. */
static struct fuzz_context ctx;

static void remove_state_dir(void)
{
        store_close(&ctx.service);
        char cmd[sizeof(ctx.service.config.state_dir) + 16];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", ctx.service.config.state_dir);
        if (system(cmd) != 0)
                fprintf(stderr, "fuzz-varlink: cannot remove %s\n", ctx.service.config.state_dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static bool initialized;
        struct service *s = &ctx.service;

        if (!initialized) {
                context_init(&ctx);
                atexit(remove_state_dir);
                initialized = true;
        }

        int client = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (client < 0 || connect(client, (struct sockaddr *)&ctx.address, ctx.address_len) < 0)
                fail("connect", errno);
        struct peer *p = accept_client(s);
        uint64_t session = p->session;

        check_readers(data, size);
        /* A reply cut short by a dropped connection of the last input is not checked. */
        ctx.reply_len = 0;
        feed(&ctx, client, data, size, getenv("FUZZ_VERBOSE") != NULL);
        hang_up(s, client, session);
        core_reset(s);
        return 0;
}
