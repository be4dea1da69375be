#include "common/budget.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

void budget_init(struct budget *b, size_t limit)
{
    memset(b, 0, sizeof(*b));
    b->limit = limit;
}

int budget_take(struct budget *b, size_t n)
{
    if (!b)
        return 0;
    if (!budget_fits(b, n)) {
        b->refused++;
        return -ENOMEM;
    }
    b->used += n;
    if (b->used > b->peak)
        b->peak = b->used;
    return 0;
}

void budget_charge(struct budget *b, size_t n)
{
    if (!b)
        return;
    b->used = b->used + n < b->used ? SIZE_MAX : b->used + n;
    if (b->used > b->peak)
        b->peak = b->used;
}

int budget_fits(const struct budget *b, size_t n)
{
    return !b || (b->used < b->limit && n <= b->limit - b->used);
}

int budget_full(const struct budget *b)
{
    return !budget_fits(b, 0);
}

void budget_give(struct budget *b, size_t n)
{
    if (!b)
        return;
    b->used = n > b->used ? 0 : b->used - n;
    b->gave_back |= n > 0;
}
