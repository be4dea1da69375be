/* One agent connection: its Hello and the id tables it defined
 * (StringDef, MethodDef, StackDef; ids are scoped to the connection).
 *
 * Bounded: at most limits.max_strings strings holding max_string_bytes in all,
 * max_methods methods, max_stacks stacks holding max_frames frames in all.
 * A definition beyond a limit is dropped and counted (defs_dropped); what
 * refers to it later formats as unknown. Every definition kept is also
 * charged to limits.budget, the collector's global one; one it refuses is
 * dropped the same way (and counted apart too). Pure: no I/O. */
#ifndef VTPIN_COLLECTOR_SESSION_H
#define VTPIN_COLLECTOR_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "session_hello.h"

#include "wire.h"

struct budget;

struct session_limits {
    size_t max_strings, max_string_bytes;
    size_t max_methods;
    size_t max_stacks, max_frames;
    struct budget *budget; /* shared by all sessions (budget.h); NULL: none */
};

#define SESSION_LIMITS_DEFAULT                                                                                         \
    ((struct session_limits){.max_strings = 65536,                                                                     \
                             .max_string_bytes = 16u << 20,                                                            \
                             .max_methods = 65536,                                                                     \
                             .max_stacks = 65536,                                                                      \
                             .max_frames = 1u << 20})

/* What a Hello said, strings owned (never NULL: "" when absent). */

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
int session_new(struct session **out, const Vtpin__V1__Hello *hello, const struct session_limits *limits);
void session_free(struct session *s);
const struct session_hello *session_hello(const struct session *s);

/* Takes a StringDef, MethodDef or StackDef. 1 if ev was a definition
 * (kept or dropped by a limit), 0 if it is another event, -ENOMEM. */
int session_define(struct session *s, const WireEvent *ev);

/* The text of string id, or NULL when it was never defined (or dropped). */
const char *session_string(const struct session *s, uint32_t id);
/* Frame `index` of stack `stack` as "module/Class.method(File.java:12)"
 * (like the agent's trace) into out[cap]. Returns out, or NULL when the stack
 * or the index is unknown. */
const char *session_format_frame(const struct session *s, uint32_t stack, uint32_t index, char *out, size_t cap);
/* enum pin_origin of a pin with stack (0 or unknown: the application's), by common/frames_kind.h's rule. */
int session_stack_origin(const struct session *s, uint32_t stack);
/* The frames of stack (0 when unknown); *truncated (may be NULL): the agent cut it. */
uint32_t session_stack_depth(const struct session *s, uint32_t stack, int *truncated);
/* Frame `index` of stack `stack` in parts (strings borrowed from s; all NULL, line -1, for a
 * method never defined) and, for a native method, its library (*library, NULL when unknown or
 * library NULL). 0, or -ENOENT when the stack or the index is unknown. */
struct frame_parts;
int session_frame(const struct session *s, uint32_t stack, uint32_t index, struct frame_parts *parts,
                  const char **library);

/* Definitions dropped because a table was full or the budget used up. */
uint64_t session_defs_dropped(const struct session *s);
/* Of those, the ones the global budget refused. */
uint64_t session_budget_dropped(const struct session *s);

#endif
