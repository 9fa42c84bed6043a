/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * zoneinfo/: zones read from $TZDIR through their links, and everything that is not a zone file
 * refused with its own error, without blocking (a FIFO) or reading without end (a huge file).
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "zoneinfo/zoneinfo.h"

/* A TZDIR of our own: Europe/Berlin copied from the system, a link to it, and files no zone is. */
struct fixture {
        char dir[64];
};

static void write_file(const char *path, const void *data, size_t size)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, data, size), (ssize_t)size);
        assert_int_equal(close(fd), 0);
}

static void copy_file(const char *from, const char *to)
{
        static uint8_t data[ZONEINFO_FILE_MAX];
        int fd = open(from, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        ssize_t n = read(fd, data, sizeof(data));
        assert_true(n > 0);
        close(fd);
        write_file(to, data, (size_t)n);
}

static int setup(void **state)
{
        struct fixture *f = calloc(1, sizeof(*f));
        char path[PATH_MAX];

        assert_non_null(f);
        snprintf(f->dir, sizeof(f->dir), "/tmp/test-zoneinfo.XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        snprintf(path, sizeof(path), "%s/Europe", f->dir);
        assert_int_equal(mkdir(path, 0755), 0);
        snprintf(path, sizeof(path), "%s/Europe/Berlin", f->dir);
        copy_file(ZONEINFO_DIR "/Europe/Berlin", path);
        snprintf(path, sizeof(path), "%s/Europe/Busingen", f->dir);
        assert_int_equal(symlink("Berlin", path), 0);
        snprintf(path, sizeof(path), "%s/Fifo", f->dir);
        assert_int_equal(mkfifo(path, 0644), 0);
        snprintf(path, sizeof(path), "%s/Garbage", f->dir);
        /* Longer than a TZif header, so that the magic is what is wrong. */
        char garbage[64];
        memset(garbage, 'x', sizeof(garbage));
        write_file(path, garbage, sizeof(garbage));
        snprintf(path, sizeof(path), "%s/Huge", f->dir);
        write_file(path, "TZif", 4);
        assert_int_equal(truncate(path, ZONEINFO_FILE_MAX + 1), 0);
        assert_int_equal(setenv("TZDIR", f->dir, 1), 0);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        struct fixture *f = *state;
        char command[128];

        snprintf(command, sizeof(command), "rm -rf '%s'", f->dir);
        assert_int_equal(system(command), 0);
        unsetenv("TZDIR");
        free(f);
        return 0;
}

static int load(const char *name)
{
        struct tz_zone *zone = NULL;
        int r = zoneinfo_load(name, &zone, NULL);

        if (r < 0)
                assert_null(zone);
        tz_zone_free(zone);
        return r;
}

static void test_zones_from_tzdir_and_through_links(void **state)
{
        struct tz_zone *zone;
        (void)state;

        /* Busingen is a symlink, as half of /usr/share/zoneinfo is. */
        assert_int_equal(zoneinfo_load("Europe/Busingen", &zone, NULL), 0);
        assert_non_null(zone);
        /* 2024-07-01 00:00 UTC: CEST. */
        struct tz_local local = tz_zone_local(zone, 1719792000);
        assert_int_equal(local.utoff, 7200);
        assert_true(local.isdst);
        tz_zone_free(zone);
        /* UTC needs no file; a zone only the system has is not found in our TZDIR. */
        assert_int_equal(zoneinfo_load("UTC", &zone, NULL), 0);
        assert_null(zone);
        assert_int_equal(load("Asia/Tokyo"), -ENOENT);
}

static void test_bad_names_refused_before_any_file(void **state)
{
        char long_name[CALENDAR_ZONE_MAX + 1];
        (void)state;

        memset(long_name, 'A', sizeof(long_name) - 1);
        long_name[sizeof(long_name) - 1] = '\0';
        const char *bad[] = {"/etc/passwd",
                             "../zoneinfo/Europe/Berlin",
                             "Europe/../Europe/Berlin",
                             "Europe/Berlin ",
                             "Europe\\Berlin",
                             "Europe/Berlin\n",
                             long_name};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                assert_false(zoneinfo_name_valid(bad[i]));
                assert_int_equal(load(bad[i]), -EINVAL);
        }
        assert_true(zoneinfo_name_valid("America/Argentina/Buenos_Aires"));
        assert_true(zoneinfo_name_valid("Etc/GMT+5"));
        assert_true(zoneinfo_name_valid("Etc/GMT-14"));
}

static void test_files_that_are_no_zones(void **state)
{
        enum tz_error tz_error;
        struct tz_zone *zone;
        (void)state;

        /* A FIFO would block a plain open() for ever. */
        assert_int_equal(load("Fifo"), -EBADF);
        assert_int_equal(load("Europe"), -EISDIR);
        assert_int_equal(load("Huge"), -EFBIG);
        assert_int_equal(zoneinfo_load("Garbage", &zone, &tz_error), -EINVAL);
        assert_null(zone);
        assert_int_equal(tz_error, TZ_E_MAGIC);
}

static void test_local_name_is_a_loadable_zone(void **state)
{
        char name[CALENDAR_ZONE_MAX];
        struct tz_zone *zone;
        (void)state;

        unsetenv("TZDIR");
        enum zoneinfo_local_source source = zoneinfo_local_name(name);
        assert_true(zoneinfo_name_valid(name));
        if (source == ZONEINFO_LOCAL_FALLBACK)
                assert_string_equal(name, "UTC");
        assert_int_equal(zoneinfo_load(name, &zone, NULL), 0);
        tz_zone_free(zone);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_zones_from_tzdir_and_through_links, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_bad_names_refused_before_any_file, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_files_that_are_no_zones, setup, teardown),
            cmocka_unit_test_setup_teardown(test_local_name_is_a_loadable_zone, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
