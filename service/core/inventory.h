/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The inventory: every timer in (owner, name) order, internal to the pure core, so that a page of
 * List after a cursor costs O(log n + page) instead of sorting all timers.
 *
 * An intrusive AVL tree: a node is two child links (16 B) embedded in what it orders, so inserting
 * and removing never allocate and never fail. Each link's low bit says that its side is the taller
 * one (nodes are at least pointer-aligned), so no balance byte needs storing. AVL rather than
 * red-black: look-ups (an insert's descent, a remove's, a page's seek) dominate here, and an AVL
 * tree is at most 1.44 log2 n deep where a red-black one may be 2 log2 n (at a million timers, a
 * node ~19 levels down on average, where the address-mixed treap this replaced had ~26).
 *
 * The keys live in the embedding structure, at fixed offsets from the node: a uint32_t owner and a
 * NUL-terminated name, which must not change while the node is in the inventory. Read in place
 * rather than through a callback: an insert at a million timers compares ~30 keys, and the call
 * per compare was a third of its instructions.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The left and the right child's address, each with the bit "this side is the taller" (see
 * inventory.c; not to be followed directly). */
struct inventory_node {
        uintptr_t link[2];
};

#define inventory_entry(node, type, member)                                                        \
        ((type *)(void *)((char *)(node)-offsetof(type, member)))

struct inventory_key {
        uint32_t owner;
        const char *name;
};

/* How deep a right spine the inventory keeps for appends; a deeper one is walked from the root. */
#ifndef INVENTORY_SPINE_DEPTH
#define INVENTORY_SPINE_DEPTH 64
#endif

struct inventory {
        struct inventory_node *root;
        struct inventory_node *last; /* NULL when empty */
        size_t n_nodes;
        ptrdiff_t owner_offset, name_offset; /* of the key's fields, from the node */
        /* The right spine, root first, known while only appends changed the tree since it was
         * walked (n_spine 0: not known): an append (a restore inserts a million timers in order)
         * finds its place up from the bottom, O(1) amortised, not down from the root. */
        struct inventory_node *spine[INVENTORY_SPINE_DEPTH];
        size_t n_spine;
};

/* Where `field` of `type` lies from its inventory node `member`. */
#define INVENTORY_OFFSET(type, member, field)                                                      \
        ((ptrdiff_t)offsetof(type, field) - (ptrdiff_t)offsetof(type, member))

void inventory_init(struct inventory *inv, ptrdiff_t owner_offset, ptrdiff_t name_offset);

/* The key of a node. */
struct inventory_key inventory_key_of(const struct inventory *inv,
                                      const struct inventory_node *node);

/* <0, 0, >0 as a is before, equal to, after b: by owner, then by name (strcmp). */
int inventory_key_compare(const struct inventory_key *a, const struct inventory_key *b);

/* Insert node, whose key must be absent. */
void inventory_insert(struct inventory *inv, struct inventory_node *node);
/* Insert node, whose key must be after every key (the caller compared it with the last one). */
void inventory_append(struct inventory *inv, struct inventory_node *node);
/* Remove node, which must be in the inventory. */
void inventory_remove(struct inventory *inv, struct inventory_node *node);

/*
 * Remove every node of owner, which are n: O(log n) whatever their number, where removing them
 * one by one would walk down from the root for each. The removed nodes keep stale links; they
 * may be freed or inserted again, never removed again.
 */
void inventory_remove_owner(struct inventory *inv, uint32_t owner, size_t n);

/* The tree's height (0 when empty): O(log n), down its taller side. */
size_t inventory_height(const struct inventory *inv);

/* The last node in order, or NULL when empty. */
struct inventory_node *inventory_last(const struct inventory *inv);

/* How many ancestors a cursor keeps; a deeper walk finds its way back from the root. */
#ifndef INVENTORY_CURSOR_DEPTH
#define INVENTORY_CURSOR_DEPTH 64
#endif

/*
 * An in-order walk. The nodes still to visit are the ones kept (a ring of the deepest ancestors
 * whose left subtree the walk is in); when older ones had to be dropped, the walk seeks again from
 * the root after the last node it gave. Not valid across an insert or a remove.
 */
struct inventory_cursor {
        const struct inventory *inv;
        struct inventory_node *kept[INVENTORY_CURSOR_DEPTH];
        size_t first, n_kept;
        bool dropped;
        const struct inventory_node *last;
};

/* Start a walk at the first node after *after (NULL: at the first node). */
void inventory_seek(const struct inventory *inv, const struct inventory_key *after,
                    struct inventory_cursor *ret);
/* The next node in order, or NULL at the end. */
struct inventory_node *inventory_next(struct inventory_cursor *c);

/* Order, balance (each node's bits against its subtrees' heights), count and the spine kept.
 * 0 or -EUCLEAN. */
int inventory_check(const struct inventory *inv);
