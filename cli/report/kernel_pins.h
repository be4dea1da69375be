/* What the kernel saw during a pin: the kernel view's off-CPU intervals of
 * the pin's carrier (recording_kinterval, written by a collector) that
 * overlap the pin, summed, with the state, syscall and kernel stack of the
 * one that overlaps it the most. Pure. */
#ifndef VTPIN_CLI_KERNEL_PINS_H
#define VTPIN_CLI_KERNEL_PINS_H

#include <stdint.h>
#include <stdio.h>

#include "recording.h"

struct pin_kernel {
    const struct recording_kinterval *main; /* overlaps the pin the most */
    int64_t off_cpu_ns;                     /* overlap of all intervals with the pin */
    int64_t runqueue_ns;                    /* their run-queue time (whole intervals) */
    unsigned intervals;
};

/* 1 and *out when intervals of p's carrier overlap p, else 0. A pin still in
 * progress runs to the session's last timestamp. */
int kernel_pin(const struct recording_session *s, const struct recording_pin *p, struct pin_kernel *out);

/* "kernel_times": {"time_ns": ..., "carriers": [{"tid", "name", "on_cpu_ns", "off_cpu_ns",
 * "runqueue_ns"}]} of the session, or null without a collector's kernel view. */
struct json;
/* "parks": [{"start_ns", "duration_ns", "state"}]: the intervals of p's carrier
 * overlapping p in which it slept (S or D), whole and exact: after attach a
 * sampled pin can cover several back-to-back parks, and these are they. */
void kernel_parks_json(struct json *j, const struct recording_session *s, const struct recording_pin *p);
void kernel_times_json(struct json *j, const struct recording_session *s);
/* The same for the text report: nothing without kernel times. */
void kernel_times_text(FILE *out, const struct recording_session *s);

/* Blocks timed by the kernel. The watchdog finds a NATIVE_BLOCK or VM_BLOCK
 * pin at the first sample that sees its carrier asleep, and ends it at the
 * first that sees it awake: both up to a sample period late. With the
 * collector's kernel view, such a pin starts when the sleep in progress at
 * its first sample began and, when PinEnd said the last sample that saw it
 * asleep, ends when the sleep in progress then ended; it is marked
 * timed_by_kernel. Any mode. Returns how many pins were timed (none when out
 * of memory: the agent's times stay, as without the kernel view). */
size_t kernel_time_blocks(struct recording_session *s);

/* Exact pins after attach. In an attach-mode session, a pin the sampler found
 * parked (its stack runs through VirtualThread.parkOnCarrierThread) whose
 * carrier slept (S or D) during it, as the collector's kernel view recorded,
 * is replaced by one pin per sleep: same reason, stack, culprit, virtual
 * thread and carrier, start and end from the kernel, a new id and
 * split_from = the sampled pin's id. Sleeps that overlap the sampled pin
 * belong to it, and those in a gap of at most two sample periods since the
 * previous sampled park of the same virtual thread on the carrier (the loop
 * went on between two samples); each sleep goes to one pin, and sleeps below
 * the session's threshold are not pins (as at startup). Pins keep their order;
 * s->pins_split counts the sampled pins replaced. 0 or -ENOMEM (s unchanged). */
int kernel_split_parks(struct recording_session *s);

#endif
