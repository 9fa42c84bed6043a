/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Helpers for the journal tests: scratch state directories under the build directory, timers with
 * every field set, whole-file access, and a journal_ops table that counts every call and fails the
 * ones a test chooses.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "service/io/journal.h"

/* A state directory inside a fresh scratch directory; removed with everything in it. */
struct jt_dir {
        char root[64];
        char state[96];
};

void jt_dir_make(struct jt_dir *d);
void jt_dir_remove(struct jt_dir *d);
/* cmocka teardown of a test whose state is a calloc()ed struct jt_dir. */
int jt_teardown(void **state);
char *jt_path(const struct jt_dir *d, const char *file); /* free() it */
bool jt_exists(const struct jt_dir *d, const char *file);

/* Whole files: read (size in *ret_size, free() it) and write. */
uint8_t *jt_read(const struct jt_dir *d, const char *file, size_t *ret_size);
void jt_write(const struct jt_dir *d, const char *file, const void *data, size_t size);
size_t jt_size(const struct jt_dir *d, const char *file);

/* A timer whose every field derives from `seed`, so two seeds give timers that differ in all. */
struct journal_timer jt_timer(uint32_t owner, const char *name, uint64_t seed);
/* Put t and commit it, both succeeding. */
void jt_put_commit(struct journal *j, const struct journal_timer *t);
void jt_assert_timer_equal(const struct journal_timer *a, const struct journal_timer *b);

/* A journal_take that keeps every timer handed over, in order (free timers). */
struct jt_taken {
        struct journal_timer *timers;
        size_t n;
        size_t allocated;
};
struct journal_take jt_take(struct jt_taken *taken);

/* Open with the counting ops (or `ops`, NULL: the system calls); the live set must be `expected`
 * (in order). */
struct journal *jt_open_expect(const struct jt_dir *d, const struct journal_timer *expected,
                               size_t n_expected, struct journal_open_result *ret_result);
struct journal *jt_open_expect_ops(const struct jt_dir *d, const struct journal_ops *ops,
                                   const struct journal_timer *expected, size_t n_expected,
                                   struct journal_open_result *ret_result);

enum jt_op {
        JT_PWRITE,
        JT_FDATASYNC,
        JT_FTRUNCATE,
        JT_RENAMEAT,
        JT_OP_MAX,
};

#define JT_ALL_OPS ((1u << JT_OP_MAX) - 1)

struct jt_faults {
        unsigned calls[JT_OP_MAX]; /* every call, failed or not */
        unsigned fail_mask;        /* 1u << JT_*: the calls that count towards fail_at */
        unsigned fail_at;          /* the first counted call that fails, 1-based; 0: none */
        unsigned fail_count;       /* how many counted calls fail from there */
        unsigned counted;
        int error;
        size_t partial; /* a failing pwrite first writes this many bytes */
};

/* The plan the ops below follow; reset before each use. Their fdatasync only checks the fd. */
extern struct jt_faults jt_faults;
extern const struct journal_ops jt_ops;

void jt_faults_reset(void);
void jt_faults_arm(unsigned mask, unsigned at, unsigned count, int error);
unsigned jt_calls(void); /* all ops */
