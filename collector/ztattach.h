/* Attach on pin (vtpin collector --jvms=all --attach-on-pin[=DUR], docs/zero-touch.md): loads the
 * agent into a JVM that zero-touch saw pin for DUR, by running this same binary as
 * `vtpin attach PID collector=SOCKET`, so that its later pins have stacks, culprits and blockers.
 *
 * At most per_minute attaches in any minute; never into a JVM whose command line refuses dynamic
 * agents (-XX:-EnableDynamicAgentLoading, -XX:+DisableAttachMechanism); only where the operator's
 * patterns (fnmatch on the command line, its arguments joined by spaces) allow. The decision is
 * pure; spawning and reaping the child are the I/O. */
#ifndef VTPIN_COLLECTOR_ZTATTACH_H
#define VTPIN_COLLECTOR_ZTATTACH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ZTATTACH_PER_MINUTE_MAX 16

struct ztattach_config {
    int64_t min_ns;      /* a pin this long brings the agent; < 0: off */
    const char *socket;  /* this collector's, absolute: the agent streams to it */
    const char *only;    /* attach only where the command line matches; NULL: everywhere */
    const char *deny;    /* never where it matches; NULL: none */
    unsigned per_minute; /* 1 to ZTATTACH_PER_MINUTE_MAX */
    const char *exe;     /* the vtpin binary ("/proc/self/exe") */
};

/* The attaches of the last minute. */
struct ztattach_limiter {
    int64_t at[ZTATTACH_PER_MINUTE_MAX];
    unsigned n;
};

/* Whether the JVM whose command line is cmdline may get the agent at now (CLOCK_MONOTONIC ns): 0,
 * and the attach is counted; -EPERM (its flags or a pattern refuse it: for good) or -EBUSY (the
 * minute's attaches are used: later), with why[] saying which. */
int ztattach_allowed(const struct ztattach_config *c, struct ztattach_limiter *l, const char *cmdline, int64_t now,
                     char *why, size_t whylen);

/* Starts `exe attach PID collector=SOCKET`, its output to the collector's: the child's pid, or -errno. */
pid_t ztattach_spawn(const struct ztattach_config *c, int32_t pid);

/* 1 with *status (waitpid's) when child has ended, 0 while it runs, -errno. */
int ztattach_reap(pid_t child, int *status);

#endif
