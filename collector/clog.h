/* The collector's log: one line per message on stderr,
 *   2025-01-31T12:00:00.123Z vtpin collector: warning: TEXT
 * Debug lines only with -v. Text that came from a peer goes through
 * clog_printable first, so a peer cannot forge lines or drive the terminal. */
#ifndef VTPIN_COLLECTOR_CLOG_H
#define VTPIN_COLLECTOR_CLOG_H

#include <stddef.h>
#include <stdio.h>

void clog_set_verbose(int verbose);
int clog_verbose(void);
/* Where lines go (default stderr). */
void clog_set_output(FILE *out);

void clog_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void clog_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void clog_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void clog_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* s made safe for one log line into out[cap]: control characters and
 * backslashes escaped (\n, \xNN), invalid UTF-8 as \xNN, cut at cap with "...".
 * NULL gives "-". Returns out. */
char *clog_printable(const char *s, char *out, size_t cap);

#endif
