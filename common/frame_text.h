/* One Java stack frame as text, the way a Java stack trace prints it:
 * "java.base/java.lang.Thread.sleep(Thread.java:507)". The one formatter of
 * the agent's trace, the collector's culprit frames and the CLI's reports.
 * Pure: snprintf into the caller's buffer. */
#ifndef VTPIN_COMMON_FRAME_TEXT_H
#define VTPIN_COMMON_FRAME_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* A name that was never defined (or was dropped by a full table). */
#define FRAME_TEXT_UNKNOWN "<unknown>"
/* A frame whose method was never defined. */
#define FRAME_TEXT_UNKNOWN_METHOD "<unknown method>"

struct frame_parts {
    const char *module; /* NULL or "": none (class path) */
    const char *cls;    /* dotted binary name; NULL: FRAME_TEXT_UNKNOWN */
    const char *name;   /* NULL: FRAME_TEXT_UNKNOWN */
    const char *source; /* NULL: "Unknown Source" */
    int32_t line;       /* < 0: unknown */
    int is_native;      /* "Native Method" */
};

/* The frame into out[cap] (cut and terminated when it does not fit; cap > 0).
 * parts NULL: FRAME_TEXT_UNKNOWN_METHOD. Returns out. */
char *frame_text(const struct frame_parts *parts, char *out, size_t cap);

#endif
