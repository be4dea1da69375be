/* The one hash table of vtpin: an index over items the caller owns (an array of strings, of
 * stacks, of pins in progress). The caller keeps the items and their keys; the table keeps, in
 * each slot, an item's index and 32 bits of its hash (common/hash.h), and asks the caller's
 * equality callback only when those bits match. Open addressing, linear probing, deletion by
 * backward shift (no tombstones: a table that sees many removals never fills up with them).
 *
 * Two modes:
 *   growing  (TABLE_GROWING) the CLI and the collector: doubles when half full; table_add
 *            says -ENOMEM when it cannot.
 *   fixed    (TABLE_FIXED)   the agent: table_init allocates every slot for `capacity` items
 *            once; nothing allocates afterwards, and table_add says -ENOSPC ("full") past
 *            `capacity` items.
 *
 * Not thread-safe: one thread owns a table (the agent's writer thread, the collector's loop). */
#ifndef VTPIN_COMMON_TABLE_H
#define VTPIN_COMMON_TABLE_H

#include <stddef.h>
#include <stdint.h>

enum table_mode { TABLE_GROWING, TABLE_FIXED };

struct table_slot {
    uint32_t item; /* the item's index + 1; 0: empty */
    uint32_t hash; /* the low 32 bits of the item's hash: its home slot, and a first check */
};

struct table {
    struct table_slot *slots;
    uint32_t mask; /* slots - 1, a power of two */
    uint32_t count;
    uint32_t capacity; /* TABLE_FIXED: the most items it holds */
    enum table_mode mode;
};

/* The largest item index a table holds. */
#define TABLE_MAX_ITEM (UINT32_MAX - 2)

/* Room for `capacity` items (growing: a first size, 0 for a small default). 0 or -ENOMEM
 * (-EINVAL for a fixed table of 0 or more than 2^30 items). */
int table_init(struct table *t, size_t capacity, enum table_mode mode);
/* Frees the slots (the items are the caller's); table_fini of a zeroed table is safe. */
void table_fini(struct table *t);

/* Does item (an index given to table_add) equal key? ctx is the caller's (its item array). */
typedef int (*table_eq)(const void *ctx, uint32_t item, const void *key);

/* The item whose hash is `hash` and which eq says equals key; -1 when none. */
int64_t table_find(const struct table *t, uint64_t hash, table_eq eq, const void *ctx, const void *key);
/* Adds item under hash; the caller has checked that no equal item is there. 0, -ENOMEM
 * (growing: no memory to grow), -ENOSPC (fixed: full) or -EINVAL (item > TABLE_MAX_ITEM). */
int table_add(struct table *t, uint64_t hash, uint32_t item);
/* Removes item (added under hash); 0, or -ENOENT when it is not there. */
int table_remove(struct table *t, uint64_t hash, uint32_t item);
/* The item added under hash as `from` is now `to` (the caller moved it in its array, e.g. the
 * last item into a removed one's place). 0, or -ENOENT when `from` is not there. */
int table_move(struct table *t, uint64_t hash, uint32_t from, uint32_t to);

static inline size_t table_count(const struct table *t)
{
    return t->count;
}

/* Bytes of the table's own memory (its slots). */
static inline size_t table_bytes(const struct table *t)
{
    return t->slots ? ((size_t)t->mask + 1) * sizeof(struct table_slot) : 0;
}

#endif
