/* The writer's OS thread: a plain pthread that joins the JVM only while it
 * has JNI/JVMTI work (AttachCurrentThreadAsDaemon), and leaves it after.
 *
 * Why: a thread attached to the JVM is a JavaThread; every JavaThread created
 * before the scheduler's carriers shifts where the carriers' thread handles
 * land (JDK 25: four 8-byte OopStorage slots per thread, so each earlier
 * thread moves the carriers by half a cache line, docs/performance.md). A
 * writer that is not attached when the carriers start leaves the JVM's layout
 * as it is without the agent. Each join is seen by every JVMTI agent as a
 * ThreadStart/ThreadEnd of a daemon thread named "vtpin writer"; they are
 * counted (writer_thread_joins).
 *
 * After VMDeath the thread never joins again (writer_thread_forbid). */
#ifndef VTPIN_WRITER_THREAD_H
#define VTPIN_WRITER_THREAD_H

#include <jni.h>
#include <stdint.h>

/* Runs main(arg) on a new detached pthread. Returns 0 or -errno. */
int writer_thread_start(JavaVM *vm, void (*main)(void *), void *arg);
/* On the writer thread: the JNIEnv of the joined thread, joining now if not
 * yet; NULL when the JVM is gone or refuses (the work is skipped). */
JNIEnv *writer_thread_enter(void);
/* On the writer thread: leaves the JVM if joined. */
void writer_thread_leave(void);
/* On the writer thread, within a round: the JNIEnv, joining now if not yet
 * and pushing a local frame, so the round's local references die with it;
 * NULL when the JVM is gone or refuses (the work is skipped). */
JNIEnv *writer_thread_jni(void);
/* End of a round: pops its frame and leaves the JVM once it has not been
 * needed for a second, unless the next round that needs it is due within
 * 50 ms of now (next_need_ns: sampled occupancy, every 10 ms, stays joined);
 * stopping: leaves at once. */
void writer_thread_end_round(int64_t now, int64_t next_need_ns, int stopping);
/* From VMDeath/unload: no join after this; a join in progress finishes. */
void writer_thread_forbid(void);
/* Joins so far (each one a ThreadStart + ThreadEnd for every agent). */
uint64_t writer_thread_joins(void);

#endif
