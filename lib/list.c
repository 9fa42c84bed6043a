/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "connection.h"
#include "varlink/names.h"
#include "wire.h"

/*
 * io.timerd.Timer.List, a page at a time: the service answers at most its configured page, with
 * a cursor when more follow. timerd_list() follows the cursors to the end; timerd_list_page_json()
 * hands a page on as the service sent it, for tools that print JSON.
 */

#define LIST_METHOD VL_INTERFACE_TIMER ".List"

/* Timers decoded so far, grown as pages come. */
struct timer_buffer {
        struct timerd_timer *timers;
        size_t n, capacity;
};

static int buffer_reserve(struct timer_buffer *b, size_t more)
{
        const size_t max = SIZE_MAX / sizeof(*b->timers);
        struct timerd_timer *timers;
        size_t need, capacity;

        if (more > max - b->n)
                return -ENOMEM;
        need = b->n + more;
        if (need <= b->capacity)
                return 0;
        capacity = b->capacity > 0 ? b->capacity : need;
        while (capacity < need)
                capacity = capacity > max / 2 ? need : capacity * 2;
        timers = realloc(b->timers, capacity * sizeof(*timers));
        if (!timers)
                return -ENOMEM;
        b->timers = timers;
        b->capacity = capacity;
        return 0;
}

static void list_parameters(struct connection_request *q, uint32_t owner, bool all, size_t limit,
                            const struct timerd_list_cursor *cursor)
{
        connection_add_owner(q, owner);
        if (all)
                vl_text_add_bool(&q->text, "all", true);
        if (limit > 0)
                vl_text_add_u64(&q->text, "limit", limit);
        if (cursor->has_after) {
                vl_text_object_begin(&q->text, "after");
                vl_text_add_u64(&q->text, "owner", cursor->after_owner);
                vl_text_add_string(&q->text, "name", cursor->after_name);
                vl_text_object_end(&q->text);
        }
}

/* Whether cursor b stands after cursor a: a listing must move on, or it would never end. */
static bool cursor_after(const struct timerd_list_cursor *a, const struct timerd_list_cursor *b)
{
        if (!a->has_after)
                return true;
        if (a->after_owner != b->after_owner)
                return b->after_owner > a->after_owner;
        return strcmp(b->after_name, a->after_name) > 0;
}

/* The reply's "next", or done when it has none. */
static int decode_next(json_object *parameters, struct timerd_list_cursor *ret)
{
        json_object *next;
        const char *name;
        uint64_t owner;
        int r = vl_get_object(parameters, "next", &next);

        if (r == -ENOENT) {
                ret->done = true;
                return 0;
        }
        if (r < 0 || vl_get_u64(next, "owner", &owner) < 0 || owner >= UINT32_MAX ||
            vl_get_string(next, "name", &name) < 0 || strlen(name) > TIMERD_NAME_MAX)
                return -TIMERD_E_PROTOCOL;
        ret->has_after = true;
        ret->after_owner = (uint32_t)owner;
        memcpy(ret->after_name, name, strlen(name) + 1);
        return 0;
}

/* What becomes of a page's timers: it fails without leaving a trace, or takes them all. */
typedef int (*page_taker)(json_object *timers, size_t n, void *userdata);

/* One List call, its timers handed to take; the cursor moves only when they are taken. */
static int list_call(struct timerd *t, uint32_t owner, bool all, size_t limit,
                     struct timerd_list_cursor *cursor, page_taker take, void *userdata)
{
        struct timerd_list_cursor next = *cursor;
        struct connection_request q;
        struct vl_reply reply;
        json_object *array;
        size_t n;
        int r;

        connection_begin(t, &q, LIST_METHOD, false);
        list_parameters(&q, owner, all, limit, cursor);
        r = connection_send(t, &q, 0, false, &reply);
        if (r < 0)
                goto done;
        if (vl_get_array(reply.parameters, "timers", &array) < 0 ||
            decode_next(reply.parameters, &next) < 0) {
                r = -TIMERD_E_PROTOCOL;
                goto done;
        }
        n = json_object_array_length(array);
        if (!next.done && (n == 0 || !cursor_after(cursor, &next))) {
                r = -TIMERD_E_PROTOCOL;
                goto done;
        }
        r = take(array, n, userdata);
        if (r >= 0)
                *cursor = next;
done:
        vl_reply_done(&reply);
        return r < 0 ? r : 0;
}

/* Decoded, appended to a struct timer_buffer. */
static int take_decoded(json_object *timers, size_t n, void *userdata)
{
        struct timer_buffer *b = userdata;
        size_t start = b->n;
        int r = buffer_reserve(b, n);

        for (size_t i = 0; r >= 0 && i < n; i++)
                r = wire_decode_timer(json_object_array_get_idx(timers, i), &b->timers[b->n++]);
        if (r < 0)
                b->n = start;
        return r;
}

/* As the service sent them: the text of the JSON array, and its length. */
struct json_page {
        char *text;
        size_t n;
};

static int take_json(json_object *timers, size_t n, void *userdata)
{
        struct json_page *page = userdata;

        page->text = vl_json_encode(timers);
        page->n = n;
        return page->text ? 0 : -ENOMEM;
}

/* The next page after the cursor, for the public calls: nothing is asked once it is done. */
static int list_next_page(struct timerd *t, uint32_t owner, bool all, size_t limit,
                          struct timerd_list_cursor *cursor, page_taker take, void *userdata)
{
        if (!t || !cursor)
                return -EINVAL;
        return cursor->done ? 0 : list_call(t, owner, all, limit, cursor, take, userdata);
}

long timerd_list_page(struct timerd *t, uint32_t owner, bool all, size_t limit,
                      struct timerd_list_cursor *cursor, struct timerd_timer **ret)
{
        struct timer_buffer b = {0};
        int r;

        if (!ret)
                return -EINVAL;
        *ret = NULL;
        r = list_next_page(t, owner, all, limit, cursor, take_decoded, &b);
        if (r < 0) {
                free(b.timers);
                return r;
        }
        *ret = b.timers;
        return (long)b.n;
}

long timerd_list(struct timerd *t, uint32_t owner, bool all, struct timerd_timer **ret)
{
        struct timerd_list_cursor cursor = {0};
        struct timer_buffer b = {0};
        int r = 0;

        if (!t || !ret)
                return -EINVAL;
        while (r >= 0 && !cursor.done)
                r = list_call(t, owner, all, 0, &cursor, take_decoded, &b);
        if (r < 0) {
                free(b.timers);
                return r;
        }
        *ret = b.timers;
        return (long)b.n;
}

long timerd_list_page_json(struct timerd *t, uint32_t owner, bool all, size_t limit,
                           struct timerd_list_cursor *cursor, char **ret_json)
{
        struct json_page page = {0};
        int r;

        if (!ret_json)
                return -EINVAL;
        *ret_json = NULL;
        r = list_next_page(t, owner, all, limit, cursor, take_json, &page);
        if (r < 0)
                return r;
        *ret_json = page.text;
        return (long)page.n;
}
