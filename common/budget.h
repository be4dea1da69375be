/* A memory budget, the collector's global one: what peers make it keep (session
 * definition tables, proto/session_defs.h; input buffers grown past their first 16 KiB) is taken
 * from one budget shared by every connection. When it is used up, what would
 * go over is dropped and counted, never allocated: --max-clients agents at
 * the per-connection limits cannot add up to more than the budget.
 * Pure and single-threaded (the collector's loop). */
#ifndef VTPIN_COMMON_BUDGET_H
#define VTPIN_COMMON_BUDGET_H

#include <stddef.h>
#include <stdint.h>

#define BUDGET_DEFAULT (256u << 20)

struct budget {
    size_t limit;     /* bytes */
    size_t used;      /* bytes taken now */
    size_t peak;      /* the most ever taken at once */
    uint64_t refused; /* takes refused: each one a definition or frame dropped */
    int gave_back;    /* bytes were given back since the owner last handed memory back to the system */
};

void budget_init(struct budget *b, size_t limit);

/* Takes n bytes: 0, or -ENOMEM (counted in refused) when they would go over
 * the limit. A NULL budget always gives. */
int budget_take(struct budget *b, size_t n);

/* Charges n bytes already allocated (what one event grew a table by, which a
 * check of budget_full let through): used may pass the limit by that much. */
void budget_charge(struct budget *b, size_t n);

/* n more bytes fit. A NULL budget always has room. */
int budget_fits(const struct budget *b, size_t n);

/* Nothing left: what would grow is dropped. A NULL budget is never full. */
int budget_full(const struct budget *b);

/* Gives back n bytes taken before. */
void budget_give(struct budget *b, size_t n);

#endif
