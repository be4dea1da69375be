/* The OS thread id of a Java thread that started before vtpin (dynamic
 * attach: no ThreadStart ran on it). HotSpot exports its own layout for the
 * serviceability agent (gHotSpotVMStructs); from it, Thread.eetop (the
 * JavaThread*) leads to OSThread::_thread_id. Absent or changed layout:
 * the tid stays unknown (0), nothing else is affected. */
#ifndef VTPIN_VMSTRUCTS_H
#define VTPIN_VMSTRUCTS_H

#include <jni.h>
#include <stdint.h>

/* Returns the tid, or 0 when it cannot be known. */
int vmstructs_thread_tid(JNIEnv *jni, jobject thread);

/* Reads the layout once (call from a JVM thread before the callbacks use it). */
void vmstructs_init(JNIEnv *jni);
/* The thread's JavaThread* (Thread.eetop), 0 when not started or gone. */
uintptr_t vmstructs_java_thread(JNIEnv *jni, jobject thread);

/* What a JavaThread is doing, read from its _thread_state without JVMTI (so
 * without disabling virtual-thread transitions): a carrier running a virtual
 * thread that is inside a native method is NATIVE; parked or waiting is
 * BLOCKED. The writer's sampler reads it to skip carriers that cannot be in
 * a native block; the caller must know the JavaThread is still alive. */
enum vm_state { VM_STATE_UNKNOWN = 0, VM_STATE_NATIVE, VM_STATE_BLOCKED, VM_STATE_OTHER };
enum vm_state vmstructs_thread_state(uintptr_t java_thread);

/* Where a JavaThread keeps what the collector's kernel view reads at each
 * context switch of a carrier: which virtual thread is mounted (_vthread
 * against _threadObj, then the thread object's tid field) and whether it
 * waits for a monitor. Offsets in bytes; the wire's ThreadLayout. */
struct vm_thread_layout {
    uint32_t thread_obj, vthread, pending_monitor, waiting_monitor, thread_state; /* in JavaThread */
    uint32_t tid;                                                                 /* in java.lang.Thread */
    uint32_t vt_state; /* in java.lang.VirtualThread, 0: not known */
    int32_t state_blocked, state_in_native;
};
/* 1 with *out when HotSpot exports all of it and it read right on a live
 * thread (the calling one, at vmstructs_init); else 0 (e.g. ZGC's coloured
 * pointers, a layout that changed). */
int vmstructs_thread_layout(struct vm_thread_layout *out);

#endif
