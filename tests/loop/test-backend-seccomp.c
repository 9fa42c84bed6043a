/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A real refusal: a seccomp filter (plain BPF) makes io_uring_setup fail with EPERM, as a
 * container runtime's profile would. The filter cannot be lifted, so this program is on its own.
 */

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/io_uring.h>
#include <linux/seccomp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "service/io/backend.h"

#if defined(__x86_64__)
#define AUDIT_ARCH_NATIVE AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define AUDIT_ARCH_NATIVE AUDIT_ARCH_AARCH64
#endif

static void on_expired(enum timerd_clock clock, uint64_t generation, void *userdata)
{
        (void)clock;
        (void)generation;
        (void)userdata;
}

#ifdef AUDIT_ARCH_NATIVE
static void refuse_io_uring_setup(void)
{
        struct sock_filter filter[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_NATIVE, 1, 0),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog program = {
            .len = (unsigned short)(sizeof(filter) / sizeof(filter[0])),
            .filter = filter,
        };

        assert_int_equal(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
        assert_int_equal(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program), 0);
}
#endif

static void test_seccomp_refusal_falls_back(void **state)
{
        struct loop_callbacks cb = {.expired = on_expired};
        struct io_uring_params params = {};
        char reason[128];
        struct loop *l;

        (void)state;
#ifndef AUDIT_ARCH_NATIVE
        skip();
#else
        refuse_io_uring_setup();
        /* The filter itself works. */
        assert_int_equal(syscall(__NR_io_uring_setup, 4, &params), -1);
        assert_int_equal(errno, EPERM);

        assert_int_equal(backend_open("auto", &cb, &l, reason, sizeof(reason)), 0);
        assert_int_equal(loop_backend(l), LOOP_BACKEND_TIMERFD);
        assert_non_null(strstr(reason, "io_uring refused"));
        assert_non_null(strstr(reason, strerror(EPERM)));
        /* The fallback is a working loop. */
        assert_int_equal(loop_arm(l, TIMERD_CLOCK_MONOTONIC, 0, 1), 0);
        assert_int_equal(loop_run_once(l, 5 * 1000 * 1000), 1);
        loop_free(l);

        assert_int_equal(backend_open("io_uring", &cb, &l, reason, sizeof(reason)), -EPERM);
        assert_non_null(strstr(reason, "io_uring refused"));
#endif
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_seccomp_refusal_falls_back),
        };

        return cmocka_run_group_tests_name("loop backend under seccomp", tests, NULL, NULL);
}
