/* Chrome trace-event JSON, for ui.perfetto.dev and chrome://tracing: one
 * process (the JVM), one thread track per carrier, each pin a complete
 * event ("ph":"X") named "REASON Class.method", each carrier hog one named
 * "HOG Class.method" (category "hog"), occupancy as a 0/1 busy
 * counter per carrier. Times are microseconds from the session's first
 * timestamp (small numbers keep nanosecond precision in a double);
 * otherData.time_origin_unix_ns says when that was. */
#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "common/json.h"
#include "views.h"
#include "wire.h"

/* A pin's args carry its stack from the top down to the culprit and
 * PERFETTO_BELOW_CULPRIT frames below it, at most PERFETTO_STACK_FRAMES
 * (whole stacks would make a 100k-pin trace over 100 MB); the rest is "...". */
#define PERFETTO_STACK_FRAMES 24
#define PERFETTO_BELOW_CULPRIT 2

static int64_t lane_tid(const struct lane *l)
{
    return l->has_tid ? l->tid : 0;
}

/* One trace event, on a line of its own: {"ph": ph, "name": name, "pid": pid, "tid": tid, ... */
static void event_begin(struct json *j, const char *ph, const char *cat, const char *name, int64_t pid, int64_t tid)
{
    json_object_begin_inline(j);
    json_kv_string(j, "ph", ph);
    if (cat)
        json_kv_string(j, "cat", cat);
    json_kv_string(j, "name", name);
    json_kv_int(j, "pid", pid);
    json_kv_int(j, "tid", tid);
}

static void put_metadata(struct json *j, int64_t pid, const struct recording_session *s, const struct timeline *t)
{
    char name[256];
    snprintf(name, sizeof(name), "JVM %" PRId64 "%s%s", pid, s->hello.java_version ? " java " : "",
             s->hello.java_version ? s->hello.java_version : "");
    event_begin(j, "M", NULL, "process_name", pid, 0);
    json_key(j, "args");
    json_object_begin_inline(j);
    json_kv_string(j, "name", name);
    json_object_end(j);
    json_object_end(j);
    for (size_t i = 0; i < t->n_lanes; i++) {
        const struct lane *l = &t->lanes[i];
        char fallback[64];
        snprintf(fallback, sizeof(fallback), l->has_tid ? "carrier %" PRId32 : "unknown carrier", l->tid);
        event_begin(j, "M", NULL, "thread_name", pid, lane_tid(l));
        json_key(j, "args");
        json_object_begin_inline(j);
        json_kv_string(j, "name", l->name ? l->name : fallback);
        json_object_end(j);
        json_object_end(j);
        event_begin(j, "M", NULL, "thread_sort_index", pid, lane_tid(l));
        json_key(j, "args");
        json_object_begin_inline(j);
        json_kv_uint(j, "sort_index", i);
        json_object_end(j);
        json_object_end(j);
    }
}

/* "stack": from the top through the culprit and a few frames below it. */
static void put_stack(struct json *j, const struct recording_stack *st, int has_culprit, uint32_t culprit)
{
    char text[1024];
    json_key(j, "stack");
    json_array_begin_inline(j);
    uint32_t shown = st ? st->count : 0;
    if (has_culprit && culprit + 1 + PERFETTO_BELOW_CULPRIT < shown)
        shown = culprit + 1 + PERFETTO_BELOW_CULPRIT;
    if (shown > PERFETTO_STACK_FRAMES)
        shown = PERFETTO_STACK_FRAMES;
    for (uint32_t i = 0; i < shown; i++)
        json_string(j, report_format_frame(&st->frames[i], text, sizeof(text)));
    if (st && (st->count > shown || st->truncated))
        json_string(j, "...");
    json_array_end(j);
}

static void put_pin(struct json *j, int64_t pid, const struct recording_session *s, const struct lane *l,
                    const struct recording_pin *p, int64_t origin)
{
    char text[1024], name[1200];
    const struct recording_frame *culprit = p->has_culprit ? &p->stack->frames[p->culprit] : NULL;
    if (culprit)
        snprintf(name, sizeof(name), "%s %s", wire_reason_name(p->reason),
                 views_frame_label(culprit, text, sizeof(text)));
    else
        snprintf(name, sizeof(name), "%s", wire_reason_name(p->reason));
    event_begin(j, "X", "pin", name, pid, lane_tid(l));
    json_key(j, "ts");
    json_milli(j, recording_sat_sub(p->start_ns, origin));
    json_key(j, "dur");
    json_milli(j, recording_pin_duration(s, p));
    json_key(j, "args");
    json_object_begin_inline(j);
    json_kv_uint(j, "pin_id", p->id);
    json_kv_string(j, "reason", wire_reason_name(p->reason));
    if (p->has_vthread_id)
        json_kv_int(j, "vthread_id", p->vthread_id);
    if (p->vthread_name)
        json_kv_string(j, "vthread_name", p->vthread_name);
    if (culprit)
        json_kv_string(j, "culprit", report_format_frame(culprit, text, sizeof(text)));
    if (p->blocked_in)
        json_kv_string(j, "blocked_in", p->blocked_in);
    json_kv_bool(j, "ongoing", !p->ended);
    /* the frames holding monitors, with how many each */
    uint64_t monitors = 0;
    json_key(j, "monitor_frames");
    json_array_begin_inline(j);
    for (uint32_t i = 0; p->stack && p->stack->frames && i < p->stack->count; i++) {
        const struct recording_frame *f = &p->stack->frames[i];
        if (!f->monitors)
            continue;
        monitors += f->monitors;
        char held[1100];
        snprintf(held, sizeof(held), "%s x%" PRIu32, report_format_frame(f, text, sizeof(text)), f->monitors);
        json_string(j, held);
    }
    json_array_end(j);
    json_kv_uint(j, "monitors", monitors);
    put_stack(j, p->stack, p->has_culprit, p->culprit);
    json_object_end(j);
    json_object_end(j);
}

static void put_hog(struct json *j, int64_t pid, const struct recording_session *s, const struct lane *l,
                    const struct recording_hog *h, int64_t origin)
{
    char text[1024], name[1200];
    const struct recording_frame *culprit = h->has_culprit ? &h->stack->frames[h->culprit] : NULL;
    snprintf(name, sizeof(name), "HOG%s%s", culprit ? " " : "",
             culprit ? views_frame_label(culprit, text, sizeof(text)) : "");
    event_begin(j, "X", "hog", name, pid, lane_tid(l));
    json_key(j, "ts");
    json_milli(j, recording_sat_sub(h->start_ns, origin));
    json_key(j, "dur");
    json_milli(j, recording_hog_duration(s, h));
    json_key(j, "args");
    json_object_begin_inline(j);
    json_kv_uint(j, "hog_id", h->id);
    if (h->has_vthread_id)
        json_kv_int(j, "vthread_id", h->vthread_id);
    if (h->vthread_name)
        json_kv_string(j, "vthread_name", h->vthread_name);
    if (culprit)
        json_kv_string(j, "culprit", report_format_frame(culprit, text, sizeof(text)));
    json_kv_bool(j, "ongoing", !h->ended);
    put_stack(j, h->stack, h->has_culprit, h->culprit);
    json_object_end(j);
    json_object_end(j);
}

static void put_busy(struct json *j, const char *name, int64_t pid, const struct lane *l, int64_t ts_ns, int busy)
{
    event_begin(j, "C", "occupancy", name, pid, lane_tid(l));
    json_key(j, "ts");
    json_milli(j, ts_ns);
    json_key(j, "args");
    json_object_begin_inline(j);
    json_kv_int(j, "busy", busy);
    json_object_end(j);
    json_object_end(j);
}

/* A busy counter per carrier: 1 while it carries a virtual thread, 0 idle.
 * Only changes are written (sampled occupancy repeats the same state). */
static void put_occupancy(struct json *j, int64_t pid, const struct recording_session *s, const struct timeline *t,
                          const struct lane *l, int64_t origin)
{
    char name[300];
    snprintf(name, sizeof(name), "busy %s", l->name ? l->name : "carrier");
    if (!l->name)
        snprintf(name, sizeof(name), "busy carrier %" PRId32, l->tid);
    int last = -1;
    for (size_t i = 0; i < l->n_occ; i++) {
        const struct recording_occupancy *o = &s->occupancy[l->occ[i]];
        int busy = o->vthread_id != 0;
        if (busy == last)
            continue;
        last = busy;
        put_busy(j, name, pid, l, recording_sat_sub(o->time_ns, origin), busy);
    }
    if (l->n_occ) /* close the last state where it stops being known */
        put_busy(j, name, pid, l, recording_sat_sub(timeline_occupancy_end(s, t, l, l->n_occ - 1), origin), last);
}

int report_perfetto(FILE *out, const struct recording *r, const struct report_options *o)
{
    const struct recording_session *s = r->sessions[o->session];
    struct timeline t;
    int rc = timeline_build(s, &t);
    if (rc)
        return rc;
    int64_t pid = s->has_hello && s->hello.pid > 0 ? s->hello.pid : 1;
    int64_t origin = s->has_time ? s->first_ns : 0;
    int64_t origin_unix = 0;

    struct json j;
    json_init(&j, out);
    json_object_begin(&j);
    json_kv_string(&j, "displayTimeUnit", "ms");
    json_key(&j, "traceEvents");
    json_array_begin(&j);
    put_metadata(&j, pid, s, &t);
    for (size_t i = 0; i < t.n_lanes; i++) {
        const struct lane *l = &t.lanes[i];
        for (size_t k = 0; k < l->n_pins; k++)
            put_pin(&j, pid, s, l, &s->pins[l->pins[k]], origin);
        for (size_t k = 0; k < l->n_hogs; k++)
            put_hog(&j, pid, s, l, &s->hogs[l->hogs[k]], origin);
        put_occupancy(&j, pid, s, &t, l, origin);
    }
    json_array_end(&j);
    json_key(&j, "otherData");
    json_object_begin(&j);
    json_kv_string(&j, "generator", "vtpin report --format perfetto");
    if (s->has_time && recording_unix_ns(s, origin, &origin_unix) == 0) {
        char unix_ns[32];
        snprintf(unix_ns, sizeof(unix_ns), "%" PRId64, origin_unix);
        json_kv_string(&j, "time_origin_unix_ns", unix_ns);
    }
    char pid_text[32];
    snprintf(pid_text, sizeof(pid_text), "%" PRId64, pid);
    json_kv_string(&j, "pid", pid_text);
    if (s->hello.java_version)
        json_kv_string(&j, "java_version", s->hello.java_version);
    if (s->hello.host)
        json_kv_string(&j, "host", s->hello.host);
    json_object_end(&j);
    json_object_end(&j);
    rc = json_finish(&j);
    timeline_fini(&t);
    return rc;
}
