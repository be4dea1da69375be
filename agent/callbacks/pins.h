/* Pin detection on the JVM's threads: the hot callbacks.
 *
 * Each callback turns what it sees into a fixed-size record in the queue
 * (no locks, no allocation but JVMTI's own for monitor depths, no I/O) and
 * leaves naming, thresholds and output to the writer thread. */
#ifndef VTPIN_PINS_H
#define VTPIN_PINS_H

#include <jvmti.h>
#include <stdint.h>

#include "pin_rec.h"
#include "queue.h"

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

/* Resolves the classes and methods detection needs (after jthread_init) and
 * sets the park breakpoints when can_generate_breakpoint_events is held.
 * Returns 0, or -errno when park-based pins cannot be detected (logged);
 * -ENOENT (no VirtualThread): the callbacks stay off. */
int pins_init(jvmtiEnv *jvmti, JNIEnv *jni, const struct pins_setup *setup, int breakpoints);
void pins_stop(void); /* callbacks return at once from now on */
/* After pins_stop, on "stop": clears the park breakpoints, so the method runs compiled again
 * (pins_init sets them again on the next attach). */
void pins_release(jvmtiEnv *jvmti);

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
/* Which of the JDK internals detection reads pins_init found (the caller says what is missing). */
struct pins_found {
    int park_method;      /* VirtualThread.parkOnCarrierThread(ZJ)V */
    int is_pinned0;       /* Continuation.isPinned0(ContinuationScope) and VirtualThread.VTHREAD_SCOPE */
    int pinned_reason;    /* Continuation.pinnedReason(int) named the freeze results */
    int park_breakpoints; /* 1: set at its entry and exits; -1: its bytecode is not the shape they need; 0: not tried */
};
void pins_found(struct pins_found *out);

#endif
