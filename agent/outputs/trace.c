#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/frame_text.h"
#include "common/io.h"
#include "common/path_trust.h"
#include "common/utf8.h"
#include "jthread.h"
#include "wire.h"

struct trace {
    int fd;
    enum trace_mode mode;
    char *buf;
    size_t len, cap;
    /* pin that first printed each stack (index = stack id), so a stack is printed once */
    uint64_t *first_pin;
    uint32_t first_pin_cap;
    int error; /* first failed write (errno) */
    uint64_t write_failures;
};

struct trace *trace_open(const char *path, enum trace_mode mode, int *err)
{
    struct trace *t = calloc(1, sizeof(*t));
    if (!t) {
        *err = -ENOMEM;
        return NULL;
    }
    t->mode = mode;
    t->fd = 2;
    if (path && *path) {
        t->fd = path_trust_open_own_file(path, O_TRUNC, 0600); /* as record= is: it names threads, too */
        if (t->fd < 0) {
            *err = t->fd;
            free(t);
            return NULL;
        }
    }
    t->cap = 64 * 1024;
    t->buf = malloc(t->cap);
    if (!t->buf) {
        *err = -ENOMEM;
        trace_close(t);
        return NULL;
    }
    return t;
}

static void put(struct trace *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct trace *t, const char *fmt, ...)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
        va_end(ap);
        if (n < 0)
            return;
        if ((size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        }
        trace_flush(t); /* make room and retry once; longer lines are cut */
        if ((size_t)n >= t->cap) {
            t->len = 0;
            return;
        }
    }
}

void trace_flush(struct trace *t)
{
    if (!t)
        return;
    int rc = io_write_all(t->fd, (const uint8_t *)t->buf, t->len);
    if (rc) { /* the trace is best effort: never stall the writer on it, but count it */
        t->write_failures++;
        if (!t->error)
            t->error = -rc;
    }
    t->len = 0;
}

int trace_error(const struct trace *t)
{
    return t ? t->error : 0;
}

uint64_t trace_write_failures(const struct trace *t)
{
    return t ? t->write_failures : 0;
}

void trace_close(struct trace *t)
{
    if (!t)
        return;
    trace_flush(t);
    if (t->fd > 2)
        close(t->fd);
    free(t->buf);
    free(t->first_pin);
    free(t);
}

/* Names and frames as the reports print them: control characters escaped (\x1b,
 * \x00 for a NUL, i.e. modified UTF-8's C0 80), so a thread name cannot drive
 * the terminal the trace goes to or start a line of its own. At most 4 bytes a
 * byte: out holds 4 * JTHREAD_NAME_MAX for a name. */
#define PRINTABLE_NAME_MAX (4 * JTHREAD_NAME_MAX)
#define PRINTABLE_FRAME_MAX (4 * 1024)

static const char *printable(const char *s, char *out, size_t cap)
{
    return utf8_printable(s ? s : "", out, cap);
}

static const char *basename_of(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    return slash ? slash + 1 : path;
}

char *trace_format_frame(struct symbols *s, const struct stack_info *st, uint32_t index, char *out, size_t cap)
{
    const struct stack_frame *f = &st->frames[index];
    struct method_info *m = symbols_method_by_id(s, f->method);
    if (!m)
        return frame_text(NULL, out, cap);
    struct frame_parts parts = {.module = symbols_string_text(s, m->module_sid),
                                .cls = symbols_string_text(s, m->class_sid),
                                .name = symbols_string_text(s, m->name_sid),
                                .source = symbols_string_text(s, m->source_sid),
                                .line = f->line,
                                .is_native = m->is_native};
    return frame_text(&parts, out, cap);
}

/* " <== native (libfoo.so)" for a JNI culprit, " <== native (FFM downcall qsort, libc.so.6)" for
 * a frame that invoked a downcall, " <== native (JNA usleep, libc.so.6)" for one that called a JNA
 * function; "" otherwise. */
static void put_native_marker(struct trace *t, struct symbols *s, const struct pin_view *p, uint32_t i)
{
    struct method_info *m = symbols_method_by_id(s, p->stack->frames[i].method);
    if (i != p->culprit)
        return;
    if (p->downcall) {
        char marker[DOWNCALL_SYMBOL_MAX + 64], text[4 * sizeof(marker)];
        frames_call_marker(p->downcall->api, p->downcall->symbol, p->downcall->library, marker, sizeof(marker));
        put(t, "%s", printable(marker, text, sizeof(text)));
    } else if (m && m->is_native) {
        const char *lib = symbols_string_text(s, m->library_sid);
        char text[PRINTABLE_FRAME_MAX];
        put(t, " <== native (%s)", lib ? printable(basename_of(lib), text, sizeof(text)) : "library unknown");
    }
}

static int is_upcall(struct symbols *s, const struct stack_info *st, uint32_t i)
{
    struct method_info *m = symbols_method_by_id(s, st->frames[i].method);
    return m && m->kind == FRAME_UPCALL_STUB;
}

static void put_frame(struct trace *t, struct symbols *s, const struct pin_view *p, uint32_t i)
{
    char frame[1024], text[PRINTABLE_FRAME_MAX];
    const struct stack_info *st = p->stack;
    trace_format_frame(s, st, i, frame, sizeof(frame));
    put(t, "    %s", printable(frame, text, sizeof(text)));
    if (st->frames[i].monitors > 0)
        put(t, " <== monitors:%u", st->frames[i].monitors);
    put_native_marker(t, s, p, i);
    if (is_upcall(s, st, i))
        put(t, " <== upcall");
    if ((int)i == p->blocking)
        put(t, " <== blocking operation");
    put(t, "\n");
}

static void put_header(struct trace *t, const struct pin_view *p, const char *what)
{
    char vthread[PRINTABLE_NAME_MAX], carrier[PRINTABLE_NAME_MAX];
    put(t, "vtpin: pin #%llu %s: VirtualThread[#%lld%s%s]/pinned@%s (tid %d) reason:%s", (unsigned long long)p->pin_id,
        what, (long long)p->vthread_id, p->vthread_name && *p->vthread_name ? "," : "",
        printable(p->vthread_name, vthread, sizeof(vthread)),
        p->carrier_name && *p->carrier_name ? printable(p->carrier_name, carrier, sizeof(carrier)) : "carrier",
        p->carrier_tid, wire_reason_name(p->reason));
}

void trace_pin_start(struct trace *t, struct symbols *s, const struct pin_view *p)
{
    if (!t)
        return;
    put_header(t, p, "started");
    if (p->blocked_in && *p->blocked_in) {
        char text[PRINTABLE_FRAME_MAX];
        put(t, " blocked in %s", printable(p->blocked_in, text, sizeof(text)));
    }
    if (p->jdk_reason && *p->jdk_reason) {
        char text[PRINTABLE_FRAME_MAX];
        put(t, " (JDK: %s)", printable(p->jdk_reason, text, sizeof(text)));
    }
    put(t, "\n");
    const struct stack_info *st = p->stack;
    if (!st) {
        put(t, "    <stack not available>\n");
        return;
    }
    if (st->id >= t->first_pin_cap) {
        uint32_t ncap = t->first_pin_cap ? t->first_pin_cap : 64;
        while (ncap <= st->id)
            ncap *= 2;
        uint64_t *n = realloc(t->first_pin, ncap * sizeof(*n));
        if (n) {
            memset(n + t->first_pin_cap, 0, (ncap - t->first_pin_cap) * sizeof(*n));
            t->first_pin = n;
            t->first_pin_cap = ncap;
        }
    }
    uint64_t *first = st->id < t->first_pin_cap ? &t->first_pin[st->id] : NULL;
    if (first && *first) { /* like the JDK's trace: each distinct stack in full once */
        char frame[1024], text[PRINTABLE_FRAME_MAX];
        put(t, "    at %s", printable(trace_format_frame(s, st, p->culprit, frame, sizeof(frame)), text, sizeof(text)));
        put_native_marker(t, s, p, p->culprit);
        put(t, " (stack as pin #%llu)\n", (unsigned long long)*first);
        return;
    }
    if (first)
        *first = p->pin_id;
    for (uint32_t i = 0; i < st->count; i++) {
        int marked = st->frames[i].monitors > 0 || i == p->culprit || (int)i == p->blocking || is_upcall(s, st, i);
        if (t->mode == TRACE_FULL || marked)
            put_frame(t, s, p, i);
    }
    if (st->truncated)
        put(t, "    ...\n");
}

void trace_pin_end(struct trace *t, struct symbols *s, const struct pin_view *p)
{
    if (!t)
        return;
    char frame[1024] = "", text[PRINTABLE_FRAME_MAX], carrier[PRINTABLE_NAME_MAX];
    if (p->stack)
        trace_format_frame(s, p->stack, p->culprit, frame, sizeof(frame));
    double ms = (double)(p->end_ns - p->start_ns) / 1e6;
    put(t, "vtpin: pin #%llu ended: %.3f ms reason:%s on %s (tid %d)%s%s\n", (unsigned long long)p->pin_id, ms,
        wire_reason_name(p->reason),
        p->carrier_name && *p->carrier_name ? printable(p->carrier_name, carrier, sizeof(carrier)) : "carrier",
        p->carrier_tid, *frame ? " at " : "", printable(frame, text, sizeof(text)));
}

void trace_line(struct trace *t, const char *text)
{
    if (t) {
        char line[PRINTABLE_FRAME_MAX];
        put(t, "vtpin: %s\n", printable(text, line, sizeof(line)));
    }
}
