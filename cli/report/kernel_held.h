/* Every held millisecond explained (kernel view): how long a carrier slept
 * with a virtual thread mounted, and how much of it the session's pins cover.
 *
 * Held: each kernel sleep (S or D) of at least the collector's --kernel-min in
 * which the kernel view read a virtual thread mounted on the carrier, not a
 * wait on the VM itself (a safepoint, a GC, a VM lock: wire_held_sleep). The
 * collector records every such sleep, explained or not. In pins: the part of
 * those sleeps inside the session's pins of that carrier, as the report has
 * them (timed by the kernel, split into the kernel's parks after attach; one
 * in progress runs to the session's end). Pure. */
#ifndef VTPIN_CLI_KERNEL_HELD_H
#define VTPIN_CLI_KERNEL_HELD_H

#include <stdint.h>

#include "recording.h"

struct kernel_held {
    int known;                               /* the kernel view read the carrier's JavaThreads */
    int64_t held_ns, in_pins_ns;             /* held_ns - in_pins_ns: unexplained */
    const struct recording_kinterval *worst; /* the sleep with the largest part outside every pin; NULL: none */
    int64_t worst_outside_ns;                /* that part */
};

/* Whether k counts as held: a sleep with a virtual thread mounted, not a wait on the VM. */
int kernel_held_sleep(const struct recording_kinterval *k);

/* Carrier tid's figures. Known when the session's Hello gave the kernel view
 * the JavaThread layout and a collector wrote kernel times, or when one of
 * its intervals says what was mounted. 0 or -ENOMEM (*out zero). */
int kernel_held(const struct recording_session *s, int32_t tid, struct kernel_held *out);

/* A notice (warning, code kernel.held_unexplained) for each carrier of the
 * kernel times whose held time is more than 1 % outside pins: the carrier,
 * how long, and the largest such sleep with its kernel stack. Reads the join
 * (s->held, kernel_join.h): none before it. 0 or -ENOMEM. */
int kernel_held_notices(struct recording_session *s);

#endif
