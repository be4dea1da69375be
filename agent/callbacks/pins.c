#include "pins.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "bytecode.h"
#include "carriers.h"
#include "clock.h"
#include "jdk_words.h"
#include "jthread.h"
#include "log.h"
#include "settled.h"
#include "stack_read.h"

enum pin_kind { KIND_NONE = 0, KIND_PARK, KIND_ENTER, KIND_WAIT };

/* Per carrier OS thread. A pinned virtual thread cannot leave its carrier,
 * so the carrier's thread-local is the natural place for "the pin in progress". */
struct carrier_local {
    uint64_t pin_id;
    int64_t start_ns;
    enum pin_kind kind;
    int stack_deferred; /* the start went without its stack */
    int monitors_later; /* the start went with its frames only */
};
static __thread struct carrier_local on_carrier;

/* What detection resolved at pins_init. */
static struct {
    jvmtiEnv *jvmti;
    struct pins_setup setup;
    jclass continuation_class;
    jmethodID is_pinned0;
    jfieldID vthread_scope; /* VirtualThread.VTHREAD_SCOPE, static */
    jmethodID park_method;
    jclass int_array_class; /* int[]: HotSpot's class-initialization locks (is_class_init_lock) */
    struct jdk_words words; /* the freeze results of this JDK, by code */
    int park_breakpoints;   /* 1 set, -1 its bytecode is not the shape they need, 0 not tried (attach) */
    int resolved;           /* the JDK's classes and methods: looked up at the first init */
} detector;

static _Atomic int stopped = 1;
static _Atomic uint64_t next_pin_id;
static _Atomic uint64_t started_count;

uint64_t pins_started(void)
{
    return atomic_load_explicit(&started_count, memory_order_relaxed);
}

void pins_stop(void)
{
    atomic_store(&stopped, 1);
}

/* Continuation.isPinned0 on the current thread: 0 it could yield, else the
 * JDK's freeze result (detector.words names it); -1 when the JDK cannot be asked. */
static jint is_pinned0(JNIEnv *jni)
{
    if (!detector.is_pinned0)
        return -1;
    /* Read at each call (a field read and a local reference), not kept from init: VirtualThread is
     * not initialized there (jthread_field), and is once a virtual thread runs. */
    jobject scope = (*jni)->GetStaticObjectField(jni, jthread_vthread_class(), detector.vthread_scope);
    if (!scope)
        return -1;
    jint r = (*jni)->CallStaticIntMethod(jni, detector.continuation_class, detector.is_pinned0, scope);
    (*jni)->DeleteLocalRef(jni, scope);
    if ((*jni)->ExceptionCheck(jni)) {
        (*jni)->ExceptionClear(jni);
        return -1;
    }
    return r;
}

/* JDK 24+ (JEP 491): a virtual thread blocked in a contended entry or in
 * Object.wait unmounts, unless a native frame or a critical section keeps it
 * on its carrier; then it blocks the carrier like a park does. Asked through
 * JNI, isPinned0 counts the call's own entry frame as native: it tells a
 * critical section apart, but not a native frame. So REASON_UNKNOWN here
 * means "maybe": the pin start carries its stack and the writer keeps it only
 * when the stack has a native frame below the monitor (frames_native_site:
 * a JNI method, or an FFM downcall under its upcall), as the JDK's own walk
 * would. -1: not a pin (the JDK cannot be asked). */
static int mounted_reason(jint code)
{
    if (code < 0)
        return -1;
    return jdk_words_reason(&detector.words, code) == REASON_CRITICAL_SECTION ? REASON_CRITICAL_SECTION
                                                                              : REASON_UNKNOWN;
}

/* Where a callback makes its record: in its carrier's scratch record, then copied into a queue slot
 * taken only once it is made (pin_rec_close), so that a slot is never held while a callback reads a
 * stack or calls into the JVM: the writer takes slots in order, and one held open would hold back
 * every record behind it (issue 36). A thread without a scratch record fills its slot in place. */
struct record_space {
    struct queue *q; /* the queue at the open (a later attach may give the detector a new one) */
    struct pin_rec *r;
    void *scratch;
    uint64_t ticket;
};

static struct pin_rec *pin_rec_open(struct record_space *sp)
{
    sp->q = detector.setup.queue;
    sp->scratch = carriers_scratch_take(queue_slot_size(sp->q));
    sp->r = sp->scratch ? sp->scratch : queue_reserve(sp->q, &sp->ticket);
    return sp->r;
}

/* 0, or -1 when the queue was full (counted by the queue: the record is lost). */
static int pin_rec_close(struct record_space *sp)
{
    struct queue *q = sp->q;
    if (sp->scratch) {
        void *slot = queue_reserve(q, &sp->ticket);
        if (slot)
            memcpy(slot, sp->scratch, queue_slot_size(q));
        carriers_scratch_give_back(sp->scratch);
        if (!slot)
            return -1;
    }
    queue_commit(q, sp->ticket);
    return 0;
}

/* A pin end. thread (non-NULL when the pin outlasted the threshold with its
 * stack deferred): the writer may not have taken that stack yet, because it
 * looked late under CPU load or a record ahead in the queue held the start
 * back. The ending thread still stands in the pinning frames, so it takes its
 * own stack here and the pin is not reported without one. */
static void emit_end(uint64_t pin_id, int64_t now, jthread thread, enum pin_kind kind)
{
    struct record_space sp;
    struct pin_rec *r = pin_rec_open(&sp);
    if (!r)
        return;
    r->kind = REC_PIN_END;
    r->pin_id = pin_id;
    r->time_ns = now;
    r->carrier_tid = jthread_self_tid();
    r->truncated = 0;
    r->frame_count = 0;
    if (thread) {
        stack_read_full(thread, r);
        /* At MonitorContendedEntered the thread owns the monitor it was blocked on. */
        uint16_t *monitors = pin_rec_monitors(r, detector.setup.depth);
        if (kind == KIND_ENTER && r->frame_count > 0 && monitors[0] > 0)
            monitors[0]--;
    }
    if (pin_rec_close(&sp) == 0)
        detector.setup.wake_writer(INT64_MAX); /* an end can wait for the writer's next round */
}

/* stack_now: the writer needs the stack to decide whether this is a pin at all.
 * begun_ns: when the JDK's own event for this pin began, before this callback's work;
 * 0: the pin begins once that work is done. */
static void pin_begin(JNIEnv *jni, jthread vthread, enum pin_kind kind, enum pin_reason reason, jint code,
                      int stack_now, int64_t begun_ns)
{
    if (on_carrier.pin_id) /* a pin whose end we never saw (an exception out of park): close it */
        emit_end(on_carrier.pin_id, clock_mono_ns(), NULL, KIND_NONE);
    on_carrier.pin_id = 0;
    on_carrier.kind = KIND_NONE;
    atomic_fetch_add_explicit(&started_count, 1, memory_order_relaxed);
    struct record_space sp;
    struct pin_rec *r = pin_rec_open(&sp);
    if (!r)
        return; /* counted by the queue; the end will be ignored too */
    uint64_t id = atomic_fetch_add_explicit(&next_pin_id, 1, memory_order_relaxed) + 1;
    r->kind = REC_PIN_START;
    r->pin_id = id;
    r->truncated = 0;
    r->carrier_tid = jthread_self_tid();
    if (kind == KIND_PARK) { /* the exact reason the continuation cannot yield, from the JDK itself */
        code = is_pinned0(jni);
        reason = jdk_words_reason(&detector.words, code);
    }
    r->reason = (uint8_t)reason;
    r->jdk_code = (int16_t)(code >= 0 && code < JDK_WORDS_CODES ? code : -1);
    r->op = (uint8_t)(kind == KIND_ENTER ? PIN_OP_ENTER : kind == KIND_WAIT ? PIN_OP_WAIT : PIN_OP_PARK);
    r->vthread_id = jthread_id(jni, vthread);
    jthread_copy_name(jni, vthread, r->vthread_name);
    memcpy(r->carrier_name, jthread_self_carrier_name(jni, vthread), REC_NAME_MAX);
    int deferred = detector.setup.defer_stacks && !stack_now;
    r->stack_deferred = (uint8_t)deferred;
    /* With a threshold, a stack needed now only decides whether this is a pin (24+: most
     * contended entries are not): the frames say it. Reading the monitors each frame holds
     * walks the stack again, so the writer reads them when a real pin crosses the threshold. */
    r->monitors_later = (uint8_t)(stack_now && detector.setup.defer_stacks);
    if (deferred)
        r->frame_count = 0;
    else if (r->monitors_later)
        stack_read_frames(vthread, r);
    else
        stack_read_full(vthread, r);
    /* A park's carrier blocks once this callback returns: its work (the JDK's reason, the
     * stack) is vtpin's cost, not the program's pin (JFR's park event begins after it too). */
    int64_t now = begun_ns ? begun_ns : clock_mono_ns();
    r->time_ns = now;
    int monitors_later = r->monitors_later; /* r is the scratch record, free for reuse once closed */
    if (pin_rec_close(&sp))
        return; /* the queue was full: counted; the end will be ignored too */
    on_carrier.pin_id = id;
    on_carrier.start_ns = now;
    on_carrier.kind = kind;
    on_carrier.stack_deferred = deferred;
    on_carrier.monitors_later = monitors_later;
    /* Wake the writer only if it would otherwise look too late: when the pin crosses the threshold. */
    detector.setup.wake_writer(now + (int64_t)detector.setup.threshold_ns);
}

static void pin_end(jthread thread, enum pin_kind kind)
{
    if (!on_carrier.pin_id || on_carrier.kind != kind)
        return;
    uint64_t id = on_carrier.pin_id;
    on_carrier.pin_id = 0;
    on_carrier.kind = KIND_NONE;
    int64_t now = clock_mono_ns();
    /* A frames-only start the writer has not settled yet: it looked late, so the
     * end takes the stack the writer would have read while it was in progress. */
    int unsettled = on_carrier.monitors_later && !settled_has(id);
    int long_pin = (on_carrier.stack_deferred || unsettled) &&
                   (uint64_t)(now - on_carrier.start_ns) >= detector.setup.threshold_ns;
    emit_end(id, now, long_pin ? thread : NULL, kind);
}

static int is_virtual(JNIEnv *jni, jthread thread)
{
    return thread && (*jni)->IsVirtualThread(jni, thread);
}

void JNICALL pins_on_breakpoint(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jmethodID method, jlocation location)
{
    (void)jvmti;
    if (atomic_load_explicit(&stopped, memory_order_relaxed) || method != detector.park_method)
        return;
    if (!is_virtual(jni, thread)) /* JDK 21 runs this code on main in Continuation.<clinit> */
        return;
    if (location == 0)
        pin_begin(jni, thread, KIND_PARK, REASON_UNKNOWN, -1, 0, 0);
    else
        pin_end(thread, KIND_PARK);
}

/* A contended entry or Object.wait by a virtual thread: always a pin on
 * 21-23; on 24+ only when it cannot unmount (a JNI call and, unless in a
 * critical section, a stack walk: only for virtual threads, and only where
 * the JDK is about to freeze the whole stack to unmount anyway). */
/* HotSpot gives every class a zero-length int[] as its initialization lock and
 * takes it with its own ObjectLocker (linking, initializing, the wait for another
 * thread's initialization), which posts contended entries like a monitorenter's.
 * No Java code took that monitor: the JDK never tries to unmount there and JFR
 * records no pin; a carrier held long in class initialization is the watchdog's
 * VM_BLOCK, one pin with the wait it belongs to (a 0 ms pin at its end, seen on
 * 27, or two virtual threads' first pins racing through Continuation$Pinned's
 * initialization on 21, would be noise). JNI only: a JVMTI look at the frames
 * here, in the JVM's own locking, was followed by a crash under ASan on 21. */
static int is_class_init_lock(JNIEnv *jni, jobject object)
{
    return object && detector.int_array_class && (*jni)->IsInstanceOf(jni, object, detector.int_array_class) &&
           (*jni)->GetArrayLength(jni, (jarray)object) == 0;
}

static void monitor_block(JNIEnv *jni, jthread thread, jobject object, enum pin_kind kind)
{
    /* The JVM begins its own pinned event (24+) before it posts this callback: a monitor's
     * pin begins where the callback is entered, its work (isPinned0, the stack) inside it,
     * as in JFR (a CI run under load: 2 of 3 Object.wait pins 4 ms shorter than JFR's). */
    int64_t begun_ns = clock_mono_ns();
    if (atomic_load_explicit(&stopped, memory_order_relaxed) || !detector.setup.monitor_events ||
        !is_virtual(jni, thread))
        return;
    /* Inside parkOnCarrierThread (a park pin in progress on this carrier) the JDK's own
     * code can block on a monitor too (timer, class loading): the carrier is pinned by
     * the park already. A pin begun here would close the park pin early, and its real
     * end would be lost; the nested block is part of the park pin. */
    if (on_carrier.pin_id && on_carrier.kind == KIND_PARK)
        return;
    if (kind == KIND_ENTER && is_class_init_lock(jni, object))
        return;
    if (detector.setup.monitor_pins) {
        pin_begin(jni, thread, kind, kind == KIND_ENTER ? REASON_MONITOR_ENTER : REASON_OBJECT_WAIT, -1, 0, begun_ns);
        return;
    }
    jint code = is_pinned0(jni);
    int reason = mounted_reason(code);
    if (reason >= 0)
        pin_begin(jni, thread, kind, (enum pin_reason)reason, code, reason == REASON_UNKNOWN, begun_ns);
}

void JNICALL pins_on_contended_enter(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object)
{
    (void)jvmti;
    monitor_block(jni, thread, object, KIND_ENTER);
}

void JNICALL pins_on_contended_entered(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object)
{
    (void)jvmti;
    (void)object;
    (void)jni;
    if (atomic_load_explicit(&stopped, memory_order_relaxed))
        return;
    pin_end(thread, KIND_ENTER);
}

void JNICALL pins_on_wait(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object, jlong timeout)
{
    (void)jvmti;
    (void)timeout;
    monitor_block(jni, thread, object, KIND_WAIT);
}

void JNICALL pins_on_waited(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object, jboolean timed_out)
{
    (void)jvmti;
    (void)object;
    (void)timed_out;
    (void)jni;
    if (atomic_load_explicit(&stopped, memory_order_relaxed))
        return;
    pin_end(thread, KIND_WAIT);
}

void pins_carrier_started(const char *name)
{
    if (atomic_load_explicit(&stopped, memory_order_relaxed))
        return;
    struct record_space sp;
    struct pin_rec *r = pin_rec_open(&sp);
    if (!r)
        return;
    r->kind = REC_CARRIER_START;
    r->time_ns = clock_mono_ns();
    r->carrier_tid = jthread_self_tid();
    memcpy(r->carrier_name, name, REC_NAME_MAX);
    r->frame_count = 0;
    if (pin_rec_close(&sp) == 0)
        detector.setup.wake_writer(INT64_MAX);
}

int pins_running(void)
{
    return !atomic_load_explicit(&stopped, memory_order_relaxed);
}

uint64_t pins_next_id(void)
{
    atomic_fetch_add_explicit(&started_count, 1, memory_order_relaxed);
    return atomic_fetch_add_explicit(&next_pin_id, 1, memory_order_relaxed) + 1;
}

void pins_found(struct pins_found *out)
{
    out->park_method = detector.park_method != NULL;
    out->is_pinned0 = detector.is_pinned0 != NULL;
    out->pinned_reason = detector.words.read_from_jdk;
    out->park_breakpoints = detector.park_breakpoints;
}

/* The freeze results this JDK names, from Continuation.pinnedReason(int)
 * (private, static; its default throws an AssertionError for an unnamed code). */
static int read_pinned_reasons(JNIEnv *jni)
{
    memset(&detector.words, 0, sizeof(detector.words));
    jmethodID named = (*jni)->GetStaticMethodID(jni, detector.continuation_class, "pinnedReason",
                                                "(I)Ljdk/internal/vm/Continuation$Pinned;");
    jclass enum_class = (*jni)->FindClass(jni, "java/lang/Enum");
    jmethodID name = enum_class ? (*jni)->GetMethodID(jni, enum_class, "name", "()Ljava/lang/String;") : NULL;
    (*jni)->ExceptionClear(jni);
    int found = 0;
    for (jint code = 1; named && name && code < JDK_WORDS_CODES; code++) {
        jobject pinned = (*jni)->CallStaticObjectMethod(jni, detector.continuation_class, named, code);
        if ((*jni)->ExceptionCheck(jni) || !pinned) {
            (*jni)->ExceptionClear(jni);
            continue;
        }
        jstring text = (jstring)(*jni)->CallObjectMethod(jni, pinned, name);
        const char *chars = text && !(*jni)->ExceptionCheck(jni) ? (*jni)->GetStringUTFChars(jni, text, NULL) : NULL;
        (*jni)->ExceptionClear(jni);
        if (chars) {
            jdk_words_learn(&detector.words, code, chars);
            found++;
            (*jni)->ReleaseStringUTFChars(jni, text, chars);
        }
        if (text)
            (*jni)->DeleteLocalRef(jni, text);
        (*jni)->DeleteLocalRef(jni, pinned);
    }
    if (enum_class)
        (*jni)->DeleteLocalRef(jni, enum_class);
    detector.words.read_from_jdk = found > 0;
    return found;
}

jmethodID pins_park_method(void)
{
    return detector.park_method;
}

/* One park breakpoint set or cleared. A duplicate is as good as set; a clear that fails leaves
 * nothing more to undo, so it is not an error. */
static int park_breakpoint(jvmtiEnv *jvmti, jlocation at, int set)
{
    if (!set) {
        (*jvmti)->ClearBreakpoint(jvmti, detector.park_method, at);
        return 0;
    }
    jvmtiError err = (*jvmti)->SetBreakpoint(jvmti, detector.park_method, at);
    return err == JVMTI_ERROR_NONE || err == JVMTI_ERROR_DUPLICATE ? 0 : -EINVAL;
}

/* Breakpoints at the entry of VirtualThread.parkOnCarrierThread (a pin starts) and on every
 * instruction that leaves it (the pin ends), set or cleared: one walk of its bytecode for both, so a
 * stop clears exactly what an attach set. 0, or -errno when its bytecode is not the shape they need
 * (said by the caller). */
static int walk_park_breakpoints(jvmtiEnv *jvmti, int set)
{
    if (!detector.park_method)
        return -ENOENT;
    jint len = 0;
    unsigned char *code = NULL;
    if ((*jvmti)->GetBytecodes(jvmti, detector.park_method, &len, &code) != JVMTI_ERROR_NONE)
        return -EINVAL;
    int exits = 0;
    int rc = park_breakpoint(jvmti, 0, set);
    for (size_t pc = 0; rc == 0 && pc < (size_t)len;) {
        int n = bytecode_length(code, (size_t)len, pc);
        if (n <= 0) {
            rc = -EINVAL;
            break;
        }
        if (bytecode_is_exit(code[pc])) {
            rc = park_breakpoint(jvmti, (jlocation)pc, set);
            exits++;
        }
        pc += (size_t)n;
    }
    (*jvmti)->Deallocate(jvmti, code);
    return rc ? rc : exits == 0 ? -EINVAL : 0;
}

int pins_init(jvmtiEnv *jvmti, JNIEnv *jni, const struct pins_setup *setup, int breakpoints)
{
    detector.jvmti = jvmti;
    detector.setup = *setup;
    stack_read_setup(jvmti, setup->depth, setup->have_monitor_depths);
    jclass vthread_class = jthread_vthread_class();
    if (!vthread_class)
        return -ENOENT; /* jthread_init said why */
    if (!detector.resolved) {
        detector.resolved = 1;
        detector.continuation_class = jthread_global_class(jni, "jdk/internal/vm/Continuation");
        detector.int_array_class = jthread_global_class(jni, "[I");
        if (detector.continuation_class) {
            detector.is_pinned0 = (*jni)->GetStaticMethodID(jni, detector.continuation_class, "isPinned0",
                                                            "(Ljdk/internal/vm/ContinuationScope;)I");
            detector.vthread_scope =
                jthread_field(vthread_class, "VTHREAD_SCOPE", "Ljdk/internal/vm/ContinuationScope;");
            if (!detector.vthread_scope)
                detector.is_pinned0 = NULL;
        }
        (*jni)->ExceptionClear(jni);
        if (detector.is_pinned0 && read_pinned_reasons(jni) == 0)
            jdk_words_assume(&detector.words); /* said by the caller (pins_found) */
    }
    int rc = 0;
    if (!detector.park_method)
        detector.park_method = jthread_method(vthread_class, "parkOnCarrierThread", "(ZJ)V");
    if (breakpoints && detector.park_breakpoints != 1) { /* again after a stop cleared them */
        rc = walk_park_breakpoints(jvmti, 1);
        detector.park_breakpoints = rc == 0 ? 1 : -1;
    }
    atomic_store(&stopped, 0);
    return rc;
}

void pins_release(jvmtiEnv *jvmti)
{
    if (detector.park_breakpoints != 1)
        return;
    walk_park_breakpoints(jvmti, 0);
    detector.park_breakpoints = 0; /* pins_init sets them again */
}
