/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/conns.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/arith.h"
#include "service/io/clock.h"
#include "service/io/log.h"
#include "service/core/parked.h"
#include "service/core/subuids.h"
#include "service/io/peer.h"
#include "service/service.h"
#include "varlink/names.h"

/* Reaps due within this of each other share one wake-up. */
#define REAP_GRANULARITY_USEC UINT64_C(250000)

/* Descriptors kept for the service itself (listener, signalfd, loop, journal, logs). */
#define FDS_FOR_THE_SERVICE 32
/* Each connection holds its socket and a pidfd of its process. */
#define FDS_PER_CONNECTION 2

static uid_t account_of(const struct conns *c, uid_t uid)
{
        return c->subuids ? subuids_account(c->subuids, uid) : uid;
}

/* uid 0, or a member of the admin group (config.h): it sees and controls every owner's timers and
 * shares the reserved places. A member whose groups cannot be read is not taken for one. */
static bool peer_privileged(const struct service *s, const struct peer *p)
{
        if (p->uid == 0)
                return true;
        if (s->config.admin_gid == (gid_t)-1)
                return false;
        int r = peer_in_group(p, s->config.admin_gid);
        if (r < 0)
                log_warning("Cannot read the groups of connection %" PRIu64 " of uid %u (%s): "
                            "not taken for a member of the admin group",
                            p->session, (unsigned)p->uid, strerror(-r));
        return r > 0;
}

void conns_init(struct conns *c, uint32_t max_connections)
{
        struct rlimit nofile;

        tally_init(&c->uids);
        tally_init(&c->accounts);
        c->subuids = NULL;
        list_init(&c->idle);
        list_init(&c->partial);
        c->n_unprivileged = 0;
        c->fd_capacity = UINT32_MAX;
        if (getrlimit(RLIMIT_NOFILE, &nofile) < 0)
                return;
        /* Out of descriptors, accept fails for everyone, uid 0 included: the unprivileged share
         * ends before. */
        if (nofile.rlim_cur == RLIM_INFINITY || nofile.rlim_cur / FDS_PER_CONNECTION >= UINT32_MAX)
                return;
        c->fd_capacity =
            nofile.rlim_cur > FDS_FOR_THE_SERVICE + FDS_PER_CONNECTION
                ? (uint32_t)((nofile.rlim_cur - FDS_FOR_THE_SERVICE) / FDS_PER_CONNECTION)
                : 1;
        if (c->fd_capacity < max_connections)
                log_notice("The descriptor limit (%llu) holds %u connections: unprivileged clients "
                           "share at most that many (raise LimitNOFILE= for more)",
                           (unsigned long long)nofile.rlim_cur, (unsigned)c->fd_capacity);
}

static uint32_t table_size(const struct service *s)
{
        return s->config.max_connections;
}

/*
 * The places unprivileged clients share: all but the reserved ones (at most half the table),
 * within what the descriptor limit allows, so that they cannot take the descriptors the privileged
 * would need to be accepted.
 */
static uint32_t unprivileged_room(const struct service *s)
{
        uint32_t size = table_size(s) < s->conns.fd_capacity ? table_size(s) : s->conns.fd_capacity;
        uint32_t reserved = s->config.reserved_connections;

        if (reserved > size / 2)
                reserved = size / 2;
        return size - reserved;
}

static uint64_t round_up_to_granularity(uint64_t usec)
{
        uint64_t rest = usec % REAP_GRANULARITY_USEC;

        if (rest == 0 || usec > UINT64_MAX - REAP_GRANULARITY_USEC)
                return usec;
        return usec + REAP_GRANULARITY_USEC - rest;
}

/* The earliest reap, rounded up; false when nothing could be reaped. */
static bool next_reap(const struct service *s, uint64_t *ret)
{
        const struct conns *c = &s->conns;
        uint64_t when = UINT64_MAX;
        bool any = false;

        if (!list_empty(&c->partial)) {
                const struct peer *p = list_entry(c->partial.next, struct peer, partial_node);
                when = saturating_add(p->partial_since_usec, s->config.partial_timeout_usec);
                any = true;
        }
        if (!list_empty(&c->idle)) {
                const struct peer *p = list_entry(c->idle.next, struct peer, idle_node);
                uint64_t idle = saturating_add(p->active_usec, s->config.idle_timeout_usec);
                when = idle < when ? idle : when;
                any = true;
        }
        *ret = round_up_to_granularity(when);
        return any;
}

/* Ask for a wake-up at the earliest reap if the kernel timer is not already due before it. Never
 * later: a busy connection costs no re-arm; an early wake-up re-arms (conns_reap). */
static void want_reap(struct service *s)
{
        struct clock_wake *w = &s->wake.clock[TIMERD_CLOCK_MONOTONIC];
        uint64_t when;

        if (!next_reap(s, &when) || (w->conns_armed && w->conns_deadline <= when))
                return;
        w->conns_armed = true;
        w->conns_deadline = when;
        int r = service_sync_wake(s, TIMERD_CLOCK_MONOTONIC);
        if (r < 0) {
                log_errno(r, "Cannot arm the monotonic timer for idle connections");
                service_exit(s, EXIT_REASON_BACKEND_FAULT);
        }
}

static uint64_t now_usec(void)
{
        uint64_t now = 0;

        (void)clock_read(TIMERD_CLOCK_MONOTONIC, &now);
        return now;
}

static void list_move_to_back(struct list_node *head, struct list_node *n)
{
        if (list_linked(n))
                list_remove(n);
        list_append(head, n);
}

/* The account with the most unprivileged connections (the lowest uid among equals), or NULL
 * when there is none. */
static const struct tally_count *heaviest_unprivileged(const struct conns *c)
{
        const struct tally_count *heaviest = NULL, *a;
        size_t i = 0;

        while ((a = tally_next(&c->accounts, &i)))
                if (a->marked > 0 && (!heaviest || a->marked > heaviest->marked ||
                                      (a->marked == heaviest->marked && a->uid < heaviest->uid)))
                        heaviest = a;
        return heaviest;
}

/* The account's least recently active unprivileged connection without a call, else its
 * oldest. */
static struct peer *eviction_victim(const struct service *s, uid_t account)
{
        struct list_node *n;

        list_for_each (n, &s->conns.idle) {
                struct peer *p = list_entry(n, struct peer, idle_node);
                if (p->account == account && !p->privileged)
                        return p;
        }
        /* The live list is oldest first. */
        list_for_each (n, &s->peers.live) {
                struct peer *p = list_entry(n, struct peer, node);
                if (p->account == account && !p->privileged)
                        return p;
        }
        return NULL;
}

/* Say why before hanging up; a full socket buffer just drops the reason. */
static void refuse(struct peer *p, const char *limit, uint64_t max)
{
        json_object *params = json_object_new_object();
        vl_add_string(params, "limit", limit);
        vl_add_u64(params, "max", max);
        char *msg = vl_error_encode(vl_error_to_name(TIMERD_E_LIMIT_EXCEEDED), params);
        if (msg)
                (void)!send(p->fd, msg, strlen(msg) + 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        free(msg);
}

bool conns_admit(struct service *s, struct peer *p, struct peer **ret_victim)
{
        struct conns *c = &s->conns;
        uid_t account = account_of(c, p->uid);
        const struct tally_count *a = tally_find(&c->accounts, account);
        uint64_t mine = a ? a->marked : 0;
        /* An account's own uid counts its own connections: the uids charged to it never keep it
         * out. */
        uint64_t held = account == p->uid ? tally_get(&c->uids, p->uid) : (a ? a->n : 0);
        struct peer *victim = NULL;
        bool full;

        *ret_victim = NULL;
        p->privileged = peer_privileged(s, p);
        p->account = account;
        if (held >= s->config.max_connections_per_uid) {
                refuse(p, "connections_per_uid", s->config.max_connections_per_uid);
                return false;
        }
        full = s->peers.n_live >= table_size(s) ||
               (!p->privileged && c->n_unprivileged >= unprivileged_room(s));
        if (full) {
                const struct tally_count *heaviest = heaviest_unprivileged(c);
                /* The privileged take a place from anyone else; others only from a uid holding
                 * at least two more than they do. */
                if (!heaviest || (!p->privileged && heaviest->marked <= mine + 1)) {
                        refuse(p, "connections", table_size(s));
                        return false;
                }
                victim = eviction_victim(s, heaviest->uid);
        }
        if (tally_charge(&c->uids, p->uid, 1, 0) < 0) {
                log_error("Out of memory taking a connection of uid %u", (unsigned)p->uid);
                return false;
        }
        /* An account's unprivileged connections are marked: the only ones eviction takes. */
        if (tally_charge(&c->accounts, account, 1, !p->privileged) < 0) {
                tally_sub(&c->uids, p->uid, 1, 0);
                log_error("Out of memory taking a connection of uid %u", (unsigned)p->uid);
                return false;
        }
        c->n_unprivileged += !p->privileged;
        p->active_usec = now_usec();
        list_append(&c->idle, &p->idle_node);
        want_reap(s);
        *ret_victim = victim;
        return true;
}

void conns_forget(struct service *s, struct peer *p)
{
        struct conns *c = &s->conns;

        if (list_linked(&p->idle_node))
                list_remove(&p->idle_node);
        if (list_linked(&p->partial_node))
                list_remove(&p->partial_node);
        /* Every connection dropped was admitted: accept.c drops it only after conns_admit(). */
        c->n_unprivileged -= !p->privileged;
        tally_sub(&c->uids, p->uid, 1, 0);
        tally_sub(&c->accounts, p->account, 1, !p->privileged);
}

uint32_t conns_of(const struct conns *c, uid_t uid)
{
        return (uint32_t)tally_get(&c->uids, uid);
}

int conns_subuids_prepare(const struct service *s, const struct subuids *t, struct tally *ret)
{
        struct list_node *n;

        tally_init(ret);
        list_for_each (n, &s->peers.live) {
                const struct peer *p = list_entry(n, struct peer, node);
                uid_t account = t ? subuids_account(t, p->uid) : p->uid;
                if (tally_charge(ret, account, 1, !p->privileged) < 0) {
                        tally_done(ret);
                        return -ENOMEM;
                }
        }
        return 0;
}

void conns_subuids_commit(struct service *s, const struct subuids *t, struct tally *prepared)
{
        struct list_node *n;

        list_for_each (n, &s->peers.live) {
                struct peer *p = list_entry(n, struct peer, node);
                p->account = t ? subuids_account(t, p->uid) : p->uid;
        }
        tally_done(&s->conns.accounts);
        s->conns.accounts = *prepared;
        s->conns.subuids = t;
}

void conns_note_input(struct service *s, struct peer *p, size_t n_read)
{
        /* Stamped with the iteration's start, read as its work began before this read: the clocks
         * started here count seconds, not the microseconds between, and a reading of the clock
         * costs more than the rest of this. */
        uint64_t now = s->iteration_start_usec ? s->iteration_start_usec : now_usec();
        size_t unfinished = vl_reader_unfinished(&p->in);

        p->active_usec = now;
        if (list_linked(&p->idle_node))
                list_move_to_back(&s->conns.idle, &p->idle_node);
        if (unfinished == 0) {
                if (list_linked(&p->partial_node))
                        list_remove(&p->partial_node);
                return;
        }
        /* The clock runs from a message's first byte, not its latest: a byte now and then must
         * not hold the connection. It restarts only when this read began the unfinished message. */
        if (list_linked(&p->partial_node) && unfinished > n_read)
                return;
        p->partial_since_usec = now;
        list_move_to_back(&s->conns.partial, &p->partial_node);
        want_reap(s);
}

void conns_note_call(struct service *s, struct peer *p)
{
        if (p->call_open || p->fd < 0) {
                if (list_linked(&p->idle_node))
                        list_remove(&p->idle_node);
                return;
        }
        if (list_linked(&p->idle_node))
                return;
        p->active_usec = now_usec();
        list_append(&s->conns.idle, &p->idle_node);
        want_reap(s);
}

struct peer *conns_next_reap(struct service *s, uint64_t now, enum conns_reap_kind *ret_kind)
{
        struct conns *c = &s->conns;

        while (!list_empty(&c->partial)) {
                struct peer *p = list_entry(c->partial.next, struct peer, partial_node);
                if (saturating_add(p->partial_since_usec, s->config.partial_timeout_usec) > now)
                        break;
                /* While its calls wait their turn the service does not read it: not its silence. */
                if (p->input_full) {
                        p->partial_since_usec = now;
                        list_move_to_back(&c->partial, &p->partial_node);
                        continue;
                }
                list_remove(&p->partial_node);
                *ret_kind = CONNS_REAP_PARTIAL;
                return p;
        }
        while (!list_empty(&c->idle)) {
                struct peer *p = list_entry(c->idle.next, struct peer, idle_node);
                if (saturating_add(p->active_usec, s->config.idle_timeout_usec) > now)
                        break;
                /* Closing it would take something from its client: look again a timeout later. */
                if (registry_session_holds(s->registry, p->session) ||
                    parked_session_holds(s->parked, p->session)) {
                        p->active_usec = now;
                        list_move_to_back(&c->idle, &p->idle_node);
                        continue;
                }
                list_remove(&p->idle_node);
                *ret_kind = CONNS_REAP_IDLE;
                return p;
        }
        return NULL;
}

void conns_reaped(struct service *s)
{
        struct clock_wake *w = &s->wake.clock[TIMERD_CLOCK_MONOTONIC];

        w->conns_armed = next_reap(s, &w->conns_deadline);
}
