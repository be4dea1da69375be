/* Pinned time of one JVM by stack, reason and carrier over the last
 * window, for /debug/pprof/pinned (pinned_pprof.h), and its carrier hogs'
 * time the same way: a ring of PINPROFILE_BUCKETS time buckets (each
 * window / PINPROFILE_BUCKETS long, at least 1 s), each a table of (stack,
 * reason, carrier) -> pinned ns and pins, or of (stack, carrier) -> hogged
 * ns. A pin counts when it ends (PinEnd carries its duration), in the
 * bucket of the time its end arrived; its stack and carrier are taken at its
 * PinStart, into the JVM's table of pins in progress (proto/session_pins.h),
 * which hands them back at the end. A hog likewise, from its HogStart and
 * HogEnd; one in progress is not counted yet, as a pin in progress is not.
 * Stacks, frames and names are kept by content, so a reconnect's new ids
 * land on the same stacks.
 *
 * Bounded, drop and count, never grown past: PINPROFILE_STACKS stacks of at
 * most PINPROFILE_DEPTH frames (deeper ones keep their top frames, cut
 * under "[truncated]"), PINPROFILE_FRAMES frames, PINPROFILE_STRING_BYTES of
 * names; a pin whose stack finds no room counts under one "[other stacks:
 * the collector's table is full]" stack. PINPROFILE_ENTRIES per bucket: a
 * pin (or hog) past it is dropped and counted. Pure: no I/O, no clock (times are
 * passed in, CLOCK_MONOTONIC ns). */
#ifndef VTPIN_COLLECTOR_PINPROFILE_H
#define VTPIN_COLLECTOR_PINPROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "session_defs.h"
#include "session_pins.h"
#include "wire.h"

#define PINPROFILE_BUCKETS 60
#define PINPROFILE_ENTRIES 128
#define PINPROFILE_STACKS 512
#define PINPROFILE_DEPTH 128
#define PINPROFILE_FRAMES 8192
#define PINPROFILE_STRING_BYTES (512u << 10)
#define PINPROFILE_NONE UINT32_MAX /* session_pin.profile_stack of a pin left out of the profile */

struct pprof_builder;
struct pprof_label;
struct pinprofile;

/* What did not fit, since it was made. */
struct pinprofile_drops {
    uint64_t stacks;  /* pins and hogs counted under the "[other stacks]" stack */
    uint64_t entries; /* pins and hogs dropped: their bucket's table was full */
};

/* window_ns: the span kept (clamped to 1 s .. 24 h). NULL with errno ENOMEM. */
struct pinprofile *pinprofile_new(int64_t window_ns);
void pinprofile_free(struct pinprofile *p);

/* A pin began (its PinStart, of the session whose definitions are d): its stack and carrier,
 * kept by content, into pin->profile_stack and profile_carrier. */
void pinprofile_start(struct pinprofile *p, const struct session_defs *d, const Vtpin__V1__PinStart *ps,
                      struct session_pin *pin);
/* The same for a carrier hog (its HogStart). */
void pinprofile_hog_start(struct pinprofile *p, const struct session_defs *d, const Vtpin__V1__HogStart *hs,
                          struct session_pin *pin);
/* A pin or hog ended after duration_ns, its end seen at now: counted once, under what its start
 * took (nothing when its profile_stack is PINPROFILE_NONE). */
void pinprofile_end(struct pinprofile *p, const struct session_pin *pin, int64_t duration_ns, int64_t now);

/* The pins and hogs that ended in the last span_ns up to now (whole
 * buckets: from the bucket holding now - span_ns) as samples of b (types
 * pprof_pinned_types: a pin's {pinned ns, pins, 0}, a hog's {0, 0, hogged
 * ns}), each with labels reason (a hog's: HOG), origin, carrier and then
 * jvm_labels[n] (n <= PPROF_MAX_LABELS - 3). 0 or -ENOMEM / -EINVAL. */
int pinprofile_collect(const struct pinprofile *p, int64_t now, int64_t span_ns, struct pprof_builder *b,
                       const struct pprof_label *jvm_labels, size_t n);

int64_t pinprofile_window(const struct pinprofile *p);
void pinprofile_drops(const struct pinprofile *p, struct pinprofile_drops *out);
/* The bytes it holds now (its tables, names and buckets). */
size_t pinprofile_memory(const struct pinprofile *p);

#endif
