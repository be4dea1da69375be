#include "collector_link.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "clock.h"
#include "common/path_trust.h"
#include "common/socket_path.h"
#include "log.h"

#define BACKOFF_MIN_NS (100 * 1000000LL)
#define BACKOFF_MAX_NS (5000 * 1000000LL)
/* Connection messages: a burst of LOG_BURST (one outage: gone, no answer,
 * back), then one per LOG_EVERY_NS, saying how many were held back. */
#define LOG_BURST 3
#define LOG_EVERY_NS (30 * 1000000000LL)
/* A connection closed this soon after it was accepted was likely refused. */
#define REFUSED_WITHIN_NS (2000 * 1000000LL)

struct link {
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    int fd;
    uint8_t *buf;
    size_t len, cap;
    size_t frames; /* frames in buf, counted as dropped if the connection is lost */
    size_t sent;   /* bytes of buf already sent; a frame may be partly sent */
    int64_t next_attempt;
    int64_t backoff;
    uint64_t dropped;
    uint32_t connections;
    int warned_down;
    int warned_refused; /* said why the socket is not ours to send to */
    int64_t owner;      /* collector_owner=: also trusted; -1: none */
    int64_t connected_at;
    uint64_t conn_sent;    /* bytes the current connection took */
    int64_t log_refill_at; /* when the next message token comes */
    unsigned log_tokens, log_held;
    int log_started;
};

/* Whether a connection message may be said now; *held is set to the number
 * of messages held back since the last one said. */
static int log_due(struct link *l, int64_t now, unsigned *held)
{
    if (!l->log_started) {
        l->log_started = 1;
        l->log_tokens = LOG_BURST;
        l->log_refill_at = now + LOG_EVERY_NS;
    }
    while (now >= l->log_refill_at && l->log_tokens < LOG_BURST) {
        l->log_tokens++;
        l->log_refill_at += LOG_EVERY_NS;
    }
    if (l->log_tokens == LOG_BURST)
        l->log_refill_at = now + LOG_EVERY_NS;
    if (l->log_tokens == 0) {
        l->log_held++;
        return 0;
    }
    l->log_tokens--;
    *held = l->log_held;
    l->log_held = 0;
    return 1;
}

static const char *held_note(unsigned held, char *buf, size_t cap)
{
    if (held)
        snprintf(buf, cap, " (%u similar collector message%s held back)", held, held == 1 ? "" : "s");
    else
        buf[0] = '\0';
    return buf;
}

struct link *link_new(const char *path, size_t buffer_bytes, int64_t owner, int *err)
{
    char def[4096];
    if (!path || !*path) {
        socket_path_default(def, sizeof(def)); /* too long: refused below */
        path = def;
    }
    if (strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
        *err = -ENAMETOOLONG; /* connect() would use a cut path: another socket */
        return NULL;
    }
    struct link *l = calloc(1, sizeof(*l));
    if (!l) {
        *err = -ENOMEM;
        return NULL;
    }
    snprintf(l->path, sizeof(l->path), "%s", path);
    l->cap = buffer_bytes;
    l->buf = malloc(l->cap);
    if (!l->buf) {
        free(l);
        *err = -ENOMEM;
        return NULL;
    }
    l->fd = -1;
    l->owner = owner;
    l->backoff = BACKOFF_MIN_NS;
    return l;
}

void link_free(struct link *l)
{
    if (!l)
        return;
    if (l->fd >= 0)
        close(l->fd);
    free(l->buf);
    free(l);
}

const char *link_path(const struct link *l)
{
    return l->path;
}

uint64_t link_dropped(const struct link *l)
{
    return l ? l->dropped : 0;
}

uint32_t link_connections(const struct link *l)
{
    return l ? l->connections : 0;
}

int link_connected(const struct link *l)
{
    return l && l->fd >= 0;
}

/* Whether the collector closed the connection with bytes of ours unread:
 * Linux then marks the socket ECONNRESET (the send itself fails EPIPE
 * either way). A collector at --max-clients closes what it accepts without
 * reading it (often before the Hello is even sent); one that served us has
 * read everything we sent. */
static int closed_unread(int fd)
{
    int e = 0;
    socklen_t len = sizeof(e);
    return getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) == 0 && e == ECONNRESET;
}

/* What a failed send means for a person. */
static const char *why_lost(const struct link *l, int e, int unread, int64_t now, char *buf, size_t cap)
{
    if (e == EPIPE || e == ECONNRESET) {
        int early = now - l->connected_at < REFUSED_WITHIN_NS;
        if (unread && early)
            return "it closed the connection without reading this JVM's Hello: it is full (at its --max-clients "
                   "limit) or does not serve this user (its log says which)";
        if (unread)
            return "it closed the connection without reading what was sent (it was stopped or killed)";
        if (early)
            return "it closed the connection right after accepting it (it may be full: --max-clients)";
        return "it closed the connection: it stopped or restarted";
    }
    snprintf(buf, cap, "%s", strerror(e));
    return buf;
}

static void disconnect(struct link *l, int64_t now, int e)
{
    if (l->fd >= 0) {
        /* closed before it took a byte, or with bytes of ours unread: it never read the Hello */
        int unread = (e == EPIPE || e == ECONNRESET) && (l->conn_sent == 0 || closed_unread(l->fd));
        close(l->fd);
        l->fd = -1;
        /* Back off afresh only after a connection that lasted: one the
         * collector refuses at once must not become a connect-close loop. */
        if (now - l->connected_at >= REFUSED_WITHIN_NS)
            l->backoff = BACKOFF_MIN_NS;
        unsigned held = 0;
        char why[160], note[96];
        if (log_due(l, now, &held))
            log_warn("collector at %s went away: %s; %zu buffered events dropped, reconnecting%s", l->path,
                     why_lost(l, e, unread, now, why, sizeof(why)), l->frames, held_note(held, note, sizeof(note)));
    }
    l->dropped += l->frames;
    l->len = l->frames = l->sent = 0;
    l->next_attempt = now + l->backoff;
    l->backoff = l->backoff * 2 > BACKOFF_MAX_NS ? BACKOFF_MAX_NS : l->backoff * 2;
}

/* Says once (until a connection succeeds) why this JVM's events do not go to the socket. */
static void say_refused(struct link *l, const char *why)
{
    if (l->warned_refused)
        return;
    l->warned_refused = 1;
    char owner[64] = "";
    if (l->owner >= 0)
        snprintf(owner, sizeof(owner), " (nor collector_owner's, uid %lld)", (long long)l->owner);
    log_warn("collector at %s refused: %s%s; another user may have made it to receive this JVM's events: none are "
             "sent there (they are counted as dropped); start a collector as this user or root, give "
             "collector=PATH, or collector_owner=USER to trust the user who runs it",
             l->path, why, owner);
}

/* Whether the socket and its directory are this user's or root's (common/path_trust.h);
 * a missing one is connect()'s to report. */
static int socket_trusted(struct link *l)
{
    char why[512];
    int rc = path_trust_check_socket(l->path, geteuid(), why, sizeof(why));
    char unused[512];
    /* collector_owner=: what that user would trust (its paths or root's, in a directory no one else writes) */
    if (rc == -EPERM && l->owner >= 0 && path_trust_check_socket(l->path, (uid_t)l->owner, unused, sizeof(unused)) == 0)
        rc = 0;
    if (rc == -EPERM || rc == -ENOTDIR || rc == -ENOTSOCK) {
        say_refused(l, why);
        return 0;
    }
    return 1;
}

/* Whether the process listening on fd runs as this user, root or collector_owner: the socket may have been
 * swapped since it was checked. */
static int peer_trusted(struct link *l, int fd)
{
    struct ucred cred;
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
        return 1; /* no credentials to judge: the socket's owner was checked */
    if (path_trust_uid(cred.uid, geteuid(), PATH_TRUST_ROOT) || (l->owner >= 0 && cred.uid == (uid_t)l->owner))
        return 1;
    char why[160];
    snprintf(why, sizeof(why),
             "the collector listening there (pid %ld) runs as uid %u, not as this user (uid %u) or root",
             (long)cred.pid, (unsigned)cred.uid, (unsigned)geteuid());
    say_refused(l, why);
    return 0;
}

int link_poll_connect(struct link *l, int64_t now)
{
    if (l->fd >= 0 || now < l->next_attempt)
        return 0;
    if (!socket_trusted(l)) {
        disconnect(l, now, EPERM);
        return 0;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        disconnect(l, now, errno);
        return 0;
    }
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof(addr));
    addr.sun_family = AF_UNIX;
    memcpy(addr.sun_path, l->path, sizeof(addr.sun_path) - 1);
    /* A Unix socket connects at once or fails: EINPROGRESS does not happen
     * for AF_UNIX stream sockets except when the backlog is full (EAGAIN). */
    if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
        int e = errno;
        close(fd);
        unsigned held = 0;
        char note[96];
        if (!l->warned_down && log_due(l, now, &held)) {
            log_warn("no collector at %s (%s); events for it are counted as dropped until it answers%s", l->path,
                     strerror(e), held_note(held, note, sizeof(note)));
            l->warned_down = 1;
        }
        disconnect(l, now, e);
        return 0;
    }
    if (!peer_trusted(l, fd)) {
        close(fd);
        disconnect(l, now, EPERM);
        return 0;
    }
    l->fd = fd;
    l->warned_refused = 0;
    l->connected_at = now;
    l->conn_sent = 0;
    l->connections++;
    l->warned_down = 0;
    unsigned held = 0;
    char note[96];
    if (log_due(l, now, &held))
        log_info("connected to the collector at %s%s", l->path, held_note(held, note, sizeof(note)));
    return 1;
}

int link_put(struct link *l, const WireEvent *ev)
{
    if (l->fd < 0) {
        l->dropped++;
        return -ENOTCONN;
    }
    ssize_t n = wire_pack(ev, l->buf + l->len, l->cap - l->len, WIRE_MAX_FRAME_DEFAULT);
    if (n < 0) { /* the collector is slower than the JVM: drop, count, go on */
        l->dropped++;
        return -ENOSPC;
    }
    l->len += (size_t)n;
    l->frames++;
    return 0;
}

void link_flush(struct link *l, int64_t now)
{
    /* buf holds whole frames from offset 0; `sent` bytes of them are out. */
    while (l->fd >= 0 && l->sent < l->len) {
        ssize_t w = send(l->fd, l->buf + l->sent, l->len - l->sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                disconnect(l, now, errno);
            break;
        }
        l->sent += (size_t)w;
        l->conn_sent += (uint64_t)w;
    }
    size_t done = 0, whole = 0;
    while (done < l->sent) {
        size_t frame_len = 0;
        if (wire_frame_ready(l->buf + done, l->len - done, l->cap, &frame_len) != 1 || done + frame_len > l->sent)
            break;
        done += frame_len;
        whole++;
    }
    if (done == 0)
        return;
    memmove(l->buf, l->buf + done, l->len - done);
    l->len -= done;
    l->sent -= done;
    l->frames -= whole;
}

void link_drain(struct link *l, int64_t timeout_ns)
{
    if (l->log_held) /* at exit: what the rate limit kept quiet */
        log_info("%u more collector message%s held back (at most one per %lld s)", l->log_held,
                 l->log_held == 1 ? " was" : "s were", LOG_EVERY_NS / 1000000000LL);
    int64_t deadline = clock_mono_ns() + timeout_ns;
    while (l->fd >= 0 && l->sent < l->len) {
        int64_t now = clock_mono_ns();
        if (now >= deadline) {
            log_warn("collector did not take the last %zu events within %lld ms", l->frames,
                     (long long)(timeout_ns / 1000000));
            return;
        }
        struct pollfd p = {l->fd, POLLOUT, 0};
        poll(&p, 1, (int)((deadline - now) / 1000000 + 1));
        link_flush(l, now);
    }
}
