/* What the collector daemon (collector/server.c) does with the frames of its
 * clients, minus the sockets, the log and the recordings: the fuzz targets
 * fuzz_session and fuzz_query drive the collector's pure code through it.
 * Every answer to a Query is decoded again and its JSON parsed: a reply that
 * is not valid JSON aborts (a finding, as a sanitizer report is). */
#ifndef VTPIN_FUZZ_PEER_H
#define VTPIN_FUZZ_PEER_H

#include <stddef.h>
#include <stdint.h>

#include "carry.h"
#include "common/budget.h"
#include "framer.h"
#include "jvms.h"
#include "session.h"

struct peer_collector {
    struct jvms *jvms;
    int64_t now; /* a fake CLOCK_MONOTONIC, advanced per frame */
    unsigned clients;
};

enum peer_kind { PEER_NEW, PEER_AGENT, PEER_QUERY, PEER_CLOSED };

struct peer {
    enum peer_kind kind;
    struct framer in;
    struct session *session;
    struct jvm *jvm;
    struct carry *carry; /* what its recording would write again at a rotation (carry.h) */
    struct budget carry_budget;
    uint64_t frames;
};

void peer_collector_init(struct peer_collector *pc, size_t max_jvms);
/* Detaches whatever is still attached, expires everything, frees. */
void peer_collector_fini(struct peer_collector *pc);

void peer_open(struct peer_collector *pc, struct peer *p);
/* The connection ends (EOF or rejected): detach from its JVM, reset its alert. */
void peer_close(struct peer_collector *pc, struct peer *p);
/* Bytes as read from the socket, chunk bytes per read. 0, or -1 once the
 * collector would have closed the connection. */
int peer_feed(struct peer_collector *pc, struct peer *p, const uint8_t *data, size_t size, size_t chunk);
/* One whole frame, as server.c's client_frame. 0, or -1 when closed. */
int peer_frame(struct peer_collector *pc, struct peer *p, const uint8_t *frame, size_t len);

/* Answers a query the way the server does and checks the answer. */
void peer_query(struct peer_collector *pc, const Vtpin__V1__Query *q);
/* The server's timer tick: alerts of connected JVMs, expiry. */
void peer_tick(struct peer_collector *pc);

#endif
