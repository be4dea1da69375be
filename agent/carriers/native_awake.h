/* A NATIVE_BLOCK's native call found running between its sleeps (pure, no
 * JVMTI): a moment between the sleeps of one call (a retry loop in C,
 * SQLite's busy timeout), or the end of the block, once the call has
 * computed for longer than such a moment lasts.
 *
 * Judged by the CPU the carrier's OS thread used while awake, not by how
 * many samples found it awake: under load a call that computes 15 ms
 * between its sleeps stays awake for several periods, runnable but waiting
 * for a CPU, and four samples found it so (a clean-clone run split one
 * 1.5 s call into 214 ms and 1,276 ms). A sample after which the thread had
 * no CPU has computed nothing. Where the CPU time is unknown (0), samples
 * are counted as before: more than max_samples and it computes.
 *
 *   sample                               -> verdict
 *   the first awake                      -> SAME (its time and CPU noted)
 *   CPU since the first <= cpu_budget    -> SAME
 *   CPU since the first >  cpu_budget    -> ENDED, at the first awake sample
 *   CPU unknown, samples <= max_samples  -> SAME
 *   CPU unknown, samples >  max_samples  -> ENDED, at the first awake sample
 *
 * The watcher resets it when a sample finds the call asleep again. */
#ifndef VTPIN_NATIVE_AWAKE_H
#define VTPIN_NATIVE_AWAKE_H

#include <stdint.h>

struct native_awake {
    unsigned samples; /* awake samples in a row; 0: asleep at the last sample */
    int64_t since;    /* the first of them */
    int64_t cpu_ns;   /* the thread's CPU time then; 0: unknown */
};

struct native_awake_rule {
    int64_t cpu_budget_ns; /* CPU a moment between sleeps may use */
    unsigned max_samples;  /* awake samples a moment may last when the CPU time is unknown */
};

enum native_awake_verdict { NATIVE_AWAKE_SAME = 0, NATIVE_AWAKE_ENDED };

/* One sample that found the call running, at now, the thread having used cpu_ns
 * (0: unknown). ENDED: the block ended at a->since. */
enum native_awake_verdict native_awake_sample(struct native_awake *a, int64_t now, int64_t cpu_ns,
                                              const struct native_awake_rule *rule);

/* A sample found the call asleep (or the watch ended): the next awake sample starts over. */
void native_awake_reset(struct native_awake *a);

#endif
