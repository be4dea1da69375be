#include "idmap.h"

#include <errno.h>
#include <stdlib.h>

#include "hash.h"

struct slot {
    uint64_t key;
    void *value; /* NULL: empty */
};

struct idmap {
    struct slot *slots;
    size_t mask; /* capacity - 1, a power of two */
    size_t count;
};

static size_t slot_of(uint64_t key, size_t mask)
{
    return (size_t)hash_u64(key) & mask;
}

struct idmap *idmap_new(void)
{
    struct idmap *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->mask = 15;
    m->slots = calloc(m->mask + 1, sizeof(*m->slots));
    if (!m->slots) {
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
        for (size_t i = 0; i <= m->mask; i++)
            if (m->slots[i].value)
                free_value(m->slots[i].value);
    free(m->slots);
    free(m);
}

void *idmap_get(const struct idmap *m, uint64_t key)
{
    for (size_t i = slot_of(key, m->mask);; i = (i + 1) & m->mask) {
        if (!m->slots[i].value)
            return NULL;
        if (m->slots[i].key == key)
            return m->slots[i].value;
    }
}

static int grow(struct idmap *m)
{
    size_t nmask = m->mask * 2 + 1;
    struct slot *n = calloc(nmask + 1, sizeof(*n));
    if (!n)
        return -ENOMEM;
    for (size_t i = 0; i <= m->mask; i++) {
        if (!m->slots[i].value)
            continue;
        size_t j = slot_of(m->slots[i].key, nmask);
        while (n[j].value)
            j = (j + 1) & nmask;
        n[j] = m->slots[i];
    }
    free(m->slots);
    m->slots = n;
    m->mask = nmask;
    return 0;
}

int idmap_put(struct idmap *m, uint64_t key, void *value, void **old)
{
    if (old)
        *old = NULL;
    if ((m->count + 1) * 4 > (m->mask + 1) * 3) { /* keep the load under 3/4 */
        int rc = grow(m);
        if (rc)
            return rc;
    }
    size_t i = slot_of(key, m->mask);
    while (m->slots[i].value && m->slots[i].key != key)
        i = (i + 1) & m->mask;
    if (m->slots[i].value) {
        if (old)
            *old = m->slots[i].value;
    } else {
        m->count++;
    }
    m->slots[i].key = key;
    m->slots[i].value = value;
    return 0;
}

size_t idmap_count(const struct idmap *m)
{
    return m->count;
}

int idmap_next(const struct idmap *m, size_t *pos, uint64_t *key, void **value)
{
    for (size_t i = *pos; i <= m->mask; i++) {
        if (m->slots[i].value) {
            *pos = i + 1;
            if (key)
                *key = m->slots[i].key;
            if (value)
                *value = m->slots[i].value;
            return 1;
        }
    }
    *pos = m->mask + 1;
    return 0;
}
