/* The JVMTI side of the pin path: reading a thread's stack and the monitors
 * each frame holds, into a pin record.
 *
 * - In a callback, the pinned thread reads its own stack (pins.c): the
 *   frames (GetStackTrace, GetFrameCount when the depth is full) and, unless
 *   the start is frames-only, the monitors (GetOwnedMonitorStackDepthInfo,
 *   which walks the stack again behind an escape barrier: on 24+ it is not
 *   paid on every contended entry of a virtual thread, only when the writer
 *   reports a real pin in progress).
 * - From the writer, for a pin the machine (pin_machine.h) says crossed the
 *   threshold while in progress: its virtual thread is still blocked on the
 *   same carrier, so the writer takes the stack from there
 *   (stack_read_take), for a deferred start or a frames-only one's monitors.
 *   The watchdog reads the stacks of its own pins the same way. */
#ifndef VTPIN_STACK_READ_H
#define VTPIN_STACK_READ_H

#include <jvmti.h>
#include <stdint.h>

#include "pin_rec.h"

/* From pins_init: the env, the depth of every record, and whether the JVM
 * says which frame holds which monitor (can_get_owned_monitor_stack_depth_info). */
void stack_read_setup(jvmtiEnv *jvmti, unsigned depth, int have_monitor_depths);

/* The frames of thread into r (frame_count, truncated), every monitor count 0. */
void stack_read_frames(jthread thread, struct pin_rec *r);
/* The frames and the monitors each holds: the pinned thread itself in a
 * callback, or the writer for a thread that is still pinned on its carrier. */
void stack_read_full(jthread thread, struct pin_rec *r);

/* The writer's scratch record for stack_read_take. Writer thread only. */
int stack_read_writer_init(unsigned depth); /* 0 or -ENOMEM */
void stack_read_writer_fini(void);

/* The stack of virtual thread vthread_id, still blocked on the carrier with
 * OS tid carrier_tid, into *out (valid until the next call). through_park: a park
 * pin, whose stack must run through park (parkOnCarrierThread; never when
 * it is NULL). Returns 0, or -EAGAIN when it cannot be taken yet: the thread is
 * not blocked yet (descheduled between the breakpoint and the park), or the
 * pin has ended and its end, which carries the stack, is still on its way
 * (the carrier runs another virtual thread). Writer thread only. */
int stack_read_take(int carrier_tid, int64_t vthread_id, int through_park, jmethodID park, const struct pin_rec **out);

#endif
