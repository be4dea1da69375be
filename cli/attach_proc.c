/* The target process as /proc shows it: reads the files, attach_protocol.c
 * parses them. */
#include "attach_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define STATUS_MAX 16384

int attach_proc_read(pid_t pid, struct attach_target *t)
{
    char path[64], buf[STATUS_MAX];
    if (pid <= 0)
        return -ESRCH;
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? -ESRCH : -errno;
    size_t n = 0;
    int rc = 0;
    while (n < sizeof(buf) - 1) {
        ssize_t r = read(fd, buf + n, sizeof(buf) - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = errno == ESRCH ? -ESRCH : -errno; /* the process went away while we read */
            break;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    if (rc)
        return rc;
    buf[n] = '\0';
    return attach_status_parse(buf, t);
}

int attach_proc_has_jvm(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return errno == ENOENT ? -ESRCH : -errno;
    char *line = NULL;
    size_t cap = 0;
    int found = 0;
    errno = 0;
    while (!found && getline(&line, &cap, f) >= 0)
        found = attach_maps_line_is_jvm(line);
    int rc = found ? 1 : ferror(f) ? -(errno ? errno : EIO) : 0;
    free(line);
    fclose(f);
    return rc;
}
