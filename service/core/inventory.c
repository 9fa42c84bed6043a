/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/core/inventory.h"

#include <assert.h>
#include <errno.h>
#include <string.h>

#include "base/hashmap.h"

static uint64_t priority(const struct inventory_node *node)
{
        return hash_mix64((uint64_t)(uintptr_t)node);
}

void inventory_init(struct inventory *inv, ptrdiff_t owner_offset, ptrdiff_t name_offset)
{
        *inv = (struct inventory){.owner_offset = owner_offset, .name_offset = name_offset};
}

static uint32_t node_owner(const struct inventory *inv, const struct inventory_node *node)
{
        uint32_t owner;

        memcpy(&owner, (const char *)node + inv->owner_offset, sizeof(owner));
        return owner;
}

static const char *node_name(const struct inventory *inv, const struct inventory_node *node)
{
        return (const char *)node + inv->name_offset;
}

struct inventory_key inventory_key_of(const struct inventory *inv,
                                      const struct inventory_node *node)
{
        return (struct inventory_key){.owner = node_owner(inv, node), .name = node_name(inv, node)};
}

/* strcmp()'s order, reading the names only up to where they differ: glibc's vector strcmp()
 * loads 32 bytes of each, which reaches into a second cache line of the node for most of a chunk's
 * alignments, where the bytes that decide are nearly always in the node's own line. */
static int name_compare(const char *a, const char *b)
{
        while (*a && *a == *b) {
                a++;
                b++;
        }
        return (unsigned char)*a - (unsigned char)*b;
}

int inventory_key_compare(const struct inventory_key *a, const struct inventory_key *b)
{
        if (a->owner != b->owner)
                return a->owner < b->owner ? -1 : 1;
        return name_compare(a->name, b->name);
}

static int compare_node(const struct inventory *inv, const struct inventory_key *key,
                        const struct inventory_node *node)
{
        uint32_t owner = node_owner(inv, node);

        if (key->owner != owner)
                return key->owner < owner ? -1 : 1;
        return name_compare(key->name, node_name(inv, node));
}

/* Walk the right spine into inv->spine. False when it is too deep to keep with room for an
 * append (INVENTORY_SPINE_DEPTH - 1 nodes at most). */
static bool spine_walk(struct inventory *inv)
{
        size_t n = 0;

        for (struct inventory_node *node = inv->root; node; node = node->right) {
                if (n == INVENTORY_SPINE_DEPTH - 1) {
                        inv->n_spine = 0;
                        return false;
                }
                inv->spine[n++] = node;
        }
        inv->n_spine = n;
        return true;
}

/* node after every node: on the right spine below the last node of a priority at least its own,
 * and what hung there is its left. No key compared. */
static void append(struct inventory *inv, struct inventory_node *node)
{
        uint64_t p = priority(node);
        size_t k;

        if (inv->n_spine == 0 && !spine_walk(inv)) {
                struct inventory_node **link = &inv->root;

                while (*link && priority(*link) >= p)
                        link = &(*link)->right;
                node->left = *link;
                *link = node;
        } else {
                for (k = inv->n_spine; k > 0 && priority(inv->spine[k - 1]) < p; k--)
                        ;
                node->left = k < inv->n_spine ? inv->spine[k] : NULL;
                if (k == 0)
                        inv->root = node;
                else
                        inv->spine[k - 1]->right = node;
                inv->spine[k] = node;
                /* A spine one deeper than kept is walked again at the next append. */
                inv->n_spine = k + 1 < INVENTORY_SPINE_DEPTH ? k + 1 : 0;
        }
        node->right = NULL;
}

void inventory_append(struct inventory *inv, struct inventory_node *node)
{
        append(inv, node);
        inv->last = node;
        inv->n_nodes++;
}

void inventory_insert(struct inventory *inv, struct inventory_node *node)
{
        struct inventory_key key = inventory_key_of(inv, node);
        uint64_t p = priority(node);
        struct inventory_node **link = &inv->root, *rest, **left, **right;

        if (inv->last && compare_node(inv, &key, inv->last) > 0) {
                inventory_append(inv, node);
                return;
        }
        inv->n_spine = 0;
        /* Down to where node's priority puts it, then split what hangs there around its key. */
        while (*link && priority(*link) >= p)
                link = compare_node(inv, &key, *link) < 0 ? &(*link)->left : &(*link)->right;
        rest = *link;
        left = &node->left;
        right = &node->right;
        while (rest) {
                if (compare_node(inv, &key, rest) > 0) {
                        *left = rest;
                        left = &rest->right;
                        rest = rest->right;
                } else {
                        *right = rest;
                        right = &rest->left;
                        rest = rest->left;
                }
        }
        *left = *right = NULL;
        *link = node;
        if (!inv->last)
                inv->last = node;
        inv->n_nodes++;
}

/* Down the right spine. */
static struct inventory_node *spine_end(const struct inventory *inv)
{
        struct inventory_node *node = inv->root;

        while (node && node->right)
                node = node->right;
        return node;
}

struct inventory_node *inventory_last(const struct inventory *inv)
{
        return inv->last;
}

/*
 * Split the tree at `root` into the nodes of owners before `owner` (*ret_before) and the rest
 * (*ret_rest), or, with `through`, of owners up to and including it. O(depth): one walk down,
 * each node hung on the side its owner puts it, priorities kept.
 */
static void split_owner(struct inventory_node *root, const struct inventory *inv, uint32_t owner,
                        bool through, struct inventory_node **ret_before,
                        struct inventory_node **ret_rest)
{
        struct inventory_node **before = ret_before, **rest = ret_rest;

        while (root) {
                uint32_t o = node_owner(inv, root);

                if (o < owner || (through && o == owner)) {
                        *before = root;
                        before = &root->right;
                        root = root->right;
                } else {
                        *rest = root;
                        rest = &root->left;
                        root = root->left;
                }
        }
        *before = *rest = NULL;
}

/* Every key of a is before every key of b. */
static struct inventory_node *merge(struct inventory_node *a, struct inventory_node *b)
{
        struct inventory_node *root = NULL, **link = &root;

        while (a && b) {
                if (priority(a) >= priority(b)) {
                        *link = a;
                        link = &a->right;
                        a = a->right;
                } else {
                        *link = b;
                        link = &b->left;
                        b = b->left;
                }
        }
        *link = a ? a : b;
        return root;
}

void inventory_remove_owner(struct inventory *inv, uint32_t owner, size_t n)
{
        struct inventory_node *before, *rest, *its, *after;

        assert(n <= inv->n_nodes);
        split_owner(inv->root, inv, owner, false, &before, &rest);
        split_owner(rest, inv, owner, true, &its, &after);
        inv->root = merge(before, after);
        inv->n_spine = 0;
        inv->n_nodes -= n;
        if (inv->last && node_owner(inv, inv->last) == owner)
                inv->last = spine_end(inv);
}

void inventory_remove(struct inventory *inv, struct inventory_node *node)
{
        struct inventory_key key = inventory_key_of(inv, node);
        struct inventory_node **link = &inv->root;

        while (*link != node)
                link = compare_node(inv, &key, *link) < 0 ? &(*link)->left : &(*link)->right;
        *link = merge(node->left, node->right);
        inv->n_spine = 0;
        node->left = node->right = NULL;
        if (inv->last == node)
                inv->last = spine_end(inv);
        inv->n_nodes--;
}

/* Keep node as the next to visit, dropping the oldest kept one when the ring is full. */
static void cursor_keep(struct inventory_cursor *c, struct inventory_node *node)
{
        if (c->n_kept == INVENTORY_CURSOR_DEPTH) {
                c->first = (c->first + 1) % INVENTORY_CURSOR_DEPTH;
                c->n_kept--;
                c->dropped = true;
        }
        c->kept[(c->first + c->n_kept) % INVENTORY_CURSOR_DEPTH] = node;
        c->n_kept++;
}

static void cursor_descend_left(struct inventory_cursor *c, struct inventory_node *node)
{
        for (; node; node = node->left)
                cursor_keep(c, node);
}

void inventory_seek(const struct inventory *inv, const struct inventory_key *after,
                    struct inventory_cursor *ret)
{
        struct inventory_node *node = inv->root;

        ret->inv = inv;
        ret->first = ret->n_kept = 0;
        ret->dropped = false;
        ret->last = NULL;
        if (!after) {
                cursor_descend_left(ret, node);
                return;
        }
        while (node)
                if (compare_node(inv, after, node) < 0) {
                        cursor_keep(ret, node);
                        node = node->left;
                } else
                        node = node->right;
}

struct inventory_node *inventory_next(struct inventory_cursor *c)
{
        struct inventory_node *node;

        if (c->n_kept == 0 && c->dropped && c->last) {
                struct inventory_key last = inventory_key_of(c->inv, c->last);

                inventory_seek(c->inv, &last, c);
        }
        if (c->n_kept == 0)
                return NULL;
        c->n_kept--;
        node = c->kept[(c->first + c->n_kept) % INVENTORY_CURSOR_DEPTH];
        cursor_descend_left(c, node->right);
        c->last = node;
        return node;
}

int inventory_check(const struct inventory *inv)
{
        struct inventory_cursor c;
        const struct inventory_node *node, *previous = NULL;
        size_t n = 0;

        inventory_seek(inv, NULL, &c);
        while ((node = inventory_next(&c))) {
                struct inventory_key key = inventory_key_of(inv, node);

                if ((node->left && priority(node->left) > priority(node)) ||
                    (node->right && priority(node->right) > priority(node)))
                        return -EUCLEAN;
                if (previous && compare_node(inv, &key, previous) <= 0)
                        return -EUCLEAN;
                previous = node;
                if (++n > inv->n_nodes)
                        return -EUCLEAN;
        }
        if (n != inv->n_nodes || inv->last != spine_end(inv))
                return -EUCLEAN;
        node = inv->root;
        for (size_t i = 0; i < inv->n_spine; i++, node = node->right)
                if (node != inv->spine[i])
                        return -EUCLEAN;
        return inv->n_spine == 0 || !node ? 0 : -EUCLEAN;
}
