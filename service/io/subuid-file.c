/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/io/subuid-file.h"

#include <errno.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "service/io/log.h"

/* Up to the next ':' (or the end): the field, the rest after it in *rest (NULL at the end). */
static char *field(char *s, char **rest)
{
        char *colon = strchr(s, ':');

        *rest = colon ? colon + 1 : NULL;
        if (colon)
                *colon = '\0';
        return s;
}

/* A decimal number of digits only, at most max. */
static bool parse_number(const char *s, uint64_t max, uint64_t *ret)
{
        uint64_t v = 0;

        if (*s == '\0')
                return false;
        for (; *s; s++) {
                if (*s < '0' || *s > '9' || v > (max - (uint64_t)(*s - '0')) / 10)
                        return false;
                v = v * 10 + (uint64_t)(*s - '0');
        }
        *ret = v;
        return true;
}

/* The range one line says; false (after logging why) when it is not one. */
static bool parse_line(char *line, const char *path, size_t number, subuid_resolve_fn resolve,
                       struct subuid_range *ret)
{
        char *rest, *user = field(line, &rest), *first = rest ? field(rest, &rest) : NULL,
                    *count = rest ? field(rest, &rest) : NULL;
        uint64_t account, f, n;

        if (!count || rest) {
                log_warning("%s:%zu: not \"user:first:count\"; skipped", path, number);
                return false;
        }
        /* (uid_t)-1 is no uid. */
        if (parse_number(user, UINT32_MAX - 1, &account))
                ;
        else if (user[0] >= '0' && user[0] <= '9') {
                log_warning("%s:%zu: user \"%s\" is not a valid uid; skipped", path, number, user);
                return false;
        } else {
                uint32_t uid;
                if (resolve(user, &uid) < 0) {
                        log_warning("%s:%zu: no user \"%s\"; skipped", path, number, user);
                        return false;
                }
                account = uid;
        }
        if (!parse_number(first, UINT32_MAX, &f) || !parse_number(count, UINT32_MAX, &n) ||
            n == 0 || f + n > UINT64_C(1) << 32) {
                log_warning("%s:%zu: \"%s:%s\" is not a range of uids; skipped", path, number,
                            first, count);
                return false;
        }
        *ret = (struct subuid_range){
            .first = (uint32_t)f, .count = (uint32_t)n, .account = (uint32_t)account};
        return true;
}

static char *trim(char *s)
{
        size_t n;

        s += strspn(s, " \t");
        n = strlen(s);
        while (n > 0 && strchr(" \t\r\n", s[n - 1]))
                s[--n] = '\0';
        return s;
}

int subuid_file_parse(FILE *f, const char *path, subuid_resolve_fn resolve,
                      struct subuid_range **ret, size_t *ret_n, size_t *ret_bad)
{
        struct subuid_range *ranges = NULL;
        size_t n = 0, allocated = 0, bad = 0, number = 0, size = 0;
        char *buf = NULL;
        int r = 0;

        while (getline(&buf, &size, f) >= 0) {
                char *line = trim(buf);
                struct subuid_range range;

                number++;
                if (line[0] == '\0' || line[0] == '#')
                        continue;
                if (!parse_line(line, path, number, resolve, &range)) {
                        bad++;
                        continue;
                }
                if (n == allocated) {
                        size_t more = allocated ? allocated * 2 : 16;
                        struct subuid_range *grown = reallocarray(ranges, more, sizeof(*ranges));
                        if (!grown) {
                                r = -ENOMEM;
                                break;
                        }
                        ranges = grown;
                        allocated = more;
                }
                ranges[n++] = range;
        }
        free(buf);
        if (r == 0 && ferror(f))
                r = -EIO;
        if (r < 0) {
                free(ranges);
                return r;
        }
        *ret = ranges;
        *ret_n = n;
        *ret_bad = bad;
        return 0;
}

static int resolve_with_getpwnam(const char *name, uint32_t *ret_uid)
{
        const struct passwd *pw = getpwnam(name);

        if (!pw)
                return -ENOENT;
        *ret_uid = (uint32_t)pw->pw_uid;
        return 0;
}

int subuid_file_load(const char *path, struct subuid_range **ret, size_t *ret_n)
{
        size_t bad = 0;
        FILE *f = fopen(path, "re");
        int r;

        if (!f) {
                if (errno != ENOENT)
                        return -errno;
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        r = subuid_file_parse(f, path, resolve_with_getpwnam, ret, ret_n, &bad);
        fclose(f);
        if (r >= 0 && bad > 0)
                log_warning("%s: %zu bad lines skipped", path, bad);
        return r;
}
