/* A session with the kernel view summed up as it is read (recording_plan.fold_kernel): each pin
 * timed by the kernel (kernel_pins.h) before it joins its group, and its span kept for the carriers'
 * held time (kernel_held.h). The loader reads the session's intervals first, so each pin meets all
 * of them, as in a session kept whole; kernel_join.h joins the groups' examples at the end. Not
 * after attach: those passes read every pin (the loader keeps such sessions whole). */
#ifndef VTPIN_CLI_KERNEL_FOLD_H
#define VTPIN_CLI_KERNEL_FOLD_H

#include "kernel_pins.h"
#include "recording.h"

/* The load's fold_arg: the sleeps of the session being summed up, found once. */
struct kernel_fold {
    struct kernel_sleeps sleeps;
    const struct recording_session *of; /* whose sleeps these are; NULL: none yet */
    int32_t *held_tids;                 /* the carriers with a held sleep (kernel_held.h), in order */
    size_t n_held_tids;
};

/* A recording_fold_fn (arg: a struct kernel_fold, zeroed before the load): the pins that
 * pin_groups_fold will sum up timed and their spans kept, then pin_groups_fold. A session without
 * intervals is summed up as pin_groups_fold does. Only the spans of carriers with a held sleep are kept
 * (no other carrier's held time reads them). 0 or -ENOMEM. */
int kernel_fold_pins(struct recording_session *s, uint32_t *moved, void *arg);
void kernel_fold_free(struct kernel_fold *f);

#endif
