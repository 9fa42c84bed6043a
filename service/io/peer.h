/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One client connection: its credentials, its framed input and bounded output, and the state of
 * the call it is being answered for. Calls on one connection are answered in order: the next
 * message is not taken while a call is open (a parked Wait, a stream).
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/list.h"
#include "varlink/frame.h"
#include "varlink/idl.h"
#include "varlink/message.h"

struct loop_watch;
struct service;

struct peer {
        struct service *service; /* the owner, for loop callbacks */
        int fd;
        uint64_t session; /* unique for the service's lifetime; never reused */
        uid_t uid;
        uid_t account; /* the uid its connection limits are charged to (service/conns.h) */
        gid_t gid;
        pid_t pid;
        struct vl_reader in;
        struct vl_parser parser;
        /* What the parser checks a call's parameters with as it reads them: the IDL's methods and
         * the call's field maps, which live as long as the call read in place. */
        struct vl_call_check check;
        struct vl_view_fields maps[VL_IDL_OBJECTS_MAX];
        struct vl_writer out;
        struct vl_text text;    /* a message being written into out (peer_text_begin()) */
        uint64_t text_position; /* where it starts */
        bool reply_more;        /* that message is a reply that keeps the call open */
        struct loop_watch *watch;
        uint32_t watched_events;
        size_t sending;   /* out's first bytes, sent by loop_send(): its outcome not yet taken */
        bool send_direct; /* the socket filled under a loop_send(): send(2) until all is written */
        unsigned calls_from_read; /* messages taken since the last read brought bytes */
        unsigned quiet_reads;     /* reads in a row that brought at most one call, while bulk */
        bool bulk;                /* the watch is told the peer streams (loop_stream_bulk()) */
        int pidfd;                /* the peer process; -1 when it could not be pinned down */
        /* NULL until AcknowledgeSignals: then, per signal number below NSIG, the generation of
         * the timer whose signal was sent and not yet SignalTaken (0: none); service/signals.h. */
        uint64_t *signals_unacknowledged;
        struct loop_watch *pidfd_watch;

        bool call_open;       /* a call is taken and not finally answered */
        bool call_more;       /* it asked for more: replies carry continues */
        bool call_oneway;     /* it wants no reply */
        uint64_t call_cookie; /* names the open call for parked requests */
        bool queued;          /* an intent for it is in the queue */
        uint64_t burst_drain; /* the drain `burst` counts calls of */
        unsigned burst;
        bool paged; /* the call just taken wrote a List page: its burst ends */
        /* During a virtual clock's Advance: what it waits for of this peer (virtual-clock.c). */
        uint8_t advance_role;
        bool eof;           /* the client closed its end */
        bool input_full;    /* a whole buffer of calls waits for the open one to end */
        bool subscriber;    /* the open call is a Subscribe stream */
        bool subscribe_all; /* … of every owner's events */
        bool doomed;        /* close once output is flushed (or at once when it cannot be) */
        bool privileged;    /* uid 0 or the admin group: sees and controls every owner's
                             * timers, has reserved places in the table, is never evicted */

        uint64_t active_usec;        /* monotonic: its last call ended or bytes came */
        uint64_t partial_since_usec; /* monotonic: the first byte of its unfinished message came */
        struct list_node idle_node;  /* on the table's list of peers with no call (conns.h) */
        struct list_node partial_node; /* on its list of peers holding part of a message */

        struct list_node node;       /* on the service's live peers, then on its closed ones */
        struct list_node flush_node; /* on the service's list of peers with output to write */
};

/*
 * Take ownership of fd (non-blocking, accepted), read its SO_PEERCRED and pin the peer process
 * with a pidfd (SO_PEERPIDFD, or pidfd_open checked against a reused pid), so a process that
 * exits is noticed and never confused with a later one of the same pid.
 */
int peer_new(int fd, uint64_t session, size_t max_message, size_t max_output, struct peer **ret);
void peer_free(struct peer *p);

/* Read what the socket has, through its loop watch (loop_read()): >0 bytes, 0 EOF, -EAGAIN,
 * -EMSGSIZE, -errno. */
long peer_read(struct peer *p);

/*
 * Take the next whole message as a call: 1 with *ret filled (read in place in p->parser, valid
 * until the next message is taken), 0 when none is held, -EMSGSIZE (oversize), -EBADMSG (not
 * JSON), -EPROTO (not a call). Errors consume the message.
 */
int peer_next_call(struct peer *p, int max_depth, struct vl_call *ret);

/*
 * A message written straight into p's output: the text to write it with (room bytes had at once),
 * then its end, which queues it: 0 with where it starts and its length (NUL excluded); -ENOMEM
 * when the text failed, or -ENOBUFS when the client does not read and the bound is reached (then
 * nothing was queued). Nothing else is queued for p in between.
 */
struct vl_text *peer_text_begin(struct peer *p, size_t room);
int peer_text_end(struct peer *p, uint64_t *ret_position, size_t *ret_len);
/* Drop the message being written: nothing is queued. */
void peer_text_cancel(struct peer *p);

/*
 * Write queued output: 0 all written, -EAGAIN some left, -errno broken. Through the loop's next
 * wait where the watch can (loop_send(): no system call of its own), and its outcome taken at
 * the next flush; with send(2) after the socket filled under one, until all is written again.
 */
int peer_flush(struct peer *p);
/* The same, and what went through the loop has left, its outcome taken (a system call): 0 only
 * once every byte is written. For a connection to be closed once its output is out. */
int peer_flush_now(struct peer *p);

/* Whether output may be written now (none is, while it waits for the store's commit; nor while it
 * is on its way by loop_send()). */
bool peer_has_output(const struct peer *p);
/* Output queued and not yet handed to loop_send() or the socket, held output too. */
size_t peer_unsent(const struct peer *p);

/* Whether gid was p's primary or a supplementary group when it connected (SO_PEERCRED,
 * SO_PEERGROUPS): 1 or 0, or -errno when its groups cannot be read. */
int peer_in_group(const struct peer *p, gid_t gid);
