/* The pin path on the writer side: the pins in progress, the threshold and
 * the reports. A pin start (from the callbacks' queue, or from the watchdog)
 * enters the table; a pin that lasts past threshold= is reported (trace,
 * recording, collector) with its stack, culprit and native boundary; its end
 * reports the duration; a shorter pin is only counted. Writer thread only.
 *
 * What happens when is decided by pin_machine.h (its state table); this
 * module executes its actions: it feeds the machine the records, the
 * writer's clock, the 24+ verdicts and the stack reads (stack_read.h), and
 * names stacks (symbols.h) and reports the pins (outputs, trace). */
#ifndef VTPIN_ACTIVE_PINS_H
#define VTPIN_ACTIVE_PINS_H

#include <jvmti.h>
#include <stdint.h>

#include "pins.h"
#include "symbols.h"
#include "writer_config.h"

int active_pins_init(const struct writer_config *cfg, jvmtiEnv *jvmti, struct symbols *symbols); /* 0 or -ENOMEM */
void active_pins_fini(void); /* forgets the table and the counts (a new session) */

/* blocked_in: where the kernel or the JVM says the carrier sleeps (watchdog pins), or NULL;
 * waits_for: the class whose initialization by another thread it waits for (VM_BLOCK), or NULL;
 * blocker: who it waits for, looked up by the watchdog (its initializer), or NULL. */
struct blocker;
void active_pins_start(const struct pin_rec *r, const char *blocked_in, const char *waits_for,
                       const struct blocker *blocker);
void active_pins_end(const struct pin_rec *r);
/* A pin the watchdog found is still asleep at this sample (PinEnd.last_asleep_ns). */
void active_pins_asleep(uint64_t pin_id, int64_t at);
/* A carrier started: counted; one beyond the scheduler's parallelism is a compensation (a notice). */
void active_pins_carrier_started(const struct pin_rec *r);

/* Reports the pins that have now lasted longer than the threshold; returns
 * how long until the next one will (or a default idle wait). */
int64_t active_pins_report_crossings(int64_t now);

/* A pin in progress, briefly (deadlock.h); vthread_name is the table's, valid until the next record. */
struct blocker;

struct pin_brief {
    uint64_t pin_id;
    int carrier_tid;
    int64_t vthread_id;
    const char *vthread_name;
    const struct blocker *blocker;  /* what it waits for (what BLOCKER_NONE: not known) */
    const struct stack_info *stack; /* its stack, NULL when not kept */
    uint32_t culprit;               /* its culprit frame in stack */
};
/* The pins in progress into out[max]: how many there are (more than max when they did not fit). */
unsigned active_pins_brief(struct pin_brief *out, unsigned max);

/* A pin in progress on the carrier with this tid, other than pin except_id. */
int active_pins_on_carrier(int carrier_tid, uint64_t except_id);
unsigned active_pins_count(void);
/* The reported pins still in progress again, to a new collector connection. */
void active_pins_resend(unsigned sinks);
/* The pins in progress that were reported, as the Java API's snapshot (api_pins.h). */
void active_pins_to_api(void);

struct active_pins_counts {
    uint64_t reported, below_threshold, dropped, without_stack, carriers_started, compensations;
    uint64_t not_pins; /* 24+: contended entries and waits that could unmount (pins_started counts them) */
};
void active_pins_counts(struct active_pins_counts *out);

#endif
