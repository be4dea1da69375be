/* The run's live look for a deadlock its JVMs' agents found (docs/deadlocks.md):
 * one never ends by itself, so the run ends COMMAND rather than wait for a
 * timeout to. It asks the collector the JVMs stream to, once a second, as
 * run_job's should_end. */
#ifndef VTPIN_CLI_RUN_DEADLOCK_H
#define VTPIN_CLI_RUN_DEADLOCK_H

#include <sys/types.h>

struct run_deadlock_watch {
    const char *socket; /* the collector the run's JVMs stream to */
    int own_collector;  /* the run's own: every JVM it lists is the run's; else those in pgid only */
    int silent;         /* it did not answer once: asked no more (said once) */
};

/* run_job_wait.should_end: 1 when a JVM of the run has a deadlock in progress (said on stderr). */
int run_deadlock_should_end(void *watch, pid_t pgid);

#endif
