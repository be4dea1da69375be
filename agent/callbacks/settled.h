/* Pins the writer is done with ("Settled" in pin_machine.h).
 *
 * The writer marks a frames-only start (monitors_later) once it has decided
 * it (not a pin, or reported with or without its monitors); the pin's end, on
 * its carrier, asks whether its start was marked, and takes the stack itself
 * when it was not. A fixed table by pin id modulo its size, one atomic word a
 * slot: no locks, no allocation. A later id in the same slot hides an earlier
 * one: that only costs an end a stack it did not need. */
#ifndef VTPIN_SETTLED_H
#define VTPIN_SETTLED_H

#include <stdint.h>

#define SETTLED_SLOTS 256

void settled_mark(uint64_t pin_id); /* writer */
int settled_has(uint64_t pin_id);   /* any thread: 1 if marked and not hidden since */

#endif
