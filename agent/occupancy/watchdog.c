#include "watchdog.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "active_pins.h"
#include "blocker.h"
#include "clock.h"
#include "jdk_words.h"
#include "jthread.h"
#include "log.h"
#include "pins.h"
#include "self_cost.h"
#include "stack_read.h"
#include "vmblock.h"
#include "vmstructs.h"
#include "writer_thread.h"

/* Sample periods of CPU that a NATIVE_BLOCK's native call may use between its sleeps before the block
 * ends (native_awake.h): the moments between the sleeps of one call (SQLite's busy timeout retries
 * every few ms); samples, where the CPU time is unknown. */
#define WATCHDOG_AWAKE_PERIODS 3

#define BLOCKED_IN_MAX 96

enum watch_kind { WATCH_NONE = 0, WATCH_NATIVE, WATCH_PARKED, WATCH_VM };

/* Where blocks were judged the JVM's own stalls (a class initialized stays so): the same place is
 * not looked at again, so a program that stalls often at one allocation walks the classes once. */
#define WATCHDOG_STALL_SITES 16

static struct {
    const struct writer_config *cfg;
    jvmtiEnv *jvmti;
    struct pin_rec *scratch;   /* the watchdog's own pin records */
    uint64_t stalls_set_aside; /* jvm_stall */
    struct {
        jmethodID method;
        jlocation bci;
    } stall_sites[WATCHDOG_STALL_SITES];
    unsigned next_stall_site; /* the one replaced next, round robin */
} watchdog;

int watchdog_init(const struct writer_config *cfg, jvmtiEnv *jvmti)
{
    watchdog.cfg = cfg;
    watchdog.jvmti = jvmti;
    watchdog.scratch = calloc(1, pins_record_size(cfg->options->depth));
    return watchdog.scratch ? 0 : -ENOMEM;
}

void watchdog_fini(void)
{
    free(watchdog.scratch);
    memset(&watchdog, 0, sizeof(watchdog));
}

void watchdog_forget(struct carrier_slot *c)
{
    c->seen_vthread = c->watch_since = 0;
    c->watch_kind = WATCH_NONE;
    c->native_method = NULL;
    c->block_pin = 0;
    native_awake_reset(&c->awake);
    c->watch_set_aside = 0;
}

void watchdog_end(struct carrier_slot *c, int64_t now)
{
    if (!c->block_pin)
        return;
    struct pin_rec *r = watchdog.scratch;
    r->kind = REC_PIN_END;
    r->pin_id = c->block_pin;
    r->time_ns = now;
    r->frame_count = 0;
    active_pins_end(r);
    c->block_pin = 0;
}

/* The stack is taken a moment after the sample classified the carrier, and
 * the block may have ended in between (the park over, the native call
 * returned, the class initialized): a stack that no longer shows it would
 * blame what the thread did next. An empty stack (not taken) proves nothing. */
static int stack_shows_block(const struct carrier_slot *c, const struct pin_rec *r)
{
    if (r->frame_count == 0)
        return 1;
    switch (c->watch_kind) {
    case WATCH_PARKED: {
        jmethodID park = pins_park_method();
        for (uint32_t i = 0; i < r->frame_count; i++)
            if (r->frames[i].method == park)
                return 1;
        return 0;
    }
    case WATCH_NATIVE:
        return r->frames[0].method == c->native_method;
    case WATCH_VM:
        return r->frames[0].method == c->native_method && r->frames[0].location == c->watch_bci;
    default:
        return 1;
    }
}

/* Blocked in the JVM at a Java instruction, at the first sample that sees it, and waiting for
 * no class initialization: the instruction initializes no class (new, getstatic, putstatic,
 * invokestatic do), or its class is initialized already. The JVM's own work holds it there: a GC
 * locker, a lock of the JVM whose holder has no CPU on a loaded machine (CpuBound under load: 37
 * ms at AtomicLong.addAndGet's first getstatic on 21, long after main's new AtomicLong(); 64 ms
 * at Unsafe.weakCompareAndSetLong's entry on 25). Every thread meets such a stall, as a
 * safepoint: not a pin. Judged at the first sample, not when the pin would start: a real wait
 * for an initialization still asleep a moment after it completed (re-entering its lock) would
 * be taken for a stall then. Unknown (no bytecodes): a pin, as before. */
static int jvm_stall(const struct carrier_slot *c)
{
    for (unsigned i = 0; i < WATCHDOG_STALL_SITES; i++)
        if (watchdog.stall_sites[i].method == c->native_method && watchdog.stall_sites[i].bci == c->watch_bci)
            return 1;
    char blocked_in[BLOCKED_IN_MAX], cls[JDK_CLASS_MAX];
    int class_init = vmblock_describe(watchdog.jvmti, c->native_method, c->watch_bci, blocked_in, sizeof(blocked_in),
                                      cls, sizeof(cls));
    if (class_init < 0)
        return 0;
    if (class_init == 1 &&
        (!cls[0] || vmblock_class_initialized(watchdog.jvmti, writer_thread_jni(), c->native_method, cls) != 1))
        return 0;
    if (watchdog.stalls_set_aside++ == 0) {
        size_t len = strcspn(blocked_in, "("); /* "new of X (class initialization)" */
        while (len > 0 && blocked_in[len - 1] == ' ')
            len--;
        char where[BLOCKED_IN_MAX + 48];
        if (class_init == 1)
            snprintf(where, sizeof(where), "%.*s, a class initialized already", (int)len, blocked_in);
        else
            snprintf(where, sizeof(where), "bci %lld of a Java method, which initializes no class",
                     (long long)c->watch_bci);
        log_info("a virtual thread blocked inside the JVM at %s: a stall of the JVM's own (a GC, a lock of its "
                 "own), not a VM_BLOCK pin (said once)",
                 where);
    }
    unsigned slot = watchdog.next_stall_site++ % WATCHDOG_STALL_SITES;
    watchdog.stall_sites[slot].method = c->native_method;
    watchdog.stall_sites[slot].bci = c->watch_bci;
    return 1;
}

/* A pin the writer found itself (no callback saw it): reason given or
 * inferred from the stack, start at the first sample that saw it. Not
 * started when its stack shows the block over (the next sample looks again). */
static void start_block(struct carrier_slot *c, jthread vt, int64_t vid, int reason, int64_t now)
{
    struct pin_rec *r = watchdog.scratch;
    unsigned depth = watchdog.cfg->options->depth;
    memset(r, 0, pins_record_size(depth));
    r->kind = REC_PIN_START;
    r->jdk_code = -1;
    r->reason = (uint8_t)reason;
    r->time_ns = c->watch_since;
    r->vthread_id = vid;
    r->carrier_tid = c->tid;
    memcpy(r->carrier_name, c->name, REC_NAME_MAX);
    jthread_copy_name(writer_thread_jni(), vt, r->vthread_name);
    stack_read_full(vt, r);
    if (!stack_shows_block(c, r))
        return;
    r->pin_id = pins_next_id();
    char blocked_in[BLOCKED_IN_MAX] = "", waits_for[JDK_CLASS_MAX] = "";
    struct blocker initializer = {0};
    if (reason == REASON_NATIVE_BLOCK)
        vmblock_blocked_in(c->tid, blocked_in, sizeof(blocked_in));
    else if (reason == REASON_VM_BLOCK) {
        int class_init = vmblock_describe(watchdog.jvmti, c->native_method, c->watch_bci, blocked_in,
                                          sizeof(blocked_in), waits_for, sizeof(waits_for));
        /* who runs that <clinit> (under Class.forName0, where the bytecode does not name the
         * class, the one class being initialized) */
        if (class_init == 1 && blocker_find_initializer(writer_thread_jni(), vt, waits_for, now, &initializer) == 1 &&
            !waits_for[0])
            snprintf(waits_for, sizeof(waits_for), "%s", initializer.object_class);
    }
    active_pins_start(r, blocked_in, waits_for, &initializer);
    c->block_pin = r->pin_id;
    active_pins_asleep(r->pin_id, now); /* the sample that started it saw it asleep */
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
 * looked at again after them: a carrier that was only stopped runs again.
 * *seen_at: when it was seen, just before the look that decides. */
static enum watch_kind classify(jthread vt, struct carrier_slot *c, jmethodID *top, jlocation *bci, int *awake,
                                int64_t *seen_at)
{
    jvmtiEnv *jvmti = watchdog.jvmti;
    int park_breakpoints = watchdog.cfg->park_breakpoints;
    int tid = c->tid;
    jint state = 0;
    *top = NULL;
    *bci = -1;
    *awake = 0;
    /* With park breakpoints only a sleeping carrier can be a block: ask /proc before JVMTI,
     * whose calls disable the thread's mount transitions (a CPU-bound JNI carrier stays cheap). */
    int in_native_block = c->block_pin && c->watch_kind == WATCH_NATIVE; /* awake in it is looked at below */
    *seen_at = clock_mono_ns();
    if (park_breakpoints && !in_native_block && vmblock_thread_sleeps(tid, &c->stat_fd1, &c->stat_tid) != 1)
        return WATCH_NONE;
    if (COUNTED(CALL_GET_THREAD_STATE, (*jvmti)->GetThreadState(jvmti, vt, &state)) != JVMTI_ERROR_NONE)
        return WATCH_NONE;
    /* A contended monitor entry is the monitor hooks' to time (MONITOR_ENTER, or on 24+ a NATIVE or
     * VM pin when it cannot unmount), whether or not their record has reached the writer yet: a
     * clean-clone run under ASan had three entries, each taken for a VM_BLOCK too while their
     * callbacks' records waited in the queue. */
    if (watchdog.cfg->monitor_events && (state & JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER))
        return WATCH_NONE;
    /* parked: the JDK's own state says so (its carrier may be runnable, woken by the timer) */
    int parked_state = !park_breakpoints && (state & JVMTI_THREAD_STATE_WAITING);
    if (!park_breakpoints && !parked_state && !in_native_block &&
        vmblock_thread_sleeps(tid, &c->stat_fd1, &c->stat_tid) != 1)
        return WATCH_NONE;
    enum watch_kind kind = WATCH_NONE;
    jvmtiFrameInfo frames[8];
    jint count = 0;
    if (state & JVMTI_THREAD_STATE_IN_NATIVE) {
        /* In C: under a JNI method, or an FFM downcall (its stub and LambdaForm frames on top). */
        if (COUNTED(CALL_GET_STACK_TRACE, (*jvmti)->GetStackTrace(jvmti, vt, 0, 1, frames, &count)) ==
                JVMTI_ERROR_NONE &&
            count == 1) {
            *top = frames[0].method;
            kind = WATCH_NATIVE;
        }
    } else if (!active_pins_on_carrier(c->tid, c->block_pin) &&
               COUNTED(CALL_GET_STACK_TRACE, (*jvmti)->GetStackTrace(jvmti, vt, 0, 8, frames, &count)) ==
                   JVMTI_ERROR_NONE &&
               count > 0) {
        jmethodID park = pins_park_method();
        int parked = 0;
        for (jint i = 0; i < count; i++)
            parked |= park && frames[i].method == park;
        jboolean native = JNI_FALSE;
        if (parked) {
            /* only parkOnCarrierThread parks a mounted virtual thread; with breakpoints the pin is known */
            if (!park_breakpoints && (state & JVMTI_THREAD_STATE_WAITING)) {
                *top = park;
                kind = WATCH_PARKED;
            }
        } else if ((*jvmti)->IsMethodNative(jvmti, frames[0].method, &native) == JVMTI_ERROR_NONE &&
                   (!native || !vmblock_is_object_method(jvmti, frames[0].method))) {
            /* blocked in the JVM at a Java frame's instruction (new, getstatic: a class initialization),
             * or under a native method that called into the JVM (Class.forName0, a JNI FindClass); not
             * Object.wait's native method: a wait, which the monitor events see */
            *top = frames[0].method;
            *bci = native ? -1 : frames[0].location;
            kind = WATCH_VM;
        }
    }
    if (kind != WATCH_NATIVE && kind != WATCH_VM)
        return kind;
    *seen_at = clock_mono_ns(); /* this check decides */
    if (vmblock_thread_sleeps(tid, &c->stat_fd1, &c->stat_tid) != 1) {
        /* still in the native call of the NATIVE_BLOCK in progress, awake for a moment between its
         * sleeps (a retry loop in C, a busy timeout): the same block, judged by the frame it is in */
        if (kind == WATCH_NATIVE && in_native_block && *top == c->native_method) {
            *awake = 1;
            return kind;
        }
        return WATCH_NONE; /* it was only stopped for a safepoint, or woke meanwhile */
    }
    return kind;
}

/* A parked carrier's voluntary context switches: 1 and *sw when known, read while it sleeps. The
 * JDK's state says parked a moment before the carrier blocks and a moment after it wakes: a count
 * read then is one short of the park's own switch, which the next sample would take for a new park
 * (one park of a round split in two, the first piece one period long, where JFR has one event). */
static int parked_switches(struct carrier_slot *c, uint64_t *sw)
{
    return vmblock_thread_sleeps(c->tid, &c->stat_fd1, &c->stat_tid) == 1 &&
           vmblock_thread_switches(c->tid, &c->status_fd1, &c->status_tid, sw) == 0;
}

void watchdog_sample(struct carrier_slot *c, jthread vt, int64_t vid, int64_t round_ns)
{
    jmethodID top = NULL;
    jlocation bci = -1;
    int awake = 0;
    /* when the carrier was seen, not when the round began: under load a round's JVMTI calls on
     * other carriers take longer than a period, and the kernel view finds the sleep a sample saw
     * by its time */
    int64_t now = round_ns;
    /* after the sampler read which virtual thread is mounted (a block's end is bounded by it) */
    int blocked = c->block_pin && c->watch_kind != WATCH_PARKED;
    int64_t entered = blocked ? clock_mono_ns() : 0;
    /* A park already watched: its count is read before the look that finds it still parked, so it
     * counts only switches up to then. Read after, it can count the next virtual thread's park on
     * the carrier, which the look just missed (the park ended, another began), and end this park's
     * pin there as if it had parked again (a pin of no stack at the end of every such park, beside
     * the kernel's: zt_attach_on_pin, 1 run in 25 beside a busy loop). */
    uint64_t sw = 0;
    int watched_park = c->watch_kind == WATCH_PARKED && vt && vid == c->seen_vthread;
    int has_sw = watched_park && parked_switches(c, &sw);
    enum watch_kind kind = vt ? classify(vt, c, &top, &bci, &awake, &now) : WATCH_NONE;
    /* A block found over ended by the read that found it so, not by the sample's timestamp: that read
     * can come long after it (a JVMTI call waiting for a safepoint, the round's looks at other
     * carriers, the sampler without a CPU under load), and the block went on meanwhile. Ended at the
     * timestamp, a class initialization wait the kernel saw end 22.6 ms later was cut short
     * (vm_block_class_init, ci44). Its own virtual thread: after the look; another or none mounted:
     * after that was read. A block of another kind found instead ends where it begins. Not a park
     * (after attach): the kernel view splits it at the sleeps it overlaps, and one ended after the
     * look can overlap the next virtual thread's park on the carrier and claim its sleep where the
     * kernel view did not read the JavaThread (zt_attach_on_pin, ci47, most likely so: a second park
     * of each of two threads, begun 3 ms after their own ended). */
    int64_t ended_by = now;
    if (kind == WATCH_NONE && blocked)
        ended_by = vt && vid == c->seen_vthread ? clock_mono_ns() : entered;
    if (kind != WATCH_PARKED)
        has_sw = 0;
    else if (!watched_park) /* its first sample: read now, while it sleeps in the park just found */
        has_sw = parked_switches(c, &sw);
    if (vid != c->seen_vthread || (int)kind != c->watch_kind || top != c->native_method ||
        (kind == WATCH_VM && bci != c->watch_bci)) {
        watchdog_end(c, ended_by);
        c->seen_vthread = vid;
        c->watch_kind = (int)kind;
        c->native_method = top;
        c->watch_bci = bci;
        c->watch_since = now;
        c->has_switches = has_sw;
        c->switches = sw;
        native_awake_reset(&c->awake);
        c->watch_set_aside = kind == WATCH_VM && bci >= 0 && jvm_stall(c);
        /* Parked in parkOnCarrierThread while mounted is a pin from the first sample that sees
         * it (a short native call or VM wait needs a second): a park seen once still lasted
         * about a period on average, and the kernel view times it exactly. */
        if (kind == WATCH_PARKED)
            start_block(c, vt, vid, REASON_UNKNOWN, now);
        return;
    }
    if (awake) {
        /* Moments between its sleeps, or it computes: the block ended when it woke, and a later sleep
         * in the call is a block of its own. */
        struct native_awake_rule rule = {.cpu_budget_ns = WATCHDOG_AWAKE_PERIODS *
                                                          (int64_t)watchdog.cfg->options->sample_interval_ns,
                                         .max_samples = WATCHDOG_AWAKE_PERIODS};
        if (native_awake_sample(&c->awake, now, vmblock_thread_cpu_ns(c->tid), &rule) == NATIVE_AWAKE_ENDED) {
            watchdog_end(c, c->awake.since);
            c->watch_kind = WATCH_NONE;
            c->native_method = NULL;
            c->watch_since = now;
            native_awake_reset(&c->awake);
        }
        return;
    }
    native_awake_reset(&c->awake);
    int reason = kind == WATCH_NATIVE ? REASON_NATIVE_BLOCK : kind == WATCH_VM ? REASON_VM_BLOCK : REASON_UNKNOWN;
    /* Parked in both samples, but the carrier went to sleep again in between: the
     * park ended and the next began (back-to-back pins, e.g. synchronized { sleep }
     * in a loop). End this pin and start the next one here, each to one period. */
    if (has_sw && c->has_switches && sw != c->switches) {
        if (!c->block_pin)
            start_block(c, vt, vid, reason, c->watch_since); /* seen in one sample, then the next park */
        watchdog_end(c, now);
        c->watch_since = now;
        c->switches = sw;
        start_block(c, vt, vid, reason, now);
        return;
    }
    if (has_sw) { /* a sample that found it awake keeps the count of the last that found it asleep */
        c->has_switches = 1;
        c->switches = sw;
    }
    /* The same state, with the carrier asleep, in two samples in a row: a pin (short calls are not). */
    if (kind != WATCH_NONE && !c->block_pin && !c->watch_set_aside)
        start_block(c, vt, vid, reason, now);
    else if (kind != WATCH_NONE)
        active_pins_asleep(c->block_pin, now); /* the same block, still asleep */
}

/* Every JVMTI look disables virtual-thread transitions (GetVirtualThread: all
 * of them; GetThreadState: that thread's), so a carrier that is not watched
 * yet and whose JavaThread is neither in native nor blocked (parked after
 * attach, or blocked inside the JVM) is not classified: classify() would
 * find nothing there. Without occupancy samples to take it is not looked at
 * at all. */
int watchdog_must_look(struct carrier_slot *c)
{
    if (c->watch_kind != WATCH_NONE || c->block_pin)
        return 1;
    enum vm_state st = vmstructs_thread_state(c->java_thread);
    if (atomic_load(&c->state) != SLOT_LIVE)
        return 0; /* ended while read: the value may be stale; released next round */
    /* blocked: parked after attach (no park breakpoint), or blocked inside the JVM (VM_BLOCK, every mode) */
    return st == VM_STATE_UNKNOWN || st == VM_STATE_NATIVE || st == VM_STATE_BLOCKED;
}
