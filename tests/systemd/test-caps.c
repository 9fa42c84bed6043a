/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * service/io/caps.c: what a process holds after caps_drop(), read back from /proc/self/status and
 * tried out (alarm timerfds, signals to another user's process, chown). Every case runs in a
 * child of its own, since a drop cannot be undone.
 */

#include <errno.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "service/io/caps.h"

#define KEPT   ((1ull << CAP_KILL) | (1ull << CAP_WAKE_ALARM))
#define NOBODY 65534

/* What the child saw after caps_drop(). */
struct report {
        int result;
        unsigned uid, gid;
        uint64_t permitted, effective, inheritable, bounding, ambient;
        int no_new_privs;
        bool alarm_clock;   /* timerfd_create(CLOCK_BOOTTIME_ALARM) works */
        bool signal_parent; /* kill(parent, 0) works; the parent stays root */
        bool chown_works;   /* chown of a file to another uid works */
        char held[128];     /* caps_held(), space-separated */
        int held_count;
};

static uint64_t status_mask(const char *status, const char *key)
{
        const char *p = strstr(status, key);
        return p ? strtoull(p + strlen(key), NULL, 16) : UINT64_MAX;
}

static void read_status(struct report *r)
{
        char status[8192];
        FILE *f = fopen("/proc/self/status", "re");
        size_t n = f ? fread(status, 1, sizeof(status) - 1, f) : 0;
        if (f)
                fclose(f);
        status[n] = '\0';
        r->permitted = status_mask(status, "CapPrm:\t");
        r->effective = status_mask(status, "CapEff:\t");
        r->inheritable = status_mask(status, "CapInh:\t");
        r->bounding = status_mask(status, "CapBnd:\t");
        r->ambient = status_mask(status, "CapAmb:\t");
        const char *p = strstr(status, "NoNewPrivs:\t");
        r->no_new_privs = p ? atoi(p + strlen("NoNewPrivs:\t")) : -1;
}

static void observe(struct report *r, const char *scratch)
{
        char **names;

        r->uid = (unsigned)geteuid();
        r->gid = (unsigned)getegid();
        read_status(r);
        int fd = timerfd_create(CLOCK_BOOTTIME_ALARM, TFD_CLOEXEC);
        r->alarm_clock = fd >= 0;
        if (fd >= 0)
                close(fd);
        r->signal_parent = kill(getppid(), 0) == 0;
        r->chown_works = scratch && chown(scratch, 4242, 4242) == 0;
        r->held_count = caps_held(&names);
        for (int i = 0; i < r->held_count; i++) {
                if (i > 0)
                        strncat(r->held, " ", sizeof(r->held) - strlen(r->held) - 1);
                strncat(r->held, names[i], sizeof(r->held) - strlen(r->held) - 1);
        }
        if (r->held_count >= 0)
                caps_names_free(names);
}

struct scenario {
        const char *user;
        const char *state_dir;
        const char *scratch;   /* a root-owned file to try chown on */
        void (*prepare)(void); /* runs in the child before caps_drop() */
};

static void run(const struct scenario *sc, struct report *ret)
{
        int pipe_fds[2];
        int status;

        assert_int_equal(pipe(pipe_fds), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct report r = {0};
                close(pipe_fds[0]);
                if (sc->prepare)
                        sc->prepare();
                r.result = caps_drop(sc->user, sc->state_dir);
                observe(&r, sc->scratch);
                _exit(write(pipe_fds[1], &r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 1);
        }
        close(pipe_fds[1]);
        *ret = (struct report){0};
        ssize_t n = read(pipe_fds[0], ret, sizeof(*ret));
        close(pipe_fds[0]);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        assert_int_equal(n, sizeof(*ret));
}

struct fixture {
        char dir[64];
        char state[96];
        char scratch[96];
};

static int setup(void **state)
{
        struct fixture *f = calloc(1, sizeof(*f));
        assert_non_null(f);
        snprintf(f->dir, sizeof(f->dir), "/tmp/timerd-caps-test.XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        assert_int_equal(chmod(f->dir, 0755), 0);
        snprintf(f->state, sizeof(f->state), "%s/state", f->dir);
        assert_int_equal(mkdir(f->state, 0700), 0);
        snprintf(f->scratch, sizeof(f->scratch), "%s/scratch", f->dir);
        FILE *file = fopen(f->scratch, "we");
        assert_non_null(file);
        fclose(file);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        struct fixture *f = *state;
        unlink(f->scratch);
        rmdir(f->state);
        rmdir(f->dir);
        free(f);
        return 0;
}

static void assert_only_the_two(const struct report *r)
{
        assert_int_equal(r->result, 0);
        assert_int_equal(r->permitted, KEPT);
        assert_int_equal(r->effective, KEPT);
        assert_int_equal(r->bounding, KEPT);
        assert_int_equal(r->inheritable, 0);
        assert_int_equal(r->ambient, 0);
        assert_int_equal(r->no_new_privs, 1);
        assert_true(r->alarm_clock);
        assert_false(r->chown_works);
        assert_int_equal(r->held_count, 2);
        assert_string_equal(r->held, "CAP_KILL CAP_WAKE_ALARM");
}

static void test_root_keeps_only_the_two(void **state)
{
        struct fixture *f = *state;
        struct scenario sc = {.scratch = f->scratch};
        struct report r;

        run(&sc, &r);
        assert_only_the_two(&r);
        assert_int_equal(r.uid, 0);
        assert_true(r.signal_parent);
}

static void test_switch_user(void **state)
{
        struct fixture *f = *state;
        struct scenario sc = {.user = "nobody", .state_dir = f->state, .scratch = f->scratch};
        struct stat st;
        struct report r;

        run(&sc, &r);
        assert_only_the_two(&r);
        assert_int_equal(r.uid, NOBODY);
        /* CAP_KILL survived the switch: the root-owned parent can still be signalled. */
        assert_true(r.signal_parent);
        /* The state directory went to the user, so the journal stays writable. */
        assert_int_equal(stat(f->state, &st), 0);
        assert_int_equal(st.st_uid, NOBODY);
}

static void test_unknown_user(void **state)
{
        struct fixture *f = *state;
        struct scenario sc = {
            .user = "no-such-user-timerd-test",
            .state_dir = f->state,
            .scratch = f->scratch,
        };
        struct stat st;
        struct report r;

        run(&sc, &r);
        assert_int_equal(r.result, -ESRCH);
        /* Nothing was given up, nothing handed over. */
        assert_int_equal(r.uid, 0);
        assert_true(r.chown_works);
        assert_int_equal(r.no_new_privs, 0);
        assert_int_equal(stat(f->state, &st), 0);
        assert_int_equal(st.st_uid, 0);
}

static void test_state_dir_missing(void **state)
{
        struct fixture *f = *state;
        char missing[128];
        struct report r;

        snprintf(missing, sizeof(missing), "%s/missing", f->dir);
        struct scenario sc = {.user = "nobody", .state_dir = missing};
        run(&sc, &r);
        assert_int_equal(r.result, -ENOENT);
        assert_int_equal(r.uid, 0);
}

static void become_nobody(void)
{
        /* A plain switch from root: every capability is gone. */
        if (setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
            setresuid(NOBODY, NOBODY, NOBODY) < 0)
                _exit(3);
}

static void test_switch_needs_root(void **state)
{
        (void)state;
        struct scenario sc = {.user = "root", .prepare = become_nobody};
        struct report r;

        run(&sc, &r);
        assert_int_equal(r.result, -EPERM);
        assert_int_equal(r.uid, NOBODY);
}

static void test_unprivileged_holds_nothing(void **state)
{
        struct fixture *f = *state;
        struct scenario sc = {.prepare = become_nobody, .scratch = f->scratch};
        struct report r;

        run(&sc, &r);
        assert_int_equal(r.result, 0);
        assert_int_equal(r.uid, NOBODY);
        assert_int_equal(r.permitted, 0);
        assert_int_equal(r.effective, 0);
        assert_int_equal(r.no_new_privs, 1);
        /* Alarm clocks are unavailable; the service answers ClockUnavailable for them. */
        assert_false(r.alarm_clock);
        assert_false(r.signal_parent);
        assert_int_equal(r.held_count, 0);
        assert_string_equal(r.held, "");
}

static void set_sets(cap_flag_t flag, const cap_value_t *values, int n, cap_flag_value_t how)
{
        cap_t caps = cap_get_proc();
        if (!caps || cap_set_flag(caps, flag, n, values, how) < 0 || cap_set_proc(caps) < 0)
                _exit(4);
        cap_free(caps);
}

/* What a unit with AmbientCapabilities=CAP_KILL CAP_NET_ADMIN would hand over. */
static void grant_ambient(void)
{
        const cap_value_t values[] = {CAP_KILL, CAP_NET_ADMIN};
        set_sets(CAP_INHERITABLE, values, 2, CAP_SET);
        for (int i = 0; i < 2; i++)
                if (cap_set_ambient(values[i], CAP_SET) < 0)
                        _exit(5);
}

static void test_ambient_extra_dropped(void **state)
{
        (void)state;
        struct scenario sc = {.prepare = grant_ambient};
        struct report r;

        run(&sc, &r);
        assert_int_equal(r.result, 0);
        assert_int_equal(r.permitted, KEPT);
        assert_int_equal(r.inheritable, 1ull << CAP_KILL);
        assert_int_equal(r.ambient, 1ull << CAP_KILL);
}

#if defined(__x86_64__)
#define AUDIT_ARCH_NATIVE AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define AUDIT_ARCH_NATIVE AUDIT_ARCH_AARCH64
#endif

#ifdef AUDIT_ARCH_NATIVE
/* Like the unit's SystemCallFilter=~@privileged: `nr` fails with EPERM. */
static void forbid(long nr)
{
        struct sock_filter filter[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_NATIVE, 1, 0),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog program = {
            .len = (unsigned short)(sizeof(filter) / sizeof(filter[0])),
            .filter = filter,
        };
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) < 0)
                _exit(6);
}

static void forbid_capset(void)
{
        forbid(__NR_capset);
}

static void forbid_setgroups(void)
{
        forbid(__NR_setgroups);
}

/* As systemd starts the unit: the two capabilities, a bounding set of the two, no capset(). */
static void start_like_the_unit(void)
{
        cap_t caps = cap_init();
        const cap_value_t values[] = {CAP_KILL, CAP_WAKE_ALARM};
        for (cap_value_t c = 0; c < cap_max_bits(); c++)
                if (c != CAP_KILL && c != CAP_WAKE_ALARM && cap_get_bound(c) == 1 &&
                    cap_drop_bound(c) < 0)
                        _exit(7);
        if (!caps || cap_set_flag(caps, CAP_PERMITTED, 2, values, CAP_SET) < 0 ||
            cap_set_flag(caps, CAP_EFFECTIVE, 2, values, CAP_SET) < 0 || cap_set_proc(caps) < 0)
                _exit(8);
        cap_free(caps);
        forbid_capset();
}

static void test_under_the_unit_verifies_only(void **state)
{
        (void)state;
        struct scenario sc = {.prepare = start_like_the_unit};
        struct report r;

        run(&sc, &r);
        assert_only_the_two(&r);
}

/* --user under a filter that forbids switching users: an error, not a half-done switch. */
static void test_switch_forbidden(void **state)
{
        struct fixture *f = *state;
        struct scenario sc = {
            .user = "nobody",
            .state_dir = f->state,
            .scratch = f->scratch,
            .prepare = forbid_setgroups,
        };
        struct report r;

        run(&sc, &r);
        assert_int_equal(r.result, -EPERM);
        assert_int_equal(r.uid, 0);
}

/* A unit that grants more, with capset() forbidden: the service refuses to run. */
static void test_cannot_drop_extra_caps(void **state)
{
        (void)state;
        struct scenario sc = {.prepare = forbid_capset};
        struct report r;

        run(&sc, &r);
        assert_int_equal(r.result, -EPERM);
}
#endif

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_root_keeps_only_the_two, setup, teardown),
            cmocka_unit_test_setup_teardown(test_switch_user, setup, teardown),
            cmocka_unit_test_setup_teardown(test_unknown_user, setup, teardown),
            cmocka_unit_test_setup_teardown(test_state_dir_missing, setup, teardown),
            cmocka_unit_test(test_switch_needs_root),
            cmocka_unit_test_setup_teardown(test_unprivileged_holds_nothing, setup, teardown),
            cmocka_unit_test(test_ambient_extra_dropped),
#ifdef AUDIT_ARCH_NATIVE
            cmocka_unit_test(test_under_the_unit_verifies_only),
            cmocka_unit_test_setup_teardown(test_switch_forbidden, setup, teardown),
            cmocka_unit_test(test_cannot_drop_extra_caps),
#endif
        };

        if (geteuid() != 0) {
                printf("SKIP: dropping capabilities and switching users need root\n");
                return 77;
        }
        if (cap_get_bound(CAP_KILL) != 1 || cap_get_bound(CAP_WAKE_ALARM) != 1) {
                printf("SKIP: this process may never hold CAP_KILL and CAP_WAKE_ALARM\n");
                return 77;
        }
        return cmocka_run_group_tests(tests, NULL, NULL);
}
