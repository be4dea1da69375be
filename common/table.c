#include "table.h"

#include <errno.h>
#include <stdlib.h>

#define MIN_SLOTS 16u
#define MAX_SLOTS (1u << 31)

/* Slots for n items at a load of at most 1/2; 0 when too many. */
static uint32_t slots_for(size_t n)
{
    if (n > MAX_SLOTS / 2)
        return 0;
    uint32_t s = MIN_SLOTS;
    while (s < 2 * n)
        s <<= 1;
    return s;
}

int table_init(struct table *t, size_t capacity, enum table_mode mode)
{
    *t = (struct table){.mode = mode};
    if (mode == TABLE_FIXED && (capacity == 0 || capacity > (1u << 30)))
        return -EINVAL;
    uint32_t n = slots_for(capacity);
    if (!n)
        return -ENOMEM;
    t->slots = calloc(n, sizeof(*t->slots));
    if (!t->slots)
        return -ENOMEM;
    t->mask = n - 1;
    t->capacity = mode == TABLE_FIXED ? (uint32_t)capacity : 0;
    return 0;
}

void table_fini(struct table *t)
{
    free(t->slots);
    t->slots = NULL;
    t->count = 0;
}

int64_t table_find(const struct table *t, uint64_t hash, table_eq eq, const void *ctx, const void *key)
{
    if (!t->slots)
        return -1;
    uint32_t h = (uint32_t)hash;
    for (uint32_t i = h & t->mask;; i = (i + 1) & t->mask) {
        const struct table_slot *s = &t->slots[i];
        if (!s->item)
            return -1;
        if (s->hash == h && eq(ctx, s->item - 1, key))
            return (int64_t)s->item - 1;
    }
}

/* Puts item + 1 under h in the first empty slot of its probe run (there is one: load <= 1/2). */
static void place(struct table_slot *slots, uint32_t mask, uint32_t h, uint32_t item1)
{
    uint32_t i = h & mask;
    while (slots[i].item)
        i = (i + 1) & mask;
    slots[i] = (struct table_slot){.item = item1, .hash = h};
}

static int grow(struct table *t)
{
    if ((size_t)t->mask + 1 >= MAX_SLOTS)
        return -ENOMEM;
    uint32_t nmask = t->mask * 2 + 1;
    struct table_slot *n = calloc((size_t)nmask + 1, sizeof(*n));
    if (!n)
        return -ENOMEM;
    for (uint32_t i = 0; i <= t->mask; i++)
        if (t->slots[i].item)
            place(n, nmask, t->slots[i].hash, t->slots[i].item);
    free(t->slots);
    t->slots = n;
    t->mask = nmask;
    return 0;
}

int table_add(struct table *t, uint64_t hash, uint32_t item)
{
    if (item > TABLE_MAX_ITEM)
        return -EINVAL;
    if (t->mode == TABLE_FIXED) {
        if (!t->slots || t->count >= t->capacity)
            return -ENOSPC;
    } else if (!t->slots) {
        int rc = table_init(t, 0, TABLE_GROWING);
        if (rc)
            return rc;
    } else if (((size_t)t->count + 1) * 2 > (size_t)t->mask + 1) {
        int rc = grow(t);
        if (rc)
            return rc;
    }
    place(t->slots, t->mask, (uint32_t)hash, item + 1);
    t->count++;
    return 0;
}

/* The slot holding item, or -1. */
static int64_t slot_of(const struct table *t, uint32_t h, uint32_t item)
{
    if (!t->slots || item > TABLE_MAX_ITEM)
        return -1;
    for (uint32_t i = h & t->mask;; i = (i + 1) & t->mask) {
        if (!t->slots[i].item)
            return -1;
        if (t->slots[i].item == item + 1)
            return i;
    }
}

int table_remove(struct table *t, uint64_t hash, uint32_t item)
{
    int64_t at = slot_of(t, (uint32_t)hash, item);
    if (at < 0)
        return -ENOENT;
    uint32_t i = (uint32_t)at, mask = t->mask;
    t->slots[i].item = 0;
    t->count--;
    /* backward shift: each later slot of the run moves into the hole unless its home lies
     * cyclically in (hole, slot], where a lookup starting at home would not pass the hole */
    for (uint32_t j = (i + 1) & mask; t->slots[j].item; j = (j + 1) & mask) {
        uint32_t home = t->slots[j].hash & mask;
        int stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            t->slots[i] = t->slots[j];
            t->slots[j].item = 0;
            i = j;
        }
    }
    return 0;
}

int table_move(struct table *t, uint64_t hash, uint32_t from, uint32_t to)
{
    if (to > TABLE_MAX_ITEM)
        return -EINVAL;
    int64_t at = slot_of(t, (uint32_t)hash, from);
    if (at < 0)
        return -ENOENT;
    t->slots[at].item = to + 1;
    return 0;
}
