/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/accept.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "service/connection.h"
#include "service/io/log.h"
#include "service/io/peer.h"
#include "service/service.h"
#include "varlink/names.h"

static void evict(struct service *s, struct peer *victim, uid_t newcomer)
{
        json_object *params = json_object_new_object();

        log_debug("Connection table full: closing connection %" PRIu64 " of uid %u (the most "
                  "connections) for uid %u",
                  victim->session, (unsigned)victim->uid, (unsigned)newcomer);
        vl_add_string(params, "limit", "connections");
        vl_add_u64(params, "max", s->config.max_connections);
        service_hang_up(s, victim, TIMERD_E_LIMIT_EXCEEDED, params);
}
static void reap_partial(struct service *s, struct peer *p)
{
        json_object *params = json_object_new_object();
        char reason[96];

        log_debug("Closing connection %" PRIu64 " of uid %u: a message unfinished in time",
                  p->session, (unsigned)p->uid);
        snprintf(reason, sizeof(reason),
                 "incomplete message: not finished %" PRIu64 " ms after its first byte",
                 s->config.partial_timeout_usec / 1000);
        vl_add_string(params, "reason", reason);
        service_hang_up(s, p, TIMERD_E_INVALID_MESSAGE, params);
}
static void reap_idle(struct service *s, struct peer *p)
{
        json_object *params = json_object_new_object();

        log_debug("Closing connection %" PRIu64 " of uid %u: idle", p->session, (unsigned)p->uid);
        vl_add_string(params, "limit", "idle_usec");
        vl_add_u64(params, "max", s->config.idle_timeout_usec);
        service_hang_up(s, p, TIMERD_E_LIMIT_EXCEEDED, params);
}

void service_reap(struct service *s, uint64_t now_usec)
{
        enum conns_reap_kind kind;
        struct peer *p;

        while ((p = conns_next_reap(s, now_usec, &kind)))
                if (kind == CONNS_REAP_PARTIAL)
                        reap_partial(s, p);
                else
                        reap_idle(s, p);
        conns_reaped(s);
}

static void on_accept(struct loop_watch *w, int fd, uint32_t events, void *userdata)
{
        struct service *s = userdata;
        (void)w;
        (void)events;

        service_note_work(s);
        for (int i = 0; i < 64; i++) {
                int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (cfd < 0) {
                        if (errno == EMFILE || errno == ENFILE) {
                                /* Level-triggered, the pending connection would wake the loop
                                 * again at once: pause accepting until a connection closes. */
                                log_warning("accept: %s; pausing new connections until one "
                                            "closes",
                                            strerror(errno));
                                if (loop_watch_update(s->listen.watch, 0) >= 0)
                                        s->listen.paused = true;
                        } else if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
                                log_warning("accept: %s", strerror(errno));
                        return;
                }
                struct peer *p;
                int r = peer_new(cfd, ++s->listen.last_session, s->config.max_message,
                                 s->config.max_output, &p);
                if (r < 0) {
                        log_errno(r, "Cannot take a connection");
                        close(cfd);
                        continue;
                }
                p->service = s;
                struct peer *victim;
                if (!conns_admit(s, p, &victim)) {
                        peer_free(p);
                        continue;
                }
                if (victim)
                        evict(s, victim, p->uid);
                r = service_add_peer(s, p);
                if (r < 0) {
                        log_errno(r, "Cannot watch a connection");
                        conns_forget(s, p);
                        peer_free(p);
                }
        }
}

int service_start_listening(struct service *s, int listen_fd)
{
        conns_init(&s->conns, s->config.max_connections);
        s->listen.fd = listen_fd;
        return loop_watch(s->loop, listen_fd, LOOP_IN, on_accept, s, &s->listen.watch);
}

void service_stop_listening(struct service *s)
{
        loop_unwatch(s->listen.watch);
        s->listen.watch = NULL;
}
