/* Unit tests for common/table.h, the one hash table (and common/idmap.c, built on it):
 * lookups through colliding hashes, growth, a fixed table that says "full" and never
 * allocates again, removal by backward shift (runs that wrap around the end of the slots),
 * and moving an item within the caller's array. */
#include <errno.h>
#include <stdlib.h>

#include "check.h"
#include "common/hash.h"
#include "common/idmap.h"
#include "common/table.h"

/* Items: keys in an array; hashes chosen by the test (to collide on purpose). */
struct items {
    uint64_t key[4096];
    uint64_t hash[4096];
    uint32_t n;
};

static int key_eq(const void *ctx, uint32_t item, const void *key)
{
    const struct items *it = ctx;
    return it->key[item] == *(const uint64_t *)key;
}

static int64_t find(const struct table *t, const struct items *it, uint64_t key, uint64_t hash)
{
    return table_find(t, hash, key_eq, it, &key);
}

static void test_growing(void)
{
    static struct items it;
    struct table t;
    CHECK_INT(table_init(&t, 0, TABLE_GROWING), 0);
    size_t first = table_bytes(&t);
    for (uint32_t i = 0; i < 4000; i++) {
        it.key[i] = 1000 + (uint64_t)i * 7;
        it.hash[i] = hash_u64(it.key[i]);
        CHECK_INT(table_add(&t, it.hash[i], i), 0);
    }
    CHECK_UINT(table_count(&t), 4000);
    CHECK(table_bytes(&t) > first);
    CHECK(table_bytes(&t) >= 2 * 4000 * sizeof(struct table_slot)); /* load at most 1/2 */
    unsigned found = 0;
    for (uint32_t i = 0; i < 4000; i++)
        found += find(&t, &it, it.key[i], it.hash[i]) == (int64_t)i;
    CHECK_UINT(found, 4000);
    CHECK_INT(find(&t, &it, 3, hash_u64(3)), -1);
    table_fini(&t);
    table_fini(&t); /* twice: safe */
}

static void test_zeroed(void)
{
    static struct items it = {.key = {5}};
    struct table t = {0}; /* a growing table that has not allocated yet */
    CHECK_INT(find(&t, &it, 5, 9), -1);
    CHECK_INT(table_remove(&t, 9, 0), -ENOENT);
    CHECK_INT(table_add(&t, 9, 0), 0);
    CHECK_INT(find(&t, &it, 5, 9), 0);
    table_fini(&t);
}

static void test_collisions(void)
{
    static struct items it;
    struct table t;
    CHECK_INT(table_init(&t, 4, TABLE_GROWING), 0);
    /* the same hash for all, and hashes equal in their low 32 bits only */
    for (uint32_t i = 0; i < 300; i++) {
        it.key[i] = i + 1;
        it.hash[i] = i % 2 ? 77 : 77 | ((uint64_t)i << 32);
        CHECK_INT(table_add(&t, it.hash[i], i), 0);
    }
    unsigned found = 0;
    for (uint32_t i = 0; i < 300; i++)
        found += find(&t, &it, it.key[i], it.hash[i]) == (int64_t)i;
    CHECK_UINT(found, 300);
    CHECK_INT(find(&t, &it, 999, 77), -1);
    /* the same key under a hash of other low bits is not found: the hash decides the slot */
    CHECK_INT(find(&t, &it, 1, 78), -1);
    table_fini(&t);
}

static void test_fixed_full(void)
{
    static struct items it;
    struct table t;
    CHECK_INT(table_init(&t, 0, TABLE_FIXED), -EINVAL);
    CHECK_INT(table_init(&t, 5, TABLE_FIXED), 0);
    const struct table_slot *slots = t.slots;
    size_t bytes = table_bytes(&t);
    for (uint32_t i = 0; i < 5; i++) {
        it.key[i] = i + 10;
        it.hash[i] = 3; /* all in one run */
        CHECK_INT(table_add(&t, it.hash[i], i), 0);
    }
    CHECK_INT(table_add(&t, 4, 5), -ENOSPC);
    CHECK_INT(table_add(&t, 3, 5), -ENOSPC);
    CHECK(t.slots == slots); /* never reallocated */
    CHECK_UINT(table_bytes(&t), bytes);
    CHECK_UINT(table_count(&t), 5);
    for (uint32_t i = 0; i < 5; i++)
        CHECK_INT(find(&t, &it, it.key[i], it.hash[i]), i);
    /* room again after a removal */
    CHECK_INT(table_remove(&t, 3, 2), 0);
    CHECK_INT(find(&t, &it, it.key[2], 3), -1);
    it.key[5] = 99;
    CHECK_INT(table_add(&t, 3, 5), 0);
    CHECK_INT(find(&t, &it, 99, 3), 5);
    CHECK_INT(table_add(&t, 3, 6), -ENOSPC);
    CHECK(t.slots == slots);
    table_fini(&t);
}

static uint64_t rng = 88172645463325252ULL;

static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Removes item i as the collector's users do: out of the table, then the last item moved
 * into its place in the array. */
static void swap_remove(struct table *t, struct items *it, uint32_t i)
{
    CHECK_INT(table_remove(t, it->hash[i], i), 0);
    uint32_t last = it->n - 1;
    if (i != last) {
        CHECK_INT(table_move(t, it->hash[last], last, i), 0);
        it->key[i] = it->key[last];
        it->hash[i] = it->hash[last];
    }
    it->n--;
}

/* Homes crowded around the end of 32 slots (28..31, then 0..7): runs wrap around to slot 0, and
 * hold entries whose home is before the hole and entries whose home is after it. */
static uint64_t crowded_hash(uint64_t key)
{
    return (key * 31 % 12 + 28) % 32;
}

/* Every present key found at its index, every removed one gone. */
static int consistent(const struct table *t, const struct items *it, const uint64_t *gone, size_t n_gone)
{
    if (table_count(t) != it->n)
        return 0;
    for (uint32_t i = 0; i < it->n; i++)
        if (find(t, it, it->key[i], it->hash[i]) != (int64_t)i)
            return 0;
    for (size_t g = 0; g < n_gone; g++)
        if (find(t, it, gone[g], crowded_hash(gone[g])) >= 0)
            return 0;
    return 1;
}

static void test_remove(void)
{
    static struct items it;
    static uint64_t gone[20000];
    size_t n_gone = 0;
    struct table t;
    /* fixed: 16 items in 32 slots */
    CHECK_INT(table_init(&t, 16, TABLE_FIXED), 0);
    CHECK_UINT(table_bytes(&t), 32 * sizeof(struct table_slot));
    uint64_t next_key = 1;
    unsigned bad = 0, adds = 0, removes = 0;
    for (int step = 0; step < 20000; step++) {
        if (it.n < 16 && (it.n == 0 || next_rand() % 3)) {
            uint32_t i = it.n++;
            it.key[i] = next_key++;
            it.hash[i] = crowded_hash(it.key[i]);
            bad += table_add(&t, it.hash[i], i) != 0;
            adds++;
        } else {
            uint32_t i = (uint32_t)(next_rand() % it.n);
            gone[n_gone++] = it.key[i];
            swap_remove(&t, &it, i);
            removes++;
        }
        if (!consistent(&t, &it, gone + (n_gone > 64 ? n_gone - 64 : 0), n_gone > 64 ? 64 : n_gone))
            bad++;
    }
    CHECK_UINT(bad, 0);
    CHECK(removes > 1000 && adds > 1000);
    CHECK_INT(table_remove(&t, 30, 4000), -ENOENT);
    CHECK_INT(table_move(&t, 30, 4000, 1), -ENOENT);
    table_fini(&t);
}

static void test_idmap(void)
{
    struct idmap *m = idmap_new();
    if (!CHECK(m != NULL))
        return;
    static int values[3000];
    for (int i = 0; i < 3000; i++)
        CHECK_INT(idmap_put(m, (uint64_t)i * 1000003, &values[i], NULL), 0);
    CHECK_UINT(idmap_count(m), 3000);
    CHECK(idmap_get(m, 1000003ULL * 17) == &values[17]);
    CHECK(idmap_get(m, 5) == NULL);
    void *old = NULL;
    int other;
    CHECK_INT(idmap_put(m, 1000003ULL * 17, &other, &old), 0);
    CHECK(old == &values[17]);
    CHECK(idmap_get(m, 1000003ULL * 17) == &other);
    CHECK_UINT(idmap_count(m), 3000);
    size_t pos = 0;
    uint64_t key;
    void *value;
    unsigned seen = 0;
    while (idmap_next(m, &pos, &key, &value))
        seen += key % 1000003 == 0 && (value == &values[key / 1000003] || value == &other);
    CHECK_UINT(seen, 3000);
    idmap_free(m, NULL);
}

int main(void)
{
    test_growing();
    test_zeroed();
    test_collisions();
    test_fixed_full();
    test_remove();
    test_idmap();
    CHECK_MAIN_RETURN();
}
