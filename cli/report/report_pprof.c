/* pprof (go tool pprof, Grafana Pyroscope): a gzipped Profile message
 * (proto/pprof_build.h) with the pinned time and the number of pins of each
 * distinct stack, reason, carrier and JVM, and the carrier hogs' time
 * ("hogged": samples labelled reason HOG, their pinned time and pins 0; a
 * pin's hogged is 0). Every session of the file by default (each JVM named
 * by its pid and app labels), or the one --session names.
 *
 * Functions are "Class.method" (as the flame graph labels frames), with the
 * source file and line of each frame. The native code a pin is in (a JNI
 * library, an FFM or JNA target) is a frame of its own, "[native: FFM
 * downcall qsort, libc.so.6]", where the native code ran: right above the
 * frame that called into it (the JNI method, the downcall stub), so below
 * any Java code it called back. A stack the agent cut hangs under "[truncated]"; a pin
 * without a stack is one "[no stack: REASON]" frame, as in the flame graph (a hog's: "[no stack: HOG]"). */
#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/frames_kind.h"
#include "pprof_build.h"
#include "views.h"
#include "wire.h"

/* The native code the pin is in as a frame (frames_native_frame), when its culprit is in native code; NULL when not. */
static const char *native_frame(const struct recording_pin *p, char *out, size_t cap)
{
    if (!p->stack || !p->has_culprit)
        return NULL;
    const struct recording_method *m = p->stack->frames[p->culprit].method;
    const struct recording_downcall *dc = recording_pin_downcall(p);
    if (dc)
        return frames_native_frame(dc->api, dc->symbol, dc->library, out, cap);
    if (!m || !m->is_native)
        return NULL;
    return frames_native_frame(-1, NULL, m->library, out, cap);
}

static int kind_at(const void *ctx, uint32_t i)
{
    const struct recording_frame *f = &((const struct recording_stack *)ctx)->frames[i];
    return f->method ? f->method->kind : FRAME_JAVA;
}

static int64_t add_location(struct pprof_builder *b, const struct recording_frame *f)
{
    char label[1024];
    return pprof_builder_location(b, views_frame_label(f, label, sizeof(label)), f->method->source_file,
                                  f->line > 0 ? f->line : 0);
}

/* st's frames (leaf first) into locs: native (NULL: none) above frame native_at, "[truncated]" under a cut
 * stack; one "[no stack: what]" frame when st has none. Their count, or -ENOMEM. */
static int64_t add_stack(struct pprof_builder *b, const struct recording_stack *st, const char *native,
                         uint32_t native_at, const char *what, uint64_t *locs)
{
    char text[640];
    size_t n = 0;
    int64_t id;
    if (!st || st->count == 0) {
        snprintf(text, sizeof(text), "[no stack: %s]", what);
        if ((id = pprof_builder_location(b, text, NULL, 0)) < 0)
            return id;
        locs[n++] = (uint64_t)id;
        return (int64_t)n;
    }
    for (uint32_t k = 0; k < st->count; k++) {
        if (native && k == native_at) {
            if ((id = pprof_builder_location(b, native, NULL, 0)) < 0)
                return id;
            locs[n++] = (uint64_t)id;
        }
        if ((id = add_location(b, &st->frames[k])) < 0)
            return id;
        locs[n++] = (uint64_t)id;
    }
    if (st->truncated) {
        if ((id = pprof_builder_location(b, "[truncated]", NULL, 0)) < 0)
            return id;
        locs[n++] = (uint64_t)id;
    }
    return (int64_t)n;
}

/* A carrier's label: its name, else "tid N", else "unknown". */
static const char *carrier_label(const char *name, int has_tid, int32_t tid, char *out, size_t cap)
{
    if (name)
        snprintf(out, cap, "%s", name);
    else if (has_tid)
        snprintf(out, cap, "tid %" PRId32, tid);
    else
        snprintf(out, cap, "unknown");
    return out;
}

static int add_pin(struct pprof_builder *b, const struct recording_session *s, const struct recording_pin *p,
                   uint64_t *locs, struct pprof_label *labels, size_t n_labels)
{
    char native_text[640], carrier[160];
    const struct recording_stack *st = p->stack;
    const char *native = st && st->count ? native_frame(p, native_text, sizeof(native_text)) : NULL;
    uint32_t native_at = native ? frames_native_entry(kind_at, st, p->culprit) : UINT32_MAX;
    int64_t n = add_stack(b, st, native, native_at, wire_reason_name(p->reason), locs);
    if (n < 0)
        return (int)n;
    labels[0] = (struct pprof_label){.key = "reason", .str = wire_reason_name(p->reason)};
    labels[1] = (struct pprof_label){.key = "origin", .str = frames_origin_name(p->origin)};
    labels[2] = (struct pprof_label){
        .key = "carrier",
        .str = carrier_label(p->carrier_name, p->has_carrier_tid, p->carrier_tid, carrier, sizeof(carrier))};
    int64_t values[PPROF_PINNED_N] = {[PPROF_VALUE_PINNED_NS] = recording_pin_duration(s, p), [PPROF_VALUE_PINS] = 1};
    return pprof_builder_sample(b, locs, (size_t)n, values, labels, n_labels);
}

/* A carrier hog: its stack and labels as a pin's, with reason HOG (as `vtpin top` names it); only hogged. */
static int add_hog(struct pprof_builder *b, const struct recording_session *s, const struct recording_hog *h,
                   uint64_t *locs, struct pprof_label *labels, size_t n_labels)
{
    char carrier[160];
    int64_t n = add_stack(b, h->stack, NULL, UINT32_MAX, "HOG", locs);
    if (n < 0)
        return (int)n;
    labels[0] = (struct pprof_label){.key = "reason", .str = "HOG"};
    labels[1] = (struct pprof_label){.key = "origin", .str = frames_origin_name(recording_stack_origin(h->stack))};
    labels[2] = (struct pprof_label){
        .key = "carrier",
        .str = carrier_label(h->carrier_name, h->has_carrier_tid, h->carrier_tid, carrier, sizeof(carrier))};
    int64_t values[PPROF_PINNED_N] = {[PPROF_VALUE_HOGGED_NS] = recording_hog_duration(s, h)};
    return pprof_builder_sample(b, locs, (size_t)n, values, labels, n_labels);
}

/* The session's pins and carrier hogs into b, labelled with its JVM. */
static int add_session(struct pprof_builder *b, const struct recording_session *s, uint64_t *locs)
{
    char pid[32];
    struct pprof_label labels[5];
    size_t n_labels = 3;
    if (s->has_hello) {
        snprintf(pid, sizeof(pid), "%" PRId64, s->hello.pid);
        labels[n_labels++] = (struct pprof_label){.key = "pid", .str = pid};
    }
    if (s->hello.app && *s->hello.app)
        labels[n_labels++] = (struct pprof_label){.key = "app", .str = s->hello.app};
    for (size_t i = 0; i < s->n_pins; i++) {
        int rc = add_pin(b, s, &s->pins[i], locs, labels, n_labels);
        if (rc)
            return rc;
    }
    for (size_t i = 0; i < s->n_hogs; i++) {
        int rc = add_hog(b, s, &s->hogs[i], locs, labels, n_labels);
        if (rc)
            return rc;
    }
    return 0;
}

/* The span of the sessions reported, on the wall clock when they have one. */
static void set_time(struct pprof_builder *b, const struct recording *r, size_t from, size_t to)
{
    int64_t first = 0, last = 0;
    int any = 0;
    for (size_t i = from; i < to; i++) {
        const struct recording_session *s = r->sessions[i];
        int64_t a, z;
        if (!s->has_time || recording_unix_ns(s, s->first_ns, &a) || recording_unix_ns(s, s->last_ns, &z))
            continue;
        if (!any || a < first)
            first = a;
        if (!any || z > last)
            last = z;
        any = 1;
    }
    if (any)
        pprof_builder_set_time(b, first, last - first);
}

struct report_pprof {
    struct pprof_builder *b;
    uint64_t *locs; /* a stack's locations, reused from sample to sample */
};

int report_pprof_new(struct report_pprof **out, const char *path)
{
    struct report_pprof *p = calloc(1, sizeof(*p));
    int rc = p && (p->locs = calloc(RECORDING_MAX_FRAMES + 2, sizeof(*p->locs)))
                 ? pprof_builder_new(&p->b, pprof_pinned_types, PPROF_PINNED_N)
                 : -ENOMEM;
    char comment[1024];
    snprintf(comment, sizeof(comment), "vtpin report: %s", path);
    if (!rc)
        rc = pprof_builder_comment(p->b, comment);
    if (rc) {
        report_pprof_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

int report_pprof_add(struct report_pprof *p, const struct recording_session *s)
{
    return add_session(p->b, s, p->locs);
}

int report_pprof_write(FILE *out, struct report_pprof *p, const struct recording *r, size_t from, size_t to)
{
    uint8_t *bytes = NULL;
    size_t len = 0;
    set_time(p->b, r, from, to);
    int rc = pprof_builder_encode(p->b, &bytes, &len);
    if (!rc && (fwrite(bytes, 1, len, out) != len || fflush(out) || ferror(out)))
        rc = -EIO;
    free(bytes);
    return rc;
}

void report_pprof_free(struct report_pprof *p)
{
    if (!p)
        return;
    pprof_builder_free(p->b);
    free(p->locs);
    free(p);
}

int report_pprof(FILE *out, const struct recording *r, const struct report_options *o)
{
    size_t from = o->all_sessions ? 0 : o->session, to = o->all_sessions ? r->n_sessions : o->session + 1;
    struct report_pprof *p = NULL;
    int rc = report_pprof_new(&p, r->path);
    for (size_t i = from; i < to && !rc; i++)
        rc = report_pprof_add(p, r->sessions[i]);
    if (!rc)
        rc = report_pprof_write(out, p, r, from, to);
    report_pprof_free(p);
    return rc;
}
