/* What the writer and its modules (active_pins, sampler, watchdog, session)
 * know of the JVM and the options: filled by agent.c, given to
 * writer_configure, and read by each module's init. A header of its own, so
 * that the writer's modules need not include writer.h. */
#ifndef VTPIN_WRITER_CONFIG_H
#define VTPIN_WRITER_CONFIG_H

#include <stdint.h>

#include "options.h"
#include "queue.h"

struct writer_config {
    const struct options *options;
    const char *option_text;
    struct queue *queue;
    int attach_mode;
    unsigned jdk_feature;
    int monitor_depths;   /* the JVM says which frame holds which monitor; else inferred from bytecode */
    int park_breakpoints; /* pins are seen at parkOnCarrierThread; else the sampler finds them */
    int monitor_events;   /* contended monitor entries are seen by the monitor hooks (MonitorContendedEnter) */
    int blockers;         /* a contended entry's monitor and its owner can be asked (blocker.h) */
    unsigned parallelism;
    int64_t pid;
    const char *java_version, *vm_name, *vm_version, *vm_vendor;
    const char *app; /* main class or jar, NULL when unknown */
    const char **capabilities_missing;
    unsigned capabilities_missing_count;
    int mounts_on_demand; /* hogs may count mounts (mount_events.h); exact occupancy counts every one */
};

#endif
