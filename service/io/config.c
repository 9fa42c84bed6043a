/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/io/config.h"

#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "service/io/log.h"

void config_defaults(struct config *c)
{
        *c = (struct config){
            .socket_path = "run/io.timerd",
            .state_dir = "state",
            .backend = "auto",
            .clock = "real",
            .log_level = LOG_INFO,
            .max_message = (size_t)64 * 1024,
            .max_depth = 16,
            .max_output = (size_t)64 * 1024 * 1024,
            .max_connections = 4096,
            .max_connections_per_uid = 1024,
            .admin_gid = (gid_t)-1,
            .reserved_connections = 16,
            .idle_timeout_usec = UINT64_C(300000000),
            .partial_timeout_usec = UINT64_C(10000000),
            .max_timers = 8 * 1024 * 1024,
            .reserved_timers = 65536,
            .max_timers_per_owner = 4 * 1024 * 1024,
            .min_cadence_usec = 1000,
            .max_intents = 4096,
            .max_parked_per_connection = 1024,
            .max_parked_per_owner = 65536,
            .subuid_file = "/etc/subuid",
            .list_page = 1000,
            .shutdown_grace_usec = UINT64_C(5000000),
        };
}

enum setting_kind {
        SETTING_STRING,
        SETTING_NUMBER,
        SETTING_LOG_LEVEL,
        SETTING_BACKEND,
        SETTING_CLOCK,
        SETTING_GROUP, /* a group name or gid, resolved when the settings are read */
};

/* One setting, as the command line (--name) and the config file (name = value) spell it. */
struct setting {
        const char *name;
        size_t offset; /* in struct config */
        size_t size;   /* of the field: a string's buffer, or the number's type */
        uint64_t min, max;
        enum setting_kind kind;
        bool reloadable; /* SIGHUP applies it; the others need a restart */
};

#define FIELD(f) offsetof(struct config, f), sizeof(((struct config *)0)->f)

static const struct setting settings[] = {
    {"socket", FIELD(socket_path), 0, 0, SETTING_STRING, false},
    {"state-dir", FIELD(state_dir), 0, 0, SETTING_STRING, false},
    {"backend", FIELD(backend), 0, 0, SETTING_BACKEND, false},
    {"clock", FIELD(clock), 0, 0, SETTING_CLOCK, false},
    {"user", FIELD(user), 0, 0, SETTING_STRING, false},
    {"log-level", FIELD(log_level), 0, 0, SETTING_LOG_LEVEL, true},
    {"shutdown-grace", FIELD(shutdown_grace_usec), 0, UINT64_MAX / 2, SETTING_NUMBER, true},
    {"max-message", FIELD(max_message), 256, UINT64_C(64) << 20, SETTING_NUMBER, true},
    {"max-output", FIELD(max_output), 4096, UINT32_MAX, SETTING_NUMBER, true},
    {"max-connections", FIELD(max_connections), 1, UINT32_MAX, SETTING_NUMBER, true},
    {"max-connections-per-uid", FIELD(max_connections_per_uid), 1, UINT32_MAX, SETTING_NUMBER,
     true},
    {"admin-group", FIELD(admin_gid), 0, 0, SETTING_GROUP, false},
    {"reserved-connections", FIELD(reserved_connections), 0, UINT32_MAX, SETTING_NUMBER, true},
    {"idle-timeout", FIELD(idle_timeout_usec), 1000, UINT64_MAX / 2, SETTING_NUMBER, true},
    {"partial-timeout", FIELD(partial_timeout_usec), 1000, UINT64_MAX / 2, SETTING_NUMBER, true},
    {"max-timers", FIELD(max_timers), 1, UINT32_MAX, SETTING_NUMBER, false},
    {"reserved-timers", FIELD(reserved_timers), 0, UINT32_MAX, SETTING_NUMBER, false},
    {"max-timers-per-owner", FIELD(max_timers_per_owner), 1, UINT32_MAX, SETTING_NUMBER, false},
    {"min-cadence", FIELD(min_cadence_usec), 1, UINT64_C(3600000000), SETTING_NUMBER, false},
    {"max-intents", FIELD(max_intents), 1, UINT64_C(1) << 20, SETTING_NUMBER, false},
    {"max-parked-per-connection", FIELD(max_parked_per_connection), 1, UINT32_MAX, SETTING_NUMBER,
     false},
    {"max-parked-per-owner", FIELD(max_parked_per_owner), 1, UINT32_MAX, SETTING_NUMBER, false},
    {"subuid-file", FIELD(subuid_file), 0, 0, SETTING_STRING, true},
    {"list-page", FIELD(list_page), 1, UINT64_C(1) << 20, SETTING_NUMBER, true},
};

static const struct setting *setting_find(const char *name)
{
        for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++)
                if (strcmp(settings[i].name, name) == 0)
                        return &settings[i];
        return NULL;
}

static int parse_log_level(const char *s, int *ret)
{
        static const char *const names[] = {"emerg",   "alert",  "crit", "err",
                                            "warning", "notice", "info", "debug"};
        for (int i = 0; i < (int)(sizeof(names) / sizeof(names[0])); i++)
                if (strcmp(s, names[i]) == 0) {
                        *ret = i;
                        return 0;
                }
        return -EINVAL;
}

/* A gid as a number, or a group name looked up now: the service never resolves it per call. */
static int parse_group(const char *value, gid_t *ret, const char *origin)
{
        char *end;

        errno = 0;
        unsigned long long v = strtoull(value, &end, 10);
        if (value[0] >= '0' && value[0] <= '9' && errno == 0 && *end == '\0') {
                /* (gid_t)-1 is no group: setgid(2) reads it as "unchanged". */
                if (v >= UINT32_MAX) {
                        log_error("%s: admin-group: not a valid gid: \"%s\"", origin, value);
                        return -EINVAL;
                }
                *ret = (gid_t)v;
                return 0;
        }
        errno = 0;
        const struct group *g = getgrnam(value);
        if (!g) {
                if (errno != 0 && errno != ENOENT && errno != ESRCH)
                        return log_errno(-errno, "%s: admin-group: cannot look up group \"%s\"",
                                         origin, value);
                log_error("%s: admin-group: no such group: \"%s\"", origin, value);
                return -EINVAL;
        }
        *ret = g->gr_gid;
        return 0;
}

static void store_number(void *field, size_t size, uint64_t v)
{
        if (size == sizeof(uint64_t))
                *(uint64_t *)field = v;
        else
                *(uint32_t *)field = (uint32_t)v;
}

/* Set one setting from text; `origin` names where it came from in the message. */
static int setting_apply(struct config *c, const struct setting *st, const char *value,
                         const char *origin)
{
        void *field = (char *)c + st->offset;
        char *end;

        switch (st->kind) {
        case SETTING_BACKEND:
                if (strcmp(value, "auto") != 0 && strcmp(value, "io_uring") != 0 &&
                    strcmp(value, "timerfd") != 0)
                        goto bad;
                /* fall through */
        case SETTING_CLOCK:
                if (st->kind == SETTING_CLOCK && strcmp(value, "real") != 0 &&
                    strcmp(value, "virtual") != 0)
                        goto bad;
                /* fall through */
        case SETTING_STRING:
                if (value[0] == '\0' || strlen(value) >= st->size)
                        goto bad;
                memcpy(field, value, strlen(value) + 1);
                return 0;
        case SETTING_LOG_LEVEL:
                if (parse_log_level(value, field) < 0)
                        goto bad;
                return 0;
        case SETTING_GROUP:
                return parse_group(value, field, origin);
        case SETTING_NUMBER:
                errno = 0;
                unsigned long long v = strtoull(value, &end, 10);
                if (errno != 0 || end == value || *end != '\0' || value[0] == '-' || v < st->min ||
                    v > st->max)
                        goto bad;
                store_number(field, st->size, v);
                return 0;
        }
bad:
        log_error("%s: %s: not a valid value: \"%s\"", origin, st->name, value);
        return -EINVAL;
}

static char *trim(char *s)
{
        while (*s == ' ' || *s == '\t')
                s++;
        char *e = s + strlen(s);
        while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
                *--e = '\0';
        return s;
}

int config_parse_file(struct config *c, const char *path, bool missing_ok)
{
        char line[4608], origin[4200];
        unsigned lineno = 0;
        int r = 0;

        FILE *f = fopen(path, "re");
        if (!f) {
                r = -errno;
                if (r == -ENOENT && missing_ok) {
                        log_info("No configuration file %s: its settings are the defaults", path);
                        return 0;
                }
                return log_errno(r, "Cannot read the configuration file %s", path);
        }
        while (fgets(line, sizeof(line), f)) {
                lineno++;
                snprintf(origin, sizeof(origin), "%s:%u", path, lineno);
                if (!strchr(line, '\n') && !feof(f)) {
                        log_error("%s: line too long", origin);
                        r = -EINVAL;
                        break;
                }
                char *s = trim(line);
                if (s[0] == '\0' || s[0] == '#')
                        continue;
                char *eq = strchr(s, '=');
                if (!eq) {
                        log_error("%s: expected \"name = value\"", origin);
                        r = -EINVAL;
                        break;
                }
                *eq = '\0';
                const char *key = trim(s), *value = trim(eq + 1);
                const struct setting *st = setting_find(key);
                if (!st) {
                        log_error("%s: unknown setting \"%s\"", origin, key);
                        r = -EINVAL;
                        break;
                }
                r = setting_apply(c, st, value, origin);
                if (r < 0)
                        break;
        }
        if (r == 0 && ferror(f))
                r = log_errno(-EIO, "Cannot read the configuration file %s", path);
        fclose(f);
        return r;
}

static void usage(void)
{
        printf("Usage: timerd [OPTIONS]\n"
               "The timerd timer service.\n\n"
               "  --config FILE          settings as \"name = value\" lines, names as the options\n"
               "                         below; the command line wins; SIGHUP re-reads it;\n"
               "                         --config=-FILE: a missing FILE is no error\n"
               "  --socket PATH          listen here (default ./run/io.timerd, or $TIMERD_SOCKET;\n"
               "                         ignored when systemd passes a socket)\n"
               "  --state-dir DIR        retained timers live here (default ./state)\n"
               "  --backend NAME         auto, io_uring or timerfd (default auto)\n"
               "  --clock real|virtual   virtual: clocks that move only when io.timerd.Test moves\n"
               "                         them, for testing programs that use timerd (default\n"
               "                         real)\n"
               "  --user NAME            started as root, run as this user (keeps only\n"
               "                         CAP_KILL and CAP_WAKE_ALARM)\n"
               "  --log-level LEVEL      err, warning, notice, info, debug (default info)\n"
               "  --shutdown-grace USEC  how long teardown may take (default 5000000)\n"
               "  --max-message BYTES    largest request (default 65536)\n"
               "  --max-output BYTES     replies buffered for a client that does not read\n"
               "                         before it is disconnected (default 67108864)\n"
               "  --max-connections N    (default 4096)\n"
               "  --max-connections-per-uid N  (default 1024)\n"
               "  --admin-group GROUP    its members (primary or supplementary group of the\n"
               "                         client when it connected) list, control and see the\n"
               "                         Status of all owners, like root (default: none)\n"
               "  --reserved-connections N  kept for root and the admin group: other uids\n"
               "                         share the rest\n"
               "                         (default 16, at most half of --max-connections)\n"
               "  --idle-timeout USEC    close a connection with no call, parked request,\n"
               "                         subscription or transient timer (default 300000000)\n"
               "  --partial-timeout USEC close a connection whose message is not finished this\n"
               "                         long after its first byte (default 10000000)\n"
               "  --max-timers N         timers in all, counting those of closed connections\n"
               "                         not freed yet (default 8388608)\n"
               "  --reserved-timers N    of them, kept for root and the admin group: other\n"
               "                         uids are refused when the live timers reach the rest\n"
               "                         (default 65536, at most half of --max-timers)\n"
               "  --max-timers-per-owner N  (default 4194304)\n"
               "  --subuid-file FILE     a uid in a person's subordinate range there counts\n"
               "                         against the person's per-uid and per-owner limits\n"
               "                         (default /etc/subuid; a missing file: none)\n"
               "  --min-cadence USEC     the shortest cadence a timer may declare (default 1000)\n"
               "  --max-intents N        requests queued for one loop iteration (default 4096);\n"
               "                         past it a request is answered Busy\n"
               "  --max-parked-per-connection N  parked Waits and Sleeps (default 1024)\n"
               "  --max-parked-per-owner N       … of one person (default 65536)\n"
               "  --list-page N          timers in one List reply at most, when the call names\n"
               "                         no smaller limit (default 1000)\n"
               "  -h, --help             this text\n"
               "      --version          the version\n");
}

enum config_parse_result config_parse_args(struct config *c, int argc, char **argv)
{
        enum { OPT_CONFIG = 256, OPT_VERSION, OPT_SETTING };
        struct option options[sizeof(settings) / sizeof(settings[0]) + 4];
        size_t n = 0;
        int opt, index = 0;

        for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++)
                options[n++] =
                    (struct option){settings[i].name, required_argument, NULL, OPT_SETTING};
        options[n++] = (struct option){"config", required_argument, NULL, OPT_CONFIG};
        options[n++] = (struct option){"help", no_argument, NULL, 'h'};
        options[n++] = (struct option){"version", no_argument, NULL, OPT_VERSION};
        options[n] = (struct option){0};

        /* The config file first, wherever --config stands: the rest of the line wins. A leading
         * '-' makes a missing file no error, as systemd's EnvironmentFile=-: the unit names the
         * file whether or not the administrator made one. */
        optind = 1;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, ":h", options, &index)) >= 0)
                if (opt == OPT_CONFIG) {
                        c->config_missing_ok = optarg[0] == '-';
                        const char *path = optarg + (c->config_missing_ok ? 1 : 0);
                        if (path[0] == '\0' || strlen(path) >= sizeof(c->config_path)) {
                                log_error("--config: not a file name: \"%s\"", optarg);
                                return CONFIG_EXIT_USAGE;
                        }
                        memcpy(c->config_path, path, strlen(path) + 1);
                }
        if (c->config_path[0] && config_parse_file(c, c->config_path, c->config_missing_ok) < 0)
                return CONFIG_EXIT_USAGE;

        const char *env = getenv("TIMERD_SOCKET");
        if (env && env[0] && setting_apply(c, setting_find("socket"), env, "$TIMERD_SOCKET") < 0)
                return CONFIG_EXIT_USAGE;

        /* getopt's own messages would have no priority prefix: journald would file them at info. */
        optind = 1;
        while ((opt = getopt_long(argc, argv, ":h", options, &index)) >= 0) {
                char origin[64];
                switch (opt) {
                case OPT_SETTING:
                        snprintf(origin, sizeof(origin), "--%s", options[index].name);
                        if (setting_apply(c, &settings[index], optarg, origin) < 0)
                                return CONFIG_EXIT_USAGE;
                        break;
                case OPT_CONFIG:
                        break;
                case 'h':
                        usage();
                        return CONFIG_EXIT_OK;
                case OPT_VERSION:
                        printf("timerd %s\n", TIMERD_VERSION);
                        return CONFIG_EXIT_OK;
                case ':':
                        log_error("%s needs a value (see timerd --help)", argv[optind - 1]);
                        return CONFIG_EXIT_USAGE;
                default:
                        log_error("Unknown option %s (see timerd --help)", argv[optind - 1]);
                        return CONFIG_EXIT_USAGE;
                }
        }
        if (optind < argc) {
                log_error("Unexpected argument: %s", argv[optind]);
                return CONFIG_EXIT_USAGE;
        }
        return CONFIG_RUN;
}

int config_reload(struct config *c, int argc, char **argv)
{
        struct config fresh;

        if (!c->config_path[0]) {
                log_info("No configuration file to reload (--config not given)");
                return 0;
        }
        config_defaults(&fresh);
        if (config_parse_args(&fresh, argc, argv) != CONFIG_RUN) {
                log_warning("Keeping the current configuration: %s is not valid", c->config_path);
                return -EINVAL;
        }
        for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
                const struct setting *st = &settings[i];
                void *old = (char *)c + st->offset, *new = (char *)&fresh + st->offset;
                if (memcmp(old, new, st->size) == 0)
                        continue;
                if (st->reloadable) {
                        memcpy(old, new, st->size);
                        log_info("Reloaded %s", st->name);
                } else
                        log_notice("%s changed; it takes effect at the next start", st->name);
        }
        return 0;
}
