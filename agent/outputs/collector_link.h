/* The collector= output: the same frames as record=, streamed over a Unix
 * socket to `vtpin collector`. Owned by the writer thread: never blocks (a
 * non-blocking socket and a bounded buffer), reconnects with backoff, and
 * counts every frame it had to drop so the collector hears about it. */
#ifndef VTPIN_COLLECTOR_LINK_H
#define VTPIN_COLLECTOR_LINK_H

#include <stddef.h>
#include <stdint.h>

#include "wire.h"

struct link;

/* path NULL or "": the default socket. A collector is trusted when its socket, the socket's
 * directory and the process listening are this user's or root's, or owner's (>= 0: the
 * collector_owner= option; -1: none). NULL with *err = -ENAMETOOLONG when the path does not fit
 * a Unix socket address, or -ENOMEM. */
struct link *link_new(const char *path, size_t buffer_bytes, int64_t owner, int *err);
void link_free(struct link *l);

/* Tries to connect when disconnected and the backoff has expired.
 * Returns 1 when a new connection was just made (the caller then sends its
 * Hello and re-sends definitions), 0 otherwise. */
int link_poll_connect(struct link *l, int64_t now);
int link_connected(const struct link *l);
/* Appends one frame. 0, or -ENOTCONN / -ENOSPC when dropped (counted). */
int link_put(struct link *l, const WireEvent *ev);
/* Sends what the socket takes now. */
void link_flush(struct link *l, int64_t now);
/* At exit: keeps sending for at most timeout_ns. */
void link_drain(struct link *l, int64_t timeout_ns);

uint64_t link_dropped(const struct link *l);
uint32_t link_connections(const struct link *l); /* successful connects so far */
const char *link_path(const struct link *l);

/* The default socket, as the collector computes it:
 * $XDG_RUNTIME_DIR/vtpin/collector.sock, else /tmp/vtpin-<uid>/collector.sock. */

#endif
