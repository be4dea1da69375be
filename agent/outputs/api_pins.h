/* The pins the Java API (dev.vtpin.Vtpin, java_api.c) reads. Off until a Java caller
 * first asks, so a JVM that never uses the API pays nothing. Then the writer puts each
 * pin it reports as one text record (api_record.h), the ended ones in a bounded ring
 * (the oldest go first, counted) and the ones in progress as a snapshot it replaces at
 * each sync. The writer puts; any Java thread reads, under a mutex held only for copies.
 * Pure: the unit tests drive it. */
#ifndef VTPIN_API_PINS_H
#define VTPIN_API_PINS_H

#include <stddef.h>
#include <stdint.h>

/* Ended pins kept for the API, at most so many and so many bytes of records (a deep stack is
 * several KB); the oldest are dropped first, counted. */
#define API_PINS_KEPT 4096
#define API_PINS_BYTES (8u << 20)

int api_pins_enable(void); /* 0, or -ENOMEM; any thread */
int api_pins_enabled(void);

/* Writer: an ended pin's record (taken over, freed here), kept in the ring. */
void api_pins_put_ended(int64_t start_ns, char *record);
/* Writer: the records of the pins in progress now, all in one string (taken over). */
void api_pins_set_in_progress(char *records);

/* The records of the ended pins that started at or after since_ns, then the pins in
 * progress, then "dropped N" when a pin that started at or after since_ns was dropped (N: the
 * evictions since evictions_before, the count at the caller's mark, at least 1);
 * a malloc'd string and its length in *len (NULL: out of memory). */
char *api_pins_since(int64_t since_ns, uint64_t evictions_before, size_t *len);
uint64_t api_pins_evictions(void); /* ended pins dropped so far */

void api_pins_reset(void); /* frees everything; the API turns off */

#endif
