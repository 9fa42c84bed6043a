/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The store: retained timers made durable in the journal (service/io/journal.h).
 *
 * Group commit. The registry tracks every change to a retained timer (registry.h). Once per loop
 * iteration, after the intents are drained, store_commit() appends all of them and makes them
 * durable with one journal_commit() — one write and one fdatasync — before any reply for them
 * leaves the service. The sync is synchronous, on the loop thread: the replies wait for it anyway,
 * the loop serves nothing else while they do, and one fdatasync per iteration already carries
 * every change of every client of that iteration (the more clients, the more changes per sync).
 * An asynchronous sync (IORING_OP_FSYNC) would need the timerfd backend to have one too, and
 * would only let the loop accept calls whose answers must wait for the next sync in any case.
 *
 * Held output. While a change to a retained timer is not durable, nothing is written to any
 * connection: every message (a reply, a firing's run token, an event) is held where it was
 * written, in its connection's output (vl_writer_hold()), noted here in order, and sent after the
 * commit — so nothing a client reads describes a state that a crash could undo.
 * Only output waits, never the loop or the connection: a client pipelining calls has them all
 * taken in the same iteration and committed together. An answer to a call that changed a
 * retained timer is marked, so that a failed commit can turn it into StoreUnavailable.
 *
 * Disk trouble. A failed commit (ENOSPC, EIO: the journal is left as it was) undoes in memory
 * every change the iteration's calls made (registry_changes_rollback()) and answers those calls
 * StoreUnavailable; transient timers never touch the disk and keep working. Changes no call made
 * (firings, a closed session) stay in memory and pending, and go with the next commit. Status says
 * "degraded: <strerror>" until a commit succeeds again. (A read answered in the same iteration
 * may have shown a change that was then undone.) If memory cannot be put back as it was, the
 * service stops with a store fault: the journal holds the truth for the next start.
 *
 * Start. A damaged end of the journal is dropped (its bytes kept in journal.damaged-*) and
 * logged as what it is: acknowledged batches lost (the journal's proof names them), a torn last
 * batch, or data written whole and damaged since.
 * SIGTERM is looked for during the replay: the loop does not read the signalfd yet.
 * Every timer of the journal is restored (registry_restore(): runs handed to a client are
 * ended, pending ones stay; missed deadlines catch up once, spread by randomized_delay_usec with
 * values from a random seed), as the journal hands it over: each record is read once, and a
 * snapshot's is checked where it is taken. A name that is not valid, a timer the registry
 * refuses, a corrupt middle or another format version end the service with a store fault rather
 * than guess, also after timers were restored (the files are unchanged, the loop never ran).
 * Restored timers keep their generations. The generations an earlier start gave to transient
 * timers were never saved, so after the first start on a state directory new ones start above
 * the wall clock in microseconds: the service hands out fewer than one per microsecond, so no
 * claim from an earlier start can match a new timer (unless the wall clock went back by more
 * than the service ran).
 *
 * Reboots. Monotonic and boottime deadlines count from the boot. In the boot that wrote them they
 * hold as they are. After a reboot (another boot id, or an unknown one) they are carried across
 * by the wall clock, the only clock both boots share: a time t stands for the wall-clock moment
 * written_realtime + (t - written_clock), which becomes now_clock + (moment - now_realtime) on
 * this boot's clock, 0 at the earliest. The downtime counts as it would on a wall clock: a timer
 * due one hour after the machine went down for three is overdue by two and catches up at start.
 * Realtime clocks need nothing.
 *
 * Compaction starts after a successful commit, when nothing is pending and the journal outgrew its
 * snapshot: memory is then exactly what the journal holds. A forked child writes the snapshot
 * from its copy of that memory while the loop goes on committing; when the loop sees the child's
 * exit (its pidfd), the snapshot goes in with the journal's tail since the fork. A compaction
 * that failed leaves the journal in charge, shows in Status ("journal, compaction failed: ...")
 * until one succeeds, and is retried after a wait.
 */

#include "service/store.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "base/hashmap.h"
#include "loop/loop.h"
#include "service/io/journal.h"
#include "service/io/log.h"
#include "service/io/peer.h"
#include "service/service.h"
#include "service/zones.h"
#include "signalfd/sigfd.h"
#include "varlink/message.h"
#include "varlink/names.h"

/* A message held in its peer's output (vl_writer_hold()). */
struct held_message {
        struct peer *peer;
        uint64_t session;
        uint64_t position;   /* in the peer's output */
        size_t len;          /* without its NUL */
        bool answers_change; /* to a call that changed a retained timer */
        bool broken;         /* StoreUnavailable could not be put in its place */
};

struct store {
        struct journal *journal;
        char boot_id[JOURNAL_BOOT_ID_MAX + 1]; /* "" when unknown */
        struct held_message *held;
        size_t n_held;
        size_t allocated;
        bool releasing;         /* held messages are being taken: nothing more is held */
        size_t release_next;    /* the next held message store_take_released() gives */
        struct peer *call_peer; /* of the call being answered */
        uint64_t call_mark;     /* the registry's change count when it began */
        int error;              /* of the last commit */
        char status[96];
        /* A compaction's child runs while this watches its pidfd. */
        struct loop_watch *compaction_watch;
        struct td_now compaction_now; /* when it started: the time its records are written at */
};

/* The message of a -errno or -TIMERD_E_* error. */
static const char *error_message(int error)
{
        const char *m = vl_error_message(-error);

        return m ? m : strerror(-error);
}

static void read_boot_id(char *buf, size_t size)
{
        ssize_t n = -1;
        int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);

        if (fd >= 0) {
                n = read(fd, buf, size - 1);
                close(fd);
        }
        buf[n > 0 ? n : 0] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
}

static bool clock_counts_from_boot(enum timerd_clock c)
{
        return c == TIMERD_CLOCK_MONOTONIC || c == TIMERD_CLOCK_BOOTTIME ||
               c == TIMERD_CLOCK_BOOTTIME_ALARM;
}

/* `usec` on the clock of the boot that wrote j, as the same wall-clock moment on this boot's. */
static uint64_t rebased(uint64_t usec, const struct journal_timer *j, const struct td_now *now)
{
        uint64_t now_clock = now->usec[j->clock], now_realtime = now->usec[TIMERD_CLOCK_REALTIME];
        int64_t offset, result;

        /* Beyond any real clock: left alone rather than invented. */
        if (usec > INT64_MAX || j->written_clock_usec > INT64_MAX ||
            j->written_realtime_usec > INT64_MAX || now_clock > INT64_MAX ||
            now_realtime > INT64_MAX)
                return usec;
        if (__builtin_sub_overflow((int64_t)usec, (int64_t)j->written_clock_usec, &offset) ||
            __builtin_add_overflow(
                offset, (int64_t)j->written_realtime_usec - (int64_t)now_realtime, &offset) ||
            __builtin_add_overflow((int64_t)now_clock, offset, &result))
                return usec;
        return result > 0 ? (uint64_t)result : 0;
}

/* A calendar timer's schedule as the journal keeps it: its zone ("" is the local zone) loaded
 * and its expressions parsed again. The caller releases it. */
static int calendar_of_journal(struct service *s, const struct journal_timer *j,
                               const struct td_calendar **ret)
{
        struct td_calendar_error cal_error;
        const struct td_zone *zone;
        const struct td_calendar *c;
        int r;

        *ret = NULL;
        /* An invalid name is never logged: registry_restore() refuses it before the calendar. */
        if (j->policy != TIMERD_POLICY_CALENDAR || !registry_name_valid(j->name))
                return 0;
        r = zones_get(s->zones, j->timezone[0] ? j->timezone : NULL, &zone);
        if (r < 0)
                return log_errno(r, "Cannot load time zone %s of timer %s of uid %u", j->timezone,
                                 j->name, (unsigned)j->owner);
        r = td_calendar_new(zones_calendars(s->zones), j->calendar, zone, j->fixed_random_delay, &c,
                            &cal_error);
        if (r < 0)
                return log_errno(r, "Cannot read the calendar of timer %s of uid %u", j->name,
                                 (unsigned)j->owner);
        *ret = c;
        return 0;
}

/*
 * Copies of each field of base/timer-fields.h between snapshot (s) and journal (j): d and sm the
 * destination and its member, o and om the origin. The journal keeps a live cadence that is the
 * declared one as 0.
 */
#define TO_JOURNAL_U64           TD_COPY_ONE
#define TO_JOURNAL_INTERNAL_U64  TD_COPY_ONE
#define TO_JOURNAL_BOOL          TD_COPY_ONE
#define TO_JOURNAL_BOOL_ON       TD_COPY_ONE
#define TO_JOURNAL_INTERNAL_BOOL TD_COPY_ONE
#define TO_JOURNAL_CATCH_UP_MARK TD_COPY_ONE
#define TO_JOURNAL_SIGNO         TD_COPY_ONE
#define TO_JOURNAL_POLICY        TD_COPY_ONE
#define TO_JOURNAL_CLOCK         TD_COPY_ONE
#define TO_JOURNAL_LIFETIME      TD_COPY_ONE
#define TO_JOURNAL_DELIVERY      TD_COPY_ONE
#define TO_JOURNAL_STATE         TD_COPY_ONE
#define TO_JOURNAL_FAILURE       TD_COPY_ONE
#define TO_JOURNAL_OUTCOME       TD_COPY_ONE
#define TO_JOURNAL_DEADLINE      TD_COPY_PAIR
#define TO_JOURNAL_OPT_USEC      TD_COPY_PAIR
#define TO_JOURNAL_LIVE_CADENCE(d, dm, o, om)                                                      \
        (d)->dm = (o)->om == (o)->declaration.cadence_usec ? 0 : (o)->om;
#define TO_JOURNAL_RESULT(d, dm, o, om)                                                            \
        (d)->TD_FIRST(dm) = (o)->om.exit;                                                          \
        (d)->TD_SECOND(dm) = (o)->om.code;
#define FROM_JOURNAL_U64                        TD_COPY_ONE
#define FROM_JOURNAL_INTERNAL_U64               TD_COPY_ONE
#define FROM_JOURNAL_BOOL                       TD_COPY_ONE
#define FROM_JOURNAL_BOOL_ON                    TD_COPY_ONE
#define FROM_JOURNAL_INTERNAL_BOOL              TD_COPY_ONE
#define FROM_JOURNAL_CATCH_UP_MARK              TD_COPY_ONE
#define FROM_JOURNAL_SIGNO                      TD_COPY_ONE
#define FROM_JOURNAL_POLICY                     TD_COPY_ONE
#define FROM_JOURNAL_CLOCK                      TD_COPY_ONE
#define FROM_JOURNAL_LIFETIME                   TD_COPY_ONE
#define FROM_JOURNAL_DELIVERY                   TD_COPY_ONE
#define FROM_JOURNAL_STATE                      TD_COPY_ONE
#define FROM_JOURNAL_FAILURE                    TD_COPY_ONE
#define FROM_JOURNAL_OUTCOME                    TD_COPY_ONE
#define FROM_JOURNAL_DEADLINE                   TD_COPY_PAIR
#define FROM_JOURNAL_OPT_USEC                   TD_COPY_PAIR
#define FROM_JOURNAL_LIVE_CADENCE(d, dm, o, om) (d)->dm = (o)->om > 0 ? (o)->om : (o)->cadence_usec;
#define FROM_JOURNAL_RESULT(d, dm, o, om)                                                          \
        (d)->dm = (struct td_run_end){.exit = (o)->TD_FIRST(om), .code = (o)->TD_SECOND(om)};

static void snapshot_of_journal(const struct journal_timer *j, const struct td_now *now,
                                const char *boot_id, const struct td_calendar *calendar,
                                struct td_snapshot *ret)
{
        bool rebase = clock_counts_from_boot(j->clock) &&
                      (!boot_id[0] || !j->boot_id[0] || strcmp(boot_id, j->boot_id) != 0);
        struct td_declaration *d = &ret->declaration;

        /* Each member written once: zeroing the whole snapshot first, name and all, was 2 % of a
         * start's instructions. */
        ret->owner = j->owner;
        ret->session = 0;
#define FROM_JOURNAL_DECLARATION(kind, sm, wire, public, jm, position)                             \
        FROM_JOURNAL_##kind(d, sm, j, jm)
        TD_DECLARATION_FIELDS(FROM_JOURNAL_DECLARATION)
#undef FROM_JOURNAL_DECLARATION
        d->calendar = calendar;
#define FROM_JOURNAL_TIMER(kind, sm, wire, public, jm, position) FROM_JOURNAL_##kind(ret, sm, j, jm)
        TD_TIMER_FIELDS(FROM_JOURNAL_TIMER)
#undef FROM_JOURNAL_TIMER
        /* Fits, valid or not (the registry checks it): the journal's decoder bounds its length,
         * and both hold TIMERD_NAME_MAX + 1. */
        strcpy(ret->name, j->name);
        if (!rebase)
                return;
        if (ret->has_deadline)
                ret->next_deadline_usec = rebased(ret->next_deadline_usec, j, now);
        if (ret->run_active)
                ret->run_deadline_usec = rebased(ret->run_deadline_usec, j, now);
        if (ret->has_last_start)
                ret->last_start_usec = rebased(ret->last_start_usec, j, now);
        if (ret->has_last_finish)
                ret->last_finish_usec = rebased(ret->last_finish_usec, j, now);
}

static void journal_of_snapshot(const struct zones *zones, const struct td_snapshot *t,
                                const struct td_now *now, const char *boot_id,
                                struct journal_timer *ret)
{
        const struct td_declaration *d = &t->declaration;

        *ret = (struct journal_timer){
            .owner = t->owner,
            .written_realtime_usec = now->usec[TIMERD_CLOCK_REALTIME],
            .written_clock_usec = now->usec[d->clock],
        };
#define TO_JOURNAL_DECLARATION(kind, sm, wire, public, jm, position)                               \
        TO_JOURNAL_##kind(ret, jm, d, sm)
        TD_DECLARATION_FIELDS(TO_JOURNAL_DECLARATION)
#undef TO_JOURNAL_DECLARATION
#define TO_JOURNAL_TIMER(kind, sm, wire, public, jm, position) TO_JOURNAL_##kind(ret, jm, t, sm)
        TD_TIMER_FIELDS(TO_JOURNAL_TIMER)
#undef TO_JOURNAL_TIMER
        snprintf(ret->name, sizeof(ret->name), "%s", t->name);
        snprintf(ret->boot_id, sizeof(ret->boot_id), "%s", boot_id);
        if (d->calendar) {
                snprintf(ret->calendar, sizeof(ret->calendar), "%s", d->calendar->source);
                /* A timer that follows the local zone keeps following it. */
                if (!zones_is_local(zones, d->calendar->zone))
                        snprintf(ret->timezone, sizeof(ret->timezone), "%s",
                                 d->calendar->zone->name);
                ret->fixed_random_delay = d->calendar->fixed_random_delay;
        }
}

/* The system calls, and SIGTERM ends a long replay (the loop does not read signals yet). */
static const struct journal_ops start_ops = {
    .pwrite = pwrite,
    .fdatasync = fdatasync,
    .ftruncate = ftruncate,
    .renameat = renameat,
    .interrupted = sigfd_stop_pending,
};

/* Start-up ended by SIGTERM or SIGINT: a requested stop, not a fault. */
static int start_interrupted(struct service *s)
{
        log_info("Stop requested while the journal was being replayed");
        lifecycle_exit(&s->lifecycle, EXIT_REASON_SHUTDOWN_REQUESTED);
        return -EINTR;
}

/* A journal that cannot be trusted: refuse to start rather than guess. */
static int store_fault(struct service *s, int error)
{
        lifecycle_exit(&s->lifecycle, EXIT_REASON_STORE_FAULT);
        return error;
}

/* The journal's timers restored as journal_open() hands them over (struct journal_take). */
struct restore {
        struct service *s;
        struct td_now now;
        uint64_t seed;
        size_t n;
        /* What a timer failed with, logged: journal_open() ends with it. */
        int failure;
};

static int restore_reserve(void *userdata, size_t n_timers)
{
        struct restore *rs = userdata;
        /* The registry's tables at their final size at once, rather than grown step by step. */
        int r = registry_reserve(rs->s->registry, n_timers);

        if (r < 0)
                rs->failure = log_errno(r, "Cannot make room for %zu timers", n_timers);
        return r;
}

static int restore_timer(void *userdata, const struct journal_timer *j)
{
        struct restore *rs = userdata;
        struct service *s = rs->s;
        const struct td_calendar *calendar;
        struct td_snapshot snapshot;
        struct td_transition t;
        bool clamped;
        int r;

        r = calendar_of_journal(s, j, &calendar);
        if (r < 0)
                return rs->failure = store_fault(s, r);
        snapshot_of_journal(j, &rs->now, s->store->boot_id, calendar, &snapshot);
        /* The registry checks the name: it is logged only when valid. */
        t = registry_restore(s->registry, &rs->now, &snapshot, hash_mix64(rs->seed + rs->n++),
                             &clamped);
        td_calendar_unref(calendar);
        if (t.failure == -TIMERD_E_INVALID_NAME) {
                log_error("The journal holds a timer of uid %u with an invalid name",
                          (unsigned)j->owner);
                return rs->failure = store_fault(s, -EBADMSG);
        }
        if (t.failure < 0) {
                log_error("Cannot restore timer %s of uid %u from the journal: %s", j->name,
                          (unsigned)j->owner, error_message(t.failure));
                return rs->failure = store_fault(s, t.failure);
        }
        if (clamped)
                log_warning("Timer %s of uid %u holds a value beyond int64 (an older timerd "
                            "saved it): restored failed (overflow), the value clamped",
                            j->name, (unsigned)j->owner);
        service_apply(s, &rs->now, t);
        return 0;
}

/* Exactly what the replay dropped after the last complete batch, and where it was kept. */
static void log_dropped_tail(const struct service *s, const struct journal_open_result *r)
{
        if (r->tail == JOURNAL_TAIL_NONE)
                return;
        if (r->tail == JOURNAL_TAIL_LOST)
                log_error("Lost acknowledged changes: the journal proves batches up to %" PRIu64
                          " were synced and acknowledged, but batches %" PRIu64 "-%" PRIu64
                          " (%" PRIu64 " batches, %" PRIu64 " records, %" PRIu64
                          " bytes) are damaged or missing. Dropped %" PRIu64
                          " bytes from there, %" PRIu64 " records of them readable. %s%s%s%s",
                          r->proven_batch, r->tail_batch, r->proven_batch, r->lost_batches,
                          r->lost_records, r->lost_bytes, r->bytes_truncated, r->tail_readable,
                          r->tail_file[0] ? "Kept in " : "The file ends there: nothing to keep",
                          r->tail_file[0] ? s->config.state_dir : "", r->tail_file[0] ? "/" : "",
                          r->tail_file);
        else if (r->tail == JOURNAL_TAIL_TORN && r->format_version >= 3)
                log_warning("Dropped the incomplete last batch %" PRIu64 " of the journal, after "
                            "batch %" PRIu64 ", the last one proven acknowledged: %" PRIu64
                            " bytes, %" PRIu64 " records dropped, %" PRIu64
                            " of them readable. A write cut short by a crash: never synced, "
                            "never acknowledged. Kept in %s/%s",
                            r->tail_batch, r->proven_batch, r->bytes_truncated, r->n_dropped,
                            r->tail_readable, s->config.state_dir, r->tail_file);
        else if (r->tail == JOURNAL_TAIL_TORN)
                log_warning("Dropped the incomplete last batch %" PRIu64 " of the journal: %" PRIu64
                            " bytes after the last complete batch, %" PRIu64
                            " records of it readable. It looks like a write cut short by a "
                            "crash, never synced and never acknowledged (a format 2 journal "
                            "proves nothing: a zeroed or cut-off end looks the same). Kept in "
                            "%s/%s",
                            r->tail_batch, r->bytes_truncated, r->tail_readable,
                            s->config.state_dir, r->tail_file);
        else
                log_error("Dropped damaged data at the end of the journal, from batch %" PRIu64
                          ": %" PRIu64 " bytes, %" PRIu64
                          " records readable. A record there was written whole and altered since "
                          "(not a torn write): its changes may have been acknowledged and are "
                          "lost. Kept in %s/%s",
                          r->tail_batch, r->bytes_truncated, r->tail_readable, s->config.state_dir,
                          r->tail_file);
        if (r->n_damaged_removed > 0)
                log_warning("Removed the %u oldest journal.damaged-* files: %d are kept",
                            r->n_damaged_removed, JOURNAL_DAMAGED_KEEP);
}

int store_open(struct service *s)
{
        struct restore rs = {};
        const struct journal_take take = {
            .reserve = restore_reserve, .timer = restore_timer, .userdata = &rs};
        struct journal_open_result result;
        struct store *st;
        int r;

        st = calloc(1, sizeof(*st));
        if (!st)
                return log_errno(-ENOMEM, "Cannot set up the store");
        s->store = st;
        read_boot_id(st->boot_id, sizeof(st->boot_id));

        rs.s = s;
        r = service_now(s, &rs.now);
        if (r < 0)
                return r;
        /* Only spreads catch-ups: without entropy yet, the clock will do. */
        if (getrandom(&rs.seed, sizeof(rs.seed), GRND_NONBLOCK) != (ssize_t)sizeof(rs.seed))
                rs.seed = rs.now.usec[TIMERD_CLOCK_REALTIME] ^ rs.now.usec[TIMERD_CLOCK_MONOTONIC];

        /* A record refused after timers were restored ends the start as a refusal before any
         * did: the service exits with the fault, its registry never served. */
        r = journal_open(s->config.state_dir, &start_ops, &take, &result, &st->journal);
        if (rs.failure < 0)
                return r;
        if (r == -EINTR)
                return start_interrupted(s);
        if (r == -EBADFD || r == -ELOOP || r == -EISDIR) {
                log_error("Cannot open the journal in %s: %s is not a regular file%s",
                          s->config.state_dir, result.file ? result.file : "a file",
                          r == -ELOOP    ? " (a symlink, never followed)"
                          : r == -EISDIR ? " (a directory)"
                                         : " (a FIFO, socket or device, never read)");
                return store_fault(s, r);
        }
        if (r < 0) {
                log_errno(r, "Cannot open the journal in %s%s%s%s", s->config.state_dir,
                          result.file ? " at " : "", result.file ? result.file : "",
                          r == -EBADMSG           ? " (damaged before its last commit)"
                          : r == -EPROTONOSUPPORT ? " (another format version)"
                          : r == -EBUSY           ? " (another timerd uses it)"
                                                  : "");
                return store_fault(s, r);
        }
        log_info("Journal replayed: %zu timers", result.n_timers);
        log_dropped_tail(s, &result);
        /* An earlier start gave out generations to transient timers, never saved. */
        if (!result.created)
                registry_generations_above(s->registry, rs.now.usec[TIMERD_CLOCK_REALTIME]);
        return 0;
}

struct write_context {
        struct journal *journal;
        const struct zones *zones;
        const struct td_now *now;
        const char *boot_id;
};

static int write_change(const struct td_change *c, void *userdata)
{
        struct write_context *w = userdata;
        struct journal_timer j;

        if (!c->timer)
                return journal_delete(w->journal, c->owner, c->name);
        journal_of_snapshot(w->zones, c->timer, w->now, w->boot_id, &j);
        return journal_put(w->journal, &j);
}

/* In the compaction's child: every retained timer, as the journal keeps it, in (owner, name)
 * order, a page at a time. */
static int compaction_state(void *userdata, journal_emit_fn emit, void *emit_userdata)
{
        struct service *s = userdata;
        struct store *st = s->store;
        struct td_list_page page = {.all_owners = true, .limit = 4096};
        char cursor[TIMERD_NAME_MAX + 1];
        struct td_snapshot *list;
        bool more = true;
        int r = 0;

        while (more && r >= 0) {
                long n = registry_list_page(s->registry, &page, &list, &more);

                if (n < 0)
                        return (int)n;
                for (long i = 0; i < n && r >= 0; i++)
                        if (list[i].declaration.lifetime == TIMERD_LIFETIME_RETAINED) {
                                struct journal_timer j;

                                journal_of_snapshot(s->zones, &list[i], &st->compaction_now,
                                                    st->boot_id, &j);
                                r = emit(emit_userdata, &j);
                        }
                if (n > 0) {
                        page.has_after = true;
                        page.after_owner = list[n - 1].owner;
                        strcpy(cursor, list[n - 1].name);
                        page.after_name = cursor;
                }
                free(list);
        }
        return r;
}

static void compaction_done(struct service *s)
{
        struct store *st = s->store;
        int r;

        loop_unwatch(st->compaction_watch);
        st->compaction_watch = NULL;
        r = journal_compact_error(st->journal);
        if (r < 0)
                log_error("Cannot compact the journal: %s. Retrying later", error_message(r));
        else
                log_debug("Compacted the journal");
}

static void on_compaction_exit(struct loop_watch *w, int fd, uint32_t events, void *userdata)
{
        struct service *s = userdata;

        (void)w;
        (void)fd;
        (void)events;
        if (journal_compact_finish(s->store->journal) != -EAGAIN)
                compaction_done(s);
}

/* Replace journal and snapshot by a snapshot of every retained timer, all of them durable: in a
 * child, off the loop (journal_compact_start()); the loop sees its exit on its pidfd. */
static void compact(struct service *s)
{
        struct store *st = s->store;
        int pidfd, r;

        if (service_now(s, &st->compaction_now) < 0)
                return;
        pidfd = journal_compact_start(st->journal, compaction_state, s);
        if (pidfd < 0) {
                log_errno(pidfd, "Cannot compact the journal");
                return;
        }
        r = loop_watch(s->loop, pidfd, LOOP_IN, on_compaction_exit, s, &st->compaction_watch);
        if (r < 0) {
                journal_compact_cancel(st->journal);
                log_errno(r, "Cannot compact the journal");
        }
}

/* One journal commit of every pending change; on failure the calls' changes are undone. */
static int commit(struct service *s)
{
        struct store *st = s->store;
        struct write_context w = {
            .journal = st->journal, .zones = s->zones, .boot_id = st->boot_id};
        struct td_transition undo;
        struct td_now now;
        int r;

        r = service_now(s, &now);
        if (r < 0)
                return r;
        w.now = &now;
        r = registry_changes_foreach(s->registry, write_change, &w);
        if (r < 0)
                journal_abort(st->journal);
        else
                r = journal_commit(st->journal);
        if (r >= 0) {
                registry_changes_commit(s->registry);
                if (st->error < 0)
                        log_notice("The journal works again");
                st->error = 0;
                return 0;
        }

        if (st->error == 0)
                log_error("Cannot commit to the journal: %s. Changes to retained timers fail "
                          "until it works again",
                          error_message(r));
        st->error = r;
        undo = registry_changes_rollback(s->registry, &now);
        if (undo.failure < 0) {
                log_error("Cannot undo the changes the journal refused: %s",
                          error_message(undo.failure));
                service_exit(s, EXIT_REASON_STORE_FAULT);
        }
        service_apply(s, &now, undo);
        return r;
}

static bool pending(const struct service *s)
{
        return s->store->n_held > 0 || registry_changes_pending(s->registry);
}

/* What a call that changed a retained timer is answered when the commit failed, put in place of
 * its answer in p's output: -ENOMEM. */
static int answer_unavailable(struct peer *p, uint64_t position, size_t len, int commit_error)
{
        json_object *params = json_object_new_object();
        char *msg = NULL;
        int r;

        /* Out of memory: Busy says as much (the change was not kept, try again). */
        if (params && vl_add_string(params, "reason", error_message(commit_error)) == 0)
                msg = vl_error_encode(vl_error_to_name(TIMERD_E_STORE_UNAVAILABLE), params);
        else
                json_object_put(params);
        if (!msg)
                msg = vl_error_encode(vl_error_to_name(TIMERD_E_BUSY), NULL);
        if (!msg)
                return -ENOMEM;
        r = vl_writer_replace(&p->out, position, len, msg, strlen(msg));
        free(msg);
        return r;
}

static bool held_peer_live(const struct held_message *h)
{
        return h->peer->fd >= 0 && h->peer->session == h->session;
}

/* What was held goes out now, in order (store_take_released()); answers to changes the commit
 * lost become StoreUnavailable first, the last first, so that each one's position still holds. */
static void release(struct store *st, int commit_error)
{
        st->releasing = true;
        st->release_next = 0;
        if (commit_error >= 0)
                return;
        for (size_t i = st->n_held; i-- > 0;) {
                struct held_message *h = &st->held[i];

                if (h->answers_change && held_peer_live(h))
                        h->broken =
                            answer_unavailable(h->peer, h->position, h->len, commit_error) < 0;
        }
}

bool store_take_released(struct service *s, struct peer **ret_peer, bool *ret_broken)
{
        struct store *st = s->store;

        while (st && st->releasing && st->release_next < st->n_held) {
                struct held_message *h = &st->held[st->release_next++];

                /* Gone meanwhile: nobody to tell. */
                if (!held_peer_live(h))
                        continue;
                *ret_peer = h->peer;
                *ret_broken = h->broken;
                return true;
        }
        if (st && st->releasing) {
                st->n_held = 0;
                st->releasing = false;
        }
        return false;
}

void store_commit(struct service *s)
{
        struct store *st = s->store;
        int r;

        if (!st || !pending(s))
                return;
        r = commit(s);
        release(st, r);
        if (r >= 0 && journal_should_compact(st->journal))
                compact(s);
}

void store_call_begin(struct service *s, struct peer *p)
{
        if (!s->store)
                return;
        s->store->call_peer = p;
        s->store->call_mark = registry_change_count(s->registry);
        registry_call_begin(s->registry);
}

void store_call_end(struct service *s)
{
        if (!s->store)
                return;
        s->store->call_peer = NULL;
        registry_call_end(s->registry);
}

enum store_hold store_hold(struct service *s, struct peer *p, uint64_t position, size_t len)
{
        struct store *st = s->store;
        struct held_message *held;
        bool answers_change;
        size_t allocated;
        int r;

        /* In teardown nothing is held: store_close() commits what is left. */
        if (!st || st->releasing || s->lifecycle.phase != LIFECYCLE_RUNNING || !pending(s))
                return STORE_SEND;
        answers_change = p == st->call_peer && registry_change_count(s->registry) != st->call_mark;
        if (st->n_held == st->allocated) {
                allocated = st->allocated > 0 ? st->allocated * 2 : 64;
                held = reallocarray(st->held, allocated, sizeof(*held));
                if (!held) {
                        /* No room to hold it: make everything durable now instead. */
                        r = commit(s);
                        release(st, r);
                        if (answers_change && r < 0 && answer_unavailable(p, position, len, r) < 0)
                                return STORE_BROKEN;
                        return STORE_RELEASED;
                }
                st->held = held;
                st->allocated = allocated;
        }
        st->held[st->n_held++] = (struct held_message){
            .peer = p,
            .session = p->session,
            .position = position,
            .len = len,
            .answers_change = answers_change,
        };
        vl_writer_hold(&p->out, position);
        return STORE_HELD;
}

const char *store_status(struct service *s)
{
        struct store *st = s->store;
        int e;

        if (!st)
                return "memory";
        e = st->error < 0 ? st->error : journal_error(st->journal);
        if (e == 0) {
                e = journal_compact_error(st->journal);
                if (e == 0)
                        return "journal";
                snprintf(st->status, sizeof(st->status), "journal, compaction failed: %s",
                         error_message(e));
                return st->status;
        }
        snprintf(st->status, sizeof(st->status), "degraded: %s", error_message(e));
        return st->status;
}

void store_close(struct service *s)
{
        struct store *st = s->store;

        if (!st)
                return;
        loop_unwatch(st->compaction_watch);
        if (st->journal) {
                /* What teardown changed: the runs of the connections it closed ended. */
                if (pending(s) && commit(s) < 0)
                        log_error("Retained timers changed during shutdown were not saved");
                journal_close(st->journal);
        }
        /* Every iteration sends what it held, and teardown holds nothing. */
        assert(st->n_held == 0);
        free(st->held);
        free(st);
        s->store = NULL;
}
