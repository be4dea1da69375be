#include "session_pins.h"

#include <errno.h>
#include <stdlib.h>

#include "common/hash.h"
#include "common/table.h"

struct session_pins {
    struct session_pin *pins; /* the first n, by (kind, id) in ix */
    size_t n, cap;
    size_t max_open; /* 0: no bound */
    int keep_ended;
    size_t in_progress;
    uint64_t lost;
    struct table ix;
};

struct key {
    uint64_t id;
    int kind;
};

static uint64_t key_hash(uint64_t id, int kind)
{
    return hash_combine(hash_u64(id), (uint64_t)kind);
}

static int key_eq(const void *ctx, uint32_t item, const void *key)
{
    const struct session_pin *p = &((const struct session_pins *)ctx)->pins[item];
    const struct key *k = key;
    return p->id == k->id && p->kind == k->kind;
}

static int64_t find(const struct session_pins *t, int kind, uint64_t id)
{
    struct key k = {id, kind};
    return table_find(&t->ix, key_hash(id, kind), key_eq, t, &k);
}

int session_pins_new(struct session_pins **out, size_t max_open, int keep_ended)
{
    struct session_pins *t = calloc(1, sizeof(*t));
    if (!t || table_init(&t->ix, 0, TABLE_GROWING) != 0) {
        free(t);
        return -ENOMEM;
    }
    t->keep_ended = keep_ended;
    t->max_open = keep_ended ? 0 : max_open; /* one that keeps every id has no bound */
    *out = t;
    return 0;
}

void session_pins_free(struct session_pins *t)
{
    if (!t)
        return;
    table_fini(&t->ix);
    free(t->pins);
    free(t);
}

struct session_pin session_pin_of_start(const Vtpin__V1__PinStart *ps, int64_t since)
{
    return (struct session_pin){.id = ps->pin_id,
                                .kind = SESSION_PIN,
                                .start_ns = ps->start_ns,
                                .vthread_id = ps->has_vthread_id ? ps->vthread_id : 0,
                                .since = since,
                                .has_carrier_tid = ps->has_carrier_tid,
                                .carrier_tid = ps->carrier_tid,
                                .reason = (int32_t)ps->reason};
}

struct session_pin session_pin_of_hog(const Vtpin__V1__HogStart *hs, int64_t since)
{
    return (struct session_pin){.id = hs->hog_id,
                                .kind = SESSION_HOG,
                                .start_ns = hs->start_ns,
                                .vthread_id = hs->has_vthread_id ? hs->vthread_id : 0,
                                .since = since,
                                .has_carrier_tid = hs->has_carrier_tid,
                                .carrier_tid = hs->carrier_tid};
}

/* Takes pin i out: the last one takes its place. */
static void erase(struct session_pins *t, size_t i)
{
    size_t last = t->n - 1;
    table_remove(&t->ix, key_hash(t->pins[i].id, t->pins[i].kind), (uint32_t)i);
    if (i != last) {
        table_move(&t->ix, key_hash(t->pins[last].id, t->pins[last].kind), (uint32_t)last, (uint32_t)i);
        t->pins[i] = t->pins[last];
    }
    t->n--;
}

/* Room for one more: forgets the pin in progress that began first when full. 0 or -ENOMEM. */
static int make_room(struct session_pins *t)
{
    if (t->max_open && t->n >= t->max_open) {
        size_t oldest = 0;
        for (size_t i = 1; i < t->n; i++) {
            const struct session_pin *p = &t->pins[i], *o = &t->pins[oldest];
            if (p->since < o->since || (p->since == o->since && p->id < o->id))
                oldest = i;
        }
        erase(t, oldest);
        t->in_progress--;
        t->lost++;
    }
    if (t->n < t->cap)
        return 0;
    if (t->n >= TABLE_MAX_ITEM)
        return -ENOMEM;
    size_t cap = t->cap ? t->cap * 2 : 16;
    if (t->max_open && cap > t->max_open)
        cap = t->max_open;
    struct session_pin *grown = realloc(t->pins, cap * sizeof(*grown));
    if (!grown)
        return -ENOMEM;
    t->pins = grown;
    t->cap = cap;
    return 0;
}

int session_pins_start(struct session_pins *t, const struct session_pin *p, struct session_pin **kept)
{
    if (kept)
        *kept = NULL;
    int64_t at = find(t, p->kind, p->id);
    if (at >= 0) {
        if (t->pins[at].ended)
            return SESSION_PINS_DONE;
        if (kept)
            *kept = &t->pins[at];
        return SESSION_PINS_AGAIN;
    }
    int rc = make_room(t);
    if (rc)
        return rc;
    if (table_add(&t->ix, key_hash(p->id, p->kind), (uint32_t)t->n) != 0)
        return -ENOMEM;
    t->pins[t->n] = *p;
    t->pins[t->n].ended = 0;
    if (kept)
        *kept = &t->pins[t->n];
    t->n++;
    t->in_progress++;
    return SESSION_PINS_NEW;
}

int session_pins_end(struct session_pins *t, int kind, uint64_t id, struct session_pin *out)
{
    int64_t at = find(t, kind, id);
    if (at < 0)
        return SESSION_PINS_UNKNOWN;
    if (t->pins[at].ended)
        return SESSION_PINS_DONE;
    *out = t->pins[at];
    t->in_progress--;
    if (t->keep_ended)
        t->pins[at].ended = 1;
    else
        erase(t, (size_t)at);
    return SESSION_PINS_ENDS;
}

const struct session_pin *session_pins_next(const struct session_pins *t, size_t *pos)
{
    while (*pos < t->n) {
        const struct session_pin *p = &t->pins[(*pos)++];
        if (!p->ended)
            return p;
    }
    return NULL;
}

size_t session_pins_in_progress(const struct session_pins *t)
{
    return t->in_progress;
}

uint64_t session_pins_lost(const struct session_pins *t)
{
    return t->lost;
}

size_t session_pins_bytes(const struct session_pins *t)
{
    return sizeof(*t) + t->cap * sizeof(*t->pins) + table_bytes(&t->ix);
}
