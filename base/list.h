/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A circular doubly linked intrusive list. A detached node links to itself. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct list_node {
        struct list_node *prev, *next;
};

#define list_entry(node, type, member) ((type *)(void *)((char *)(node)-offsetof(type, member)))

/* Front to back. The body may not remove `pos`: use list_for_each_safe for that. */
#define list_for_each(pos, head) for ((pos) = (head)->next; (pos) != (head); (pos) = (pos)->next)
/* Front to back; the body may remove `pos` (not `tmp`, the node after it). */
#define list_for_each_safe(pos, tmp, head)                                                         \
        for ((pos) = (head)->next, (tmp) = (pos)->next; (pos) != (head);                           \
             (pos) = (tmp), (tmp) = (pos)->next)

static inline void list_init(struct list_node *n)
{
        n->prev = n->next = n;
}

static inline bool list_empty(const struct list_node *head)
{
        return head->next == head;
}

/* For a member node: whether it is in a list. */
static inline bool list_linked(const struct list_node *n)
{
        return n->next != n;
}

static inline void list_append(struct list_node *head, struct list_node *n)
{
        n->prev = head->prev;
        n->next = head;
        head->prev->next = n;
        head->prev = n;
}

/* The front node, or NULL when the list is empty. */
static inline struct list_node *list_first(const struct list_node *head)
{
        return list_empty(head) ? NULL : head->next;
}

/* The node after n, or NULL when n is the last. */
static inline struct list_node *list_next(const struct list_node *head, const struct list_node *n)
{
        return n->next == head ? NULL : n->next;
}

/* The number of nodes: O(n). SIZE_MAX when a node's links do not agree (a broken list). */
static inline size_t list_length(const struct list_node *head)
{
        size_t n = 0;

        for (const struct list_node *p = head->next; p != head; p = p->next) {
                if (p->next->prev != p)
                        return SIZE_MAX;
                n++;
        }
        return n;
}

static inline void list_remove(struct list_node *n)
{
        n->prev->next = n->next;
        n->next->prev = n->prev;
        list_init(n);
}
