/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * An LD_PRELOAD shim that makes allocations fail on demand, for test-enomem: SIGUSR2 switches
 * failing on and off; while on, one allocation in $TIMERD_FAILMALLOC_EVERY (default 50), picked
 * by a fixed pseudo-random sequence so that every allocation site gets its turn, returns NULL with
 * ENOMEM. Start-up is never affected, and the test switches it off again to check what is left.
 *
 * Only allocations timerd's own code asks for fail: json-c does not survive a failed allocation
 * inside its parser (json_tokener_parse_ex() goes on with a NULL key), which no code of timerd can
 * change. glibc's __libc_* functions are the real allocator (dlsym would allocate itself).
 */

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);

void *malloc(size_t size);
void *calloc(size_t n, size_t size);
void *realloc(void *p, size_t size);
void *reallocarray(void *p, size_t n, size_t size);

/* The switch lives in the process it is preloaded into: a signal handler can only flip a global. */
static volatile sig_atomic_t failing;
static unsigned long every = 50;
/* The executable's code, where the allocations that may fail are called from. */
static uintptr_t code_start, code_end;
static unsigned long long state = 0x9e3779b97f4a7c15ull;

static void toggle(int signo)
{
        (void)signo;
        failing = !failing;
}

__attribute__((constructor)) static void failmalloc_init(void)
{
        struct sigaction sa = {.sa_handler = toggle, .sa_flags = SA_RESTART};
        const char *e = getenv("TIMERD_FAILMALLOC_EVERY");

        if (e && e[0])
                every = strtoul(e, NULL, 10);
        if (every == 0)
                every = 1;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGUSR2, &sa, NULL);

        char exe[4096], line[4096 + 128];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        FILE *maps = fopen("/proc/self/maps", "re");
        if (n <= 0 || !maps)
                abort();
        exe[n] = '\0';
        while (fgets(line, sizeof(line), maps)) {
                unsigned long start, end;
                char perms[8];
                int path;
                if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &start, &end, perms, &path) == 3 &&
                    perms[2] == 'x' && strncmp(line + path, exe, (size_t)n) == 0) {
                        code_start = start;
                        code_end = end;
                }
        }
        fclose(maps);
}

static int fail_now(const void *caller)
{
        if (!failing || (uintptr_t)caller < code_start || (uintptr_t)caller >= code_end)
                return 0;
        /* xorshift64: the same sequence in every run. */
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        if (state % every != 0)
                return 0;
        errno = ENOMEM;
        return 1;
}

void *malloc(size_t size)
{
        return fail_now(__builtin_return_address(0)) ? NULL : __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
        return fail_now(__builtin_return_address(0)) ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
        /* realloc(p, 0) frees: never refused. */
        return size > 0 && fail_now(__builtin_return_address(0)) ? NULL : __libc_realloc(p, size);
}

void *reallocarray(void *p, size_t n, size_t size)
{
        size_t total;
        if (__builtin_mul_overflow(n, size, &total)) {
                errno = ENOMEM;
                return NULL;
        }
        return total > 0 && fail_now(__builtin_return_address(0)) ? NULL : __libc_realloc(p, total);
}
