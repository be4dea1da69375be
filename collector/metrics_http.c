/* libmicrohttpd in "external epoll" mode (MHD_USE_EPOLL without an internal
 * thread): MHD keeps its own epoll set for its sockets, and that set's fd sits
 * in the collector's epoll loop; when it is readable, or at the collector's
 * tick (for the request bound below), the loop calls MHD_run, which does
 * what is ready without blocking. Why not MHD's own thread: the metrics read
 * the JVMs, occupancy and pin totals, which the loop changes with every
 * event; answering on the loop's thread sees them between two events, always
 * consistent, with no lock and no snapshot copy, and the loop is never
 * blocked by a slow scraper (MHD sends without blocking, a scrape of
 * /metrics costs one render bounded by the JVM, carrier and site caps). A
 * profile (/debug/pprof/pinned) takes longer: its request is suspended while
 * pprof_service.c builds it in steps, and resumed with its answer.
 *
 * Slow and idle clients (issue 22): MHD alone has only an idle timeout, which
 * each trickled header line resets, and a connection limit past which it
 * stops accepting, so a few clients that hold their connections kept every
 * scrape waiting in the listen backlog. So this file keeps its own account of
 * the connections MHD holds (its connection notifications) and:
 * - bounds each request: REQUEST_S from accept, or from the end of the
 *   previous answer on a keep-alive connection, to the end of the answer;
 *   past it the connection is shut down (MHD then closes it) without an
 *   answer. Checked at every run, so within the collector's 100 ms tick.
 * - never refuses a newcomer: MHD accepts up to MHD_LIMIT, and a connection
 *   beyond PEER_SLOTS from one address, or beyond SLOTS in all, shuts down
 *   the oldest request of that address (of the address holding the most,
 *   for SLOTS). A scrape sends its request at once and is answered in the
 *   MHD_run after its accept, while MHD accepts at most 10 connections a
 *   run: under 20 newcomers can come before it, fewer than PEER_SLOTS, so
 *   it is never the oldest. The limit: a client whose request comes later
 *   than that, while more than PEER_SLOTS others of its address connect at
 *   once, is cut before it sent anything (clients cut together that
 *   reconnect after the same pause come so: every connection of theirs was
 *   cut about 1 ms after its accept, and a request 1 ms late was cut 1 time
 *   in 200 under load, 50 ms late 1 in 9). Every local client shares the one loopback
 *   address, which is why there is no refusal per address (MHD's
 *   MHD_OPTION_PER_IP_CONNECTION_LIMIT would turn the scraper away too).
 * Why not MHD's thread per connection or thread pool: it would render off
 * the loop's thread (locks or copies of the collector's state), and a slot
 * for every slow client is still a slot, so it needs the same bound. */
#include "metrics_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clog.h"

#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define REQUEST_S 5         /* a request's whole time, accept (or previous answer) to end of answer */
#define SLOTS 64            /* connections in all */
#define PEER_SLOTS 32       /* connections of one address (every local client is 127.0.0.1 or ::1) */
#define MHD_LIMIT 128       /* MHD's own limit: SLOTS and the ones shut down that MHD has not closed yet */
#define LISTEN_BACKLOG 1024 /* a full backlog drops SYNs: a scraper would wait a second for its retry */
#define RUNS_WHEN_BUSY 4
#define REPORT_NS (60 * 1000000000LL) /* at most one log line a minute about cut connections */

/* A connection MHD holds (its socket context). */
struct conn {
    struct conn *prev, *next;
    int64_t since_ns; /* accepted, or its previous answer sent: the current request's start */
    int fd;
    int cut;            /* shut down here: MHD closes it at its next run */
    int suspended;      /* its profile is being built: MHD_resume_connection gives it back */
    sa_family_t family; /* the peer's address: AF_INET (4 bytes of addr) or AF_INET6 */
    uint8_t addr[16];
};

/* A /debug/pprof/pinned request waiting, suspended, for its profile (the request's context). */
struct wait {
    struct wait *prev, *next;
    struct MHD_Connection *conn;
    int64_t since_ns;
    uint64_t key; /* the profile it waits for */
    unsigned status;
    uint8_t *body;
    size_t len;
};

struct metrics_http {
    struct MHD_Daemon *daemon;
    int listen_fd; /* MHD closes it when it stops */
    int epoll_fd;
    uint16_t port;
    metrics_http_render render;
    void *arg;
    metrics_http_profile profile; /* /debug/pprof/pinned; NULL: not served */
    void *profile_arg;
    struct conn *conns;          /* every connection MHD holds, newest first */
    struct wait *waits;          /* requests waiting for a profile, newest first */
    uint64_t profile_late;       /* of them, answered 503: not built within REQUEST_S - 1 */
    unsigned live;               /* of them, not cut */
    uint64_t cut_late, cut_slot; /* since the last report: past REQUEST_S, to make room */
    int64_t reported_ns;
};

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static struct conn *conn_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

static void wait_unlink(struct metrics_http *h, struct wait *w)
{
    if (w->prev)
        w->prev->next = w->next;
    else if (h->waits == w)
        h->waits = w->next;
    if (w->next)
        w->next->prev = w->prev;
    w->prev = w->next = NULL;
}

/* w is answered (status, and body[len] copied for a 200): the request is resumed and queues it. */
static void wait_answer(struct metrics_http *h, struct wait *w, unsigned status, const uint8_t *body, size_t len)
{
    wait_unlink(h, w);
    w->status = status;
    if (status == MHD_HTTP_OK && (w->body = malloc(len ? len : 1)) != NULL) {
        memcpy(w->body, body, len);
        w->len = len;
    } else if (status == MHD_HTTP_OK) {
        w->status = MHD_HTTP_INTERNAL_SERVER_ERROR;
    }
    struct conn *c = conn_of(w->conn);
    if (c)
        c->suspended = 0;
    MHD_resume_connection(w->conn);
}

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

static int same_peer(const struct conn *a, const struct conn *b)
{
    return a->family == b->family && memcmp(a->addr, b->addr, sizeof(a->addr)) == 0;
}

static unsigned peer_count(const struct metrics_http *h, const struct conn *c)
{
    unsigned n = 0;
    for (const struct conn *o = h->conns; o; o = o->next)
        n += !o->cut && same_peer(o, c);
    return n;
}

/* Shuts c down: the peer reads the end of the stream (or a reset if it keeps
 * sending), and MHD sees the hang-up at its next run and closes it. */
static void conn_cut(struct metrics_http *h, struct conn *c, uint64_t *counter)
{
    shutdown(c->fd, SHUT_RDWR);
    c->cut = 1;
    h->live--;
    (*counter)++;
}

/* Room for newc: over PEER_SLOTS of its address, the oldest request of that
 * address goes; over SLOTS in all, the oldest of the address holding the most. */
static void make_room(struct metrics_http *h, const struct conn *newc)
{
    unsigned mine = peer_count(h, newc);
    if (mine <= PEER_SLOTS && h->live <= SLOTS)
        return;
    struct conn *victim = NULL;
    unsigned victim_peers = 0;
    for (struct conn *c = h->conns; c; c = c->next) {
        if (c->cut || c == newc)
            continue;
        unsigned peers = mine > PEER_SLOTS ? (same_peer(c, newc) ? mine : 0) : peer_count(h, c);
        if (peers == 0 || peers < victim_peers)
            continue;
        if (!victim || peers > victim_peers || c->since_ns <= victim->since_ns) {
            victim = c;
            victim_peers = peers;
        }
    }
    if (victim)
        conn_cut(h, victim, &h->cut_slot);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    struct metrics_http *h = cls;
    if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        struct conn *c = *socket_context;
        if (!c)
            return;
        if (c->prev)
            c->prev->next = c->next;
        else
            h->conns = c->next;
        if (c->next)
            c->next->prev = c->prev;
        if (!c->cut)
            h->live--;
        free(c);
        *socket_context = NULL;
        return;
    }
    const union MHD_ConnectionInfo *fd = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *peer = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    struct conn *c = calloc(1, sizeof(*c));
    if (!c) {
        /* not accounted, so not bounded: not served */
        clog_warn("metrics http: %s: connection closed", strerror(ENOMEM));
        if (fd)
            shutdown(fd->connect_fd, SHUT_RDWR);
        return;
    }
    c->since_ns = mono_ns();
    c->fd = fd ? fd->connect_fd : -1;
    if (peer && peer->client_addr && peer->client_addr->sa_family == AF_INET) {
        c->family = AF_INET;
        memcpy(c->addr, &((const struct sockaddr_in *)peer->client_addr)->sin_addr, 4);
    } else if (peer && peer->client_addr && peer->client_addr->sa_family == AF_INET6) {
        c->family = AF_INET6;
        memcpy(c->addr, &((const struct sockaddr_in6 *)peer->client_addr)->sin6_addr, 16);
    }
    c->next = h->conns;
    if (h->conns)
        h->conns->prev = c;
    h->conns = c;
    h->live++;
    *socket_context = c;
    make_room(h, c);
}

/* A request ended (its answer sent, or it failed): the next one on this
 * keep-alive connection has REQUEST_S from now. */
static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    struct metrics_http *h = cls;
    (void)toe;
    struct wait *w = *con_cls;
    if (w) { /* a profile's request: answered, or ended before (the daemon stopping) */
        wait_unlink(h, w);
        free(w->body);
        free(w);
        *con_cls = NULL;
    }
    struct conn *c = conn_of(conn);
    if (c)
        c->since_ns = mono_ns();
}

/* Says how many connections were cut since the last such line. */
static void report_cuts(struct metrics_http *h, int64_t now)
{
    if (!h->cut_late && !h->cut_slot)
        return;
    clog_warn("metrics http: closed %" PRIu64 " connection(s) without an answer %s: %" PRIu64
              " not done within %d s, %" PRIu64 " the oldest when a newer one needed the slot (slow or idle "
              "clients on the metrics port; the next such line in a minute at the earliest)",
              h->cut_late + h->cut_slot, h->reported_ns ? "since the last such line" : "since start", h->cut_late,
              REQUEST_S, h->cut_slot);
    h->cut_late = h->cut_slot = 0;
    h->reported_ns = now;
}

/* Cuts every request older than REQUEST_S; says now and then what was cut. */
static void enforce_bound(struct metrics_http *h)
{
    int64_t now = mono_ns();
    struct wait *w = h->waits;
    while (w) { /* a profile not built in time: said, not cut (the request was fine) */
        struct wait *next = w->next;
        if (now - w->since_ns >= (REQUEST_S - 1) * 1000000000LL) {
            wait_answer(h, w, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, 0);
            h->profile_late++;
        }
        w = next;
    }
    for (struct conn *c = h->conns; c; c = c->next)
        if (!c->cut && !c->suspended && now - c->since_ns >= REQUEST_S * 1000000000LL)
            conn_cut(h, c, &h->cut_late);
    if (h->reported_ns == 0 || now - h->reported_ns >= REPORT_NS)
        report_cuts(h, now);
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

/* body[len] of gzipped pprof (malloc'ed: MHD frees it), 200. */
static enum MHD_Result answer_pprof(struct MHD_Connection *conn, uint8_t *body, size_t len)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream");
    MHD_add_response_header(r, "Content-Disposition", "attachment; filename=\"pinned\"");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    enum MHD_Result q = MHD_queue_response(conn, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return q;
}

/* The request waits for profile key, suspended: metrics_http_profile_done answers it. */
static enum MHD_Result wait_for_profile(struct metrics_http *h, struct MHD_Connection *conn, uint64_t key,
                                        void **con_cls)
{
    struct wait *w = calloc(1, sizeof(*w));
    if (!w)
        return answer_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "vtpin collector: out of memory\n");
    w->conn = conn;
    w->key = key;
    w->since_ns = mono_ns();
    w->next = h->waits;
    if (h->waits)
        h->waits->prev = w;
    h->waits = w;
    *con_cls = w;
    struct conn *c = conn_of(conn);
    if (c)
        c->suspended = 1;
    MHD_suspend_connection(conn);
    return MHD_YES;
}

/* A resumed request: its answer. */
static enum MHD_Result answer_waited(struct MHD_Connection *conn, struct wait *w)
{
    if (w->status == MHD_HTTP_OK) {
        uint8_t *body = w->body;
        w->body = NULL;
        return answer_pprof(conn, body, w->len);
    }
    return answer_text(conn, w->status,
                       w->status == MHD_HTTP_SERVICE_UNAVAILABLE
                           ? "vtpin collector: the profile was not ready in time; ask again\n"
                           : "vtpin collector: cannot render the profile\n");
}

size_t metrics_http_profile_done(struct metrics_http *h, uint64_t key, int rc, const uint8_t *body, size_t len)
{
    size_t n = 0;
    struct wait *w = h->waits;
    while (w) {
        struct wait *next = w->next;
        if (w->key == key) {
            wait_answer(h, w, rc ? MHD_HTTP_INTERNAL_SERVER_ERROR : MHD_HTTP_OK, body, len);
            n++;
        }
        w = next;
    }
    return n;
}

uint64_t metrics_http_profile_late(const struct metrics_http *h)
{
    return h->profile_late;
}

size_t metrics_http_profile_waiting(const struct metrics_http *h, uint64_t key)
{
    size_t n = 0;
    for (const struct wait *w = h->waits; w; w = w->next)
        n += w->key == key;
    return n;
}

/* GET /debug/pprof/pinned?seconds=N: gzipped pprof, or 400 with what is wrong with the query. */
static enum MHD_Result answer_profile(struct metrics_http *h, struct MHD_Connection *conn, const char *method,
                                      void **con_cls)
{
    if (*con_cls)
        return answer_waited(conn, *con_cls);
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return answer_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "GET or HEAD only\n");
    const char *seconds = NULL;
    size_t seconds_len = 0;
    if (MHD_lookup_connection_value_n(conn, MHD_GET_ARGUMENT_KIND, "seconds", strlen("seconds"), &seconds,
                                      &seconds_len) != MHD_YES)
        seconds = NULL;
    char why[256] = "";
    uint8_t *body = NULL;
    size_t len = 0;
    int rc;
    uint64_t key = 0;
    if (seconds && strlen(seconds) != seconds_len) { /* %00 decoded: as a C string it would be cut short */
        snprintf(why, sizeof(why) - 1, "seconds: a NUL byte (%%00) in the value");
        rc = -EINVAL;
    } else {
        rc = h->profile(h->profile_arg, seconds, &key, &body, &len, why, sizeof(why) - 1);
    }
    if (rc == 1)
        return wait_for_profile(h, conn, key, con_cls);
    struct MHD_Response *r;
    if (rc == -EINVAL) {
        strcat(why, "\n");
        r = MHD_create_response_from_buffer(strlen(why), why, MHD_RESPMEM_MUST_COPY);
        if (!r)
            return MHD_NO;
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
        enum MHD_Result q = MHD_queue_response(conn, MHD_HTTP_BAD_REQUEST, r);
        MHD_destroy_response(r);
        return q;
    }
    if (rc == -EAGAIN)
        return answer_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
                           "vtpin collector: too many profiles asked for at once; ask again\n");
    if (rc) {
        clog_error("metrics: /debug/pprof/pinned: %s", strerror(-rc));
        return answer_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "vtpin collector: cannot render the profile\n");
    }
    return answer_pprof(conn, body, len);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    (void)version;
    (void)upload_data;
    (void)upload_data_size;
    struct metrics_http *h = cls;
    if (h->profile && strcmp(url, "/debug/pprof/pinned") == 0)
        return answer_profile(h, conn, method, con_cls);
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
    if (bind(fd, addr, addrlen) != 0 || listen(fd, LISTEN_BACKLOG) != 0) {
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
    /* MHD's idle timeout only backs up the request bound (enforce_bound) */
    h->daemon = MHD_start_daemon(
        MHD_USE_EPOLL | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME, 0, NULL, NULL, on_request, h,
        MHD_OPTION_LISTEN_SOCKET, (MHD_socket)h->listen_fd, MHD_OPTION_CONNECTION_LIMIT, (unsigned)MHD_LIMIT,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)REQUEST_S, MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_END);
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
    /* before MHD_run: it sees the hang-ups of the requests cut now and closes them */
    enforce_bound(h);
    /* MHD may hold data it read but did not process yet (its timeout is then 0):
     * run again a few times rather than wait for the next tick */
    for (unsigned i = 0; i < RUNS_WHEN_BUSY; i++) {
        MHD_UNSIGNED_LONG_LONG timeout = 1;
        MHD_run(h->daemon);
        if (MHD_get_timeout(h->daemon, &timeout) != MHD_YES || timeout > 0)
            return;
    }
}

void metrics_http_set_profile(struct metrics_http *h, metrics_http_profile profile, void *arg)
{
    h->profile = profile;
    h->profile_arg = arg;
}

void metrics_http_stop(struct metrics_http *h)
{
    if (!h)
        return;
    report_cuts(h, mono_ns());
    while (h->waits) /* MHD stops only with no connection suspended */
        wait_answer(h, h->waits, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, 0);
    MHD_run(h->daemon);
    MHD_stop_daemon(h->daemon); /* closes the listening socket it was given; frees every struct conn */
    free(h);
}
