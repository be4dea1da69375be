/* The collector daemon: one epoll loop (loop.h) with the listening socket,
 * the clients, a signalfd (SIGINT, SIGTERM, SIGHUP: clean shutdown) and a
 * timerfd tick (alerts, recording flushes, timeouts, expiry).
 *
 * Clients are agents (first frame Hello) or queries (first frame Query).
 * A peer that is not this user (or root) nor allowed by --allow-uid/--allow-gid, sends garbage, an undecodable or
 * oversized frame, or breaks the protocol is logged (peer pid and uid, the
 * JVM pid once known) and disconnected; the others are not affected. */
#ifndef VTPIN_COLLECTOR_SERVER_H
#define VTPIN_COLLECTOR_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "access.h"
#include "occupancy.h"
#include "ztattach.h"

struct server_config {
    const char *socket_path;
    int socket_dir_strict; /* the default socket directory: must be ours, made private */
    const char *dir;       /* recordings */
    uint64_t record_max;   /* a recording rotates past this many bytes (recorder.h); 0: never */
    unsigned record_keep;  /* rotated files kept of each */
    struct alert_rule alert;
    int64_t window_ns;
    size_t max_frame;
    unsigned max_clients;
    unsigned max_carriers; /* per JVM */
    int64_t tick_ns;
    int64_t linger_ns;    /* disconnected JVMs stay listed this long */
    int64_t handshake_ns; /* a client must send its first frame within this */
    size_t memory_budget; /* bytes peers can make it keep, all connections together (budget.h) */
    const char *version;
    /* Prometheus metrics over HTTP (metrics_http.h) on this address; metrics_addrlen 0: none */
    struct sockaddr_storage metrics_addr;
    socklen_t metrics_addrlen;
    int kernel_mode;               /* enum kglue_mode: auto (default), on, off */
    uint64_t kernel_min_ns;        /* shortest off-CPU interval the kernel view records */
    int zero_touch;                /* also the JVMs with no agent (zerotouch.h): 1 --jvms=all, 0 --jvms=agents, -1 (the
                                      default) wherever the kernel view is on */
    int32_t zero_touch_under;      /* --jvms=under:PID: only the JVMs descended from PID; 0: every one */
    struct ztattach_config attach; /* --attach-on-pin (min_ns < 0: off); socket and exe set by the server */
    struct access allow;           /* --allow-uid, --allow-gid: other users served (access.h) */
};

#define SERVER_MAX_CLIENTS_DEFAULT 256
#define SERVER_RECORD_MAX_DEFAULT (256ull << 20) /* as the agent's record_max= */
#define SERVER_RECORD_KEEP_DEFAULT 3
#define SERVER_ACCEPTS_PER_WAKEUP 16
#define SERVER_READS_PER_WAKEUP 8

/* Fills cfg with the defaults (socket and dir still NULL). */
void server_config_defaults(struct server_config *cfg);

/* Runs the collector in the foreground until a signal stops it.
 * Returns 0 after a clean shutdown, 1 when it could not start or failed. */
int server_run(const struct server_config *cfg);

#endif
