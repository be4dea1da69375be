#include "active_pins.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "carriers.h"
#include "clock.h"
#include "deferred_stack.h"
#include "defs.h"
#include "downcall.h"
#include "jthread.h"
#include "outputs.h"
#include "trace.h"
#include "writer_thread.h"

#define MAX_ACTIVE 4096
#define MAX_COMPENSATION_NOTICES 10
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
    int monitors_later; /* the stack came without its monitors: taken again when reported in progress */
    int blocking;       /* frame of the blocking operation when not the culprit, else -1 */
    int has_downcall;   /* the culprit invoked an FFM downcall or called a JNA function; downcall names it */
    struct downcall_target downcall;
    int stack_dropped;      /* taken, but the stack table was full (stacks_dropped) */
    int op;                 /* enum pin_op: what the pinned thread blocks in */
    int64_t last_asleep_ns; /* watchdog pins: the last sample that saw the carrier asleep in it; 0: none */
};

static struct {
    const struct writer_config *cfg;
    jvmtiEnv *jvmti;
    struct symbols *symbols;
    struct active_pin pins[MAX_ACTIVE];
    unsigned count;
    struct active_pins_counts counts;
} active;

int active_pins_init(const struct writer_config *cfg, jvmtiEnv *jvmti, struct symbols *symbols)
{
    active.cfg = cfg;
    active.jvmti = jvmti;
    active.symbols = symbols;
    return deferred_stack_init(jvmti, cfg->options->depth);
}

void active_pins_fini(void)
{
    deferred_stack_fini();
    memset(&active, 0, sizeof(active));
}

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
    defs_send_stack(active.symbols, a->stack);
    uint32_t vname = symbols_string(active.symbols, a->vthread_name);
    uint32_t cname = symbols_string(active.symbols, a->carrier_name);
    defs_send_string(active.symbols, vname);
    defs_send_string(active.symbols, cname);
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
        dc.has_api = a->downcall.api != NATIVE_API_FFM;
        dc.api = (Vtpin__V1__NativeApi)a->downcall.api;
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
    outputs_put(sinks, &ev);
}

/* The pin's native boundary: the blocking operation above the culprit, and
 * for an FFM downcall its target, read from the stub's frame while the
 * virtual thread is still pinned on its carrier (startup mode only); for a
 * JNA call its function, the interface method's name, and where dlsym finds
 * it. */
static void describe_native(struct active_pin *a, JNIEnv *jni)
{
    struct native_site site;
    symbols_native_site(active.symbols, a->stack, a->culprit, &site, &a->blocking);
    int at_culprit = a->stack && site.culprit == (int)a->culprit;
    a->has_downcall = at_culprit && (site.downcall >= 0 || site.jna >= 0);
    memset(&a->downcall, 0, sizeof(a->downcall));
    if (at_culprit && site.jna >= 0) {
        const char *name = NULL;
        if (site.jna_function >= 0) {
            struct method_info *m = symbols_method_by_id(active.symbols, a->stack->frames[site.jna_function].method);
            name = m ? symbols_string_text(active.symbols, m->name_sid) : NULL;
        }
        downcall_name_jna(name, &a->downcall);
        return;
    }
    if (!a->has_downcall || !downcall_can_resolve() || !jni) /* a stack implies jni */
        return;
    jmethodID caller = a->stack->mids[site.culprit];
    int32_t bci = a->stack->frames[site.culprit].bci;
    struct carrier_slot *c = carriers_by_tid(a->carrier_tid);
    jthread vt = NULL;
    int rc = -ESTALE;
    if (c && jthread_mounted(jni, c->thread, &vt) == 0 && vt) {
        if (jthread_id(jni, vt) == a->vthread_id)
            rc = downcall_resolve(active.jvmti, jni, vt, site.downcall, a->stack->mids[site.downcall], &a->downcall);
        (*jni)->DeleteLocalRef(jni, vt);
    }
    if (rc == 0)
        downcall_site_learn(caller, bci, &a->downcall);
    else
        downcall_site_recall(caller, bci, &a->downcall); /* the pin moved on before the writer looked */
}

static int is_park_reason(int reason)
{
    return reason == REASON_MONITOR || reason == REASON_NATIVE || reason == REASON_CRITICAL_SECTION ||
           reason == REASON_UNKNOWN;
}

/* The stack in r (a callback's record) names a's stack, reason and culprit. */
static void set_stack(struct active_pin *a, const struct rec *r)
{
    JNIEnv *jni = r->frame_count ? writer_thread_jni() : NULL; /* names need the JVM: never after VMDeath */
    a->stack = jni ? symbols_stack(active.symbols, jni, r, active.cfg->options->depth) : NULL;
    a->stack_dropped = jni && !a->stack;
    a->stack_deferred = 0;
    if (a->reason == REASON_UNKNOWN)
        a->reason = symbols_infer_reason(active.symbols, a->stack, active.cfg->jdk_feature < 24);
    a->culprit = symbols_culprit(active.symbols, a->stack, a->reason);
    describe_native(a, jni);
    if (a->stack && a->op != PIN_OP_PARK && (a->reason == REASON_NATIVE || a->reason == REASON_CRITICAL_SECTION)) {
        /* 24+: what blocks is the monitor entry or Object.wait, not a frame above the culprit */
        uint32_t at = symbols_culprit(active.symbols, a->stack,
                                      a->op == PIN_OP_ENTER ? REASON_MONITOR_ENTER : REASON_OBJECT_WAIT);
        a->blocking = at != a->culprit ? (int)at : -1;
    }
}

/* A pin that lasted past the threshold is still in progress: its stack and
 * monitors are taken now, from the writer, instead of on every short pin in
 * the callback (deferred_stack.h). */
static int take_deferred_stack(struct active_pin *a)
{
    const struct rec *r = NULL;
    int through_park = a->op == PIN_OP_PARK && is_park_reason(a->reason);
    int rc = deferred_stack_take(a->carrier_tid, a->vthread_id, through_park, &r);
    /* For the monitors of the callback's frames: a thread blocked elsewhere since (its entry won, its
     * end not read yet, and now it sleeps) would lend this pin the next one's stack. */
    if (rc == 0 && a->monitors_later && !symbols_stack_same_frames(a->stack, r))
        rc = -ESRCH;
    if (rc == 0)
        set_stack(a, r);
    return rc;
}

/* How long a pin in progress waits for its stack before it is reported without. */
static int stack_may_come(const struct active_pin *a)
{
    return clock_mono_ns() - a->start_ns < (int64_t)active.cfg->options->threshold_ns + 100000000LL;
}

/* Returns -EAGAIN when the pin's stack cannot be taken yet (try again next round). */
static int report_start(struct active_pin *a, int still_pinned)
{
    /* Not blocked yet (the JDK posts the entry before the thread blocks, and freezing first can
     * take long under load), or blocked elsewhere: next round, unless its end, which then takes
     * the stack, comes first. Late still: the frames it has, without monitors. */
    if (a->monitors_later && still_pinned && take_deferred_stack(a) != 0 && stack_may_come(a))
        return -EAGAIN;
    if (a->monitors_later)
        pins_settled(a->pin_id);
    a->monitors_later = 0;
    if (a->stack_deferred && (!still_pinned || take_deferred_stack(a) == -EAGAIN)) {
        if (still_pinned && stack_may_come(a))
            return -EAGAIN;
        a->stack_deferred = 0; /* 100 ms past the threshold and still not blocked: report without it */
        a->culprit = 0;
    }
    if (!a->stack && !a->stack_dropped)
        active.counts.without_stack++; /* said, not silent: Stats.pins_without_stack */
    a->reported = 1;
    active.counts.reported++;
    struct pin_view v = view_of(a, 0);
    trace_pin_start(outputs_trace(), active.symbols, &v);
    pin_start_to(outputs_all(), a);
    return 0;
}

static void report_end(struct active_pin *a, int64_t end_ns)
{
    struct pin_view v = view_of(a, end_ns);
    trace_pin_end(outputs_trace(), active.symbols, &v);
    Vtpin__V1__PinEnd p = VTPIN__V1__PIN_END__INIT;
    p.pin_id = a->pin_id;
    p.end_ns = end_ns;
    p.duration_ns = end_ns - a->start_ns;
    p.has_last_asleep_ns = a->last_asleep_ns != 0;
    p.last_asleep_ns = a->last_asleep_ns;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_PIN_END;
    ev.pin_end = &p;
    outputs_put_all(&ev);
}

void active_pins_start(const struct rec *r, const char *blocked_in)
{
    if (active.count >= MAX_ACTIVE) {
        active.counts.dropped++;
        return;
    }
    struct active_pin *a = &active.pins[active.count++];
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
        JNIEnv *jni = r->frame_count ? writer_thread_jni() : NULL;
        if (!jni || symbols_rec_has_native(active.symbols, jni, r) != 1) {
            if (r->monitors_later)
                pins_settled(r->pin_id);
            active.count--;
            active.counts.not_pins++;
            return;
        }
        a->reason = REASON_NATIVE;
        a->monitors_later = r->monitors_later;
    }
    if (!a->stack_deferred)
        set_stack(a, r);
    if (blocked_in)
        snprintf(a->blocked_in, sizeof(a->blocked_in), "%s", blocked_in);
    if (active.cfg->options->threshold_ns == 0)
        report_start(a, 1);
}

void active_pins_end(const struct rec *r)
{
    for (unsigned i = 0; i < active.count; i++) {
        struct active_pin *a = &active.pins[i];
        if (a->pin_id != r->pin_id)
            continue;
        int64_t end_ns = r->time_ns, duration = end_ns - a->start_ns;
        if (!a->reported && (uint64_t)duration >= active.cfg->options->threshold_ns) {
            /* Crossed and ended before the writer looked (or while it waited for
             * the park): the ending callback took the stack for it. */
            /* (a frames-only start: the monitors from the end, when it stood where the start did) */
            if (r->frame_count && (a->stack_deferred || (a->monitors_later && symbols_stack_same_frames(a->stack, r))))
                set_stack(a, r);
            report_start(a, 0);
        }
        if (a->reported)
            report_end(a, end_ns);
        else
            active.counts.below_threshold++;
        active.pins[i] = active.pins[--active.count];
        return;
    }
}

void active_pins_asleep(uint64_t pin_id, int64_t at)
{
    for (unsigned i = 0; i < active.count; i++)
        if (active.pins[i].pin_id == pin_id) {
            active.pins[i].last_asleep_ns = at;
            return;
        }
}

void active_pins_carrier_started(const struct rec *r)
{
    const struct writer_config *cfg = active.cfg;
    active.counts.carriers_started++;
    if (!cfg->parallelism || active.counts.carriers_started <= cfg->parallelism)
        return;
    active.counts.compensations++;
    if (active.counts.compensations > MAX_COMPENSATION_NOTICES)
        return;
    unsigned waits = 0;
    for (unsigned i = 0; i < active.count; i++)
        waits += active.pins[i].reason == REASON_OBJECT_WAIT;
    char text[256];
    snprintf(text, sizeof(text),
             "the scheduler had to compensate: carrier %s (tid %d) is carrier #%llu, beyond parallelism %u, "
             "started while %u pins were in progress (%u in Object.wait)",
             r->carrier_name, r->carrier_tid, (unsigned long long)active.counts.carriers_started, cfg->parallelism,
             active.count, waits);
    outputs_say(SINK_RECORD | SINK_LINK, VTPIN__V1__SEVERITY__WARNING, "scheduler.compensation", text);
}

int64_t active_pins_report_crossings(int64_t now)
{
    int64_t wait = 200 * 1000000LL;
    int64_t threshold = (int64_t)active.cfg->options->threshold_ns;
    for (unsigned i = 0; i < active.count; i++) {
        struct active_pin *a = &active.pins[i];
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

int active_pins_on_carrier(int carrier_tid, uint64_t except_id)
{
    for (unsigned i = 0; i < active.count; i++)
        if (active.pins[i].carrier_tid == carrier_tid && active.pins[i].pin_id != except_id)
            return 1;
    return 0;
}

unsigned active_pins_count(void)
{
    return active.count;
}

void active_pins_resend(unsigned sinks)
{
    for (unsigned i = 0; i < active.count; i++)
        if (active.pins[i].reported)
            pin_start_to(sinks, &active.pins[i]);
}

void active_pins_counts(struct active_pins_counts *out)
{
    *out = active.counts;
}
