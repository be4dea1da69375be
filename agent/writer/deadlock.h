/* Deadlocks, found live (issue 34), of two kinds:
 * - carrier starvation: every carrier of the scheduler is pinned, each by an untimed park on a
 *   java.util.concurrent lock whose owner is a virtual thread on no carrier, or (24+) by an entry to a
 *   monitor whose owner is such a thread (a look again, for pins whose blocker named one). An owner can release
 *   its lock only on a carrier, and every carrier waits for such an owner: no pin can ever end
 *   (but by an interrupt of lockInterruptibly's waiter). Carriers held by a hog (hogs.h) count
 *   with the pinned ones, at least one pinned, once the same pins and hogs have held so for
 *   DEADLOCK_HOG_HOLD_NS (a hog may yet finish);
 * - a cycle (pin_cycle.h): pinned virtual threads each waiting for a monitor or a lock the next
 *   one holds, back to the first, whatever the carriers left.
 * Each is said once, as an error notice deadlock.KIND (the recording, the collector, the trace)
 * and on the agent's log, with the carriers, the waiters, what they wait for and the owners.
 *
 * Looked at by the writer at most every DEADLOCK_CHECK_NS. A cycle is found from what the pins'
 * blocker looks already said (no JVMTI call); starvation only while as many pins and hogs as
 * the scheduler's parallelism are in progress: then JNI reads and one GetThreadState per pin and
 * owner, never in a callback. Writer thread only. */
#ifndef VTPIN_DEADLOCK_H
#define VTPIN_DEADLOCK_H

#include <jvmti.h>
#include <stdint.h>

#include "symbols.h"

#define DEADLOCK_CHECK_NS (50 * 1000000LL)

/* 1 when a deadlock was found now (said only when it is a new one), else 0. The writer joins the
 * JVM (writer_thread_jni) only when every carrier is pinned or hogged. */
int deadlock_check(jvmtiEnv *jvmti, struct symbols *symbols, unsigned parallelism, int64_t now);
void deadlock_reset(void); /* a new session */

#endif
