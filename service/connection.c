/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/connection.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "service/io/log.h"
#include "service/io/peer.h"
#include "service/params.h"
#include "service/service.h"
#include "service/store.h"
#include "varlink/names.h"

static uint64_t session_hash(const void *entry)
{
        return hash_mix64(((const struct peer *)entry)->session);
}

static bool session_matches(const void *entry, const void *key)
{
        return ((const struct peer *)entry)->session == *(const uint64_t *)key;
}

void service_peers_init(struct peers *peers)
{
        *peers = (struct peers){0};
        list_init(&peers->live);
        list_init(&peers->closing);
        list_init(&peers->closed);
        list_init(&peers->flushes);
}

struct peer *service_find_session(struct service *s, uint64_t session)
{
        return hashmap_find(&s->peers.sessions, hash_mix64(session), session_matches, &session);
}

static void on_peer_io(struct loop_watch *w, int fd, uint32_t events, void *userdata);
static void on_peer_exit(struct loop_watch *w, int fd, uint32_t events, void *userdata);

int service_add_peer(struct service *s, struct peer *p)
{
        /* Reserved here, not before the eviction: dropping the last live connection frees the
         * table. */
        if (!s->peers.sessions.hash_of)
                hashmap_init(&s->peers.sessions, session_hash);
        int r = hashmap_reserve(&s->peers.sessions, s->peers.sessions.n_entries + 1);
        if (r < 0)
                return r;
        r = loop_watch_stream(s->loop, p->fd, LOOP_IN, on_peer_io, p, &p->watch);
        if (r < 0)
                return r;
        p->watched_events = LOOP_IN;
        if (p->pidfd >= 0 &&
            loop_watch(s->loop, p->pidfd, LOOP_IN, on_peer_exit, p, &p->pidfd_watch) < 0) {
                close(p->pidfd);
                p->pidfd = -1;
        }
        list_append(&s->peers.live, &p->node);
        s->peers.n_live++;
        hashmap_insert(&s->peers.sessions, session_hash(p), p);
        return 0;
}

static void peer_update_watch(struct service *s, struct peer *p)
{
        /* Nothing more to read after end of stream, or while the input buffer is full of calls
         * that wait their turn (level-triggered polling would spin). A hang-up still shows as
         * LOOP_ERR. */
        uint32_t events = p->doomed || p->eof || p->input_full ? 0 : LOOP_IN;
        if (peer_has_output(p))
                events |= LOOP_OUT;
        if (events == p->watched_events)
                return;
        int r = loop_watch_update(p->watch, events);
        if (r < 0) {
                log_errno(r, "Cannot watch connection %" PRIu64, p->session);
                service_drop_peer(s, p);
                return;
        }
        p->watched_events = events;
}

/* Output past this is written at once rather than at the iteration's flush: a long reply (a List)
 * starts moving, and a connection's output waiting for the flush stays small. */
#define FLUSH_THRESHOLD (64 * 1024)

static void flush_list(struct service *s, struct peer *p)
{
        if (!list_linked(&p->flush_node))
                list_append(&s->peers.flushes, &p->flush_node);
}

static void flush_unlist(struct peer *p)
{
        if (list_linked(&p->flush_node))
                list_remove(&p->flush_node);
}

/* Write what p has queued; a broken connection, or a doomed one with nothing left, is dropped. */
static void peer_write(struct service *s, struct peer *p)
{
        flush_unlist(p);
        int r = p->doomed ? peer_flush_now(p) : peer_flush(p);
        if ((r < 0 && r != -EAGAIN) || (p->doomed && r == 0 && peer_unsent(p) == 0)) {
                service_drop_peer(s, p);
                return;
        }
        peer_update_watch(s, p);
}

/* Queue what the store released: its holds end, and the peers are written. */
void service_send_released(struct service *s)
{
        struct peer *p;
        bool broken;

        while (store_take_released(s, &p, &broken)) {
                if (broken) {
                        service_drop_peer(s, p);
                        continue;
                }
                vl_writer_release(&p->out);
                flush_list(s, p);
        }
        service_flush_all(s);
}

/* p's message just queued (at position, len bytes): out now, or once the store's commit releases
 * it. Nothing leaves before the changes it may describe are durable (store.c). */
static void message_queued(struct service *s, struct peer *p, uint64_t position, size_t len)
{
        switch (store_hold(s, p, position, len)) {
        case STORE_HELD:
                return;
        case STORE_BROKEN:
                service_drop_peer(s, p);
                service_send_released(s);
                return;
        case STORE_RELEASED:
                flush_list(s, p);
                service_send_released(s);
                return;
        case STORE_SEND:
                break;
        }
        flush_list(s, p);
        if (vl_writer_sendable(&p->out) - p->sending >= FLUSH_THRESHOLD)
                peer_write(s, p);
}

/* End the message written into p's output (peer_text_begin()) and send it: 0, -ENOMEM (nothing
 * was queued), -ENOBUFS (p was dropped). */
static int text_end(struct service *s, struct peer *p)
{
        uint64_t position;
        size_t len;
        int r = peer_text_end(p, &position, &len);

        if (r == -ENOBUFS) {
                log_warning("Dropping connection %" PRIu64
                            " (uid %u): it does not read its replies",
                            p->session, (unsigned)p->uid);
                service_drop_peer(s, p);
        } else if (r == 0)
                message_queued(s, p, position, len);
        return r;
}

/* An error message (parameters taken) written into p's output and sent, as text_end(). */
static int error_text(struct service *s, struct peer *p, int error, json_object *parameters)
{
        vl_text_error_tree(peer_text_begin(p, 0), vl_error_to_name(error), parameters);
        return text_end(s, p);
}

static void peer_pump(struct service *s, struct peer *p);

static void call_finished(struct service *s, struct peer *p)
{
        p->call_open = false;
        p->call_more = false;
        p->call_oneway = false;
        conns_note_call(s, p);
        if (p->input_full) {
                p->input_full = false;
                peer_update_watch(s, p);
        }
        peer_pump(s, p);
}

/* Whether a reply with `continues` keeps p's call open: the flag its encoding must carry. */
static bool reply_continues(const struct peer *p, bool continues)
{
        return continues && p->call_more;
}

struct vl_text *service_reply_begin(struct service *s, struct peer *p, bool continues, size_t room)
{
        struct vl_text *t = peer_text_begin(p, room);

        (void)s;
        p->reply_more = reply_continues(p, continues);
        vl_text_reply_head(t, p->reply_more);
        return t;
}

void service_reply_cancel(struct service *s, struct peer *p)
{
        (void)s;
        peer_text_cancel(p);
}

void service_reply_end(struct service *s, struct peer *p)
{
        bool more = p->reply_more;

        if (p->call_oneway)
                peer_text_cancel(p);
        else if (vl_text_reply_close(&p->text), text_end(s, p) == -ENOMEM) {
                service_error(s, p, TIMERD_E_BUSY, NULL);
                return;
        }
        if (!more && !p->doomed && p->fd >= 0)
                call_finished(s, p);
}

/* Answer the open call of p with parameters (owned; NULL, or a tree missing a part: an
 * allocation failed on the way, answered Busy), ending it. */
static void reply_parameters_send(struct service *s, struct peer *p, json_object *parameters)
{
        if (!p->call_oneway && parameters) {
                vl_text_reply_tree(peer_text_begin(p, 0), parameters, false);
                if (text_end(s, p) == -ENOMEM) {
                        service_error(s, p, TIMERD_E_BUSY, NULL);
                        return;
                }
        } else if (!p->call_oneway) {
                service_error(s, p, TIMERD_E_BUSY, NULL);
                return;
        } else
                json_object_put(parameters);
        if (!p->doomed && p->fd >= 0)
                call_finished(s, p);
}

/* The errors whose IDL declares no parameters: any other one without them lost them to a failed
 * allocation. */
static bool error_without_parameters(int error)
{
        switch (error) {
        case TIMERD_E_EXPECTED_MORE:
        case TIMERD_E_PERMISSION_DENIED:
        case TIMERD_E_TIMEOUT:
        case TIMERD_E_SHUTTING_DOWN:
        case TIMERD_E_BUSY:
        case TIMERD_E_NOTHING_TO_WAIT_FOR:
                return true;
        default:
                return false;
        }
}

/*
 * Out of memory is answered Busy (try again), with nothing else in the answer: an errno (no wire
 * name) from below, an error whose parameters could not be made, or one whose text could not be.
 * When not even Busy can be written (a new connection's output buffer is allocated by its first
 * answer) the connection is closed: a call is answered or its connection ends, never left hanging.
 */
void service_error(struct service *s, struct peer *p, int error, json_object *parameters)
{
        bool whole = vl_error_to_name(error) && (parameters || error_without_parameters(error));

        if (p->call_oneway || !whole)
                json_object_put(parameters);
        if (!p->call_oneway && (!whole || error_text(s, p, error, parameters) == -ENOMEM) &&
            error_text(s, p, TIMERD_E_BUSY, NULL) == -ENOMEM) {
                log_warning("Closing connection %" PRIu64 " (uid %u): out of memory for an answer",
                            p->session, (unsigned)p->uid);
                service_drop_peer(s, p);
        }
        if (!p->doomed && p->fd >= 0)
                call_finished(s, p);
}

struct reply reply_fail(const struct param_error *err)
{
        return reply_error(err->error, params_error_json(err));
}

void service_send_reply(struct service *s, struct peer *p, struct reply r)
{
        switch (r.kind) {
        case REPLY_NONE:
                break;
        case REPLY_PARAMETERS:
                reply_parameters_send(s, p, r.parameters);
                break;
        case REPLY_WRITTEN:
                service_reply_end(s, p);
                break;
        case REPLY_ERROR:
                service_error(s, p, r.error, r.parameters);
                break;
        }
}

/* An error outside any call (bad framing): answer it, then hang up once it is written. */
static void peer_protocol_error(struct service *s, struct peer *p, int error, json_object *params)
{
        p->doomed = true;
        if (error_text(s, p, error, params) == -ENOMEM)
                service_drop_peer(s, p);
}

/* Take the next message of p, if it may: one open call per connection. */
static void peer_pump(struct service *s, struct peer *p)
{
        while (!p->call_open && !p->queued && !p->doomed && p->fd >= 0) {
                struct vl_call call;
                int r = peer_next_call(p, s->config.max_depth, &call);
                if (r == 0) {
                        if (p->eof)
                                service_drop_peer(s, p);
                        return;
                }
                if (r == -EMSGSIZE) {
                        json_object *params = json_object_new_object();
                        vl_add_u64(params, "max", s->config.max_message);
                        peer_protocol_error(s, p, TIMERD_E_REQUEST_TOO_LARGE, params);
                        return;
                }
                if (r < 0) {
                        /* The framing is intact: answer and go on with the next message. */
                        json_object *params = r == -ENOMEM ? NULL : json_object_new_object();
                        vl_add_string(params, "reason",
                                      r == -EILSEQ    ? "not valid UTF-8"
                                      : r == -EBADMSG ? "not JSON, or nested too deep"
                                                      : "not a varlink call");
                        p->call_open = true;
                        conns_note_call(s, p);
                        service_error(s, p, r == -ENOMEM ? TIMERD_E_BUSY : TIMERD_E_INVALID_MESSAGE,
                                      params);
                        continue;
                }
                p->call_open = true;
                p->call_more = call.more;
                p->call_oneway = call.oneway;
                p->call_cookie = ++s->peers.last_cookie;
                conns_note_call(s, p);
                r = intent_post(&s->intents, p, p->session, &call);
                if (r < 0) {
                        service_error(s, p, TIMERD_E_BUSY, NULL);
                        continue;
                }
                p->queued = true;
        }
}

static void on_peer_io(struct loop_watch *w, int fd, uint32_t events, void *userdata)
{
        struct peer *p = userdata;
        struct service *s = p->service;
        (void)w;
        (void)fd;

        service_note_work(s);
        if (events & LOOP_OUT) {
                peer_write(s, p);
                if (p->fd < 0)
                        return;
        }
        if (!(events & (LOOP_IN | LOOP_ERR)))
                return;
        long n = peer_read(p);
        if (n > 0)
                conns_note_input(s, p, (size_t)n);
        if (n == -ENOBUFS) {
                /* The buffer is full of calls waiting their turn. A hang-up now means the open
                 * call has nobody to answer; otherwise stop reading until the call ends. */
                if ((events & LOOP_ERR) && p->call_open && !p->queued) {
                        service_drop_peer(s, p);
                        return;
                }
                p->input_full = true;
                peer_update_watch(s, p);
                return;
        }
        if (n == 0 || (n < 0 && n != -EAGAIN && n != -EMSGSIZE)) {
                /* Gone, or only half-closed: calls already received are still answered, but a
                 * parked call has nobody left to answer. */
                p->eof = true;
                if (n < 0 || (p->call_open && !p->queued)) {
                        service_drop_peer(s, p);
                        return;
                }
                peer_update_watch(s, p);
        }
        peer_pump(s, p);
}

/* The peer's process exited: whatever it left is retired, even if its socket lives on elsewhere. */
static void on_peer_exit(struct loop_watch *w, int fd, uint32_t events, void *userdata)
{
        struct peer *p = userdata;
        (void)w;
        (void)fd;
        (void)events;

        service_note_work(p->service);
        service_drop_peer(p->service, p);
}

void service_hang_up(struct service *s, struct peer *p, int error, json_object *parameters)
{
        if (p->fd < 0) {
                json_object_put(parameters);
                return;
        }
        uint64_t position;
        size_t len;

        /* Queued after whole messages, so the framing holds, and before what waits for the
         * store, which nobody will read; what the socket does not take at once is lost with the
         * connection. */
        vl_writer_drop_held(&p->out);
        vl_text_error_tree(peer_text_begin(p, 0), vl_error_to_name(error), parameters);
        if (peer_text_end(p, &position, &len) == 0)
                (void)peer_flush(p);
        service_drop_peer(s, p);
}

void service_drop_peer(struct service *s, struct peer *p)
{
        if (p->fd < 0)
                return;
        loop_unwatch(p->watch);
        p->watch = NULL;
        loop_unwatch(p->pidfd_watch);
        p->pidfd_watch = NULL;
        close(p->fd);
        p->fd = -1;
        list_remove(&p->node);
        s->peers.n_live--;
        hashmap_remove(&s->peers.sessions, session_hash(p), p);
        /* Nothing is left allocated once every connection is gone. */
        if (s->peers.sessions.n_entries == 0)
                hashmap_done(&s->peers.sessions);
        conns_forget(s, p);
        flush_unlist(p);
        if (s->listen.paused && loop_watch_update(s->listen.watch, LOOP_IN) >= 0)
                s->listen.paused = false;
        list_append(&s->peers.closing, &p->node);
        service_unsubscribe(s, p);
}

struct peer *service_take_closing(struct service *s)
{
        if (list_empty(&s->peers.closing))
                return NULL;
        struct peer *p = list_entry(s->peers.closing.next, struct peer, node);
        list_remove(&p->node);
        list_append(&s->peers.closed, &p->node);
        return p;
}

void service_unsubscribe(struct service *s, struct peer *p)
{
        if (!p->subscriber)
                return;
        p->subscriber = false;
        s->peers.n_subscribers--;
}

/* A drop may queue output for others (events to subscribers): they join the list. */
void service_flush_all(struct service *s)
{
        while (!list_empty(&s->peers.flushes))
                peer_write(s, list_entry(s->peers.flushes.next, struct peer, flush_node));
}

void service_free_closed_peers(struct service *s)
{
        while (!list_empty(&s->peers.closed)) {
                struct peer *p = list_entry(s->peers.closed.next, struct peer, node);
                list_remove(&p->node);
                peer_free(p);
        }
}
