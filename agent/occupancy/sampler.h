/* The carrier sampler: once per writer round it tells the outputs about new
 * carriers, sends the exact occupancy transitions (occupancy=exact) and
 * releases ended carriers; every sample= period it reads which virtual
 * thread each carrier runs (occupancy=sampled: a CarrierSample event) and
 * runs the native-block watchdog on each carrier (watchdog.h). Writer thread
 * only. */
#ifndef VTPIN_SAMPLER_H
#define VTPIN_SAMPLER_H

#include <stdint.h>

#include "symbols.h"
#include "writer_config.h"

int sampler_init(const struct writer_config *cfg, struct symbols *symbols); /* 0 or -ENOMEM */
/* Forgets the session: the carriers stay registered, but the new outputs
 * have not been told about them and the watchdog looks at them afresh. */
void sampler_fini(void);

void sampler_round(int64_t now);
int64_t sampler_next_ns(void); /* when the next sample is due */
void sampler_due_now(void);    /* the next round samples (a last look at exit) */
/* Rounds that came late (more than two periods from the previous round's start to their end) and
 * the longest such span this session: what the sampler may have missed. */
void sampler_gaps(uint64_t *gaps, int64_t *max_ns);
/* The carriers must be announced again on sink (a new collector connection). */
void sampler_forget_sink(unsigned sink);

#endif
