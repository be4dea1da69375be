/* The definitions of one session: the strings, methods and stacks an agent
 * defines by id (StringDef, MethodDef, StackDef), ids scoped to the session.
 * The one decoder of them: the collector keeps one per agent connection,
 * the report one per recorded session, and both read them through here.
 * A definition sent again replaces the one before (the last one wins).
 *
 * Bounded when given limits: at most max_strings strings holding
 * max_string_bytes in all, max_methods methods, max_stacks stacks holding
 * max_frames frames in all (0: no limit). A definition beyond a limit is
 * dropped and counted (dropped); what refers to it later reads as unknown.
 * Every definition kept is charged to limits.budget (common/budget.h), and one
 * it refuses is dropped the same way and counted apart too. A stack deeper
 * than max_depth is cut to it and marked truncated, not dropped.
 * Pure: no I/O. */
#ifndef VTPIN_PROTO_SESSION_DEFS_H
#define VTPIN_PROTO_SESSION_DEFS_H

#include <stddef.h>
#include <stdint.h>

#include "wire.h"

struct budget;
struct frame_parts;

struct session_defs_limits {
    size_t max_strings, max_string_bytes;
    size_t max_methods;
    size_t max_stacks, max_frames;
    uint32_t max_depth;    /* frames kept of one stack; 0: all */
    struct budget *budget; /* NULL: none */
};

struct session_defs_method {
    /* string ids; 0 for the optional ones the agent did not send */
    uint32_t class_sid, name_sid, signature_sid, source_sid, module_sid, library_sid;
    int8_t is_native;
    int8_t kind; /* the agent's enum frame_kind (common/frames_kind.h); -1 when it did not say */
};

struct session_defs_frame {
    int64_t bci; /* -1 for a native frame or when unknown */
    uint32_t method;
    int32_t line;      /* -1 when unknown */
    uint32_t monitors; /* monitors this frame held when the stack was taken */
};

struct session_defs_stack {
    uint32_t count;
    uint8_t truncated; /* the agent, or max_depth, cut it */
    struct session_defs_frame frames[];
};

struct session_defs;

/* limits NULL: no limit and no budget. 0, or -ENOMEM. */
int session_defs_new(struct session_defs **out, const struct session_defs_limits *limits);
/* Gives what it charged back to the budget. */
void session_defs_free(struct session_defs *d);

/* Takes a StringDef, MethodDef or StackDef. 1 if ev was one (kept, or dropped
 * by a limit), 0 if it is another event, -ENOMEM. */
int session_defs_take(struct session_defs *d, const WireEvent *ev);

/* NULL when never defined (or dropped). */
const char *session_defs_string(const struct session_defs *d, uint32_t id);
const struct session_defs_method *session_defs_method(const struct session_defs *d, uint32_t id);
const struct session_defs_stack *session_defs_stack(const struct session_defs *d, uint32_t id);

/* Walks every method (or stack) defined: start with *pos = 0; 0 at the end. */
int session_defs_next_method(const struct session_defs *d, size_t *pos, uint32_t *id,
                             const struct session_defs_method **m);
int session_defs_next_stack(const struct session_defs *d, size_t *pos, uint32_t *id,
                            const struct session_defs_stack **st);

/* Frame `index` of stack `stack` in parts (strings borrowed from d; all NULL, line -1, for a
 * method never defined) and, for a native method, its library (*library, NULL when unknown or
 * library NULL). 0, or -ENOENT when the stack or the index is unknown. */
int session_defs_frame(const struct session_defs *d, uint32_t stack, uint32_t index, struct frame_parts *parts,
                       const char **library);
/* That frame as "module/Class.method(File.java:12)" (common/frame_text.h) into out[cap]:
 * out, or NULL when the stack or the index is unknown. */
const char *session_defs_frame_text(const struct session_defs *d, uint32_t stack, uint32_t index, char *out,
                                    size_t cap);
/* enum pin_origin of a pin with stack (0 or unknown: the application's), by common/frames_kind.h's rule. */
int session_defs_stack_origin(const struct session_defs *d, uint32_t stack);

/* Every definition kept, packed again as the event that defined it (a stack cut to max_depth
 * marked truncated), strings first, then methods and stacks, to fn: what a rotated recording
 * starts with (collector/recorder.h). 0, fn's first non-zero return, or -ENOMEM. */
int session_defs_write(const struct session_defs *d, int (*fn)(void *arg, const uint8_t *frame, size_t len), void *arg);

/* Definitions dropped because a table was full or the budget used up. */
uint64_t session_defs_dropped(const struct session_defs *d);
/* Of those, the ones the budget refused. */
uint64_t session_defs_budget_dropped(const struct session_defs *d);

#endif
