/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "users.h"

/* getpw*_r() want a buffer for the entry's strings; an entry with longer ones is refused. */
#define PASSWD_BUFFER_START (1U << 10)
#define PASSWD_BUFFER_MAX   (1U << 20)

/* getpwnam_r() or getpwuid_r() through a buffer that grows as the entry needs: 0 and the uid or
 * the name, -ESRCH when there is no such entry, another -errno. */
static int lookup(const char *name, uint32_t uid, uint32_t *ret_uid, char *ret_name,
                  size_t name_size)
{
        struct passwd entry, *found = NULL;
        char *buffer = NULL;
        int r = ERANGE;

        for (size_t size = PASSWD_BUFFER_START; r == ERANGE && size <= PASSWD_BUFFER_MAX;
             size *= 2) {
                char *bigger = realloc(buffer, size);

                if (!bigger) {
                        free(buffer);
                        return -ENOMEM;
                }
                buffer = bigger;
                r = name ? getpwnam_r(name, &entry, buffer, size, &found)
                         : getpwuid_r(uid, &entry, buffer, size, &found);
        }
        /* Not found: 0 and no entry, though some NSS modules say ENOENT or ESRCH. */
        if ((r == 0 && !found) || r == ENOENT)
                r = ESRCH;
        if (r == 0 && ret_uid)
                *ret_uid = entry.pw_uid;
        if (r == 0 && ret_name &&
            snprintf(ret_name, name_size, "%s", entry.pw_name) >= (int)name_size)
                r = ENAMETOOLONG;
        free(buffer);
        return -r;
}

int user_parse(const char *s, uint32_t *ret)
{
        uint64_t value = 0;
        const char *p;

        for (p = s; *p >= '0' && *p <= '9'; p++)
                if (__builtin_mul_overflow(value, 10, &value) ||
                    __builtin_add_overflow(value, (uint64_t)(*p - '0'), &value))
                        return -ERANGE;
        if (p == s || *p != 0)
                return lookup(s, 0, ret, NULL, 0);
        /* (uid_t)-1 is no uid: chown(2) and setresuid(2) read it as "unchanged". */
        if (value >= UINT32_MAX)
                return -ERANGE;
        *ret = (uint32_t)value;
        return 0;
}

char *user_name(uint32_t uid, char buf[static USER_NAME_MAX])
{
        if (lookup(NULL, uid, NULL, buf, USER_NAME_MAX) < 0)
                snprintf(buf, USER_NAME_MAX, "%" PRIu32, uid);
        return buf;
}
