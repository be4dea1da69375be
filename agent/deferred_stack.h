/* Deferred stacks: with threshold > 0 the callbacks queue a pin start without
 * its stack (most pins end before the threshold and never need one). A pin
 * that crosses the threshold is still in progress, its virtual thread
 * blocked on the same carrier, so the writer takes its stack from here.
 * Writer thread only. */
#ifndef VTPIN_DEFERRED_STACK_H
#define VTPIN_DEFERRED_STACK_H

#include <jvmti.h>
#include <stdint.h>

#include "pins.h"

int deferred_stack_init(jvmtiEnv *jvmti, unsigned depth); /* 0 or -ENOMEM */
void deferred_stack_fini(void);

/* The stack of virtual thread vthread_id, still blocked on the carrier with
 * OS tid carrier_tid, into *out (valid until the next call). through_park: a
 * park pin, whose stack must run through parkOnCarrierThread. Returns 0, or
 * -EAGAIN when it cannot be taken yet: the thread is not blocked yet
 * (descheduled between the breakpoint and the park), or the pin has ended and
 * its end, which carries the stack, is still on its way (the carrier runs
 * another virtual thread). */
int deferred_stack_take(int carrier_tid, int64_t vthread_id, int through_park, const struct rec **out);

#endif
