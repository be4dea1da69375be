/* The kernel view in `vtpin run`'s report. The agents' recordings stay the
 * source of the report and of the gates (written in each JVM, complete even
 * when the collector lags or drops); the run's collector, when its kernel
 * view is on (root, --kernel=auto), writes its own recording of every
 * connection, RUNDIR/collector/<pid>-<start>-<connection>.vtp, which carries
 * what the kernel saw of the carriers (KernelInterval, KernelTimes) on the
 * same clock. Those are moved into the agent's session of the same JVM, so
 * its pins get their `kernel` objects (state, syscall, kernel stack, off-CPU
 * time) and the session its kernel times, as `vtpin report` shows them for a
 * collector's recording. */
#ifndef VTPIN_CLI_RUN_KERNEL_H
#define VTPIN_CLI_RUN_KERNEL_H

#include <stddef.h>

#include "recording.h"

/* 1 when a and b are the same JVM session: the same pid and, when both have
 * a clock pair, the same start. */
int run_kernel_same(const struct recording_session *a, const struct recording_session *b);

/* A recording_kernel_fn (dir: the collector's directory): the collector's kernel view of s's JVM
 * moved into s as its Hello is read, so that the load sums s up as it reads it (kernel_fold.h);
 * run_kernel_join then leaves s as it is. 1 when s got one. */
int run_kernel_at_hello(struct recording_session *s, void *dir);

/* For every session of recs, the collector's recordings of the same pid in
 * dir (<pid>-*.vtp): their kernel view moves into it. Returns how many
 * sessions got kernel intervals or times. A recording that cannot be read is
 * said on stderr, prefixed "vtpin run: ". */
size_t run_kernel_join(const char *dir, struct recording **recs, size_t nrecs);

#endif
