/* The target process as /proc shows it: reads the files, attach_protocol.c
 * parses them. */
#include "attach_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* The first line of path starting with key, into line[cap]: 0, or -errno (-ENOENT: none). */
static int read_line(const char *path, const char *key, char *line, size_t cap)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return -errno;
    int rc = -ENOENT;
    while (fgets(line, (int)cap, f))
        if (strncmp(line, key, strlen(key)) == 0) {
            rc = 0;
            break;
        }
    fclose(f);
    return rc;
}

int attach_proc_started(pid_t pid, double *at)
{
    char path[64], stat[1024], boot[128];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    int rc = read_line(path, "", stat, sizeof(stat));
    if (!rc)
        rc = read_line("/proc/stat", "btime ", boot, sizeof(boot));
    if (rc)
        return rc;
    /* after the command's closing parenthesis: state is field 3, starttime field 22 */
    const char *p = strrchr(stat, ')');
    unsigned long long ticks = 0;
    for (int field = 2; p && field < 22; field++)
        p = strchr(p + 1, ' ');
    long hz = sysconf(_SC_CLK_TCK);
    if (!p || sscanf(p, " %llu", &ticks) != 1 || hz <= 0)
        return -EBADMSG;
    *at = (double)strtoull(boot + 6, NULL, 10) + (double)ticks / (double)hz;
    return 0;
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

/* /proc/PID/cmdline into buf[cap]: its length, or -errno. */
static ssize_t read_cmdline(pid_t pid, char *buf, size_t cap)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t n = 0;
    while (n < cap) {
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    return (ssize_t)n;
}

int attach_proc_jvm_hints(const struct attach_target *t, char *why, size_t cap)
{
    char cmdline[8192];
    ssize_t n = read_cmdline(t->pid, cmdline, sizeof(cmdline));
    if (n < 0)
        return (int)n;
    if (attach_cmdline_is_java(cmdline, (size_t)n))
        return 1;
    /* HotSpot's perf data, /tmp/hsperfdata_<user>/<pid> (unless -XX:-UsePerfData or
     * another java.io.tmpdir): its directory is world-readable */
    char user[256] = "", perf[PATH_MAX];
    struct passwd pw, *found = NULL;
    char pwbuf[4096];
    if (getpwuid_r(t->euid, &pw, pwbuf, sizeof(pwbuf), &found) == 0 && found)
        snprintf(user, sizeof(user), "%s", found->pw_name);
    else
        snprintf(user, sizeof(user), "%u", (unsigned)t->euid);
    snprintf(perf, sizeof(perf), "/tmp/hsperfdata_%s/%d", user, (int)t->nspid);
    struct stat st;
    if (t->nspid == t->pid && stat(perf, &st) == 0)
        return 1;
    char in_root[PATH_MAX + 32];
    snprintf(in_root, sizeof(in_root), "/proc/%d/root%s", (int)t->pid, perf);
    if (stat(in_root, &st) == 0)
        return 1;
    char arg0[96];
    size_t len0 = n ? strnlen(cmdline, (size_t)n) : 0;
    snprintf(arg0, sizeof(arg0), "%.*s", (int)(len0 < sizeof(arg0) - 1 ? len0 : sizeof(arg0) - 1), cmdline);
    for (char *p = arg0; *p; p++) /* said on a terminal: its own bytes only if plain */
        if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
            *p = '?';
    if (n)
        attach_say(why, cap, "its command line (%s ...) names no java, and there is no %s", arg0, perf);
    else
        attach_say(why, cap, "it has no command line, and there is no %s", perf);
    return 0;
}
