/* The one rule for the collector's default socket, which the collector listens on and the
 * agent and the CLI connect to:
 *   $XDG_RUNTIME_DIR/vtpin/collector.sock   when XDG_RUNTIME_DIR is set and absolute
 *   /tmp/vtpin-<euid>/collector.sock        otherwise
 * and the one limit on any socket path: what a sockaddr_un holds (107 bytes on Linux);
 * a longer path would be cut by the kernel, and the socket would be another one. */
#ifndef VTPIN_COMMON_SOCKET_PATH_H
#define VTPIN_COMMON_SOCKET_PATH_H

#include <stddef.h>

#define SOCKET_PATH_NAME "collector.sock"

/* Longest socket path a sockaddr_un holds. */
size_t socket_path_max(void);

/* 0 when path fits a sockaddr_un, else -ENAMETOOLONG. */
int socket_path_fits(const char *path);

/* The default socket path into out[cap]. 0, or -ENAMETOOLONG when it does not fit out or a
 * sockaddr_un (out then holds as much as fit). */
int socket_path_default(char *out, size_t cap);

#endif
