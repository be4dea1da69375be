/* A pprof profile built in memory and written as pprof's wire format,
 * gzipped (proto/pprof.proto): what `vtpin report --format pprof` writes and
 * the collector's /debug/pprof/pinned serves. Pure: no I/O, no clock.
 *
 * Strings, functions and locations are interned: the same function (name,
 * file) is one Function, the same (function, line) one Location. Samples
 * with the same locations and the same labels are merged (their values
 * added, saturating), so a caller may add one sample per event.
 *
 * The sample types come from a table (pprof_pinned_types below: pinned
 * time, pins, carrier hogs' time); a sample has one value per type. */
#ifndef VTPIN_PROTO_PPROF_BUILD_H
#define VTPIN_PROTO_PPROF_BUILD_H

#include <stddef.h>
#include <stdint.h>

#define PPROF_MAX_TYPES 8
#define PPROF_MAX_LABELS 16

struct pprof_value_type {
    const char *type; /* "pinned" */
    const char *unit; /* "nanoseconds" */
};

/* vtpin's sample types, in value order: every profile of pins uses all
 * PPROF_PINNED_N, so each sample has {pinned ns, pins, hogged ns} (a pin's
 * sample hogged 0, a carrier hog's pinned 0 and pins 0). */
enum pprof_pinned_value { PPROF_VALUE_PINNED_NS = 0, PPROF_VALUE_PINS = 1, PPROF_VALUE_HOGGED_NS = 2 };
#define PPROF_PINNED_N 3
extern const struct pprof_value_type pprof_pinned_types[PPROF_PINNED_N];

/* A sample's label: a string one (str not NULL) or a number (num, num_unit NULL or "bytes"...). */
struct pprof_label {
    const char *key;
    const char *str;
    int64_t num;
    const char *num_unit;
};

struct pprof_builder;

/* types[n] (1 <= n <= PPROF_MAX_TYPES; the strings are copied). 0, -EINVAL or -ENOMEM. */
int pprof_builder_new(struct pprof_builder **out, const struct pprof_value_type *types, size_t n);
void pprof_builder_free(struct pprof_builder *b);

/* The profile's time (Unix epoch ns when it was taken) and the span it covers. */
void pprof_builder_set_time(struct pprof_builder *b, int64_t time_nanos, int64_t duration_nanos);
/* A comment (go tool pprof prints them with -comments). 0 or -ENOMEM. */
int pprof_builder_comment(struct pprof_builder *b, const char *text);

/* The id (> 0) of the location of function (NULL: "<unknown>") in file
 * (NULL or "": none) at line (<= 0: unknown), interned; -ENOMEM. */
int64_t pprof_builder_location(struct pprof_builder *b, const char *function, const char *file, int64_t line);

/* A sample: locations[n] (ids from pprof_builder_location, the leaf first),
 * values[] (one per type), labels[n_labels] (n_labels <= PPROF_MAX_LABELS).
 * Merged into an earlier sample with the same locations and labels.
 * 0, -EINVAL (an unknown location id, too many labels) or -ENOMEM. */
int pprof_builder_sample(struct pprof_builder *b, const uint64_t *locations, size_t n, const int64_t *values,
                         const struct pprof_label *labels, size_t n_labels);

/* Counts so far. */
size_t pprof_builder_samples(const struct pprof_builder *b);
size_t pprof_builder_locations(const struct pprof_builder *b);

/* The Profile message packed and gzipped into *out (malloc'ed), *len bytes.
 * 0 or -ENOMEM / -EIO (zlib failed). */
int pprof_builder_encode(const struct pprof_builder *b, uint8_t **out, size_t *len);

/* Gunzips data[len] into *out (malloc'ed), at most max bytes: for tests and
 * readers. 0, -EPROTO (not gzip, damaged), -EFBIG (over max) or -ENOMEM. */
int pprof_gunzip(const uint8_t *data, size_t len, size_t max, uint8_t **out, size_t *out_len);

#endif
