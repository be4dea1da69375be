/* Names of the wire's enums (proto/vtpin.proto), the words every program
 * prints and writes in JSON: one switch per enum, here. */
#ifndef VTPIN_WIRE_NAMES_H
#define VTPIN_WIRE_NAMES_H

#include <stdint.h>

/* How many PinReason values there are (0 .. VM_BLOCK): tables indexed by reason
 * are this long; test_wire checks it against the schema's descriptor. */
#define WIRE_REASON_COUNT 8

/* Vtpin__V1__PinReason: "MONITOR", "NATIVE", ... "VM_BLOCK"; "UNKNOWN" otherwise. */
const char *wire_reason_name(int reason);
/* Vtpin__V1__LoadMode: "startup", "attach"; NULL when not said. */
const char *wire_mode_name(int mode);
/* Vtpin__V1__Severity: "info", "error"; "warning" otherwise. */
const char *wire_severity_name(int severity);
/* Vtpin__V1__KernelState: "sleeping", "disk", "runnable"; "unknown" otherwise. */
const char *wire_kernel_state_name(int state);
/* Vtpin__V1__JavaWait: "blocked", "monitor_enter", "monitor_wait", "in_native", "other", "vm"; "unknown" otherwise. */
const char *wire_java_wait_name(int wait);
/* 1 when a kernel interval (Vtpin__V1__KernelState, the virtual thread mounted as the kernel view read it,
 * 0: none, < 0: not read; Vtpin__V1__JavaWait) held its carrier: asleep (S or D) with a virtual thread
 * mounted, and not waiting on the VM itself (a safepoint, a GC, a VM lock: not a pin's doing). What
 * "every held millisecond explained" counts, in the collector and in the report. */
int wire_held_sleep(int state, int64_t vthread_id, int java_wait);
/* Vtpin__V1__OccupancySource: "exact", "sampled"; "off" otherwise. */
const char *wire_occupancy_name(int source);
/* An Event's body case: "Hello", "PinStart", ...; "nothing" for none, "an unknown event" beyond. */
const char *wire_event_name(int body);

#endif
