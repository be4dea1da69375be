/* One agent connection: its Hello and the definitions it sent
 * (proto/session_defs.h: ids are scoped to the connection), bounded by the
 * collector's per-connection limits and charged to its global budget.
 * Pure: no I/O. */
#ifndef VTPIN_COLLECTOR_SESSION_H
#define VTPIN_COLLECTOR_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "session_defs.h"
#include "session_hello.h"

#include "wire.h"

/* What one connection may make the collector keep; .budget is the collector's global one. */
#define SESSION_LIMITS_DEFAULT                                                                                         \
    ((struct session_defs_limits){.max_strings = 65536,                                                                \
                                  .max_string_bytes = 16u << 20,                                                       \
                                  .max_methods = 65536,                                                                \
                                  .max_stacks = 65536,                                                                 \
                                  .max_frames = 1u << 20})

struct session;

/* What the first frame of a connection is. */
enum session_first {
    SESSION_FIRST_AGENT = 1, /* a Hello this collector speaks */
    SESSION_FIRST_QUERY = 2,
};

/* Classifies a connection's first event: SESSION_FIRST_AGENT, SESSION_FIRST_QUERY,
 * or -EPROTO (not a Hello or Query) / -EPROTONOSUPPORT (a Hello of another
 * schema version), with why[] saying so. */
int session_classify_first(const WireEvent *ev, char *why, size_t whylen);

/* A session from its Hello. 0 or -ENOMEM. */
int session_new(struct session **out, const Vtpin__V1__Hello *hello, const struct session_defs_limits *limits);
void session_free(struct session *s);
const struct session_hello *session_hello(const struct session *s);
/* What the connection defined so far. */
const struct session_defs *session_defs(const struct session *s);

/* Takes a StringDef, MethodDef or StackDef. 1 if ev was a definition
 * (kept or dropped by a limit), 0 if it is another event, -ENOMEM. */
int session_define(struct session *s, const WireEvent *ev);

#endif
