/* A cycle of pins (issue 34, the deadlock kind "cycle"): pinned virtual threads each waiting for
 * a monitor or a lock that the next one holds, back to the first. Each waits on its carrier for a
 * thread that waits on its own: none can go on, and the carriers stay pinned for good.
 *
 * Pure: the pins in progress, each with the owner of what it waits for (blocker.h, looked up as
 * it crossed the threshold), are the graph; an edge goes from a pin to the pin in progress of its
 * owner's virtual thread. */
#ifndef VTPIN_PIN_CYCLE_H
#define VTPIN_PIN_CYCLE_H

#include <stdint.h>

struct pin_edge {
    uint64_t pin_id;
    int64_t vthread_id;
    int64_t owner_id; /* the virtual thread owning what it waits for; 0: none known, or not virtual */
};

/* The first cycle among pins[n]: the indexes of its pins into ring[cap], in order (each waits for
 * the next's thread, the last for the first's); its length (at least 2), 0 when there is none (or
 * it is longer than cap). A pin whose owner is its own thread waits for nothing (a late look). The
 * edges are what the looks said when they were made: the caller looks again before saying one. */
unsigned pin_cycle_find(const struct pin_edge *pins, unsigned n, unsigned *ring, unsigned cap);

#endif
