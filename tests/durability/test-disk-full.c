/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * A full disk under the service: the state directory on a small tmpfs, mounted in a private mount
 * namespace (nothing stays mounted if the test dies). Once the journal cannot grow, a change to a
 * retained timer fails with StoreUnavailable and is not made, transient timers keep working and
 * Status says the store is degraded; once there is room again the next change works and Status
 * is healthy. Needs root for the mount; skipped (exit 77) without it.
 */

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cmocka.h>

#include "durability.h"

#define MAX_TIMERS 400
#define SEC        1000000ull

static char mount_dir[128];

/* Write a file until the disk is full; returns its path. */
static char *fill(void)
{
        char block[4096], *path;
        int fd;

        memset(block, 0xaa, sizeof(block));
        assert_true(asprintf(&path, "%s/filler", mount_dir) > 0);
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        for (unsigned i = 0;; i++) {
                assert_true(i < 1024);
                if (write(fd, block, sizeof(block)) < 0) {
                        assert_int_equal(errno, ENOSPC);
                        break;
                }
        }
        assert_int_equal(close(fd), 0);
        return path;
}

static int register_retained(struct timerd *t, unsigned i, struct timerd_claim *ret)
{
        struct timerd_declaration d;
        char name[16];

        snprintf(name, sizeof(name), "r%03u", i);
        timerd_declaration_init(&d, TIMERD_POLICY_ONCE, 0);
        d.lifetime = TIMERD_LIFETIME_RETAINED;
        return timerd_register(t, name, &d, NULL, false, ret);
}

static void assert_present(struct timerd *t, const struct timerd_claim *claims, unsigned n)
{
        struct timerd_timer tm;

        for (unsigned i = 0; i < n; i++) {
                assert_int_equal(timerd_get(t, claims[i].name, TIMERD_OWNER_SELF, &tm), 0);
                assert_int_equal(tm.generation, claims[i].generation);
        }
}

static void test_disk_full(void **state)
{
        struct timerd_start later = {.kind = TIMERD_START_AFTER, .usec = 3600 * SEC};
        struct timerd_claim claims[MAX_TIMERS + 1], temp;
        struct timerd_declaration transient;
        struct timerd_timer tm;
        char store[128], *filler;
        struct dur *dur = *state;
        struct timerd *t;
        unsigned n = 0;
        int r;

        dur_start(dur);
        t = harness_connect(&dur->h);
        for (; n < 5; n++)
                assert_int_equal(register_retained(t, n, &claims[n]), 0);
        dur_store_status(t, store, sizeof(store));
        assert_string_equal(store, "journal");

        filler = fill();
        /* The journal's last page may still have room for a few records. */
        for (;; n++) {
                assert_true(n < MAX_TIMERS);
                r = register_retained(t, n, &claims[n]);
                if (r < 0)
                        break;
        }
        assert_int_equal(r, -TIMERD_E_STORE_UNAVAILABLE);
        assert_string_equal(timerd_last_error_name(t), "io.timerd.Timer.StoreUnavailable");
        /* Not made: neither there now nor after a restart. */
        assert_int_equal(timerd_get(t, "r000", TIMERD_OWNER_SELF, &tm), 0);
        snprintf(claims[n].name, sizeof(claims[n].name), "r%03u", n);
        assert_int_equal(timerd_get(t, claims[n].name, TIMERD_OWNER_SELF, &tm),
                         -TIMERD_E_NOT_FOUND);
        /* A change to an existing one is refused and undone as well. */
        assert_int_equal(timerd_schedule(t, &claims[0], NULL, &later), -TIMERD_E_STORE_UNAVAILABLE);
        assert_int_equal(timerd_get(t, "r000", TIMERD_OWNER_SELF, &tm), 0);
        assert_int_equal(tm.state, TIMERD_STATE_INACTIVE);
        assert_false(tm.has_next);
        /* Transient timers never touch the disk. */
        timerd_declaration_init(&transient, TIMERD_POLICY_ONCE, 0);
        assert_int_equal(timerd_register(t, "temp", &transient, &later, false, &temp), 0);
        dur_store_status(t, store, sizeof(store));
        assert_string_equal(store, "degraded: No space left on device");

        /* Room again: the next change works, and the store is healthy. */
        assert_int_equal(unlink(filler), 0);
        free(filler);
        assert_int_equal(register_retained(t, n, &claims[n]), 0);
        n++;
        dur_store_status(t, store, sizeof(store));
        assert_string_equal(store, "journal");
        assert_int_equal(timerd_schedule(t, &claims[0], NULL, &later), 0);
        assert_present(t, claims, n);
        timerd_close(t);

        dur_stop(dur);
        dur_start(dur);
        t = harness_connect(&dur->h);
        assert_present(t, claims, n);
        assert_int_equal(timerd_get(t, "r000", TIMERD_OWNER_SELF, &tm), 0);
        assert_int_equal(tm.state, TIMERD_STATE_SCHEDULED);
        assert_int_equal(timerd_get(t, "temp", TIMERD_OWNER_SELF, &tm), -TIMERD_E_NOT_FOUND);
        timerd_close(t);
        dur_stop(dur);
}

static int setup(void **state)
{
        *state = dur_new(mount_dir);
        return 0;
}

/* Say why and exit 77: no code can mount without the privilege to. */
static int skip_test(const char *why)
{
        fprintf(stderr, "skipped: %s: a tmpfs must be mounted to fill a real disk\n", why);
        return 77;
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_disk_full, setup, dur_teardown),
        };
        int r;

        if (geteuid() != 0)
                return skip_test("not root");
        if (unshare(CLONE_NEWNS) < 0)
                return skip_test(strerror(errno));
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return skip_test(strerror(errno));
        snprintf(mount_dir, sizeof(mount_dir), "/tmp/timerd-disk-full.XXXXXX");
        if (!mkdtemp(mount_dir)) {
                perror("mkdtemp");
                return EXIT_FAILURE;
        }
        if (mount("tmpfs", mount_dir, "tmpfs", 0, "size=64k,mode=0700") < 0) {
                r = errno;
                rmdir(mount_dir);
                return skip_test(strerror(r));
        }

        r = cmocka_run_group_tests(tests, NULL, NULL);
        if (umount2(mount_dir, MNT_DETACH) < 0 || rmdir(mount_dir) < 0) {
                perror("cleanup");
                return EXIT_FAILURE;
        }
        return r;
}
