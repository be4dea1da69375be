/* What vtpin costs the JVM, counted by itself: its JVMTI calls that stop or
 * hold up a JVM thread (a stack walk, a thread's state, monitor lookups, a
 * safepoint for GetObjectMonitorUsage), by kind, from any thread (one relaxed
 * atomic add each: never a lock), and the writer thread's own CPU time. The
 * deterministic half of the cost picture beside the benchmarks' ratios
 * (Stats.agent_cpu_ns, Stats.jvmti_calls). */
#ifndef VTPIN_SELF_COST_H
#define VTPIN_SELF_COST_H

#include <stdint.h>

enum jvmti_call {
    CALL_GET_STACK_TRACE = 0,
    CALL_GET_THREAD_STATE,
    CALL_GET_OWNED_MONITOR_STACK_DEPTH_INFO,
    CALL_GET_OWNED_MONITOR_INFO,
    CALL_GET_CURRENT_CONTENDED_MONITOR,
    CALL_GET_OBJECT_MONITOR_USAGE,
    CALL_GET_ALL_THREADS,
    CALL_GET_FRAME_LOCATION,
    CALL_GET_LOCAL_OBJECT,
    CALL_GET_VIRTUAL_THREAD,
    CALL_THREAD_SNAPSHOT, /* not JVMTI: the JDK's ThreadSnapshot.of, which holds up its thread (vowner.h) */
    CALL_KINDS
};

void self_cost_count(enum jvmti_call call);
/* A JVMTI call, counted: if (COUNTED(CALL_GET_STACK_TRACE, (*jvmti)->GetStackTrace(...)) != ...) */
#define COUNTED(kind, call) (self_cost_count(kind), (call))
/* The JVMTI function's name ("GetStackTrace"). */
const char *self_cost_call_name(enum jvmti_call call);
/* Calls of this kind since the last reset. */
uint64_t self_cost_calls(enum jvmti_call call);
/* Called by the writer thread as it starts: its CPU clock. */
void self_cost_writer_started(void);
/* A new session counts from zero (the writer's CPU too: self_cost_writer_cpu_ns). */
void self_cost_reset(void);
/* The writer thread's CPU time since the last reset, ns; -1 when unknown. */
int64_t self_cost_writer_cpu_ns(void);

#endif
