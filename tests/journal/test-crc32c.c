/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* CRC-32C against published check values (RFC 3720 B.4 and the "123456789" check). */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "service/crc32c.h"

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

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_check_values),
            cmocka_unit_test(test_continues),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
