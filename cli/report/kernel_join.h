/* The kernel view joined to a session's pins and carriers, in one place and once.
 *
 * Run after every pass that moves, splits or times pins (report_passes; vtpin run after
 * it brought a collector's intervals in), and before any format: each pin's figures
 * (recording_pin_kernel: the intervals of its carrier that overlap it, the one that
 * overlaps most, and its sleeps), and each carrier's held time (recording_held) are kept
 * in the session. The formats read them and compute nothing. Pure.
 *
 * Each pin meets only the intervals of its carrier that its span can reach, found by binary
 * search among that carrier's intervals by end (and its loop's previous pin, after attach, among
 * the pins by carrier, thread and end): a session of P pins and K intervals joins in
 * O((P + K) log K) plus what overlaps, where every pin against every interval was O(P x K). */
#ifndef VTPIN_CLI_KERNEL_JOIN_H
#define VTPIN_CLI_KERNEL_JOIN_H

#include "recording.h"

/* Joins s again from what it holds now (a join made before is dropped first). Without
 * kernel intervals or times nothing is kept. 0, or -ENOMEM (s keeps no join). */
int kernel_join(struct recording_session *s);

/* p's figures (p one of s->pins), or NULL: not joined, or no interval of its carrier overlaps it. */
const struct recording_pin_kernel *kernel_joined_pin(const struct recording_session *s, const struct recording_pin *p);

/* The join's one rule, for a single pin: the intervals of p's carrier that overlap p (one still
 * in progress runs to the session's last timestamp), summed, and the one overlapping most.
 * 1 and *out when any does, else 0 (*out zeroed; its parks are not computed here). */
int kernel_pin(const struct recording_session *s, const struct recording_pin *p, struct recording_pin_kernel *out);

/* The join for one pin at a time, found by search as kernel_join finds it: for the pins a session
 * summed up as it was read hands over again, one by one (pin_stream.h). Not after attach (a pin's
 * parks there reach back to its loop's previous pin, which only kernel_join knows). */
struct kernel_join_one;
/* For the pins of s, whose intervals it holds from now on. 0 or -ENOMEM. */
int kernel_join_one_new(const struct recording_session *s, struct kernel_join_one **out);
/* p's figures and *parks (its parks, indexes into s->kintervals from figures->first_park), as kernel_join
 * gives them to a pin of s; valid until the next call. NULL: none overlaps it, or out of memory. */
const struct recording_pin_kernel *kernel_join_one(struct kernel_join_one *j, const struct recording_pin *p,
                                                   const size_t **parks);
void kernel_join_one_free(struct kernel_join_one *j);

#endif
