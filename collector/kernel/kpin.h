/* A thread's pins from its off-CPU intervals alone, for a JVM with no agent
 * (collector/zerotouch.h). Pure: no I/O, no clock.
 *
 * A pin is one off-CPU interval of at least --kernel-min (the kernel view
 * delivers no shorter one) of a thread that had a virtual thread mounted,
 * asleep (not waiting for a CPU: preemption is not a pin) and, by what its
 * JavaThread said at the switch out (kstate.h, java_wait_of):
 *   parked on its carrier      -> why its freeze failed (kstate.h park_why_of): CRITICAL_SECTION,
 *                                 MONITOR or NATIVE where the JVM let it be read, else unknown
 *   entering a monitor         -> MONITOR_ENTER
 *   in Object.wait             -> OBJECT_WAIT
 *   in native code             -> NATIVE_BLOCK
 * A wait on the VM itself, Java or VM code, an unknown read, or no virtual
 * thread mounted is not one.
 *
 * An interval is told twice at most: as it crosses the minimum while still
 * in progress (end_ns 0: the pin starts then, so a pin that never ends is
 * seen), and once it ends (the pin ends; or starts and ends at once, when the
 * crossing was not seen). Intervals come in order: one older than the pin in
 * progress is dropped, and so is a crossing of an interval already told ended
 * (its crossing was read just before it ended, and told after its end). */
#ifndef VTPIN_KERNEL_KPIN_H
#define VTPIN_KERNEL_KPIN_H

#include <stdint.h>

#include "kview.h"

/* One thread's pin in progress. */
struct kpin_thread {
    int open;         /* a pin in progress */
    int64_t start_ns; /* its interval's start */
    int64_t done_ns;  /* the start of the latest interval told ended (0: none) */
};

/* What to do with an interval, in this order. */
struct kpin_step {
    int end_stale; /* end the pin in progress at stale_end_ns: its own end was never told (a lost interval) */
    int64_t stale_end_ns;
    int start;  /* start a pin at iv->start_ns with reason */
    int reason; /* vtpin.v1.PinReason */
    int end;    /* end the pin (started now or before) at iv->end_ns */
};

/* The vtpin.v1.PinReason an interval shows, or -1 when it is not a pin. */
int kpin_reason(const struct kview_interval *iv);

/* The step for interval iv of thread t, and t updated as if the step was taken. */
void kpin_next(struct kpin_thread *t, const struct kview_interval *iv, struct kpin_step *out);

#endif
