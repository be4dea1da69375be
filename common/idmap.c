#include "idmap.h"

#include <errno.h>
#include <stdlib.h>

#include "hash.h"
#include "table.h"

struct item {
    uint64_t key;
    void *value;
};

/* The items in the order first put, indexed by common/table.h. */
struct idmap {
    struct table index;
    struct item *items;
    size_t count, cap;
};

struct idmap *idmap_new(void)
{
    struct idmap *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->cap = 8;
    m->items = calloc(m->cap, sizeof(*m->items));
    if (!m->items || table_init(&m->index, m->cap, TABLE_GROWING)) {
        free(m->items);
        free(m);
        return NULL;
    }
    return m;
}

void idmap_free(struct idmap *m, void (*free_value)(void *))
{
    if (!m)
        return;
    if (free_value)
        for (size_t i = 0; i < m->count; i++)
            free_value(m->items[i].value);
    table_fini(&m->index);
    free(m->items);
    free(m);
}

static int key_eq(const void *ctx, uint32_t item, const void *key)
{
    const struct idmap *m = ctx;
    return m->items[item].key == *(const uint64_t *)key;
}

static int64_t find(const struct idmap *m, uint64_t key)
{
    return table_find(&m->index, hash_u64(key), key_eq, m, &key);
}

void *idmap_get(const struct idmap *m, uint64_t key)
{
    int64_t i = find(m, key);
    return i >= 0 ? m->items[i].value : NULL;
}

int idmap_put(struct idmap *m, uint64_t key, void *value, void **old)
{
    if (old)
        *old = NULL;
    int64_t i = find(m, key);
    if (i >= 0) {
        if (old)
            *old = m->items[i].value;
        m->items[i].value = value;
        return 0;
    }
    if (m->count == m->cap) {
        size_t ncap = m->cap * 2;
        struct item *n = ncap > TABLE_MAX_ITEM ? NULL : realloc(m->items, ncap * sizeof(*n));
        if (!n)
            return -ENOMEM;
        m->items = n;
        m->cap = ncap;
    }
    int rc = table_add(&m->index, hash_u64(key), (uint32_t)m->count);
    if (rc)
        return rc;
    m->items[m->count++] = (struct item){key, value};
    return 0;
}

size_t idmap_count(const struct idmap *m)
{
    return m->count;
}

int idmap_next(const struct idmap *m, size_t *pos, uint64_t *key, void **value)
{
    if (*pos >= m->count) {
        *pos = m->count;
        return 0;
    }
    if (key)
        *key = m->items[*pos].key;
    if (value)
        *value = m->items[*pos].value;
    (*pos)++;
    return 1;
}
