#include "active_pins.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_pins.h"
#include "api_record.h"
#include "blocker.h"
#include "carriers.h"
#include "clock.h"
#include "common/strbuf.h"
#include "defs.h"
#include "downcall.h"
#include "jdk_words.h"
#include "jthread.h"
#include "outputs.h"
#include "pin_machine.h"
#include "settled.h"
#include "stack_read.h"
#include "trace.h"
#include "writer_thread.h"

#define MAX_COMPENSATION_NOTICES 10
#define BLOCKED_IN_MAX 96

/* What the writer holds of a pin in progress besides its state (pin_machine.h): by slot. */
struct active_pin {
    uint64_t pin_id;
    int64_t start_ns;
    int reason;
    int64_t vthread_id;
    int carrier_tid;
    char vthread_name[REC_NAME_MAX];
    char carrier_name[REC_NAME_MAX];
    const struct stack_info *stack;
    uint32_t culprit;
    char blocked_in[BLOCKED_IN_MAX];
    int blocking;     /* frame of the blocking operation when not the culprit, else -1 */
    int has_downcall; /* the culprit invoked an FFM downcall or called a JNA function; downcall names it */
    struct downcall_target downcall;
    int stack_dropped;               /* taken, but the stack table was full (stacks_dropped) */
    int op;                          /* enum pin_op: what the pinned thread blocks in */
    int64_t last_asleep_ns;          /* watchdog pins: the last sample that saw the carrier asleep in it; 0: none */
    int jdk_code;                    /* the JDK's freeze result at the start, -1: not asked */
    char waits_for[JDK_CLASS_MAX];   /* VM_BLOCK: the class another thread initializes, "" unknown */
    char jdk_reason[JDK_REASON_MAX]; /* the JDK's own words (jdk_words.h) */
    /* what it waits for (blocker.h), looked up when it crossed the threshold; what BLOCKER_NONE:
     * not looked up, or nothing known. Its stack record is the module's: named in blocker_stack */
    struct blocker blocker;
    const struct stack_info *blocker_stack;
    uint64_t blocker_pin; /* the owner's own pin in progress, 0: none */
    /* what that owner itself waits for, and so on (blocker.h struct blocker_chain), strings by id */
    struct kept_hop {
        int what, has_thread, is_virtual;
        uint32_t class_sid, name_sid, carrier_sid;
        int64_t id;
        const char *state;
    } chain[BLOCKER_CHAIN_MAX];
    int n_chain;
};

static struct {
    const struct writer_config *cfg;
    jvmtiEnv *jvmti;
    struct symbols *symbols;
    struct pin_machine machine;
    struct active_pin pins[PM_MAX_PINS];
    struct active_pins_counts counts;
} active;

int active_pins_init(const struct writer_config *cfg, jvmtiEnv *jvmti, struct symbols *symbols)
{
    active.cfg = cfg;
    active.jvmti = jvmti;
    active.symbols = symbols;
    pm_init(&active.machine, cfg->options->threshold_ns);
    int rc = blocker_init(jvmti, cfg->options->depth, cfg->jdk_feature);
    return rc ? rc : stack_read_writer_init(cfg->options->depth);
}

void active_pins_fini(void)
{
    blocker_fini();
    stack_read_writer_fini();
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
                         .jdk_reason = a->jdk_reason,
                         .downcall = a->has_downcall ? &a->downcall : NULL};
    return v;
}

static void pin_start_to(unsigned sinks, struct active_pin *a)
{
    defs_send_stack(active.symbols, a->stack);
    uint32_t vname = symbols_string(active.symbols, a->vthread_name);
    uint32_t cname = symbols_string(active.symbols, a->carrier_name);
    uint32_t words = a->jdk_reason[0] ? symbols_string(active.symbols, a->jdk_reason) : 0;
    defs_send_string(active.symbols, vname);
    defs_send_string(active.symbols, cname);
    defs_send_string(active.symbols, words);
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
    OPT_U32(p, jdk_reason, words);
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
    Vtpin__V1__Blocker bl = VTPIN__V1__BLOCKER__INIT, hops[BLOCKER_CHAIN_MAX], *hop_of[BLOCKER_CHAIN_MAX];
    const struct blocker *b = &a->blocker;
    if (b->what != BLOCKER_NONE) {
        defs_send_stack(active.symbols, a->blocker_stack);
        uint32_t cls = b->object_class[0] ? symbols_string(active.symbols, b->object_class) : 0;
        uint32_t bname = b->has_thread ? symbols_string(active.symbols, b->name) : 0;
        uint32_t bcarrier = b->carrier[0] ? symbols_string(active.symbols, b->carrier) : 0;
        defs_send_string(active.symbols, cls);
        defs_send_string(active.symbols, bname);
        defs_send_string(active.symbols, bcarrier);
        bl.has_what = 1;
        bl.what = (Vtpin__V1__BlockerKind)b->what;
        OPT_U32(bl, object_class, cls);
        OPT_U32(bl, thread_name, bname);
        OPT_U32(bl, carrier_name, bcarrier);
        if (b->has_thread) {
            bl.has_thread_id = 1;
            bl.thread_id = b->id;
            bl.has_virtual_ = 1;
            bl.virtual_ = b->is_virtual;
            bl.state = (char *)b->state;
        }
        if (a->blocker_stack) {
            bl.has_stack = 1;
            bl.stack = a->blocker_stack->id;
        }
        bl.has_pin = a->blocker_pin != 0;
        bl.pin = a->blocker_pin;
        for (int i = 0; i < a->n_chain; i++) {
            const struct kept_hop *k = &a->chain[i];
            Vtpin__V1__Blocker *h = &hops[i];
            vtpin__v1__blocker__init(h);
            defs_send_string(active.symbols, k->class_sid);
            defs_send_string(active.symbols, k->name_sid);
            defs_send_string(active.symbols, k->carrier_sid);
            h->has_what = 1;
            h->what = (Vtpin__V1__BlockerKind)k->what;
            OPT_U32(*h, object_class, k->class_sid);
            OPT_U32(*h, thread_name, k->name_sid);
            OPT_U32(*h, carrier_name, k->carrier_sid);
            if (k->has_thread) {
                h->has_thread_id = 1;
                h->thread_id = k->id;
                h->has_virtual_ = 1;
                h->virtual_ = k->is_virtual;
                h->state = (char *)k->state;
            }
            hop_of[i] = h;
        }
        bl.n_chain = (size_t)a->n_chain;
        bl.chain = a->n_chain ? hop_of : NULL;
        p.blocker = &bl;
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

/* The JDK's own words for a, from its reason, the JDK's code and its stack (jdk_words.h). */
static void set_words(struct active_pin *a)
{
    struct jdk_words_pin w = {.jdk_feature = (int)active.cfg->jdk_feature,
                              .reason = a->reason,
                              .code = a->jdk_code,
                              .clinit_class = symbols_innermost_clinit(active.symbols, a->stack),
                              .waits_for_class = a->waits_for};
    jdk_words_format(&w, a->jdk_reason, sizeof(a->jdk_reason));
}

/* The stack in r (a callback's record) names a's stack, reason and culprit. */
static void set_stack(struct active_pin *a, const struct pin_rec *r)
{
    JNIEnv *jni = r->frame_count ? writer_thread_jni() : NULL; /* names need the JVM: never after VMDeath */
    a->stack = jni ? symbols_stack(active.symbols, jni, r, active.cfg->options->depth) : NULL;
    a->stack_dropped = jni && !a->stack;
    if (a->reason == REASON_UNKNOWN)
        a->reason = symbols_infer_reason(active.symbols, a->stack, active.cfg->jdk_feature < 24);
    /* A park under a <clinit> the VM called: a VM frame pins it. 21-25 call that NATIVE, 26+ a
     * critical section; vtpin's reason stays NATIVE on every JDK (the words name the class). */
    if (a->op == PIN_OP_PARK && a->reason == REASON_CRITICAL_SECTION &&
        symbols_innermost_clinit(active.symbols, a->stack))
        a->reason = REASON_NATIVE;
    a->culprit = symbols_culprit(active.symbols, a->stack, a->reason);
    describe_native(a, jni);
    if (a->stack && a->op != PIN_OP_PARK && (a->reason == REASON_NATIVE || a->reason == REASON_CRITICAL_SECTION)) {
        /* 24+: what blocks is the monitor entry or Object.wait, not a frame above the culprit */
        uint32_t at = symbols_culprit(active.symbols, a->stack,
                                      a->op == PIN_OP_ENTER ? REASON_MONITOR_ENTER : REASON_OBJECT_WAIT);
        a->blocking = at != a->culprit ? (int)at : -1;
    }
    set_words(a);
}

/* A crossed pin's stack, read from the writer while the pin is in progress
 * (stack_read.h): for a deferred start the whole stack, for a frames-only
 * one the same frames again with their monitors. */
static enum pm_read take_stack(struct active_pin *a, int monitors, const struct pin_rec **taken)
{
    int through_park = a->op == PIN_OP_PARK && is_park_reason(a->reason);
    if (stack_read_take(a->carrier_tid, a->vthread_id, through_park, pins_park_method(), taken) != 0)
        return PM_READ_AGAIN;
    /* For the monitors of the callback's frames: a thread blocked elsewhere since (its entry won, its
     * end not read yet, and now it sleeps) would lend this pin the next one's stack. */
    if (monitors && !symbols_stack_same_frames(a->stack, *taken))
        return PM_READ_OTHER;
    return PM_READ_OK;
}

/* 24+: a contended entry or Object.wait unmounts unless a native frame is below it (pins.c):
 * decided before the stack is kept, so the many that unmount take no room in the tables. */
static int is_pin(const struct pin_rec *r)
{
    JNIEnv *jni = r->frame_count ? writer_thread_jni() : NULL;
    return jni && symbols_rec_has_native(active.symbols, jni, r) == 1;
}

/* The pin in progress of virtual thread vid, other than except: its id, or 0. */
static uint64_t pin_of_vthread(int64_t vid, uint64_t except)
{
    const struct pin_machine *m = &active.machine;
    for (unsigned i = 0; i < pm_count(m); i++) {
        const struct active_pin *a = &active.pins[pm_slot_at(m, i)];
        if (a->vthread_id == vid && a->pin_id != except && pm_state_of(m, pm_slot_at(m, i)) == PM_REPORTED)
            return a->pin_id;
    }
    return 0;
}

/* The id of text, 0 for "". */
static uint32_t string_id(const char *text)
{
    return text[0] ? symbols_string(active.symbols, text) : 0;
}

/* b and its chain (blocker.h) as a's: its stack named now, the module's buffer reused by the next look. */
static void keep_blocker(struct active_pin *a, JNIEnv *jni, const struct blocker *b, const struct blocker_chain *chain)
{
    a->blocker_stack = b->stack && b->stack->frame_count
                           ? symbols_stack(active.symbols, jni, b->stack, active.cfg->options->depth)
                           : NULL;
    a->blocker_pin = b->has_thread && b->is_virtual ? pin_of_vthread(b->id, a->pin_id) : 0;
    a->blocker = *b;
    a->blocker.stack = NULL;
    a->n_chain = chain->n;
    for (int i = 0; i < chain->n; i++) {
        const struct blocker_hop *h = &chain->hop[i];
        a->chain[i] = (struct kept_hop){.what = h->what,
                                        .has_thread = h->has_thread,
                                        .is_virtual = h->is_virtual,
                                        .class_sid = string_id(h->object_class),
                                        .name_sid = h->has_thread ? string_id(h->name) : 0,
                                        .carrier_sid = string_id(h->carrier),
                                        .id = h->id,
                                        .state = h->state};
    }
}

/* What a pin blocked in a contended entry or Object.wait waits for, or a pinned park on a
 * java.util.concurrent lock (blocker.h), while the pin is in progress on its carrier (a watchdog
 * pin came with its own). */
static void find_blocker(struct active_pin *a)
{
    if (a->blocker.what != BLOCKER_NONE)
        return;
    int waits = a->op != PIN_OP_PARK || a->reason == REASON_MONITOR_ENTER || a->reason == REASON_OBJECT_WAIT;
    /* a monitor's owner needs can_get_monitor_info (not after attach); a lock's only JNI reads */
    JNIEnv *jni = !waits || active.cfg->blockers ? writer_thread_jni() : NULL;
    struct carrier_slot *c = jni ? carriers_by_tid(a->carrier_tid) : NULL;
    jthread vt = NULL;
    if (c && jthread_mounted(jni, c->thread, &vt) == 0 && vt && jthread_id(jni, vt) != a->vthread_id) {
        (*jni)->DeleteLocalRef(jni, vt);
        vt = NULL;
    }
    if (!vt) {
        /* reported late (a loaded machine), after its thread left the carrier: a wait not looked up */
        if (c && waits)
            blocker_too_late();
        return;
    }
    struct blocker b;
    struct blocker_chain chain;
    if ((waits ? blocker_find(jni, vt, clock_mono_ns(), &b, &chain)
               : blocker_find_lock(jni, vt, clock_mono_ns(), &b, &chain)) == 1)
        keep_blocker(a, jni, &b, &chain);
    (*jni)->DeleteLocalRef(jni, vt);
}

static void report_start(struct active_pin *a)
{
    find_blocker(a);
    if (!a->stack && !a->stack_dropped)
        active.counts.without_stack++; /* said, not silent: Stats.pins_without_stack */
    active.counts.reported++;
    struct pin_view v = view_of(a, 0);
    trace_pin_start(outputs_trace(), active.symbols, &v);
    pin_start_to(outputs_all(), a);
}

static void report_end(struct active_pin *a, int64_t end_ns)
{
    struct pin_view v = view_of(a, end_ns);
    trace_pin_end(outputs_trace(), active.symbols, &v);
    if (api_pins_enabled()) {
        char *record = api_record_format(active.symbols, &v, &a->blocker);
        if (record)
            api_pins_put_ended(a->start_ns, record);
    }
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

/* Carries out what the machine said (pin_machine.h, in the order of enum
 * pm_act), feeding it the verdicts and stack reads it asks for. start, end:
 * the records of this event, NULL when none (CHECK_PIN and NAME_START come
 * only with a start, NAME_END and REPORT_END only with an end). Returns when
 * the pin wants its next tick (ns from now, PM_NOT_DUE). */
static int64_t perform(struct pm_action act, const struct pin_rec *start, const struct pin_rec *end)
{
    struct pin_machine *m = &active.machine;
    if (act.act & PM_ACT_DROPPED)
        active.counts.dropped++;
    if (act.slot < 0)
        return act.due;
    struct active_pin *a = &active.pins[act.slot];
    if (act.act & PM_ACT_CHECK_PIN) {
        int pin = start && is_pin(start);
        if (pin)
            a->reason = REASON_NATIVE;
        act = pm_verdict(m, act.slot, pin);
    }
    if ((act.act & PM_ACT_NAME_START) && start)
        set_stack(a, start);
    if (act.act & (PM_ACT_TAKE_MONITORS | PM_ACT_TAKE_STACK)) {
        const struct pin_rec *taken = NULL;
        enum pm_read got = take_stack(a, (act.act & PM_ACT_TAKE_MONITORS) != 0, &taken);
        act = pm_result(m, act.slot, got, clock_mono_ns());
        if ((act.act & PM_ACT_NAME_TAKEN) && taken)
            set_stack(a, taken);
    }
    if ((act.act & PM_ACT_NAME_END) && end)
        set_stack(a, end);
    if (act.act & PM_ACT_SETTLED)
        settled_mark(a->pin_id);
    if (act.act & PM_ACT_REPORT_START)
        report_start(a);
    if ((act.act & PM_ACT_REPORT_END) && end)
        report_end(a, end->time_ns);
    if (act.act & PM_ACT_BELOW)
        active.counts.below_threshold++;
    if (act.act & PM_ACT_NOT_PIN)
        active.counts.not_pins++;
    return act.due;
}

void active_pins_start(const struct pin_rec *r, const char *blocked_in, const char *waits_for,
                       const struct blocker *blocker)
{
    struct pm_start s = {.pin_id = r->pin_id,
                         .time_ns = r->time_ns,
                         .maybe = r->op != PIN_OP_PARK && r->reason == REASON_UNKNOWN,
                         .stack = r->stack_deferred   ? PM_STACK_NONE
                                  : r->monitors_later ? PM_STACK_FRAMES
                                                      : PM_STACK_FULL};
    struct pm_action act = pm_start(&active.machine, &s);
    if (act.slot >= 0) {
        struct active_pin *a = &active.pins[act.slot];
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
        if (blocked_in)
            snprintf(a->blocked_in, sizeof(a->blocked_in), "%s", blocked_in);
        a->jdk_code = r->jdk_code;
        if (waits_for)
            snprintf(a->waits_for, sizeof(a->waits_for), "%s", waits_for);
        if (blocker && blocker->what != BLOCKER_NONE)
            keep_blocker(a, writer_thread_jni(), blocker, &(struct blocker_chain){0}); /* an initializer */
        set_words(a); /* from the reason alone until a stack names more */
    }
    perform(act, r, NULL);
}

void active_pins_end(const struct pin_rec *r)
{
    int slot = pm_find(&active.machine, r->pin_id);
    const struct active_pin *a = slot >= 0 ? &active.pins[slot] : NULL;
    /* The ending callback took the stack when the pin crossed unseen; for a
     * frames-only start it counts only when it stood where the start did. */
    struct pm_end e = {.pin_id = r->pin_id,
                       .time_ns = r->time_ns,
                       .has_frames = r->frame_count != 0,
                       .same_frames = a && r->frame_count && symbols_stack_same_frames(a->stack, r)};
    perform(pm_end(&active.machine, slot, &e), NULL, r);
}

void active_pins_asleep(uint64_t pin_id, int64_t at)
{
    int slot = pm_find(&active.machine, pin_id);
    if (slot >= 0)
        active.pins[slot].last_asleep_ns = at;
}

void active_pins_carrier_started(const struct pin_rec *r)
{
    const struct writer_config *cfg = active.cfg;
    active.counts.carriers_started++;
    if (!cfg->parallelism || active.counts.carriers_started <= cfg->parallelism)
        return;
    active.counts.compensations++;
    if (active.counts.compensations > MAX_COMPENSATION_NOTICES)
        return;
    unsigned waits = 0, count = pm_count(&active.machine);
    for (unsigned i = 0; i < count; i++)
        waits += active.pins[pm_slot_at(&active.machine, i)].reason == REASON_OBJECT_WAIT;
    char text[256];
    snprintf(text, sizeof(text),
             "the scheduler had to compensate: carrier %s (tid %d) is carrier #%llu, beyond parallelism %u, "
             "started while %u pins were in progress (%u in Object.wait)",
             r->carrier_name, r->carrier_tid, (unsigned long long)active.counts.carriers_started, cfg->parallelism,
             count, waits);
    outputs_say(SINK_RECORD | SINK_LINK, VTPIN__V1__SEVERITY__WARNING, "scheduler.compensation", text);
}

int64_t active_pins_report_crossings(int64_t now)
{
    int64_t wait = 200 * 1000000LL;
    struct pin_machine *m = &active.machine;
    for (unsigned i = 0; i < pm_count(m); i++) { /* a tick never frees a slot */
        int64_t due = perform(pm_tick(m, pm_slot_at(m, i), now), NULL, NULL);
        if (due > 0 && due < wait)
            wait = due;
    }
    return wait;
}

int active_pins_on_carrier(int carrier_tid, uint64_t except_id)
{
    const struct pin_machine *m = &active.machine;
    for (unsigned i = 0; i < pm_count(m); i++) {
        const struct active_pin *a = &active.pins[pm_slot_at(m, i)];
        if (a->carrier_tid == carrier_tid && a->pin_id != except_id)
            return 1;
    }
    return 0;
}

unsigned active_pins_brief(struct pin_brief *out, unsigned max)
{
    const struct pin_machine *m = &active.machine;
    unsigned n = pm_count(m);
    for (unsigned i = 0; i < n && i < max; i++) {
        const struct active_pin *a = &active.pins[pm_slot_at(m, i)];
        out[i] = (struct pin_brief){.pin_id = a->pin_id,
                                    .carrier_tid = a->carrier_tid,
                                    .vthread_id = a->vthread_id,
                                    .vthread_name = a->vthread_name,
                                    .blocker = &a->blocker,
                                    .stack = a->stack,
                                    .culprit = a->culprit};
    }
    return n;
}

unsigned active_pins_count(void)
{
    return pm_count(&active.machine);
}

void active_pins_resend(unsigned sinks)
{
    const struct pin_machine *m = &active.machine;
    for (unsigned i = 0; i < pm_count(m); i++) {
        int slot = pm_slot_at(m, i);
        if (pm_state_of(m, slot) == PM_REPORTED)
            pin_start_to(sinks, &active.pins[slot]);
    }
}

void active_pins_to_api(void)
{
    struct strbuf all = {0};
    const struct pin_machine *m = &active.machine;
    for (unsigned i = 0; i < pm_count(m); i++) {
        int slot = pm_slot_at(m, i);
        if (pm_state_of(m, slot) != PM_REPORTED)
            continue;
        const struct active_pin *a = &active.pins[slot];
        struct pin_view v = view_of(a, 0);
        char *record = api_record_format(active.symbols, &v, &a->blocker);
        if (record)
            strbuf_printf(&all, "%s", record);
        free(record);
    }
    if (all.oom)
        strbuf_fini(&all);
    api_pins_set_in_progress(all.s);
}

void active_pins_counts(struct active_pins_counts *out)
{
    *out = active.counts;
}
