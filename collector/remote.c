#include "remote.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "listener.h"
#include "paths.h"
#include "query.h"
#include "wire.h"

int remote_socket_path(const char *given, char *out, size_t cap)
{
    if (given) {
        if (strlen(given) >= cap)
            return -ENAMETOOLONG;
        strcpy(out, given);
        return 0;
    }
    return collector_default_socket(out, cap);
}

static int send_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return errno == EAGAIN ? -ETIMEDOUT : -errno;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int remote_query(const char *socket_path, int kind, int64_t pid, int timeout_ms, char **json, char *err, size_t errlen)
{
    WireReader *reader = NULL;
    WireEvent *reply = NULL;
    int rc;
    int fd = listener_connect(socket_path, timeout_ms);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", socket_path, strerror(-fd));
        return fd;
    }
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
    if ((rc = send_all(fd, buf, (size_t)n)) != 0) {
        snprintf(err, errlen, "%s: sending the query: %s", socket_path, strerror(-rc));
        goto cleanup;
    }
    reader = wire_reader_new(fd, QUERY_MAX_REPLY);
    if (!reader) {
        rc = -ENOMEM;
        snprintf(err, errlen, "out of memory");
        goto cleanup;
    }
    rc = wire_reader_next(reader, &reply);
    if (rc <= 0) {
        if (rc == -EAGAIN || rc == -EWOULDBLOCK)
            rc = -ETIMEDOUT;
        if (rc == 0 || rc == -ENODATA) {
            snprintf(err, errlen, "%s: the collector closed the connection without answering", socket_path);
            rc = -EPROTO;
        } else {
            snprintf(err, errlen, "%s: reading the answer: %s", socket_path, strerror(-rc));
        }
        goto cleanup;
    }
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
    wire_reader_free(reader);
    close(fd);
    return rc;
}
