#include "pin_groups.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/hash.h"
#include "common/table.h"
#include "session_defs.h"

static int same_str(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static uint64_t hash_str(uint64_t h, const char *s)
{
    return hash_combine(h, s ? hash_string(s) : 0);
}

/* What the summaries tell apart (the site: reason, stack and culprit; pprof: carrier and native
 * frame), and the ids whose resolution counts per pin (the JDK's words, the blocking frame), as
 * read. Not the rest of the example: its thread, where it slept. */
static uint64_t key_hash(const struct recording_pin *p)
{
    uint64_t h = hash_u64((uint64_t)(uint32_t)p->reason << 32 | p->stack_id);
    h = hash_combine(h, (uint64_t)p->has_culprit_raw << 32 | p->culprit_raw);
    h = hash_combine(h, (uint64_t)p->has_blocking_raw << 32 | p->blocking_raw);
    h = hash_combine(h, (uint64_t)p->carrier_sid << 32 | (uint32_t)p->carrier_tid);
    h = hash_combine(h, (uint64_t)p->has_carrier_tid << 32 | p->jdk_reason_sid);
    const struct recording_downcall *d = recording_pin_downcall(p);
    if (d)
        h = hash_str(hash_str(hash_combine(h, (uint64_t)d->api), d->symbol), d->library);
    return h;
}

static int same_key(const struct recording_pin *a, const struct recording_pin *b)
{
    if (a->reason != b->reason || a->stack_id != b->stack_id || a->has_culprit_raw != b->has_culprit_raw ||
        a->culprit_raw != b->culprit_raw || a->has_blocking_raw != b->has_blocking_raw ||
        a->blocking_raw != b->blocking_raw || a->carrier_sid != b->carrier_sid ||
        a->has_carrier_tid != b->has_carrier_tid || a->carrier_tid != b->carrier_tid ||
        a->jdk_reason_sid != b->jdk_reason_sid)
        return 0;
    const struct recording_downcall *x = recording_pin_downcall(a), *y = recording_pin_downcall(b);
    if (!x || !y)
        return x == y;
    return x->api == y->api && same_str(x->symbol, y->symbol) && same_str(x->library, y->library);
}

static int group_eq(const void *ctx, uint32_t item, const void *key)
{
    return same_key(&((const struct recording_session *)ctx)->pin_groups[item].pin, key);
}

/* A pin summed up, released. Its virtual thread's name is not the group's: named but never defined,
 * it counts as the resolution would have counted it (a name defined after the pin, which no agent
 * writes, too). */
static void let_go(struct recording_session *s, struct recording_pin *p)
{
    if (p->vthread_sid && !session_defs_string(s->defs, p->vthread_sid))
        s->unknown_refs++;
    recording_pin_release(p);
}

/* p, ended, into its group: 0 (p's own is given back or kept by the group) or -ENOMEM (p untouched). */
static int sum_up(struct recording_session *s, struct recording_pin *p)
{
    uint64_t h = key_hash(p);
    int64_t at = table_find(&s->pin_group_index, h, group_eq, s, p);
    if (at < 0) {
        if (grow_array((void **)&s->pin_groups, &s->pin_groups_cap, s->n_pin_groups + 1, sizeof(*s->pin_groups)))
            return -ENOMEM;
        if (table_add(&s->pin_group_index, h, (uint32_t)s->n_pin_groups))
            return -ENOMEM;
        s->pin_groups[s->n_pin_groups++] = (struct recording_pin_group){
            .pin = *p, .count = 1, .total_ns = p->duration_ns, .max_ns = p->duration_ns}; /* p's own moves */
        return 0;
    }
    struct recording_pin_group *gr = &s->pin_groups[at];
    gr->count++;
    gr->total_ns = recording_sat_add(gr->total_ns, p->duration_ns);
    if (p->duration_ns > gr->max_ns)
        gr->max_ns = p->duration_ns;
    if (p->seq < gr->pin.seq) { /* began before the group's example, ended since: the example now */
        struct recording_pin was = gr->pin;
        gr->pin = *p;
        let_go(s, &was);
    } else {
        let_go(s, p);
    }
    return 0;
}

int pin_groups_fold(struct recording_session *s, uint32_t *moved, void *unused)
{
    (void)unused;
    int rc = s->pin_group_index.slots ? 0 : table_init(&s->pin_group_index, 0, TABLE_GROWING);
    size_t kept = 0;
    for (size_t i = 0; i < s->n_pins; i++) {
        struct recording_pin *p = &s->pins[i];
        if (!rc && pin_groups_takes(p) && !(rc = sum_up(s, p))) {
            moved[i] = RECORDING_PIN_GONE;
            s->pins_folded++;
            continue;
        }
        moved[i] = (uint32_t)kept;
        if (kept != i)
            s->pins[kept] = *p;
        kept++;
    }
    s->n_pins = kept;
    return rc;
}

/* ---- the summaries' view ---- */

static int cmp_seq(const void *a, const void *b)
{
    uint64_t x = (*(const struct recording_pin_group *const *)a)->pin.seq;
    uint64_t y = (*(const struct recording_pin_group *const *)b)->pin.seq;
    return (x > y) - (x < y);
}

int pin_sums_begin(struct pin_sums *c, const struct recording_session *s)
{
    *c = (struct pin_sums){.s = s};
    if (!s->n_pin_groups)
        return 0;
    if (!(c->groups = malloc(s->n_pin_groups * sizeof(*c->groups))))
        return -ENOMEM;
    for (size_t i = 0; i < s->n_pin_groups; i++)
        c->groups[i] = &s->pin_groups[i];
    qsort(c->groups, s->n_pin_groups, sizeof(*c->groups), cmp_seq);
    return 0;
}

int pin_sums_next(struct pin_sums *c, struct recording_pin_sum *out)
{
    const struct recording_session *s = c->s;
    if (c->group < s->n_pin_groups && (c->pin == s->n_pins || c->groups[c->group]->pin.seq < s->pins[c->pin].seq)) {
        const struct recording_pin_group *g = c->groups[c->group++];
        *out =
            (struct recording_pin_sum){.pin = &g->pin, .count = g->count, .total_ns = g->total_ns, .max_ns = g->max_ns};
        return 1;
    }
    if (c->pin == s->n_pins)
        return 0;
    *out = pin_sum_of(s, &s->pins[c->pin++]);
    return 1;
}

struct recording_pin_sum pin_sum_of(const struct recording_session *s, const struct recording_pin *p)
{
    uintptr_t at = (uintptr_t)p, groups = (uintptr_t)s->pin_groups;
    if (s->n_pin_groups && at >= groups && at < groups + s->n_pin_groups * sizeof(*s->pin_groups)) {
        const struct recording_pin_group *g = &s->pin_groups[(at - groups) / sizeof(*s->pin_groups)];
        return (struct recording_pin_sum){.pin = p, .count = g->count, .total_ns = g->total_ns, .max_ns = g->max_ns};
    }
    int64_t d = recording_pin_duration(s, p);
    return (struct recording_pin_sum){.pin = p, .count = 1, .ongoing = !p->ended, .total_ns = d, .max_ns = d};
}

void pin_sums_end(struct pin_sums *c)
{
    free(c->groups);
    c->groups = NULL;
}
