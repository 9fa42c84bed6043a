/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* CRC-32C against published check values (RFC 3720 B.4 and the "123456789" check). */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "service/io/crc32c.h"

static void test_check_values(void **state)
{
        uint8_t data[32];

        (void)state;
        assert_int_equal(crc32c(0, "123456789", 9), 0xe3069283);
        assert_int_equal(crc32c(0, "", 0), 0);

        memset(data, 0, sizeof(data));
        assert_int_equal(crc32c(0, data, sizeof(data)), 0x8a9136aa);
        memset(data, 0xff, sizeof(data));
        assert_int_equal(crc32c(0, data, sizeof(data)), 0x62a8ab43);
        for (size_t i = 0; i < sizeof(data); i++)
                data[i] = (uint8_t)i;
        assert_int_equal(crc32c(0, data, sizeof(data)), 0x46dd794e);
        for (size_t i = 0; i < sizeof(data); i++)
                data[i] = (uint8_t)(31 - i);
        assert_int_equal(crc32c(0, data, sizeof(data)), 0x113fdb5c);
}

static void test_continues(void **state)
{
        const char *text = "The quick brown fox jumps over the lazy dog";
        size_t n = strlen(text);

        (void)state;
        for (size_t split = 0; split <= n; split++)
                assert_int_equal(crc32c(crc32c(0, text, split), text + split, n - split),
                                 crc32c(0, text, n));
        assert_int_equal(crc32c(0, text, n), 0x22620404);
}

/* Long buffers at every alignment, cut anywhere: the 8-byte steps and the byte steps agree. */
static void test_long_and_unaligned(void **state)
{
        uint8_t data[300];
        uint32_t whole;

        (void)state;
        for (size_t i = 0; i < sizeof(data); i++)
                data[i] = (uint8_t)(i * 7 + 3);
        whole = crc32c(0, data, sizeof(data));
        for (size_t split = 0; split <= sizeof(data); split++)
                assert_int_equal(crc32c(crc32c(0, data, split), data + split, sizeof(data) - split),
                                 whole);
        for (size_t start = 0; start < 16; start++) {
                uint8_t copy[sizeof(data) + 16];

                memcpy(copy + start, data, sizeof(data));
                assert_int_equal(crc32c(0, copy + start, sizeof(data)), whole);
        }
        /* 1000 zero bytes, against a value computed bit by bit elsewhere. */
        {
                uint8_t zeros[1000] = {};

                assert_int_equal(crc32c(0, zeros, sizeof(zeros)), 0xd84dda57);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_check_values),
            cmocka_unit_test(test_continues),
            cmocka_unit_test(test_long_and_unaligned),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
