/* Builders of wire events for the collector's unit tests: each returns an
 * unpacked WireEvent (packed then unpacked, as the collector would see it);
 * free with wire_event_free. */
#ifndef VTPIN_TEST_COLLECTOR_EVENTS_H
#define VTPIN_TEST_COLLECTOR_EVENTS_H

#include <stdlib.h>

#include "wire.h"

static inline WireEvent *ev_roundtrip(WireEvent *ev)
{
    size_t size = wire_packed_size(ev);
    uint8_t *buf = malloc(size);
    if (!buf || wire_pack(ev, buf, size, size) != (ssize_t)size) {
        free(buf);
        return NULL;
    }
    WireEvent *out = NULL;
    if (wire_decode(buf, size, &out) != 1)
        out = NULL;
    free(buf);
    return out;
}

static inline WireEvent *ev_hello(int64_t pid, int64_t start_unix_ns, uint32_t connection, uint32_t schema)
{
    Vtpin__V1__Hello h = VTPIN__V1__HELLO__INIT;
    h.schema_version = schema;
    h.pid = pid;
    h.java_version = "21.0.5";
    h.vm_name = "OpenJDK 64-Bit Server VM";
    h.vm_vendor = "Eclipse Adoptium";
    h.agent_version = "0.1.0";
    h.has_mode = 1;
    h.mode = VTPIN__V1__LOAD_MODE__ATTACH;
    h.has_start_unix_ns = 1;
    h.start_unix_ns = start_unix_ns;
    h.has_occupancy = 1;
    h.occupancy = VTPIN__V1__OCCUPANCY_SOURCE__OCCUPANCY_EXACT;
    h.has_connection = 1;
    h.connection = connection;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_HELLO;
    ev.hello = &h;
    return ev_roundtrip(&ev);
}

static inline WireEvent *ev_string(uint32_t id, const char *value)
{
    Vtpin__V1__StringDef d = VTPIN__V1__STRING_DEF__INIT;
    d.id = id;
    d.value = (char *)value;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_STRING;
    ev.string = &d;
    return ev_roundtrip(&ev);
}

/* source/module 0: absent */
static inline WireEvent *ev_method(uint32_t id, uint32_t cls, uint32_t name, uint32_t source, uint32_t module,
                                   int is_native)
{
    Vtpin__V1__MethodDef d = VTPIN__V1__METHOD_DEF__INIT;
    d.id = id;
    d.class_name = cls;
    d.method_name = name;
    d.has_source_file = source != 0;
    d.source_file = source;
    d.has_module = module != 0;
    d.module = module;
    d.has_is_native = 1;
    d.is_native = is_native;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_METHOD;
    ev.method = &d;
    return ev_roundtrip(&ev);
}

/* n frames: methods[i] at lines[i] */
static inline WireEvent *ev_stack(uint32_t id, size_t n, const uint32_t *methods, const int32_t *lines)
{
    Vtpin__V1__StackDef d = VTPIN__V1__STACK_DEF__INIT;
    Vtpin__V1__Frame frames[16], *ptrs[16];
    for (size_t i = 0; i < n && i < 16; i++) {
        Vtpin__V1__Frame f = VTPIN__V1__FRAME__INIT;
        f.method = methods[i];
        f.has_line = 1;
        f.line = lines[i];
        frames[i] = f;
        ptrs[i] = &frames[i];
    }
    d.id = id;
    d.n_frames = n;
    d.frames = ptrs;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_STACK;
    ev.stack = &d;
    return ev_roundtrip(&ev);
}

static inline WireEvent *ev_carrier(int32_t tid, uint32_t name, int64_t start)
{
    Vtpin__V1__Carrier c = VTPIN__V1__CARRIER__INIT;
    c.tid = tid;
    c.has_name = 1;
    c.name = name;
    c.has_start_ns = 1;
    c.start_ns = start;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_CARRIER;
    ev.carrier = &c;
    return ev_roundtrip(&ev);
}

static inline WireEvent *ev_transitions(int32_t tid, size_t n_times, int64_t *times, size_t n_ids, int64_t *ids)
{
    Vtpin__V1__Transitions t = VTPIN__V1__TRANSITIONS__INIT;
    t.carrier_tid = tid;
    t.n_times_ns = n_times;
    t.times_ns = times;
    t.n_vthread_ids = n_ids;
    t.vthread_ids = ids;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_TRANSITIONS;
    ev.transitions = &t;
    return ev_roundtrip(&ev);
}

static inline WireEvent *ev_pin_start(uint64_t pin, int64_t start, int reason, int64_t vthread, int32_t tid,
                                      uint32_t stack, uint32_t culprit)
{
    Vtpin__V1__PinStart p = VTPIN__V1__PIN_START__INIT;
    p.pin_id = pin;
    p.start_ns = start;
    p.reason = (Vtpin__V1__PinReason)reason;
    p.has_vthread_id = 1;
    p.vthread_id = vthread;
    p.has_carrier_tid = 1;
    p.carrier_tid = tid;
    p.has_stack = stack != 0;
    p.stack = stack;
    p.has_culprit_frame = stack != 0;
    p.culprit_frame = culprit;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_PIN_START;
    ev.pin_start = &p;
    return ev_roundtrip(&ev);
}

static inline WireEvent *ev_pin_end(uint64_t pin, int64_t end)
{
    Vtpin__V1__PinEnd p = VTPIN__V1__PIN_END__INIT;
    p.pin_id = pin;
    p.end_ns = end;
    p.duration_ns = 0;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_PIN_END;
    ev.pin_end = &p;
    return ev_roundtrip(&ev);
}

/* stack 0: none */
static inline WireEvent *ev_hog_start(uint64_t hog, int64_t start, int64_t vthread, int32_t tid, uint32_t stack,
                                      uint32_t culprit)
{
    Vtpin__V1__HogStart h = VTPIN__V1__HOG_START__INIT;
    h.hog_id = hog;
    h.start_ns = start;
    h.has_vthread_id = 1;
    h.vthread_id = vthread;
    h.has_carrier_tid = 1;
    h.carrier_tid = tid;
    h.has_stack = stack != 0;
    h.stack = stack;
    h.has_culprit_frame = stack != 0;
    h.culprit_frame = culprit;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_HOG_START;
    ev.hog_start = &h;
    return ev_roundtrip(&ev);
}

static inline WireEvent *ev_hog_end(uint64_t hog, int64_t start, int64_t end)
{
    Vtpin__V1__HogEnd h = VTPIN__V1__HOG_END__INIT;
    h.hog_id = hog;
    h.end_ns = end;
    h.duration_ns = end - start;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_HOG_END;
    ev.hog_end = &h;
    return ev_roundtrip(&ev);
}

static inline WireEvent *ev_stats(uint64_t events_dropped, uint64_t collector_dropped)
{
    Vtpin__V1__Stats s = VTPIN__V1__STATS__INIT;
    s.time_ns = 1;
    s.has_events_dropped = 1;
    s.events_dropped = events_dropped;
    s.has_collector_dropped = 1;
    s.collector_dropped = collector_dropped;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_STATS;
    ev.stats = &s;
    return ev_roundtrip(&ev);
}

static inline WireEvent *ev_query(int kind, int64_t pid)
{
    Vtpin__V1__Query q = VTPIN__V1__QUERY__INIT;
    q.kind = (Vtpin__V1__Query__Kind)kind;
    q.has_pid = pid != 0;
    q.pid = pid;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_QUERY;
    ev.query = &q;
    return ev_roundtrip(&ev);
}

#endif
