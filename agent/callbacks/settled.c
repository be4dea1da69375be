#include "settled.h"

#include <stdatomic.h>

/* Pin ids start at 1, so the zeroed table marks none. */
static _Atomic uint64_t settled[SETTLED_SLOTS];

/* Release and acquire: an end that sees the mark sees the writer's work before
 * it too (plain loads and stores on x86-64, so it costs nothing). */
void settled_mark(uint64_t pin_id)
{
    atomic_store_explicit(&settled[pin_id % SETTLED_SLOTS], pin_id, memory_order_release);
}

int settled_has(uint64_t pin_id)
{
    return atomic_load_explicit(&settled[pin_id % SETTLED_SLOTS], memory_order_acquire) == pin_id;
}
