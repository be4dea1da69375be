/* Builds recordings in memory with protobuf-c and wire_pack, the way the
 * agent writes them: for tests of the report formats (test_views.c) and the
 * synthetic large recording (synth_recording.c). Header-only: each user
 * gets its own static copies. */
#ifndef VTPIN_TESTS_SYNTH_H
#define VTPIN_TESTS_SYNTH_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

#define SYNTH_MAX_FRAME (16u << 20)

struct synth {
    uint8_t *data;
    size_t len, cap;
};

static void synth_put(struct synth *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t ncap = b->cap ? b->cap : 4096;
        while (ncap < b->len + n)
            ncap *= 2;
        uint8_t *d = realloc(b->data, ncap);
        if (!d) {
            fprintf(stderr, "out of memory\n");
            exit(2);
        }
        b->data = d;
        b->cap = ncap;
    }
    if (n && b->data && p)
        memcpy(b->data + b->len, p, n);
    b->len += n;
}

static void synth_event(struct synth *b, const WireEvent *ev)
{
    size_t need = wire_packed_size(ev);
    uint8_t *tmp = malloc(need);
    ssize_t n = tmp ? wire_pack(ev, tmp, need, SYNTH_MAX_FRAME) : -ENOMEM;
    if (n != (ssize_t)need) {
        fprintf(stderr, "wire_pack failed: %zd\n", n);
        exit(2);
    }
    synth_put(b, tmp, (size_t)n);
    free(tmp);
}

#define SYNTH_EVENT(b, field, body_enum, msg)                                                                          \
    do {                                                                                                               \
        WireEvent ev_ = VTPIN__V1__EVENT__INIT;                                                                        \
        ev_.body_case = body_enum;                                                                                     \
        ev_.field = (msg);                                                                                             \
        synth_event((b), &ev_);                                                                                        \
    } while (0)

/* Magic and a Hello of an agent loaded in mode (a Vtpin__V1__LoadMode): a JVM with clock (unix = mono +
 * offset), threshold 1 ms. */
static void synth_hello_in(struct synth *b, int64_t pid, int occupancy, int64_t start_unix, int64_t start_mono,
                           int mode)
{
    synth_put(b, WIRE_MAGIC, WIRE_MAGIC_LEN);
    Vtpin__V1__Hello h = VTPIN__V1__HELLO__INIT;
    h.schema_version = WIRE_SCHEMA_VERSION;
    h.pid = pid;
    h.java_version = "21.0.5";
    h.vm_name = "OpenJDK 64-Bit Server VM";
    h.host = "synth";
    h.agent_version = "test";
    h.has_mode = 1;
    h.mode = (Vtpin__V1__LoadMode)mode;
    h.has_start_unix_ns = h.has_start_mono_ns = 1;
    h.start_unix_ns = start_unix;
    h.start_mono_ns = start_mono;
    h.has_threshold_ns = 1;
    h.threshold_ns = 1000000;
    h.has_occupancy = 1;
    h.occupancy = (Vtpin__V1__OccupancySource)occupancy;
    h.has_sample_interval_ns = 1;
    h.sample_interval_ns = 10000000;
    SYNTH_EVENT(b, hello, VTPIN__V1__EVENT__BODY_HELLO, &h);
}

/* synth_hello_in at startup. */
__attribute__((unused)) static void synth_hello(struct synth *b, int64_t pid, int occupancy, int64_t start_unix,
                                                int64_t start_mono)
{
    synth_hello_in(b, pid, occupancy, start_unix, start_mono, VTPIN__V1__LOAD_MODE__STARTUP);
}

static void synth_string(struct synth *b, uint32_t id, const char *value)
{
    Vtpin__V1__StringDef d = VTPIN__V1__STRING_DEF__INIT;
    d.id = id;
    d.value = (char *)value;
    SYNTH_EVENT(b, string, VTPIN__V1__EVENT__BODY_STRING, &d);
}

/* A method: class and name string ids, source file string id (0 none). */
static void synth_method(struct synth *b, uint32_t id, uint32_t cls, uint32_t name, uint32_t source, int native)
{
    Vtpin__V1__MethodDef d = VTPIN__V1__METHOD_DEF__INIT;
    d.id = id;
    d.class_name = cls;
    d.method_name = name;
    d.has_source_file = source != 0;
    d.source_file = source;
    d.has_is_native = 1;
    d.is_native = native;
    SYNTH_EVENT(b, method, VTPIN__V1__EVENT__BODY_METHOD, &d);
}

/* A stack of n methods, top frame first; monitors on frame monitor_at (-1 none). */
static void synth_stack(struct synth *b, uint32_t id, const uint32_t *methods, size_t n, int monitor_at, int truncated)
{
    Vtpin__V1__StackDef d = VTPIN__V1__STACK_DEF__INIT;
    Vtpin__V1__Frame *frames = calloc(n ? n : 1, sizeof(*frames));
    Vtpin__V1__Frame **ptrs = calloc(n ? n : 1, sizeof(*ptrs));
    if (!frames || !ptrs)
        exit(2);
    for (size_t i = 0; i < n; i++) {
        Vtpin__V1__Frame f = VTPIN__V1__FRAME__INIT;
        f.method = methods[i];
        f.has_line = 1;
        f.line = (int32_t)(10 + i);
        f.has_monitors = (int)i == monitor_at;
        f.monitors = 1;
        frames[i] = f;
        ptrs[i] = &frames[i];
    }
    d.id = id;
    d.n_frames = n;
    d.frames = ptrs;
    d.has_truncated = truncated;
    d.truncated = truncated;
    SYNTH_EVENT(b, stack, VTPIN__V1__EVENT__BODY_STACK, &d);
    free(frames);
    free(ptrs);
}

__attribute__((unused)) static void synth_carrier(struct synth *b, int32_t tid, uint32_t name_sid, int64_t start_ns)
{
    Vtpin__V1__Carrier c = VTPIN__V1__CARRIER__INIT;
    c.tid = tid;
    c.has_name = 1;
    c.name = name_sid;
    c.has_start_ns = 1;
    c.start_ns = start_ns;
    SYNTH_EVENT(b, carrier, VTPIN__V1__EVENT__BODY_CARRIER, &c);
}

/* A pin start; stack 0 = none, culprit < 0 = none, vthread_sid 0 = no name. */
__attribute__((unused)) static void synth_pin_start(struct synth *b, uint64_t id, int reason, int64_t start,
                                                    int64_t vthread_id, uint32_t vthread_sid, int32_t tid,
                                                    uint32_t carrier_sid, uint32_t stack, int culprit,
                                                    const char *blocked_in)
{
    Vtpin__V1__PinStart p = VTPIN__V1__PIN_START__INIT;
    p.pin_id = id;
    p.start_ns = start;
    p.reason = (Vtpin__V1__PinReason)reason;
    p.has_vthread_id = 1;
    p.vthread_id = vthread_id;
    p.has_vthread_name = vthread_sid != 0;
    p.vthread_name = vthread_sid;
    p.has_carrier_tid = tid != 0;
    p.carrier_tid = tid;
    p.has_carrier_name = carrier_sid != 0;
    p.carrier_name = carrier_sid;
    p.has_stack = stack != 0;
    p.stack = stack;
    p.has_culprit_frame = culprit >= 0;
    p.culprit_frame = culprit >= 0 ? (uint32_t)culprit : 0;
    p.blocked_in = (char *)blocked_in;
    SYNTH_EVENT(b, pin_start, VTPIN__V1__EVENT__BODY_PIN_START, &p);
}

/* A pin's end; last_asleep 0: not said (the watchdog's pins say the last sample that saw them asleep). */
static void synth_pin_end_asleep(struct synth *b, uint64_t id, int64_t end, int64_t duration, int64_t last_asleep)
{
    Vtpin__V1__PinEnd e = VTPIN__V1__PIN_END__INIT;
    e.pin_id = id;
    e.end_ns = end;
    e.duration_ns = duration;
    e.has_last_asleep_ns = last_asleep != 0;
    e.last_asleep_ns = last_asleep;
    SYNTH_EVENT(b, pin_end, VTPIN__V1__EVENT__BODY_PIN_END, &e);
}

static void synth_pin_end(struct synth *b, uint64_t id, int64_t end, int64_t duration)
{
    synth_pin_end_asleep(b, id, end, duration, 0);
}

/* A carrier hog's start; stack 0 = none, culprit < 0 = none, vthread_sid 0 = no name. */
__attribute__((unused)) static void synth_hog_start(struct synth *b, uint64_t id, int64_t start, int64_t vthread_id,
                                                    uint32_t vthread_sid, int32_t tid, uint32_t carrier_sid,
                                                    uint32_t stack, int culprit)
{
    Vtpin__V1__HogStart h = VTPIN__V1__HOG_START__INIT;
    h.hog_id = id;
    h.start_ns = start;
    h.has_vthread_id = 1;
    h.vthread_id = vthread_id;
    h.has_vthread_name = vthread_sid != 0;
    h.vthread_name = vthread_sid;
    h.has_carrier_tid = tid != 0;
    h.carrier_tid = tid;
    h.has_carrier_name = carrier_sid != 0;
    h.carrier_name = carrier_sid;
    h.has_stack = stack != 0;
    h.stack = stack;
    h.has_culprit_frame = culprit >= 0;
    h.culprit_frame = culprit >= 0 ? (uint32_t)culprit : 0;
    SYNTH_EVENT(b, hog_start, VTPIN__V1__EVENT__BODY_HOG_START, &h);
}

/* Its end; last_running 0 = not said. */
__attribute__((unused)) static void synth_hog_end(struct synth *b, uint64_t id, int64_t end, int64_t duration,
                                                  int64_t last_running)
{
    Vtpin__V1__HogEnd e = VTPIN__V1__HOG_END__INIT;
    e.hog_id = id;
    e.end_ns = end;
    e.duration_ns = duration;
    e.has_last_running_ns = last_running != 0;
    e.last_running_ns = last_running;
    SYNTH_EVENT(b, hog_end, VTPIN__V1__EVENT__BODY_HOG_END, &e);
}

/* What each carrier carried at t (0 = idle). */
__attribute__((unused)) static void synth_sample(struct synth *b, int64_t t, int32_t *tids, int64_t *vthreads, size_t n)
{
    Vtpin__V1__CarrierSample s = VTPIN__V1__CARRIER_SAMPLE__INIT;
    s.time_ns = t;
    s.n_carrier_tids = s.n_vthread_ids = n;
    s.carrier_tids = tids;
    s.vthread_ids = vthreads;
    SYNTH_EVENT(b, carrier_sample, VTPIN__V1__EVENT__BODY_CARRIER_SAMPLE, &s);
}

/* A carrier's mounts (vthread id) and unmounts (0), exact occupancy. */
__attribute__((unused)) static void synth_transitions(struct synth *b, int32_t tid, int64_t *times, int64_t *vthreads,
                                                      size_t n)
{
    Vtpin__V1__Transitions t = VTPIN__V1__TRANSITIONS__INIT;
    t.carrier_tid = tid;
    t.n_times_ns = t.n_vthread_ids = n;
    t.times_ns = times;
    t.vthread_ids = vthreads;
    SYNTH_EVENT(b, transitions, VTPIN__V1__EVENT__BODY_TRANSITIONS, &t);
}

/* An off-CPU interval of a carrier as a collector with the kernel view writes it: asleep in a
 * syscall, its kernel stack in full (innermost first), the virtual thread it saw parked. */
/* A sleep (S) of carrier tid with vthread_id mounted, waiting as java_wait, runqueue_ns runnable before it. */
__attribute__((unused)) static void synth_ksleep(struct synth *b, int32_t tid, int64_t start, int64_t end,
                                                 int32_t syscall, const char *syscall_name, char **stack,
                                                 size_t n_stack, int64_t vthread_id, int java_wait, int64_t runqueue_ns)
{
    Vtpin__V1__KernelInterval k = VTPIN__V1__KERNEL_INTERVAL__INIT;
    k.carrier_tid = tid;
    k.start_ns = start;
    k.end_ns = end;
    k.has_state = 1;
    k.state = VTPIN__V1__KERNEL_STATE__KERNEL_SLEEPING;
    k.has_syscall = 1;
    k.syscall = syscall;
    k.syscall_name = (char *)syscall_name;
    k.n_stack = n_stack;
    k.stack = stack;
    k.has_runqueue_ns = runqueue_ns > 0;
    k.runqueue_ns = runqueue_ns;
    k.has_vthread_id = k.has_java_wait = 1;
    k.vthread_id = vthread_id;
    k.java_wait = (Vtpin__V1__JavaWait)java_wait;
    SYNTH_EVENT(b, kernel_interval, VTPIN__V1__EVENT__BODY_KERNEL_INTERVAL, &k);
}

/* The same, a wait for a monitor and no run queue time. */
__attribute__((unused)) static void synth_kinterval(struct synth *b, int32_t tid, int64_t start, int64_t end,
                                                    int32_t syscall, const char *syscall_name, char **stack,
                                                    size_t n_stack, int64_t vthread_id)
{
    synth_ksleep(b, tid, start, end, syscall, syscall_name, stack, n_stack, vthread_id,
                 VTPIN__V1__JAVA_WAIT__JAVA_BLOCKED, 0);
}

static void synth_goodbye(struct synth *b, int64_t t, uint64_t pins)
{
    Vtpin__V1__Stats s = VTPIN__V1__STATS__INIT;
    s.time_ns = t;
    s.has_pins = s.has_pins_reported = 1;
    s.pins = s.pins_reported = pins;
    s.has_events_dropped = 1;
    Vtpin__V1__Goodbye g = VTPIN__V1__GOODBYE__INIT;
    g.time_ns = t;
    g.stats = &s;
    SYNTH_EVENT(b, goodbye, VTPIN__V1__EVENT__BODY_GOODBYE, &g);
}

__attribute__((unused)) static int synth_write(const struct synth *b, const char *path)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -errno;
    size_t n = fwrite(b->data, 1, b->len, f);
    int rc = fclose(f);
    return n == b->len && rc == 0 ? 0 : -EIO;
}

#endif
