#include "views.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

#include "pin_groups.h"
#include "wire.h"

/* ---- stack tree ---- */

char *views_frame_label(const struct recording_frame *f, char *out, size_t cap)
{
    snprintf(out, cap, "%s.%s", f->method->class_name, f->method->name);
    return out;
}

static int label_eq(const void *ctx, uint32_t item, const void *key)
{
    const struct flame *f = ctx;
    return strcmp(f->labels[item], key) == 0;
}

/* The label's index, added when new; -ENOMEM. */
static int64_t intern(struct flame *f, const char *text)
{
    uint64_t key = hash_string(text);
    int64_t at = table_find(&f->label_index, key, label_eq, f, text);
    if (at >= 0)
        return at;
    if (f->n_labels == f->labels_cap) {
        size_t ncap = f->labels_cap ? f->labels_cap * 2 : 256;
        char **n = realloc(f->labels, ncap * sizeof(*n));
        if (!n)
            return -ENOMEM;
        f->labels = n;
        f->labels_cap = ncap;
    }
    char *copy = strdup(text);
    if (!copy || f->n_labels > TABLE_MAX_ITEM || table_add(&f->label_index, key, (uint32_t)f->n_labels)) {
        free(copy);
        return -ENOMEM;
    }
    f->labels[f->n_labels] = copy;
    return (int64_t)f->n_labels++;
}

struct child {
    uint32_t parent, label;
};

static int child_eq(const void *ctx, uint32_t item, const void *key)
{
    const struct flame_node *n = &((const struct flame *)ctx)->nodes[item];
    const struct child *c = key;
    return n->parent == c->parent && n->label == c->label;
}

/* The child of parent with this label, added when new; -ENOMEM. */
static int64_t child_of(struct flame *f, uint32_t parent, uint32_t label)
{
    uint64_t key = hash_combine(parent, label);
    struct child c = {parent, label};
    int64_t at = table_find(&f->child_index, key, child_eq, f, &c);
    if (at >= 0)
        return at;
    if (f->n_nodes >= UINT32_MAX - 1)
        return -ENOMEM;
    if (f->n_nodes == f->nodes_cap) {
        size_t ncap = f->nodes_cap ? f->nodes_cap * 2 : 1024;
        struct flame_node *n = realloc(f->nodes, ncap * sizeof(*n));
        if (!n)
            return -ENOMEM;
        f->nodes = n;
        f->nodes_cap = ncap;
    }
    uint32_t idx = (uint32_t)f->n_nodes;
    if (table_add(&f->child_index, key, idx))
        return -ENOMEM;
    struct flame_node *p = &f->nodes[parent];
    f->nodes[idx] = (struct flame_node){.label = label,
                                        .parent = parent,
                                        .first_child = VIEWS_NO_NODE,
                                        .next_sibling = VIEWS_NO_NODE,
                                        .depth = p->depth + 1};
    /* append, so children keep the order first seen */
    if (p->first_child == VIEWS_NO_NODE) {
        p->first_child = idx;
    } else {
        uint32_t c = p->first_child;
        while (f->nodes[c].next_sibling != VIEWS_NO_NODE)
            c = f->nodes[c].next_sibling;
        f->nodes[c].next_sibling = idx;
    }
    f->n_nodes++;
    return idx;
}

static int64_t sat_add(int64_t a, int64_t b)
{
    return recording_sat_add(a, b);
}

/* Adds weight along one path: root, then the labels given. */
static int add_path(struct flame *f, const uint32_t *labels, size_t n, int64_t weight)
{
    uint32_t cur = 0;
    f->nodes[0].total_ns = sat_add(f->nodes[0].total_ns, weight);
    for (size_t i = 0; i < n; i++) {
        int64_t c = child_of(f, cur, labels[i]);
        if (c < 0)
            return (int)c;
        cur = (uint32_t)c;
        f->nodes[cur].total_ns = sat_add(f->nodes[cur].total_ns, weight);
    }
    f->nodes[cur].self_ns = sat_add(f->nodes[cur].self_ns, weight);
    return 0;
}

struct stack_weight {
    const struct recording_stack *stack;
    int reason; /* for pins without a stack */
    int64_t ns;
    size_t first; /* first pin, to keep the order first seen */
};

static int cmp_stack_weight(const void *pa, const void *pb)
{
    const struct stack_weight *a = pa, *b = pb;
    uintptr_t sa = (uintptr_t)a->stack, sb = (uintptr_t)b->stack;
    if (sa != sb)
        return sa < sb ? -1 : 1;
    if (!a->stack && a->reason != b->reason)
        return a->reason < b->reason ? -1 : 1;
    return (a->first > b->first) - (a->first < b->first);
}

static int cmp_first(const void *pa, const void *pb)
{
    const struct stack_weight *a = pa, *b = pb;
    return (a->first > b->first) - (a->first < b->first);
}

void flame_fini(struct flame *f)
{
    for (size_t i = 0; i < f->n_labels; i++)
        free(f->labels[i]);
    free(f->labels);
    free(f->nodes);
    table_fini(&f->label_index);
    table_fini(&f->child_index);
    memset(f, 0, sizeof(*f));
}

int flame_build(const struct recording_session *s, struct flame *out)
{
    struct stack_weight *w = NULL;
    uint32_t *path = NULL;
    size_t n = 0;
    int rc = -ENOMEM;
    char label[1024];

    memset(out, 0, sizeof(*out));
    out->nodes = calloc(1024, sizeof(*out->nodes));
    if (table_init(&out->label_index, 512, TABLE_GROWING) || table_init(&out->child_index, 512, TABLE_GROWING) ||
        !out->nodes)
        goto fail;
    out->nodes_cap = 1024;
    out->n_nodes = 1;
    int64_t root = intern(out, "all");
    if (root < 0)
        goto fail;
    out->nodes[0] = (struct flame_node){
        .label = (uint32_t)root, .parent = VIEWS_NO_NODE, .first_child = VIEWS_NO_NODE, .next_sibling = VIEWS_NO_NODE};
    if (s->n_pins == 0 && s->n_pin_groups == 0)
        return 0;

    /* one entry per distinct stack first: pins share stacks */
    size_t n_sums = pin_sums_count(s);
    struct pin_sums cursor;
    if ((rc = pin_sums_begin(&cursor, s)))
        goto fail;
    w = calloc(n_sums, sizeof(*w));
    path = calloc(RECORDING_MAX_FRAMES + 1, sizeof(*path));
    if (!w || !path) {
        pin_sums_end(&cursor);
        goto fail;
    }
    struct recording_pin_sum sum;
    for (size_t i = 0; pin_sums_next(&cursor, &sum); i++)
        w[i] =
            (struct stack_weight){.stack = sum.pin->stack, .reason = sum.pin->reason, .ns = sum.total_ns, .first = i};
    pin_sums_end(&cursor);
    qsort(w, n_sums, sizeof(*w), cmp_stack_weight);
    for (size_t i = 0; i < n_sums; i++) {
        if (n && w[n - 1].stack == w[i].stack && (w[i].stack || w[n - 1].reason == w[i].reason)) {
            w[n - 1].ns = sat_add(w[n - 1].ns, w[i].ns);
            continue;
        }
        w[n++] = w[i];
    }
    qsort(w, n, sizeof(*w), cmp_first);

    for (size_t i = 0; i < n; i++) {
        const struct recording_stack *st = w[i].stack;
        size_t depth = 0;
        int64_t id;
        if (!st || st->count == 0) {
            snprintf(label, sizeof(label), "[no stack: %s]", wire_reason_name(w[i].reason));
            if ((id = intern(out, label)) < 0)
                goto fail;
            path[depth++] = (uint32_t)id;
        } else {
            if (st->truncated) {
                if ((id = intern(out, "[truncated]")) < 0)
                    goto fail;
                path[depth++] = (uint32_t)id;
            }
            for (uint32_t k = st->count; k-- > 0;) { /* bottom frame first */
                if ((id = intern(out, views_frame_label(&st->frames[k], label, sizeof(label)))) < 0)
                    goto fail;
                path[depth++] = (uint32_t)id;
            }
        }
        if ((rc = add_path(out, path, depth, w[i].ns)))
            goto fail;
    }
    free(w);
    free(path);
    return 0;
fail:
    free(w);
    free(path);
    flame_fini(out);
    return rc ? rc : -ENOMEM;
}

/* ---- per-carrier timeline ---- */

static const struct recording_session *sort_session; /* qsort has no context argument in C11 */

static int cmp_pin_start(const void *pa, const void *pb)
{
    const struct recording_pin *a = &sort_session->pins[*(const size_t *)pa];
    const struct recording_pin *b = &sort_session->pins[*(const size_t *)pb];
    if (a->start_ns != b->start_ns)
        return a->start_ns < b->start_ns ? -1 : 1;
    return (*(const size_t *)pa > *(const size_t *)pb) - (*(const size_t *)pa < *(const size_t *)pb);
}

static int cmp_hog_start(const void *pa, const void *pb)
{
    const struct recording_hog *a = &sort_session->hogs[*(const size_t *)pa];
    const struct recording_hog *b = &sort_session->hogs[*(const size_t *)pb];
    if (a->start_ns != b->start_ns)
        return a->start_ns < b->start_ns ? -1 : 1;
    return (*(const size_t *)pa > *(const size_t *)pb) - (*(const size_t *)pa < *(const size_t *)pb);
}

static int cmp_occ(const void *pa, const void *pb)
{
    const struct recording_occupancy *a = &sort_session->occupancy[*(const size_t *)pa];
    const struct recording_occupancy *b = &sort_session->occupancy[*(const size_t *)pb];
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    if (a->time_ns != b->time_ns)
        return a->time_ns < b->time_ns ? -1 : 1;
    return (*(const size_t *)pa > *(const size_t *)pb) - (*(const size_t *)pa < *(const size_t *)pb);
}

static struct lane *lane_for(struct timeline *t, int has_tid, int32_t tid)
{
    for (size_t i = 0; i < t->n_lanes; i++)
        if (t->lanes[i].has_tid == has_tid && (!has_tid || t->lanes[i].tid == tid))
            return &t->lanes[i];
    return NULL;
}

/* The lane of a carrier a pin or hog names, added when new: 0 and *out
 * (NULL when there are already more lanes than any JVM has carriers: the
 * input is hostile, the event is left off the timeline), or -ENOMEM. The
 * last lane found is tried first: events on one carrier keep it cheap. */
static int lane_named(struct timeline *t, size_t *cap, struct lane **last, int has_tid, int32_t tid, const char *name,
                      struct lane **out)
{
    struct lane *l =
        *last && (*last)->has_tid == has_tid && (!has_tid || (*last)->tid == tid) ? *last : lane_for(t, has_tid, tid);
    if (!l) {
        *out = NULL;
        if (t->n_lanes == *cap) {
            if (*cap >= RECORDING_MAX_CARRIERS * 2)
                return 0;
            struct lane *n = realloc(t->lanes, *cap * 2 * sizeof(*n));
            if (!n)
                return -ENOMEM;
            t->lanes = n;
            *cap *= 2;
        }
        l = &t->lanes[t->n_lanes++];
        *l = (struct lane){.has_tid = has_tid, .tid = tid};
    }
    if (!l->name && name)
        l->name = name;
    *last = l;
    *out = l;
    return 0;
}

size_t timeline_lane_of(const struct timeline *t, int has_tid, int32_t tid, size_t *last)
{
    const struct lane *l = *last < t->n_lanes ? &t->lanes[*last] : NULL;
    if (l && l->has_tid == has_tid && (!has_tid || l->tid == tid))
        return *last;
    l = lane_for((struct timeline *)t, has_tid, tid);
    if (l)
        *last = (size_t)(l - t->lanes);
    return l ? *last : t->n_lanes;
}

void timeline_fini(struct timeline *t)
{
    for (size_t i = 0; i < t->n_lanes; i++) {
        free(t->lanes[i].pins);
        free(t->lanes[i].hogs);
        free(t->lanes[i].occ);
    }
    free(t->lanes);
    memset(t, 0, sizeof(*t));
}

int timeline_build(const struct recording_session *s, struct timeline *out)
{
    size_t *order = NULL;
    size_t cap = s->n_carriers + 1;
    struct lane *l, *last = NULL;
    memset(out, 0, sizeof(*out));
    if (s->has_time) {
        out->first_ns = s->first_ns;
        out->last_ns = s->last_ns;
    }
    out->lanes = calloc(cap, sizeof(*out->lanes));
    if (!out->lanes)
        return -ENOMEM;
    for (size_t i = 0; i < s->n_carriers; i++)
        out->lanes[out->n_lanes++] =
            (struct lane){.has_tid = 1, .tid = s->carriers[i].tid, .name = s->carriers[i].name};

    /* lanes for carriers only pins or hogs name, in the order first named (pins summed up too) */
    struct pin_sums cursor;
    struct recording_pin_sum sum;
    if (pin_sums_begin(&cursor, s))
        goto fail;
    while (pin_sums_next(&cursor, &sum)) {
        const struct recording_pin *p = sum.pin;
        if (lane_named(out, &cap, &last, p->has_carrier_tid, p->carrier_tid, p->carrier_name, &l)) {
            pin_sums_end(&cursor);
            goto fail;
        }
    }
    pin_sums_end(&cursor);
    last = NULL;
    for (size_t i = 0; i < s->n_pins; i++) { /* the pins kept, each in its lane below */
        const struct recording_pin *p = &s->pins[i];
        l = last && last->has_tid == p->has_carrier_tid && (!p->has_carrier_tid || last->tid == p->carrier_tid)
                ? last
                : lane_for(out, p->has_carrier_tid, p->carrier_tid);
        if (l)
            l->n_pins++;
        last = l;
    }
    for (size_t i = 0; i < s->n_hogs; i++) {
        const struct recording_hog *h = &s->hogs[i];
        if (lane_named(out, &cap, &last, h->has_carrier_tid, h->carrier_tid, h->carrier_name, &l))
            goto fail;
        if (l)
            l->n_hogs++;
    }
    /* the lane without a tid goes last */
    for (size_t i = 0; i + 1 < out->n_lanes; i++)
        if (!out->lanes[i].has_tid) {
            struct lane tmp = out->lanes[i];
            memmove(&out->lanes[i], &out->lanes[i + 1], (out->n_lanes - i - 1) * sizeof(tmp));
            out->lanes[out->n_lanes - 1] = tmp;
            break;
        }

    size_t most = s->n_pins > s->n_occupancy ? s->n_pins : s->n_occupancy;
    order = malloc((most > s->n_hogs ? most : s->n_hogs) * sizeof(*order) + 1);
    if (!order)
        goto fail;
    sort_session = s;
    for (size_t i = 0; i < out->n_lanes; i++) {
        l = &out->lanes[i];
        if ((l->n_pins && !(l->pins = malloc(l->n_pins * sizeof(*l->pins)))) ||
            (l->n_hogs && !(l->hogs = malloc(l->n_hogs * sizeof(*l->hogs)))))
            goto fail;
        l->n_pins = l->n_hogs = 0;
    }
    for (size_t i = 0; i < s->n_pins; i++)
        order[i] = i;
    qsort(order, s->n_pins, sizeof(*order), cmp_pin_start);
    last = NULL;
    for (size_t i = 0; i < s->n_pins; i++) {
        const struct recording_pin *p = &s->pins[order[i]];
        l = last && last->has_tid == p->has_carrier_tid && (!p->has_carrier_tid || last->tid == p->carrier_tid)
                ? last
                : lane_for(out, p->has_carrier_tid, p->carrier_tid);
        if (l && l->pins)
            l->pins[l->n_pins++] = order[i];
        last = l;
    }
    for (size_t i = 0; i < s->n_hogs; i++)
        order[i] = i;
    qsort(order, s->n_hogs, sizeof(*order), cmp_hog_start);
    for (size_t i = 0; i < s->n_hogs; i++) {
        const struct recording_hog *h = &s->hogs[order[i]];
        l = lane_for(out, h->has_carrier_tid, h->carrier_tid);
        if (l && l->hogs)
            l->hogs[l->n_hogs++] = order[i];
    }

    /* occupancy: the points of each carrier in time order */
    for (size_t i = 0; i < s->n_occupancy; i++)
        order[i] = i;
    qsort(order, s->n_occupancy, sizeof(*order), cmp_occ);
    for (size_t i = 0; i < s->n_occupancy;) {
        size_t j = i;
        while (j < s->n_occupancy && s->occupancy[order[j]].tid == s->occupancy[order[i]].tid)
            j++;
        l = lane_for(out, 1, s->occupancy[order[i]].tid);
        if (!l && out->n_lanes < cap) { /* a carrier sampled but never announced */
            l = &out->lanes[out->n_lanes++];
            *l = (struct lane){.has_tid = 1, .tid = s->occupancy[order[i]].tid};
        }
        if (l && !l->occ) {
            if (!(l->occ = malloc((j - i) * sizeof(*l->occ))))
                goto fail;
            memcpy(l->occ, &order[i], (j - i) * sizeof(*l->occ));
            l->n_occ = j - i;
        }
        i = j;
    }
    sort_session = NULL;
    free(order);
    return 0;
fail:
    sort_session = NULL;
    free(order);
    timeline_fini(out);
    return -ENOMEM;
}

int64_t timeline_occupancy_end(const struct recording_session *s, const struct timeline *t, const struct lane *l,
                               size_t i)
{
    if (i + 1 < l->n_occ)
        return s->occupancy[l->occ[i + 1]].time_ns;
    int64_t at = s->occupancy[l->occ[i]].time_ns;
    if (s->hello.occupancy == VTPIN__V1__OCCUPANCY_SOURCE__OCCUPANCY_SAMPLED) {
        int64_t period = s->hello.occupancy_interval_ns && s->hello.occupancy_interval_ns < 10000000000ull
                             ? (int64_t)s->hello.occupancy_interval_ns
                             : 10000000;
        int64_t end = recording_sat_add(at, period);
        return end < t->last_ns ? end : (t->last_ns > at ? t->last_ns : at);
    }
    return t->last_ns > at ? t->last_ns : at;
}
