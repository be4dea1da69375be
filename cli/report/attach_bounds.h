/* The sampled pins of an attached agent, kept to what can be proved.
 *
 * After attach no breakpoint marks a park: the sampler finds a virtual thread
 * parked in VirtualThread.parkOnCarrierThread in two samples in a row, starts
 * the pin at the first and ends it at the first sample that no longer sees it,
 * each to one sample period. Three things the samples alone get wrong, which
 * this pass corrects from what is exact in the same recording:
 * - a sampled park runs into the same virtual thread's contended entry or
 *   Object.wait (MONITOR_ENTER, OBJECT_WAIT: the monitor events time those
 *   exactly, after attach too): it is cut where that wait begins, or starts
 *   where it ended, so a wait is never part of a hold;
 * - one sample period late, a park's end can pass the start of a park that
 *   another carrier's sampler saw begin after the last sample that saw this
 *   one (the next holder of the same monitor, say): it ends there instead,
 *   still within its period, so two holders of one monitor never overlap;
 * - the sample that first saw a park stamped its time before it read the
 *   carrier: a park stamped before the kernel-timed park ahead of it on the
 *   same carrier ended starts at that end instead.
 * Pins the kernel view timed (timed_by_kernel) are exact and left alone.
 * Pure. */
#ifndef VTPIN_CLI_ATTACH_BOUNDS_H
#define VTPIN_CLI_ATTACH_BOUNDS_H

#include "recording.h"

/* A pin the attached agent's sampler found parked: its stack runs through
 * VirtualThread.parkOnCarrierThread (MONITOR, NATIVE or CRITICAL_SECTION). */
int attach_sampled_park(const struct recording_pin *p);

/* Applies the corrections to the sampled parks of an attach-mode session
 * that the kernel did not time; s->pins_sampled counts those, s->pins_bounded
 * the ones whose bounds moved. 0 or -ENOMEM (s unchanged). */
int attach_bound_samples(struct recording_session *s);

#endif
