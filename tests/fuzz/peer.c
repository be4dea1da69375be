/* See peer.h. Mirrors collector/server.c's client_frame, agent_hello and
 * agent_event, and what the recorder writes again at a rotation (recorder.c's start_again);
 * keep them in step when the server's policy changes. */
#include "peer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonread.h"
#include "query.h"
#include "wire.h"

#define MS 1000000LL
#define SEC 1000000000LL

void peer_collector_init(struct peer_collector *pc, size_t max_jvms)
{
    /* the server's defaults (server_config_defaults), fewer JVMs to reach the limit */
    struct jvms_config jc = {
        .max_carriers = 256,
        .window_ns = 60 * SEC,
        .bucket_ns = SEC,
        .linger_ns = 60 * SEC,
        .max_jvms = max_jvms,
        .alert = {.k = 0, .hold_ns = SEC},
    };
    memset(pc, 0, sizeof(*pc));
    pc->now = 1000 * SEC;
    if (jvms_new(&pc->jvms, &jc) != 0)
        abort();
}

void peer_collector_fini(struct peer_collector *pc)
{
    pc->now += 3600 * SEC;
    jvms_expire(pc->jvms, pc->now);
    jvms_free(pc->jvms);
}

void peer_open(struct peer_collector *pc, struct peer *p)
{
    memset(p, 0, sizeof(*p));
    if (framer_init(&p->in, WIRE_MAX_FRAME_DEFAULT) != 0)
        abort();
    pc->clients++;
}

static void drop(char *line, uint8_t *frame)
{
    free(line);
    free(frame);
}

/* A frame of a rotated file's head: whole, decodable, a definition the next reader keeps. */
static int head_frame(void *arg, const uint8_t *frame, size_t len)
{
    struct session_defs *again = arg;
    WireEvent *ev = NULL;
    if (wire_decode(frame, len, &ev) != 1) {
        fprintf(stderr, "a rotated file's head holds a frame that does not decode (%zu bytes)\n", len);
        abort();
    }
    if (session_defs_take(again, ev) < 0)
        abort();
    wire_event_free(ev);
    return 0;
}

/* What a rotation of p's recording would write: its definitions, then what the carry kept. */
static void rotate_head(struct peer *p)
{
    struct session_defs *again = NULL;
    if (session_defs_new(&again, NULL) != 0)
        abort();
    if (session_defs_write(session_defs(p->session), head_frame, again) != 0 ||
        carry_each(p->carry, 1, head_frame, again) != 0)
        abort();
    session_defs_free(again);
}

void peer_close(struct peer_collector *pc, struct peer *p)
{
    if (p->kind == PEER_CLOSED)
        return;
    if (p->jvm) {
        char *line = NULL;
        uint8_t *frame = NULL;
        size_t len = 0;
        if (p->jvm->owner == p && jvm_alert_reset(p->jvm, pc->now, "the JVM disconnected", &line, &frame, &len) == 1)
            drop(line, frame);
        jvms_detach(pc->jvms, p->jvm, p, pc->now);
        p->jvm = NULL;
    }
    framer_fini(&p->in);
    if (p->carry)
        rotate_head(p);
    carry_free(p->carry);
    p->carry = NULL;
    if (p->carry_budget.used != 0) {
        fprintf(stderr, "the carry did not give back %zu bytes of its budget\n", p->carry_budget.used);
        abort();
    }
    session_free(p->session);
    p->session = NULL;
    p->kind = PEER_CLOSED;
    pc->clients--;
}

void peer_query(struct peer_collector *pc, const Vtpin__V1__Query *q)
{
    struct query_info info = {.pid = 4242,
                              .version = "0.0-fuzz",
                              .socket = "/run/vtpin/collector.sock",
                              .dir = "/var/lib/vtpin",
                              .started_ns = SEC,
                              .clients = pc->clients};
    uint8_t *frame = NULL;
    size_t len = 0;
    int rc = query_reply(pc->jvms, &info, q, pc->now, &frame, &len);
    if (rc == -EINVAL) /* an unknown kind: the server rejects the client */
        return;
    if (rc) {
        fprintf(stderr, "query_reply: %s\n", strerror(-rc));
        abort();
    }
    size_t flen = 0;
    if (wire_frame_ready(frame, len, QUERY_MAX_REPLY, &flen) != 1 || flen != len) {
        fprintf(stderr, "query_reply: %zu bytes are not one whole frame\n", len);
        abort();
    }
    WireEvent *ev = NULL;
    if (wire_decode(frame, len, &ev) != 1 || ev->body_case != VTPIN__V1__EVENT__BODY_QUERY_REPLY ||
        !ev->query_reply->json) {
        fprintf(stderr, "query_reply: not a QueryReply\n");
        abort();
    }
    struct jsonread *tree = NULL;
    char err[256];
    const char *json = ev->query_reply->json;
    if (jsonread_parse(json, strlen(json), &tree, err, sizeof(err)) != 0) {
        fprintf(stderr, "query_reply: the answer is not JSON: %s\n%.4000s\n", err, json);
        abort();
    }
    jsonread_free(tree);
    wire_event_free(ev);
    free(frame);
}

void peer_tick(struct peer_collector *pc)
{
    pc->now += 100 * MS;
    struct alert_rule rule = jvms_config(pc->jvms)->alert;
    for (struct jvm *j = jvms_first(pc->jvms); j; j = j->next) {
        if (!j->live)
            continue;
        char *line = NULL;
        uint8_t *frame = NULL;
        size_t len = 0;
        if (jvm_alert_check(j, &rule, pc->now, &line, &frame, &len) == 1)
            drop(line, frame);
    }
    jvms_expire(pc->jvms, pc->now);
}

/* The frames of a stack, formatted as the log and TOP do. */
static void format_stack(const struct session *s, uint32_t stack)
{
    char out[512];
    for (uint32_t i = 0; i < 64 && session_defs_frame_text(session_defs(s), stack, i, out, sizeof(out)); i++)
        if (strlen(out) >= sizeof(out))
            abort();
}

static int agent_hello(struct peer_collector *pc, struct peer *p, const WireEvent *ev)
{
    struct session_defs_limits limits = SESSION_LIMITS_DEFAULT;
    if (session_new(&p->session, ev->hello, &limits) != 0)
        return -1;
    if (jvms_attach(pc->jvms, p->session, NULL, p, pc->now, &p->jvm) != 0) {
        p->jvm = NULL;
        return -1;
    }
    if (p->jvm->owner == p && jvm_set_recording(p->jvm, "/var/lib/vtpin/jvm.vtp") != 0)
        return -1;
    budget_init(&p->carry_budget, 64u << 10); /* small: the refusals are exercised too */
    if (!(p->carry = carry_new(&p->carry_budget)))
        abort();
    p->kind = PEER_AGENT;
    return 0;
}

static int agent_event(struct peer_collector *pc, struct peer *p, const WireEvent *ev)
{
    uint64_t dropped = session_defs_dropped(session_defs(p->session));
    int rc = session_define(p->session, ev);
    if (rc < 0)
        return -1;
    if (rc == 1) {
        p->jvm->defs_dropped += session_defs_dropped(session_defs(p->session)) - dropped;
        if (ev->body_case == VTPIN__V1__EVENT__BODY_STACK)
            format_stack(p->session, ev->stack->id);
        else if (ev->body_case == VTPIN__V1__EVENT__BODY_STRING)
            (void)session_defs_string(session_defs(p->session), ev->string->id);
        return 0;
    }
    if (jvm_apply(p->jvm, p->session, ev, pc->now) != 0)
        return -1;
    if (ev->body_case == VTPIN__V1__EVENT__BODY_PIN_START && ev->pin_start->has_stack)
        format_stack(p->session, ev->pin_start->stack);
    return 0;
}

int peer_frame(struct peer_collector *pc, struct peer *p, const uint8_t *frame, size_t len)
{
    p->frames++;
    pc->now += MS;
    WireEvent *ev = NULL;
    int decoded = wire_decode(frame, len, &ev);
    if (decoded < 0 || (decoded == 0 && p->kind != PEER_AGENT))
        return -1;
    if (decoded == 0) {
        carry_note(p->carry, NULL, frame, len);
        return 0; /* a newer schema's event: skipped */
    }
    int rc = 0;
    char why[256];
    if (p->kind == PEER_NEW) {
        int first = session_classify_first(ev, why, sizeof(why));
        if (first == SESSION_FIRST_QUERY) {
            peer_query(pc, ev->query);
            p->kind = PEER_QUERY;
            rc = -1; /* nothing more is read from a query client */
        } else if (first == SESSION_FIRST_AGENT) {
            rc = agent_hello(pc, p, ev);
        } else {
            rc = -1;
        }
    } else if (p->kind == PEER_AGENT) {
        rc = agent_event(pc, p, ev);
        if (rc == 0) /* what the server records */
            carry_note(p->carry, ev, frame, len);
        if (rc == 0 && p->frames % 64 == 0)
            rotate_head(p);
    } else {
        rc = -1;
    }
    wire_event_free(ev);
    if (p->frames % 16 == 0)
        peer_tick(pc);
    return rc;
}

int peer_feed(struct peer_collector *pc, struct peer *p, const uint8_t *data, size_t size, size_t chunk)
{
    size_t off = 0;
    for (;;) {
        const uint8_t *frame;
        size_t len;
        int rc;
        while ((rc = framer_next(&p->in, &frame, &len)) == 1)
            if (peer_frame(pc, p, frame, len) != 0)
                return -1;
        if (rc < 0) /* over --max-frame */
            return -1;
        if (off == size)
            return 0;
        uint8_t *room;
        size_t room_len;
        rc = framer_space(&p->in, &room, &room_len);
        if (rc == -EMSGSIZE)
            return -1;
        if (rc)
            abort(); /* -ENOBUFS cannot happen after draining; -ENOMEM: out of memory */
        size_t n = size - off;
        if (n > room_len)
            n = room_len;
        if (n > chunk)
            n = chunk;
        memcpy(room, data + off, n);
        framer_commit(&p->in, n);
        off += n;
    }
}
