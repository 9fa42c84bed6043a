/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "proc-stats.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>

long proc_rss_kib(pid_t pid)
{
        char path[64], line[256];
        long kib = -1;

        snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
        FILE *f = fopen(path, "re");
        if (!f)
                return -1;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
                        break;
        fclose(f);
        return kib;
}

long proc_fd_count(pid_t pid)
{
        char path[64];
        long n = 0;

        snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
        DIR *d = opendir(path);
        if (!d)
                return -1;
        for (struct dirent *e; (e = readdir(d));)
                if (e->d_name[0] != '.')
                        n++;
        closedir(d);
        return n;
}

long proc_cpu_ticks(pid_t pid)
{
        char path[64], buf[1024];
        unsigned long utime, stime;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        FILE *f = fopen(path, "re");
        if (!f)
                return -1;
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        /* The command name may hold spaces and parentheses: fields count from the last ')'. */
        const char *p = strrchr(buf, ')');
        if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime,
                         &stime) != 2)
                return -1;
        return (long)(utime + stime);
}
