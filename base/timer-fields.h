/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One description of a timer: every field of its declaration and of its runtime state, written
 * once. The representations follow from these two tables:
 *
 *   snapshot   struct td_snapshot / td_declaration (service/core/registry.h): what the core hands
 *              out, and what registry_restore() takes back
 *   wire       the "timer" object of Get and List replies (service/api-timer.c), in table order
 *   public     struct timerd_timer / timerd_declaration (include/timerd/timerd.h), filled by
 *              libtimerd's decoder (lib/wire.c). The public layout is ABI and is not generated:
 *              lib/wire.c checks each member's type against its kind.
 *   journal    struct journal_timer and its record (service/io/journal.c); the store copies
 *              snapshot <-> journal (service/store.c)
 *
 * Columns: X(kind, snapshot member, wire name, public member, journal member, journal position).
 *   kind       how the field is typed, encoded and bounded (the TD_FIELD_KINDS below)
 *   members    relative to the declaration (first table) or the timer (second); a kind with two
 *              members (a flag and a value) takes them as a pair "(has, value)"
 *   wire name  the JSON member name, as an identifier
 *   position   where the journal record holds it (1-based, unique, no gaps: journal.c checks).
 *              Positions are the on-disk layout: never renumber one. From
 *              TD_JOURNAL_TRAILING_FROM on, fields are optional: a record carries them up to the
 *              last one that is set, so that a store written before a field existed reads the
 *              same (its timers have the field unset).
 *
 * Kinds:
 *   U64           an unsigned time or count, at most TD_VALUE_MAX on the wire (clamped on restore)
 *   BOOL          a flag
 *   BOOL_ON       a flag that a declaration leaving it out sets
 *   POLICY, CLOCK, LIFETIME, DELIVERY, STATE
 *                 an enum, a string on the wire; the journal stores its value (a u8)
 *   FAILURE, OUTCOME
 *                 the same, left off the wire while NONE
 *   SIGNO         the delivery signal (u8 in the journal), on the wire only for signal delivery
 *   DEADLINE      (has, usec): next_usec and the derived remaining_usec on the wire
 *   OPT_USEC      (has, usec): on the wire only when has
 *   LIVE_CADENCE  the cadence the schedule follows; the journal stores 0 for "the declared one"
 *   CATCH_UP_MARK a flag on the wire only once the timer ran
 *   RESULT        how the last run's program ended: an object on the wire only when reported;
 *                 the journal's pair (exit, code)
 *   INTERNAL_U64, INTERNAL_BOOL
 *                 snapshot and journal only: run bookkeeping no client sees
 *
 * Adding a field: add one line to the table it belongs to, at the place its wire member goes
 * (the wire order is the table order; append to keep replies as they were), with the next free
 * journal position (a new field goes last, so it is optional and older stores read unchanged), a
 * member of the kind's type in struct timerd_timer (at its end: ABI) and a line in the IDL
 * (varlink/io.timerd.Timer.varlink). The snapshot, journal_timer, the wire encoder and decoder,
 * the journal record and the store's copies follow, and for a RUN field the registry's run state,
 * its copies to and from snapshots (registry_restore(), a rollback) and its bound to the wire.
 * The registry then gives it its meaning.
 * A field outside the kinds above needs a new kind: its codec in each representation.
 *
 * Not here: the identity (owner, name: the key of every representation), a calendar timer's
 * schedule (parsed expressions and zone: api-timer.c and store.c convert it), the session
 * (never durable, never shown).
 */

/* Declaration: relative to td_declaration, timerd_declaration, journal_timer. */
#define TD_DECLARATION_FIELDS(X)                                                                   \
        X(POLICY, policy, policy, policy, policy, 1)                                               \
        X(U64, cadence_usec, cadence_usec, cadence_usec, cadence_usec, 2)                          \
        X(CLOCK, clock, clock, clock, clock, 3)                                                    \
        X(LIFETIME, lifetime, lifetime, lifetime, lifetime, 4)                                     \
        X(DELIVERY, delivery, delivery, delivery, delivery, 5)                                     \
        X(U64, accuracy_usec, accuracy_usec, accuracy_usec, accuracy_usec, 7)                      \
        X(SIGNO, signo, signal, signal, signo, 6)                                                  \
        X(BOOL_ON, catch_up, catch_up, catch_up, catch_up, 8)                                      \
        X(U64, randomized_delay_usec, randomized_delay_usec, randomized_delay_usec,                \
          randomized_delay_usec, 9)                                                                \
        X(U64, handover_usec, handover_usec, handover_usec, handover_usec, 30)

/*
 * Runtime state: relative to td_snapshot, timerd_timer, journal_timer. The registry holds a RUN
 * field in a timer's run state (struct run_state, service/core/registry-internal.h: a member of
 * the snapshot's name, copied, bounded and reset by its kind); it holds or derives a TIMER field
 * in the timer record itself. A new field about runs is a RUN field.
 */
#define TD_TIMER_FIELDS_HELD(TIMER, RUN)                                                           \
        TIMER(U64, generation, generation, generation, generation, 10)                             \
        TIMER(STATE, state, state, state, state, 11)                                               \
        TIMER(FAILURE, failure, failure, failure, failure, 12)                                     \
        TIMER(DEADLINE, (has_deadline, next_deadline_usec), next_usec, (has_next, next_usec),      \
              (has_deadline, deadline_usec), 13)                                                   \
        RUN(U64, run, run, run, run, 14)                                                           \
        TIMER(BOOL, run_active, run_active, run_active, run_active, 15)                            \
        RUN(INTERNAL_U64, run_deadline_usec, _, _, run_deadline_usec, 16)                          \
        TIMER(INTERNAL_BOOL, run_cancelled, _, _, run_cancelled, 17)                               \
        TIMER(BOOL, pending, pending, pending, pending, 18)                                        \
        RUN(U64, runs, runs, runs, runs, 19)                                                       \
        RUN(U64, consecutive_expected_failures, consecutive_expected_failures,                     \
            consecutive_expected_failures, consecutive_expected_failures, 20)                      \
        RUN(U64, overruns, overruns, overruns, overruns, 21)                                       \
        RUN(LIVE_CADENCE, live_cadence_usec, live_cadence_usec, live_cadence_usec,                 \
            live_cadence_usec, 32)                                                                 \
        RUN(OPT_USEC, (has_last_start, last_start_usec), last_start_usec,                          \
            (has_last_start, last_start_usec), (has_last_start, last_start_usec), 22)              \
        RUN(CATCH_UP_MARK, last_catch_up, last_catch_up, last_catch_up, last_catch_up, 34)         \
        RUN(OPT_USEC, (has_last_finish, last_finish_usec), last_finish_usec,                       \
            (has_last_finish, last_finish_usec), (has_last_finish, last_finish_usec), 23)          \
        RUN(OUTCOME, last_outcome, last_outcome, last_outcome, last_outcome, 24)                   \
        RUN(U64, last_duration_usec, last_duration_usec, last_duration_usec, last_duration_usec,   \
            25)                                                                                    \
        RUN(U64, total_duration_usec, total_duration_usec, total_duration_usec,                    \
            total_duration_usec, 26)                                                               \
        RUN(RESULT, last_end, last_result, last_result, (last_exit, last_exit_code), 33)

/* Every runtime field, in table order. */
#define TD_TIMER_FIELDS(X) TD_TIMER_FIELDS_HELD(X, X)

/* The first optional position of a journal record. */
#define TD_JOURNAL_TRAILING_FROM 30

/* The parts of a pair member "(has, value)". */
#define TD_PAIR_FIRST(a, b)  a
#define TD_PAIR_SECOND(a, b) b
#define TD_FIRST(pair)       TD_PAIR_FIRST pair
#define TD_SECOND(pair)      TD_PAIR_SECOND pair

/* A field's members, of its kind's type, in td_snapshot (TD_TIMER_FIELDS) or td_declaration. */
#define TD_MEMBER_U64(m)           uint64_t m;
#define TD_MEMBER_INTERNAL_U64(m)  uint64_t m;
#define TD_MEMBER_LIVE_CADENCE(m)  uint64_t m;
#define TD_MEMBER_BOOL(m)          bool m;
#define TD_MEMBER_BOOL_ON(m)       bool m;
#define TD_MEMBER_INTERNAL_BOOL(m) bool m;
#define TD_MEMBER_CATCH_UP_MARK(m) bool m;
#define TD_MEMBER_SIGNO(m)         int m;
#define TD_MEMBER_POLICY(m)        enum timerd_policy m;
#define TD_MEMBER_CLOCK(m)         enum timerd_clock m;
#define TD_MEMBER_LIFETIME(m)      enum timerd_lifetime m;
#define TD_MEMBER_DELIVERY(m)      enum timerd_delivery m;
#define TD_MEMBER_STATE(m)         enum timerd_state m;
#define TD_MEMBER_FAILURE(m)       enum timerd_failure m;
#define TD_MEMBER_OUTCOME(m)       enum timerd_outcome m;
#define TD_MEMBER_DEADLINE(pair)   TD_MEMBER_OPT_USEC(pair)
#define TD_MEMBER_OPT_USEC(pair)                                                                   \
        bool TD_FIRST(pair);                                                                       \
        uint64_t TD_SECOND(pair);
#define TD_MEMBER_RESULT(m) struct td_run_end m;

/* A field copied between two representations that hold it alike: d and dm the destination and
 * its member, o and om the origin and its. */
#define TD_COPY_ONE(d, dm, o, om) (d)->dm = (o)->om;
#define TD_COPY_PAIR(d, dm, o, om)                                                                 \
        (d)->TD_FIRST(dm) = (o)->TD_FIRST(om);                                                     \
        (d)->TD_SECOND(dm) = (o)->TD_SECOND(om);

/* A field left out of a walk over a table. */
#define TD_NO_FIELD(kind, snapshot, wire, public, journal, position)

#define TD_SNAPSHOT_MEMBER(kind, snapshot, wire, public, journal, position)                        \
        TD_MEMBER_##kind(snapshot)
/* In struct journal_timer: the same, but a result is its pair (exit, code). */
#define TD_JOURNAL_MEMBER_RESULT(pair)                                                             \
        enum timerd_exit TD_FIRST(pair);                                                           \
        uint32_t TD_SECOND(pair);
#define TD_JOURNAL_MEMBER_FOR_U64           TD_MEMBER_U64
#define TD_JOURNAL_MEMBER_FOR_INTERNAL_U64  TD_MEMBER_INTERNAL_U64
#define TD_JOURNAL_MEMBER_FOR_LIVE_CADENCE  TD_MEMBER_LIVE_CADENCE
#define TD_JOURNAL_MEMBER_FOR_BOOL          TD_MEMBER_BOOL
#define TD_JOURNAL_MEMBER_FOR_BOOL_ON       TD_MEMBER_BOOL_ON
#define TD_JOURNAL_MEMBER_FOR_INTERNAL_BOOL TD_MEMBER_INTERNAL_BOOL
#define TD_JOURNAL_MEMBER_FOR_CATCH_UP_MARK TD_MEMBER_CATCH_UP_MARK
#define TD_JOURNAL_MEMBER_FOR_SIGNO         TD_MEMBER_SIGNO
#define TD_JOURNAL_MEMBER_FOR_POLICY        TD_MEMBER_POLICY
#define TD_JOURNAL_MEMBER_FOR_CLOCK         TD_MEMBER_CLOCK
#define TD_JOURNAL_MEMBER_FOR_LIFETIME      TD_MEMBER_LIFETIME
#define TD_JOURNAL_MEMBER_FOR_DELIVERY      TD_MEMBER_DELIVERY
#define TD_JOURNAL_MEMBER_FOR_STATE         TD_MEMBER_STATE
#define TD_JOURNAL_MEMBER_FOR_FAILURE       TD_MEMBER_FAILURE
#define TD_JOURNAL_MEMBER_FOR_OUTCOME       TD_MEMBER_OUTCOME
#define TD_JOURNAL_MEMBER_FOR_DEADLINE      TD_MEMBER_DEADLINE
#define TD_JOURNAL_MEMBER_FOR_OPT_USEC      TD_MEMBER_OPT_USEC
#define TD_JOURNAL_MEMBER_FOR_RESULT        TD_JOURNAL_MEMBER_RESULT
#define TD_JOURNAL_MEMBER(kind, snapshot, wire, public, journal, position)                         \
        TD_JOURNAL_MEMBER_FOR_##kind(journal)
