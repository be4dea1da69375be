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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "pin_stream.h"
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

/* ---- a long session's pins (summed up as read: pin_groups.h), read again ----
 *
 * Its pins come again from the file (pin_stream.h). Each lane's events go to a temporary file of its
 * own as they come, written by a copy of the trace's writer where the lanes begin (every event there
 * has the same comma and indent); then come each lane's file, hogs and occupancy, in lane order. A
 * lane's pins must come in start order, as the agent writes them: a file whose do not, or a session of
 * more than PERFETTO_LANE_FILES carriers, is read again whole. */
#define PERFETTO_LANE_FILES 256

struct lane_files {
    const struct recording_session *s;
    const struct timeline *t;
    struct json at; /* the trace's writer where the lanes begin */
    int64_t pid, origin;
    FILE **files;  /* one per lane */
    int64_t *last; /* the last start of each lane's pins */
    unsigned char *any;
    size_t last_lane; /* the lane of the last pin */
};

static int lane_pin(const struct recording_pin *p, void *arg)
{
    struct lane_files *lf = arg;
    const struct timeline *t = lf->t;
    size_t li = timeline_lane_of(t, p->has_carrier_tid, p->carrier_tid, &lf->last_lane);
    if (li == t->n_lanes)
        return 0; /* no lane: left off the trace, as timeline_build leaves it */
    if (lf->any[li] && p->start_ns < lf->last[li])
        return -EAGAIN; /* out of start order: the lane kept whole orders it */
    lf->any[li] = 1;
    lf->last[li] = p->start_ns;
    struct json j = lf->at;
    j.out = lf->files[li];
    put_pin(&j, lf->pid, lf->s, &t->lanes[li], p, lf->origin);
    return ferror(lf->files[li]) ? -EIO : 0;
}

static void lane_files_fini(struct lane_files *lf)
{
    for (size_t i = 0; lf->files && i < lf->t->n_lanes; i++)
        if (lf->files[i])
            fclose(lf->files[i]);
    free(lf->files);
    free(lf->last);
    free(lf->any);
}

/* s's pins read again into a file per lane. 0, -EAGAIN (read it again whole), or -errno. */
static int lanes_to_files(struct lane_files *lf, const struct json *at, const struct recording *r, size_t session,
                          const struct timeline *t, int64_t pid, int64_t origin)
{
    *lf = (struct lane_files){.s = r->sessions[session], .t = t, .at = *at, .pid = pid, .origin = origin};
    if (t->n_lanes > PERFETTO_LANE_FILES)
        return -EAGAIN;
    size_t n = t->n_lanes ? t->n_lanes : 1;
    if (!(lf->files = calloc(n, sizeof(*lf->files))) || !(lf->last = calloc(n, sizeof(*lf->last))) ||
        !(lf->any = calloc(n, 1)))
        return -ENOMEM;
    for (size_t i = 0; i < t->n_lanes; i++)
        if (!(lf->files[i] = tmpfile()))
            return -errno;
    char err[512];
    int rc = pin_stream(r, session, lane_pin, lf, err, sizeof(err));
    if (rc && rc != -EAGAIN)
        fprintf(stderr, "vtpin report: %s\n", err);
    return rc;
}

static int copy_file(FILE *from, FILE *to)
{
    char buf[1 << 16];
    size_t n;
    if (fflush(from) || fseek(from, 0, SEEK_SET))
        return -errno;
    while ((n = fread(buf, 1, sizeof(buf), from)) > 0)
        if (fwrite(buf, 1, n, to) != n)
            return -EIO;
    return ferror(from) ? -EIO : 0;
}

static int report_perfetto_whole(FILE *out, const struct recording *r, const struct report_options *o);

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
    struct lane_files lf = {0};
    char *head = NULL;
    size_t head_len = 0;
    FILE *head_out = open_memstream(&head, &head_len); /* nothing written before the lanes are read */
    if (!head_out) {
        timeline_fini(&t);
        return -ENOMEM;
    }

    struct json j;
    json_init(&j, head_out);
    json_object_begin(&j);
    json_kv_string(&j, "displayTimeUnit", "ms");
    json_key(&j, "traceEvents");
    json_array_begin(&j);
    put_metadata(&j, pid, s, &t);
    if (s->pins_folded && (rc = lanes_to_files(&lf, &j, r, o->session, &t, pid, origin))) {
        fclose(head_out);
        free(head);
        lane_files_fini(&lf);
        timeline_fini(&t);
        return rc == -EAGAIN ? report_perfetto_whole(out, r, o) : rc;
    }
    rc = fclose(head_out) ? -ENOMEM : 0;
    if (!rc && fwrite(head, 1, head_len, out) != head_len)
        rc = -EIO;
    free(head);
    j.out = out;
    for (size_t i = 0; i < t.n_lanes && !rc; i++) {
        const struct lane *l = &t.lanes[i];
        if (lf.files)
            rc = copy_file(lf.files[i], out);
        for (size_t k = 0; k < l->n_pins && !lf.files; k++)
            put_pin(&j, pid, s, l, &s->pins[l->pins[k]], origin);
        for (size_t k = 0; k < l->n_hogs; k++)
            put_hog(&j, pid, s, l, &s->hogs[l->hogs[k]], origin);
        put_occupancy(&j, pid, s, &t, l, origin);
    }
    lane_files_fini(&lf);
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
    int finished = json_finish(&j);
    timeline_fini(&t);
    return rc ? rc : finished;
}

/* The session shown read again whole (not summed up), its passes run, and written from that. */
static int report_perfetto_whole(FILE *out, const struct recording *r, const struct report_options *o)
{
    struct recording_plan whole = {.keep = o->session + 1};
    struct recording *again = NULL;
    char err[512];
    int rc = recording_load_again(r, &whole, &again, err, sizeof(err));
    if (rc) {
        fprintf(stderr, "vtpin report: %s\n", err);
        return rc;
    }
    if (again->n_sessions <= o->session || again->sessions[o->session]->pins_folded)
        rc = -EIO;
    else if (!(rc = report_session_passes(again->sessions[o->session])))
        rc = report_perfetto(out, again, o);
    recording_free(again);
    return rc;
}
