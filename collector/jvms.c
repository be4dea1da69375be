#include "jvms.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clog.h"
#include "common/blocker_text.h"
#include "common/budget.h"
#include "common/frame_text.h"
#include "common/frames_kind.h"
#include "common/idmap.h"
#include "common/strbuf.h"
#include "common/units.h"
#include "common/utf8.h"

struct jvms {
    struct jvms_config cfg;
    struct jvm *head, *tail;
    size_t count;
};

int jvms_new(struct jvms **out, const struct jvms_config *cfg)
{
    struct jvms *r = calloc(1, sizeof(*r));
    if (!r)
        return -ENOMEM;
    r->cfg = *cfg;
    *out = r;
    return 0;
}

static size_t str_bytes(const char *s)
{
    return s ? strlen(s) + 1 : 0;
}

/* The Hello's and the recording's strings change only at a Hello and at jvm_set_recording:
 * counted there, not at every event. */
static void count_strings(struct jvm *j)
{
    j->string_bytes = session_hello_bytes(&j->hello) + str_bytes(j->recording);
}

/* What j's tables hold now, as charged to the budget (idmap entries at about 32 bytes). */
static size_t jvm_memory(const struct jvm *j)
{
    return sizeof(*j) + occupancy_memory(j->occ) + pinstats_memory(j->pinstats) + pinprofile_memory(j->pinprofile) +
           session_pins_bytes(j->pins) + j->string_bytes;
}

/* The budget follows what j holds after an event (it grows by one event's worth at most past
 * a check of budget_full). */
static void settle(struct jvm *j)
{
    size_t now = jvm_memory(j);
    if (now > j->charged)
        budget_charge(j->budget, now - j->charged);
    else
        budget_give(j->budget, j->charged - now);
    j->charged = now;
}

static void jvm_free(struct jvm *j)
{
    if (!j)
        return;
    budget_give(j->budget, j->charged);
    session_hello_fini(&j->hello);
    free(j->recording);
    occupancy_free(j->occ);
    pinstats_free(j->pinstats);
    pinprofile_free(j->pinprofile);
    session_pins_free(j->pins);
    free(j);
}

void jvms_free(struct jvms *r)
{
    if (!r)
        return;
    struct jvm *j = r->head;
    while (j) {
        struct jvm *next = j->next;
        jvm_free(j);
        j = next;
    }
    free(r);
}

const struct jvms_config *jvms_config(const struct jvms *r)
{
    return &r->cfg;
}

struct jvm *jvms_first(const struct jvms *r)
{
    return r->head;
}

size_t jvms_count(const struct jvms *r)
{
    return r->count;
}

int64_t jvm_clock(const struct jvm *j, int64_t now)
{
    return j->live ? now : j->disconnected_at;
}

static void unlink_jvm(struct jvms *r, struct jvm *j)
{
    struct jvm **pp = &r->head, *prev = NULL;
    while (*pp && *pp != j) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (!*pp)
        return;
    *pp = j->next;
    if (r->tail == j)
        r->tail = prev;
    r->count--;
}

/* Forgets the JVM disconnected the longest: 0, or -ENOENT when every one is connected. */
static int forget_oldest(struct jvms *r)
{
    struct jvm *oldest = NULL;
    for (struct jvm *j = r->head; j; j = j->next)
        if (!j->live && (!oldest || j->disconnected_at < oldest->disconnected_at))
            oldest = j;
    if (!oldest)
        return -ENOENT;
    unlink_jvm(r, oldest);
    jvm_free(oldest);
    return 0;
}

/* Makes room for one more JVM by dropping the one disconnected the longest. */
static int make_room(struct jvms *r)
{
    if (r->count < r->cfg.max_jvms)
        return 0;
    return forget_oldest(r) == 0 ? 0 : -ENOSPC;
}

/* Charges a new JVM's base bytes, forgetting disconnected JVMs (the longest gone first) while
 * they do not fit: a live JVM comes before one that lingers. 0 or -ENOBUFS. */
static int charge_new(struct jvms *r, size_t base)
{
    while (!budget_fits(r->cfg.budget, base) && forget_oldest(r) == 0)
        ;
    return budget_take(r->cfg.budget, base) == 0 ? 0 : -ENOBUFS;
}

/* Ends every pin and hog in progress on its carrier at t (a reconnect: the agent re-sends the live
 * ones). They stay in progress in j->pins, so a re-sent start is counted once. */
static void end_pins(struct jvm *j, int64_t t)
{
    size_t pos = 0;
    const struct session_pin *p;
    while ((p = session_pins_next(j->pins, &pos))) {
        if (p->kind == SESSION_HOG)
            occupancy_hog_end(j->occ, p->id, t);
        else
            occupancy_pin_end(j->occ, p->id, t);
    }
}

void jvm_ident_choose(struct jvm_ident *id, int64_t hello_pid, int64_t peer_pid, int64_t peer_ns_pid, uint64_t pidns)
{
    memset(id, 0, sizeof(*id));
    id->ns_pid = hello_pid;
    id->pid = hello_pid;
    id->source = JVM_PID_HELLO;
    if (peer_pid <= 0)
        id->why = "no peer pid: its pid namespace is not below the collector's";
    else if (peer_ns_pid < 0 && peer_pid != hello_pid)
        id->why = "the peer's /proc status could not be read";
    else if (peer_ns_pid >= 0 && peer_ns_pid != hello_pid)
        id->why = "the peer is not the process its Hello names (a relay or a replayed recording)";
    else {
        id->pid = peer_pid;
        id->pidns = pidns;
        id->source = JVM_PID_PEER;
    }
}

int jvm_ident_same(const struct jvm_ident *a, const struct jvm_ident *b)
{
    return a->pid == b->pid && a->source == b->source && a->uid == b->uid;
}

const char *jvm_ident_text(const struct jvm_ident *id, char *out, size_t cap)
{
    if (id->source == JVM_PID_HELLO)
        snprintf(out, cap, "%" PRId64 " (pid from its Hello: %s)", id->pid, id->why ? id->why : "no peer pid");
    else if (id->ns_pid != id->pid)
        snprintf(out, cap, "%" PRId64 " (pid %" PRId64 " in its namespace)", id->pid, id->ns_pid);
    else
        snprintf(out, cap, "%" PRId64, id->pid);
    return out;
}

int jvms_attach(struct jvms *r, const struct session *s, const char *recording, void *owner, int64_t now,
                struct jvm **out)
{
    int64_t pid = session_hello(s)->pid;
    struct jvm_ident id = {.pid = pid, .ns_pid = pid, .source = JVM_PID_HELLO, .why = "no peer credentials"};
    return jvms_attach_as(r, s, &id, recording, owner, now, out);
}

int jvms_attach_as(struct jvms *r, const struct session *s, const struct jvm_ident *id, const char *recording,
                   void *owner, int64_t now, struct jvm **out)
{
    const struct session_hello *h = session_hello(s);
    struct jvm *j = r->head;
    while (j && !(jvm_ident_same(&j->ident, id) && j->start_unix_ns == h->start_unix_ns))
        j = j->next;
    int rc;
    if (!j) {
        if ((rc = make_room(r)) != 0)
            return rc;
        j = calloc(1, sizeof(*j));
        if (!j)
            return -ENOMEM;
        j->pid = id->pid;
        j->ident = *id;
        j->start_unix_ns = h->start_unix_ns;
        j->max_carriers = r->cfg.max_carriers;
        j->occ = occupancy_new(r->cfg.max_carriers, r->cfg.window_ns, r->cfg.bucket_ns);
        j->pinstats = pinstats_new();
        j->pinprofile = pinprofile_new(r->cfg.window_ns);
        if (!j->occ || session_pins_new(&j->pins, JVMS_IN_PROGRESS, 0) != 0 || !j->pinstats || !j->pinprofile ||
            session_hello_copy(&j->hello, h) != 0) {
            jvm_free(j);
            return -ENOMEM;
        }
        count_strings(j);
        size_t base = jvm_memory(j);
        if (charge_new(r, base) != 0) {
            jvm_free(j);
            return -ENOBUFS;
        }
        j->budget = r->cfg.budget;
        j->charged = base;
        j->hello.connection = h->connection;
        if (r->tail)
            r->tail->next = j;
        else
            r->head = j;
        r->tail = j;
        r->count++;
    } else if (h->connection >= j->hello.connection || !j->owner) {
        /* the newest connection describes the JVM */
        if ((rc = session_hello_copy(&j->hello, h)) != 0)
            return rc;
        end_pins(j, j->disconnected_at ? j->disconnected_at : now);
        count_strings(j);
        j->ident = *id;
    } else {
        /* an older connection number than the one shown: counted, not shown */
        j->live++;
        j->connections++;
        *out = j;
        return 0;
    }
    if ((rc = jvm_set_recording(j, recording)) != 0)
        return rc;
    j->owner = owner;
    j->live++;
    j->connections++;
    j->connected_at = now;
    j->disconnected_at = 0;
    settle(j);
    *out = j;
    return 0;
}

int jvm_set_recording(struct jvm *j, const char *path)
{
    char *copy = path ? strdup(path) : NULL;
    if (path && !copy)
        return -ENOMEM;
    free(j->recording);
    j->recording = copy;
    count_strings(j);
    memset(&j->rec, 0, sizeof(j->rec));
    return 0;
}

int jvm_note_deadlock(struct jvm *j, const char *code, const char *text, int64_t now)
{
    const char *kind = blocker_deadlock_kind(code);
    if (!kind)
        return 0;
    j->deadlock.count++;
    j->deadlock.at = now;
    /* escaped as every text output is, and cut between characters */
    utf8_printable(kind, j->deadlock.kind, sizeof(j->deadlock.kind));
    utf8_printable(text ? text : "", j->deadlock.text, sizeof(j->deadlock.text));
    return 1;
}

void jvm_note_recording(struct jvm *j, const struct rec_state *st, struct rec_state *seen, int newest)
{
    if (st->stops > seen->stops)
        j->rec_stops += st->stops - seen->stops;
    if (st->frames_lost > seen->frames_lost)
        j->rec_frames_lost += st->frames_lost - seen->frames_lost;
    *seen = *st;
    if (newest)
        j->rec = *st;
}

void jvms_detach(struct jvms *r, struct jvm *j, void *owner, int64_t now)
{
    (void)r;
    if (j->live > 0)
        j->live--;
    if (j->owner == owner)
        j->owner = NULL;
    if (j->live == 0)
        j->disconnected_at = now > 0 ? now : 1;
}

size_t jvms_expire(struct jvms *r, int64_t now)
{
    size_t n = 0;
    struct jvm *j = r->head;
    while (j) {
        struct jvm *next = j->next;
        if (!j->live && now - j->disconnected_at > r->cfg.linger_ns) {
            unlink_jvm(r, j);
            jvm_free(j);
            n++;
        }
        j = next;
    }
    return n;
}

/* b's own fields (what, the class, the owner) as blocker_text's parts: no pin, frame or chain. */
static struct blocker_parts wire_parts(const struct session_defs *d, const Vtpin__V1__Blocker *b)
{
    return (struct blocker_parts){.what = (int)b->what,
                                  .object_class = b->has_object_class ? session_defs_string(d, b->object_class) : NULL,
                                  .has_thread = b->has_thread_id,
                                  .thread_name = b->has_thread_name ? session_defs_string(d, b->thread_name) : NULL,
                                  .is_virtual = b->has_virtual_ && b->virtual_,
                                  .carrier = b->has_carrier_name ? session_defs_string(d, b->carrier_name) : NULL,
                                  .state = b->state};
}

/* What the pin waits for as the reports say it (common/blocker_text.h), the owner at its first
 * application frame; NULL when the agent sent none. */
static const char *blocker_line(const struct session_defs *d, const Vtpin__V1__Blocker *b, char *out, size_t cap)
{
    if (!b || !b->has_what || !blocker_kind_name((int)b->what))
        return NULL;
    char frame[JVMS_CULPRIT_CAP];
    const char *at = NULL;
    const struct session_defs_stack *st = b->has_stack ? session_defs_stack(d, b->stack) : NULL;
    uint32_t depth = st ? st->count : 0;
    for (uint32_t i = 0; i < depth && !at; i++) {
        struct frame_parts parts;
        if (session_defs_frame(d, b->stack, i, &parts, NULL) == 0 && parts.cls && !frames_is_jdk_class(parts.cls))
            at = session_defs_frame_text(d, b->stack, i, frame, sizeof(frame));
    }
    if (!at && depth)
        at = session_defs_frame_text(d, b->stack, 0, frame, sizeof(frame));
    struct blocker_parts parts = wire_parts(d, b);
    parts.pin = b->has_pin ? b->pin : 0;
    parts.at = at;
    struct blocker_parts hops[4];
    for (size_t i = 0; i < b->n_chain && parts.n_chain < sizeof(hops) / sizeof(hops[0]); i++) {
        const Vtpin__V1__Blocker *h = b->chain[i];
        if (!h->has_what || !blocker_kind_name((int)h->what))
            break; /* a hop of no kind known: the chain ends there */
        hops[parts.n_chain++] = wire_parts(d, h);
    }
    parts.chain = hops;
    return blocker_text(&parts, out, cap);
}

/* The profile grows with what it is shown: past the budget, a pin or hog is left out of it, counted. */
static int profile_room(struct jvm *j)
{
    if (!budget_full(j->budget))
        return 1;
    j->profile_dropped++;
    j->budget->refused++;
    return 0;
}

/* A pin's start, kept in j->pins with what the metrics and the profile take from it; its
 * carrier is pinned from it. A start re-sent after a reconnect (a pin still in progress) counts
 * once; ids grow, but two carriers' PinStarts can arrive in either order, so only the table says. */
static void apply_pin_start(struct jvm *j, const struct session_defs *d, const Vtpin__V1__PinStart *p)
{
    char culprit[JVMS_CULPRIT_CAP];
    const char *text = NULL;
    if (p->has_stack && p->has_culprit_frame)
        text = session_defs_frame_text(d, p->stack, p->culprit_frame, culprit, sizeof(culprit));
    if (text && p->downcall) { /* a Java frame that is in C: say so, as the report does */
        size_t len = strlen(culprit);
        int api = p->downcall->has_api && p->downcall->api == VTPIN__V1__NATIVE_API__NATIVE_API_JNA ? NATIVE_API_JNA
                                                                                                    : NATIVE_API_FFM;
        frames_call_marker(api, p->downcall->symbol, p->downcall->library, culprit + len, sizeof(culprit) - len);
    }
    if (p->pin_id) {
        struct session_pin start = session_pin_of_start(p), *pin;
        int seen = session_pins_start(j->pins, &start, &pin);
        if (seen == SESSION_PINS_NEW || seen < 0)
            j->pins_total++;
        if (seen == SESSION_PINS_NEW) {
            pin->origin = (uint8_t)(p->has_stack ? session_defs_stack_origin(d, p->stack) : PIN_ORIGIN_APP);
            pin->site = pinstats_site(j->pinstats, text);
            pin->profile_stack = PINPROFILE_NONE;
            if (profile_room(j))
                pinprofile_start(j->pinprofile, d, p, pin);
        }
    }
    if (!p->has_carrier_tid)
        return; /* no carrier to account it to */
    occupancy_pin_start(j->occ, p->carrier_tid, p->pin_id, (int)p->reason, text, p->has_vthread_id ? p->vthread_id : 0,
                        p->start_ns);
    char blocker[JVMS_CULPRIT_CAP];
    const char *waits = blocker_line(d, p->blocker, blocker, sizeof(blocker));
    if (waits)
        occupancy_pin_blocker(j->occ, p->pin_id, waits);
}

/* A hog's start, kept and counted as a pin's; its culprit is formatted as a pin's. */
static void apply_hog_start(struct jvm *j, const struct session_defs *d, const Vtpin__V1__HogStart *h)
{
    char culprit[JVMS_CULPRIT_CAP];
    const char *text = NULL;
    if (h->has_stack && h->has_culprit_frame)
        text = session_defs_frame_text(d, h->stack, h->culprit_frame, culprit, sizeof(culprit));
    struct session_pin start = session_pin_of_hog(h), *hog = NULL;
    int seen = h->hog_id ? session_pins_start(j->pins, &start, &hog) : -ENOENT;
    if (seen != SESSION_PINS_AGAIN)
        j->hogs_total++;
    if (seen == SESSION_PINS_NEW) {
        hog->profile_stack = PINPROFILE_NONE;
        if (profile_room(j))
            pinprofile_hog_start(j->pinprofile, d, h, hog);
    }
    if (h->has_carrier_tid)
        occupancy_hog_start(j->occ, h->carrier_tid, h->hog_id, text, h->has_vthread_id ? h->vthread_id : 0,
                            h->start_ns);
}

/* The end of a pin or hog: its carrier freed, and its time counted under what its start said. */
static void apply_end(struct jvm *j, int kind, uint64_t id, int64_t end_ns, int64_t duration_ns, int64_t now)
{
    if (kind == SESSION_HOG)
        occupancy_hog_end(j->occ, id, end_ns);
    else
        occupancy_pin_end(j->occ, id, end_ns);
    struct session_pin start;
    if (session_pins_end(j->pins, kind, id, &start) != SESSION_PINS_ENDS)
        return; /* never started, or forgotten */
    if (kind == SESSION_PIN)
        pinstats_end(j->pinstats, &start, duration_ns);
    if (start.profile_stack != PINPROFILE_NONE && profile_room(j))
        pinprofile_end(j->pinprofile, &start, duration_ns, now);
}

static int apply(struct jvm *j, const struct session_defs *d, const WireEvent *ev, int64_t now)
{
    switch (ev->body_case) {
    case VTPIN__V1__EVENT__BODY_PIN_START:
        apply_pin_start(j, d, ev->pin_start);
        return 0;
    case VTPIN__V1__EVENT__BODY_PIN_END:
        apply_end(j, SESSION_PIN, ev->pin_end->pin_id, ev->pin_end->end_ns, ev->pin_end->duration_ns, now);
        return 0;
    case VTPIN__V1__EVENT__BODY_HOG_START:
        apply_hog_start(j, d, ev->hog_start);
        return 0;
    case VTPIN__V1__EVENT__BODY_HOG_END:
        apply_end(j, SESSION_HOG, ev->hog_end->hog_id, ev->hog_end->end_ns, ev->hog_end->duration_ns, now);
        return 0;
    case VTPIN__V1__EVENT__BODY_STATS:
        session_stats_take(&j->stats, ev->stats);
        return 0;
    case VTPIN__V1__EVENT__BODY_GOODBYE:
        if (ev->goodbye->stats)
            session_stats_take(&j->stats, ev->goodbye->stats);
        return 0;
    case VTPIN__V1__EVENT__BODY_CARRIER: {
        const Vtpin__V1__Carrier *c = ev->carrier;
        const char *name = c->has_name ? session_defs_string(d, c->name) : NULL;
        occupancy_carrier(j->occ, c->tid, name, c->has_start_ns ? c->start_ns : now);
        return 0;
    }
    case VTPIN__V1__EVENT__BODY_TRANSITIONS: {
        const Vtpin__V1__Transitions *t = ev->transitions;
        size_t n = t->n_times_ns < t->n_vthread_ids ? t->n_times_ns : t->n_vthread_ids;
        if (t->n_times_ns != t->n_vthread_ids)
            j->malformed++;
        for (size_t i = 0; i < n; i++)
            occupancy_mount(j->occ, t->carrier_tid, t->vthread_ids[i], t->times_ns[i]);
        return 0;
    }
    case VTPIN__V1__EVENT__BODY_CARRIER_SAMPLE: {
        const Vtpin__V1__CarrierSample *cs = ev->carrier_sample;
        size_t n = cs->n_carrier_tids < cs->n_vthread_ids ? cs->n_carrier_tids : cs->n_vthread_ids;
        if (cs->n_carrier_tids != cs->n_vthread_ids)
            j->malformed++;
        for (size_t i = 0; i < n; i++)
            occupancy_sample(j->occ, cs->carrier_tids[i], cs->vthread_ids[i], cs->time_ns);
        return 0;
    }
    case VTPIN__V1__EVENT__BODY_NOTICE: /* kept by the session */
    case VTPIN__V1__EVENT__BODY_STRING:
    case VTPIN__V1__EVENT__BODY_METHOD:
    case VTPIN__V1__EVENT__BODY_STACK:
        return 0; /* definitions belong to the session */
    default:
        return -EPROTO; /* Hello, Query, QueryReply, Alert, or nothing */
    }
}

int jvm_apply(struct jvm *j, const struct session *s, const WireEvent *ev, int64_t now)
{
    int rc = apply(j, session_defs(s), ev, now);
    settle(j);
    return rc;
}

/* ---- alerts ---------------------------------------------------------------- */

/* Name and culprit of carrier tid in views (NULL when not found). */
static const struct carrier_view *view_of(const struct carrier_view *views, size_t n, int32_t tid)
{
    for (size_t i = 0; i < n; i++)
        if (views[i].tid == tid)
            return &views[i];
    return NULL;
}

/* Packs the Alert for j's alert state (with text) and returns the log line. */
static int alert_emit(struct jvm *j, int64_t now, int active, const char *head, char **line, uint8_t **frame,
                      size_t *frame_len)
{
    const struct alert_state *st = &j->alert;
    size_t ncar = occupancy_view(j->occ, NULL, 0);
    struct carrier_view *views = calloc(ncar ? ncar : 1, sizeof(*views));
    int32_t *tids = calloc(st->tid_count ? st->tid_count : 1, sizeof(*tids));
    char **culprits = calloc(st->tid_count ? st->tid_count : 1, sizeof(*culprits));
    struct strbuf t = {0};
    uint8_t *buf = NULL;
    int rc = -ENOMEM;
    if (!views || !tids || !culprits)
        goto cleanup;
    occupancy_view(j->occ, views, ncar);
    strbuf_printf(&t, "%s", head);
    for (unsigned i = 0; i < st->tid_count; i++) {
        const struct carrier_view *v = view_of(views, ncar, st->tids[i]);
        char name[128], culprit[JVMS_CULPRIT_CAP];
        tids[i] = st->tids[i];
        culprits[i] = (char *)(v && v->culprit ? v->culprit : "");
        strbuf_printf(&t, "%s %s (tid %" PRId32 ")", i ? ";" : ":",
                      clog_printable(v ? v->name : NULL, name, sizeof(name)), st->tids[i]);
        if (v && v->culprit && *v->culprit)
            strbuf_printf(&t, " %s at %s", v->state == CARRIER_HOG ? "hog" : wire_reason_name(v->reason),
                          clog_printable(v->culprit, culprit, sizeof(culprit)));
        else if (v && v->state == CARRIER_HOG)
            strbuf_printf(&t, " hog");
    }
    if (st->held > st->tid_count)
        strbuf_printf(&t, "; and %u more", st->held - st->tid_count);
    /* a deadlock found while carriers are held is why they are: it never ends by itself */
    if (active && j->deadlock.count)
        strbuf_printf(&t, "; DEADLOCK (%s, docs/deadlocks.md): %s", j->deadlock.kind, j->deadlock.text);
    if (t.oom)
        goto cleanup;

    Vtpin__V1__Alert alert = VTPIN__V1__ALERT__INIT;
    alert.time_ns = now;
    alert.active = active ? 1 : 0;
    alert.has_held_carriers = 1;
    alert.held_carriers = st->held;
    alert.has_total_carriers = 1;
    alert.total_carriers = st->total;
    alert.n_carrier_tids = st->tid_count;
    alert.carrier_tids = tids;
    alert.n_culprits = st->tid_count;
    alert.culprits = culprits;
    alert.text = t.s;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_ALERT;
    ev.alert = &alert;
    size_t size = wire_packed_size(&ev);
    buf = malloc(size);
    if (!buf)
        goto cleanup;
    ssize_t n = wire_pack(&ev, buf, size, size);
    if (n < 0) {
        rc = (int)n;
        goto cleanup;
    }
    *frame = buf;
    *frame_len = (size_t)n;
    *line = t.s;
    buf = NULL;
    t.s = NULL;
    rc = 1;
cleanup:
    free(views);
    free(tids);
    free(culprits);
    free(t.s);
    free(buf);
    return rc;
}

/* Carriers pinned, native-blocked or hogged now, whatever for how long; *hogged of them hogged. */
static unsigned held_now(struct jvm *j, unsigned *hogged)
{
    *hogged = 0;
    size_t n = occupancy_view(j->occ, NULL, 0);
    struct carrier_view *v = calloc(n ? n : 1, sizeof(*v));
    unsigned held = 0;
    if (!v)
        return 0;
    occupancy_view(j->occ, v, n);
    for (size_t i = 0; i < n; i++)
        if (v[i].state == CARRIER_PINNED || v[i].state == CARRIER_NATIVE_BLOCK || v[i].state == CARRIER_HOG) {
            held++;
            *hogged += v[i].state == CARRIER_HOG;
        }
    free(v);
    return held;
}

int jvm_alert_check(struct jvm *j, const struct alert_rule *rule, int64_t now, char **line, uint8_t **frame,
                    size_t *frame_len)
{
    occupancy_advance(j->occ, now);
    occupancy_alert_check(j->occ, rule, now, &j->alert);
    char head[256], hold[32], lasted[32];
    units_format_duration(rule->hold_ns, hold, sizeof(hold));
    if (!j->alert_active) {
        if (!j->alert.active)
            return 0;
        j->alert_active = 1;
        j->alert_since = now;
        snprintf(head, sizeof(head), "JVM pid %" PRId64 ": carrier starvation: %u of %u carriers %s for over %s",
                 j->pid, j->alert.held, j->alert.total, j->alert.hogged ? "pinned or hogged" : "pinned", hold);
    } else {
        /* hysteresis: the alert holds while enough carriers are pinned (or hogged) at all,
         * so back-to-back pins (each younger than the hold time) do not make it flap */
        unsigned need = rule->k ? rule->k : j->alert.total;
        unsigned hogged, held = held_now(j, &hogged);
        if (j->alert.active || (need > 0 && held >= need))
            return 0;
        j->alert_active = 0;
        units_format_duration(now - j->alert_since, lasted, sizeof(lasted));
        snprintf(head, sizeof(head), "JVM pid %" PRId64 ": carrier starvation over after %s: %u of %u carriers %s",
                 j->pid, lasted, held, j->alert.total, hogged ? "pinned or hogged" : "pinned");
        j->alert_since = 0;
    }
    return alert_emit(j, now, j->alert_active, head, line, frame, frame_len);
}

int jvm_alert_deadlock(struct jvm *j, int64_t now, char **line, uint8_t **frame, size_t *frame_len)
{
    if (!j->alert_active || !j->deadlock.count)
        return 0;
    char head[256], lasted[32];
    units_format_duration(now - j->alert_since, lasted, sizeof(lasted));
    snprintf(head, sizeof(head),
             "JVM pid %" PRId64 ": carrier starvation, raised %s ago, is a deadlock: %u of %u carriers %s", j->pid,
             lasted, j->alert.held, j->alert.total, j->alert.hogged ? "pinned or hogged" : "pinned");
    return alert_emit(j, now, 1, head, line, frame, frame_len);
}

int jvm_alert_reset(struct jvm *j, int64_t now, const char *why, char **line, uint8_t **frame, size_t *frame_len)
{
    if (!j->alert_active)
        return 0;
    char head[256], lasted[32];
    units_format_duration(now - j->alert_since, lasted, sizeof(lasted));
    snprintf(head, sizeof(head), "JVM pid %" PRId64 ": carrier starvation alert cleared after %s: %s", j->pid, lasted,
             why);
    j->alert_active = 0;
    j->alert_since = 0;
    int rc = alert_emit(j, now, 0, head, line, frame, frame_len);
    memset(&j->alert, 0, sizeof(j->alert));
    return rc;
}
