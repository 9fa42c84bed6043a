/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "service/config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "service/log.h"

void config_defaults(struct config *c)
{
        *c = (struct config){
            .socket_path = "run/io.timerd",
            .state_dir = "state",
            .backend = "auto",
            .log_level = LOG_INFO,
            .max_message = 64 * 1024,
            .max_depth = 16,
            .max_output = 64 * 1024 * 1024,
            .max_connections = 4096,
            .max_timers = 8 * 1024 * 1024,
            .max_timers_per_owner = 4 * 1024 * 1024,
            .max_intents = 4096,
            .shutdown_grace_usec = 5 * 1000 * 1000,
        };
}

static int copy_string(char *dst, size_t size, const char *src, const char *what)
{
        if (strlen(src) >= size || src[0] == '\0') {
                fprintf(stderr, "timerd: %s: must be 1..%zu bytes\n", what, size - 1);
                return -EINVAL;
        }
        memcpy(dst, src, strlen(src) + 1);
        return 0;
}

static int parse_u64(const char *s, uint64_t max, uint64_t *ret, const char *what)
{
        char *end;

        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v > max) {
                fprintf(stderr, "timerd: %s: not a number in 0..%llu: %s\n", what,
                        (unsigned long long)max, s);
                return -EINVAL;
        }
        *ret = v;
        return 0;
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
        fprintf(stderr, "timerd: --log-level: one of err, warning, notice, info, debug: %s\n", s);
        return -EINVAL;
}

static void usage(void)
{
        printf("Usage: timerd [OPTIONS]\n"
               "The timerd timer service.\n\n"
               "  --socket PATH          listen here (default ./run/io.timerd, or $TIMERD_SOCKET;\n"
               "                         ignored when systemd passes a socket)\n"
               "  --state-dir DIR        retained timers live here (default ./state)\n"
               "  --backend NAME         auto, io_uring or timerfd (default auto)\n"
               "  --user NAME            started as root, run as this user (keeps only\n"
               "                         CAP_KILL and CAP_WAKE_ALARM)\n"
               "  --log-level LEVEL      err, warning, notice, info, debug (default info)\n"
               "  --shutdown-grace USEC  how long teardown may take (default 5000000)\n"
               "  --max-message BYTES    largest request (default 65536)\n"
               "  --max-connections N    (default 4096)\n"
               "  --max-timers-per-owner N  (default 4194304)\n"
               "  --max-intents N        requests queued for one loop iteration (default 4096);\n"
               "                         past it a request is answered Busy\n"
               "  -h, --help             this text\n"
               "      --version          the version\n");
}

enum config_parse_result config_parse_args(struct config *c, int argc, char **argv)
{
        enum {
                OPT_SOCKET = 256,
                OPT_STATE_DIR,
                OPT_BACKEND,
                OPT_USER,
                OPT_LOG_LEVEL,
                OPT_GRACE,
                OPT_MAX_MESSAGE,
                OPT_MAX_CONNECTIONS,
                OPT_MAX_TIMERS_PER_OWNER,
                OPT_MAX_INTENTS,
                OPT_VERSION,
        };
        static const struct option options[] = {
            {"socket", required_argument, NULL, OPT_SOCKET},
            {"state-dir", required_argument, NULL, OPT_STATE_DIR},
            {"backend", required_argument, NULL, OPT_BACKEND},
            {"user", required_argument, NULL, OPT_USER},
            {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
            {"shutdown-grace", required_argument, NULL, OPT_GRACE},
            {"max-message", required_argument, NULL, OPT_MAX_MESSAGE},
            {"max-connections", required_argument, NULL, OPT_MAX_CONNECTIONS},
            {"max-timers-per-owner", required_argument, NULL, OPT_MAX_TIMERS_PER_OWNER},
            {"max-intents", required_argument, NULL, OPT_MAX_INTENTS},
            {"help", no_argument, NULL, 'h'},
            {"version", no_argument, NULL, OPT_VERSION},
            {},
        };
        const char *env = getenv("TIMERD_SOCKET");
        uint64_t v;
        int opt, r = 0;

        if (env && env[0] &&
            copy_string(c->socket_path, sizeof(c->socket_path), env, "$TIMERD_SOCKET") < 0)
                return CONFIG_EXIT_USAGE;

        optind = 1;
        while ((opt = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                switch (opt) {
                case OPT_SOCKET:
                        r = copy_string(c->socket_path, sizeof(c->socket_path), optarg, "--socket");
                        break;
                case OPT_STATE_DIR:
                        r = copy_string(c->state_dir, sizeof(c->state_dir), optarg, "--state-dir");
                        break;
                case OPT_BACKEND:
                        if (strcmp(optarg, "auto") != 0 && strcmp(optarg, "io_uring") != 0 &&
                            strcmp(optarg, "timerfd") != 0) {
                                fprintf(stderr,
                                        "timerd: --backend: auto, io_uring or timerfd: %s\n",
                                        optarg);
                                r = -EINVAL;
                        } else
                                r = copy_string(c->backend, sizeof(c->backend), optarg,
                                                "--backend");
                        break;
                case OPT_USER:
                        r = copy_string(c->user, sizeof(c->user), optarg, "--user");
                        break;
                case OPT_LOG_LEVEL:
                        r = parse_log_level(optarg, &c->log_level);
                        break;
                case OPT_GRACE:
                        r = parse_u64(optarg, UINT64_MAX / 2, &c->shutdown_grace_usec,
                                      "--shutdown-grace");
                        break;
                case OPT_MAX_MESSAGE:
                        r = parse_u64(optarg, 64 * 1024 * 1024, &v, "--max-message");
                        if (r >= 0 && v < 256) {
                                fprintf(stderr, "timerd: --max-message: at least 256\n");
                                r = -EINVAL;
                        }
                        c->max_message = (size_t)v;
                        break;
                case OPT_MAX_CONNECTIONS:
                        r = parse_u64(optarg, UINT32_MAX, &v, "--max-connections");
                        c->max_connections = (uint32_t)v;
                        break;
                case OPT_MAX_TIMERS_PER_OWNER:
                        r = parse_u64(optarg, UINT32_MAX, &v, "--max-timers-per-owner");
                        c->max_timers_per_owner = (uint32_t)v;
                        break;
                case OPT_MAX_INTENTS:
                        r = parse_u64(optarg, 1024 * 1024, &v, "--max-intents");
                        if (r >= 0 && v == 0) {
                                fprintf(stderr, "timerd: --max-intents: at least 1\n");
                                r = -EINVAL;
                        }
                        c->max_intents = (uint32_t)v;
                        break;
                case 'h':
                        usage();
                        return CONFIG_EXIT_OK;
                case OPT_VERSION:
                        printf("timerd %s\n", TIMERD_VERSION);
                        return CONFIG_EXIT_OK;
                default:
                        return CONFIG_EXIT_USAGE;
                }
                if (r < 0)
                        return CONFIG_EXIT_USAGE;
        }
        if (optind < argc) {
                fprintf(stderr, "timerd: unexpected argument: %s\n", argv[optind]);
                return CONFIG_EXIT_USAGE;
        }
        return CONFIG_RUN;
}
