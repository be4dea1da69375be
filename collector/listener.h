/* The collector's Unix stream socket: one collector per socket path.
 *
 * listener_open takes an exclusive lock on PATH.lock (kept for the life of
 * the collector), so two collectors starting at once cannot both win. With
 * the lock held, an existing PATH is removed only when it is a socket nobody
 * answers on (ECONNREFUSED: a collector that died); a live collector there
 * is reported with its pid. The socket is created with mode 0600 (other modes:
 * listener_open_mode, when SO_PEERCRED checks let other users in), bound as
 * PATH.new and renamed to PATH once it listens: a client that sees PATH can
 * connect. */
#ifndef VTPIN_COLLECTOR_LISTENER_H
#define VTPIN_COLLECTOR_LISTENER_H

#include <stddef.h>
#include <sys/types.h>

struct listener {
    int fd;      /* listening, SOCK_NONBLOCK | SOCK_CLOEXEC */
    int lock_fd; /* flock on PATH.lock */
    dev_t dev;   /* of the socket file, to remove it only if it is still ours */
    ino_t ino;
    char path[108];
};

/* 0, -EADDRINUSE when a live collector holds the path (err names its pid),
 * -ENOTSOCK when PATH exists and is not a socket, or -errno; err is one line. */
int listener_open(struct listener *ln, const char *path, int backlog, char *err, size_t errlen);
/* The same with the socket file's mode (0600, 0660, 0666) and group ((gid_t)-1: left as created). */
int listener_open_mode(struct listener *ln, const char *path, int backlog, mode_t mode, gid_t group, char *err,
                       size_t errlen);
/* Closes the socket, removes the socket file if it is still the one we
 * created, releases the lock. Safe to call twice. */
void listener_close(struct listener *ln);

/* Connects to path (blocking, CLOEXEC); sets send/receive timeouts of
 * timeout_ms. Returns the fd or -errno (-ENOENT, -ECONNREFUSED: no collector). */
int listener_connect(const char *path, int timeout_ms);

/* The peer's credentials (SO_PEERCRED). 0 or -errno. */
int listener_peer(int fd, pid_t *pid, uid_t *uid, gid_t *gid);

#endif
