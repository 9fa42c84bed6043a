/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The main() of a fuzz target built without libFuzzer (gcc, or a clang without it): runs every
 * input named on the command line once, files or directories of files, in name order, so that the
 * seed corpus and every kept crash replay in each build. A crash or a failed check aborts, like
 * under libFuzzer; an empty corpus is an error, since then nothing was tested.
 */

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
        FILE *f = fopen(path, "re");
        if (!f) {
                fprintf(stderr, "%s: %s\n", path, strerror(errno));
                return -errno;
        }
        uint8_t *data = NULL;
        size_t size = 0, cap = 0;
        for (;;) {
                if (size == cap) {
                        cap = cap ? cap * 2 : 4096;
                        uint8_t *grown = realloc(data, cap);
                        if (!grown) {
                                free(data);
                                fclose(f);
                                return -ENOMEM;
                        }
                        data = grown;
                }
                size_t n = fread(data + size, 1, cap - size, f);
                if (n == 0)
                        break;
                size += n;
        }
        int r = ferror(f) ? -EIO : 0;
        fclose(f);
        if (r == 0)
                LLVMFuzzerTestOneInput(data, size);
        free(data);
        return r;
}

static int compare_names(const void *a, const void *b)
{
        return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Runs the regular files of dir in name order; returns how many ran, or -errno. */
static long run_directory(const char *dir)
{
        DIR *d = opendir(dir);
        if (!d)
                return -errno;
        char **names = NULL;
        size_t n = 0;
        struct dirent *e;
        while ((e = readdir(d))) {
                if (e->d_name[0] == '.')
                        continue;
                char **grown = realloc(names, (n + 1) * sizeof(*names));
                if (!grown || asprintf(&grown[n], "%s/%s", dir, e->d_name) < 0) {
                        closedir(d);
                        return -ENOMEM;
                }
                names = grown;
                n++;
        }
        closedir(d);
        qsort(names, n, sizeof(*names), compare_names);

        long ran = 0;
        for (size_t i = 0; i < n; i++) {
                struct stat st;
                if (ran >= 0 && stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
                        int r = run_file(names[i]);
                        ran = r < 0 ? r : ran + 1;
                }
                free(names[i]);
        }
        free(names);
        return ran;
}

int main(int argc, char **argv)
{
        long total = 0;

        for (int i = 1; i < argc; i++) {
                struct stat st;
                long r;
                if (stat(argv[i], &st) < 0) {
                        fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
                        return EXIT_FAILURE;
                }
                r = S_ISDIR(st.st_mode) ? run_directory(argv[i]) : run_file(argv[i]) == 0 ? 1 : -1;
                if (r < 0) {
                        fprintf(stderr, "%s: cannot run\n", argv[i]);
                        return EXIT_FAILURE;
                }
                total += r;
        }
        if (total == 0) {
                fprintf(stderr, "no inputs\n");
                return EXIT_FAILURE;
        }
        printf("%ld inputs replayed\n", total);
        return EXIT_SUCCESS;
}
