#include "remote.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/path_trust.h"
#include "common/socket_path.h"
#include "listener.h"
#include "paths.h"
#include "query.h"
#include "wire.h"

int remote_socket_path(const char *given, char *out, size_t cap)
{
    if (given) {
        if (strlen(given) >= cap || socket_path_fits(given))
            return -ENAMETOOLONG;
        strcpy(out, given);
        return 0;
    }
    return socket_path_default(out, cap);
}

/* Milliseconds left until deadline (CLOCK_MONOTONIC ns), at least 0. */
static int ms_left(int64_t deadline)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t left = deadline - ((int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec);
    return left <= 0 ? 0 : (int)((left + 999999) / 1000000);
}

/* Waits until fd is ready for events or the deadline passes: 0 or -ETIMEDOUT / -errno. */
static int wait_ready(int fd, short events, int64_t deadline)
{
    for (;;) {
        int ms = ms_left(deadline);
        if (ms == 0)
            return -ETIMEDOUT;
        struct pollfd p = {.fd = fd, .events = events};
        int n = poll(&p, 1, ms);
        if (n > 0)
            return 0;
        if (n == 0)
            return -ETIMEDOUT;
        if (errno != EINTR)
            return -errno;
    }
}

static int send_all(int fd, const uint8_t *p, size_t n, int64_t deadline)
{
    while (n > 0) {
        int rc = wait_ready(fd, POLLOUT, deadline);
        if (rc)
            return rc;
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            return -errno;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Reads exactly n bytes by the deadline: 0, -ENODATA at end of input, or -errno. */
static int recv_all(int fd, uint8_t *p, size_t n, int64_t deadline)
{
    while (n > 0) {
        int rc = wait_ready(fd, POLLIN, deadline);
        if (rc)
            return rc;
        ssize_t r = recv(fd, p, n, MSG_DONTWAIT);
        if (r == 0)
            return -ENODATA;
        if (r < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            return -errno;
        }
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

/* One reply frame by the deadline (a peer that dribbles bytes does not
 * extend it): 0 with *out, or -errno with err[] set. */
static int read_reply(int fd, const char *socket_path, int64_t deadline, WireEvent **out, char *err, size_t errlen)
{
    uint8_t header[WIRE_HEADER_LEN];
    int rc = recv_all(fd, header, sizeof(header), deadline);
    if (rc == 0) {
        uint32_t len =
            (uint32_t)header[0] | (uint32_t)header[1] << 8 | (uint32_t)header[2] << 16 | (uint32_t)header[3] << 24;
        if (len > QUERY_MAX_REPLY) {
            snprintf(err, errlen,
                     "%s: the answer announces %" PRIu32 " bytes, over the %u-byte limit: not a vtpin collector?",
                     socket_path, len, (unsigned)QUERY_MAX_REPLY);
            return -EMSGSIZE;
        }
        uint8_t *frame = malloc(WIRE_HEADER_LEN + (size_t)len);
        if (!frame) {
            snprintf(err, errlen, "out of memory");
            return -ENOMEM;
        }
        memcpy(frame, header, sizeof(header));
        rc = recv_all(fd, frame + WIRE_HEADER_LEN, len, deadline);
        if (rc == 0) {
            if (wire_decode(frame, WIRE_HEADER_LEN + (size_t)len, out) != 1) {
                rc = -EPROTO;
                snprintf(err, errlen, "%s: the answer is not a vtpin event: not a vtpin collector?", socket_path);
            }
        }
        free(frame);
        if (rc == -EPROTO)
            return rc;
    }
    if (rc == -ENODATA)
        snprintf(err, errlen, "%s: the collector closed the connection without answering", socket_path);
    else if (rc == -ETIMEDOUT)
        snprintf(err, errlen, "%s: no complete answer within the time limit (--timeout)", socket_path);
    else if (rc)
        snprintf(err, errlen, "%s: reading the answer: %s", socket_path, strerror(-rc));
    return rc == -ENODATA ? -EPROTO : rc;
}

/* Whether the collector at socket_path is this user's or root's: the socket and its
 * directory before connecting, the listening process (SO_PEERCRED) after. Another user's
 * collector (one who made /tmp/vtpin-0 first) must not answer for root's. 0, or -EPERM
 * (-ENOTDIR, -ENOTSOCK) with err saying why. */
static int refuse_foreign(const char *socket_path, int fd, char *err, size_t errlen)
{
    char why[512];
    int rc = 0;
    if (fd < 0) {
        rc = path_trust_check_socket(socket_path, geteuid(), why, sizeof(why));
        if (rc == -ENOENT)
            return 0; /* no collector there: connect says so */
    } else {
        pid_t peer_pid = 0;
        uid_t uid = 0;
        gid_t gid = 0;
        if (listener_peer(fd, &peer_pid, &uid, &gid) == 0 && !path_trust_uid(uid, geteuid(), PATH_TRUST_ROOT)) {
            snprintf(why, sizeof(why),
                     "the collector listening there (pid %ld) runs as uid %u, not as this user "
                     "(uid %u) or root",
                     (long)peer_pid, (unsigned)uid, (unsigned)geteuid());
            rc = -EPERM;
        }
    }
    if (rc)
        snprintf(err, errlen,
                 "refusing the collector at %s: %s (another user may have made it; give --socket "
                 "with a collector of yours or root's)",
                 socket_path, why);
    return rc;
}

int remote_query(const char *socket_path, int kind, int64_t pid, int timeout_ms, char **json, char *err, size_t errlen)
{
    WireEvent *reply = NULL;
    int rc;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t deadline = (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec + (int64_t)timeout_ms * 1000000LL;
    if ((rc = refuse_foreign(socket_path, -1, err, errlen)) != 0)
        return rc;
    int fd = listener_connect(socket_path, timeout_ms);
    if (fd < 0) {
        if (fd == -EAGAIN || fd == -EINPROGRESS)
            fd = -ETIMEDOUT;
        snprintf(err, errlen, "%s: %s", socket_path, strerror(-fd));
        return fd;
    }
    if ((rc = refuse_foreign(socket_path, fd, err, errlen)) != 0)
        goto cleanup;
    Vtpin__V1__Query q = VTPIN__V1__QUERY__INIT;
    q.kind = (Vtpin__V1__Query__Kind)kind;
    q.has_pid = pid != 0;
    q.pid = pid;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_QUERY;
    ev.query = &q;
    uint8_t buf[64];
    ssize_t n = wire_pack(&ev, buf, sizeof(buf), sizeof(buf));
    if (n < 0) {
        rc = (int)n;
        snprintf(err, errlen, "packing the query: %s", strerror(-rc));
        goto cleanup;
    }
    if ((rc = send_all(fd, buf, (size_t)n, deadline)) != 0) {
        snprintf(err, errlen, "%s: sending the query: %s", socket_path,
                 rc == -ETIMEDOUT ? "not accepted within the time limit (--timeout)" : strerror(-rc));
        goto cleanup;
    }
    if ((rc = read_reply(fd, socket_path, deadline, &reply, err, errlen)) != 0)
        goto cleanup;
    if (reply->body_case != VTPIN__V1__EVENT__BODY_QUERY_REPLY || !reply->query_reply->json) {
        rc = -EPROTO;
        snprintf(err, errlen, "%s: the answer is not a QueryReply", socket_path);
        goto cleanup;
    }
    *json = strdup(reply->query_reply->json);
    rc = *json ? 0 : -ENOMEM;
    if (rc)
        snprintf(err, errlen, "out of memory");
cleanup:
    wire_event_free(reply);
    close(fd);
    return rc;
}
