/* The trace= output: what -Djdk.tracePinnedThreads printed on JDK 21, on every
 * JDK, extended with reason, carrier, duration and native-library markers.
 * Formatted and written by the writer thread, never by the pinned thread. */
#ifndef VTPIN_TRACE_H
#define VTPIN_TRACE_H

#include <stdint.h>

#include "downcall.h"
#include "options.h"
#include "symbols.h"

struct pin_view {
    uint64_t pin_id;
    int reason;
    int64_t start_ns, end_ns; /* end_ns 0 while the pin lasts */
    int64_t vthread_id;
    const char *vthread_name;
    int carrier_tid;
    const char *carrier_name;
    const struct stack_info *stack;
    uint32_t culprit;
    const char *blocked_in;                 /* NATIVE_BLOCK: where the kernel says it sleeps */
    int blocking;                           /* frame of the blocking operation when not the culprit, else -1 */
    const char *jdk_reason;                 /* the JDK's own words, "" none */
    const struct downcall_target *downcall; /* the culprit invoked an FFM downcall or a JNA function; else NULL */
};

struct trace;

struct trace *trace_open(const char *path, enum trace_mode mode, int *err);
void trace_pin_start(struct trace *t, struct symbols *s, const struct pin_view *p);
void trace_pin_end(struct trace *t, struct symbols *s, const struct pin_view *p);
void trace_line(struct trace *t, const char *text);
/* Failed writes of the trace (a full disk, /dev/full): the lines are lost, counted here. */
int trace_error(const struct trace *t); /* errno of the first failure, or 0 */
uint64_t trace_write_failures(const struct trace *t);
void trace_flush(struct trace *t);
void trace_close(struct trace *t);

/* "Repro.settle(Repro.java:23)" into out; returns out. */
char *trace_format_frame(struct symbols *s, const struct stack_info *st, uint32_t index, char *out, size_t cap);

#endif
