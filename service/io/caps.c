/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/io/caps.h"

#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "service/io/log.h"

static bool is_kept(cap_value_t c)
{
        return c == CAP_KILL || c == CAP_WAKE_ALARM;
}

static bool has_flag(cap_t caps, cap_value_t c, cap_flag_t flag)
{
        cap_flag_value_t v = CAP_CLEAR;
        return cap_get_flag(caps, c, flag, &v) == 0 && v == CAP_SET;
}

static int resolve_user(const char *user, uid_t *ret_uid, gid_t *ret_gid)
{
        struct passwd pw, *found = NULL;
        char buf[16384];

        if (geteuid() != 0) {
                log_error("Switching to user %s needs root", user);
                return -EPERM;
        }
        int r = getpwnam_r(user, &pw, buf, sizeof(buf), &found);
        if (r != 0)
                return log_errno(-r, "Cannot look up user %s", user);
        if (!found) {
                log_error("No such user: %s", user);
                return -ESRCH;
        }
        *ret_uid = pw.pw_uid;
        *ret_gid = pw.pw_gid;
        return 0;
}

/* Needs CAP_SETPCAP in effect; without it, what the bounding set still holds is out of reach
 * anyway once no-new-privs is set. */
static int drop_bounding(void)
{
        cap_t caps = cap_get_proc();
        if (!caps)
                return log_errno(-errno, "Cannot read capabilities");
        bool may_drop = has_flag(caps, CAP_SETPCAP, CAP_EFFECTIVE);
        cap_free(caps);
        if (!may_drop)
                return 0;

        for (cap_value_t c = 0; c < cap_max_bits(); c++) {
                if (is_kept(c) || cap_get_bound(c) != 1)
                        continue;
                if (cap_drop_bound(c) < 0)
                        return log_errno(-errno, "Cannot drop capability %d from the bounding set",
                                         (int)c);
        }
        return 0;
}

/* Permitted capabilities survive the switch (PR_SET_KEEPCAPS); trim_sets() makes them effective. */
static int become_user(const char *user, uid_t uid, gid_t gid, const char *state_dir)
{
        int r = 0;

        if (state_dir && chown(state_dir, uid, gid) < 0)
                return log_errno(-errno, "Cannot hand the state directory %s to %s", state_dir,
                                 user);
        if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
                return log_errno(-errno, "Cannot keep capabilities across the user switch");
        if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
                r = log_errno(-errno, "Cannot switch to user %s", user);
        if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0 && r == 0)
                r = log_errno(-errno, "Cannot reset PR_SET_KEEPCAPS");
        if (r == 0)
                log_info("Running as user %s (uid %u, gid %u)", user, (unsigned)uid, (unsigned)gid);
        return r;
}

/* Clear every capability but the two from the permitted, effective and inheritable sets (the
 * kernel then drops them from the ambient set), and make the two effective. capset() is called
 * only when something changes, since a unit's seccomp filter may forbid it. */
static int trim_sets(unsigned *ret_dropped)
{
        static const cap_flag_t flags[] = {CAP_PERMITTED, CAP_EFFECTIVE, CAP_INHERITABLE};
        unsigned dropped = 0;
        bool change = false;
        int r = 0;

        cap_t caps = cap_get_proc();
        if (!caps)
                return log_errno(-errno, "Cannot read capabilities");
        for (cap_value_t c = 0; c < cap_max_bits(); c++) {
                if (is_kept(c)) {
                        if (has_flag(caps, c, CAP_PERMITTED) && !has_flag(caps, c, CAP_EFFECTIVE)) {
                                change = true;
                                if (cap_set_flag(caps, CAP_EFFECTIVE, 1, &c, CAP_SET) < 0)
                                        r = -errno;
                        }
                        continue;
                }
                if (has_flag(caps, c, CAP_PERMITTED))
                        dropped++;
                for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
                        if (!has_flag(caps, c, flags[i]))
                                continue;
                        change = true;
                        if (cap_set_flag(caps, flags[i], 1, &c, CAP_CLEAR) < 0)
                                r = -errno;
                }
        }
        if (r == 0 && change && cap_set_proc(caps) < 0)
                r = -errno;
        cap_free(caps);
        if (r < 0)
                return log_errno(r, "Holding capabilities beyond CAP_KILL and CAP_WAKE_ALARM "
                                    "and cannot drop them");
        *ret_dropped = dropped;
        return 0;
}

static void log_held(unsigned dropped)
{
        char line[512] = "";
        char **names;

        int n = caps_held(&names);
        if (n < 0) {
                log_errno(n, "Cannot list capabilities");
                return;
        }
        for (int i = 0; i < n; i++) {
                if (i > 0)
                        strncat(line, " ", sizeof(line) - strlen(line) - 1);
                strncat(line, names[i], sizeof(line) - strlen(line) - 1);
        }
        caps_names_free(names);
        if (dropped > 0)
                log_info("Capabilities: %s (dropped %u others)", n > 0 ? line : "none", dropped);
        else
                log_info("Capabilities: %s", n > 0 ? line : "none");
}

int caps_drop(const char *user, const char *state_dir)
{
        bool switching = user && user[0];
        unsigned dropped = 0;
        uid_t uid = 0;
        gid_t gid = 0;
        int r;

        if (switching) {
                r = resolve_user(user, &uid, &gid);
                if (r < 0)
                        return r;
        }
        r = drop_bounding();
        if (r < 0)
                return r;
        if (switching) {
                r = become_user(user, uid, gid, state_dir);
                if (r < 0)
                        return r;
        }
        r = trim_sets(&dropped);
        if (r < 0)
                return r;
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return log_errno(-errno, "Cannot set no-new-privs");
        log_held(dropped);
        return 0;
}

int caps_held(char ***ret)
{
        cap_value_t max = cap_max_bits();
        size_t n = 0;
        int r = 0;

        cap_t caps = cap_get_proc();
        if (!caps)
                return -errno;
        char **names = calloc((size_t)max + 1, sizeof(*names));
        if (!names) {
                cap_free(caps);
                return -ENOMEM;
        }
        for (cap_value_t c = 0; c < max; c++) {
                if (!has_flag(caps, c, CAP_EFFECTIVE))
                        continue;
                char *name = cap_to_name(c);
                if (!name) {
                        r = -ENOMEM;
                        break;
                }
                names[n] = strdup(name);
                cap_free(name);
                if (!names[n]) {
                        r = -ENOMEM;
                        break;
                }
                for (char *p = names[n]; *p; p++)
                        *p = (char)toupper((unsigned char)*p);
                n++;
        }
        cap_free(caps);
        if (r < 0) {
                caps_names_free(names);
                return r;
        }
        *ret = names;
        return (int)n;
}

void caps_names_free(char **names)
{
        if (!names)
                return;
        for (char **p = names; *p; p++)
                free(*p);
        free(names);
}
