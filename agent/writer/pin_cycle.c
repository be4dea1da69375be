#include "pin_cycle.h"

/* The pin of virtual thread vid among pins[n], or n. */
static unsigned pin_of(const struct pin_edge *pins, unsigned n, int64_t vid)
{
    for (unsigned i = 0; vid && i < n; i++)
        if (pins[i].vthread_id == vid)
            return i;
    return n;
}

/* Where pin at waits: the pin of its owner's thread, or n. An owner that is the waiter itself is a
 * look that came late (the entry won between its two reads), not a wait. */
static unsigned next_of(const struct pin_edge *pins, unsigned n, unsigned at)
{
    return pins[at].owner_id == pins[at].vthread_id ? n : pin_of(pins, n, pins[at].owner_id);
}

unsigned pin_cycle_find(const struct pin_edge *pins, unsigned n, unsigned *ring, unsigned cap)
{
    for (unsigned start = 0; start < n; start++) {
        unsigned len = 0;
        for (unsigned at = start; at < n && len < cap;) {
            for (unsigned k = 0; k < len; k++)
                if (ring[k] == at) /* a cycle that does not pass through start: found from one of its own */
                    goto next;
            ring[len++] = at;
            at = next_of(pins, n, at);
            if (at == start)
                return len;
        }
    next:;
    }
    return 0;
}
