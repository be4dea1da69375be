/* The passes that correct pins by the kernel view's intervals (recording_kinterval,
 * written by a collector): blocks timed by the kernel, and the parks after attach split
 * into the kernel's own. They change pins; kernel_join.h then joins the result. Pure. */
#ifndef VTPIN_CLI_KERNEL_PINS_H
#define VTPIN_CLI_KERNEL_PINS_H

#include <stdint.h>

#include "recording.h"

/* Blocks timed by the kernel. The watchdog finds a NATIVE_BLOCK or VM_BLOCK
 * pin at the first sample that sees its carrier asleep, and ends it at the
 * first that sees it awake: both up to a sample period late. With the
 * collector's kernel view, such a pin starts when the sleep in progress at
 * its first sample began and, when PinEnd said the last sample that saw it
 * asleep, ends when the sleep in progress then ended; it is marked
 * timed_by_kernel. Any mode. Returns how many pins were timed (none when out
 * of memory: the agent's times stay, as without the kernel view). */
size_t kernel_time_blocks(struct recording_session *s);

/* The same for one pin at a time (a session summed up as it is read times each pin before it is
 * summed: kernel_fold.h): the session's sleeps by carrier, found once. */
struct kernel_sleeps {
    const struct recording_session *s;
    size_t *ks, n; /* the sleeps (kinterval indexes) by carrier, then start */
    int ends_sorted;
};
/* ix for s as it holds its intervals now (every one of them: none may be added while ix is used).
 * 0 or -ENOMEM. */
int kernel_sleeps_index(const struct recording_session *s, struct kernel_sleeps *ix);
void kernel_sleeps_free(struct kernel_sleeps *ix);
/* p (a pin of ix's session, or one taken out of it) timed by the kernel as kernel_time_blocks times it:
 * 1 when it was, 0 when it is not a block, was timed already, or the kernel kept no sleep there. */
int kernel_time_block(const struct kernel_sleeps *ix, struct recording_pin *p);

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
