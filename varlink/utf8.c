/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "varlink/utf8.h"

#define SURROGATE_HIGH_FIRST 0xd800
#define SURROGATE_LOW_FIRST  0xdc00
#define SURROGATE_LOW_LAST   0xdfff

/* The bounds on the second byte are what refuse overlong forms (E0, F0), surrogates (ED) and
 * code points above U+10FFFF (F4); C0, C1 and F5..FF are never lead bytes. */
size_t vl_utf8_sequence_length(const char *text, size_t n)
{
        const unsigned char *s = (const unsigned char *)text;
        unsigned char lead = s[0], low = 0x80, high = 0xbf;
        size_t len;

        if (lead < 0x80)
                return 1;
        if (lead < 0xc2)
                return 0;
        if (lead < 0xe0)
                len = 2;
        else if (lead < 0xf0) {
                len = 3;
                if (lead == 0xe0)
                        low = 0xa0;
                else if (lead == 0xed)
                        high = 0x9f;
        } else if (lead < 0xf5) {
                len = 4;
                if (lead == 0xf0)
                        low = 0x90;
                else if (lead == 0xf4)
                        high = 0x8f;
        } else
                return 0;

        if (n < len || s[1] < low || s[1] > high)
                return 0;
        for (size_t i = 2; i < len; i++)
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
        return len;
}

static int hex_digit(unsigned char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

long vl_json_escaped_unit(const char *text, size_t n)
{
        const unsigned char *s = (const unsigned char *)text;
        long unit = 0;

        if (n < 6 || s[0] != '\\' || s[1] != 'u')
                return -1;
        for (size_t i = 2; i < 6; i++) {
                int d = hex_digit(s[i]);
                if (d < 0)
                        return -1;
                unit = unit * 16 + d;
        }
        return unit;
}

/* The length of the escape at s (a backslash in a string), 0 when it is a lone surrogate. */
static size_t escape_length(const unsigned char *s, size_t n)
{
        long unit = vl_json_escaped_unit((const char *)s, n);

        if (unit >= SURROGATE_LOW_FIRST && unit <= SURROGATE_LOW_LAST)
                return 0;
        if (unit >= SURROGATE_HIGH_FIRST && unit < SURROGATE_LOW_FIRST) {
                long low = vl_json_escaped_unit((const char *)s + 6, n - 6);
                return low >= SURROGATE_LOW_FIRST && low <= SURROGATE_LOW_LAST ? 12 : 0;
        }
        /* Past the backslash and an ASCII character after it; anything else is checked as text
         * (and is no JSON escape: the parser refuses it). */
        return n > 1 && s[1] < 0x80 ? 2 : 1;
}

bool vl_json_text_valid(const char *text, size_t len)
{
        const unsigned char *s = (const unsigned char *)text;
        bool in_string = false;

        for (size_t i = 0; i < len;) {
                size_t n = 1;

                if (s[i] >= 0x80)
                        n = vl_utf8_sequence_length(text + i, len - i);
                else if (s[i] == '"')
                        in_string = !in_string;
                else if (s[i] == '\\' && in_string)
                        n = escape_length(s + i, len - i);
                if (n == 0)
                        return false;
                i += n;
        }
        return true;
}
