/* The collector's state as Prometheus metrics: the text exposition format
 * 0.0.4 (what GET /metrics returns, metrics_http.h). The families and their
 * labels are listed in docs/collector.md ("Metrics").
 *
 * Pure: no I/O, no clock reads (now is passed in); reads the JVMs and brings
 * their occupancy up to now (occupancy_advance), like a STATUS query. */
#ifndef VTPIN_COLLECTOR_METRICS_H
#define VTPIN_COLLECTOR_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "jvms.h"

/* /debug/pprof/pinned (pprof_service.h): profiles built, and answers by how they came */
struct pprof_service_counts {
    uint64_t built;          /* profiles built */
    uint64_t built_answers;  /* requests answered with a profile built while they waited */
    uint64_t cached_answers; /* requests answered with one built less than FRESH_NS before */
    uint64_t busy_answers;   /* 503: QUEUE spans already waiting, or not built within 4 s */
};

struct metrics_info {
    int64_t started_ns; /* when the collector started (CLOCK_MONOTONIC) */
    unsigned clients;   /* connections open now */
    struct pprof_service_counts pprof;
};

/* The exposition of every JVM r tracks at now into *out (malloc'ed, NUL
 * terminated), *len bytes. A pid shared by two JVMs (a pid reused while the
 * old JVM still lingers) is shown for the newest only. 0 or -ENOMEM. */
int metrics_render(struct jvms *r, const struct metrics_info *info, int64_t now, char **out, size_t *len);

/* s as a label value into out[cap]: backslash, double quote and newline
 * escaped as the format wants, invalid UTF-8 as U+FFFD, cut on a character
 * boundary when out is too small. Returns out. */
char *metrics_escape_label(const char *s, char *out, size_t cap);

#endif
