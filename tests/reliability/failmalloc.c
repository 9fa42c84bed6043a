/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * An LD_PRELOAD shim that makes allocations fail on demand: every malloc, calloc and realloc of
 * the process, timerd's own and those of the libraries it uses (json-c, glibc's strdup and
 * asprintf, which call malloc). Two ways to drive it:
 *
 * - SIGUSR2 switches random failing on and off (test-enomem): while on, one allocation in
 *   $TIMERD_FAILMALLOC_EVERY (default 50), picked by a fixed pseudo-random sequence, returns
 *   NULL with ENOMEM.
 * - $TIMERD_FAILMALLOC_CONTROL names a file holding a struct failmalloc_control (failmalloc.h),
 *   shared with the test (test-alloc-sweep): while armed, the fail_at-th allocation counted from
 *   the arming fails (and the span - 1 after it), and the shim counts how many it failed.
 *
 * Start-up is never affected. glibc's __libc_* functions are the real allocator (dlsym would
 * allocate itself), except in sanitized builds (FAILMALLOC_NEXT), where the sanitizer's allocator
 * is the next malloc: timerd runs with ASAN_OPTIONS=verify_asan_link_order=0, the shim before
 * the runtime.
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "failmalloc.h"

#ifdef FAILMALLOC_NEXT
#include <dlfcn.h>

static void *(*next_malloc)(size_t);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);

static void resolve_next(void)
{
        next_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
        next_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
        next_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
        if (!next_malloc || !next_calloc || !next_realloc)
                abort();
}

static void *real_malloc(size_t size)
{
        if (!next_malloc)
                resolve_next();
        return next_malloc(size);
}

static void *real_calloc(size_t n, size_t size)
{
        if (!next_calloc)
                resolve_next();
        return next_calloc(n, size);
}

static void *real_realloc(void *p, size_t size)
{
        if (!next_realloc)
                resolve_next();
        return next_realloc(p, size);
}
#else
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);
#define real_malloc  __libc_malloc
#define real_calloc  __libc_calloc
#define real_realloc __libc_realloc
#endif

void *malloc(size_t size);
void *calloc(size_t n, size_t size);
void *realloc(void *p, size_t size);
void *reallocarray(void *p, size_t n, size_t size);

/* The switch lives in the process it is preloaded into: a signal handler can only flip a global. */
static volatile sig_atomic_t failing;
static unsigned long every = 50;
static unsigned long long state = 0x9e3779b97f4a7c15ull;
static struct failmalloc_control *control;

static void toggle(int signo)
{
        (void)signo;
        failing = !failing;
}

__attribute__((constructor)) static void failmalloc_init(void)
{
        struct sigaction sa = {.sa_handler = toggle, .sa_flags = SA_RESTART};
        const char *e = getenv("TIMERD_FAILMALLOC_EVERY");
        const char *path = getenv("TIMERD_FAILMALLOC_CONTROL");

        if (e && e[0])
                every = strtoul(e, NULL, 10);
        if (every == 0)
                every = 1;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGUSR2, &sa, NULL);

        if (path && path[0]) {
                int fd = open(path, O_RDWR | O_CLOEXEC);
                void *m = fd < 0 ? MAP_FAILED
                                 : mmap(NULL, sizeof(*control), PROT_READ | PROT_WRITE, MAP_SHARED,
                                        fd, 0);
                if (m == MAP_FAILED)
                        abort();
                close(fd);
                control = m;
        }
}

/* The n-th allocation since the test armed the control, within the span failing from fail_at. */
static int fail_counted(void)
{
        if (!control || !__atomic_load_n(&control->armed, __ATOMIC_ACQUIRE))
                return 0;
        uint64_t n = __atomic_add_fetch(&control->count, 1, __ATOMIC_ACQ_REL);
        uint64_t span = control->span > 0 ? control->span : 1;
        if (n < control->fail_at || n - control->fail_at >= span)
                return 0;
        __atomic_add_fetch(&control->failed, 1, __ATOMIC_ACQ_REL);
        return 1;
}

static int fail_now(void)
{
        int fail = fail_counted();

        if (!fail && failing) {
                /* xorshift64: the same sequence in every run. */
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                fail = state % every == 0;
        }
        if (fail)
                errno = ENOMEM;
        return fail;
}

void *malloc(size_t size)
{
        return fail_now() ? NULL : real_malloc(size);
}

void *calloc(size_t n, size_t size)
{
        return fail_now() ? NULL : real_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
        /* realloc(p, 0) frees: never refused. */
        return size > 0 && fail_now() ? NULL : real_realloc(p, size);
}

void *reallocarray(void *p, size_t n, size_t size)
{
        size_t total;
        if (__builtin_mul_overflow(n, size, &total)) {
                errno = ENOMEM;
                return NULL;
        }
        return total > 0 && fail_now() ? NULL : real_realloc(p, total);
}
