/* The JSON report: the contract documented in docs/report-json.md. Every
 * field is always present; what the recording does not say is null. */
#include "report.h"

#include <errno.h>

#include "common/blocker_text.h"
#include "common/frames_kind.h"
#include "common/json.h"
#include "kernel_join.h"
#include "pin_stream.h"
#include "sites.h"
#include "wire.h"

static void kv_unix_ns(struct json *j, const char *key, const struct recording_session *s, int have, int64_t mono)
{
    int64_t unix_ns;
    json_key(j, key);
    if (have && recording_unix_ns(s, mono, &unix_ns) == 0)
        json_int(j, unix_ns);
    else
        json_null(j);
}

/* dc: the pin whose culprit this frame is, when that culprit invoked an FFM downcall or a JNA function. */
static void put_frame(struct json *j, const struct recording_frame *f, const struct recording_downcall *dc)
{
    const struct recording_method *m = f->method;
    json_object_begin_inline(j);
    json_kv_string(j, "class", m->class_name);
    json_kv_string(j, "method", m->name);
    json_key(j, "line");
    if (f->line >= 0)
        json_int(j, f->line);
    else
        json_null(j);
    json_kv_bool(j, "native", m->is_native);
    json_kv_uint(j, "monitors", f->monitors);
    json_kv_string(j, "library", m->library);
    json_kv_string(j, "module", m->module);
    json_kv_string(j, "source", m->source_file);
    json_key(j, "bci");
    if (f->bci >= 0)
        json_int(j, f->bci);
    else
        json_null(j);
    json_kv_string(j, "kind", frames_kind_name(m->kind));
    json_key(j, "downcall");
    if (dc) {
        json_object_begin_inline(j);
        json_kv_string(j, "api", frames_api_name(dc->api));
        json_kv_string(j, "symbol", dc->symbol);
        json_kv_string(j, "library", dc->library);
        json_object_end(j);
    } else {
        json_null(j);
    }
    json_object_end(j);
}

static const struct recording_downcall *downcall_of(const struct recording_pin *p)
{
    return p && p->stack && p->has_culprit ? recording_pin_downcall(p) : NULL;
}

/* st's frames; p: the pin whose stack it is (its culprit's downcall), or NULL. */
static void put_frames(struct json *j, const struct recording_stack *st, const struct recording_pin *p)
{
    json_array_begin(j);
    for (uint32_t i = 0; st && i < st->count; i++)
        put_frame(j, &st->frames[i], p && i == p->culprit ? downcall_of(p) : NULL);
    json_array_end(j);
}

static void put_stack(struct json *j, const struct recording_pin *p)
{
    put_frames(j, p ? p->stack : NULL, p);
}

static void kv_index(struct json *j, const char *key, int has, uint32_t v)
{
    json_key(j, key);
    if (has)
        json_uint(j, v);
    else
        json_null(j);
}

static void put_jvm(struct json *j, const struct recording_session *s)
{
    json_key(j, "jvm");
    json_object_begin(j);
    json_key(j, "pid");
    if (s->has_hello)
        json_int(j, s->hello.pid);
    else
        json_null(j);
    session_hello_json(j, &s->hello); /* as the collector's status gives it */
    json_object_end(j);
}

static void put_recording(struct json *j, const struct recording *r, const struct recording_session *s,
                          const struct report_options *o)
{
    json_key(j, "recording");
    json_object_begin(j);
    json_kv_string(j, "file", r->path);
    kv_unix_ns(j, "start_unix_ns", s, s->hello.has_clock, s->hello.start_mono_ns);
    /* the pair's other half: a reader undoes the conversion to compare with CLOCK_MONOTONIC stamps */
    json_key(j, "start_mono_ns");
    if (s->hello.has_clock)
        json_int(j, s->hello.start_mono_ns);
    else
        json_null(j);
    kv_unix_ns(j, "end_unix_ns", s, s->has_time, s->last_ns);
    json_key(j, "duration_ns");
    if (s->has_time)
        json_int(j, recording_sat_sub(s->last_ns, s->first_ns));
    else
        json_null(j);
    json_kv_bool(j, "truncated", r->truncated);
    json_key(j, "truncated_at");
    if (r->truncated)
        json_uint(j, r->truncated_at);
    else
        json_null(j);
    json_kv_bool(j, "complete", s->has_goodbye && !r->truncated && !recording_write_failed(s));
    json_kv_bool(j, "write_failed", recording_write_failed(s) != NULL || recording_write_failed_probably(s));
    json_kv_bool(j, "disk_nearly_full", recording_disk_nearly_full(s) != NULL);
    json_kv_bool(j, "rotated", recording_rotated(s));
    json_kv_uint(j, "parts", s->parts);
    json_key(j, "damaged");
    if (r->damaged) {
        json_object_begin_inline(j);
        json_kv_uint(j, "offset", r->damaged_at);
        json_kv_uint(j, "bytes_skipped", r->damaged_bytes);
        json_object_end(j);
    } else {
        json_null(j);
    }
    json_kv_uint(j, "session", o->session + 1);
    json_kv_uint(j, "sessions", r->n_sessions);
    json_kv_uint(j, "events", s->events);
    json_kv_uint(j, "unknown_refs", s->unknown_refs);
    json_kv_uint(j, "unmatched_pin_ends", s->unmatched_ends);
    json_kv_uint(j, "duplicate_pin_events", s->duplicates);
    json_kv_uint(j, "unmatched_hog_ends", s->unmatched_hog_ends);
    json_kv_uint(j, "duplicate_hog_events", s->duplicate_hogs);
    json_kv_uint(j, "pins_split", s->pins_split);
    json_kv_uint(j, "pins_sampled", s->pins_sampled);
    json_kv_uint(j, "pins_bounded", s->pins_bounded);
    json_object_end(j);
}

/* "kernel": what the collector's kernel view saw during the pin (kernel_join.h: k, and its parks
 * indexed from k->first_park), or null (k NULL). */
static void put_kernel(struct json *j, const struct recording_session *s, const struct recording_pin_kernel *k,
                       const size_t *parks)
{
    if (!k) {
        json_kv_null(j, "kernel");
        return;
    }
    const struct recording_kinterval *main = &s->kintervals[k->main];
    json_key(j, "kernel");
    json_object_begin_inline(j);
    json_kv_string(j, "state", wire_kernel_state_name(main->state));
    json_kv_string(j, "syscall", main->syscall_name);
    json_key(j, "syscall_nr");
    if (main->has_syscall)
        json_int(j, main->syscall);
    else
        json_null(j);
    json_key(j, "stack");
    json_array_begin_inline(j);
    for (size_t i = 0; i < main->n_stack; i++)
        json_string(j, main->stack[i]);
    json_array_end(j);
    json_kv_int(j, "off_cpu_ns", k->off_cpu_ns);
    json_kv_int(j, "runqueue_ns", k->runqueue_ns);
    json_kv_uint(j, "intervals", k->intervals);
    /* "parks": [{"start_ns", "duration_ns", "state"}]: the sleeps in it, whole and exact (after attach a
     * sampled pin can cover several back-to-back parks, and these are they) */
    json_key(j, "parks");
    json_array_begin(j);
    for (size_t i = 0; i < k->n_parks; i++) {
        const struct recording_kinterval *park = &s->kintervals[parks[k->first_park + i]];
        json_object_begin_inline(j);
        kv_unix_ns(j, "start_ns", s, 1, park->start_ns);
        json_kv_int(j, "duration_ns", park->end_ns - park->start_ns);
        json_kv_string(j, "state", wire_kernel_state_name(park->state));
        if (park->has_java) {
            json_kv_int(j, "vthread_id", park->vthread_id);
            json_kv_string(j, "java_wait", wire_java_wait_name(park->java_wait));
        }
        json_object_end(j);
    }
    json_array_end(j);
    json_object_end(j);
}

/* The held sleep least covered by pins: {"start_ns", "duration_ns", "outside_pins_ns", "state", "syscall",
 * "vthread_id", "java_wait", "stack"}. */
static void put_unexplained(struct json *j, const struct recording_session *s, const struct recording_kinterval *k,
                            int64_t outside)
{
    json_object_begin_inline(j);
    kv_unix_ns(j, "start_ns", s, 1, k->start_ns);
    json_kv_int(j, "duration_ns", k->end_ns - k->start_ns);
    json_kv_int(j, "outside_pins_ns", outside);
    json_kv_string(j, "state", wire_kernel_state_name(k->state));
    json_kv_string(j, "syscall", k->syscall_name);
    json_kv_int(j, "vthread_id", k->vthread_id);
    json_kv_string(j, "java_wait", wire_java_wait_name(k->java_wait));
    json_key(j, "stack");
    json_array_begin_inline(j);
    for (size_t i = 0; i < k->n_stack; i++)
        json_string(j, k->stack[i]);
    json_array_end(j);
    json_object_end(j);
}

/* "kernel_times": {"time_ns": ..., "carriers": [{"tid", "name", "on_cpu_ns", "off_cpu_ns", "runqueue_ns",
 * "held_ns", "held_in_pins_ns", "unexplained"}]} of the session, or null without a collector's kernel view. */
static void put_kernel_times(struct json *j, const struct recording_session *s)
{
    json_key(j, "kernel_times");
    if (!s->ktimes) {
        json_null(j);
        return;
    }
    json_object_begin(j);
    kv_unix_ns(j, "time_ns", s, 1, s->ktimes_ns);
    json_key(j, "carriers");
    json_array_begin(j);
    for (size_t i = 0; i < s->n_ktimes; i++) {
        const struct recording_ktimes *k = &s->ktimes[i];
        const struct recording_held *h = s->held ? &s->held[i] : NULL;
        json_object_begin_inline(j);
        json_kv_int(j, "tid", k->carrier_tid);
        json_kv_string(j, "name", recording_carrier_name(s, k->carrier_tid));
        json_kv_uint(j, "on_cpu_ns", k->on_cpu_ns);
        json_kv_uint(j, "off_cpu_ns", k->off_cpu_ns);
        json_kv_uint(j, "runqueue_ns", k->runqueue_ns);
        if (h && h->known) {
            json_kv_int(j, "held_ns", h->held_ns);
            json_kv_int(j, "held_in_pins_ns", h->in_pins_ns);
        } else {
            json_kv_null(j, "held_ns");
            json_kv_null(j, "held_in_pins_ns");
        }
        json_key(j, "unexplained");
        if (h && h->known && h->has_worst)
            put_unexplained(j, s, &s->kintervals[h->worst], h->worst_outside_ns);
        else
            json_null(j);
        json_object_end(j);
    }
    json_array_end(j);
    json_object_end(j);
}

/* What a blocker (or a hop of its chain) waits for: what, object_class, thread {name, id, virtual,
 * carrier} or null, state. */
static void put_hop(struct json *j, const struct recording_hop *h)
{
    json_kv_string(j, "what", blocker_kind_name(h->what));
    json_kv_string(j, "object_class", h->object_class);
    json_key(j, "thread");
    if (h->has_thread) {
        json_object_begin_inline(j);
        json_kv_string(j, "name", h->thread_name);
        json_kv_int(j, "id", h->thread_id);
        json_kv_bool(j, "virtual", h->is_virtual);
        json_kv_string(j, "carrier", h->carrier_name);
        json_object_end(j);
    } else {
        json_null(j);
    }
    json_kv_string(j, "state", h->state[0] ? h->state : NULL);
}

/* What the pin waits for (PinStart.blocker): {what, object_class, thread, state, stack, pin, chain}, or
 * null; chain: what the owner itself waits for, hop by hop, each {what, object_class, thread, state}. */
static void put_blocker(struct json *j, const struct recording_session *s, const struct recording_pin *p)
{
    const struct recording_blocker *b = recording_pin_blocker(p);
    json_key(j, "blocker");
    if (!b) {
        json_null(j);
        return;
    }
    json_object_begin(j);
    put_hop(j, &b->head);
    json_key(j, "pin");
    if (b->pin)
        json_uint(j, b->pin);
    else
        json_null(j);
    json_key(j, "stack");
    put_frames(j, b->stack, NULL);
    json_key(j, "chain");
    json_array_begin(j);
    for (uint32_t i = 0; i < b->n_chain; i++) {
        json_object_begin_inline(j);
        put_hop(j, &s->blocker_hops[b->chain_at + i]);
        json_object_end(j);
    }
    json_array_end(j);
    json_object_end(j);
}

/* Pin p; k and parks: its join (put_kernel). */
static void put_pin(struct json *j, const struct recording_session *s, const struct recording_pin *p,
                    const struct recording_pin_kernel *k, const size_t *parks)
{
    json_object_begin(j);
    json_kv_uint(j, "id", p->id);
    json_kv_string(j, "reason", wire_reason_name(p->reason));
    json_kv_string(j, "jdk_reason", p->jdk_reason);
    json_kv_string(j, "origin", frames_origin_name(p->origin));
    json_key(j, "split_from");
    if (p->split_from)
        json_uint(j, p->split_from);
    else
        json_null(j);
    json_kv_string(j, "timed_by", p->timed_by_kernel ? "kernel" : "agent");
    json_key(j, "vthread");
    json_object_begin_inline(j);
    json_key(j, "id");
    if (p->has_vthread_id)
        json_int(j, p->vthread_id);
    else
        json_null(j);
    json_kv_string(j, "name", p->vthread_name);
    json_object_end(j);
    json_key(j, "carrier");
    json_object_begin_inline(j);
    json_kv_string(j, "name", p->carrier_name);
    json_key(j, "tid");
    if (p->has_carrier_tid)
        json_int(j, p->carrier_tid);
    else
        json_null(j);
    json_object_end(j);
    kv_unix_ns(j, "start_ns", s, 1, p->start_ns);
    json_key(j, "duration_ns");
    if (p->ended)
        json_int(j, p->duration_ns);
    else
        json_null(j);
    json_kv_bool(j, "ongoing", !p->ended);
    json_kv_string(j, "blocked_in", p->blocked_in);
    put_kernel(j, s, k, parks);
    json_key(j, "culprit");
    if (p->has_culprit)
        json_uint(j, p->culprit);
    else
        json_null(j);
    kv_index(j, "blocking_frame", p->has_blocking, p->blocking);
    json_key(j, "stack_id");
    if (p->stack)
        json_uint(j, p->stack->id);
    else
        json_null(j);
    json_kv_bool(j, "stack_truncated", p->stack && p->stack->truncated);
    put_blocker(j, s, p);
    json_key(j, "stack");
    put_stack(j, p);
    json_object_end(j);
}

struct pin_writer {
    struct json *j;
    const struct recording_session *s;
    struct kernel_join_one *kernel; /* the session's kernel view: each pin joined as it comes; NULL: none */
};

static int put_pin_streamed(const struct recording_pin *p, void *arg)
{
    const struct pin_writer *w = arg;
    const size_t *parks = NULL;
    const struct recording_pin_kernel *k = w->kernel ? kernel_join_one(w->kernel, p, &parks) : NULL;
    put_pin(w->j, w->s, p, k, parks);
    return 0;
}

/* A carrier hog: its fields written as a pin's are (times, thread, carrier, frames). */
static void put_hog(struct json *j, const struct recording_session *s, const struct recording_hog *h)
{
    json_object_begin(j);
    json_kv_uint(j, "id", h->id);
    json_key(j, "vthread");
    json_object_begin_inline(j);
    json_key(j, "id");
    if (h->has_vthread_id)
        json_int(j, h->vthread_id);
    else
        json_null(j);
    json_kv_string(j, "name", h->vthread_name);
    json_object_end(j);
    json_key(j, "carrier");
    json_object_begin_inline(j);
    json_kv_string(j, "name", h->carrier_name);
    json_key(j, "tid");
    if (h->has_carrier_tid)
        json_int(j, h->carrier_tid);
    else
        json_null(j);
    json_object_end(j);
    kv_unix_ns(j, "start_ns", s, 1, h->start_ns);
    kv_unix_ns(j, "end_ns", s, h->ended, h->end_ns);
    json_key(j, "duration_ns");
    if (h->ended)
        json_int(j, h->duration_ns);
    else
        json_null(j);
    json_kv_bool(j, "ongoing", !h->ended);
    kv_unix_ns(j, "last_running_ns", s, h->ended && h->last_running_ns, h->last_running_ns);
    json_key(j, "culprit");
    if (h->has_culprit)
        put_frame(j, &h->stack->frames[h->culprit], NULL);
    else
        json_null(j);
    json_key(j, "stack");
    put_frames(j, h->stack, NULL);
    json_kv_bool(j, "seen_unmounting", recording_hog_seen_unmounting(h));
    json_object_end(j);
}

static void put_site(struct json *j, const struct site *site)
{
    json_object_begin(j);
    json_kv_string(j, "origin", frames_origin_name(site->origin));
    json_kv_string(j, "reason", wire_reason_name(site->reason));
    json_key(j, "culprit");
    if (site->culprit)
        put_frame(j, site->culprit, downcall_of(site->example));
    else
        json_null(j);
    kv_index(j, "blocking_frame", site->example->stack && site->example->has_blocking, site->example->blocking);
    json_kv_uint(j, "count", site->count);
    json_kv_int(j, "total_ns", site->total_ns);
    json_kv_int(j, "max_ns", site->max_ns);
    json_kv_uint(j, "ongoing", site->ongoing);
    json_kv_uint(j, "distinct_stacks", site->distinct_stacks);
    json_kv_uint(j, "example_pin", site->example->id);
    json_key(j, "stack");
    put_stack(j, site->example);
    json_object_end(j);
}

static void put_stats(struct json *j, const struct recording_session *s)
{
    json_key(j, "stats");
    if (!s->stats.has) {
        json_null(j);
        return;
    }
    json_object_begin(j);
    kv_unix_ns(j, "time_ns", s, 1, s->stats.msg.time_ns);
    json_kv_bool(j, "final", s->has_goodbye);
    session_stats_json(j, &s->stats); /* every counter by its name in the schema */
    json_object_end(j);
}

int report_json(FILE *out, const struct recording *r, const struct report_options *o)
{
    const struct recording_session *s = r->sessions[o->session];
    struct sites sites;
    struct json j;
    int rc = sites_build(s, &sites);
    if (rc)
        return rc;
    json_init(&j, out);
    json_object_begin(&j);
    json_kv_string(&j, "schema", REPORT_JSON_SCHEMA);
    put_jvm(&j, s);
    json_key(&j, "threshold_ns");
    if (s->hello.has_threshold)
        json_uint(&j, s->hello.threshold_ns);
    else
        json_null(&j);
    put_recording(&j, r, s, o);

    json_key(&j, "pins");
    json_array_begin(&j);
    if (s->pins_folded) { /* a long session: its pins read again, one at a time */
        struct pin_writer w = {&j, s, NULL};
        char err[512];
        if ((s->n_kintervals && (rc = kernel_join_one_new(s, &w.kernel))) ||
            (rc = pin_stream(r, o->session, put_pin_streamed, &w, err, sizeof(err)))) {
            if (rc != -ENOMEM)
                fprintf(stderr, "vtpin report: %s\n", err);
            kernel_join_one_free(w.kernel);
            sites_fini(&sites);
            return rc;
        }
        kernel_join_one_free(w.kernel);
    } else {
        for (size_t i = 0; i < s->n_pins; i++)
            put_pin(&j, s, &s->pins[i], kernel_joined_pin(s, &s->pins[i]), s->kparks);
    }
    json_array_end(&j);

    json_key(&j, "hogs");
    json_array_begin(&j);
    for (size_t i = 0; i < s->n_hogs; i++)
        put_hog(&j, s, &s->hogs[i]);
    json_array_end(&j);

    json_key(&j, "sites");
    json_array_begin(&j);
    size_t shown = o->top && o->top < sites.count ? o->top : sites.count;
    for (size_t i = 0; i < shown; i++)
        put_site(&j, &sites.items[i]);
    json_array_end(&j);
    json_kv_uint(&j, "sites_total", sites.count);

    /* the deadlocks the agent found live, also among the notices (docs/deadlocks.md) */
    json_key(&j, "deadlocks");
    json_array_begin(&j);
    for (size_t i = 0; i < s->n_notices; i++) {
        const struct recording_notice *n = &s->notices[i];
        const char *kind = recording_deadlock_kind(n);
        if (!kind)
            continue;
        json_object_begin_inline(&j);
        json_kv_string(&j, "kind", kind);
        json_kv_string(&j, "text", n->text);
        kv_unix_ns(&j, "time_ns", s, 1, n->time_ns);
        json_object_end(&j);
    }
    json_array_end(&j);

    json_key(&j, "notices");
    json_array_begin(&j);
    for (size_t i = 0; i < s->n_notices; i++) {
        const struct recording_notice *n = &s->notices[i];
        json_object_begin_inline(&j);
        json_kv_string(&j, "severity", wire_severity_name(n->severity));
        json_kv_string(&j, "code", n->code);
        json_kv_string(&j, "text", n->text);
        kv_unix_ns(&j, "time_ns", s, 1, n->time_ns);
        json_object_end(&j);
    }
    json_array_end(&j);

    put_stats(&j, s);
    put_kernel_times(&j, s);
    json_object_end(&j);
    sites_fini(&sites);
    return json_finish(&j);
}
