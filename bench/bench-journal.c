/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Group commit of the journal: retained records per second when 1, 8 or 64 records share one
 * fdatasync, beside the anchor of a plain 4 KiB append + fdatasync on the same file system.
 * A batch of 1 is one fdatasync per record, the baseline of the ratio.
 *
 * bench-journal [DIR [COMMITS]]: runs in a scratch directory under DIR (default: the working
 * directory, the build directory under meson), COMMITS fdatasyncs per row (default 500).
 * fdatasync costs nothing on tmpfs, so the file system is printed and a tmpfs is warned about.
 */

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "service/io/journal.h"

#define ANCHOR_BLOCK 4096

static const unsigned batch_sizes[] = {1, 8, 64};

static double now_seconds(void)
{
        struct timespec ts;

        if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
                return 0;
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *fs_name(long type)
{
        switch (type) {
        case 0xEF53:
                return "ext4";
        case 0x01021994:
                return "tmpfs";
        case 0x58465342:
                return "xfs";
        case 0x9123683E:
                return "btrfs";
        case 0x794c7630:
                return "overlayfs";
        default:
                return "unknown";
        }
}

static struct journal_timer bench_timer(unsigned i)
{
        struct journal_timer t = {
            .owner = 1000 + i % 16,
            .policy = TIMERD_POLICY_AFTER_COMPLETION,
            .cadence_usec = 300000000,
            .clock = TIMERD_CLOCK_MONOTONIC,
            .lifetime = TIMERD_LIFETIME_RETAINED,
            .delivery = TIMERD_DELIVERY_NOTIFY,
            .catch_up = true,
            .generation = i + 1,
            .state = TIMERD_STATE_SCHEDULED,
            .has_deadline = true,
            .deadline_usec = 1000000000ull + i,
            .runs = i,
            .written_realtime_usec = 1700000000000000ull + i,
            .written_clock_usec = 1000000000ull,
            .boot_id = "3f2504e0-4f89-41d3-9a0c-0305e82c3301",
        };

        snprintf(t.name, sizeof(t.name), "backup-%06u", i);
        return t;
}

/* Microseconds per 4 KiB append + fdatasync. */
static int anchor(const char *dir, unsigned n, double *ret_usec)
{
        char path[4096], block[ANCHOR_BLOCK];
        double start;
        int fd;

        memset(block, 0x5a, sizeof(block));
        if (snprintf(path, sizeof(path), "%s/anchor", dir) >= (int)sizeof(path))
                return -ENAMETOOLONG;
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        start = now_seconds();
        for (unsigned i = 0; i < n; i++)
                if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block) ||
                    fdatasync(fd) < 0) {
                        int r = -errno;

                        close(fd);
                        return r;
                }
        *ret_usec = (now_seconds() - start) * 1e6 / n;
        close(fd);
        return 0;
}

static int run_row(const char *dir, unsigned batch, unsigned commits, double *ret_seconds)
{
        struct journal_open_result result;
        struct journal *j;
        char state[4096];
        double start;
        int r;

        if (snprintf(state, sizeof(state), "%s/state-%u", dir, batch) >= (int)sizeof(state))
                return -ENAMETOOLONG;
        r = journal_open(state, NULL, NULL, &result, &j);
        if (r < 0)
                return r;
        start = now_seconds();
        for (unsigned c = 0; c < commits && r >= 0; c++) {
                for (unsigned i = 0; i < batch && r >= 0; i++) {
                        struct journal_timer t = bench_timer(c * batch + i);

                        r = journal_put(j, &t);
                }
                if (r >= 0)
                        r = journal_commit(j);
        }
        *ret_seconds = now_seconds() - start;
        journal_close(j);
        return r;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        (void)st;
        (void)type;
        (void)ftw;
        return remove(path);
}

int main(int argc, char **argv)
{
        const char *parent = argc > 1 ? argv[1] : ".";
        unsigned commits = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 500;
        double anchor_usec = 0, baseline = 0;
        char dir[4096];
        struct statfs fs;
        int r, status = EXIT_SUCCESS;

        if (commits == 0) {
                fprintf(stderr, "usage: bench-journal [DIR [COMMITS > 0]]\n");
                return 2;
        }
        if (snprintf(dir, sizeof(dir), "%s/bench-journal-XXXXXX", parent) >= (int)sizeof(dir) ||
            !mkdtemp(dir) || statfs(dir, &fs) < 0) {
                perror(dir);
                return EXIT_FAILURE;
        }
        printf("journal group commit in %s (%s), %u commits per row\n", dir, fs_name(fs.f_type),
               commits);
        if (fs.f_type == 0x01021994)
                printf("warning: tmpfs ignores fdatasync; run on a disk-backed DIR to measure\n");

        r = anchor(dir, commits, &anchor_usec);
        if (r < 0) {
                fprintf(stderr, "anchor: %s\n", strerror(-r));
                status = EXIT_FAILURE;
                goto finish;
        }
        printf("anchor: 4 KiB append + fdatasync: %.1f us (the issue's estimate: ~400 us)\n\n",
               anchor_usec);
        printf("%14s %9s %9s %12s %11s %13s\n", "records/commit", "records", "seconds", "records/s",
               "us/commit", "vs 1/commit");
        for (size_t b = 0; b < sizeof(batch_sizes) / sizeof(batch_sizes[0]); b++) {
                unsigned batch = batch_sizes[b];
                double seconds, rate;

                r = run_row(dir, batch, commits, &seconds);
                if (r < 0) {
                        fprintf(stderr, "batch %u: %s\n", batch, strerror(-r));
                        status = EXIT_FAILURE;
                        goto finish;
                }
                rate = (double)batch * commits / seconds;
                if (b == 0)
                        baseline = rate;
                printf("%14u %9u %9.3f %12.0f %11.1f %12.2fx\n", batch, batch * commits, seconds,
                       rate, seconds * 1e6 / commits, rate / baseline);
        }
finish:
        if (nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) < 0) {
                perror("cleanup");
                status = EXIT_FAILURE;
        }
        return status;
}
