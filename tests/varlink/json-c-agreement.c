/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "json-c-agreement.h"

#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <string.h>

#include "varlink/tokens.h"

/* Whether json-c's strict tokener takes the len bytes of text as one whole value. */
static bool json_c_takes(const char *text, size_t len)
{
        json_tokener *tok = json_tokener_new_ex(AGREEMENT_DEPTH);
        json_object *v;
        bool ok;

        if (!tok || len > INT_MAX)
                abort();
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        v = json_tokener_parse_ex(tok, text, (int)len);
        if (json_tokener_get_error(tok) == json_tokener_continue) {
                /* All taken, but a number at the top may go on: end the input. */
                json_object_put(v);
                v = json_tokener_parse_ex(tok, "", 1);
                ok = json_tokener_get_error(tok) == json_tokener_success;
        } else
                ok = json_tokener_get_error(tok) == json_tokener_success &&
                     json_tokener_get_parse_end(tok) == len;
        json_object_put(v);
        json_tokener_free(tok);
        return ok;
}

/* A byte below 0x20 inside a string (white space counts there), or outside one when it is not
 * white space. */
static bool has_raw_control(const char *text, size_t len)
{
        bool in_string = false;

        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)text[i];

                if (in_string && c == '\\')
                        i++;
                else if (c == '"')
                        in_string = !in_string;
                else if (c < 0x20 &&
                         (in_string || (c != ' ' && c != '\t' && c != '\n' && c != '\r')))
                        return true;
        }
        return false;
}

/* A number whose integer part is a 0 followed by more digits ("00", "-01"), outside an exponent. */
static bool has_leading_zero(const char *text, size_t len)
{
        for (size_t i = 0; i + 1 < len; i++) {
                char before = i > 0 ? text[i - 1] : ' ';

                if (text[i] != '0' || text[i + 1] < '0' || text[i + 1] > '9')
                        continue;
                if (before == '-')
                        before = i > 1 ? text[i - 2] : ' ';
                if ((before < '0' || before > '9') && before != '.' && before != 'e' &&
                    before != 'E' && before != '+' && before != '-')
                        return true;
        }
        return false;
}

/* A decimal point after a digit and not followed by one. */
static bool has_empty_fraction(const char *text, size_t len)
{
        for (size_t i = 1; i < len; i++)
                if (text[i] == '.' && text[i - 1] >= '0' && text[i - 1] <= '9' &&
                    (i + 1 == len || text[i + 1] < '0' || text[i + 1] > '9'))
                        return true;
        return false;
}

static bool contains(const char *text, size_t len, const char *word)
{
        return memmem(text, len, word, strlen(word)) != NULL;
}

const char *json_c_disagreement(const char *text, size_t len)
{
        struct vl_token tokens[256];
        size_t n;
        int ours = vl_tokenize(text, len, AGREEMENT_DEPTH, tokens, 256, &n);
        bool theirs;

        if (ours == -ENOBUFS)
                return NULL; /* too large to judge here; the caller's own checks cover it */
        theirs = json_c_takes(text, len);
        if ((ours == 0) == theirs)
                return NULL;
        if (ours == 0)
                return "json-c refuses what the tokenizer takes";
        /* RFC 8259 §8.1: JSON text is UTF-8 (RFC 3629: no overlong form, no surrogate, nothing
         * above U+10FFFF); §8.2 leaves lone surrogate escapes unpredictable: refused (utf8.h).
         * json-c checks only the shape of a sequence and makes U+FFFD of a lone surrogate. */
        if (ours == -EILSEQ)
                return NULL;
        /* RFC 8259 §7: control characters (U+0000..U+001F) in a string must be escaped. */
        if (has_raw_control(text, len))
                return NULL;
        /* RFC 8259 §7: a string begins and ends with quotation marks, not apostrophes. */
        if (contains(text, len, "'"))
                return NULL;
        /* RFC 8259 §6: "Numeric values that cannot be represented ... (such as Infinity and NaN)
         * are not permitted." */
        if (contains(text, len, "NaN") || contains(text, len, "Infinity") ||
            contains(text, len, "nan") || contains(text, len, "infinity"))
                return NULL;
        /* RFC 8259 §6: int = zero / ( digit1-9 *DIGIT ): a minus sign is followed by a digit;
         * json-c takes "-.5". */
        if (contains(text, len, "-."))
                return NULL;
        /* RFC 8259 §6: frac = decimal-point 1*DIGIT; json-c takes "1." and "1.e5". */
        if (has_empty_fraction(text, len))
                return NULL;
        /* RFC 8259 §6: "Leading zeros are not allowed."; json-c takes "00". */
        if (has_leading_zero(text, len))
                return NULL;
        return "the tokenizer refuses what json-c takes, for no listed reason";
}
