#include "writer.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "carriers.h"
#include "clock.h"
#include "downcall.h"
#include "link.h"
#include "log.h"
#include "pins.h"
#include "record.h"
#include "symbols.h"
#include "trace.h"
#include "vmblock.h"
#include "vmstructs.h"
#include "wire.h"
#include "writer_thread.h"

#define MAX_ACTIVE 4096
#define MAX_NOTICES 32
#define MAX_COMPENSATION_NOTICES 10
#define SINK_RECORD 1u
#define SINK_LINK 2u
#define TRANSITIONS_BATCH 4096
#define BLOCKED_IN_MAX 96

struct active_pin {
    uint64_t pin_id;
    int64_t start_ns;
    int reason;
    int reported;
    int64_t vthread_id;
    int carrier_tid;
    char vthread_name[REC_NAME_MAX];
    char carrier_name[REC_NAME_MAX];
    const struct stack_info *stack;
    uint32_t culprit;
    char blocked_in[BLOCKED_IN_MAX];
    int stack_deferred; /* the stack is taken when the pin crosses the threshold */
    int blocking;       /* frame of the blocking operation when not the culprit, else -1 */
    int has_downcall;   /* the culprit invoked an FFM downcall; downcall names its target if known */
    struct downcall_target downcall;
    int stack_dropped;  /* taken, but the stack table was full (stacks_dropped) */
    int op;             /* enum pin_op: what the pinned thread blocks in */
};

struct pending_notice {
    int severity;
    char code[64];
    char text[256];
};

static struct {
    struct writer_config cfg;
    jvmtiEnv *jvmti;
    JavaVM *vm;
    JNIEnv *jni;         /* set while the writer has joined the JVM (in_jvm), else NULL */
    int in_round;        /* joined, with a local frame, in this round */
    int64_t jvm_used_ns; /* last round that needed the JVM */
    struct symbols *symbols;
    struct record *record;
    struct link *link;
    struct trace *trace;
    jvmtiExtensionFunction get_virtual_thread;
    struct rec *scratch;       /* the watchdog's own pin records */
    struct rec *stack_scratch; /* stacks taken late, at the threshold */
    struct mount_entry *mounts;
    int64_t next_sample_ns;
    struct active_pin active[MAX_ACTIVE];
    unsigned active_count;
    uint64_t pins_reported, pins_below_threshold, active_dropped, pins_without_stack;
    uint64_t carriers_started, compensations;
    int64_t next_stats_ns;
    struct pending_notice notices[MAX_NOTICES];
    unsigned notice_count;
    int64_t start_mono, start_unix; /* one pair per session, repeated on reconnects */
    int told_record, told_trace;
} W;

static _Atomic uint32_t wake_word;
static _Atomic int sleeping;
static _Atomic int64_t sleep_until; /* when the sleeping writer wakes by itself */
static _Atomic int stop_requested;
static _Atomic int finished;
static _Atomic int running;

/* The writer joins the JVM only for the work that needs JNI or JVMTI
 * (writer_thread.h); local references made in a round die with its frame. */
static int in_jvm(void)
{
    if (W.in_round)
        return 1;
    W.jni = writer_thread_enter();
    if (!W.jni)
        return 0;
    W.in_round = (*W.jni)->PushLocalFrame(W.jni, 64) == 0 ? 1 : 2;
    W.jvm_used_ns = clock_mono_ns();
    return 1;
}

/* Leaves the JVM once it has not been needed for JVM_LINGER_NS, unless the
 * next round that needs it is due before next_need_ns (sampled occupancy,
 * every 10 ms, stays joined). Each join costs ~70 us of CPU and a
 * ThreadStart/ThreadEnd for every agent: at most about one per second. */
#define JVM_LINGER_NS 1000000000LL
static void end_round(int64_t now, int64_t next_need_ns)
{
    if (W.in_round == 1)
        (*W.jni)->PopLocalFrame(W.jni, NULL);
    W.in_round = 0;
    if (W.jni && !atomic_load(&stop_requested) &&
        (next_need_ns - now <= 50000000LL || now - W.jvm_used_ns < JVM_LINGER_NS))
        return;
    writer_thread_leave();
    W.jni = NULL;
}

void writer_wake(int64_t due_ns)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&sleeping, memory_order_relaxed) &&
        due_ns < atomic_load_explicit(&sleep_until, memory_order_relaxed)) {
        atomic_fetch_add(&wake_word, 1);
        syscall(SYS_futex, &wake_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    }
}

void writer_notice(int severity, const char *code, const char *text)
{
    if (W.notice_count >= MAX_NOTICES)
        return;
    struct pending_notice *n = &W.notices[W.notice_count++];
    n->severity = severity;
    snprintf(n->code, sizeof(n->code), "%s", code);
    snprintf(n->text, sizeof(n->text), "%s", text);
}

void writer_configure(const struct writer_config *config)
{
    W.cfg = *config;
}

int writer_open(const struct options *o, char *err, size_t errlen)
{
    int rc = 0;
    if (o->record_file[0] && !W.record) {
        W.record = record_open(o->record_file, &rc);
        if (!W.record) {
            snprintf(err, errlen, "cannot open record file '%s': %s", o->record_file, strerror(-rc));
            return rc;
        }
    }
    if (o->collector && !W.link) {
        W.link = link_new(o->collector_path, o->collector_buffer, &rc);
        if (!W.link && rc == -ENAMETOOLONG) {
            snprintf(err, errlen, "the default collector socket path is over the 107 bytes a Unix socket path can "
                                  "hold ($XDG_RUNTIME_DIR too long?): give collector=PATH");
            return rc;
        }
        if (!W.link) {
            snprintf(err, errlen, "out of memory for the collector buffer (buffer=%u)", o->collector_buffer);
            return -ENOMEM;
        }
    }
    if (o->trace != TRACE_OFF && !W.trace) {
        W.trace = trace_open(o->trace_file, o->trace, &rc);
        if (!W.trace) {
            snprintf(err, errlen, "cannot open trace file '%s': %s", o->trace_file, strerror(-rc));
            return rc;
        }
    }
    return 0;
}

/* ---- the recording: definitions are written once, before their first use ---- */

static unsigned active_sinks(void)
{
    return (W.record ? SINK_RECORD : 0) | (link_connected(W.link) ? SINK_LINK : 0);
}

/* Puts ev to the given sinks; returns those that took it. */
static unsigned put_to(unsigned sinks, const WireEvent *ev)
{
    unsigned ok = 0;
    if ((sinks & SINK_RECORD) && W.record && record_put(W.record, ev) == 0)
        ok |= SINK_RECORD;
    if ((sinks & SINK_LINK) && W.link && link_put(W.link, ev) == 0)
        ok |= SINK_LINK;
    return ok;
}

/* An event for every output; a collector that is away counts it as dropped. */
static void put_event(const WireEvent *ev)
{
    put_to(SINK_RECORD | (W.link ? SINK_LINK : 0), ev);
}

static void send_string(uint32_t sid)
{
    unsigned *sent = symbols_string_sent(W.symbols, sid);
    unsigned need = sent ? active_sinks() & ~*sent : 0;
    if (!need)
        return;
    Vtpin__V1__StringDef def = VTPIN__V1__STRING_DEF__INIT;
    def.id = sid;
    def.value = (char *)symbols_string_text(W.symbols, sid);
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_STRING;
    ev.string = &def;
    *sent |= put_to(need, &ev);
}

#define OPT_U32(msg, field, value)                                                                                     \
    do {                                                                                                               \
        if (value) {                                                                                                   \
            (msg).has_##field = 1;                                                                                     \
            (msg).field = (value);                                                                                     \
        }                                                                                                              \
    } while (0)

static void send_method(uint32_t mid)
{
    struct method_info *m = symbols_method_by_id(W.symbols, mid);
    unsigned need = m ? active_sinks() & ~m->sent : 0;
    if (!need)
        return;
    uint32_t sids[] = {m->class_sid, m->name_sid, m->sig_sid, m->source_sid, m->module_sid, m->library_sid};
    for (size_t i = 0; i < sizeof(sids) / sizeof(sids[0]); i++)
        send_string(sids[i]);
    Vtpin__V1__MethodDef def = VTPIN__V1__METHOD_DEF__INIT;
    def.id = mid;
    def.class_name = m->class_sid;
    def.method_name = m->name_sid;
    OPT_U32(def, signature, m->sig_sid);
    OPT_U32(def, source_file, m->source_sid);
    OPT_U32(def, library, m->library_sid);
    OPT_U32(def, module, m->module_sid);
    def.has_is_native = 1;
    def.is_native = m->is_native;
    if (m->kind != FRAME_JAVA) {
        def.has_kind = 1;
        def.kind = (Vtpin__V1__FrameKind)m->kind;
    }
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_METHOD;
    ev.method = &def;
    m->sent |= put_to(need, &ev);
}

static void send_stack(const struct stack_info *cst)
{
    struct stack_info *st = cst ? symbols_stack_by_id(W.symbols, cst->id) : NULL;
    unsigned need = st ? active_sinks() & ~st->sent : 0;
    if (!need)
        return;
    for (uint32_t i = 0; i < st->count; i++)
        send_method(st->frames[i].method);
    Vtpin__V1__Frame *frames = calloc(st->count ? st->count : 1, sizeof(*frames));
    Vtpin__V1__Frame **ptrs = calloc(st->count ? st->count : 1, sizeof(*ptrs));
    if (!frames || !ptrs) {
        free(frames);
        free(ptrs);
        return;
    }
    for (uint32_t i = 0; i < st->count; i++) {
        Vtpin__V1__Frame init = VTPIN__V1__FRAME__INIT;
        frames[i] = init;
        frames[i].method = st->frames[i].method;
        frames[i].has_line = 1;
        frames[i].line = st->frames[i].line;
        frames[i].has_bci = 1;
        frames[i].bci = st->frames[i].bci;
        OPT_U32(frames[i], monitors, st->frames[i].monitors);
        ptrs[i] = &frames[i];
    }
    Vtpin__V1__StackDef def = VTPIN__V1__STACK_DEF__INIT;
    def.id = st->id;
    def.n_frames = st->count;
    def.frames = ptrs;
    if (st->truncated) {
        def.has_truncated = 1;
        def.truncated = 1;
    }
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_STACK;
    ev.stack = &def;
    st->sent |= put_to(need, &ev);
    free(frames);
    free(ptrs);
}

static void notice_to(unsigned sinks, int severity, const char *code, const char *text)
{
    Vtpin__V1__Notice n = VTPIN__V1__NOTICE__INIT;
    n.time_ns = clock_mono_ns();
    n.severity = (Vtpin__V1__Severity)severity;
    n.code = (char *)code;
    n.text = (char *)text;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_NOTICE;
    ev.notice = &n;
    put_to(sinks, &ev);
}

static void send_notice(unsigned sinks, int severity, const char *code, const char *text)
{
    if (W.trace) {
        char line[512];
        snprintf(line, sizeof(line), "%s: %s", severity == VTPIN__V1__SEVERITY__INFO ? "note" : "warning", text);
        trace_line(W.trace, line);
    }
    notice_to(sinks, severity, code, text);
}

static void fill_stats(Vtpin__V1__Stats *s)
{
    s->time_ns = clock_mono_ns();
    s->has_pins = 1;
    s->pins = pins_started();
    s->has_pins_below_threshold = 1;
    s->pins_below_threshold = W.pins_below_threshold;
    s->has_pins_reported = 1;
    s->pins_reported = W.pins_reported;
    s->has_events_dropped = 1;
    s->events_dropped = queue_dropped(W.cfg.queue) + record_lost(W.record) + W.active_dropped;
    s->has_stacks_dropped = 1;
    s->stacks_dropped = symbols_stacks_dropped(W.symbols);
    s->has_carriers_started = 1;
    s->carriers_started = W.carriers_started;
    s->has_compensations = 1;
    s->compensations = W.compensations;
    s->has_collector_dropped = 1;
    s->collector_dropped = link_dropped(W.link);
    s->has_transitions_dropped = 1;
    s->transitions_dropped = carriers_dropped();
    uint32_t connections = link_connections(W.link);
    s->has_reconnects = 1;
    s->reconnects = connections > 1 ? connections - 1 : 0;
    s->has_write_failures = 1;
    s->write_failures = record_write_failures(W.record) + trace_write_failures(W.trace);
    s->has_events_unwritten = 1;
    s->events_unwritten = record_unwritten(W.record);
    s->has_methods_dropped = 1;
    s->methods_dropped = symbols_methods_dropped(W.symbols);
    s->has_pins_without_stack = 1;
    s->pins_without_stack = W.pins_without_stack;
}

static void stats_to(unsigned sinks)
{
    Vtpin__V1__Stats s = VTPIN__V1__STATS__INIT;
    fill_stats(&s);
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_STATS;
    ev.stats = &s;
    put_to(sinks, &ev);
}

static char host_name[256];

static void hello_to(unsigned sinks, uint32_t connection)
{
    const struct writer_config *c = &W.cfg;
    Vtpin__V1__Hello h = VTPIN__V1__HELLO__INIT;
    h.schema_version = WIRE_SCHEMA_VERSION;
    h.pid = c->pid;
    h.java_version = (char *)c->java_version;
    h.vm_name = (char *)c->vm_name;
    h.vm_version = (char *)c->vm_version;
    h.vm_vendor = (char *)c->vm_vendor;
    if (c->app && *c->app)
        h.app = (char *)c->app;
    if (gethostname(host_name, sizeof(host_name) - 1) == 0)
        h.host = host_name;
    h.agent_version = VTPIN_VERSION;
    h.options = (char *)c->option_text;
    h.has_mode = 1;
    h.mode = c->attach_mode ? VTPIN__V1__LOAD_MODE__ATTACH : VTPIN__V1__LOAD_MODE__STARTUP;
    if (!W.start_mono) {
        W.start_mono = clock_mono_ns();
        W.start_unix = clock_unix_ns();
    }
    h.has_start_unix_ns = h.has_start_mono_ns = 1;
    h.start_mono_ns = W.start_mono;
    h.start_unix_ns = W.start_unix;
    h.has_threshold_ns = 1;
    h.threshold_ns = c->options->threshold_ns;
    h.has_jdk_feature = 1;
    h.jdk_feature = c->jdk_feature;
    h.has_parallelism = 1;
    h.parallelism = c->parallelism;
    h.n_capabilities_missing = c->capabilities_missing_count;
    h.capabilities_missing = (char **)c->capabilities_missing;
    h.has_occupancy = 1;
    h.occupancy = (Vtpin__V1__OccupancySource)c->options->occupancy;
    h.has_sample_interval_ns = 1;
    h.sample_interval_ns = c->options->sample_interval_ns;
    h.has_connection = 1;
    h.connection = connection;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_HELLO;
    ev.hello = &h;
    put_to(sinks, &ev);
}

/* ---- pins ---- */

static struct pin_view view_of(const struct active_pin *a, int64_t end_ns)
{
    struct pin_view v = {.pin_id = a->pin_id,
                         .reason = a->reason,
                         .start_ns = a->start_ns,
                         .end_ns = end_ns,
                         .vthread_id = a->vthread_id,
                         .vthread_name = a->vthread_name,
                         .carrier_tid = a->carrier_tid,
                         .carrier_name = a->carrier_name,
                         .stack = a->stack,
                         .culprit = a->culprit,
                         .blocked_in = a->blocked_in,
                         .blocking = a->blocking,
                         .downcall = a->has_downcall ? &a->downcall : NULL};
    return v;
}

static void pin_start_to(unsigned sinks, struct active_pin *a)
{
    send_stack(a->stack);
    uint32_t vname = symbols_string(W.symbols, a->vthread_name);
    uint32_t cname = symbols_string(W.symbols, a->carrier_name);
    send_string(vname);
    send_string(cname);
    Vtpin__V1__PinStart p = VTPIN__V1__PIN_START__INIT;
    p.pin_id = a->pin_id;
    p.start_ns = a->start_ns;
    p.reason = (Vtpin__V1__PinReason)a->reason;
    p.has_vthread_id = 1;
    p.vthread_id = a->vthread_id;
    OPT_U32(p, vthread_name, vname);
    p.has_carrier_tid = 1;
    p.carrier_tid = a->carrier_tid;
    OPT_U32(p, carrier_name, cname);
    if (a->stack) {
        p.has_stack = 1;
        p.stack = a->stack->id;
        p.has_culprit_frame = 1;
        p.culprit_frame = a->culprit;
    }
    Vtpin__V1__Downcall dc = VTPIN__V1__DOWNCALL__INIT;
    if (a->stack && a->has_downcall) {
        dc.symbol = a->downcall.symbol[0] ? a->downcall.symbol : NULL;
        dc.library = a->downcall.library[0] ? a->downcall.library : NULL;
        dc.has_address = a->downcall.address != 0;
        dc.address = a->downcall.address;
        p.downcall = &dc;
    }
    if (a->stack && a->blocking >= 0) {
        p.has_blocking_frame = 1;
        p.blocking_frame = (uint32_t)a->blocking;
    }
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    if (a->blocked_in[0])
        p.blocked_in = a->blocked_in;
    ev.body_case = VTPIN__V1__EVENT__BODY_PIN_START;
    ev.pin_start = &p;
    put_to(sinks, &ev);
}

static struct carrier_slot *carrier_by_tid(int tid)
{
    for (unsigned i = 0; tid > 0 && i < carriers_capacity(); i++) {
        struct carrier_slot *c = carriers_slot(i);
        if (c && c->tid == tid && atomic_load(&c->state) == SLOT_LIVE)
            return c;
    }
    return NULL;
}

/* The pin's native boundary: the blocking operation above the culprit, and
 * for an FFM downcall its target, read from the stub's frame while the
 * virtual thread is still pinned on its carrier (startup mode only). */
static void describe_native(struct active_pin *a)
{
    struct native_site site;
    symbols_native_site(W.symbols, a->stack, a->culprit, &site, &a->blocking);
    a->has_downcall = a->stack && site.downcall >= 0 && site.culprit == (int)a->culprit;
    memset(&a->downcall, 0, sizeof(a->downcall));
    if (!a->has_downcall || !downcall_can_resolve())
        return;
    struct carrier_slot *c = carrier_by_tid(a->carrier_tid);
    jthread vt = NULL;
    if (!c || !W.get_virtual_thread || W.get_virtual_thread(W.jvmti, c->thread, &vt) != JVMTI_ERROR_NONE || !vt)
        return;
    if (pins_thread_id(W.jni, vt) == a->vthread_id)
        downcall_resolve(W.jvmti, W.jni, vt, site.downcall, a->stack->mids[site.downcall], &a->downcall);
    (*W.jni)->DeleteLocalRef(W.jni, vt);
}

static int is_park_reason(int reason)
{
    return reason == REASON_MONITOR || reason == REASON_NATIVE || reason == REASON_CRITICAL_SECTION ||
           reason == REASON_UNKNOWN;
}

/* The stack in r (a callback's record) names a's stack, reason and culprit. */
static void set_stack(struct active_pin *a, const struct rec *r)
{
    int in_vm = r->frame_count && in_jvm(); /* names need the JVM: never after VMDeath */
    a->stack = in_vm ? symbols_stack(W.symbols, W.jni, r, W.cfg.options->depth) : NULL;
    a->stack_dropped = in_vm && !a->stack;
    a->stack_deferred = 0;
    if (a->reason == REASON_UNKNOWN)
        a->reason = symbols_infer_reason(W.symbols, a->stack, W.cfg.jdk_feature < 24);
    a->culprit = symbols_culprit(W.symbols, a->stack, a->reason);
    describe_native(a);
    if (a->stack && a->op != PIN_OP_PARK && (a->reason == REASON_NATIVE || a->reason == REASON_CRITICAL_SECTION)) {
        /* 24+: what blocks is the monitor entry or Object.wait, not a frame above the culprit */
        uint32_t at = symbols_culprit(W.symbols, a->stack, a->op == PIN_OP_ENTER ? REASON_MONITOR_ENTER
                                                                                   : REASON_OBJECT_WAIT);
        a->blocking = at != a->culprit ? (int)at : -1;
    }
}

static int is_blocked(jthread vt)
{
    jint state = 0;
    if ((*W.jvmti)->GetThreadState(W.jvmti, vt, &state) != JVMTI_ERROR_NONE)
        return 0;
    return (state & (JVMTI_THREAD_STATE_WAITING | JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER)) != 0;
}

/* A pin that lasted past the threshold is still in progress: its virtual
 * thread is blocked on the same carrier, so its stack and monitors can be
 * taken now, from here, instead of on every short pin in the callback.
 * Only from a thread blocked before and after: frames and monitors are read
 * in two calls, and a running thread's would not match (a monitor blamed on
 * the frame below). Returns 0 when the stack is taken, -EAGAIN when it cannot
 * be yet: the thread is not blocked yet (descheduled between the breakpoint
 * and the park), or the pin has ended and its end, which carries the stack,
 * is still on its way (the carrier runs another virtual thread). */
static int take_deferred_stack(struct active_pin *a)
{
    struct carrier_slot *c = carrier_by_tid(a->carrier_tid);
    jthread vt = NULL;
    int rc = -EAGAIN;
    if (c && in_jvm() && W.get_virtual_thread && W.get_virtual_thread(W.jvmti, c->thread, &vt) == JVMTI_ERROR_NONE && vt &&
        pins_thread_id(W.jni, vt) == a->vthread_id && is_blocked(vt)) {
        struct rec *r = W.stack_scratch;
        r->frame_count = 0;
        r->truncated = 0;
        pins_capture_stack(vt, r);
        int in_park = 0;
        jmethodID park = pins_park_method();
        const jvmtiFrameInfo *frames = (const jvmtiFrameInfo *)r->frames;
        for (uint32_t i = 0; i < r->frame_count && park; i++)
            in_park |= frames[i].method == park;
        /* A park pin's stack runs through parkOnCarrierThread (else the thread parks elsewhere). */
        if (r->frame_count && (a->op != PIN_OP_PARK || !is_park_reason(a->reason) || in_park) && is_blocked(vt)) {
            set_stack(a, r);
            rc = 0;
        }
    }
    if (vt)
        (*W.jni)->DeleteLocalRef(W.jni, vt);
    return rc;
}

/* Returns -EAGAIN when the pin's stack cannot be taken yet (try again next round). */
static int report_start(struct active_pin *a, int still_pinned)
{
    if (a->stack_deferred && (!still_pinned || take_deferred_stack(a) == -EAGAIN)) {
        if (still_pinned && clock_mono_ns() - a->start_ns < (int64_t)W.cfg.options->threshold_ns + 100000000LL)
            return -EAGAIN;
        a->stack_deferred = 0; /* 100 ms past the threshold and still not blocked: report without it */
        a->culprit = 0;
    }
    if (!a->stack && !a->stack_dropped)
        W.pins_without_stack++; /* said, not silent: Stats.pins_without_stack */
    a->reported = 1;
    W.pins_reported++;
    struct pin_view v = view_of(a, 0);
    trace_pin_start(W.trace, W.symbols, &v);
    pin_start_to(SINK_RECORD | (W.link ? SINK_LINK : 0), a);
    return 0;
}

static void report_end(struct active_pin *a, int64_t end_ns)
{
    struct pin_view v = view_of(a, end_ns);
    trace_pin_end(W.trace, W.symbols, &v);
    Vtpin__V1__PinEnd p = VTPIN__V1__PIN_END__INIT;
    p.pin_id = a->pin_id;
    p.end_ns = end_ns;
    p.duration_ns = end_ns - a->start_ns;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_PIN_END;
    ev.pin_end = &p;
    put_event(&ev);
}

static void on_pin_start(const struct rec *r, const char *blocked_in)
{
    if (W.active_count >= MAX_ACTIVE) {
        W.active_dropped++;
        return;
    }
    struct active_pin *a = &W.active[W.active_count++];
    memset(a, 0, sizeof(*a));
    a->pin_id = r->pin_id;
    a->start_ns = r->time_ns;
    a->vthread_id = r->vthread_id;
    a->carrier_tid = r->carrier_tid;
    memcpy(a->vthread_name, r->vthread_name, REC_NAME_MAX);
    memcpy(a->carrier_name, r->carrier_name, REC_NAME_MAX);
    a->reason = r->reason;
    a->op = r->op;
    a->blocking = -1;
    a->stack_deferred = r->stack_deferred;
    if (a->op != PIN_OP_PARK && a->reason == REASON_UNKNOWN) {
        /* 24+: a contended entry or Object.wait unmounts unless a native frame is below it (pins.c):
         * decided before the stack is kept, so the many that unmount take no room in the tables */
        if (!r->frame_count || !in_jvm() || symbols_rec_has_native(W.symbols, W.jni, r) != 1) {
            W.active_count--;
            return;
        }
        a->reason = REASON_NATIVE;
    }
    if (!a->stack_deferred)
        set_stack(a, r);
    if (blocked_in)
        snprintf(a->blocked_in, sizeof(a->blocked_in), "%s", blocked_in);
    if (W.cfg.options->threshold_ns == 0)
        report_start(a, 1);
}

static void on_pin_end(const struct rec *r)
{
    for (unsigned i = 0; i < W.active_count; i++) {
        struct active_pin *a = &W.active[i];
        if (a->pin_id != r->pin_id)
            continue;
        int64_t end_ns = r->time_ns, duration = end_ns - a->start_ns;
        if (!a->reported && (uint64_t)duration >= W.cfg.options->threshold_ns) {
            /* Crossed and ended before the writer looked (or while it waited for
             * the park): the ending callback took the stack for it. */
            if (a->stack_deferred && r->frame_count)
                set_stack(a, r);
            report_start(a, 0);
        }
        if (a->reported)
            report_end(a, end_ns);
        else
            W.pins_below_threshold++;
        W.active[i] = W.active[--W.active_count];
        return;
    }
}

static void on_carrier_start(const struct rec *r)
{
    W.carriers_started++;
    if (!W.cfg.parallelism || W.carriers_started <= W.cfg.parallelism)
        return;
    W.compensations++;
    if (W.compensations > MAX_COMPENSATION_NOTICES)
        return;
    unsigned waits = 0;
    for (unsigned i = 0; i < W.active_count; i++)
        waits += W.active[i].reason == REASON_OBJECT_WAIT;
    char text[256];
    snprintf(text, sizeof(text),
             "the scheduler had to compensate: carrier %s (tid %d) is carrier #%llu, beyond parallelism %u, "
             "started while %u pins were in progress (%u in Object.wait)",
             r->carrier_name, r->carrier_tid, (unsigned long long)W.carriers_started, W.cfg.parallelism,
             W.active_count, waits);
    send_notice(SINK_RECORD | SINK_LINK, VTPIN__V1__SEVERITY__WARNING, "scheduler.compensation", text);
}

static void drain(void)
{
    const struct rec *r;
    while ((r = queue_peek(W.cfg.queue)) != NULL) {
        switch (r->kind) {
        case REC_PIN_START:
            on_pin_start(r, NULL);
            break;
        case REC_PIN_END:
            on_pin_end(r);
            break;
        case REC_CARRIER_START:
            on_carrier_start(r);
            break;
        default:
            break;
        }
        queue_release(W.cfg.queue);
    }
}

/* Reports the pins that have now lasted longer than the threshold; returns
 * how long until the next one will (or a default idle wait). */
static int64_t report_crossings(int64_t now)
{
    int64_t wait = 200 * 1000000LL;
    int64_t threshold = (int64_t)W.cfg.options->threshold_ns;
    for (unsigned i = 0; i < W.active_count; i++) {
        struct active_pin *a = &W.active[i];
        if (a->reported)
            continue;
        int64_t due = a->start_ns + threshold - now;
        if (due <= 0 && report_start(a, 1) == -EAGAIN)
            due = 1000000; /* not parked yet: look again in 1 ms */
        if (due > 0 && due < wait)
            wait = due;
    }
    return wait;
}

/* ---- carriers: occupancy and the native-block watchdog ---- */

static void announce_carrier(struct carrier_slot *c)
{
    unsigned need = active_sinks() & ~c->announced;
    if (!need)
        return;
    uint32_t sid = symbols_string(W.symbols, c->name);
    send_string(sid);
    Vtpin__V1__Carrier m = VTPIN__V1__CARRIER__INIT;
    m.tid = c->tid;
    OPT_U32(m, name, sid);
    m.has_start_ns = 1;
    m.start_ns = c->start_ns;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_CARRIER;
    ev.carrier = &m;
    c->announced |= put_to(need, &ev);
}

static void send_transitions(struct carrier_slot *c)
{
    int64_t times[TRANSITIONS_BATCH], vts[TRANSITIONS_BATCH];
    unsigned n;
    while ((n = carriers_take(c, W.mounts, TRANSITIONS_BATCH)) > 0) {
        for (unsigned i = 0; i < n; i++) {
            times[i] = W.mounts[i].time_ns;
            vts[i] = W.mounts[i].vthread_id;
        }
        Vtpin__V1__Transitions t = VTPIN__V1__TRANSITIONS__INIT;
        t.carrier_tid = c->tid;
        t.n_times_ns = t.n_vthread_ids = n;
        t.times_ns = times;
        t.vthread_ids = vts;
        WireEvent ev = VTPIN__V1__EVENT__INIT;
        ev.body_case = VTPIN__V1__EVENT__BODY_TRANSITIONS;
        ev.transitions = &t;
        put_event(&ev);
    }
}

/* "nanosleep (wchan hrtimer_nanosleep)": where the kernel says the carrier sleeps. */
static void read_blocked_in(int tid, char *out, size_t cap)
{
    static const struct {
        long nr;
        const char *name;
    } calls[] = {{0, "read"},       {1, "write"},      {7, "poll"},       {17, "pread64"},  {23, "select"},
                 {34, "pause"},     {35, "nanosleep"}, {42, "connect"},   {43, "accept"},   {44, "sendto"},
                 {45, "recvfrom"},  {46, "sendmsg"},   {47, "recvmsg"},   {61, "wait4"},    {202, "futex"},
                 {230, "clock_nanosleep"}, {232, "epoll_wait"}, {270, "pselect6"}, {271, "ppoll"},
                 {281, "epoll_pwait"}, {288, "accept4"}};
    out[0] = '\0';
    if (tid <= 0)
        return;
    char path[64], buf[128] = "", wchan[64] = "";
    snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
    FILE *f = fopen(path, "re");
    if (f) {
        if (!fgets(buf, sizeof(buf), f))
            buf[0] = '\0';
        fclose(f);
    }
    snprintf(path, sizeof(path), "/proc/self/task/%d/wchan", tid);
    f = fopen(path, "re");
    if (f) {
        if (!fgets(wchan, sizeof(wchan), f))
            wchan[0] = '\0';
        fclose(f);
    }
    const char *what = NULL;
    char number[32] = "";
    if (strncmp(buf, "running", 7) == 0)
        what = "running (on CPU)";
    else if (buf[0] >= '0' && buf[0] <= '9') {
        long nr = strtol(buf, NULL, 10);
        for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]) && !what; i++)
            if (calls[i].nr == nr)
                what = calls[i].name;
        if (!what) {
            snprintf(number, sizeof(number), "syscall %ld", nr);
            what = number;
        }
    }
    int has_wchan = wchan[0] && strcmp(wchan, "0") != 0;
    snprintf(out, cap, "%s%s%s%s", what ? what : "", has_wchan ? (what ? " (wchan " : "wchan ") : "",
             has_wchan ? wchan : "", has_wchan && what ? ")" : "");
}

static void end_block(struct carrier_slot *c, int64_t now)
{
    if (!c->block_pin)
        return;
    struct rec *r = W.scratch;
    r->kind = REC_PIN_END;
    r->pin_id = c->block_pin;
    r->time_ns = now;
    r->frame_count = 0;
    on_pin_end(r);
    c->block_pin = 0;
}

/* A pin the writer found itself (no callback saw it): reason given or
 * inferred from the stack, start at the first sample that saw it. */
static void start_block(struct carrier_slot *c, jthread vt, int64_t vid, int reason)
{
    struct rec *r = W.scratch;
    unsigned depth = W.cfg.options->depth;
    memset(r, 0, pins_record_size(depth));
    r->kind = REC_PIN_START;
    r->reason = (uint8_t)reason;
    r->pin_id = pins_next_id();
    r->time_ns = c->watch_since;
    r->vthread_id = vid;
    r->carrier_tid = c->tid;
    memcpy(r->carrier_name, c->name, REC_NAME_MAX);
    pins_copy_thread_name(W.jni, vt, r->vthread_name);
    pins_capture_stack(vt, r);
    char blocked_in[BLOCKED_IN_MAX] = "";
    if (reason == REASON_NATIVE_BLOCK)
        read_blocked_in(c->tid, blocked_in, sizeof(blocked_in));
    else if (reason == REASON_VM_BLOCK)
        vmblock_describe(W.jvmti, c->native_method, c->watch_bci, blocked_in, sizeof(blocked_in));
    on_pin_start(r, blocked_in);
    c->block_pin = r->pin_id;
}

enum watch_kind { WATCH_NONE = 0, WATCH_NATIVE, WATCH_PARKED, WATCH_VM };

/* A pin in progress on carrier c (reported or not) other than the watchdog's
 * own: the carrier is accounted for. */
static int carrier_has_pin(const struct carrier_slot *c)
{
    for (unsigned i = 0; i < W.active_count; i++)
        if (W.active[i].carrier_tid == c->tid && W.active[i].pin_id != c->block_pin)
            return 1;
    return 0;
}

/* What the mounted virtual thread is doing that holds its carrier without an
 * event, judged only while the carrier's OS thread sleeps (S or D): code that
 * runs on the CPU, native or not, holds a carrier as CPU-bound Java does and
 * is never a block.
 * - WATCH_NATIVE: inside a native method (every mode);
 * - WATCH_PARKED: parked while mounted (after attach, where no breakpoint
 *   marks parkOnCarrierThread);
 * - WATCH_VM: blocked inside the JVM, neither in native nor parked, with no
 *   pin in progress on the carrier: e.g. waiting for another thread to
 *   initialize a class. *top and *bci are its top Java frame.
 * GC and safepoint pauses: a carrier stopped at a safepoint sleeps too, but
 * the JVMTI calls below wait for the safepoint to end, and the carrier is
 * looked at again after them: a carrier that was only stopped runs again. */
static enum watch_kind classify(jthread vt, struct carrier_slot *c, jmethodID *top, jlocation *bci)
{
    int tid = c->tid;
    jint state = 0;
    *top = NULL;
    *bci = -1;
    /* With park breakpoints only a sleeping carrier can be a block: ask /proc before JVMTI,
     * whose calls disable the thread's mount transitions (a CPU-bound JNI carrier stays cheap). */
    if (W.cfg.park_breakpoints && vmblock_thread_sleeps(tid, &c->stat_fd1, &c->stat_tid) != 1)
        return WATCH_NONE;
    if ((*W.jvmti)->GetThreadState(W.jvmti, vt, &state) != JVMTI_ERROR_NONE)
        return WATCH_NONE;
    /* parked: the JDK's own state says so (its carrier may be runnable, woken by the timer) */
    int parked_state = !W.cfg.park_breakpoints && (state & JVMTI_THREAD_STATE_WAITING);
    if (!W.cfg.park_breakpoints && !parked_state && vmblock_thread_sleeps(tid, &c->stat_fd1, &c->stat_tid) != 1)
        return WATCH_NONE;
    enum watch_kind kind = WATCH_NONE;
    jvmtiFrameInfo frames[8];
    jint count = 0;
    if (state & JVMTI_THREAD_STATE_IN_NATIVE) {
        /* In C: under a JNI method, or an FFM downcall (its stub and LambdaForm frames on top). */
        if ((*W.jvmti)->GetStackTrace(W.jvmti, vt, 0, 1, frames, &count) == JVMTI_ERROR_NONE && count == 1) {
            *top = frames[0].method;
            kind = WATCH_NATIVE;
        }
    } else if (!carrier_has_pin(c) &&
               (*W.jvmti)->GetStackTrace(W.jvmti, vt, 0, 8, frames, &count) == JVMTI_ERROR_NONE && count > 0) {
        jmethodID park = pins_park_method();
        int parked = 0;
        for (jint i = 0; i < count; i++)
            parked |= park && frames[i].method == park;
        jboolean native = JNI_FALSE;
        if (parked) {
            /* only parkOnCarrierThread parks a mounted virtual thread; with breakpoints the pin is known */
            if (!W.cfg.park_breakpoints && (state & JVMTI_THREAD_STATE_WAITING)) {
                *top = park;
                kind = WATCH_PARKED;
            }
        } else if ((*W.jvmti)->IsMethodNative(W.jvmti, frames[0].method, &native) == JVMTI_ERROR_NONE && !native) {
            *top = frames[0].method;
            *bci = frames[0].location;
            kind = WATCH_VM;
        }
    }
    if ((kind == WATCH_NATIVE || kind == WATCH_VM) &&
        vmblock_thread_sleeps(tid, &c->stat_fd1, &c->stat_tid) != 1)
        return WATCH_NONE; /* it was only stopped for a safepoint, or woke meanwhile */
    return kind;
}

/* A parked carrier's voluntary context switches: 1 and *sw when known. */
static int parked_switches(struct carrier_slot *c, uint64_t *sw)
{
    return vmblock_thread_switches(c->tid, &c->status_fd1, &c->status_tid, sw) == 0;
}

static void watch_carrier(struct carrier_slot *c, jthread vt, int64_t vid, int64_t now)
{
    jmethodID top = NULL;
    jlocation bci = -1;
    enum watch_kind kind = vt ? classify(vt, c, &top, &bci) : WATCH_NONE;
    uint64_t sw = 0;
    int has_sw = kind == WATCH_PARKED && parked_switches(c, &sw);
    if (vid != c->seen_vthread || (int)kind != c->watch_kind || top != c->native_method ||
        (kind == WATCH_VM && bci != c->watch_bci)) {
        end_block(c, now);
        c->seen_vthread = vid;
        c->watch_kind = (int)kind;
        c->native_method = top;
        c->watch_bci = bci;
        c->watch_since = now;
        c->has_switches = has_sw;
        c->switches = sw;
        return;
    }
    int reason = kind == WATCH_NATIVE ? REASON_NATIVE_BLOCK : kind == WATCH_VM ? REASON_VM_BLOCK : REASON_UNKNOWN;
    /* Parked in both samples, but the carrier went to sleep again in between: the
     * park ended and the next began (back-to-back pins, e.g. synchronized { sleep }
     * in a loop). End this pin and start the next one here, each to one period. */
    if (has_sw && c->has_switches && sw != c->switches) {
        if (!c->block_pin)
            start_block(c, vt, vid, reason); /* seen in one sample, then the next park */
        end_block(c, now);
        c->watch_since = now;
        c->switches = sw;
        start_block(c, vt, vid, reason);
        return;
    }
    c->has_switches = has_sw;
    c->switches = sw;
    /* The same state, with the carrier asleep, in two samples in a row: a pin (short calls are not). */
    if (kind != WATCH_NONE && !c->block_pin)
        start_block(c, vt, vid, reason);
}

/* Whether the watchdog must classify this carrier's virtual thread through
 * JVMTI. Every JVMTI look disables virtual-thread transitions
 * (GetVirtualThread: all of them; GetThreadState: that thread's), so a
 * carrier that is not watched yet and whose JavaThread is neither in native
 * nor blocked (parked after attach, or blocked inside the JVM) is not classified:
 * classify() would find nothing there. Without occupancy samples to take it
 * is not looked at at all. */
static int must_look(struct carrier_slot *c)
{
    if (c->watch_kind != WATCH_NONE || c->block_pin)
        return 1;
    enum vm_state st = vmstructs_thread_state(c->java_thread);
    if (atomic_load(&c->state) != SLOT_LIVE)
        return 0; /* ended while read: the value may be stale; released next round */
    /* blocked: parked after attach (no park breakpoint), or blocked inside the JVM (VM_BLOCK, every mode) */
    return st == VM_STATE_UNKNOWN || st == VM_STATE_NATIVE || st == VM_STATE_BLOCKED;
}

static void sample_carriers(int64_t now)
{
    unsigned cap = carriers_capacity(), n = 0;
    int32_t tids[256];
    int64_t vts[256];
    for (unsigned i = 0; i < cap; i++) {
        struct carrier_slot *c = carriers_slot(i);
        if (!c || atomic_load(&c->state) != SLOT_LIVE)
            continue;
        int look = must_look(c);
        if ((!look && W.cfg.options->occupancy != OCCUPANCY_SAMPLED) || !in_jvm())
            continue;
        jthread vt = NULL;
        if (W.get_virtual_thread && W.get_virtual_thread(W.jvmti, c->thread, &vt) != JVMTI_ERROR_NONE)
            vt = NULL;
        int64_t vid = vt ? pins_thread_id(W.jni, vt) : 0;
        watch_carrier(c, look ? vt : NULL, vid, now); /* NULL: nothing to classify, as classify() would say */
        if (vt)
            (*W.jni)->DeleteLocalRef(W.jni, vt);
        if (W.cfg.options->occupancy == OCCUPANCY_SAMPLED && n < 256) {
            tids[n] = c->tid;
            vts[n++] = vid;
        }
    }
    if (n == 0)
        return;
    Vtpin__V1__CarrierSample m = VTPIN__V1__CARRIER_SAMPLE__INIT;
    m.time_ns = now;
    m.n_carrier_tids = m.n_vthread_ids = n;
    m.carrier_tids = tids;
    m.vthread_ids = vts;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_CARRIER_SAMPLE;
    ev.carrier_sample = &m;
    put_event(&ev);
}

static void service_carriers(int64_t now)
{
    static int told_untracked;
    if (!told_untracked && carriers_unregistered() > 0) {
        told_untracked = 1;
        char text[200];
        snprintf(text, sizeof(text),
                 "more carriers than carriers=%u: the others are not sampled, watched for native blocks or "
                 "counted in occupancy",
                 W.cfg.options->max_carriers);
        send_notice(SINK_RECORD | SINK_LINK, VTPIN__V1__SEVERITY__WARNING, "carriers.untracked", text);
    }
    static int told_no_tid;
    unsigned cap = carriers_capacity();
    for (unsigned i = 0; i < cap; i++) {
        struct carrier_slot *c = carriers_slot(i);
        if (!c)
            continue;
        if (!told_no_tid && c->tid <= 0 && atomic_load(&c->state) == SLOT_LIVE) {
            /* after attach the tid comes from HotSpot's VMStructs (vmstructs.c); a layout it does not know */
            told_no_tid = 1;
            send_notice(SINK_RECORD | SINK_LINK, VTPIN__V1__SEVERITY__WARNING, "carriers.tid_unknown",
                        "a carrier's OS thread id is unknown (HotSpot's thread layout not recognised): "
                        "NATIVE_BLOCK and VM_BLOCK are not looked for on it, and the kernel view cannot follow it");
        }
        announce_carrier(c);
        send_transitions(c);
        if (atomic_load(&c->state) == SLOT_DEAD) {
            end_block(c, now);
            carriers_release(in_jvm() ? W.jni : NULL, c);
        }
    }
    if (now >= W.next_sample_ns) {
        sample_carriers(now);
        W.next_sample_ns = now + (int64_t)W.cfg.options->sample_interval_ns;
    }
}

/* ---- the collector connection ---- */

/* A new connection: the collector gets the session from the start, as far as
 * it can be told now: Hello, notices, carriers, the pins in progress, counters. */
static void on_connected(void)
{
    symbols_forget_sink(W.symbols, SINK_LINK);
    for (unsigned i = 0; i < carriers_capacity(); i++) {
        struct carrier_slot *c = carriers_slot(i);
        if (c)
            c->announced &= ~SINK_LINK;
    }
    hello_to(SINK_LINK, link_connections(W.link) - 1);
    for (unsigned i = 0; i < W.notice_count; i++)
        notice_to(SINK_LINK, W.notices[i].severity, W.notices[i].code, W.notices[i].text);
    for (unsigned i = 0; i < W.active_count; i++)
        if (W.active[i].reported)
            pin_start_to(SINK_LINK, &W.active[i]);
    stats_to(SINK_LINK);
}

/* Said once per output: which file, why, and that the JVM runs on. The
 * recording gets the notice and the counters after its last whole frame. */
static void tell_write_failure(void)
{
    if (!W.told_record && record_error(W.record)) {
        W.told_record = 1;
        char text[OPTIONS_PATH_MAX + 200];
        snprintf(text, sizeof(text),
                 "cannot write the recording %s: %s; it ends here, later events are counted as unwritten "
                 "(the JVM runs on)",
                 W.cfg.options->record_file, strerror(record_error(W.record)));
        log_alert("%s", text);
        notice_to(SINK_RECORD | SINK_LINK, VTPIN__V1__SEVERITY__ERROR, "output.record.write_failed", text);
        stats_to(SINK_RECORD);
    }
    if (!W.told_trace && trace_error(W.trace)) {
        W.told_trace = 1;
        char text[OPTIONS_PATH_MAX + 200];
        snprintf(text, sizeof(text), "cannot write the trace to %s: %s; trace lines are lost (the JVM runs on)",
                 W.cfg.options->trace_file[0] ? W.cfg.options->trace_file : "stderr",
                 strerror(trace_error(W.trace)));
        log_alert("%s", text);
        notice_to(SINK_RECORD | SINK_LINK, VTPIN__V1__SEVERITY__ERROR, "output.trace.write_failed", text);
    }
}

static void flush_outputs(int64_t now)
{
    if (W.record)
        record_flush(W.record);
    if (W.link)
        link_flush(W.link, now);
    trace_flush(W.trace);
    tell_write_failure();
}

static void wait_for_work(int64_t timeout_ns)
{
    uint32_t seen = atomic_load(&wake_word);
    atomic_store(&sleep_until, clock_mono_ns() + timeout_ns);
    atomic_store(&sleeping, 1);
    atomic_thread_fence(memory_order_seq_cst);
    if (!queue_peek(W.cfg.queue) && !atomic_load(&stop_requested)) {
        /* A producer still filling the head slot holds back the records behind
         * it, and its commit may not wake us (an end never does): look again soon. */
        if (queue_pending(W.cfg.queue) && timeout_ns > 1000000)
            timeout_ns = 1000000;
        struct timespec ts = {timeout_ns / 1000000000LL, timeout_ns % 1000000000LL};
        syscall(SYS_futex, &wake_word, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
    }
    atomic_store(&sleeping, 0);
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static void writer_main(void *arg)
{
    (void)arg;
    /* Exact occupancy fills per-carrier rings quickly on mount-heavy code. */
    int64_t max_wait = W.cfg.options->occupancy == OCCUPANCY_EXACT ? 5000000LL : 200000000LL;
    while (!atomic_load(&stop_requested)) {
        int64_t now = clock_mono_ns();
        if (W.link && link_poll_connect(W.link, now))
            on_connected();
        drain();
        service_carriers(now);
        int64_t wait = min64(report_crossings(now), max_wait);
        /* Only sampled occupancy knows it will need the JVM at the next sample. */
        end_round(now, W.cfg.options->occupancy == OCCUPANCY_SAMPLED ? W.next_sample_ns : INT64_MAX);
        if (now >= W.next_stats_ns) {
            stats_to(SINK_RECORD | (W.link ? SINK_LINK : 0));
            W.next_stats_ns = now + (int64_t)W.cfg.options->stats_interval_ns;
        }
        wait = min64(min64(wait, W.next_stats_ns - now), W.next_sample_ns - now);
        flush_outputs(now);
        if (wait > 0)
            wait_for_work(wait);
    }
    /* Exit: everything queued so far, a last look at the carriers (a native
     * block that just ended), then the pins still in progress. */
    drain();
    int64_t now = clock_mono_ns();
    W.next_sample_ns = 0;
    service_carriers(now);
    report_crossings(now);
    end_round(now, INT64_MAX);
    Vtpin__V1__Stats s = VTPIN__V1__STATS__INIT;
    fill_stats(&s);
    Vtpin__V1__Goodbye g = VTPIN__V1__GOODBYE__INIT;
    g.time_ns = s.time_ns;
    g.stats = &s;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_GOODBYE;
    ev.goodbye = &g;
    put_event(&ev);
    if (W.trace && W.active_count) {
        char line[128];
        snprintf(line, sizeof(line), "%u pin(s) still in progress at exit", W.active_count);
        trace_line(W.trace, line);
    }
    flush_outputs(now);
    if (W.link)
        link_drain(W.link, 1000000000LL);
    log_info("the writer joined the JVM %llu times (each a ThreadStart and ThreadEnd for every JVMTI agent)",
             (unsigned long long)writer_thread_joins());
    atomic_store(&finished, 1);
}

int writer_start(jvmtiEnv *jvmti, JNIEnv *jni)
{
    if (atomic_load(&running))
        return 0;
    W.symbols = symbols_new(jvmti, W.cfg.options->max_methods, W.cfg.options->max_stacks, !W.cfg.monitor_depths);
    W.scratch = calloc(1, pins_record_size(W.cfg.options->depth));
    W.stack_scratch = calloc(1, pins_record_size(W.cfg.options->depth));
    W.mounts = calloc(TRANSITIONS_BATCH, sizeof(*W.mounts));
    if (!W.symbols || !W.scratch || !W.stack_scratch || !W.mounts)
        return -ENOMEM;
    jint n = 0;
    jvmtiExtensionFunctionInfo *fns = NULL;
    if ((*jvmti)->GetExtensionFunctions(jvmti, &n, &fns) == JVMTI_ERROR_NONE) {
        for (jint i = 0; i < n; i++)
            if (strcmp(fns[i].id, "com.sun.hotspot.functions.GetVirtualThread") == 0)
                W.get_virtual_thread = fns[i].func;
        /* The info's nested strings are JVMTI allocations too; a few bytes kept once. */
        (*jvmti)->Deallocate(jvmti, (unsigned char *)fns);
    }
    vmstructs_init(jni);
    if (!W.get_virtual_thread)
        log_warn("the JVM has no GetVirtualThread extension: no sampled occupancy, no native-block watchdog");
    hello_to(SINK_RECORD, 0);
    for (unsigned i = 0; i < W.notice_count; i++)
        notice_to(SINK_RECORD, W.notices[i].severity, W.notices[i].code, W.notices[i].text); /* logged already */
    flush_outputs(clock_mono_ns());

    W.jvmti = jvmti;
    if ((*jni)->GetJavaVM(jni, &W.vm) != 0)
        return -EINVAL;
    int rc = writer_thread_start(W.vm, writer_main, NULL);
    if (rc)
        return rc;
    atomic_store(&running, 1);
    return 0;
}

void writer_stop(unsigned timeout_ms, int final)
{
    if (!atomic_load(&running))
        return;
    atomic_store(&stop_requested, 1);
    atomic_fetch_add(&wake_word, 1);
    syscall(SYS_futex, &wake_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    for (unsigned waited = 0; !atomic_load(&finished) && waited < timeout_ms; waited++)
        usleep(1000);
    if (final)
        writer_thread_forbid(); /* from VMDeath or unload on: the writer must not join the JVM again */
    if (!atomic_load(&finished))
        log_warn("the writer did not finish within %u ms; the last events may be missing", timeout_ms);
}

int writer_reset(void)
{
    if (atomic_load(&running) && !atomic_load(&finished))
        return -EBUSY;
    record_close(W.record);
    trace_close(W.trace);
    link_free(W.link);
    symbols_free(W.symbols);
    free(W.scratch);
    free(W.stack_scratch);
    free(W.mounts);
    memset(&W, 0, sizeof(W));
    /* The carriers stay registered; the new outputs have not been told about
     * them, and the watchdog looks at them afresh (a block still going on is
     * a pin of the new session). */
    for (unsigned i = 0; i < carriers_capacity(); i++) {
        struct carrier_slot *c = carriers_slot(i);
        if (!c)
            continue;
        c->announced = 0;
        c->seen_vthread = c->watch_since = 0;
        c->watch_kind = 0;
        c->native_method = NULL;
        c->block_pin = 0;
    }
    atomic_store(&stop_requested, 0);
    atomic_store(&finished, 0);
    atomic_store(&running, 0);
    return 0;
}
