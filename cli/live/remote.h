/* The client side of a query: what `vtpin status` and `vtpin top` use to ask
 * a running collector. One connection per query: send Query, read one
 * QueryReply, close. */
#ifndef VTPIN_COLLECTOR_REMOTE_H
#define VTPIN_COLLECTOR_REMOTE_H

#include <stddef.h>
#include <stdint.h>

/* Asks the collector at socket_path, all of it (connect, send, the whole
 * answer) within timeout_ms: -ETIMEDOUT past it. 0 with *json (malloc'ed, NUL-terminated);
 * -ENOENT / -ECONNREFUSED when no collector listens there; -EPERM (-ENOTDIR,
 * -ENOTSOCK) when the socket, its directory or the collector listening there is
 * neither this user's nor root's (common/path_trust.h), never asked; other -errno
 * with err[] saying what went wrong. */
int remote_query(const char *socket_path, int kind, int64_t pid, int timeout_ms, char **json, char *err, size_t errlen);

/* The socket path the CLI talks to: the one given, else the default rule
 * (paths.h). 0 or -ENAMETOOLONG (also for a path too long for a socket). */
int remote_socket_path(const char *given, char *out, size_t cap);

#endif
