#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

static int log_fd = 2;
static int log_quiet;

int log_open(const char *path)
{
    if (!path || !*path)
        return 0;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    log_fd = fd;
    return 0;
}

void log_close(void)
{
    if (log_fd > 2)
        close(log_fd);
    log_fd = 2;
}

void log_set_quiet(int quiet)
{
    log_quiet = quiet;
}

static void log_write_fd(int fd, const char *level, const char *fmt, va_list ap)
{
    char line[1024];
    int n = snprintf(line, sizeof(line), "vtpin: %s", level);
    if (n < 0)
        return;
    int m = vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    if (m < 0)
        return;
    size_t len = (size_t)n + (size_t)m;
    if (len > sizeof(line) - 2)
        len = sizeof(line) - 2;
    line[len++] = '\n';
    /* One write per line so lines from several threads never interleave. */
    ssize_t w = write(fd, line, len);
    (void)w;
}

static void log_write(const char *level, const char *fmt, va_list ap)
{
    log_write_fd(log_fd, level, fmt, ap);
}

void log_alert(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_write_fd(log_fd, "error: ", fmt, ap);
    va_end(ap);
    if (log_fd != 2) { /* log= may sit on the full disk too */
        va_start(ap, fmt);
        log_write_fd(2, "error: ", fmt, ap);
        va_end(ap);
    }
}

void log_info(const char *fmt, ...)
{
    if (log_quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    log_write("", fmt, ap);
    va_end(ap);
}

void log_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_write("warning: ", fmt, ap);
    va_end(ap);
}

void log_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_write("error: ", fmt, ap);
    va_end(ap);
}
