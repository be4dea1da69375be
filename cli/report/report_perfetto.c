/* Chrome trace-event JSON, for ui.perfetto.dev and chrome://tracing: one
 * process (the JVM), one thread track per carrier, each pin a complete
 * event ("ph":"X") named "REASON Class.method", occupancy as a 0/1 busy
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

/* Microseconds with three decimals from ns. */
static void put_us(FILE *out, int64_t ns)
{
    if (ns < 0) {
        fputc('-', out);
        ns = ns == INT64_MIN ? INT64_MAX : -ns;
    }
    fprintf(out, "%" PRId64 ".%03" PRId64, ns / 1000, ns % 1000);
}

static void put_kv_string(FILE *out, const char *key, const char *value)
{
    fprintf(out, ",\"%s\":", key);
    json_write_string(out, value);
}

static int64_t lane_tid(const struct lane *l)
{
    return l->has_tid ? l->tid : 0;
}

static void put_metadata(FILE *out, int64_t pid, const struct recording_session *s, const struct timeline *t)
{
    char name[256];
    snprintf(name, sizeof(name), "JVM %" PRId64 "%s%s", pid, s->java_version ? " java " : "",
             s->java_version ? s->java_version : "");
    fprintf(out, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%" PRId64 ",\"tid\":0,\"args\":{\"name\":", pid);
    json_write_string(out, name);
    fputs("}}", out);
    for (size_t i = 0; i < t->n_lanes; i++) {
        const struct lane *l = &t->lanes[i];
        char fallback[64];
        snprintf(fallback, sizeof(fallback), l->has_tid ? "carrier %" PRId32 : "unknown carrier", l->tid);
        fprintf(out,
                ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"args\":{\"name\":",
                pid, lane_tid(l));
        json_write_string(out, l->name ? l->name : fallback);
        fprintf(out,
                "}},\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%" PRId64 ",\"tid\":%" PRId64
                ",\"args\":{\"sort_index\":%zu}}",
                pid, lane_tid(l), i);
    }
}

static void put_pin(FILE *out, int64_t pid, const struct recording_session *s, const struct lane *l,
                    const struct recording_pin *p, int64_t origin)
{
    char text[1024], name[1200];
    const struct recording_frame *culprit = p->has_culprit ? &p->stack->frames[p->culprit] : NULL;
    if (culprit)
        snprintf(name, sizeof(name), "%s %s", wire_reason_name(p->reason),
                 views_frame_label(culprit, text, sizeof(text)));
    else
        snprintf(name, sizeof(name), "%s", wire_reason_name(p->reason));
    fputs(",\n{\"ph\":\"X\",\"cat\":\"pin\",\"name\":", out);
    json_write_string(out, name);
    fprintf(out, ",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"ts\":", pid, lane_tid(l));
    put_us(out, recording_sat_sub(p->start_ns, origin));
    fputs(",\"dur\":", out);
    put_us(out, recording_pin_duration(s, p));
    fprintf(out, ",\"args\":{\"pin_id\":%" PRIu64 ",\"reason\":\"%s\"", p->id, wire_reason_name(p->reason));
    if (p->has_vthread_id)
        fprintf(out, ",\"vthread_id\":%" PRId64, p->vthread_id);
    if (p->vthread_name)
        put_kv_string(out, "vthread_name", p->vthread_name);
    if (culprit)
        put_kv_string(out, "culprit", report_format_frame(culprit, text, sizeof(text)));
    if (p->blocked_in)
        put_kv_string(out, "blocked_in", p->blocked_in);
    fprintf(out, ",\"ongoing\":%s", p->ended ? "false" : "true");
    /* the frames holding monitors, with how many each */
    uint64_t monitors = 0;
    fputs(",\"monitor_frames\":[", out);
    for (uint32_t i = 0, n = 0; p->stack && p->stack->frames && i < p->stack->count; i++) {
        const struct recording_frame *f = &p->stack->frames[i];
        if (!f->monitors)
            continue;
        monitors += f->monitors;
        char held[1100];
        snprintf(held, sizeof(held), "%s x%" PRIu32, report_format_frame(f, text, sizeof(text)), f->monitors);
        if (n++)
            fputc(',', out);
        json_write_string(out, held);
    }
    fprintf(out, "],\"monitors\":%" PRIu64 ",\"stack\":[", monitors);
    uint32_t shown = p->stack ? p->stack->count : 0;
    if (p->has_culprit && p->culprit + 1 + PERFETTO_BELOW_CULPRIT < shown)
        shown = p->culprit + 1 + PERFETTO_BELOW_CULPRIT;
    if (shown > PERFETTO_STACK_FRAMES)
        shown = PERFETTO_STACK_FRAMES;
    for (uint32_t i = 0; i < shown; i++) {
        if (i)
            fputc(',', out);
        json_write_string(out, report_format_frame(&p->stack->frames[i], text, sizeof(text)));
    }
    if (p->stack && (p->stack->count > shown || p->stack->truncated))
        fputs(shown ? ",\"...\"" : "\"...\"", out);
    fputs("]}}", out);
}

/* A busy counter per carrier: 1 while it carries a virtual thread, 0 idle.
 * Only changes are written (sampled occupancy repeats the same state). */
static void put_occupancy(FILE *out, int64_t pid, const struct recording_session *s, const struct timeline *t,
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
        fputs(",\n{\"ph\":\"C\",\"cat\":\"occupancy\",\"name\":", out);
        json_write_string(out, name);
        fprintf(out, ",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"ts\":", pid, lane_tid(l));
        put_us(out, recording_sat_sub(o->time_ns, origin));
        fprintf(out, ",\"args\":{\"busy\":%d}}", busy);
    }
    if (l->n_occ) { /* close the last state where it stops being known */
        fputs(",\n{\"ph\":\"C\",\"cat\":\"occupancy\",\"name\":", out);
        json_write_string(out, name);
        fprintf(out, ",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"ts\":", pid, lane_tid(l));
        put_us(out, recording_sat_sub(timeline_occupancy_end(s, t, l, l->n_occ - 1), origin));
        fprintf(out, ",\"args\":{\"busy\":%d}}", last);
    }
}

int report_perfetto(FILE *out, const struct recording *r, const struct report_options *o)
{
    const struct recording_session *s = r->sessions[o->session];
    struct timeline t;
    int rc = timeline_build(s, &t);
    if (rc)
        return rc;
    int64_t pid = s->has_hello && s->pid > 0 ? s->pid : 1;
    int64_t origin = s->has_time ? s->first_ns : 0;
    int64_t origin_unix = 0;

    fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", out);
    put_metadata(out, pid, s, &t);
    for (size_t i = 0; i < t.n_lanes; i++) {
        const struct lane *l = &t.lanes[i];
        for (size_t k = 0; k < l->n_pins; k++)
            put_pin(out, pid, s, l, &s->pins[l->pins[k]], origin);
        put_occupancy(out, pid, s, &t, l, origin);
    }
    fputs("\n],\"otherData\":{\"generator\":\"vtpin report --format perfetto\"", out);
    if (s->has_time && recording_unix_ns(s, origin, &origin_unix) == 0)
        fprintf(out, ",\"time_origin_unix_ns\":\"%" PRId64 "\"", origin_unix);
    fprintf(out, ",\"pid\":\"%" PRId64 "\"", pid);
    if (s->java_version)
        put_kv_string(out, "java_version", s->java_version);
    if (s->host)
        put_kv_string(out, "host", s->host);
    fputs("}}\n", out);
    timeline_fini(&t);
    if (fflush(out) || ferror(out))
        return -EIO;
    return 0;
}
