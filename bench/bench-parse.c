/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Parsing in process, no service: the cost of reading a Complete call (what the service reads
 * most) and of decoding a Wait firing (what libtimerd reads most) with the tokenizer
 * (varlink/tokens.h: the service reads a call's view of them, libtimerd decodes a reply from them),
 * beside json-c's own strict tokener and beside the tree json.c builds from the tokens. CPU ns/op
 * (the thread's CPU time) and allocations/op (malloc, calloc, realloc and so newlocale, counted by
 * interposing them); the variants run interleaved, ROUNDS times, and each reports its median round,
 * since the machine is shared. Prints rows of bench/RESULTS.md's table.
 */

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/wire.h"
#include "varlink/json.h"
#include "varlink/message.h"
#include "varlink/names.h"

#define ROUNDS 7
#define OPS    50000

static const char complete_call[] = "{\"method\":\"io.timerd.Timer.Complete\",\"parameters\":{"
                                    "\"token\":{\"name\":\"backup-nightly\","
                                    "\"generation\":3,\"run\":17},\"result\":{\"exit_code\":0}}}";
/* As service/waits.c writes a firing. */
static const char firing_reply[] =
    "{\"parameters\":{\"firing\":{\"token\":{\"name\":\"backup-nightly\",\"generation\":3,\"run\":"
    "17},\"clock\":\"monotonic\",\"deadline_usec\":1234567890123,\"fired_usec\":1234567890456,"
    "\"overruns\":0}},\"continues\":true}";

/* Allocations, counted for every caller in the process (json-c's, libc's newlocale too). */
static unsigned long n_allocations;

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);

void *malloc(size_t size)
{
        n_allocations++;
        return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
        n_allocations++;
        return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
        n_allocations++;
        return __libc_realloc(p, size);
}

static struct vl_parser parser;
static volatile uint64_t sink;

_Noreturn static void die(const char *what)
{
        fprintf(stderr, "bench-parse: %s\n", what);
        exit(1);
}

static json_object *json_c_parse(const char *text)
{
        json_tokener *tok = json_tokener_new();
        json_object *v;

        if (!tok)
                die("json_tokener_new");
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        v = json_tokener_parse_ex(tok, text, (int)strlen(text));
        json_tokener_free(tok);
        if (!v)
                die("json-c refused the text");
        return v;
}

/* The call as the service reads it: the method and the token's fields. */
static void call_json_c(void)
{
        json_object *root = json_c_parse(complete_call), *parameters, *token;
        const char *method, *name;
        uint64_t run;

        if (vl_get_string(root, "method", &method) < 0 ||
            vl_get_object(root, "parameters", &parameters) < 0 ||
            vl_get_object(parameters, "token", &token) < 0 ||
            vl_get_string(token, "name", &name) < 0 || vl_get_u64(token, "run", &run) < 0)
                die("call");
        sink += run + (uint64_t)method[0] + (uint64_t)name[0];
        json_object_put(root);
}

/* The tree json.c builds from the tokens, as the service read a call before the view. */
static void call_tree(void)
{
        json_object *root, *parameters, *token;
        const char *method, *name;
        uint64_t run;

        if (vl_json_parse(&parser, complete_call, sizeof(complete_call) - 1, 16, &root) < 0)
                die("call");
        if (vl_get_string(root, "method", &method) < 0 ||
            vl_get_object(root, "parameters", &parameters) < 0 ||
            vl_get_object(parameters, "token", &token) < 0 ||
            vl_get_string(token, "name", &name) < 0 || vl_get_u64(token, "run", &run) < 0)
                die("call");
        sink += run + (uint64_t)method[0] + (uint64_t)name[0];
        json_object_put(root);
}

/* The service's path: the call read in place (varlink/view.h). */
static void call_tokens(void)
{
        struct vl_view token, v;
        struct vl_call c;
        const char *name;
        uint64_t run;

        if (vl_call_parse_with(&parser, complete_call, sizeof(complete_call) - 1, 16, &c) < 0 ||
            vl_view_member(&c.parameters, "token", &token) < 0 ||
            vl_view_member(&token, "name", &v) < 0 || vl_view_string(&v, &name) < 0 ||
            vl_view_member(&token, "run", &v) < 0 || vl_view_u64(&v, &run) < 0)
                die("call");
        sink += run + (uint64_t)c.method[0] + (uint64_t)name[0];
}

/* A firing decoded from a tree, as libtimerd did before the tokens (wire.c's tree decoder). */
static void firing_from_tree(json_object *parameters, struct timerd_firing *f)
{
        json_object *firing, *token;
        const char *name, *clock;

        if (vl_get_object(parameters, "firing", &firing) < 0 ||
            vl_get_object(firing, "token", &token) < 0 || vl_get_string(token, "name", &name) < 0 ||
            strlen(name) >= sizeof(f->token.name) ||
            vl_get_u64(token, "generation", &f->token.generation) < 0 ||
            vl_get_u64(token, "run", &f->token.run) < 0 ||
            vl_get_string(firing, "clock", &clock) < 0 ||
            vl_get_u64(firing, "deadline_usec", &f->deadline_usec) < 0 ||
            vl_get_u64(firing, "fired_usec", &f->fired_usec) < 0 ||
            vl_get_u64(firing, "overruns", &f->overruns) < 0)
                die("firing");
        strcpy(f->token.name, name);
        f->clock = vl_clock_from_string(clock);
        if (vl_get_bool(firing, "catch_up", &f->catch_up) == -EINVAL)
                die("firing");
}

static void firing_json_c(void)
{
        json_object *root = json_c_parse(firing_reply), *parameters;
        struct timerd_firing f = {0};

        if (vl_get_object(root, "parameters", &parameters) < 0)
                die("firing");
        firing_from_tree(parameters, &f);
        sink += f.fired_usec;
        json_object_put(root);
}

static void firing_tree(void)
{
        struct timerd_firing f = {0};
        struct vl_reply reply;

        if (vl_reply_parse_with(&parser, firing_reply, sizeof(firing_reply) - 1, 16, &reply) < 0)
                die("firing");
        firing_from_tree(reply.parameters, &f);
        sink += f.fired_usec;
        vl_reply_done(&reply);
}

/* libtimerd's path: lib/wire.c's decoder on the reply's tokens. */
static void firing_tokens(void)
{
        struct timerd_firing f;
        struct vl_reply reply;

        if (vl_reply_tokenize(&parser, firing_reply, sizeof(firing_reply) - 1, 16, &reply) < 0 ||
            wire_reply_firing(&reply, &f) < 0)
                die("firing");
        sink += f.fired_usec;
}

struct variant {
        const char *name;
        void (*op)(void);
        double ns[ROUNDS];
        double allocations;
};

static double now_ns(void)
{
        struct timespec ts;

        /* The thread's CPU time: the machine is shared, and waiting for a CPU is not parsing. */
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return (x > y) - (x < y);
}

static double median(double *v)
{
        qsort(v, ROUNDS, sizeof(*v), by_value);
        return v[ROUNDS / 2];
}

/* The variants of one measure, interleaved round by round. */
static void measure(struct variant *v, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                unsigned long before = n_allocations;

                v[i].op(); /* warm: the parser's buffers grow once */
                before = n_allocations;
                for (int k = 0; k < 1000; k++)
                        v[i].op();
                v[i].allocations = (double)(n_allocations - before) / 1000;
        }
        for (int round = 0; round < ROUNDS; round++)
                for (size_t i = 0; i < n; i++) {
                        double start = now_ns();

                        for (int k = 0; k < OPS; k++)
                                v[i].op();
                        v[i].ns[round] = (now_ns() - start) / OPS;
                }
}

static void row(const char *what, struct variant *v)
{
        double tokens = median(v[2].ns), json_c = median(v[0].ns), tree = median(v[1].ns);

        printf("| parse (in-process) | %s: ns/op, allocations/op | tokens %.0f ns, %.1f alloc | "
               "json-c strict tokener %.0f ns, %.1f alloc; tokens → json-c tree %.0f ns, %.1f "
               "alloc | %.2f× json-c, %.2f× tree | — | (info) |\n",
               what, tokens, v[2].allocations, json_c, v[0].allocations, tree, v[1].allocations,
               tokens / json_c, tokens / tree);
}

static void cpu_model(void)
{
        char line[256];
        FILE *f = fopen("/proc/cpuinfo", "re");

        while (f && fgets(line, sizeof(line), f))
                if (strncmp(line, "model name", 10) == 0) {
                        printf("# CPU:%s", strchr(line, ':') + 1);
                        break;
                }
        if (f)
                fclose(f);
}

int main(void)
{
        struct variant call[] = {
            {"json-c", call_json_c, {0}, 0},
            {"tree", call_tree, {0}, 0},
            {"tokens", call_tokens, {0}, 0},
        };
        struct variant firing[] = {
            {"json-c", firing_json_c, {0}, 0},
            {"tree", firing_tree, {0}, 0},
            {"tokens", firing_tokens, {0}, 0},
        };

        vl_parser_init(&parser);
        cpu_model();
        printf(
            "# %d rounds of %d operations per variant, interleaved; medians of thread CPU time\n",
            ROUNDS, OPS);
        measure(call, 3);
        row("Complete call read (service)", call);
        measure(firing, 3);
        row("Wait firing decoded (libtimerd)", firing);
        vl_parser_done(&parser);
        return 0;
}
