/* libmicrohttpd in "external epoll" mode (MHD_USE_EPOLL without an internal
 * thread): MHD keeps its own epoll set for its sockets, and that set's fd sits
 * in the collector's epoll loop; when it is readable, or at the collector's
 * tick (for MHD's connection timeouts), the loop calls MHD_run, which does
 * what is ready without blocking. Why not MHD's own thread: the metrics read
 * the JVMs, occupancy and pin totals, which the loop changes with every
 * event; answering on the loop's thread sees them between two events, always
 * consistent, with no lock and no snapshot copy, and the loop is never
 * blocked by a slow scraper (MHD sends without blocking, a scrape costs one
 * render bounded by the JVM, carrier and site caps). */
#include "metrics_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clog.h"

#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define MAX_CONNECTIONS 32
#define CONNECTION_TIMEOUT_S 10
#define RUNS_WHEN_BUSY 4

struct metrics_http {
    struct MHD_Daemon *daemon;
    int listen_fd; /* MHD closes it when it stops */
    int epoll_fd;
    uint16_t port;
    metrics_http_render render;
    void *arg;
};

static int is_loopback(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
    const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
    if (IN6_IS_ADDR_V4MAPPED(a))
        return a->s6_addr[12] == 127;
    return IN6_IS_ADDR_LOOPBACK(a);
}

int metrics_http_parse_addr(const char *text, int listen_any, struct sockaddr_storage *addr, socklen_t *addrlen,
                            char *err, size_t errlen)
{
    char host[128];
    const char *colon = strrchr(text, ':');
    if (!colon || colon == text || (size_t)(colon - text) >= sizeof(host)) {
        snprintf(err, errlen, "'%s' is not HOST:PORT (e.g. 127.0.0.1:9400)", text);
        return -EINVAL;
    }
    memcpy(host, text, (size_t)(colon - text));
    host[colon - text] = '\0';
    char *end;
    errno = 0;
    unsigned long port = strtoul(colon + 1, &end, 10);
    if (!colon[1] || *end || errno || port > 65535 || colon[1] == '-' || colon[1] == '+') {
        snprintf(err, errlen, "'%s': the port must be a number from 0 to 65535", text);
        return -EINVAL;
    }
    memset(addr, 0, sizeof(*addr));
    size_t hl = strlen(host);
    if (host[0] == '[' && hl > 2 && host[hl - 1] == ']') {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)addr;
        host[hl - 1] = '\0';
        if (inet_pton(AF_INET6, host + 1, &s6->sin6_addr) != 1) {
            snprintf(err, errlen, "'%s': '%s' is not an IPv6 address", text, host + 1);
            return -EINVAL;
        }
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)port);
        *addrlen = sizeof(*s6);
    } else {
        struct sockaddr_in *s4 = (struct sockaddr_in *)addr;
        if (strcmp(host, "localhost") == 0)
            s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        else if (inet_pton(AF_INET, host, &s4->sin_addr) != 1) {
            snprintf(err, errlen, "'%s': '%s' is not an IPv4 address, [IPv6 address] or localhost", text, host);
            return -EINVAL;
        }
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)port);
        *addrlen = sizeof(*s4);
    }
    if (!listen_any && !is_loopback(addr)) {
        snprintf(err, errlen,
                 "%s is not a loopback address; the metrics show JVM pids and class names to whoever connects: "
                 "add --metrics-listen-any to serve them beyond this host",
                 host);
        return -EACCES;
    }
    return 0;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char line[512];
    vsnprintf(line, sizeof(line), fmt, ap);
    line[strcspn(line, "\n")] = '\0';
    clog_debug("metrics http: %s", line);
}

static enum MHD_Result answer_text(struct MHD_Connection *conn, unsigned status, const char *text)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    enum MHD_Result rc = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    (void)version;
    (void)upload_data;
    (void)upload_data_size;
    (void)con_cls;
    struct metrics_http *h = cls;
    if (strcmp(url, "/metrics") != 0)
        return answer_text(conn, MHD_HTTP_NOT_FOUND, "vtpin collector: the metrics are at /metrics\n");
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return answer_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "GET or HEAD only\n");
    char *body = NULL;
    size_t len = 0;
    int rc = h->render(h->arg, &body, &len);
    if (rc) {
        clog_error("metrics: %s", strerror(-rc));
        return answer_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "vtpin collector: cannot render the metrics\n");
    }
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, CONTENT_TYPE);
    enum MHD_Result q = MHD_queue_response(conn, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return q;
}

/* A listening socket on addr: our own, so a bind error can say what went wrong. */
static int listen_on(const struct sockaddr *addr, socklen_t addrlen, char *err, size_t errlen)
{
    int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1, rc;
    char where[INET6_ADDRSTRLEN + 16] = "?";
    if (addr->sa_family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)addr;
        inet_ntop(AF_INET, &s4->sin_addr, where, sizeof(where));
        snprintf(where + strlen(where), sizeof(where) - strlen(where), ":%u", ntohs(s4->sin_port));
    } else {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)addr;
        where[0] = '[';
        inet_ntop(AF_INET6, &s6->sin6_addr, where + 1, sizeof(where) - 1);
        snprintf(where + strlen(where), sizeof(where) - strlen(where), "]:%u", ntohs(s6->sin6_port));
    }
    if (fd < 0) {
        rc = -errno;
        snprintf(err, errlen, "metrics: socket: %s", strerror(-rc));
        return rc;
    }
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (addr->sa_family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    if (bind(fd, addr, addrlen) != 0 || listen(fd, 64) != 0) {
        rc = -errno;
        snprintf(err, errlen, "metrics: cannot listen on %s: %s", where, strerror(-rc));
        close(fd);
        return rc;
    }
    return fd;
}

int metrics_http_start(struct metrics_http **out, const struct sockaddr *addr, socklen_t addrlen,
                       metrics_http_render render, void *arg, char *err, size_t errlen)
{
    struct metrics_http *h = calloc(1, sizeof(*h));
    if (!h) {
        snprintf(err, errlen, "metrics: %s", strerror(ENOMEM));
        return -ENOMEM;
    }
    h->render = render;
    h->arg = arg;
    h->listen_fd = listen_on(addr, addrlen, err, errlen);
    if (h->listen_fd < 0) {
        int rc = h->listen_fd;
        free(h);
        return rc;
    }
    union {
        struct sockaddr sa;
        struct sockaddr_in in;
        struct sockaddr_in6 in6;
        struct sockaddr_storage ss;
    } bound;
    memset(&bound, 0, sizeof(bound));
    socklen_t blen = sizeof(bound);
    if (getsockname(h->listen_fd, &bound.sa, &blen) == 0)
        h->port = ntohs(bound.sa.sa_family == AF_INET ? bound.in.sin_port : bound.in6.sin6_port);
    h->daemon = MHD_start_daemon(
        MHD_USE_EPOLL | MHD_USE_ERROR_LOG, 0, NULL, NULL, on_request, h, MHD_OPTION_LISTEN_SOCKET,
        (MHD_socket)h->listen_fd, MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)CONNECTION_TIMEOUT_S, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_END);
    const union MHD_DaemonInfo *info = h->daemon ? MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_EPOLL_FD) : NULL;
    if (!info) {
        snprintf(err, errlen, "metrics: libmicrohttpd did not start (epoll mode unavailable?)");
        if (h->daemon)
            MHD_stop_daemon(h->daemon); /* closes the listening socket */
        else
            close(h->listen_fd);
        free(h);
        return -EIO;
    }
    h->epoll_fd = info->epoll_fd;
    *out = h;
    return 0;
}

int metrics_http_fd(const struct metrics_http *h)
{
    return h->epoll_fd;
}

uint16_t metrics_http_port(const struct metrics_http *h)
{
    return h->port;
}

void metrics_http_run(struct metrics_http *h)
{
    /* MHD may hold data it read but did not process yet (its timeout is then 0):
     * run again a few times rather than wait for the next tick */
    for (unsigned i = 0; i < RUNS_WHEN_BUSY; i++) {
        MHD_UNSIGNED_LONG_LONG timeout = 1;
        MHD_run(h->daemon);
        if (MHD_get_timeout(h->daemon, &timeout) != MHD_YES || timeout > 0)
            return;
    }
}

void metrics_http_stop(struct metrics_http *h)
{
    if (!h)
        return;
    MHD_stop_daemon(h->daemon); /* closes the listening socket it was given */
    free(h);
}
