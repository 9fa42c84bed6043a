/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/core/inventory.h"

#include <assert.h>
#include <errno.h>
#include <stdalign.h>
#include <string.h>

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

/*
 * A node's balance lives in its links' low bits: link[side] & TALLER says that side's subtree is a
 * level taller than the other one (neither bit: both as tall).
 */
#define TALLER ((uintptr_t)1)

static_assert(alignof(struct inventory_node) > TALLER, "a link's low bit is free");

/*
 * How tall a tree of at most SIZE_MAX nodes can be, so how long a path from the root can be: an
 * AVL tree h tall holds at least F(h + 2) - 1 nodes (Fibonacci), and F(93) < 2^64 < F(94).
 */
#define MAX_HEIGHT 91

static struct inventory_node *child(const struct inventory_node *node, int side)
{
        return (struct inventory_node *)(node->link[side] & ~TALLER);
}

/* -1, 0, 1: the left side is taller, both are as tall, the right side is taller. */
static int balance(const struct inventory_node *node)
{
        return (int)(node->link[1] & TALLER) - (int)(node->link[0] & TALLER);
}

/* -1 for the left side, 1 for the right: a balance that leans to it. */
static int lean(int side)
{
        return side ? 1 : -1;
}

static void set_child(struct inventory_node *node, int side, struct inventory_node *c)
{
        node->link[side] = (uintptr_t)c | (node->link[side] & TALLER);
}

/* node's child on side is c, on the other side other; its balance b. */
static void set_node(struct inventory_node *node, int side, struct inventory_node *c,
                     struct inventory_node *other, int b)
{
        node->link[side] = (uintptr_t)c | (b == lean(side));
        node->link[!side] = (uintptr_t)other | (b == -lean(side));
}

/* How tall node's child on side is, node being h tall. */
static size_t child_height(const struct inventory_node *node, int side, size_t h)
{
        return balance(node) == -lean(side) ? h - 2 : h - 1;
}

/*
 * Rebalance x, whose side `side` has become two levels taller than the other: a single rotation,
 * or a double one when that side's child leans the other way. Returns the subtree's new root;
 * *ret_lower: whether it is a level lower than x's tall side made x, which it is unless that
 * child was balanced (only after a remove: see grown()).
 */
static struct inventory_node *rotate(struct inventory_node *x, int side, bool *ret_lower)
{
        struct inventory_node *z = child(x, side), *y;
        int s = lean(side), bz = balance(z), by;

        *ret_lower = bz != 0;
        if (bz != -s) {
                set_node(x, side, child(z, !side), child(x, !side), bz == s ? 0 : s);
                set_node(z, side, child(z, side), x, bz == s ? 0 : -s);
                return z;
        }
        y = child(z, !side);
        by = balance(y);
        set_node(x, side, child(y, !side), child(x, !side), by == s ? -s : 0);
        set_node(z, side, child(z, side), child(y, side), by == -s ? s : 0);
        set_node(y, side, z, x, 0);
        return y;
}

/* Hang sub where path[k] hung: under path[k - 1] on its side sides[k - 1], or at the root. */
static void relink(struct inventory_node **root, struct inventory_node *const *path,
                   const unsigned char *sides, size_t k, struct inventory_node *sub)
{
        if (k == 0)
                *root = sub;
        else
                set_child(path[k - 1], sides[k - 1], sub);
}

/*
 * The subtree below path[n - 1], on its side sides[n - 1], has grown a level: rebalance up the
 * path, path[0] being *root. Whether the whole tree grew.
 */
static bool grown(struct inventory_node **root, struct inventory_node *const *path,
                  const unsigned char *sides, size_t n)
{
        for (size_t k = n; k-- > 0;) {
                struct inventory_node *p = path[k];
                int side = sides[k];
                bool lower;

                /* The other side was the taller: now both are as tall. */
                if (p->link[!side] & TALLER) {
                        p->link[!side] &= ~TALLER;
                        return false;
                }
                /* Both were as tall: now this side is the taller, and p grew. */
                if (!(p->link[side] & TALLER)) {
                        p->link[side] |= TALLER;
                        continue;
                }
                /* The side that grew leans its way (it was balanced, or it is k of a join put
                 * over a subtree as tall as the shorter tree, below a node that did not lean
                 * its way): the rotation takes the level back. */
                relink(root, path, sides, k, rotate(p, side, &lower));
                assert(lower);
                return false;
        }
        return true;
}

/* Likewise, when it has shrunk a level. Whether the whole tree shrank. */
static bool shrunk(struct inventory_node **root, struct inventory_node *const *path,
                   const unsigned char *sides, size_t n)
{
        for (size_t k = n; k-- > 0;) {
                struct inventory_node *p = path[k];
                int side = sides[k];
                bool lower;

                /* This side was the taller: now both are as tall, and p shrank. */
                if (p->link[side] & TALLER) {
                        p->link[side] &= ~TALLER;
                        continue;
                }
                /* Both were as tall: now the other side is the taller. */
                if (!(p->link[!side] & TALLER)) {
                        p->link[!side] |= TALLER;
                        return false;
                }
                relink(root, path, sides, k, rotate(p, !side, &lower));
                if (!lower)
                        return false;
        }
        return true;
}

/* Insert node down from the root by its key (NULL: after every node, down the right side). */
static void insert_down(struct inventory *inv, struct inventory_node *node,
                        const struct inventory_key *key)
{
        struct inventory_node *path[MAX_HEIGHT];
        unsigned char sides[MAX_HEIGHT];
        size_t n = 0;

        for (struct inventory_node *p = inv->root; p; p = child(p, sides[n++])) {
                assert(n < MAX_HEIGHT);
                path[n] = p;
                sides[n] = !key || compare_node(inv, key, p) > 0;
        }
        node->link[0] = node->link[1] = 0;
        relink(&inv->root, path, sides, n, node);
        grown(&inv->root, path, sides, n);
        inv->n_spine = 0;
}

/* Walk the right spine into inv->spine. False when it is too deep to keep with room for an
 * append (INVENTORY_SPINE_DEPTH - 1 nodes at most). */
static bool spine_walk(struct inventory *inv)
{
        size_t n = 0;

        for (struct inventory_node *node = inv->root; node; node = child(node, 1)) {
                if (n == INVENTORY_SPINE_DEPTH - 1) {
                        inv->n_spine = 0;
                        return false;
                }
                inv->spine[n++] = node;
        }
        inv->n_spine = n;
        return true;
}

/*
 * node after every node: hung at the end of the right spine, then rebalanced up the spine, which
 * stops after O(1) levels amortised over a run of appends. No key compared.
 */
static void append(struct inventory *inv, struct inventory_node *node)
{
        size_t n;

        if (inv->n_spine == 0 && !spine_walk(inv)) {
                insert_down(inv, node, NULL);
                return;
        }
        n = inv->n_spine;
        node->link[0] = node->link[1] = 0;
        if (n == 0)
                inv->root = node;
        else
                set_child(inv->spine[n - 1], 1, node);
        inv->spine[n++] = node;
        for (size_t k = n - 1; k-- > 0;) {
                struct inventory_node *p = inv->spine[k], *z;

                /* As in grown(), its right side having grown. */
                if (p->link[0] & TALLER) {
                        p->link[0] &= ~TALLER;
                        break;
                }
                if (!(p->link[1] & TALLER)) {
                        p->link[1] |= TALLER;
                        continue;
                }
                /* Its right child z, next on the spine, has just grown to lean right: rotate()'s
                 * single rotation, written out (both end balanced), as it runs about once an
                 * append. z takes p's place on the spine, and p goes off it, on z's left. */
                z = inv->spine[k + 1];
                set_node(p, 1, child(z, 0), child(p, 0), 0);
                set_node(z, 1, child(z, 1), p, 0);
                if (k == 0)
                        inv->root = z;
                else
                        set_child(inv->spine[k - 1], 1, z);
                for (n--; k < n; k++)
                        inv->spine[k] = inv->spine[k + 1];
                break;
        }
        /* A spine as deep as kept is walked again at the next append. */
        inv->n_spine = n < INVENTORY_SPINE_DEPTH ? n : 0;
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

        if (inv->last && compare_node(inv, &key, inv->last) > 0) {
                inventory_append(inv, node);
                return;
        }
        insert_down(inv, node, &key);
        if (!inv->last)
                inv->last = node;
        inv->n_nodes++;
}

/* Down the right spine. */
static struct inventory_node *spine_end(const struct inventory *inv)
{
        struct inventory_node *node = inv->root;

        while (node && child(node, 1))
                node = child(node, 1);
        return node;
}

struct inventory_node *inventory_last(const struct inventory *inv)
{
        return inv->last;
}

size_t inventory_height(const struct inventory *inv)
{
        size_t h = 0;

        for (const struct inventory_node *node = inv->root; node; h++)
                node = child(node, balance(node) < 0 ? 0 : 1);
        return h;
}

/*
 * The tree of l (hl tall), k and r (hr tall), every key of l before k's and k's before every key
 * of r: k over the shorter tree and the subtree of the taller one, down its side toward the
 * shorter, that is as tall or a level taller; then rebalanced up. O(|hl - hr| + 1). Its height in
 * *ret_h.
 */
static struct inventory_node *join(struct inventory_node *l, size_t hl, struct inventory_node *k,
                                   struct inventory_node *r, size_t hr, size_t *ret_h)
{
        struct inventory_node *path[MAX_HEIGHT], *root, *c;
        unsigned char sides[MAX_HEIGHT];
        size_t n = 0, h, hc, hs;
        int side;

        if (hl <= hr + 1 && hr <= hl + 1) {
                set_node(k, 1, r, l, hr > hl ? 1 : hr < hl ? -1 : 0);
                *ret_h = (hl > hr ? hl : hr) + 1;
                return k;
        }
        side = hl > hr; /* down l's right side, or r's left */
        root = c = side ? l : r;
        h = hc = side ? hl : hr;
        hs = side ? hr : hl;
        while (hc > hs + 1) {
                path[n] = c;
                sides[n++] = (unsigned char)side;
                hc = child_height(c, side, hc);
                c = child(c, side);
        }
        /* c is hs or hs + 1 tall, so k over it and the shorter tree is a level taller than c. */
        set_node(k, side, side ? r : l, c, hc > hs ? -lean(side) : 0);
        relink(&root, path, sides, n, k);
        *ret_h = grown(&root, path, sides, n) ? h + 1 : h;
        return root;
}

/* The tree of a (ha tall) and b (hb tall), every key of a before every key of b: b's first node
 * taken out of it and joined between them. */
static struct inventory_node *merge(struct inventory_node *a, size_t ha, struct inventory_node *b,
                                    size_t hb)
{
        struct inventory_node *path[MAX_HEIGHT], *first = b;
        unsigned char sides[MAX_HEIGHT];
        size_t n = 0;

        if (!b)
                return a;
        for (; child(first, 0); first = child(first, 0)) {
                path[n] = first;
                sides[n++] = 0;
        }
        relink(&b, path, sides, n, child(first, 1));
        if (shrunk(&b, path, sides, n))
                hb--;
        return join(a, ha, first, b, hb, &hb);
}

/*
 * Split the tree at `root` (h tall) into the nodes of owners before `owner` (*ret_before, *ret_hb
 * tall) and the rest (*ret_rest, *ret_hr tall), or, with `through`, of owners up to and including
 * it. One walk down, then each node on it joined, with its subtree on the far side, to what was
 * split below it: O(log n) in all, as each join costs the difference of heights it spans.
 */
static void split_owner(const struct inventory *inv, struct inventory_node *root, size_t h,
                        uint32_t owner, bool through, struct inventory_node **ret_before,
                        size_t *ret_hb, struct inventory_node **ret_rest, size_t *ret_hr)
{
        struct inventory_node *path[MAX_HEIGHT], *before = NULL, *rest = NULL;
        unsigned char sides[MAX_HEIGHT]; /* 1: to the before part, down its right */
        size_t heights[MAX_HEIGHT], n = 0, hb = 0, hr = 0;

        for (; root; n++) {
                uint32_t o = node_owner(inv, root);

                assert(n < MAX_HEIGHT);
                path[n] = root;
                heights[n] = h;
                sides[n] = o < owner || (through && o == owner);
                h = child_height(root, sides[n], h);
                root = child(root, sides[n]);
        }
        while (n > 0) {
                struct inventory_node *x = path[--n];
                int far = !sides[n];
                struct inventory_node *sub = child(x, far);
                size_t hsub = child_height(x, far, heights[n]);

                if (sides[n])
                        before = join(sub, hsub, x, before, hb, &hb);
                else
                        rest = join(rest, hr, x, sub, hsub, &hr);
        }
        *ret_before = before;
        *ret_hb = hb;
        *ret_rest = rest;
        *ret_hr = hr;
}

void inventory_remove_owner(struct inventory *inv, uint32_t owner, size_t n)
{
        struct inventory_node *before, *rest, *its, *after;
        size_t hb, hr, hi, ha;

        assert(n <= inv->n_nodes);
        split_owner(inv, inv->root, inventory_height(inv), owner, false, &before, &hb, &rest, &hr);
        split_owner(inv, rest, hr, owner, true, &its, &hi, &after, &ha);
        inv->root = merge(before, hb, after, ha);
        inv->n_spine = 0;
        inv->n_nodes -= n;
        if (inv->last && node_owner(inv, inv->last) == owner)
                inv->last = spine_end(inv);
}

void inventory_remove(struct inventory *inv, struct inventory_node *node)
{
        struct inventory_key key = inventory_key_of(inv, node);
        struct inventory_node *path[MAX_HEIGHT], *left = child(node, 0), *right = child(node, 1);
        unsigned char sides[MAX_HEIGHT];
        size_t n = 0;

        for (struct inventory_node *p = inv->root; p != node; p = child(p, sides[n++])) {
                path[n] = p;
                sides[n] = compare_node(inv, &key, p) > 0;
        }
        if (left && right) {
                /* Its successor, the first node on its right, takes its place, links and
                 * balance; the path goes on down to where the successor was. */
                size_t at = n;
                struct inventory_node *next = right;

                path[n] = node;
                sides[n++] = 1;
                for (; child(next, 0); next = child(next, 0)) {
                        path[n] = next;
                        sides[n++] = 0;
                }
                set_child(path[n - 1], sides[n - 1], child(next, 1));
                next->link[0] = node->link[0];
                next->link[1] = node->link[1];
                relink(&inv->root, path, sides, at, next);
                path[at] = next;
        } else
                relink(&inv->root, path, sides, n, left ? left : right);
        shrunk(&inv->root, path, sides, n);
        inv->n_spine = 0;
        node->link[0] = node->link[1] = 0;
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
        for (; node; node = child(node, 0))
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
                        node = child(node, 0);
                } else
                        node = child(node, 1);
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
        cursor_descend_left(c, child(node, 1));
        c->last = node;
        return node;
}

/* Whether the subtree at node, at most max tall, is balanced, each node's bits saying which side
 * is taller; its height in *ret_h. Recurses no deeper than max. */
static int check_balance(const struct inventory_node *node, size_t max, size_t *ret_h)
{
        size_t h[2];

        if (!node) {
                *ret_h = 0;
                return 0;
        }
        if (max == 0 || (node->link[0] & node->link[1] & TALLER))
                return -EUCLEAN;
        for (int side = 0; side < 2; side++)
                if (check_balance(child(node, side), max - 1, &h[side]) < 0)
                        return -EUCLEAN;
        if (h[0] > h[1] + 1 || h[1] > h[0] + 1 ||
            balance(node) != (h[1] > h[0]   ? 1
                              : h[1] < h[0] ? -1
                                            : 0))
                return -EUCLEAN;
        *ret_h = (h[0] > h[1] ? h[0] : h[1]) + 1;
        return 0;
}

int inventory_check(const struct inventory *inv)
{
        struct inventory_cursor c;
        const struct inventory_node *node, *previous = NULL;
        size_t n = 0, h;

        if (check_balance(inv->root, MAX_HEIGHT, &h) < 0 || h != inventory_height(inv))
                return -EUCLEAN;
        inventory_seek(inv, NULL, &c);
        while ((node = inventory_next(&c))) {
                struct inventory_key key = inventory_key_of(inv, node);

                if (previous && compare_node(inv, &key, previous) <= 0)
                        return -EUCLEAN;
                previous = node;
                if (++n > inv->n_nodes)
                        return -EUCLEAN;
        }
        if (n != inv->n_nodes || inv->last != spine_end(inv))
                return -EUCLEAN;
        node = inv->root;
        for (size_t i = 0; i < inv->n_spine; i++, node = child(node, 1))
                if (node != inv->spine[i])
                        return -EUCLEAN;
        return inv->n_spine == 0 || !node ? 0 : -EUCLEAN;
}
