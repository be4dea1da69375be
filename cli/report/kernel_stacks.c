#include "kernel_stacks.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/hash.h"
#include "common/table.h"

/* One kept stack, or one kept string (a stack of one frame, flagged). */
struct kept {
    char **frames;
    size_t n;
    int is_string;
};

struct kernel_stacks {
    struct kept *items;
    size_t n, cap;
    struct table index;            /* items by hash of (is_string, frames) */
    struct kernel_stacks *adopted; /* stores whose kept stacks this one owns now, a list */
};

struct key {
    char *const *frames;
    size_t n;
    int is_string;
};

static const char *frame_or_empty(const char *f)
{
    return f ? f : "";
}

static uint64_t key_hash(const struct key *k)
{
    uint64_t h = hash_u64((uint64_t)k->n * 2 + (uint64_t)k->is_string);
    for (size_t i = 0; i < k->n; i++)
        h = hash_combine(h, hash_string(frame_or_empty(k->frames[i])));
    return h;
}

static int same(const void *ctx, uint32_t item, const void *key)
{
    const struct kept *it = &((const struct kernel_stacks *)ctx)->items[item];
    const struct key *k = key;
    if (it->n != k->n || it->is_string != k->is_string)
        return 0;
    for (size_t i = 0; i < k->n; i++)
        if (strcmp(it->frames[i], frame_or_empty(k->frames[i])) != 0)
            return 0;
    return 1;
}

int kernel_stacks_new(struct kernel_stacks **out)
{
    struct kernel_stacks *ks = calloc(1, sizeof(*ks));
    if (!ks || table_init(&ks->index, 0, TABLE_GROWING)) {
        free(ks);
        return -ENOMEM;
    }
    *out = ks;
    return 0;
}

static void kept_free(struct kept *k)
{
    for (size_t i = 0; i < k->n; i++)
        free(k->frames[i]);
    free(k->frames);
}

/* The kept item equal to key, added when new; NULL when out of memory. */
static const struct kept *keep(struct kernel_stacks *ks, const struct key *key)
{
    uint64_t h = key_hash(key);
    int64_t found = table_find(&ks->index, h, same, ks, key);
    if (found >= 0)
        return &ks->items[found];
    if (ks->n >= TABLE_MAX_ITEM)
        return NULL;
    if (grow_array((void **)&ks->items, &ks->cap, ks->n + 1, sizeof(*ks->items)))
        return NULL;
    struct kept k = {.frames = calloc(key->n ? key->n : 1, sizeof(char *)), .is_string = key->is_string};
    if (!k.frames)
        return NULL;
    for (; k.n < key->n; k.n++) {
        if (!(k.frames[k.n] = strdup(frame_or_empty(key->frames[k.n])))) {
            kept_free(&k);
            return NULL;
        }
    }
    if (table_add(&ks->index, h, (uint32_t)ks->n)) {
        kept_free(&k);
        return NULL;
    }
    ks->items[ks->n] = k;
    return &ks->items[ks->n++];
}

const char *const *kernel_stacks_keep(struct kernel_stacks *ks, char *const *frames, size_t n)
{
    struct key key = {frames, n, 0};
    const struct kept *k = keep(ks, &key);
    return k ? (const char *const *)k->frames : NULL;
}

const char *kernel_stacks_keep_string(struct kernel_stacks *ks, const char *s)
{
    char *one[] = {(char *)(uintptr_t)s};
    struct key key = {one, 1, 1};
    const struct kept *k = keep(ks, &key);
    return k ? k->frames[0] : NULL;
}

void kernel_stacks_adopt(struct kernel_stacks *ks, struct kernel_stacks *src)
{
    struct kernel_stacks *last = src;
    while (last->adopted)
        last = last->adopted;
    last->adopted = ks->adopted;
    ks->adopted = src;
}

size_t kernel_stacks_count(const struct kernel_stacks *ks)
{
    return ks->n;
}

void kernel_stacks_free(struct kernel_stacks *ks)
{
    while (ks) {
        struct kernel_stacks *next = ks->adopted;
        for (size_t i = 0; i < ks->n; i++)
            kept_free(&ks->items[i]);
        free(ks->items);
        table_fini(&ks->index);
        free(ks);
        ks = next;
    }
}
