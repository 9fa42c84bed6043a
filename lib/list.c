/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "connection.h"
#include "varlink/json.h"
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
static int decode_next(const struct wire_object *parameters, struct timerd_list_cursor *ret)
{
        struct wire_object next;
        uint64_t owner;
        bool has;

        if (wire_get_optional_object(parameters, "next", &next, &has) < 0)
                return -TIMERD_E_PROTOCOL;
        if (!has) {
                ret->done = true;
                return 0;
        }
        if (wire_get_u64(&next, "owner", &owner) < 0 || owner >= UINT32_MAX ||
            wire_get_string_into(&next, "name", ret->after_name, sizeof(ret->after_name)) < 0)
                return -TIMERD_E_PROTOCOL;
        ret->has_after = true;
        ret->after_owner = (uint32_t)owner;
        return 0;
}

/* What becomes of a page's timers (array tokens[timers] of the reply): it fails without leaving
 * a trace, or takes them all. */
typedef int (*page_taker)(const struct vl_reply *reply, size_t timers, void *userdata);

/* One List call, its timers handed to take; the cursor moves only when they are taken. */
static int list_call(struct timerd *t, uint32_t owner, bool all, size_t limit,
                     struct timerd_list_cursor *cursor, page_taker take, void *userdata)
{
        struct timerd_list_cursor next = *cursor;
        struct connection_request q;
        struct wire_object p;
        struct vl_reply reply;
        size_t array;
        int r;

        connection_begin(t, &q, LIST_METHOD, false);
        list_parameters(&q, owner, all, limit, cursor);
        r = connection_send(t, &q, 0, true, &reply);
        if (r < 0)
                goto done;
        if (wire_reply_parameters(&reply, &p) < 0 ||
            vl_token_get_array(p.text, p.tokens, p.index, "timers", &array) < 0 ||
            decode_next(&p, &next) < 0) {
                r = -TIMERD_E_PROTOCOL;
                goto done;
        }
        if (!next.done && (reply.tokens[array].size == 0 || !cursor_after(cursor, &next))) {
                r = -TIMERD_E_PROTOCOL;
                goto done;
        }
        r = take(&reply, array, userdata);
        if (r >= 0)
                *cursor = next;
done:
        vl_reply_done(&reply);
        return r < 0 ? r : 0;
}

/* Decoded, appended to a struct timer_buffer. */
static int take_decoded(const struct vl_reply *reply, size_t timers, void *userdata)
{
        struct timer_buffer *b = userdata;
        size_t start = b->n, n = reply->tokens[timers].size;
        struct wire_object timer = {reply->text, reply->tokens, timers + 1};
        int r = buffer_reserve(b, n);

        for (size_t i = 0; r >= 0 && i < n; i++, timer.index = reply->tokens[timer.index].next)
                r = wire_decode_timer(&timer, &b->timers[b->n++]);
        if (r < 0)
                b->n = start;
        return r;
}

/* As the service sent them: the text of the JSON array, and its length. */
struct json_page {
        char *text;
        size_t n;
};

static int take_json(const struct vl_reply *reply, size_t timers, void *userdata)
{
        struct json_page *page = userdata;
        struct vl_parser parser;
        json_object *array;
        int r;

        /* Written again from a tree, as the messages are: the same text whatever the spacing. */
        vl_parser_init(&parser);
        r = vl_json_tree(&parser, reply->text, reply->tokens[0].len, reply->tokens, timers, &array);
        vl_parser_done(&parser);
        if (r < 0)
                return r;
        page->text = vl_json_encode(array);
        page->n = reply->tokens[timers].size;
        json_object_put(array);
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
