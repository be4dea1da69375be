/* GET /debug/pprof/pinned?seconds=N: the pinned time of every JVM the
 * collector knows over the last N seconds, as one gzipped pprof profile
 * (pinprofile.h per JVM, proto/pprof_build.h), each JVM's samples labelled
 * with its pid and app. Pure: the clock is passed in. */
#ifndef VTPIN_COLLECTOR_PINNED_PPROF_H
#define VTPIN_COLLECTOR_PINNED_PPROF_H

#include <stddef.h>
#include <stdint.h>

#include "jvms.h"

/* The span of a request's seconds= value (NULL: not given: the whole
 * window): a whole number of seconds from 1 to the window. 0 and *span_ns,
 * or -EINVAL with why[] saying what is wrong with it. */
int pinned_pprof_span(const char *seconds, int64_t window_ns, int64_t *span_ns, char *why, size_t whylen);

/* The profile of the JVMs of r over span_ns up to now (CLOCK_MONOTONIC),
 * taken at now_unix_ns, of a collector that started at started_ns (the
 * profile's duration is never longer than that): gzipped into *out
 * (malloc'ed), *len bytes. 0 or -ENOMEM. */
int pinned_pprof_render(const struct jvms *r, int64_t now, int64_t now_unix_ns, int64_t started_ns, int64_t span_ns,
                        uint8_t **out, size_t *len);

#endif
