/* /debug/pprof/pinned without stalling the collector: a profile of many JVMs
 * takes its time (0.8 s for 400 in a fault campaign, all of it on the loop's
 * thread, while agents were dropped and `vtpin status` failed). So:
 * - a request waits, suspended (metrics_http.h), while its profile is built
 *   in steps of at most STEP_NS between two turns of the loop
 *   (pinned_pprof.h: JVM by JVM), so agents and queries are served between;
 * - one profile is built at a time; requests for other spans queue (at most
 *   QUEUE spans; past that a request is answered 503) and requests for the
 *   span being built wait for it;
 * - a profile built is served again for FRESH_NS to every request for its
 *   span: scrapers that hammer cost one build a second.
 * Runs on the loop's thread, as everything the JVMs' state is read from. */
#ifndef VTPIN_COLLECTOR_PPROF_SERVICE_H
#define VTPIN_COLLECTOR_PPROF_SERVICE_H

#include <stddef.h>
#include <stdint.h>

#include "jvms.h"
#include "loop.h"
#include "metrics.h" /* struct pprof_service_counts */
#include "metrics_http.h"

struct pprof_service;

/* Serves h's /debug/pprof/pinned from the JVMs of r (a window of window_ns, a collector that
 * started at started_ns), building on l's turns. 0 or -errno. */
int pprof_service_start(struct pprof_service **out, struct loop *l, struct metrics_http *h, const struct jvms *r,
                        int64_t window_ns, int64_t started_ns);
void pprof_service_counts(const struct pprof_service *ps, struct pprof_service_counts *out);

/* Stops building (after metrics_http_stop answered what still waits). */
void pprof_service_stop(struct pprof_service *ps);

#endif
