/* Pin detection on the JVM's threads: the hot callbacks.
 *
 * Each callback turns what it sees into a fixed-size record in the queue
 * (no locks, no allocation but JVMTI's own for monitor depths, no I/O) and
 * leaves naming, thresholds and output to the writer thread. */
#ifndef VTPIN_PINS_H
#define VTPIN_PINS_H

#include <jvmti.h>
#include <stdint.h>

#include "jthread.h"
#include "queue.h"

enum rec_kind {
    REC_PIN_START = 1,
    REC_PIN_END = 2,
    REC_CARRIER_START = 3,
};

/* Values match vtpin.v1.PinReason. */
enum pin_reason {
    REASON_UNKNOWN = 0,
    REASON_MONITOR = 1,
    REASON_NATIVE = 2,
    REASON_CRITICAL_SECTION = 3,
    REASON_MONITOR_ENTER = 4,
    REASON_OBJECT_WAIT = 5,
    REASON_NATIVE_BLOCK = 6,
    REASON_VM_BLOCK = 7,
};

#define REC_NAME_MAX JTHREAD_NAME_MAX

/* What the pinned thread blocks in: the blocking operation of a NATIVE or
 * CRITICAL_SECTION pin on JDK 24+ can be a contended entry or Object.wait. */
enum pin_op {
    PIN_OP_PARK = 0, /* parkOnCarrierThread, or a pin the writer found itself */
    PIN_OP_ENTER = 1,
    PIN_OP_WAIT = 2,
};

struct rec {
    uint8_t kind;
    uint8_t reason;
    uint8_t truncated;
    uint8_t stack_deferred; /* the writer takes the stack if the pin outlasts the threshold */
    uint8_t op;             /* enum pin_op */
    uint8_t monitors_later; /* frames only: the writer reads the monitors if it reports the pin in progress */
    int32_t carrier_tid;
    uint64_t pin_id;
    int64_t time_ns;
    int64_t vthread_id;
    char vthread_name[REC_NAME_MAX];
    char carrier_name[REC_NAME_MAX];
    uint32_t frame_count;
    /* depth slots, as GetStackTrace fills them, then depth monitor counts
     * (rec_monitors): one record size per queue, pins_record_size(depth). */
    jvmtiFrameInfo frames[];
};

size_t pins_record_size(unsigned depth);

_Static_assert(_Alignof(jvmtiFrameInfo) >= _Alignof(uint16_t), "the monitor counts follow the frames unpadded");

/* The monitors each frame holds, stored after the depth frame slots. */
static inline uint16_t *rec_monitors(struct rec *r, unsigned depth)
{
    return (uint16_t *)(void *)(r->frames + depth);
}

static inline const uint16_t *rec_monitors_const(const struct rec *r, unsigned depth)
{
    return (const uint16_t *)(const void *)(r->frames + depth);
}

struct pins_setup {
    struct queue *queue;
    unsigned depth;
    int monitor_pins;        /* JDK 21-23: contended entry and Object.wait pin */
    int monitor_events;      /* the monitor events are on: on 24+ they pin only when the thread cannot unmount */
    int have_monitor_depths; /* can_get_owned_monitor_stack_depth_info */
    int defer_stacks;        /* threshold > 0: most pins end before it; their stacks are never needed */
    uint64_t threshold_ns;
    void (*wake_writer)(int64_t due_ns); /* the writer must look at the queue by due_ns */
};

/* The stack and monitors of thread into r (frames, monitors, frame_count,
 * truncated): the pinned thread itself in a callback, or the writer for a
 * thread that is still pinned on its carrier. */
void pins_capture_stack(jthread thread, struct rec *r);

/* Resolves the classes and methods detection needs (after jthread_init) and
 * sets the park breakpoints when can_generate_breakpoint_events is held.
 * Returns 0, or -errno when park-based pins cannot be detected (logged);
 * -ENOENT (no VirtualThread): the callbacks stay off. */
int pins_init(jvmtiEnv *jvmti, JNIEnv *jni, const struct pins_setup *setup, int breakpoints);
void pins_stop(void); /* callbacks return at once from now on */

void JNICALL pins_on_breakpoint(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jmethodID method, jlocation location);
void JNICALL pins_on_contended_enter(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object);
void JNICALL pins_on_contended_entered(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object);
void JNICALL pins_on_wait(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object, jlong timeout);
void JNICALL pins_on_waited(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object, jboolean timed_out);
/* From ThreadStart of a carrier, after carriers_register: the writer counts
 * carriers (scheduler compensation). name: the carrier's, JTHREAD_NAME_MAX bytes. */
void pins_carrier_started(const char *name);
int pins_running(void); /* between pins_init and pins_stop */

uint64_t pins_started(void);
/* For the writer's own pins (the native-block watchdog): a fresh pin id, counted as started. */
uint64_t pins_next_id(void);
jmethodID pins_park_method(void); /* VirtualThread.parkOnCarrierThread, NULL if not found */
/* The writer is done with this monitors_later start (not a pin, or reported
 * with its monitors read): its end need not take the stack. */
void pins_settled(uint64_t pin_id);

#endif
