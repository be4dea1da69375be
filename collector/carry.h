/* What a collector recording must say again when it rotates (recorder.h), besides its
 * definitions (the session keeps those: proto/session_defs.h): the frames of one agent
 * connection that later frames lean on, kept verbatim so that each rotated file is a whole
 * recording `vtpin report` reads alone. Kept: the notices (the first CARRY_MAX_NOTICES), the
 * carriers (the last word on each wins), the pins and hogs in progress (gone at their end), and
 * the latest counters.
 *
 * Every frame kept is charged to the collector's memory budget (common/budget.h); one the
 * budget refuses, or past CARRY_MAX_PINS pins or hogs in progress, is not kept and is
 * counted (carry_missed): the next file says so. A pin refused that way, or forgotten, then
 * never ends in the next file.
 * Pure: no I/O. */
#ifndef VTPIN_COLLECTOR_CARRY_H
#define VTPIN_COLLECTOR_CARRY_H

#include <stddef.h>
#include <stdint.h>

#include "wire.h"

#define CARRY_MAX_NOTICES 256
#define CARRY_MAX_PINS 4096 /* pins and hogs in progress together */

struct budget;
struct carry;

/* budget may be NULL. NULL when out of memory. */
struct carry *carry_new(struct budget *budget);
/* Gives what it charged back to the budget. NULL is fine. */
void carry_free(struct carry *c);

/* Notes frame (ev decoded): kept, replacing one it supersedes; an end lets its start go;
 * another kind of event changes nothing. ev NULL (an event of a newer schema) is not kept. */
void carry_note(struct carry *c, const WireEvent *ev, const uint8_t *frame, size_t len);

/* Each frame kept, in the order a recording needs them (notices unless !notices: a file that holds
 * them already; carriers, pins, hogs, counters), to fn; stops at fn's first non-zero return,
 * which it returns. */
int carry_each(const struct carry *c, int notices, int (*fn)(void *arg, const uint8_t *frame, size_t len), void *arg);

/* Frames not kept (refused by the budget or a limit) since the start. */
uint64_t carry_missed(const struct carry *c);
/* Of those, the ones the budget refused. */
uint64_t carry_refused(const struct carry *c);
/* Frames and bytes kept now. */
size_t carry_count(const struct carry *c);
size_t carry_bytes(const struct carry *c);

#endif
