#include "writer.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "pins.h"
#include "record.h"
#include "symbols.h"
#include "trace.h"
#include "wire.h"

#define MAX_ACTIVE 4096
#define MAX_NOTICES 32
#define MAX_COMPENSATION_NOTICES 10
#define SINK_RECORD 1u

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
};

struct pending_notice {
    int severity;
    char code[64];
    char text[256];
};

static struct {
    struct writer_config cfg;
    jvmtiEnv *jvmti;
    JNIEnv *jni;
    struct symbols *symbols;
    struct record *record;
    struct trace *trace;
    struct active_pin active[MAX_ACTIVE];
    unsigned active_count;
    uint64_t pins_reported, pins_below_threshold, active_dropped;
    uint64_t carriers_started, compensations;
    int64_t next_stats_ns;
    struct pending_notice notices[MAX_NOTICES];
    unsigned notice_count;
} W;

static _Atomic uint32_t wake_word;
static _Atomic int sleeping;
static _Atomic int stop_requested;
static _Atomic int finished;
static _Atomic int running;

void writer_wake(void)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&sleeping, memory_order_relaxed)) {
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

static void put_event(WireEvent *ev)
{
    if (W.record)
        record_put(W.record, ev);
}

static void send_string(uint32_t sid)
{
    unsigned *sent = symbols_string_sent(W.symbols, sid);
    if (!W.record || !sent || (*sent & SINK_RECORD))
        return;
    *sent |= SINK_RECORD;
    Vtpin__V1__StringDef def = VTPIN__V1__STRING_DEF__INIT;
    def.id = sid;
    def.value = (char *)symbols_string_text(W.symbols, sid);
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_STRING;
    ev.string = &def;
    put_event(&ev);
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
    if (!W.record || !m || (m->sent & SINK_RECORD))
        return;
    m->sent |= SINK_RECORD;
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
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_METHOD;
    ev.method = &def;
    put_event(&ev);
}

static void send_stack(const struct stack_info *cst)
{
    struct stack_info *st = cst ? symbols_stack_by_id(W.symbols, cst->id) : NULL;
    if (!W.record || !st || (st->sent & SINK_RECORD))
        return;
    st->sent |= SINK_RECORD;
    for (uint32_t i = 0; i < st->count; i++)
        send_method(st->frames[i].method);
    Vtpin__V1__Frame *frames = calloc(st->count ? st->count : 1, sizeof(*frames));
    Vtpin__V1__Frame **ptrs = calloc(st->count ? st->count : 1, sizeof(*ptrs));
    if (!frames || !ptrs) {
        free(frames);
        free(ptrs);
        st->sent &= ~SINK_RECORD;
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
    put_event(&ev);
    free(frames);
    free(ptrs);
}

static void send_notice(int severity, const char *code, const char *text)
{
    if (W.trace) {
        char line[512];
        snprintf(line, sizeof(line), "%s: %s", severity == VTPIN__V1__SEVERITY__INFO ? "note" : "warning", text);
        trace_line(W.trace, line);
    }
    Vtpin__V1__Notice n = VTPIN__V1__NOTICE__INIT;
    n.time_ns = clock_mono_ns();
    n.severity = (Vtpin__V1__Severity)severity;
    n.code = (char *)code;
    n.text = (char *)text;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_NOTICE;
    ev.notice = &n;
    put_event(&ev);
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
}

static void send_stats(void)
{
    Vtpin__V1__Stats s = VTPIN__V1__STATS__INIT;
    fill_stats(&s);
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_STATS;
    ev.stats = &s;
    put_event(&ev);
}

static char host_name[256];

static void send_hello(void)
{
    const struct writer_config *c = &W.cfg;
    Vtpin__V1__Hello h = VTPIN__V1__HELLO__INIT;
    h.schema_version = WIRE_SCHEMA_VERSION;
    h.pid = c->pid;
    h.java_version = (char *)c->java_version;
    h.vm_name = (char *)c->vm_name;
    h.vm_version = (char *)c->vm_version;
    h.vm_vendor = (char *)c->vm_vendor;
    if (gethostname(host_name, sizeof(host_name) - 1) == 0)
        h.host = host_name;
    h.agent_version = VTPIN_VERSION;
    h.options = (char *)c->option_text;
    h.has_mode = 1;
    h.mode = c->attach_mode ? VTPIN__V1__LOAD_MODE__ATTACH : VTPIN__V1__LOAD_MODE__STARTUP;
    h.has_start_unix_ns = h.has_start_mono_ns = 1;
    h.start_mono_ns = clock_mono_ns();
    h.start_unix_ns = clock_unix_ns();
    h.has_threshold_ns = 1;
    h.threshold_ns = c->options->threshold_ns;
    h.has_jdk_feature = 1;
    h.jdk_feature = c->jdk_feature;
    h.has_parallelism = 1;
    h.parallelism = c->parallelism;
    h.n_capabilities_missing = c->capabilities_missing_count;
    h.capabilities_missing = (char **)c->capabilities_missing;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_HELLO;
    ev.hello = &h;
    put_event(&ev);
}

/* ---- pins ---- */

static struct pin_view view_of(const struct active_pin *a, int64_t end_ns)
{
    struct pin_view v = {a->pin_id,    a->reason,       a->start_ns,     end_ns,   a->vthread_id,
                         a->vthread_name, a->carrier_tid, a->carrier_name, a->stack, a->culprit};
    return v;
}

static void report_start(struct active_pin *a)
{
    a->reported = 1;
    W.pins_reported++;
    struct pin_view v = view_of(a, 0);
    trace_pin_start(W.trace, W.symbols, &v);
    if (!W.record)
        return;
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
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_PIN_START;
    ev.pin_start = &p;
    put_event(&ev);
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

static void on_pin_start(const struct rec *r)
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
    a->stack = symbols_stack(W.symbols, W.jni, r, W.cfg.options->depth);
    a->reason = r->reason != REASON_UNKNOWN ? r->reason : symbols_infer_reason(W.symbols, a->stack);
    a->culprit = symbols_culprit(W.symbols, a->stack, a->reason);
    if (W.cfg.options->threshold_ns == 0)
        report_start(a);
}

static void on_pin_end(const struct rec *r)
{
    for (unsigned i = 0; i < W.active_count; i++) {
        struct active_pin *a = &W.active[i];
        if (a->pin_id != r->pin_id)
            continue;
        int64_t duration = r->time_ns - a->start_ns;
        if (!a->reported && (uint64_t)duration >= W.cfg.options->threshold_ns)
            report_start(a);
        if (a->reported)
            report_end(a, r->time_ns);
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
    send_notice(VTPIN__V1__SEVERITY__WARNING, "scheduler.compensation", text);
}

static unsigned drain(void)
{
    unsigned n = 0;
    const struct rec *r;
    while ((r = queue_peek(W.cfg.queue)) != NULL) {
        switch (r->kind) {
        case REC_PIN_START:
            on_pin_start(r);
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
        n++;
    }
    return n;
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
        if (due <= 0)
            report_start(a);
        else if (due < wait)
            wait = due;
    }
    return wait;
}

static void flush_outputs(void)
{
    if (W.record)
        record_flush(W.record);
    trace_flush(W.trace);
}

static void wait_for_work(int64_t timeout_ns)
{
    uint32_t seen = atomic_load(&wake_word);
    atomic_store(&sleeping, 1);
    atomic_thread_fence(memory_order_seq_cst);
    if (!queue_peek(W.cfg.queue) && !atomic_load(&stop_requested)) {
        struct timespec ts = {timeout_ns / 1000000000LL, timeout_ns % 1000000000LL};
        syscall(SYS_futex, &wake_word, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
    }
    atomic_store(&sleeping, 0);
}

static void JNICALL writer_main(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
    (void)arg;
    W.jvmti = jvmti;
    W.jni = jni;
    while (!atomic_load(&stop_requested)) {
        drain();
        int64_t now = clock_mono_ns();
        int64_t wait = report_crossings(now);
        if (now >= W.next_stats_ns) {
            send_stats();
            W.next_stats_ns = now + (int64_t)W.cfg.options->stats_interval_ns;
        }
        if (W.next_stats_ns - now < wait)
            wait = W.next_stats_ns - now;
        flush_outputs();
        if (wait > 0)
            wait_for_work(wait);
    }
    /* Exit: everything queued so far, then the pins still in progress. */
    drain();
    report_crossings(clock_mono_ns());
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
    flush_outputs();
    atomic_store(&finished, 1);
}

int writer_start(jvmtiEnv *jvmti, JNIEnv *jni)
{
    if (atomic_load(&running))
        return 0;
    W.symbols = symbols_new(jvmti, W.cfg.options->max_methods, W.cfg.options->max_stacks);
    if (!W.symbols)
        return -ENOMEM;
    send_hello();
    for (unsigned i = 0; i < W.notice_count; i++)
        send_notice(W.notices[i].severity, W.notices[i].code, W.notices[i].text);
    flush_outputs();

    jclass thread_class = (*jni)->FindClass(jni, "java/lang/Thread");
    jmethodID ctor = thread_class ? (*jni)->GetMethodID(jni, thread_class, "<init>", "(Ljava/lang/String;)V") : NULL;
    jstring name = (*jni)->NewStringUTF(jni, "vtpin writer");
    jobject thread = ctor && name ? (*jni)->NewObject(jni, thread_class, ctor, name) : NULL;
    if (!thread) {
        (*jni)->ExceptionClear(jni);
        return -ENOMEM;
    }
    jvmtiError e = (*jvmti)->RunAgentThread(jvmti, thread, writer_main, NULL, JVMTI_THREAD_NORM_PRIORITY);
    if (e != JVMTI_ERROR_NONE)
        return -EINVAL;
    atomic_store(&running, 1);
    return 0;
}

void writer_stop(unsigned timeout_ms)
{
    if (!atomic_load(&running))
        return;
    atomic_store(&stop_requested, 1);
    atomic_fetch_add(&wake_word, 1);
    syscall(SYS_futex, &wake_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    for (unsigned waited = 0; !atomic_load(&finished) && waited < timeout_ms; waited++)
        usleep(1000);
    if (!atomic_load(&finished))
        log_warn("the writer did not finish within %u ms; the last events may be missing", timeout_ms);
}
