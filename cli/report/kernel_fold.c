#include "kernel_fold.h"

#include <errno.h>
#include <stdlib.h>

#include "common/grow.h"

#include "kernel_held.h"
#include "pin_groups.h"

static int cmp_tid(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* f for s: its sleeps, and the carriers whose held time will read the pins' spans. */
static int index_session(struct kernel_fold *f, const struct recording_session *s)
{
    kernel_fold_free(f);
    if (kernel_sleeps_index(s, &f->sleeps) || !(f->held_tids = malloc(s->n_kintervals * sizeof(*f->held_tids))))
        return -ENOMEM;
    for (size_t i = 0; i < s->n_kintervals; i++)
        if (kernel_held_sleep(&s->kintervals[i]))
            f->held_tids[f->n_held_tids++] = s->kintervals[i].carrier_tid;
    qsort(f->held_tids, f->n_held_tids, sizeof(*f->held_tids), cmp_tid);
    size_t kept = 0;
    for (size_t i = 0; i < f->n_held_tids; i++)
        if (!kept || f->held_tids[kept - 1] != f->held_tids[i])
            f->held_tids[kept++] = f->held_tids[i];
    f->n_held_tids = kept;
    f->of = s;
    return 0;
}

/* p's span kept for its carrier's held time, as kernel_held reads the spans of the pins kept. */
static int keep_span(const struct kernel_fold *f, struct recording_session *s, const struct recording_pin *p)
{
    int64_t end = recording_sat_add(p->start_ns, recording_pin_duration(s, p));
    if (!p->has_carrier_tid || end <= p->start_ns ||
        !bsearch(&p->carrier_tid, f->held_tids, f->n_held_tids, sizeof(*f->held_tids), cmp_tid))
        return 0;
    if (grow_array((void **)&s->folded_spans, &s->folded_spans_cap, s->n_folded_spans + 1, sizeof(*s->folded_spans)))
        return -ENOMEM;
    s->folded_spans[s->n_folded_spans++] = (struct recording_span){.tid = p->carrier_tid, .lo = p->start_ns, .hi = end};
    return 0;
}

int kernel_fold_pins(struct recording_session *s, uint32_t *moved, void *arg)
{
    struct kernel_fold *f = arg;
    if (s->n_kintervals) {
        if (f->of != s && index_session(f, s)) /* a session's intervals are all there before its first pin */
            return -ENOMEM;
        for (size_t i = 0; i < s->n_pins; i++) {
            struct recording_pin *p = &s->pins[i];
            if (!pin_groups_takes(p))
                continue;
            kernel_time_block(&f->sleeps, p);
            if (keep_span(f, s, p))
                return -ENOMEM;
        }
    }
    return pin_groups_fold(s, moved, NULL);
}

void kernel_fold_free(struct kernel_fold *f)
{
    kernel_sleeps_free(&f->sleeps);
    free(f->held_tids);
    *f = (struct kernel_fold){0};
}
