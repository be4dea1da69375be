/* GET /metrics over HTTP, served by libmicrohttpd inside the collector's
 * epoll loop (see metrics_http.c for why this way).
 *
 * The body comes from a callback run on the loop's thread, so it reads the
 * collector's state without locks.
 *
 * Limits: each request has 5 s from accept (or from the previous answer on a
 * keep-alive connection) to the end of its answer, then the connection is
 * closed without one; 32 connections per peer address, 64 in all, and a
 * newcomer past either closes the oldest request (never the newcomer), so
 * slow or idle clients cannot keep a scrape waiting. */
#ifndef VTPIN_COLLECTOR_METRICS_HTTP_H
#define VTPIN_COLLECTOR_METRICS_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct metrics_http;

/* Renders the exposition into *body (malloc'ed, the server frees it), *len bytes. 0 or -errno. */
typedef int (*metrics_http_render)(void *arg, char **body, size_t *len);
/* Answers GET /debug/pprof/pinned: seconds is the query's seconds= value (NULL when not given).
 * 0 with *body (malloc'ed, the server frees it), *len bytes of gzipped pprof (answered now);
 * 1: the profile is being built, under *key: the request waits, suspended, until
 * metrics_http_profile_done(key) (or, 4 s on, is answered 503); -EINVAL for a bad query, why[]
 * saying what is wrong (answered 400 with it); else -errno (500). */
typedef int (*metrics_http_profile)(void *arg, const char *seconds, uint64_t *key, uint8_t **body, size_t *len,
                                    char *why, size_t whylen);

/* Parses "HOST:PORT" (HOST: an IPv4 address, [IPv6] or localhost; PORT 0-65535,
 * 0: any free port) into *addr, *addrlen. A HOST that is not a loopback
 * address is refused unless listen_any: the metrics name the JVMs' pids and
 * classes. 0, or -EINVAL / -EACCES (not loopback) with err[] saying why. */
int metrics_http_parse_addr(const char *text, int listen_any, struct sockaddr_storage *addr, socklen_t *addrlen,
                            char *err, size_t errlen);

/* Listens on addr and starts the server (no thread: metrics_http_fd and
 * metrics_http_run drive it). 0 or -errno with err[] saying why. */
int metrics_http_start(struct metrics_http **out, const struct sockaddr *addr, socklen_t addrlen,
                       metrics_http_render render, void *arg, char *err, size_t errlen);
/* The fd to watch for EPOLLIN: readable when the server has work. */
int metrics_http_fd(const struct metrics_http *h);
/* The port it listens on (useful with port 0). */
uint16_t metrics_http_port(const struct metrics_http *h);
/* Does the work that is ready (accepts, reads, answers, timeouts); never blocks.
 * Call when the fd is readable and now and then (the collector's tick): it
 * also cuts the requests that are not answered 5 s after they began, so the
 * tick is that bound's precision. */
void metrics_http_run(struct metrics_http *h);
void metrics_http_stop(struct metrics_http *h);
/* Serves GET /debug/pprof/pinned from profile, as Go's net/http/pprof serves a profile
 * (application/octet-stream), under the limits of /metrics. */
void metrics_http_set_profile(struct metrics_http *h, metrics_http_profile profile, void *arg);
/* Profile key is built (rc 0: body[len], copied for each) or failed (rc -errno: 500): every
 * request waiting for it is answered. Returns how many. */
size_t metrics_http_profile_done(struct metrics_http *h, uint64_t key, int rc, const uint8_t *body, size_t len);
/* Requests answered 503 because their profile was not built in time. */
uint64_t metrics_http_profile_late(const struct metrics_http *h);
/* Requests waiting for profile key. */
size_t metrics_http_profile_waiting(const struct metrics_http *h, uint64_t key);

#endif
