#include "nspid.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The first and last numbers of the NSpid line of a status file: -1 when absent. */
static int read_nspid(const char *path, long *first, long *last)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return -errno;
    char line[256];
    int rc = -ENOENT;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "NSpid:", 6) != 0)
            continue;
        char *p = line + 6, *end;
        long v, n = 0;
        while ((v = strtol(p, &end, 10)), end != p) {
            if (n++ == 0)
                *first = v;
            *last = v;
            p = end;
        }
        rc = n ? 0 : -ENOENT;
        break;
    }
    fclose(f);
    return rc;
}

int nspid_host_tid(const char *proc_root, pid_t pid, int32_t ns_tid, int32_t *tid)
{
    char path[4096];
    long first = 0, last = 0;
    /* the common case: same namespace, the thread is there by that name */
    snprintf(path, sizeof(path), "%s/%ld/task/%ld/status", proc_root, (long)pid, (long)ns_tid);
    if (read_nspid(path, &first, &last) == 0 && last == ns_tid) {
        *tid = (int32_t)first;
        return 0;
    }
    snprintf(path, sizeof(path), "%s/%ld/task", proc_root, (long)pid);
    DIR *d = opendir(path);
    if (!d)
        return -errno;
    int rc = -ESRCH;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof(path), "%s/%ld/task/%s/status", proc_root, (long)pid, e->d_name);
        if (read_nspid(path, &first, &last) == 0 && last == ns_tid) {
            *tid = (int32_t)first;
            rc = 0;
            break;
        }
    }
    closedir(d);
    return rc;
}

int nspid_process(const char *proc_root, pid_t pid, int64_t *ns_pid, uint64_t *pidns)
{
    char path[4096];
    long first = 0, last = 0;
    struct stat st;
    *ns_pid = -1;
    *pidns = 0;
    snprintf(path, sizeof(path), "%s/%ld/ns/pid", proc_root, (long)pid);
    if (stat(path, &st) == 0)
        *pidns = (uint64_t)st.st_ino;
    snprintf(path, sizeof(path), "%s/%ld/status", proc_root, (long)pid);
    int rc = read_nspid(path, &first, &last);
    if (rc)
        return rc;
    *ns_pid = last;
    return 0;
}
