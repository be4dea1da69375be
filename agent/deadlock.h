/* Carrier starvation, found live (issue 34): every carrier of the scheduler is pinned, each by an
 * untimed park on a java.util.concurrent lock whose owner is a virtual thread on no carrier. An
 * owner can release its lock only on a carrier, and every carrier waits for such an owner: no pin
 * can ever end (but by an interrupt of lockInterruptibly's waiter). The deadlock is said once, as an error
 * notice (the recording, the collector, the trace) and on the agent's log, with the carriers, the
 * waiters, the lock and the owner.
 *
 * Looked at by the writer at most every DEADLOCK_CHECK_NS, and only while as many pins as the
 * scheduler's parallelism are in progress: then JNI reads and one GetThreadState per pin and
 * owner, never in a callback. Writer thread only. */
#ifndef VTPIN_DEADLOCK_H
#define VTPIN_DEADLOCK_H

#include <jvmti.h>
#include <stdint.h>

#define DEADLOCK_CHECK_NS (50 * 1000000LL)

/* 1 when a deadlock was found now (said only when it is a new one), else 0. The writer joins the
 * JVM (writer_thread_jni) only when every carrier is pinned. */
int deadlock_check(jvmtiEnv *jvmti, unsigned parallelism, int64_t now);
void deadlock_reset(void); /* a new session */

#endif
