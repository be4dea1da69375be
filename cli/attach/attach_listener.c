/* The target JVM's attach listener: started through the .attach_pid trigger
 * file and SIGQUIT when its socket is missing, connected to (checking who
 * serves it), and one request sent and its whole reply read. */
#include "attach_listener.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "attach_proc.h"

#define NS_PER_MS 1000000LL
#define POLL_FIRST_NS (20 * NS_PER_MS)
#define POLL_MAX_NS (500 * NS_PER_MS)
#define TRIGGER_PATH_MAX 96 /* "/proc/<pid>/root/tmp/.attach_pid<pid>" */

static void note(FILE *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(FILE *log, const char *fmt, ...)
{
    if (!log)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("vtpin attach: ", log);
    vfprintf(log, fmt, ap);
    fputc('\n', log);
    va_end(ap);
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_ns(int64_t ns)
{
    struct timespec ts = {.tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
        ;
}

/* 1 socket there, 0 not (yet), -errno wrong (err says why). */
static int socket_ready(const struct attach_target *t, const char *path, char *err, size_t cap)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT)
            return 0;
        int e = errno;
        attach_say(err, cap, "%s: %s", path, strerror(e));
        return -e;
    }
    if (!S_ISSOCK(st.st_mode)) {
        attach_say(err, cap, "%s is not a socket: not HotSpot's attach listener", path);
        return -ENOTSOCK;
    }
    if (st.st_uid != t->euid) {
        /* a JVM killed with SIGKILL leaves its socket; a later process with its pid cannot replace it */
        double started = 0;
        int stale = attach_proc_started(t->pid, &started) == 0 && (double)st.st_mtime < started - 1;
        attach_say(err, cap, "refusing %s: it belongs to uid %u, not to the JVM's uid %u%s", path, (unsigned)st.st_uid,
                   (unsigned)t->euid,
                   stale ? ", and is older than the JVM: an earlier process with this pid left it, and the JVM cannot "
                           "listen there until it is removed"
                         : "");
        return -EPERM;
    }
    return 1;
}

/* Creates the trigger file in the target's cwd, else in its /tmp. 1 created
 * (path says where), 0 someone else's is there already, -errno. */
static int trigger_create(const struct attach_target *t, char path[TRIGGER_PATH_MAX], char *err, size_t cap)
{
    static const char *const where[] = {"/proc/%d/cwd/.attach_pid%d", "/proc/%d/root/tmp/.attach_pid%d"};
    int e[2] = {0, 0};
    char tried[2][TRIGGER_PATH_MAX];
    for (int i = 0; i < 2; i++) {
        snprintf(tried[i], sizeof(tried[i]), where[i], (int)t->pid, (int)t->nspid);
        int fd = open(tried[i], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0660);
        if (fd >= 0) {
            close(fd);
            memcpy(path, tried[i], TRIGGER_PATH_MAX);
            return 1;
        }
        e[i] = errno;
        if (e[i] == EEXIST) {
            memcpy(path, tried[i], TRIGGER_PATH_MAX);
            return 0;
        }
    }
    attach_say(err, cap, "cannot create the attach trigger file: %s: %s; %s: %s", tried[0], strerror(e[0]), tried[1],
               strerror(e[1]));
    return -e[1];
}

/* Waits for the socket at path: 0 there, -errno (err says why). */
static int listener_start(const struct attach_target *t, const char *path, int64_t timeout_ns, FILE *log, char *err,
                          size_t cap)
{
    int rc = attach_proc_has_jvm(t->pid);
    if (rc == 0) {
        attach_say(err, cap,
                   "process %d (%s) is not a HotSpot JVM: no libjvm.so in /proc/%d/maps; not sending it SIGQUIT, "
                   "which would stop many programs",
                   (int)t->pid, t->name, (int)t->pid);
        return -ESRCH;
    }
    if (rc < 0) /* cannot tell: SigCgt below still keeps SIGQUIT from a process that does not catch it */
        note(log, "cannot read /proc/%d/maps (%s): relying on its SIGQUIT disposition", (int)t->pid, strerror(-rc));
    char trigger[TRIGGER_PATH_MAX] = "";
    rc = trigger_create(t, trigger, err, cap);
    if (rc < 0)
        return rc;
    int created = rc == 1;
    note(log, "%s trigger file %s", created ? "created the" : "found a", trigger);

    int64_t start = now_ns(), deadline = start + timeout_ns, delay = POLL_FIRST_NS;
    int64_t signalled_at = -1;
    int signals = 0;
    for (;;) {
        int ready = socket_ready(t, path, err, cap);
        if (ready) {
            rc = ready < 0 ? ready : 0;
            if (ready > 0)
                note(log, "the attach listener is up after %lld ms", (long long)((now_ns() - start) / NS_PER_MS));
            break;
        }
        struct attach_target now = {0};
        int st = attach_proc_read(t->pid, &now);
        if (st == -ESRCH || (st == 0 && (now.state == 'Z' || now.state == 'X'))) {
            attach_say(err, cap, "process %d (%s) exited while we waited for its attach listener", (int)t->pid,
                       t->name);
            rc = -ESRCH;
            break;
        }
        int64_t n = now_ns();
        /* Signal once the process catches SIGQUIT (a JVM still starting may not
         * yet: SIGQUIT would kill it), and once more half way, like the JDK. */
        if (st == 0 && now.catches_quit && (signals == 0 || (signals == 1 && n - signalled_at >= timeout_ns / 2))) {
            if (kill(t->pid, SIGQUIT) != 0) {
                int e = errno;
                attach_say(err, cap, "cannot send SIGQUIT to process %d: %s", (int)t->pid, strerror(e));
                rc = -e;
                break;
            }
            note(log, "sent SIGQUIT to process %d", (int)t->pid);
            signals++;
            signalled_at = n;
        }
        if (n >= deadline) {
            char secs[32];
            snprintf(secs, sizeof(secs), "%.3g s", (double)timeout_ns / 1e9);
            if (signals == 0)
                attach_say(
                    err, cap,
                    "process %d (%s) does not handle SIGQUIT, so it is not a HotSpot JVM (or one still starting); "
                    "waited %s and did not signal it (SIGQUIT would kill it)",
                    (int)t->pid, t->name, secs);
            else
                attach_say(err, cap,
                           "the attach listener of process %d (%s) did not start within %s (no %s): not a HotSpot JVM, "
                           "or one started with -XX:+DisableAttachMechanism",
                           (int)t->pid, t->name, secs, path);
            rc = -ETIMEDOUT;
            break;
        }
        int64_t left = deadline - n;
        sleep_ns(delay < left ? delay : left);
        delay = delay * 2 < POLL_MAX_NS ? delay * 2 : POLL_MAX_NS;
    }
    if (created && unlink(trigger) != 0 && errno != ENOENT)
        note(log, "cannot remove %s: %s", trigger, strerror(errno));
    return rc;
}

int attach_listener_connect(const struct attach_target *t, int64_t timeout_ns, FILE *log, char *err, size_t cap)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    int n = snprintf(addr.sun_path, sizeof(addr.sun_path), "/proc/%d/root/tmp/.java_pid%d", (int)t->pid, (int)t->nspid);
    if (n < 0 || (size_t)n >= sizeof(addr.sun_path)) {
        attach_say(err, cap, "socket path too long");
        return -ENAMETOOLONG;
    }
    const char *path = addr.sun_path;
    note(log, "process %d (%s) is pid %d in its namespace, uid %u gid %u", (int)t->pid, t->name, (int)t->nspid,
         (unsigned)t->euid, (unsigned)t->egid);
    int rc = socket_ready(t, path, err, cap);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        rc = listener_start(t, path, timeout_ns, log, err, cap);
        if (rc)
            return rc;
    } else {
        note(log, "the attach listener is already up: %s", path);
    }

    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        int e = errno;
        attach_say(err, cap, "socket: %s", strerror(e));
        return -e;
    }
    if (connect(fd, (const struct sockaddr *)&addr, sizeof(addr)) != 0) {
        int e = errno;
        if (e == ECONNREFUSED)
            attach_say(err, cap, "connect to %s: nobody listens (a stale socket of a JVM that is gone?)", path);
        else if (e == EACCES || e == EPERM)
            attach_say(err, cap, "permission: connect to %s: %s", path, strerror(e));
        else
            attach_say(err, cap, "connect to %s: %s", path, strerror(e));
        close(fd);
        return -e;
    }
    struct ucred peer;
    socklen_t len = sizeof(peer);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0 && peer.pid > 0 && peer.pid != t->pid) {
        attach_say(err, cap, "%s is served by process %d, not by process %d: refusing it", path, (int)peer.pid,
                   (int)t->pid);
        close(fd);
        return -EPERM;
    }
    note(log, "connected to %s", path);
    return fd;
}

static int send_all(int fd, const char *buf, size_t len)
{
    while (len) {
        ssize_t w = send(fd, buf, len, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -errno;
        buf += w;
        len -= (size_t)w;
    }
    return 0;
}

int attach_listener_execute(int fd, const char *cmd, const char *const *args, size_t nargs, int64_t timeout_ns,
                            char **reply, size_t *len, char *err, size_t cap)
{
    char req[ATTACH_REQUEST_MAX];
    *reply = NULL;
    *len = 0;
    ssize_t n = attach_request_encode(req, sizeof(req), cmd, args, nargs);
    if (n < 0) {
        if (n == -E2BIG)
            attach_say(err, cap,
                       "request too long: HotSpot takes a command of at most %d bytes and arguments of at most %d",
                       ATTACH_NAME_MAX, ATTACH_ARG_MAX);
        else
            attach_say(err, cap, "cannot encode the request: %s", strerror((int)-n));
        return (int)n;
    }
    int rc = send_all(fd, req, (size_t)n);
    if (rc) {
        attach_say(err, cap, "sending the '%s' request: %s", cmd, strerror(-rc));
        return rc;
    }

    size_t used = 0, size = 4096;
    char *buf = malloc(size);
    if (!buf) {
        attach_say(err, cap, "out of memory");
        return -ENOMEM;
    }
    int64_t deadline = now_ns() + timeout_ns;
    for (;;) {
        if (size - used < 2) {
            if (size >= ATTACH_REPLY_MAX) {
                attach_say(err, cap, "the reply is longer than %u bytes", ATTACH_REPLY_MAX);
                rc = -EMSGSIZE;
                goto cleanup;
            }
            char *bigger = realloc(buf, size * 2);
            if (!bigger) {
                attach_say(err, cap, "out of memory");
                rc = -ENOMEM;
                goto cleanup;
            }
            buf = bigger;
            size *= 2;
        }
        int64_t left = deadline - now_ns();
        if (left <= 0) {
            attach_say(err, cap,
                       "no complete reply to '%s' within %.3g s (the command may still be running in the JVM)", cmd,
                       (double)timeout_ns / 1e9);
            rc = -ETIMEDOUT;
            goto cleanup;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int64_t ms = (left + NS_PER_MS - 1) / NS_PER_MS;
        int pr = poll(&p, 1, ms > INT_MAX ? INT_MAX : (int)ms);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr < 0) {
            rc = -errno;
            attach_say(err, cap, "poll: %s", strerror(-rc));
            goto cleanup;
        }
        if (pr == 0)
            continue; /* the deadline check above ends it */
        ssize_t r = read(fd, buf + used, size - used - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = -errno;
            attach_say(err, cap, "reading the reply to '%s': %s", cmd, strerror(-rc));
            goto cleanup;
        }
        if (r == 0)
            break;
        used += (size_t)r;
    }
    buf[used] = '\0';
    *reply = buf;
    *len = used;
    buf = NULL;
    rc = 0;
cleanup:
    free(buf);
    return rc;
}
