/* Durations and sizes given on the command line. */
#ifndef VTPIN_COLLECTOR_UNITS_H
#define VTPIN_COLLECTOR_UNITS_H

#include <stdint.h>

/* "250ms", "1.5s", "2m": ns, us, ms, s, m. A bare number other than 0 needs a
 * unit. 0 and *ns (>= 0), or -EINVAL (garbage, negative) / -ERANGE. */
int units_parse_duration(const char *text, int64_t *ns);

/* "1048576", "64k", "1M", "1MiB": bytes with k/K, m/M, g/G (powers of 1024,
 * optionally followed by "iB" or "B"). 0 and *bytes, or -EINVAL / -ERANGE. */
int units_parse_size(const char *text, uint64_t *bytes);

/* An unsigned count in [min, max]: 0 or -EINVAL / -ERANGE. */
int units_parse_count(const char *text, uint64_t min, uint64_t max, uint64_t *out);

/* "1.2s", "340ms", "1m05s", "2h03m" for a person, into out[cap]; returns out. */
char *units_format_duration(int64_t ns, char *out, unsigned cap);

#endif
