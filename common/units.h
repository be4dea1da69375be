/* Durations and sizes given on the command line and in the agent's options.
 * Pure (no allocation, no locks): the agent links it too. */
#ifndef VTPIN_COMMON_UNITS_H
#define VTPIN_COMMON_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* The one duration syntax of vtpin: a plain decimal number (digits, an
 * optional fraction and exponent; no sign, space, hex, inf or nan) followed
 * by a unit: ns, us, ms, s, m ("250ms", "1.5s", "2m"). "0" needs no unit.
 * Any other bare number needs one, except with UNITS_BARE_MS, where it is
 * milliseconds: only the agent's options (threshold=10 is 10ms, as the
 * README's option table promises) pass that flag; the CLI and the collector
 * do not, so `--window 5` is refused ("5 what?").
 * 0 and *ns (>= 0; untouched on error), or -EINVAL (garbage) / -ERANGE
 * (above about 9.2e18 ns). */
#define UNITS_BARE_MS 1u
int units_parse_duration_flags(const char *text, unsigned flags, int64_t *ns);
/* units_parse_duration_flags(text, 0, ns): a unit is required. */
int units_parse_duration(const char *text, int64_t *ns);

/* "1048576", "64k", "1M", "1MiB": bytes with k/K, m/M, g/G (powers of 1024,
 * optionally followed by "iB" or "B"). 0 and *bytes, or -EINVAL / -ERANGE. */
int units_parse_size(const char *text, uint64_t *bytes);

/* An unsigned count in [min, max]: 0 or -EINVAL / -ERANGE. */
int units_parse_count(const char *text, uint64_t min, uint64_t max, uint64_t *out);

/* The one duration vtpin shows a person (reports, status, top, run, the
 * collector's log): "850 ns", "12.3 us", "201.3 ms", "19.95 s", "10m00s", "2h03m"
 * (negative: 0). Into out[cap]; returns out. */
char *units_format_duration(int64_t ns, char *out, size_t cap);
/* "512 B", "64 KiB", "1.5 MiB", "256 MiB" for a person, into out[cap]; returns out. */
char *units_format_size(uint64_t bytes, char *out, unsigned cap);

#endif
