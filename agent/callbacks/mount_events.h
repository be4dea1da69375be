/* HotSpot's VirtualThreadMount/Unmount extension events, the agent's only
 * view of mounts, used two ways:
 * - exact occupancy: both events, always on, each recorded in the carrier's
 *   ring (carriers.c);
 * - otherwise, counted on demand: the mount event alone, switched on by the
 *   writer only while a carrier hog is about to be reported (hogs.c), and
 *   counted per carrier, so that a thread the JDK hands its carrier straight
 *   back after a yield is not taken for a hog. Every mount in the JVM calls
 *   the agent while it is on: hogs.c keeps that to the end of a watch.
 * Set up and taken down on the thread that loads or stops the agent; only
 * mount_events_count is called by the writer, and stop takes counting down
 * after the writer has ended. */
#ifndef VTPIN_MOUNT_EVENTS_H
#define VTPIN_MOUNT_EVENTS_H

#include <jvmti.h>

/* Exact occupancy: both events on. 0, or -1 when this JVM does not have them. */
int mount_events_exact(jvmtiEnv *jvmti);
/* Counting on demand made ready (its callback set, the event still off). 0, or -1 when this JVM
 * does not have the mount event. */
int mount_events_count_ready(jvmtiEnv *jvmti);
/* Writer: counting on or off (a call only when that changes). */
void mount_events_count(int on);
/* Whether mounts are being counted on demand now. */
int mount_events_counting(void);
/* "stop", before the writer stops (its last round drains the rings): exact occupancy's events off. */
void mount_events_exact_off(jvmtiEnv *jvmti);
/* "stop", once the writer has stopped (it switches counting): counting on demand off, its callback
 * cleared. The next load sets either up again. */
void mount_events_count_off(jvmtiEnv *jvmti);

#endif
