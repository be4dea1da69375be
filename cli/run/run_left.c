#include "run_left.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int skipped(pid_t pid, const pid_t *skip, size_t n_skip)
{
    for (size_t i = 0; i < n_skip; i++)
        if (skip[i] > 0 && skip[i] == pid)
            return 1;
    return 0;
}

static int by_pid(const void *a, const void *b)
{
    pid_t x = ((const struct run_proc *)a)->pid, y = ((const struct run_proc *)b)->pid;
    return (x > y) - (x < y);
}

/* The index of pid in sorted[n], or -1. */
static long index_of(const struct run_proc *sorted, size_t n, pid_t pid)
{
    struct run_proc key = {.pid = pid};
    const struct run_proc *p = bsearch(&key, sorted, n, sizeof(*sorted), by_pid);
    return p ? p - sorted : -1;
}

size_t run_left_descendants(const struct run_proc *procs, size_t n, pid_t root, const pid_t *skip, size_t n_skip,
                            pid_t *out, size_t cap)
{
    struct run_proc *sorted = malloc((n ? n : 1) * sizeof(*sorted));
    char *in = calloc(n ? n : 1, 1); /* in the tree below root */
    size_t count = 0;
    if (!sorted || !in)
        goto cleanup;
    if (n)
        memcpy(sorted, procs, n * sizeof(*sorted));
    qsort(sorted, n, sizeof(*sorted), by_pid);
    /* a generation per pass: whose parent is in the tree joins it (a zombie
     * too: it is not running, but what it started is still ours) */
    for (int grew = 1; grew;) {
        grew = 0;
        for (size_t i = 0; i < n; i++) {
            const struct run_proc *p = &sorted[i];
            if (in[i] || p->pid == root || skipped(p->pid, skip, n_skip))
                continue;
            long parent = p->ppid == root ? -2 : index_of(sorted, n, p->ppid);
            if (parent == -1 || (parent >= 0 && !in[parent]))
                continue;
            in[i] = 1;
            grew = 1;
            if (p->state != 'Z' && count++ < cap)
                out[count - 1] = p->pid;
        }
    }
cleanup:
    free(sorted);
    free(in);
    return count;
}

size_t run_left_zombies(const struct run_proc *procs, size_t n, pid_t root, const pid_t *skip, size_t n_skip,
                        pid_t *out, size_t cap)
{
    size_t count = 0;
    for (size_t i = 0; i < n && count < cap; i++)
        if (procs[i].ppid == root && procs[i].state == 'Z' && !skipped(procs[i].pid, skip, n_skip))
            out[count++] = procs[i].pid;
    return count;
}

/* pid, ppid and state from /proc/PID/stat ("pid (comm) S ppid ..."; comm may hold ") "). */
static int read_stat(pid_t pid, struct run_proc *p)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -ENOENT; /* gone since readdir (not errno: never 0 here) */
    size_t len = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[len] = '\0';
    const char *close = strrchr(buf, ')');
    char state = 0;
    int ppid = 0;
    if (!close || sscanf(close + 1, " %c %d", &state, &ppid) != 2)
        return -EINVAL;
    *p = (struct run_proc){.pid = pid, .ppid = (pid_t)ppid, .state = state};
    return 0;
}

/* Every process in /proc now into *procs (malloc'd), *n of them. 0 or -errno. */
static int scan_procs(struct run_proc **procs, size_t *n)
{
    DIR *dir = opendir("/proc");
    if (!dir)
        return -errno;
    size_t cap = 256;
    struct run_proc *all = malloc(cap * sizeof(*all));
    *n = 0;
    for (struct dirent *e; all && (e = readdir(dir));) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        if (*n == cap) {
            struct run_proc *more = realloc(all, 2 * cap * sizeof(*all));
            if (!more) {
                free(all);
                all = NULL;
                break;
            }
            all = more;
            cap *= 2;
        }
        if (read_stat((pid_t)atoi(e->d_name), &all[*n]) == 0) /* gone since readdir: not running */
            (*n)++;
    }
    closedir(dir);
    *procs = all;
    return all ? 0 : -ENOMEM;
}

int run_left_find(pid_t self, const pid_t *skip, size_t n_skip, struct run_left *left)
{
    struct run_proc *procs = NULL;
    size_t n = 0;
    pid_t pids[RUN_LEFT_MAX];
    left->n = left->jvms = left->n_zombies = 0;
    int rc = scan_procs(&procs, &n);
    if (rc)
        return rc;
    left->n = run_left_descendants(procs, n, self, skip, n_skip, pids, RUN_LEFT_MAX);
    for (size_t i = 0; i < left->n && i < RUN_LEFT_MAX; i++)
        left->procs[i].pid = pids[i];
    left->n_zombies = run_left_zombies(procs, n, self, skip, n_skip, left->zombies, RUN_LEFT_MAX);
    free(procs);
    return 0;
}

/* 1 when pid has libjvm.so mapped. */
static int maps_jvm(pid_t pid)
{
    char path[64], line[1024];
    snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "r");
    int jvm = 0;
    while (f && !jvm && fgets(line, sizeof(line), f))
        jvm = strstr(line, "/libjvm.so") != NULL;
    if (f)
        fclose(f);
    return jvm;
}

/* /proc/PID/cmdline, its NULs as spaces, into out[cap]; "" when gone. */
static void read_cmdline(pid_t pid, char *out, size_t cap)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    size_t len = fread(out, 1, cap - 1, f);
    fclose(f);
    while (len && out[len - 1] == '\0')
        len--;
    out[len] = '\0';
    for (size_t i = 0; i < len; i++)
        if (out[i] == '\0')
            out[i] = ' ';
}

void run_left_describe(struct run_left *left)
{
    left->jvms = 0;
    for (size_t i = 0; i < left->n && i < RUN_LEFT_MAX; i++) {
        struct run_left_proc *p = &left->procs[i];
        p->jvm = maps_jvm(p->pid);
        left->jvms += p->jvm;
        read_cmdline(p->pid, p->cmdline, sizeof(p->cmdline));
    }
}
