/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "varlink/idl.h"
#include "varlink/names.h"

static char *read_source(const char *file_name)
{
        char path[4096];
        char *text;
        FILE *f;
        long size;

        snprintf(path, sizeof(path), "%s/%s", VARLINK_SOURCE_DIR, file_name);
        f = fopen(path, "re");
        assert_non_null(f);
        assert_int_equal(fseek(f, 0, SEEK_END), 0);
        size = ftell(f);
        assert_true(size > 0);
        rewind(f);
        text = malloc((size_t)size + 1);
        assert_non_null(text);
        assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
        text[size] = 0;
        assert_int_equal(fclose(f), 0);
        return text;
}

/* Each interface is served byte for byte as its .varlink file. */
static void served_verbatim(void **state)
{
        static const char *const interfaces[] = {VL_INTERFACE_SERVICE, VL_INTERFACE_TIMER,
                                                 VL_INTERFACE_STATUS, VL_INTERFACE_TEST};

        (void)state;
        for (size_t i = 0; i < sizeof(interfaces) / sizeof(interfaces[0]); i++) {
                char file_name[256];
                char *expected;

                snprintf(file_name, sizeof(file_name), "%s.varlink", interfaces[i]);
                expected = read_source(file_name);
                assert_non_null(vl_idl_lookup(interfaces[i]));
                assert_string_equal(vl_idl_lookup(interfaces[i]), expected);
                free(expected);
        }
}

static void interface_list(void **state)
{
        (void)state;
        assert_string_equal(vl_idl_interfaces[0], VL_INTERFACE_SERVICE);
        assert_string_equal(vl_idl_interfaces[1], VL_INTERFACE_TIMER);
        assert_string_equal(vl_idl_interfaces[2], VL_INTERFACE_STATUS);
        /* Embedded for every instance; the service serves it only on a virtual clock. */
        assert_string_equal(vl_idl_interfaces[3], VL_INTERFACE_TEST);
        assert_null(vl_idl_interfaces[4]);
}

static void unknown_interface(void **state)
{
        static const char *const unknown[] = {
            "",
            "io.timerd",
            "io.timerd.timer",
            "io.timerd.Timer.List",
            "io.timerd.Timerx",
            "org.varlink",
            "com.example.Other",
        };

        (void)state;
        for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++)
                assert_null(vl_idl_lookup(unknown[i]));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(served_verbatim),
            cmocka_unit_test(interface_list),
            cmocka_unit_test(unknown_interface),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
