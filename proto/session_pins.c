#include "session_pins.h"

#include <errno.h>
#include <stdlib.h>

#include "common/hash.h"
#include "common/table.h"

/* Pins that ended, in a table that keeps them: 64 ids in a word, one bit each. The agent's ids
 * rise, so a session of millions of pins costs a few bytes per 64 of them; scattered ids (a file
 * may say any) cost one word each. */
struct ended {
    uint64_t key; /* id / 64, the kind at bit 58 (ids / 64 are under 2^58) */
    uint64_t bits;
};

struct session_pins {
    struct session_pin *pins; /* in progress: the first n, by (kind, id) in ix */
    size_t n, cap;
    size_t max_open; /* 0: no bound */
    int keep_ended;
    uint64_t lost;
    struct table ix;
    struct ended *ended; /* keep_ended: the first n_ended, by (kind, id) in ended_ix */
    size_t n_ended, ended_cap;
    struct table ended_ix;
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

static uint64_t ended_key(int kind, uint64_t id)
{
    return id / 64 | (uint64_t)kind << 58;
}

static int ended_eq(const void *ctx, uint32_t item, const void *key)
{
    return ((const struct session_pins *)ctx)->ended[item].key == *(const uint64_t *)key;
}

/* The word holding (kind, id), or -1. */
static int64_t ended_word(const struct session_pins *t, int kind, uint64_t id)
{
    uint64_t key = ended_key(kind, id);
    return table_find(&t->ended_ix, hash_u64(key), ended_eq, t, &key);
}

static int has_ended(const struct session_pins *t, int kind, uint64_t id)
{
    int64_t at = t->keep_ended ? ended_word(t, kind, id) : -1;
    return at >= 0 && (t->ended[at].bits >> (id % 64) & 1);
}

/* Grows *arr of *cap elements of size elem to hold need: doubling, at most limit (0: none). 0 or -ENOMEM. */
static int grow(void **arr, size_t *cap, size_t need, size_t elem, size_t limit)
{
    if (need <= *cap)
        return 0;
    if (need > TABLE_MAX_ITEM)
        return -ENOMEM;
    size_t n = *cap ? *cap * 2 : 16;
    if (limit && n > limit)
        n = limit;
    void *grown = realloc(*arr, n * elem);
    if (!grown)
        return -ENOMEM;
    *arr = grown;
    *cap = n;
    return 0;
}

/* Remembers that (kind, id) ended. 0 or -ENOMEM. */
static int note_ended(struct session_pins *t, int kind, uint64_t id)
{
    int64_t at = ended_word(t, kind, id);
    if (at < 0) {
        uint64_t key = ended_key(kind, id);
        int rc = grow((void **)&t->ended, &t->ended_cap, t->n_ended + 1, sizeof(*t->ended), 0);
        if (rc || (rc = table_add(&t->ended_ix, hash_u64(key), (uint32_t)t->n_ended)))
            return rc;
        t->ended[at = (int64_t)t->n_ended++] = (struct ended){.key = key};
    }
    t->ended[at].bits |= (uint64_t)1 << (id % 64);
    return 0;
}

int session_pins_new(struct session_pins **out, size_t max_open, int keep_ended)
{
    struct session_pins *t = calloc(1, sizeof(*t));
    if (!t || table_init(&t->ix, 0, TABLE_GROWING) != 0 || table_init(&t->ended_ix, 0, TABLE_GROWING) != 0) {
        if (t)
            table_fini(&t->ix);
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
    table_fini(&t->ended_ix);
    free(t->pins);
    free(t->ended);
    free(t);
}

struct session_pin session_pin_of_start(const Vtpin__V1__PinStart *ps)
{
    return (struct session_pin){.id = ps->pin_id,
                                .kind = SESSION_PIN,
                                .start_ns = ps->start_ns,
                                .has_carrier_tid = ps->has_carrier_tid,
                                .carrier_tid = ps->carrier_tid,
                                .reason = (int32_t)ps->reason};
}

struct session_pin session_pin_of_hog(const Vtpin__V1__HogStart *hs)
{
    return (struct session_pin){.id = hs->hog_id,
                                .kind = SESSION_HOG,
                                .start_ns = hs->start_ns,
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
            if (p->start_ns < o->start_ns || (p->start_ns == o->start_ns && p->id < o->id))
                oldest = i;
        }
        erase(t, oldest);
        t->lost++;
    }
    return grow((void **)&t->pins, &t->cap, t->n + 1, sizeof(*t->pins), t->max_open);
}

int session_pins_start(struct session_pins *t, const struct session_pin *p, struct session_pin **kept)
{
    if (kept)
        *kept = NULL;
    int64_t at = find(t, p->kind, p->id);
    if (at >= 0) {
        if (kept)
            *kept = &t->pins[at];
        return SESSION_PINS_AGAIN;
    }
    if (has_ended(t, p->kind, p->id))
        return SESSION_PINS_DONE;
    int rc = make_room(t);
    if (rc)
        return rc;
    if (table_add(&t->ix, key_hash(p->id, p->kind), (uint32_t)t->n) != 0)
        return -ENOMEM;
    t->pins[t->n] = *p;
    if (kept)
        *kept = &t->pins[t->n];
    t->n++;
    return SESSION_PINS_NEW;
}

int session_pins_end(struct session_pins *t, int kind, uint64_t id, struct session_pin *out)
{
    int64_t at = find(t, kind, id);
    if (at < 0)
        return has_ended(t, kind, id) ? SESSION_PINS_DONE : SESSION_PINS_UNKNOWN;
    *out = t->pins[at];
    erase(t, (size_t)at);
    /* out of memory to remember it: a second end would read as unknown, not as a duplicate */
    if (t->keep_ended)
        (void)note_ended(t, kind, id);
    return SESSION_PINS_ENDS;
}

const struct session_pin *session_pins_next(const struct session_pins *t, size_t *pos)
{
    return *pos < t->n ? &t->pins[(*pos)++] : NULL;
}

void session_pins_renumber(struct session_pins *t, int kind, const uint32_t *moved)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->pins[i].kind == kind && t->pins[i].index != UINT32_MAX)
            t->pins[i].index = moved[t->pins[i].index];
}

size_t session_pins_in_progress(const struct session_pins *t)
{
    return t->n;
}

uint64_t session_pins_lost(const struct session_pins *t)
{
    return t->lost;
}

size_t session_pins_bytes(const struct session_pins *t)
{
    return sizeof(*t) + t->cap * sizeof(*t->pins) + table_bytes(&t->ix) + t->ended_cap * sizeof(*t->ended) +
           table_bytes(&t->ended_ix);
}
