/* The pins and carrier hogs in progress of one JVM, by id: the one table of
 * them. The collector keeps one per JVM, across its reconnects: its counts of
 * pins and hogs count the new starts, the metrics and the profile read a pin's
 * start back from it when its end comes, and a reconnect ends on the carriers
 * what it holds. The report pairs a recording's starts and ends with one per
 * session.
 *
 * A start says whether the pin is new, in progress already (the agent re-sends
 * the pins in progress after a reconnect: counted once) or, when the table
 * keeps ended pins, ended already (a duplicate). An end hands back the start.
 * Pins and hogs have ids of their own: (kind, id) is the key.
 *
 * Bounded when given max_open: past it, the pin in progress that began first
 * (by its start_ns: its end was lost on the way) is forgotten and counted in
 * lost. A table that keeps ended pins (the report's, unbounded) remembers the
 * id of every pin that ended, and only its id: a bit in a word of 64 ids (the
 * agent's ids rise: a million ended pins cost some 400 KB).
 * Pure: no I/O. */
#ifndef VTPIN_PROTO_SESSION_PINS_H
#define VTPIN_PROTO_SESSION_PINS_H

#include <stddef.h>
#include <stdint.h>

#include "wire.h"

enum session_pin_kind { SESSION_PIN = 0, SESSION_HOG = 1 };

/* What a PinStart or HogStart said, kept while it is in progress, and what its readers derived
 * from it in their own tables. */
struct session_pin {
    uint64_t id;
    int64_t start_ns;    /* the agent's clock: which began first */
    int32_t carrier_tid; /* when has_carrier_tid */
    int32_t reason;      /* a pin's Vtpin__V1__PinReason as sent; 0 for a hog */
    uint8_t kind;        /* enum session_pin_kind */
    uint8_t has_carrier_tid;
    /* the readers' own */
    uint8_t origin;                          /* enum pin_origin (common/frames_kind.h) */
    int16_t site;                            /* the metrics' site (collector/pinstats.h) */
    uint32_t profile_stack, profile_carrier; /* the profile's (collector/pinprofile.h) */
    uint32_t index;                          /* the report's: where the pin is in its session */
};

/* A start or an end, with the table. */
enum session_pins_seen {
    SESSION_PINS_NEW = 1,     /* a start never seen: kept */
    SESSION_PINS_AGAIN = 2,   /* a start of a pin in progress: a re-send */
    SESSION_PINS_ENDS = 3,    /* an end of a pin in progress */
    SESSION_PINS_DONE = 4,    /* a start or an end of a pin that ended (keep_ended) */
    SESSION_PINS_UNKNOWN = 5, /* an end of a pin never started, or forgotten */
};

struct session_pins;

/* max_open: pins and hogs in progress kept at most (0: no bound). keep_ended: ended ones
 * stay, as ids seen (for duplicates). 0, or -ENOMEM. */
int session_pins_new(struct session_pins **out, size_t max_open, int keep_ended);
void session_pins_free(struct session_pins *t);

/* The pin of a PinStart, and of a HogStart (the readers' fields 0). */
struct session_pin session_pin_of_start(const Vtpin__V1__PinStart *ps);
struct session_pin session_pin_of_hog(const Vtpin__V1__HogStart *hs);

/* A start (p's kind and id): SESSION_PINS_NEW (p kept), _AGAIN or _DONE (nothing changes);
 * *kept (may be NULL) is the pin in the table for NEW and AGAIN, NULL otherwise, valid until the
 * next start or end. -ENOMEM. */
int session_pins_start(struct session_pins *t, const struct session_pin *p, struct session_pin **kept);
/* An end of (kind, id): SESSION_PINS_ENDS (its start into *out, the pin out of the table; one
 * that keeps ended pins remembers its id), _DONE or _UNKNOWN. */
int session_pins_end(struct session_pins *t, int kind, uint64_t id, struct session_pin *out);

/* The pins and hogs in progress: start with *pos = 0; NULL at the end. */
const struct session_pin *session_pins_next(const struct session_pins *t, size_t *pos);
size_t session_pins_in_progress(const struct session_pins *t);
/* The readers' index of every pin of kind in progress becomes moved[index] (the report moved
 * its pins down after summing the ended ones: pin_groups.h); UINT32_MAX: the reader let the pin go
 * before its end (an index of UINT32_MAX stays so). */
void session_pins_renumber(struct session_pins *t, int kind, const uint32_t *moved);
/* Pins and hogs in progress forgotten because the table was full. */
uint64_t session_pins_lost(const struct session_pins *t);
/* Bytes it holds. */
size_t session_pins_bytes(const struct session_pins *t);

#endif
