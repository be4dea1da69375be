#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/path_trust.h"

static int log_fd = 2;
static int log_quiet;
static char log_path[4096];
/* log= could not be written (a full disk, /dev/full): said once on stderr,
 * and from then on the messages go to stderr. */
static _Atomic int log_broken;

int log_open(const char *path)
{
    if (!path || !*path)
        return 0;
    int fd = path_trust_open_own_file(path, O_APPEND, 0600); /* appended to: an older log keeps its mode */
    if (fd < 0)
        return fd;
    log_fd = fd;
    snprintf(log_path, sizeof(log_path), "%s", path);
    atomic_store(&log_broken, 0);
    return 0;
}

void log_close(void)
{
    if (log_fd > 2)
        close(log_fd);
    log_fd = 2;
    atomic_store(&log_broken, 0);
}

/* Where messages go now: log=, or stderr once log= failed. */
static int current_fd(void)
{
    return atomic_load_explicit(&log_broken, memory_order_relaxed) ? 2 : log_fd;
}

void log_set_quiet(int quiet)
{
    log_quiet = quiet;
}

/* text[0..len) into out[cap] with each control character (a path in an option may hold an escape
 * sequence that would drive the terminal of whoever reads the JVM's stderr) written as \xNN; the
 * length written, at most cap. */
static size_t escape_controls(const char *text, size_t len, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < len && o < cap; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c >= 0x20 && c != 0x7f) {
            out[o++] = (char)c;
        } else if (cap - o >= 4) {
            static const char hex[] = "0123456789abcdef";
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        } else {
            break;
        }
    }
    return o;
}

static void log_write_fd(int fd, const char *level, const char *fmt, va_list ap)
{
    char text[1024], line[1024];
    int n = snprintf(line, sizeof(line), "vtpin: %s", level);
    if (n < 0)
        return;
    int m = vsnprintf(text, sizeof(text), fmt, ap);
    if (m < 0)
        return;
    size_t tlen = (size_t)m < sizeof(text) ? (size_t)m : sizeof(text) - 1;
    size_t len = (size_t)n + escape_controls(text, tlen, line + n, sizeof(line) - 2 - (size_t)n);
    line[len++] = '\n';
    /* One write per line so lines from several threads never interleave. */
    ssize_t w = write(fd, line, len);
    if ((w < 0 || (size_t)w != len) && fd != 2 && fd == log_fd) {
        int e = w < 0 ? errno : ENOSPC;
        if (!atomic_exchange(&log_broken, 1)) {
            char said[4200];
            int n2 = snprintf(said, sizeof(said),
                              "vtpin: error: cannot write the log %s: %s; vtpin's messages go to stderr from now on\n",
                              log_path, strerror(e));
            if (n2 > 0) {
                w = write(2, said, (size_t)n2 < sizeof(said) ? (size_t)n2 : sizeof(said) - 1);
                (void)w;
            }
        }
        w = write(2, line, len); /* this one too: nothing lost unsaid */
        (void)w;
    }
}

static void log_write(const char *level, const char *fmt, va_list ap)
{
    log_write_fd(current_fd(), level, fmt, ap);
}

/* In log= and on stderr, once each (once in all without log=). */
static void log_both(const char *level, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    log_write_fd(current_fd(), level, fmt, ap);
    if (current_fd() != 2) /* log= may sit on the full disk too */
        log_write_fd(2, level, fmt, again);
    va_end(again);
}

void log_alert(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_both("error: ", fmt, ap);
    va_end(ap);
}

void log_tell(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_both("warning: ", fmt, ap);
    va_end(ap);
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
