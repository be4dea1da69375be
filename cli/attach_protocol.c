#include "attach_protocol.h"

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

#define NS_PER_MS 1000000LL
#define POLL_FIRST_NS (20 * NS_PER_MS)
#define POLL_MAX_NS (500 * NS_PER_MS)
#define STATUS_MAX 16384
#define TRIGGER_PATH_MAX 96 /* "/proc/<pid>/root/tmp/.attach_pid<pid>" */

/* ---- pure parts ---- */

static int put_string(char *buf, size_t cap, size_t *n, const char *s)
{
    size_t len = strlen(s) + 1;
    if (len > cap - *n)
        return -ENOSPC;
    memcpy(buf + *n, s, len);
    *n += len;
    return 0;
}

ssize_t attach_request_encode(char *buf, size_t cap, const char *cmd, const char *const *args, size_t nargs)
{
    if (!buf || !cmd || !*cmd || nargs > ATTACH_ARGS || (nargs && !args))
        return -EINVAL;
    if (strlen(cmd) > ATTACH_NAME_MAX)
        return -E2BIG;
    for (size_t i = 0; i < nargs; i++)
        if (args[i] && strlen(args[i]) > ATTACH_ARG_MAX)
            return -E2BIG;
    size_t n = 0;
    int rc = put_string(buf, cap, &n, ATTACH_PROTOCOL_VERSION);
    if (!rc)
        rc = put_string(buf, cap, &n, cmd);
    for (size_t i = 0; !rc && i < ATTACH_ARGS; i++)
        rc = put_string(buf, cap, &n, i < nargs && args[i] ? args[i] : "");
    return rc ? rc : (ssize_t)n;
}

/* An int at s followed only by blanks (or a CR) up to the end of the line: 0 or -EBADMSG. */
static int parse_int_line(const char *s, int *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || v < INT_MIN || v > INT_MAX)
        return -EBADMSG;
    while (*end == ' ' || *end == '\t' || *end == '\r')
        end++;
    if (*end && *end != '\n')
        return -EBADMSG;
    *out = (int)v;
    return 0;
}

int attach_reply_parse(char *text, size_t len, struct attach_reply *reply)
{
    if (!text || !len)
        return -EBADMSG;
    text[len] = '\0';
    char *nl = memchr(text, '\n', len);
    char *rest = text + len;
    if (nl) {
        *nl = '\0';
        rest = nl + 1;
    }
    int code;
    if (text[0] == ' ' || text[0] == '\t' || parse_int_line(text, &code))
        return -EBADMSG;
    reply->code = code;
    reply->text = rest;
    return 0;
}

int attach_reply_return_code(const char *text, int *rc)
{
    static const char prefix[] = "return code:";
    for (const char *line = text; line && *line;) {
        if (strncmp(line, prefix, sizeof(prefix) - 1) == 0)
            return parse_int_line(line + sizeof(prefix) - 1, rc);
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    return -ENOENT;
}

/* The rest of the line after "Key:" and blanks, or NULL when line is not key's. */
static const char *field(const char *line, const char *key)
{
    size_t n = strlen(key);
    if (strncmp(line, key, n) != 0 || line[n] != ':')
        return NULL;
    line += n + 1;
    while (*line == ' ' || *line == '\t')
        line++;
    return line;
}

/* The idx-th (0-based) unsigned number of a line, or the last when idx < 0. */
static int nth_number(const char *s, int idx, unsigned long long *out, int base)
{
    int found = 0;
    for (int i = 0;; i++) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s || *s == '\n')
            break;
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull(s, &end, base);
        if (errno || end == s || *s == '-')
            return -EBADMSG;
        if (idx < 0 || i == idx) {
            *out = v;
            found = 1;
            if (idx >= 0)
                break;
        }
        s = end;
    }
    return found ? 0 : -EBADMSG;
}

int attach_status_parse(const char *text, struct attach_target *t)
{
    memset(t, 0, sizeof(*t));
    int have_pid = 0, have_uid = 0, have_gid = 0, have_nspid = 0, have_tgid = 0;
    unsigned long long v, ign = 0, cgt = 0;
    for (const char *line = text; line && *line;) {
        const char *f;
        if ((f = field(line, "Name"))) {
            size_t n = strcspn(f, "\n");
            if (n >= sizeof(t->name))
                n = sizeof(t->name) - 1;
            memcpy(t->name, f, n);
            t->name[n] = '\0';
        } else if ((f = field(line, "State"))) {
            t->state = *f;
        } else if ((f = field(line, "Tgid"))) {
            if (!nth_number(f, 0, &v, 10) && v > 0 && v <= INT_MAX) {
                t->tgid = (pid_t)v;
                have_tgid = 1;
            }
        } else if ((f = field(line, "Pid"))) {
            if (!nth_number(f, 0, &v, 10) && v > 0 && v <= INT_MAX) {
                t->pid = (pid_t)v;
                have_pid = 1;
            }
        } else if ((f = field(line, "NSpid"))) {
            if (!nth_number(f, -1, &v, 10) && v > 0 && v <= INT_MAX) {
                t->nspid = (pid_t)v;
                have_nspid = 1;
            }
        } else if ((f = field(line, "Uid"))) {
            if (!nth_number(f, 1, &v, 10) && v <= UINT_MAX) {
                t->euid = (uid_t)v;
                have_uid = 1;
            }
        } else if ((f = field(line, "Gid"))) {
            if (!nth_number(f, 1, &v, 10) && v <= UINT_MAX) {
                t->egid = (gid_t)v;
                have_gid = 1;
            }
        } else if ((f = field(line, "SigIgn"))) {
            nth_number(f, 0, &ign, 16);
        } else if ((f = field(line, "SigCgt"))) {
            nth_number(f, 0, &cgt, 16);
        }
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    if (!have_pid || !have_uid || !have_gid)
        return -EBADMSG;
    if (!have_nspid) /* kernels before 4.1 have no NSpid: then there is one namespace */
        t->nspid = t->pid;
    if (!have_tgid)
        t->tgid = t->pid;
    unsigned long long quit = 1ULL << (SIGQUIT - 1);
    t->catches_quit = (cgt & quit) && !(ign & quit);
    return 0;
}

static int readable(const char *path)
{
    return access(path, R_OK) == 0;
}

int attach_maps_line_is_jvm(const char *line)
{
    /* "start-end perms offset dev inode   /path/libjvm.so" (maybe " (deleted)" after it) */
    const char *path = strchr(line, '/');
    if (!path)
        return 0;
    size_t len = strcspn(path, "\n");
    static const char deleted[] = " (deleted)";
    if (len >= sizeof(deleted) - 1 && strncmp(path + len - (sizeof(deleted) - 1), deleted, sizeof(deleted) - 1) == 0)
        len -= sizeof(deleted) - 1;
    static const char lib[] = "/libjvm.so";
    return len >= sizeof(lib) - 1 && strncmp(path + len - (sizeof(lib) - 1), lib, sizeof(lib) - 1) == 0;
}

int attach_agent_default(const char *exe, int (*exists)(const char *path), char *out, size_t cap)
{
    static const char *const layouts[] = {"/agent/libvtpin.so", "/../lib/vtpin/libvtpin.so"};
    const char *slash = exe ? strrchr(exe, '/') : NULL;
    if (!slash || !out || !cap)
        return -EINVAL;
    if (!exists)
        exists = readable;
    int dirlen = (int)(slash - exe);
    char tried[2 * PATH_MAX + 8] = "";
    for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
        char path[PATH_MAX];
        int n = snprintf(path, sizeof(path), "%.*s%s", dirlen, exe, layouts[i]);
        if (n < 0 || (size_t)n >= sizeof(path) || (size_t)n >= cap)
            return -ENAMETOOLONG;
        if (exists(path)) {
            memcpy(out, path, (size_t)n + 1);
            return 0;
        }
        size_t used = strlen(tried);
        snprintf(tried + used, sizeof(tried) - used, "%s%s", used ? " or " : "", path);
    }
    snprintf(out, cap, "%s", tried);
    return -ENOENT;
}

/* ---- I/O ---- */

static void say(char *err, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *err, size_t cap, const char *fmt, ...)
{
    if (!err || !cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
}

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

int attach_target_read(pid_t pid, struct attach_target *t)
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

int attach_target_has_jvm(pid_t pid)
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

int attach_become(const struct attach_target *t, struct attach_creds *saved, char *err, size_t cap)
{
    saved->euid = geteuid();
    saved->egid = getegid();
    saved->switched = 0;
    if (saved->euid == 0 && t->euid == 0)
        return 0; /* the JVM accepts root whatever its group */
    if (saved->euid == t->euid && saved->egid == t->egid)
        return 0;
    if (saved->euid != 0) {
        if (saved->euid != t->euid && t->euid == 0)
            say(err, cap,
                "permission: process %d runs as root and we are uid %u; a JVM answers only its own user "
                "(or root): run vtpin attach as root",
                (int)t->pid, (unsigned)saved->euid);
        else if (saved->euid != t->euid)
            say(err, cap,
                "permission: process %d runs as uid %u and we are uid %u; a JVM answers only its own user "
                "(or root): run vtpin attach as uid %u or as root",
                (int)t->pid, (unsigned)t->euid, (unsigned)saved->euid, (unsigned)t->euid);
        else
            say(err, cap,
                "permission: process %d runs with gid %u and we have gid %u; a JVM answers only its own uid "
                "and gid (or root): run vtpin attach with gid %u or as root",
                (int)t->pid, (unsigned)t->egid, (unsigned)saved->egid, (unsigned)t->egid);
        return -EPERM;
    }
    /* Like jattach: group first, while we still may. */
    if (saved->egid != t->egid && setegid(t->egid) != 0) {
        int e = errno;
        say(err, cap, "permission: cannot take the JVM's gid %u: %s", (unsigned)t->egid, strerror(e));
        return -e;
    }
    if (seteuid(t->euid) != 0) {
        int e = errno;
        if (setegid(saved->egid) != 0)
            abort(); /* cannot happen: we are still root here; never go on with the wrong identity */
        say(err, cap, "permission: cannot take the JVM's uid %u: %s", (unsigned)t->euid, strerror(e));
        return -e;
    }
    saved->switched = 1;
    return 0;
}

void attach_restore(const struct attach_creds *saved)
{
    if (!saved->switched)
        return;
    /* Back to root first: only root may take its group back. */
    if (seteuid(saved->euid) != 0 || setegid(saved->egid) != 0) {
        fprintf(stderr, "vtpin attach: cannot take back uid %u / gid %u: %s\n", (unsigned)saved->euid,
                (unsigned)saved->egid, strerror(errno));
        abort(); /* never go on with the wrong identity */
    }
}

/* 1 socket there, 0 not (yet), -errno wrong (err says why). */
static int socket_ready(const struct attach_target *t, const char *path, char *err, size_t cap)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT)
            return 0;
        int e = errno;
        say(err, cap, "%s: %s", path, strerror(e));
        return -e;
    }
    if (!S_ISSOCK(st.st_mode)) {
        say(err, cap, "%s is not a socket: not HotSpot's attach listener", path);
        return -ENOTSOCK;
    }
    if (st.st_uid != t->euid) {
        say(err, cap, "refusing %s: it belongs to uid %u, not to the JVM's uid %u", path, (unsigned)st.st_uid,
            (unsigned)t->euid);
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
    say(err, cap, "cannot create the attach trigger file: %s: %s; %s: %s", tried[0], strerror(e[0]), tried[1],
        strerror(e[1]));
    return -e[1];
}

/* Waits for the socket at path: 0 there, -errno (err says why). */
static int listener_start(const struct attach_target *t, const char *path, int64_t timeout_ns, FILE *log, char *err,
                          size_t cap)
{
    int rc = attach_target_has_jvm(t->pid);
    if (rc == 0) {
        say(err, cap,
            "process %d (%s) is not a HotSpot JVM: no libjvm.so in /proc/%d/maps; not sending it SIGQUIT, "
            "which would stop many programs",
            (int)t->pid, t->name, (int)t->pid);
        return -ESRCH;
    }
    if (rc < 0) /* cannot tell: SigCgt below still keeps SIGQUIT from a process that does not catch it */
        note(log, "cannot read /proc/%d/maps (%s): relying on its SIGQUIT disposition", (int)t->pid,
             strerror(-rc));
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
        int st = attach_target_read(t->pid, &now);
        if (st == -ESRCH || (st == 0 && (now.state == 'Z' || now.state == 'X'))) {
            say(err, cap, "process %d (%s) exited while we waited for its attach listener", (int)t->pid, t->name);
            rc = -ESRCH;
            break;
        }
        int64_t n = now_ns();
        /* Signal once the process catches SIGQUIT (a JVM still starting may not
         * yet: SIGQUIT would kill it), and once more half way, like the JDK. */
        if (st == 0 && now.catches_quit &&
            (signals == 0 || (signals == 1 && n - signalled_at >= timeout_ns / 2))) {
            if (kill(t->pid, SIGQUIT) != 0) {
                int e = errno;
                say(err, cap, "cannot send SIGQUIT to process %d: %s", (int)t->pid, strerror(e));
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
                say(err, cap,
                    "process %d (%s) does not handle SIGQUIT, so it is not a HotSpot JVM (or one still starting); "
                    "waited %s and did not signal it (SIGQUIT would kill it)",
                    (int)t->pid, t->name, secs);
            else
                say(err, cap,
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

int attach_connect(const struct attach_target *t, int64_t timeout_ns, FILE *log, char *err, size_t cap)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    int n = snprintf(addr.sun_path, sizeof(addr.sun_path), "/proc/%d/root/tmp/.java_pid%d", (int)t->pid,
                     (int)t->nspid);
    if (n < 0 || (size_t)n >= sizeof(addr.sun_path)) {
        say(err, cap, "socket path too long");
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
        say(err, cap, "socket: %s", strerror(e));
        return -e;
    }
    if (connect(fd, (const struct sockaddr *)&addr, sizeof(addr)) != 0) {
        int e = errno;
        if (e == ECONNREFUSED)
            say(err, cap, "connect to %s: nobody listens (a stale socket of a JVM that is gone?)", path);
        else if (e == EACCES || e == EPERM)
            say(err, cap, "permission: connect to %s: %s", path, strerror(e));
        else
            say(err, cap, "connect to %s: %s", path, strerror(e));
        close(fd);
        return -e;
    }
    struct ucred peer;
    socklen_t len = sizeof(peer);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0 && peer.pid > 0 && peer.pid != t->pid) {
        say(err, cap, "%s is served by process %d, not by process %d: refusing it", path, (int)peer.pid,
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

int attach_execute(int fd, const char *cmd, const char *const *args, size_t nargs, int64_t timeout_ns, char **reply,
                   size_t *len, char *err, size_t cap)
{
    char req[ATTACH_REQUEST_MAX];
    *reply = NULL;
    *len = 0;
    ssize_t n = attach_request_encode(req, sizeof(req), cmd, args, nargs);
    if (n < 0) {
        if (n == -E2BIG)
            say(err, cap, "request too long: HotSpot takes a command of at most %d bytes and arguments of at most %d",
                ATTACH_NAME_MAX, ATTACH_ARG_MAX);
        else
            say(err, cap, "cannot encode the request: %s", strerror((int)-n));
        return (int)n;
    }
    int rc = send_all(fd, req, (size_t)n);
    if (rc) {
        say(err, cap, "sending the '%s' request: %s", cmd, strerror(-rc));
        return rc;
    }

    size_t used = 0, size = 4096;
    char *buf = malloc(size);
    if (!buf) {
        say(err, cap, "out of memory");
        return -ENOMEM;
    }
    int64_t deadline = now_ns() + timeout_ns;
    for (;;) {
        if (size - used < 2) {
            if (size >= ATTACH_REPLY_MAX) {
                say(err, cap, "the reply is longer than %u bytes", ATTACH_REPLY_MAX);
                rc = -EMSGSIZE;
                goto cleanup;
            }
            char *bigger = realloc(buf, size * 2);
            if (!bigger) {
                say(err, cap, "out of memory");
                rc = -ENOMEM;
                goto cleanup;
            }
            buf = bigger;
            size *= 2;
        }
        int64_t left = deadline - now_ns();
        if (left <= 0) {
            say(err, cap, "no complete reply to '%s' within %.3g s (the command may still be running in the JVM)",
                cmd, (double)timeout_ns / 1e9);
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
            say(err, cap, "poll: %s", strerror(-rc));
            goto cleanup;
        }
        if (pr == 0)
            continue; /* the deadline check above ends it */
        ssize_t r = read(fd, buf + used, size - used - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = -errno;
            say(err, cap, "reading the reply to '%s': %s", cmd, strerror(-rc));
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
