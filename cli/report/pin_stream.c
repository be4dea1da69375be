#include "pin_stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach_bounds.h"
#include "kernel_pins.h"

struct stream {
    const struct recording_session *first; /* the first pass's session: its tables, how pins end */
    struct kernel_sleeps sleeps;           /* its kernel view's sleeps: each pin timed as it was there */
    struct recording_pin_end *late;        /* its late_ends, by id */
    size_t n_late;
    uint64_t *never; /* the ids of its pins that never end, sorted */
    size_t n_never;
    pin_stream_fn fn;
    void *arg;
};

static int cmp_end(const void *a, const void *b)
{
    uint64_t x = ((const struct recording_pin_end *)a)->id, y = ((const struct recording_pin_end *)b)->id;
    return (x > y) - (x < y);
}

static int cmp_id(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* p resolved and with its end (from the first pass when it outlasted a sum), and its bounds as the first
 * pass settled them after attach, to fn. */
static int hand_over(struct stream *st, const struct recording_pin *p, const struct recording_pin_end *end)
{
    struct recording_pin q = *p;
    if (end) {
        q.ended = 1;
        q.end_ns = end->end_ns;
        q.duration_ns = end->duration_ns;
        q.last_asleep_ns = end->last_asleep_ns;
    }
    const struct recording_pin_bounds *moved = attach_bounds_moved(st->first, q.id);
    if (moved) {
        q.start_ns = moved->start_ns;
        q.end_ns = moved->end_ns;
        q.duration_ns = recording_sat_sub(q.end_ns, q.start_ns);
    }
    recording_resolve_from(st->first, &q);
    kernel_time_block(&st->sleeps, &q);
    return st->fn(&q, st->arg);
}

/* A recording_fold_fn: hands over the pins at the head of s->pins whose end is known, and moves the
 * others down. */
static int hand_over_head(struct recording_session *s, uint32_t *moved, void *arg)
{
    struct stream *st = arg;
    int rc = 0;
    size_t i = 0;
    for (; i < s->n_pins && !rc; i++) {
        struct recording_pin *p = &s->pins[i];
        struct recording_pin_end key = {.id = p->id}, *end = NULL;
        if (!p->ended) {
            end = st->n_late ? bsearch(&key, st->late, st->n_late, sizeof(*st->late), cmp_end) : NULL;
            if (!end && !(st->n_never && bsearch(&p->id, st->never, st->n_never, sizeof(*st->never), cmp_id)))
                break; /* it ends later in the file: it and those after it wait */
        }
        rc = hand_over(st, p, end);
        moved[i] = RECORDING_PIN_GONE;
        recording_pin_release(p);
    }
    size_t kept = 0;
    for (; i < s->n_pins; i++) {
        moved[i] = (uint32_t)kept;
        s->pins[kept++] = s->pins[i];
    }
    s->n_pins = kept;
    return rc;
}

int pin_stream(const struct recording *r, size_t session, pin_stream_fn fn, void *arg, char *err, size_t errlen)
{
    const struct recording_session *first = r->sessions[session];
    struct stream st = {.first = first, .fn = fn, .arg = arg};
    int rc = 0;
    if ((first->n_late_ends && !(st.late = malloc(first->n_late_ends * sizeof(*st.late)))) ||
        (first->n_pins && !(st.never = malloc(first->n_pins * sizeof(*st.never))))) {
        rc = -ENOMEM;
        snprintf(err, errlen, "%s: out of memory", r->path);
        goto done;
    }
    if (kernel_sleeps_index(first, &st.sleeps)) {
        rc = -ENOMEM;
        snprintf(err, errlen, "%s: out of memory", r->path);
        goto done;
    }
    if ((st.n_late = first->n_late_ends)) {
        memcpy(st.late, first->late_ends, st.n_late * sizeof(*st.late));
        qsort(st.late, st.n_late, sizeof(*st.late), cmp_end);
    }
    for (size_t i = 0; i < first->n_pins; i++)
        if (!first->pins[i].ended)
            st.never[st.n_never++] = first->pins[i].id;
    if (st.n_never)
        qsort(st.never, st.n_never, sizeof(*st.never), cmp_id);
    /* the same session again, no occupancy, its pins handed over as the first pass summed them up */
    struct recording_plan again = {.keep = session + 1,
                                   .skip_occupancy = 1,
                                   .no_intervals = 1,
                                   .fold_pins = r->plan.fold_pins ? r->plan.fold_pins : RECORDING_FOLD_PINS,
                                   .fold = hand_over_head,
                                   .fold_arg = &st,
                                   .attach_as_read = 1};
    struct recording *r2 = NULL;
    if ((rc = recording_load_again(r, &again, &r2, err, errlen)))
        goto done;
    const struct recording_session *s = r2->n_sessions > session ? r2->sessions[session] : NULL;
    for (size_t i = 0; s && i < s->n_pins && !rc; i++) /* the rest: they all ended or never will */
        rc = hand_over(&st, &s->pins[i], NULL);
    if (!s) {
        rc = -EIO;
        snprintf(err, errlen, "%s: session %zu is not there the second time it is read", r->path, session + 1);
    }
    recording_free(r2);
done:
    kernel_sleeps_free(&st.sleeps);
    free(st.late);
    free(st.never);
    return rc;
}
