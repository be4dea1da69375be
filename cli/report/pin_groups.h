/* A long session's ended pins summed up as the file is read, by everything the summaries tell
 * apart (sites, the flame graph and collapsed stacks, pprof): the pin's reason, stack, culprit
 * frame, carrier and downcall target (and the ids resolved once per group: the JDK's words, the
 * blocking frame). A group keeps its earliest pin whole (the example a site shows, with its thread
 * and where it slept), how many, their total and the longest. A pin with a blocker stays whole:
 * each says who held what.
 *
 * A pin costs some 170 bytes in the model and 60 in the file, so a session of 1 GB could not be
 * shown in less than 3 GB. Summed, memory follows the distinct groups and the pins in progress.
 * Only a load that asks sums (recording_plan.fold_pins and .fold, which report_open_plan gives; the
 * formats that show single pins read the pins again, pin_stream.h), and only a session whose passes
 * do not read every pin: not after attach (attach_bounds.h, kernel_pins.h); with the kernel view only
 * when its intervals were read first, each pin timed as it is summed (kernel_fold.h). */
#ifndef VTPIN_CLI_PIN_GROUPS_H
#define VTPIN_CLI_PIN_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "recording.h"

/* Sums the ended pins of s->pins that have no blocker into s->pin_groups, and moves the others
 * down in their order; moved[i] is where pins[i] is now (RECORDING_PIN_GONE: summed). The ids
 * are still raw: a group is resolved with the pins. 0, or -ENOMEM (the pins not summed stay,
 * the session whole). A recording_fold_fn (its last argument unused). */
int pin_groups_fold(struct recording_session *s, uint32_t *moved, void *unused);
/* Whether pin_groups_fold sums p up: it ended, has no blocker, and no park whose bounds are still to
 * settle may read it (attach_bounds.h). */
static inline int pin_groups_takes(const struct recording_pin *p)
{
    return p->ended && !recording_pin_blocker(p) && !p->bounds_kept;
}

/* A pin as the summaries count it: one pin, or a group of pins summed up. */
struct recording_pin_sum {
    const struct recording_pin *pin; /* the pin, or the group's earliest */
    uint64_t count;                  /* pins */
    uint64_t ongoing;                /* of which still in progress at the end (a group: none) */
    int64_t total_ns, max_ns;        /* recording_pin_duration, summed (saturating) and the longest */
};

/* The session's pins and groups as sums, in the order the pins started (a group where its
 * earliest did); a session that summed nothing gives its pins in order. A cursor: begin (0 or
 * -ENOMEM), next until it returns 0, end. */
struct pin_sums {
    const struct recording_session *s;
    const struct recording_pin_group **groups; /* by their earliest's seq */
    size_t pin, group;
};
int pin_sums_begin(struct pin_sums *c, const struct recording_session *s);
int pin_sums_next(struct pin_sums *c, struct recording_pin_sum *out);
void pin_sums_end(struct pin_sums *c);
/* The sum of p, a pin of s or a group's earliest (what pin_sums_next gave as .pin). */
struct recording_pin_sum pin_sum_of(const struct recording_session *s, const struct recording_pin *p);
/* How many sums: the pins kept and the groups. */
static inline size_t pin_sums_count(const struct recording_session *s)
{
    return s->n_pins + s->n_pin_groups;
}

#endif
