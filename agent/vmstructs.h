/* The OS thread id of a Java thread that started before vtpin (dynamic
 * attach: no ThreadStart ran on it). HotSpot exports its own layout for the
 * serviceability agent (gHotSpotVMStructs); from it, Thread.eetop (the
 * JavaThread*) leads to OSThread::_thread_id. Absent or changed layout:
 * the tid stays unknown (0), nothing else is affected. */
#ifndef VTPIN_VMSTRUCTS_H
#define VTPIN_VMSTRUCTS_H

#include <jni.h>

/* Returns the tid, or 0 when it cannot be known. */
int vmstructs_thread_tid(JNIEnv *jni, jobject thread);

#endif
