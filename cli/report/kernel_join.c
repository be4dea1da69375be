#include "kernel_join.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "kernel_held.h"
#include "wire.h"

/* Overlap of k with p (the session's end for a pin in progress), 0 when none. */
static int64_t overlap(const struct recording_session *s, const struct recording_pin *p,
                       const struct recording_kinterval *k)
{
    if (!p->has_carrier_tid || k->carrier_tid != p->carrier_tid)
        return 0;
    int64_t end = p->ended ? p->end_ns : s->last_ns;
    int64_t lo = k->start_ns > p->start_ns ? k->start_ns : p->start_ns;
    int64_t hi = k->end_ns < end ? k->end_ns : end;
    return hi > lo ? hi - lo : 0;
}

/* p's figures over the intervals cand[0..n) (by index; NULL: all of the session's). */
static int figures(const struct recording_session *s, const struct recording_pin *p, const size_t *cand, size_t n,
                   struct recording_pin_kernel *out)
{
    memset(out, 0, sizeof(*out));
    if (!p->has_carrier_tid)
        return 0;
    int64_t best = -1;
    for (size_t c = 0; c < n; c++) {
        size_t i = cand ? cand[c] : c;
        int64_t o = overlap(s, p, &s->kintervals[i]);
        if (o == 0)
            continue;
        out->off_cpu_ns += o;
        out->runqueue_ns += s->kintervals[i].runqueue_ns;
        out->intervals++;
        if (o > best) {
            best = o;
            out->main = i;
        }
    }
    return out->intervals > 0;
}

int kernel_pin(const struct recording_session *s, const struct recording_pin *p, struct recording_pin_kernel *out)
{
    return figures(s, p, NULL, s->n_kintervals, out);
}

/* ---- which intervals and which pins a pin can meet, found by search ---- */

/* The session's intervals grouped by carrier, by end within each (then start, then index). On
 * one carrier thread off-CPU intervals do not overlap, so their starts then rise too (`ordered`)
 * and what overlaps a time span is one run of them; a carrier whose intervals overlap (a hostile
 * or damaged file) is read whole, as before. */
struct carrier_run {
    int32_t tid;
    size_t first, n; /* into order[] */
    int ordered;
};

struct join_index {
    size_t *order; /* interval indexes */
    struct carrier_run *runs;
    size_t n_runs;
    size_t *ended; /* pins that ended with a carrier and a virtual thread: by (carrier, thread, end, index) */
    size_t n_ended;
    size_t *cand, cand_cap; /* one pin's candidate intervals, by index */
};

static int cmp64(int64_t a, int64_t b)
{
    return (a > b) - (a < b);
}

static int by_carrier_end(const void *a, const void *b, void *session)
{
    const struct recording_session *s = session;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    const struct recording_kinterval *x = &s->kintervals[i], *y = &s->kintervals[j];
    int c = cmp64(x->carrier_tid, y->carrier_tid);
    if (!c)
        c = cmp64(x->end_ns, y->end_ns);
    if (!c)
        c = cmp64(x->start_ns, y->start_ns);
    return c ? c : (i > j) - (i < j);
}

static int by_thread_end(const void *a, const void *b, void *session)
{
    const struct recording_session *s = session;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    const struct recording_pin *x = &s->pins[i], *y = &s->pins[j];
    int c = cmp64(x->carrier_tid, y->carrier_tid);
    if (!c)
        c = cmp64(x->vthread_id, y->vthread_id);
    if (!c)
        c = cmp64(x->end_ns, y->end_ns);
    return c ? c : (i > j) - (i < j);
}

static void index_free(struct join_index *ix)
{
    free(ix->order);
    free(ix->runs);
    free(ix->ended);
    free(ix->cand);
}

/* ix for the intervals of s, and (pins) for its ended pins. */
static int index_build(const struct recording_session *s, struct join_index *ix, int pins)
{
    memset(ix, 0, sizeof(*ix));
    size_t nk = s->n_kintervals, np = pins ? s->n_pins : 0;
    if (!(ix->order = malloc((nk ? nk : 1) * sizeof(*ix->order))) ||
        !(ix->runs = malloc((nk ? nk : 1) * sizeof(*ix->runs))) ||
        !(ix->ended = malloc((np ? np : 1) * sizeof(*ix->ended))))
        return -ENOMEM;
    for (size_t i = 0; i < nk; i++)
        ix->order[i] = i;
    qsort_r(ix->order, nk, sizeof(*ix->order), by_carrier_end, (void *)s);
    struct carrier_run *r = NULL; /* the latest */
    for (size_t i = 0; i < nk; i++) {
        const struct recording_kinterval *k = &s->kintervals[ix->order[i]];
        if (!r || r->tid != k->carrier_tid) {
            r = &ix->runs[ix->n_runs++];
            *r = (struct carrier_run){.tid = k->carrier_tid, .first = i, .n = 1, .ordered = 1};
            continue;
        }
        if (k->start_ns < s->kintervals[ix->order[i - 1]].start_ns)
            r->ordered = 0;
        r->n++;
    }
    for (size_t i = 0; i < np; i++) {
        const struct recording_pin *q = &s->pins[i];
        if (q->ended && q->has_carrier_tid && q->has_vthread_id)
            ix->ended[ix->n_ended++] = i;
    }
    qsort_r(ix->ended, ix->n_ended, sizeof(*ix->ended), by_thread_end, (void *)s);
    return 0;
}

static const struct carrier_run *run_of(const struct join_index *ix, int32_t tid)
{
    size_t lo = 0, hi = ix->n_runs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ix->runs[mid].tid < tid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ix->n_runs && ix->runs[lo].tid == tid ? &ix->runs[lo] : NULL;
}

static int by_index(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    return (i > j) - (i < j);
}

/* The intervals of carrier tid that can meet [lo, hi] (end at lo or later, start at hi or
 * earlier; all of them on a carrier that is not ordered) into ix->cand, by index. Their count, or
 * -ENOMEM. */
static ssize_t candidates(const struct recording_session *s, struct join_index *ix, int32_t tid, int64_t lo, int64_t hi)
{
    const struct carrier_run *r = run_of(ix, tid);
    if (!r)
        return 0;
    const size_t *run = ix->order + r->first;
    size_t from = 0;
    if (r->ordered) { /* the first whose end is at lo or later */
        size_t a = 0, b = r->n;
        while (a < b) {
            size_t mid = a + (b - a) / 2;
            if (s->kintervals[run[mid]].end_ns < lo)
                a = mid + 1;
            else
                b = mid;
        }
        from = a;
    }
    size_t n = 0;
    for (size_t i = from; i < r->n; i++) {
        if (r->ordered && s->kintervals[run[i]].start_ns > hi)
            break;
        if (n == ix->cand_cap) {
            size_t cap = ix->cand_cap ? ix->cand_cap * 2 : 64;
            size_t *v = realloc(ix->cand, cap * sizeof(*v));
            if (!v)
                return -ENOMEM;
            ix->cand = v;
            ix->cand_cap = cap;
        }
        ix->cand[n++] = run[i];
    }
    if (n > 1) /* the session's order: the same main, the same parks */
        qsort(ix->cand, n, sizeof(*ix->cand), by_index);
    return (ssize_t)n;
}

/* The pin of the same virtual thread on the same carrier that ended last before p
 * started (NULL: none; of two that ended at once, the first in the session). After attach
 * the sampler can break one pinned loop into several pins; the parks between them belong
 * to the loop. */
static const struct recording_pin *previous_pin(const struct recording_session *s, const struct join_index *ix,
                                                const struct recording_pin *p)
{
    if (!p->has_carrier_tid || !p->has_vthread_id)
        return NULL;
    size_t a = 0, b = ix->n_ended; /* the first pin after (p's carrier, p's thread, an end at p's start) */
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        const struct recording_pin *q = &s->pins[ix->ended[mid]];
        int c = cmp64(q->carrier_tid, p->carrier_tid);
        if (!c)
            c = cmp64(q->vthread_id, p->vthread_id);
        if (!c)
            c = cmp64(q->end_ns, p->start_ns);
        if (c <= 0)
            a = mid + 1;
        else
            b = mid;
    }
    const struct recording_pin *best = NULL;
    for (size_t i = a; i-- > 0;) { /* back: the latest end; of its pins, the lowest index is met last */
        const struct recording_pin *q = &s->pins[ix->ended[i]];
        if (q->carrier_tid != p->carrier_tid || q->vthread_id != p->vthread_id || (best && q->end_ns < best->end_ns))
            break;
        if (q != p)
            best = q;
    }
    return best;
}

/* Where parks go: s->kparks, or one pin's own (kernel_join_one). */
struct parks {
    size_t *v, n, cap;
};

static int push_park(struct parks *out, size_t k)
{
    if (out->n == out->cap) {
        size_t n = out->cap ? out->cap * 2 : 64;
        size_t *v = realloc(out->v, n * sizeof(*v));
        if (!v)
            return -ENOMEM;
        out->v = v;
        out->cap = n;
    }
    out->v[out->n++] = k;
    return 0;
}

/* p's parks, of the intervals cand[0..n): those of its carrier overlapping it in which it slept (S
 * or D), whole; after attach also those between it and prev, the sampler's previous pin of the same
 * loop (NULL for a pin split from a sampled one: its park is exact, nothing between). */
static int join_parks(const struct recording_session *s, const size_t *cand, size_t n, const struct recording_pin *p,
                      const struct recording_pin *prev, struct recording_pin_kernel *pk, struct parks *out)
{
    pk->first_park = out->n;
    for (size_t c = 0; c < n; c++) {
        size_t i = cand[c];
        const struct recording_kinterval *k = &s->kintervals[i];
        if (k->state != VTPIN__V1__KERNEL_STATE__KERNEL_SLEEPING && k->state != VTPIN__V1__KERNEL_STATE__KERNEL_DISK)
            continue;
        int between =
            prev && k->carrier_tid == p->carrier_tid && k->start_ns >= prev->end_ns && k->end_ns <= p->start_ns;
        if ((between || overlap(s, p, k) > 0) && push_park(out, i))
            return -ENOMEM;
    }
    pk->n_parks = out->n - pk->first_park;
    return 0;
}

/* Each pin's figures and parks, from the intervals its span (and, after attach, the time since its
 * loop's previous pin) can meet; then each group's example (a session summed up as read:
 * kernel_fold.h, never after attach). */
static int join_pins(struct recording_session *s, struct join_index *ix)
{
    struct parks parks = {0};
    int rc = 0;
    size_t groups = s->kernel_after_fold ? 0 : s->n_pin_groups; /* summed before the kernel view: not */
    for (size_t i = 0; i < s->n_pins + groups; i++) {
        const struct recording_pin *p = i < s->n_pins ? &s->pins[i] : &s->pin_groups[i - s->n_pins].pin;
        struct recording_pin_kernel *pk = i < s->n_pins ? &s->pin_kernels[i] : &s->group_kernels[i - s->n_pins];
        if (!p->has_carrier_tid)
            continue;
        int64_t end = p->ended ? p->end_ns : s->last_ns;
        /* the parks between p and its loop's previous pin lie before p: reach back to its end */
        const struct recording_pin *prev =
            p->split_from || s->hello.mode != VTPIN__V1__LOAD_MODE__ATTACH ? NULL : previous_pin(s, ix, p);
        int64_t lo = prev && prev->end_ns < p->start_ns ? prev->end_ns : p->start_ns;
        ssize_t n = candidates(s, ix, p->carrier_tid, lo, end > p->start_ns ? end : p->start_ns);
        if (n < 0 ||
            (figures(s, p, ix->cand, (size_t)n, pk) && join_parks(s, ix->cand, (size_t)n, p, prev, pk, &parks))) {
            rc = -ENOMEM;
            break;
        }
    }
    s->kparks = parks.v;
    s->n_kparks = parks.n;
    return rc;
}

static void forget(struct recording_session *s)
{
    free(s->pin_kernels);
    free(s->group_kernels);
    free(s->kparks);
    free(s->held);
    s->pin_kernels = NULL;
    s->group_kernels = NULL;
    s->kparks = NULL;
    s->held = NULL;
    s->n_kparks = 0;
}

static int join_held(struct recording_session *s)
{
    if (!s->n_ktimes)
        return 0;
    if (!(s->held = calloc(s->n_ktimes, sizeof(*s->held))))
        return -ENOMEM;
    for (size_t i = 0; i < s->n_ktimes; i++) {
        struct kernel_held h;
        if (kernel_held(s, s->ktimes[i].carrier_tid, &h))
            return -ENOMEM;
        struct recording_held *out = &s->held[i];
        *out = (struct recording_held){.known = h.known, .held_ns = h.held_ns, .in_pins_ns = h.in_pins_ns};
        if (h.worst) {
            out->has_worst = 1;
            out->worst = (size_t)(h.worst - s->kintervals);
            out->worst_outside_ns = h.worst_outside_ns;
        }
    }
    return 0;
}

int kernel_join(struct recording_session *s)
{
    forget(s);
    if (s->n_kintervals && s->n_pins + s->n_pin_groups) {
        struct join_index ix;
        int rc = index_build(s, &ix, 1);
        if (!rc && ((s->n_pins && !(s->pin_kernels = calloc(s->n_pins, sizeof(*s->pin_kernels)))) ||
                    (s->n_pin_groups && !(s->group_kernels = calloc(s->n_pin_groups, sizeof(*s->group_kernels))))))
            rc = -ENOMEM;
        if (!rc)
            rc = join_pins(s, &ix);
        index_free(&ix);
        if (rc) {
            forget(s);
            return rc;
        }
    }
    if (join_held(s)) {
        forget(s);
        return -ENOMEM;
    }
    return 0;
}

const struct recording_pin_kernel *kernel_joined_pin(const struct recording_session *s, const struct recording_pin *p)
{
    const struct recording_pin_kernel *k = NULL;
    uintptr_t at = (uintptr_t)p, groups = (uintptr_t)s->pin_groups;
    if (s->pin_kernels && p >= s->pins && p < s->pins + s->n_pins)
        k = &s->pin_kernels[p - s->pins];
    else if (s->group_kernels && s->n_pin_groups && at >= groups &&
             at < groups + s->n_pin_groups * sizeof(*s->pin_groups))
        k = &s->group_kernels[(at - groups) / sizeof(*s->pin_groups)];
    return k && k->intervals ? k : NULL;
}

/* ---- one pin at a time ---- */

struct kernel_join_one {
    const struct recording_session *s;
    struct join_index ix;
    struct parks parks; /* of the pin joined last */
    struct recording_pin_kernel k;
};

int kernel_join_one_new(const struct recording_session *s, struct kernel_join_one **out)
{
    struct kernel_join_one *j = calloc(1, sizeof(*j));
    *out = NULL;
    if (!j)
        return -ENOMEM;
    j->s = s;
    if (index_build(s, &j->ix, 0)) {
        kernel_join_one_free(j);
        return -ENOMEM;
    }
    *out = j;
    return 0;
}

const struct recording_pin_kernel *kernel_join_one(struct kernel_join_one *j, const struct recording_pin *p,
                                                   const size_t **parks)
{
    const struct recording_session *s = j->s;
    *parks = NULL;
    if (!p->has_carrier_tid || s->hello.mode == VTPIN__V1__LOAD_MODE__ATTACH)
        return NULL; /* after attach a pin's parks reach back to its loop's previous pin: kernel_join alone */
    int64_t end = p->ended ? p->end_ns : s->last_ns;
    ssize_t n = candidates(s, &j->ix, p->carrier_tid, p->start_ns, end > p->start_ns ? end : p->start_ns);
    j->parks.n = 0;
    if (n < 0 || !figures(s, p, j->ix.cand, (size_t)n, &j->k) ||
        join_parks(s, j->ix.cand, (size_t)n, p, NULL, &j->k, &j->parks))
        return NULL;
    *parks = j->parks.v;
    return &j->k;
}

void kernel_join_one_free(struct kernel_join_one *j)
{
    if (!j)
        return;
    index_free(&j->ix);
    free(j->parks.v);
    free(j);
}
