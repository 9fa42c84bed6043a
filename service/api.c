/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/api.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "service/io/caps.h"
#include "service/io/clock.h"
#include "service/events.h"
#include "service/io/log.h"
#include "service/core/parked.h"
#include "service/io/peer.h"
#include "service/service.h"
#include "service/store.h"
#include "service/virtual-clock.h"
#include "varlink/idl.h"
#include "varlink/names.h"

/* The description of an interface this instance serves: io.timerd.Test only on a virtual clock. */
static const char *served_interface(const struct service *s, const char *interface)
{
        if (!s->clock.virtual && strcmp(interface, VL_INTERFACE_TEST) == 0)
                return NULL;
        return vl_idl_lookup(interface);
}

static struct reply get_info(struct service *s)
{
        json_object *o = json_object_new_object();
        json_object *interfaces = json_object_new_array();

        vl_add_string(o, "vendor", "timerd");
        vl_add_string(o, "product", "timerd");
        vl_add_string(o, "version", TIMERD_VERSION);
        vl_add_string(o, "url", "https://github.com/timerd/timerd");
        for (const char *const *i = vl_idl_interfaces; *i; i++)
                if (served_interface(s, *i))
                        vl_array_add(interfaces, json_object_new_string(*i));
        vl_add_object(o, "interfaces", interfaces);
        return reply_parameters(o);
}

static struct reply get_interface_description(struct service *s, const struct vl_view *params)
{
        const char *name;
        /* Only a well-formed name is echoed in InterfaceNotFound. */
        if (vl_view_get_string(params, VL_IDL_FIELD_INTERFACE, &name) < 0 ||
            !vl_interface_name_valid(name)) {
                struct param_error err;
                params_invalid(&err, "interface");
                return reply_fail(&err);
        }
        const char *text = served_interface(s, name);
        if (!text) {
                json_object *e = json_object_new_object();
                vl_add_string(e, "interface", name);
                return reply_error(TIMERD_E_INTERFACE_NOT_FOUND, e);
        }
        json_object *o = json_object_new_object();
        vl_add_string(o, "description", text);
        return reply_parameters(o);
}

/* What the service may do beyond an unprivileged process; [] when none or unknown; out of memory
 * fails o. */
static void capabilities_write(struct vl_text *o)
{
        char **names = NULL;
        int n = caps_held(&names);

        if (n == -ENOMEM) {
                o->error = o->error < 0 ? o->error : -ENOMEM;
                return;
        }
        vl_text_array_begin(o, "capabilities");
        for (int i = 0; i < n; i++)
                vl_text_add_string(o, NULL, names[i]);
        vl_text_array_end(o);
        if (n >= 0)
                caps_names_free(names);
}

/* The caller's parked Waits and Sleeps. */
static uint64_t waiters_of(const struct service *s, uid_t uid)
{
        struct parked_owner_snapshot parked;

        return parked_get_owner(s->parked, uid, &parked) < 0 ? 0 : parked.waiters + parked.sleepers;
}

/*
 * Host-wide figures are for uid 0: another caller sees its own timers, connections and parked
 * requests, and none of the activity figures (firings, wake-ups, lateness …) that would tell it
 * about other users' timers.
 */
/* A delay distribution as the IDL's Delays, its object left open for more fields; p99 only from
 * enough samples to mean more than the maximum. */
static void delays_begin(struct vl_text *o, const char *field, const struct usec_histogram *h)
{
        vl_text_object_begin(o, field);
        vl_text_add_u64(o, "samples", h->samples);
        vl_text_add_u64(o, "p50_usec", histogram_percentile(h, 500));
        if (h->samples >= METRICS_P99_MIN_SAMPLES)
                vl_text_add_u64(o, "p99_usec", histogram_percentile(h, 990));
        vl_text_add_u64(o, "max_usec", h->max_usec);
}

static struct reply status(struct service *s, struct peer *p)
{
        struct registry_stats rs;
        struct loop_stats ls;
        uint64_t now = 0, connections = s->peers.n_live, waiters;
        bool host = p->privileged;

        if (host) {
                registry_get_stats(s->registry, &rs);
                waiters = api_waiters(s);
        } else {
                registry_get_owner_stats(s->registry, p->uid, &rs);
                connections = conns_of(&s->conns, p->uid);
                waiters = waiters_of(s, p->uid);
        }
        loop_get_stats(s->loop, &ls);
        (void)clock_read(TIMERD_CLOCK_MONOTONIC, &now);

        struct vl_text *o = service_reply_begin(s, p, false, 0);
        vl_text_add_string(o, "epoch", s->epoch);
        vl_text_add_string(o, "version", TIMERD_VERSION);
        vl_text_add_string(o, "backend", loop_backend_to_string(loop_backend(s->loop)));
        vl_text_add_string(o, "backend_reason", s->backend_reason);
        vl_text_add_u64(o, "pid", (uint64_t)getpid());
        vl_text_add_u64(o, "uptime_usec", now > s->started_usec ? now - s->started_usec : 0);
        vl_text_add_string(o, "scope", host ? "host" : "caller");
        vl_text_add_u64(o, "timers", rs.timers);
        vl_text_add_u64(o, "scheduled", rs.scheduled);
        vl_text_add_u64(o, "running", rs.running);
        vl_text_add_u64(o, "failed", rs.failed);
        vl_text_add_u64(o, "pending", rs.pending);
        vl_text_add_u64(o, "connections", connections);
        vl_text_add_u64(o, "waiters", waiters);
        vl_text_add_u64(o, "clock_changes", s->clock_changes);
        vl_text_add_u64(o, "calendar_reevaluations", s->calendar_reevaluations);
        if (host) {
                vl_text_add_u64(o, "iterations", s->metrics.iterations);
                vl_text_add_u64(o, "wakeups", ls.wakeups);
                vl_text_add_u64(o, "firings", s->metrics.firings);
                vl_text_add_u64(o, "overruns", rs.overruns);
                vl_text_add_u64(o, "stale_expiries", rs.stale_expiries + s->wake.stale);
                vl_text_add_u64(o, "signals_sent", s->signals.sent);
                vl_text_add_u64(o, "signals_failed", s->signals.target_gone + s->signals.refused);
                vl_text_add_u64(o, "slowest_iteration_usec", s->metrics.slowest_iteration_usec);
                vl_text_add_u64(o, "reaping", rs.reaping);
                vl_text_add_u64(o, "reap_steps", s->reap_steps);
                vl_text_add_u64(o, "slowest_reaping_iteration_usec",
                                s->metrics.slowest_reaping_iteration_usec);
                delays_begin(o, "lateness", &s->metrics.lateness);
                vl_text_add_u64(o, "past_due", s->metrics.lateness_past_due);
                vl_text_object_end(o);
                delays_begin(o, "loop_lag", &s->metrics.loop_lag);
                vl_text_object_end(o);
        }
        capabilities_write(o);
        vl_text_add_string(o, "store", store_status(s));
        return reply_written(false);
}

static struct reply unknown_method(struct service *s, const char *method)
{
        /* The message layer let only a method name of the varlink grammar through: it has a dot
         * and is safe to echo. */
        char *interface = strndup(method, (size_t)(strrchr(method, '.') - method));
        json_object *e = json_object_new_object();
        struct reply r;

        if (!interface) {
                json_object_put(e);
                return reply_error(TIMERD_E_BUSY, NULL);
        }
        if (!served_interface(s, interface)) {
                vl_add_string(e, "interface", interface);
                r = reply_error(TIMERD_E_INTERFACE_NOT_FOUND, e);
        } else {
                vl_add_string(e, "method", method);
                r = reply_error(TIMERD_E_METHOD_NOT_FOUND, e);
        }
        free(interface);
        return r;
}

/* The method of the call: what it decided. Every method of the IDL has a case (-Wswitch). */
static struct reply dispatch(struct service *s, struct peer *p, const struct vl_call *call)
{
        /* The peer's parser looked the method up in the IDL as it read the call. */
        const struct vl_idl_method *m = call->idl;
        const struct vl_view *params = &call->parameters;
        struct params_fields fields;
        struct vl_view checked;
        struct param_error err;

        /* A method of an interface not served here is not checked against its IDL. */
        if (!m || (m->interface == VL_IDL_IO_TIMERD_TEST && !s->clock.virtual))
                return unknown_method(s, call->method);
        /* The handlers read the fields from the maps the check makes: the reader's, or, for a call
         * it could not vouch for, the walk's, which names what is wrong. */
        if (!call->checked) {
                if (params_check(m->parameters, &call->parameters, &fields, &checked, &err) < 0)
                        return reply_fail(&err);
                params = &checked;
        }
        switch (m->id) {
        case VL_IDL_ORG_VARLINK_SERVICE_GET_INFO:
                return get_info(s);
        case VL_IDL_ORG_VARLINK_SERVICE_GET_INTERFACE_DESCRIPTION:
                return get_interface_description(s, params);
        case VL_IDL_IO_TIMERD_SERVICE_STATUS:
                return status(s, p);
        case VL_IDL_IO_TIMERD_SERVICE_SUBSCRIBE:
                return events_subscribe(s, p, params);
        case VL_IDL_IO_TIMERD_TIMER_WAIT:
                return api_wait(s, p, params);
        case VL_IDL_IO_TIMERD_TIMER_SLEEP:
                return api_sleep(s, p, params);
        case VL_IDL_IO_TIMERD_TIMER_FINISH:
                return api_finish(s, p, params);
        case VL_IDL_IO_TIMERD_TIMER_RESUME:
                return api_resume(s, p, params);
        case VL_IDL_IO_TIMERD_TIMER_REGISTER:
        case VL_IDL_IO_TIMERD_TIMER_RECONCILE:
        case VL_IDL_IO_TIMERD_TIMER_SCHEDULE:
        case VL_IDL_IO_TIMERD_TIMER_RESCHEDULE:
        case VL_IDL_IO_TIMERD_TIMER_CANCEL:
        case VL_IDL_IO_TIMERD_TIMER_KICK:
        case VL_IDL_IO_TIMERD_TIMER_UNREGISTER:
        case VL_IDL_IO_TIMERD_TIMER_GET:
        case VL_IDL_IO_TIMERD_TIMER_LIST:
        case VL_IDL_IO_TIMERD_TIMER_COMPLETE:
        case VL_IDL_IO_TIMERD_TIMER_ACKNOWLEDGE_SIGNALS:
        case VL_IDL_IO_TIMERD_TIMER_SIGNAL_TAKEN:
                return api_timer_call(s, p, m->id, params);
        case VL_IDL_IO_TIMERD_TEST_ADVANCE:
        case VL_IDL_IO_TIMERD_TEST_ADVANCE_TO:
        case VL_IDL_IO_TIMERD_TEST_SUSPEND:
        case VL_IDL_IO_TIMERD_TEST_SET_REALTIME:
        case VL_IDL_IO_TIMERD_TEST_NOW:
                return virtual_clock_call(s, p, m->id, params);
        case _VL_IDL_METHOD_MAX:
                break;
        }
        /* vl_idl_method_find() gives only methods of the table. */
        abort();
}

void api_handle_call(struct service *s, struct peer *p, const struct vl_call *call)
{
        uint64_t cookie = p->call_cookie;
        struct reply r;

        log_debug("uid %u session %" PRIu64 ": %s", (unsigned)p->uid, p->session, call->method);
        /* A stream's part goes out, then the method is asked for the next, while the call lasts. */
        do {
                r = dispatch(s, p, call);
                service_send_reply(s, p, r);
        } while (r.kind == REPLY_WRITTEN && r.continues && p->fd >= 0 && p->call_open &&
                 p->call_cookie == cookie);
        /* Inside the bracket a timer method opened: its answer depends on the commit. */
        store_call_end(s);
}
