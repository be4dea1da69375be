#include "carry.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/budget.h"
#include "common/grow.h"
#include "common/hash.h"
#include "common/table.h"

/* The kinds kept, in the order a recording needs them. */
enum carry_kind { K_NOTICE, K_CARRIER, K_PIN, K_HOG, K_STATS, K_KINDS };

struct carry_item {
    uint64_t id;
    uint8_t kind;
    uint8_t *frame;
    size_t len;
};

struct carry {
    struct carry_item *items;
    size_t n, cap;
    struct table index; /* (kind, id) -> item */
    size_t bytes;
    size_t pins; /* pins and hogs kept */
    size_t notices;
    uint64_t missed;
    uint64_t refused; /* of those, by the budget */
    struct budget *budget;
};

/* What an item costs the budget: its frame, its place in the array and in the index. */
static size_t item_cost(size_t len)
{
    return len + sizeof(struct carry_item) + 2 * sizeof(struct table_slot);
}

static uint64_t key_hash(int kind, uint64_t id)
{
    return hash_combine(hash_u64((uint64_t)kind), id);
}

struct key {
    int kind;
    uint64_t id;
};

static int key_eq(const void *ctx, uint32_t item, const void *key)
{
    const struct carry *c = ctx;
    const struct key *k = key;
    return c->items[item].kind == k->kind && c->items[item].id == k->id;
}

struct carry *carry_new(struct budget *budget)
{
    struct carry *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    if (table_init(&c->index, 0, TABLE_GROWING) != 0) {
        free(c);
        return NULL;
    }
    c->budget = budget;
    return c;
}

void carry_free(struct carry *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        budget_give(c->budget, item_cost(c->items[i].len));
        free(c->items[i].frame);
    }
    table_fini(&c->index);
    free(c->items);
    free(c);
}

static int64_t find(const struct carry *c, int kind, uint64_t id)
{
    struct key k = {kind, id};
    return table_find(&c->index, key_hash(kind, id), key_eq, c, &k);
}

/* Keeps frame as (kind, id), in place of the one it replaces. */
static void keep(struct carry *c, int kind, uint64_t id, const uint8_t *frame, size_t len)
{
    int64_t at = find(c, kind, id);
    size_t before = at >= 0 ? item_cost(c->items[at].len) : 0;
    int counted = at < 0 && (kind == K_PIN || kind == K_HOG);
    if ((counted && c->pins >= CARRY_MAX_PINS) || (at < 0 && kind == K_NOTICE && c->notices >= CARRY_MAX_NOTICES)) {
        c->missed++;
        return;
    }
    if (budget_take(c->budget, item_cost(len)) != 0) {
        c->missed++;
        c->refused++;
        return;
    }
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy) {
        budget_give(c->budget, item_cost(len));
        c->missed++;
        return;
    }
    memcpy(copy, frame, len);
    if (at >= 0) { /* sent again: the last one wins */
        budget_give(c->budget, before);
        c->bytes -= c->items[at].len;
        free(c->items[at].frame);
        c->items[at].frame = copy;
        c->items[at].len = len;
        c->bytes += len;
        return;
    }
    if (c->n >= TABLE_MAX_ITEM || grow_array((void **)&c->items, &c->cap, c->n + 1, sizeof(*c->items)) != 0 ||
        table_add(&c->index, key_hash(kind, id), (uint32_t)c->n) != 0) {
        budget_give(c->budget, item_cost(len));
        free(copy);
        c->missed++;
        return;
    }
    c->items[c->n++] = (struct carry_item){.id = id, .kind = (uint8_t)kind, .frame = copy, .len = len};
    c->bytes += len;
    c->pins += counted;
    c->notices += kind == K_NOTICE;
}

/* (kind, id) ended: let it go (the last item takes its place). */
static void let_go(struct carry *c, int kind, uint64_t id)
{
    int64_t at = find(c, kind, id);
    if (at < 0)
        return;
    struct carry_item *it = &c->items[at];
    table_remove(&c->index, key_hash(kind, id), (uint32_t)at);
    budget_give(c->budget, item_cost(it->len));
    c->bytes -= it->len;
    c->pins--;
    free(it->frame);
    size_t last = --c->n;
    if ((size_t)at != last) {
        *it = c->items[last];
        table_move(&c->index, key_hash(it->kind, it->id), (uint32_t)last, (uint32_t)at);
    }
}

void carry_note(struct carry *c, const WireEvent *ev, const uint8_t *frame, size_t len)
{
    if (!c || !ev)
        return;
    switch (ev->body_case) {
    case VTPIN__V1__EVENT__BODY_NOTICE:
        keep(c, K_NOTICE, c->notices, frame, len);
        break;
    case VTPIN__V1__EVENT__BODY_CARRIER:
        keep(c, K_CARRIER, (uint32_t)ev->carrier->tid, frame, len);
        break;
    case VTPIN__V1__EVENT__BODY_PIN_START:
        keep(c, K_PIN, ev->pin_start->pin_id, frame, len);
        break;
    case VTPIN__V1__EVENT__BODY_PIN_END:
        let_go(c, K_PIN, ev->pin_end->pin_id);
        break;
    case VTPIN__V1__EVENT__BODY_HOG_START:
        keep(c, K_HOG, ev->hog_start->hog_id, frame, len);
        break;
    case VTPIN__V1__EVENT__BODY_HOG_END:
        let_go(c, K_HOG, ev->hog_end->hog_id);
        break;
    case VTPIN__V1__EVENT__BODY_STATS:
        keep(c, K_STATS, 0, frame, len);
        break;
    default:
        break;
    }
}

static int by_id(const void *a, const void *b)
{
    const struct carry_item *x = *(const struct carry_item *const *)a, *y = *(const struct carry_item *const *)b;
    return x->id < y->id ? -1 : x->id > y->id;
}

int carry_each(const struct carry *c, int notices, int (*fn)(void *arg, const uint8_t *frame, size_t len), void *arg)
{
    if (!c || c->n == 0)
        return 0;
    const struct carry_item **order = malloc(c->n * sizeof(*order));
    if (!order)
        return -ENOMEM;
    int rc = 0;
    for (int kind = notices ? 0 : K_NOTICE + 1; kind < K_KINDS && !rc; kind++) {
        size_t m = 0;
        for (size_t i = 0; i < c->n; i++)
            if (c->items[i].kind == kind)
                order[m++] = &c->items[i];
        qsort(order, m, sizeof(*order), by_id); /* notices as sent, pins and hogs as the agent numbered them */
        for (size_t i = 0; i < m && !rc; i++)
            rc = fn(arg, order[i]->frame, order[i]->len);
    }
    free(order);
    return rc;
}

uint64_t carry_missed(const struct carry *c)
{
    return c ? c->missed : 0;
}

uint64_t carry_refused(const struct carry *c)
{
    return c ? c->refused : 0;
}

size_t carry_count(const struct carry *c)
{
    return c ? c->n : 0;
}

size_t carry_bytes(const struct carry *c)
{
    return c ? c->bytes : 0;
}
