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
 *
 * A long session is bounded as it is read, so that its ended pins can be
 * summed up (pin_groups.h) with the bounds a whole read gives them
 * (attach_bound_window): a park is settled once the pins that can move it
 * are all read, and the model keeps a pin only while a park not settled may
 * still read it. What is read later must not reach back past the window's
 * cut; where it does (a pin written later than the window allows, a park in
 * progress whose samples stopped long before its end), the pass says so and
 * the load reads the file again with the session kept whole.
 * Pure. */
#ifndef VTPIN_CLI_ATTACH_BOUNDS_H
#define VTPIN_CLI_ATTACH_BOUNDS_H

#include "recording.h"

/* A pin the attached agent's sampler found parked: its stack runs through
 * VirtualThread.parkOnCarrierThread (MONITOR, NATIVE or CRITICAL_SECTION). */
int attach_sampled_park(const struct recording_pin *p);

/* Applies the corrections to the sampled parks of an attach-mode session
 * that the kernel did not time and that are not settled yet; s->pins_sampled
 * counts those, s->pins_bounded the ones whose bounds moved (both added to
 * what the windows counted). 0 or -ENOMEM. */
int attach_bound_samples(struct recording_session *s);

/* For a session after attach without the kernel view, as it is read: settles
 * the parks that ended by cut whose bounds no pin still to come can move
 * (their bounds final, counted, and kept in s->bounds_moved when they moved),
 * and sets each pin's bounds_kept: whether a park not settled, or one still to
 * come, may read it. before: the cut of the window before (INT64_MIN: none),
 * whose assumptions about the parks then in progress are checked. 0, -ENOMEM,
 * or RECORDING_WINDOW_AGAIN. A recording_window_fn. */
int attach_bound_window(struct recording_session *s, int64_t before, int64_t cut);

/* The bounds of pin id as the windows settled them, when they moved (s's
 * bounds_moved, sorted by attach_bound_samples); NULL: as read. */
const struct recording_pin_bounds *attach_bounds_moved(const struct recording_session *s, uint64_t id);

#endif
