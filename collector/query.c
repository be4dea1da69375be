#include "query.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "common/json.h"
#include "kglue.h"
#include "zerotouch.h"

const char *query_state_name(int state)
{
    switch (state) {
    case CARRIER_RUNNING:
        return "running";
    case CARRIER_PINNED:
        return "pinned";
    case CARRIER_NATIVE_BLOCK:
        return "native_block";
    case CARRIER_HOG:
        return "hog";
    default:
        return "idle";
    }
}

/* A percentage with one decimal. json.h has no floating-point values: the key
 * leaves the writer expecting a value, which we write and then mark written. */
static void kv_pct(struct json *j, const char *key, double v)
{
    if (!(v >= 0))
        v = 0;
    if (v > 100)
        v = 100;
    json_key(j, key);
    fprintf(j->out, "%.1f", v);
    j->after_key = 0;
}

/* A Hello string: null when the agent did not say. */
static void kv_text(struct json *j, const char *key, const char *s)
{
    json_kv_string(j, key, s && *s ? s : NULL);
}

/* The carriers of j at its clock; NULL with *n = 0 when there are none or no memory. */
static struct carrier_view *views_of(struct jvm *j, int64_t clock, size_t *n)
{
    occupancy_advance(j->occ, clock);
    *n = occupancy_view(j->occ, NULL, 0);
    if (*n == 0)
        return NULL;
    struct carrier_view *v = calloc(*n, sizeof(*v));
    if (!v) {
        *n = 0;
        return NULL;
    }
    occupancy_view(j->occ, v, *n);
    return v;
}

static void alert_object(struct json *js, struct jvm *j, const struct jvms_config *cfg, int64_t clock)
{
    /* held and total as of now; active as raised by the collector's last tick */
    struct alert_state now_state = j->alert;
    occupancy_alert_check(j->occ, &cfg->alert, clock, &now_state);
    json_key(js, "alert");
    json_object_begin_inline(js);
    json_kv_bool(js, "active", j->alert_active);
    json_kv_uint(js, "held", now_state.held);
    json_kv_uint(js, "total", now_state.total);
    json_object_end(js);
}

/* Per-carrier kernel times of j ("kernel_carriers"), when the kernel view is on. */
static void kernel_carriers(struct json *js, struct kglue *k, struct jvm *j, const struct carrier_view *v, size_t n,
                            int64_t now)
{
    json_key(js, "kernel_carriers");
    json_array_begin(js);
    for (size_t i = 0; k && kglue_enabled(k) && i < n; i++) {
        json_object_begin_inline(js);
        json_kv_string(js, "name", v[i].name);
        json_kv_int(js, "tid", v[i].tid);
        kglue_carrier_json(k, js, j->live ? j->owner : NULL, v[i].tid, now);
        json_object_end(js);
    }
    json_array_end(js);
}

/* A carrier blocked as the kernel sees it, before any pin says so: asleep for
 * QUERY_BLOCKED_NS with a virtual thread mounted and no pin in progress, where
 * the mount was seen after the carrier fell asleep (a sample taken during the
 * sleep). An unpinned virtual thread unmounts before it parks, so its carrier
 * only sleeps mounted when blocked in native code or inside the JVM. A sample
 * is the proof: a stale mount (the unmount not heard of yet) is no block, and a
 * safepoint or GC pause (which stops every thread) is not one either: the
 * sampler's JVMTI calls wait for it to end, so its sample arrives when the
 * carriers run again. Only the sampled source raises it (mounts precede sleeps). */
#define QUERY_BLOCKED_NS (20 * 1000000LL)

struct blocked {
    int64_t since;
    const char *state, *syscall;
};

static int carrier_blocked(struct kglue *k, struct jvm *j, const struct carrier_view *v, int64_t now, struct blocked *b)
{
    if (!j->live || v->state != CARRIER_RUNNING || !v->vthread_id)
        return 0;
    if (kglue_asleep(k, j->owner, v->tid, now, &b->since, &b->state, &b->syscall) != 1)
        return 0;
    return now - b->since >= QUERY_BLOCKED_NS && v->seen_at > b->since;
}

static size_t carriers_blocked(struct kglue *k, struct jvm *j, const struct carrier_view *v, size_t n, int64_t now)
{
    size_t blocked = 0;
    struct blocked b;
    for (size_t i = 0; i < n; i++)
        blocked += (size_t)carrier_blocked(k, j, &v[i], now, &b);
    return blocked;
}

/* Which source the JVM's occupancy figures come from, and the kernel's: the
 * kernel when the kernel view tracks its carriers (exact, no cost in the JVM),
 * else the agent's (exact: Mount/Unmount events; sampled: CarrierSample). */
static void occupancy_sources(struct json *js, struct kglue *k, struct jvm *j, const struct carrier_view *v, size_t n,
                              int64_t now)
{
    struct kglue_occ ko = {0};
    for (size_t i = 0; j->live && i < n; i++)
        kglue_occupancy_add(k, j->owner, v[i].tid, now, &ko);
    json_kv_string(js, "occupancy_source", ko.carriers ? "kernel" : wire_occupancy_name(j->hello.occupancy));
    kglue_occupancy_json(js, "kernel_occupancy", &ko);
}

/* The agent's occupancy totals of j, summed over its carriers (busy includes pinned and hogged). */
static void agent_occupancy(struct json *js, struct jvm *j, const struct carrier_view *v, size_t n)
{
    int64_t busy = 0, pinned = 0, idle = 0, hogged = 0;
    for (size_t i = 0; i < n; i++) {
        busy += v[i].busy_ns;
        pinned += v[i].pinned_ns;
        idle += v[i].idle_ns;
        hogged += v[i].hogged_ns;
    }
    json_key(js, "agent_occupancy");
    json_object_begin_inline(js);
    json_kv_string(js, "source", wire_occupancy_name(j->hello.occupancy));
    json_kv_int(js, "busy_ns", busy);
    json_kv_int(js, "pinned_ns", pinned);
    json_kv_int(js, "idle_ns", idle);
    json_kv_int(js, "hogged_ns", hogged);
    json_object_end(js);
}

/* "hogs_total" (reported over all connections) and "carriers_hogged" (hogs in progress now). */
static void hog_counts(struct json *js, const struct jvm *j, const struct carrier_view *v, size_t n)
{
    size_t hogged = 0;
    for (size_t i = 0; i < n; i++)
        hogged += v[i].state == CARRIER_HOG;
    json_kv_uint(js, "hogs_total", j->hogs_total);
    json_kv_uint(js, "carriers_hogged", hogged);
}

/* pid (the JVM's name), then ns_pid, pid_namespace, pid_source, pid_note. */
static void ident_fields(struct json *js, const struct jvm *j)
{
    json_kv_int(js, "pid", j->pid);
    json_kv_int(js, "ns_pid", j->ident.ns_pid);
    if (j->ident.pidns)
        json_kv_uint(js, "pid_namespace", j->ident.pidns);
    else
        json_kv_null(js, "pid_namespace");
    json_kv_string(js, "pid_source", j->ident.source == JVM_PID_PEER ? "peer" : "hello");
    json_kv_string(js, "pid_note", j->ident.source == JVM_PID_PEER ? NULL : j->ident.why);
    json_kv_uint(js, "uid", j->ident.uid);
}

/* "jvms_of_uid": the asker's uid when it sees only its own JVMs, else null. */
static void shown_jvms(struct json *js, const struct query_info *info)
{
    if (info->mine_only)
        json_kv_uint(js, "jvms_of_uid", info->asker_uid);
    else
        json_kv_null(js, "jvms_of_uid");
}

/* Whether j is in the answer: named by pid (0: any), and the asker's own unless it sees all. */
static int jvm_shown(const struct jvm *j, const struct query_info *info, int64_t pid)
{
    if (pid && j->pid != pid)
        return 0;
    return !info->mine_only || j->ident.uid == info->asker_uid;
}

/* "recording_error": null while the recording never stopped, else its latest stop. */
static void recording_error(struct json *js, const struct jvm *j, int64_t now)
{
    const struct rec_state *r = &j->rec;
    json_key(js, "recording_error");
    if (!r->stops) {
        json_null(js);
        return;
    }
    json_object_begin_inline(js);
    json_kv_bool(js, "active", r->error != 0);
    json_kv_string(js, "error", strerror(-r->last_error));
    json_kv_int(js, "errno", -r->last_error);
    json_kv_int(js, "since_unix_ns", r->stopped_unix_ns);
    int64_t end = r->error ? now : r->resumed_mono_ns;
    json_kv_int(js, "stopped_for_ns", end > r->stopped_mono_ns ? end - r->stopped_mono_ns : 0);
    if (r->error)
        json_kv_null(js, "resumed_unix_ns");
    else
        json_kv_int(js, "resumed_unix_ns", r->resumed_unix_ns);
    json_kv_uint(js, "stops", r->stops);
    json_kv_uint(js, "frames_lost", r->frames_lost);
    json_kv_uint(js, "bytes_lost", r->bytes_lost);
    json_object_end(js);
}

/* The last deadlock the agent found live, while the JVM has pins in progress (a deadlock's pins
 * never end; once none is left, it is over): null otherwise. */
static void deadlock_object(struct json *js, const struct jvm *j, size_t pinned, int64_t clock)
{
    json_key(js, "deadlock");
    if (!j->deadlock.count || !pinned) {
        json_null(js);
        return;
    }
    json_object_begin_inline(js);
    json_kv_string(js, "kind", j->deadlock.kind);
    json_kv_string(js, "text", j->deadlock.text);
    json_kv_int(js, "for_ns", clock > j->deadlock.at ? clock - j->deadlock.at : 0);
    json_kv_uint(js, "found", j->deadlock.count);
    json_object_end(js);
}

static size_t pinned_carriers(const struct carrier_view *v, size_t n)
{
    size_t pinned = 0;
    for (size_t i = 0; i < n; i++)
        pinned += v[i].state == CARRIER_PINNED || v[i].state == CARRIER_NATIVE_BLOCK;
    return pinned;
}

static void status_jvm(struct json *js, struct jvm *j, const struct jvms_config *cfg, struct kglue *k, int64_t now)
{
    int64_t clock = jvm_clock(j, now);
    size_t n = 0;
    struct carrier_view *v = views_of(j, clock, &n);
    size_t pinned = pinned_carriers(v, n);
    const struct session_hello *h = &j->hello;
    json_object_begin(js);
    ident_fields(js, j);
    session_hello_json(js, h); /* as the report's "jvm" gives it */
    json_kv_int(js, "start_unix_ns", j->start_unix_ns);
    json_kv_bool(js, "connected", j->live > 0);
    if (j->live)
        json_kv_null(js, "disconnected_for_ns");
    else
        json_kv_int(js, "disconnected_for_ns", now - j->disconnected_at);
    json_kv_uint(js, "connections", j->connections);
    json_kv_uint(js, "connection", h->connection);
    json_kv_string(js, "recording", j->recording);
    json_kv_uint(js, "recording_rotations", j->rec.rotations);
    recording_error(js, j, now);
    json_kv_string(js, "occupancy", wire_occupancy_name(h->occupancy));
    occupancy_sources(js, k, j, v, n, now);
    agent_occupancy(js, j, v, n);
    json_kv_uint(js, "carriers", n);
    json_kv_uint(js, "pins_in_progress", pinned);
    json_kv_uint(js, "pins_total", j->pins_total);
    json_kv_uint(js, "memory_bytes", j->charged); /* its tables, charged to --memory-budget */
    hog_counts(js, j, v, n);
    json_kv_uint(js, "carriers_blocked", carriers_blocked(k, j, v, n, now));
    alert_object(js, j, cfg, clock);
    deadlock_object(js, j, pinned, clock);
    json_key(js, "drops");
    json_object_begin_inline(js);
    json_kv_uint(js, "events_dropped", j->stats.msg.events_dropped);
    json_kv_uint(js, "collector_dropped", j->stats.msg.collector_dropped);
    json_kv_uint(js, "transitions_dropped", j->stats.msg.transitions_dropped);
    json_kv_uint(js, "stacks_dropped", j->stats.msg.stacks_dropped);
    json_kv_uint(js, "definitions_dropped", j->defs_dropped);
    json_kv_uint(js, "memory_dropped", j->budget_dropped);
    json_kv_uint(js, "carriers_dropped", occupancy_carriers_dropped(j->occ));
    json_object_end(js);
    json_kv_uint(js, "reconnects", j->stats.msg.reconnects);
    json_key(js, "agent_cost"); /* what the agent says it costs (docs/agent.md) */
    if (j->stats.msg.has_agent_cpu_ns) {
        json_object_begin_inline(js);
        json_kv_uint(js, "cpu_ns", j->stats.msg.agent_cpu_ns);
        json_kv_uint(js, "jvmti_calls", session_stats_jvmti_total(&j->stats));
        json_object_end(js);
    } else {
        json_null(js);
    }
    json_key(js, "stats"); /* every counter of the agent's latest Stats, as the report's "stats" has them */
    if (j->stats.has) {
        json_object_begin(js);
        session_stats_json(js, &j->stats);
        json_object_end(js);
    } else {
        json_null(js);
    }
    kernel_carriers(js, k, j, v, n, now);
    free(v);
    json_object_end(js);
}

static void top_jvm(struct json *js, struct jvm *j, const struct jvms_config *cfg, struct kglue *k, int64_t now)
{
    int64_t clock = jvm_clock(j, now);
    size_t n = 0;
    struct carrier_view *v = views_of(j, clock, &n);
    json_object_begin(js);
    ident_fields(js, j);
    kv_text(js, "java_version", j->hello.java_version);
    json_kv_bool(js, "connected", j->live > 0);
    json_kv_string(js, "occupancy", wire_occupancy_name(j->hello.occupancy));
    occupancy_sources(js, k, j, v, n, now);
    hog_counts(js, j, v, n);
    json_kv_uint(js, "carriers_blocked", carriers_blocked(k, j, v, n, now));
    alert_object(js, j, cfg, clock);
    deadlock_object(js, j, pinned_carriers(v, n), clock);
    recording_error(js, j, now);
    json_key(js, "carriers");
    json_array_begin(js);
    for (size_t i = 0; i < n; i++) {
        const struct carrier_view *c = &v[i];
        int pinned = c->state == CARRIER_PINNED || c->state == CARRIER_NATIVE_BLOCK;
        int hog = c->state == CARRIER_HOG;
        json_object_begin_inline(js);
        json_kv_string(js, "name", c->name);
        json_kv_int(js, "tid", c->tid);
        json_kv_string(js, "state", query_state_name(c->state));
        if (c->vthread_id)
            json_kv_int(js, "vthread", c->vthread_id);
        else
            json_kv_null(js, "vthread");
        if (pinned && c->pinned_since)
            json_kv_int(js, "pinned_for_ns", clock > c->pinned_since ? clock - c->pinned_since : 0);
        else
            json_kv_null(js, "pinned_for_ns");
        if (hog && c->hogged_since)
            json_kv_int(js, "hogged_for_ns", clock > c->hogged_since ? clock - c->hogged_since : 0);
        else
            json_kv_null(js, "hogged_for_ns");
        json_kv_string(js, "reason", pinned ? wire_reason_name(c->reason) : NULL);
        json_kv_string(js, "culprit", (pinned || hog) && c->culprit && *c->culprit ? c->culprit : NULL);
        json_kv_string(js, "blocker", pinned ? c->blocker : NULL);
        kv_pct(js, "busy_pct", c->busy_pct);
        kv_pct(js, "pinned_pct", c->pinned_pct);
        kv_pct(js, "idle_pct", c->idle_pct);
        json_kv_uint(js, "mounts", c->mounts);
        struct blocked b;
        if (carrier_blocked(k, j, c, now, &b)) {
            json_key(js, "blocked");
            json_object_begin_inline(js);
            json_kv_int(js, "for_ns", now - b.since);
            json_kv_string(js, "state", b.state);
            json_kv_string(js, "syscall", b.syscall);
            json_object_end(js);
        } else {
            json_kv_null(js, "blocked");
        }
        kglue_carrier_json(k, js, j->live ? j->owner : NULL, c->tid, now); /* null without the kernel view */
        json_object_end(js);
    }
    json_array_end(js);
    json_object_end(js);
    free(v);
}

int query_json(struct jvms *r, const struct query_info *info, int kind, int64_t pid, int64_t now, char **json,
               size_t *len)
{
    if (kind != VTPIN__V1__QUERY__KIND__STATUS && kind != VTPIN__V1__QUERY__KIND__TOP)
        return -EINVAL;
    char *buf = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&buf, &size);
    if (!out)
        return -ENOMEM;
    const struct jvms_config *cfg = jvms_config(r);
    struct json js;
    json_init(&js, out);
    json_object_begin(&js);
    if (kind == VTPIN__V1__QUERY__KIND__STATUS) {
        json_key(&js, "collector");
        json_object_begin(&js);
        json_kv_int(&js, "pid", info->pid);
        json_kv_string(&js, "version", info->version);
        json_kv_string(&js, "socket", info->socket);
        json_kv_string(&js, "dir", info->dir);
        json_kv_int(&js, "uptime_ns", now - info->started_ns);
        json_kv_uint(&js, "clients", info->clients);
        json_key(&js, "memory");
        json_object_begin_inline(&js);
        json_kv_uint(&js, "budget_bytes", info->memory_budget);
        json_kv_uint(&js, "used_bytes", info->memory_used);
        json_kv_uint(&js, "peak_bytes", info->memory_peak);
        json_kv_uint(&js, "dropped", info->memory_dropped);
        json_object_end(&js);
        json_key(&js, "alert_rule");
        json_object_begin_inline(&js);
        json_kv_uint(&js, "k", cfg->alert.k);
        json_kv_int(&js, "hold_ns", cfg->alert.hold_ns);
        json_object_end(&js);
        json_kv_int(&js, "window_ns", cfg->window_ns);
        json_key(&js, "allow");
        json_object_begin_inline(&js);
        json_key(&js, "uids");
        json_array_begin_inline(&js);
        for (size_t i = 0; info->allow && i < info->allow->nuids; i++)
            json_uint(&js, info->allow->uids[i]);
        json_array_end(&js);
        json_key(&js, "gids");
        json_array_begin_inline(&js);
        for (size_t i = 0; info->allow && i < info->allow->ngids; i++)
            json_uint(&js, info->allow->gids[i]);
        json_array_end(&js);
        json_kv_bool(&js, "see_all", info->allow && info->allow->see_all);
        json_object_end(&js);
        json_kv_uint(&js, "peers_refused", info->peers_refused);
        shown_jvms(&js, info);
        kglue_status_json(info->kernel, &js, now); /* null when the caller has no kernel view at all */
        zerotouch_status_json(info->zero_touch, &js, info->mine_only, info->asker_uid);
        json_object_end(&js);
    } else {
        json_kv_int(&js, "window_ns", cfg->window_ns);
        shown_jvms(&js, info);
    }
    json_key(&js, "jvms");
    json_array_begin(&js);
    for (struct jvm *j = jvms_first(r); j; j = j->next) {
        if (!jvm_shown(j, info, pid))
            continue;
        if (kind == VTPIN__V1__QUERY__KIND__STATUS)
            status_jvm(&js, j, cfg, info->kernel, now);
        else
            top_jvm(&js, j, cfg, info->kernel, now);
    }
    json_array_end(&js);
    json_object_end(&js);
    int rc = json_finish(&js);
    if (fclose(out) != 0 && !rc)
        rc = -ENOMEM;
    if (rc) {
        free(buf);
        return rc;
    }
    *json = buf;
    *len = size;
    return 0;
}

int query_reply(struct jvms *r, const struct query_info *info, const Vtpin__V1__Query *q, int64_t now, uint8_t **frame,
                size_t *len)
{
    char *json = NULL;
    size_t json_len = 0;
    int rc = query_json(r, info, (int)q->kind, q->has_pid ? q->pid : 0, now, &json, &json_len);
    if (rc)
        return rc;
    Vtpin__V1__QueryReply reply = VTPIN__V1__QUERY_REPLY__INIT;
    reply.json = json;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_QUERY_REPLY;
    ev.query_reply = &reply;
    size_t size = wire_packed_size(&ev);
    uint8_t *buf = malloc(size);
    if (!buf) {
        free(json);
        return -ENOMEM;
    }
    ssize_t n = wire_pack(&ev, buf, size, QUERY_MAX_REPLY);
    free(json);
    if (n < 0) {
        free(buf);
        return (int)n;
    }
    *frame = buf;
    *len = (size_t)n;
    return 0;
}
