/* GET /debug/pprof/pinned?seconds=N: the pinned time of every JVM the
 * collector knows over the last N seconds, as one gzipped pprof profile
 * (pinprofile.h per JVM, proto/pprof_build.h), each JVM's samples labelled
 * with its pid and app. Pure: the clock is passed in (or, to bound a step, a
 * clock function). */
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

/* The same profile built JVM by JVM, so that the collector's loop serves agents and queries
 * between two steps (a profile of many JVMs takes its time: 0.8 s for 400 in a campaign):
 * begin notes the JVMs of r now (each is found again by identity at its step: one gone since
 * adds nothing, one come since is not in); step adds JVMs until clock() reaches until (clock
 * NULL: all of them), 1 when every one is in, 0 when some remain, -errno; finish encodes it
 * (as pinned_pprof_render). The caller frees it with pinned_pprof_free. */
struct pinned_pprof_build;
int pinned_pprof_begin(struct pinned_pprof_build **out, const struct jvms *r, int64_t now, int64_t span_ns);
int pinned_pprof_step(struct pinned_pprof_build *pb, const struct jvms *r, int64_t (*clock)(void), int64_t until);
int pinned_pprof_finish(struct pinned_pprof_build *pb, int64_t now_unix_ns, int64_t started_ns, uint8_t **out,
                        size_t *len);
void pinned_pprof_free(struct pinned_pprof_build *pb);

#endif
