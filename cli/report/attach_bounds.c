#include "attach_bounds.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/grow.h"

#include "wire.h"

/* A virtual thread's pin on a carrier whose stack runs through parkOnCarrierThread: a sampled park
 * once it ends. */
static int parks_on_carrier(const struct recording_pin *p)
{
    if (!p->has_carrier_tid || !p->has_vthread_id)
        return 0;
    if (!p->stack) /* a window, before the stacks are resolved: the loader asked the definitions */
        return p->park_stack == RECORDING_PARK_YES;
    for (uint32_t i = 0; i < p->stack->count; i++)
        if (recording_park_frame(p->stack->frames[i].method->class_name, p->stack->frames[i].method->name))
            return 1;
    return 0;
}

int attach_sampled_park(const struct recording_pin *p)
{
    return p->ended && parks_on_carrier(p);
}

static int is_wait(const struct recording_pin *p)
{
    return p->has_vthread_id &&
           (p->reason == VTPIN__V1__PIN_REASON__MONITOR_ENTER || p->reason == VTPIN__V1__PIN_REASON__OBJECT_WAIT);
}

static const struct recording_session *sort_session; /* qsort has no context argument */

static int64_t end_of(const struct recording_pin *p)
{
    return p->ended ? p->end_ns : sort_session->last_ns;
}

/* Pins by key (kx, ky: theirs), then start. */
static int key_then_start(int64_t kx, int64_t ky, const void *a, const void *b)
{
    const struct recording_pin *x = &sort_session->pins[*(const size_t *)a];
    const struct recording_pin *y = &sort_session->pins[*(const size_t *)b];
    if (kx != ky)
        return kx < ky ? -1 : 1;
    return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* Waits by virtual thread, then start. One thread's waits follow each other, so their ends sort too. */
static int by_vthread_start(const void *a, const void *b)
{
    return key_then_start(sort_session->pins[*(const size_t *)a].vthread_id,
                          sort_session->pins[*(const size_t *)b].vthread_id, a, b);
}

static int by_carrier_start(const void *a, const void *b)
{
    return key_then_start(sort_session->pins[*(const size_t *)a].carrier_tid,
                          sort_session->pins[*(const size_t *)b].carrier_tid, a, b);
}

static int by_start(const void *a, const void *b)
{
    return key_then_start(0, 0, a, b);
}

/* A sampled park starts no earlier than the kernel-timed park before it on its carrier ended:
 * the sample that saw it first took its time before it read the carrier, which can be while
 * that park still slept (zt_attach_on_pin: a 10 ms park stamped 45 us before the exact end of
 * the 150 ms one before it). parks: sorted by carrier, then start. */
static void start_after_kernel_parks(struct recording_session *s, const size_t *parks, size_t np)
{
    int64_t kernel_end = INT64_MIN;
    for (size_t i = 0; i < np; i++) {
        struct recording_pin *p = &s->pins[parks[i]];
        if (i == 0 || p->carrier_tid != s->pins[parks[i - 1]].carrier_tid)
            kernel_end = INT64_MIN;
        if (p->timed_by_kernel) {
            if (end_of(p) > kernel_end)
                kernel_end = end_of(p);
        } else if (p->start_ns < kernel_end && !p->bounds_final) {
            p->start_ns = kernel_end < p->end_ns ? kernel_end : p->end_ns;
        }
    }
}

/* The first of waits[0..n) of virtual thread vt that ends after t (n when none). */
static size_t first_wait_after(const struct recording_session *s, const size_t *waits, size_t n, int64_t vt, int64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct recording_pin *w = &s->pins[waits[mid]];
        if (w->vthread_id < vt || (w->vthread_id == vt && end_of(w) <= t))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The first of parks[0..n) (by start) that starts at or after t. */
static size_t first_starting_at(const struct recording_session *s, const size_t *parks, size_t n, int64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->pins[parks[mid]].start_ns < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* p's own waits: a wait that begins inside p ends it there; one in progress at p's start
 * moves its start to the wait's end. */
static void cut_at_waits(const struct recording_session *s, const size_t *waits, size_t nw, struct recording_pin *p)
{
    for (size_t i = first_wait_after(s, waits, nw, p->vthread_id, p->start_ns); i < nw; i++) {
        const struct recording_pin *w = &s->pins[waits[i]];
        if (w->vthread_id != p->vthread_id || w->start_ns >= p->end_ns)
            break;
        if (w->start_ns > p->start_ns) {
            p->end_ns = w->start_ns;
            break;
        }
        p->start_ns = end_of(w) < p->end_ns ? end_of(w) : p->end_ns;
    }
}

/* One pass over the session's pins: the waits and the sampled parks, each pin's bounds as they were
 * before (was[2i], was[2i + 1]), the parks still in progress (pending: sampled parks once they end)
 * and the waits still in progress (pending_waits, by virtual thread). */
struct bounding {
    struct recording_session *s;
    size_t *waits, *parks, *pending, *pending_waits;
    size_t nw, np, npending, npending_waits;
    int64_t *was;
};

static void bounding_free(struct bounding *b)
{
    free(b->waits);
    free(b->parks);
    free(b->pending);
    free(b->pending_waits);
    free(b->was);
}

/* The three corrections, to every sampled park the kernel did not time and whose bounds are not
 * settled yet; the settled ones are read as they are. Leaves parks sorted by start. */
static void correct(struct bounding *b)
{
    struct recording_session *s = b->s;
    sort_session = s;
    for (size_t i = 0; i < b->np; i++) {
        struct recording_pin *p = &s->pins[b->parks[i]];
        if (!p->timed_by_kernel && !p->bounds_final)
            cut_at_waits(s, b->waits, b->nw, p);
    }
    qsort(b->parks, b->np, sizeof(*b->parks), by_carrier_start);
    start_after_kernel_parks(s, b->parks, b->np);
    /* Another carrier's park that began after this one's last sample and before its end:
     * this one had ended by then as far as the samples can tell. */
    qsort(b->parks, b->np, sizeof(*b->parks), by_start);
    for (size_t i = 0; i < b->np; i++) {
        struct recording_pin *p = &s->pins[b->parks[i]];
        if (p->timed_by_kernel || p->bounds_final || p->last_asleep_ns <= 0)
            continue;
        for (size_t j = first_starting_at(s, b->parks, b->np, p->last_asleep_ns); j < b->np; j++) {
            const struct recording_pin *q = &s->pins[b->parks[j]];
            if (q->start_ns >= p->end_ns)
                break;
            if (q != p && q->carrier_tid != p->carrier_tid) {
                p->end_ns = q->start_ns > p->start_ns ? q->start_ns : p->start_ns;
                break;
            }
        }
    }
}

/* b for s: its waits, its parks and those in progress, each bound before correction remembered, and the
 * corrections applied. 0 or -ENOMEM. */
static int bounding_begin(struct bounding *b, struct recording_session *s)
{
    *b = (struct bounding){.s = s};
    b->waits = malloc(s->n_pins * sizeof(*b->waits));
    b->parks = malloc(s->n_pins * sizeof(*b->parks)); /* every park, kernel-timed ones too */
    b->pending = malloc(s->n_pins * sizeof(*b->pending));
    b->pending_waits = malloc(s->n_pins * sizeof(*b->pending_waits));
    b->was = malloc(s->n_pins * 2 * sizeof(*b->was));
    if (!b->waits || !b->parks || !b->pending || !b->pending_waits || !b->was) {
        bounding_free(b);
        return -ENOMEM;
    }
    for (size_t i = 0; i < s->n_pins; i++) {
        const struct recording_pin *p = &s->pins[i];
        b->was[2 * i] = p->start_ns;
        b->was[2 * i + 1] = p->end_ns;
        if (is_wait(p)) {
            b->waits[b->nw++] = i;
            if (!p->ended)
                b->pending_waits[b->npending_waits++] = i;
        } else if (attach_sampled_park(p))
            b->parks[b->np++] = i;
        else if (!p->ended && parks_on_carrier(p))
            b->pending[b->npending++] = i;
    }
    sort_session = s;
    qsort(b->waits, b->nw, sizeof(*b->waits), by_vthread_start);
    qsort(b->pending, b->npending, sizeof(*b->pending), by_start);
    qsort(b->pending_waits, b->npending_waits, sizeof(*b->pending_waits), by_vthread_start);
    correct(b);
    return 0;
}

/* p's corrected bounds made its own: counted, and remembered when they moved (record) for a second
 * read of the file, which meets p without the pins that moved it (pin_stream.h). */
static int settle(struct bounding *b, size_t i, int record)
{
    struct recording_session *s = b->s;
    struct recording_pin *p = &s->pins[i];
    if (p->end_ns < p->start_ns)
        p->end_ns = p->start_ns;
    p->duration_ns = recording_sat_sub(p->end_ns, p->start_ns);
    p->bounds_final = 1;
    s->pins_sampled++;
    if (p->start_ns == b->was[2 * i] && p->end_ns == b->was[2 * i + 1])
        return 0;
    s->pins_bounded++;
    if (!record)
        return 0;
    if (grow_array((void **)&s->bounds_moved, &s->bounds_moved_cap, s->n_bounds_moved + 1, sizeof(*s->bounds_moved)))
        return -ENOMEM;
    s->bounds_moved[s->n_bounds_moved++] = (struct recording_pin_bounds){p->id, p->start_ns, p->end_ns};
    return 0;
}

static int cmp_bounds_id(const void *a, const void *b)
{
    uint64_t x = ((const struct recording_pin_bounds *)a)->id, y = ((const struct recording_pin_bounds *)b)->id;
    return (x > y) - (x < y);
}

int attach_bound_samples(struct recording_session *s)
{
    if (s->hello.mode != VTPIN__V1__LOAD_MODE__ATTACH) {
        s->pins_sampled = s->pins_bounded = 0; /* at startup every park is exact */
        return 0;
    }
    if (s->n_pins == 0)
        return 0;
    struct bounding b;
    if (bounding_begin(&b, s))
        return -ENOMEM;
    int rc = 0;
    for (size_t i = 0; i < b.np && !rc; i++)
        if (!s->pins[b.parks[i]].timed_by_kernel && !s->pins[b.parks[i]].bounds_final)
            rc = settle(&b, b.parks[i], s->pins_folded > 0);
    bounding_free(&b);
    if (s->n_bounds_moved)
        qsort(s->bounds_moved, s->n_bounds_moved, sizeof(*s->bounds_moved), cmp_bounds_id);
    return rc;
}

const struct recording_pin_bounds *attach_bounds_moved(const struct recording_session *s, uint64_t id)
{
    struct recording_pin_bounds key = {.id = id};
    return s->n_bounds_moved ? bsearch(&key, s->bounds_moved, s->n_bounds_moved, sizeof(key), cmp_bounds_id) : NULL;
}

/* ---- a long session, as it is read ---- */

/* Whether a wait of k's virtual thread was in progress as k began: the first correction may still move
 * k's start, to that wait's end (every such wait began before k, so it is read). */
static int start_may_move(const struct bounding *b, const struct recording_pin *k)
{
    const struct recording_session *s = b->s;
    size_t i = first_wait_after(s, b->waits, b->nw, k->vthread_id, k->start_ns);
    return i < b->nw && s->pins[b->waits[i]].vthread_id == k->vthread_id &&
           s->pins[b->waits[i]].start_ns <= k->start_ns;
}

/* Whether p (a park not settled, whose bounds before were was_start and was_end) may still be moved by
 * a pin in progress: a wait of its own virtual thread begun before its end, whose end is still to come,
 * or a park of another carrier begun in [its last sample, its end), which becomes an input once it
 * ends. */
static int waits_on_pending(const struct bounding *b, const struct recording_pin *p, int64_t was_end)
{
    const struct recording_session *s = b->s;
    size_t i = first_wait_after(s, b->pending_waits, b->npending_waits, p->vthread_id, INT64_MIN);
    if (i < b->npending_waits && s->pins[b->pending_waits[i]].vthread_id == p->vthread_id &&
        s->pins[b->pending_waits[i]].start_ns < was_end)
        return 1;
    if (p->last_asleep_ns <= 0)
        return 0;
    for (size_t j = 0; j < b->npending; j++) {
        const struct recording_pin *k = &s->pins[b->pending[j]];
        if (k->start_ns >= was_end)
            break;
        if (k->carrier_tid != p->carrier_tid && (k->start_ns >= p->last_asleep_ns || start_may_move(b, k)))
            return 1;
    }
    return 0;
}

/* The windows [last sample, end before) of the parks not settled: a settled park that begins in one
 * may still end it (the third correction), so the model keeps it. */
struct windows {
    int64_t *lo, *hi_max; /* by lo; hi_max[i]: the latest end of windows 0..i */
    size_t n;
};

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Whether t falls in one of the windows. */
static int in_window(const struct windows *w, int64_t t)
{
    size_t lo = 0, hi = w->n; /* the windows that open at or before t: [0, lo) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->lo[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && w->hi_max[lo - 1] > t;
}

/* Whether wait w overlaps a park of its own virtual thread that is not settled (open, sorted by
 * virtual thread then start; one still in progress has no end yet). */
static int overlaps_open_park(const struct bounding *b, const size_t *open, size_t n, const struct recording_pin *w)
{
    const struct recording_session *s = b->s;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->pins[open[mid]].vthread_id < w->vthread_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < n && s->pins[open[i]].vthread_id == w->vthread_id; i++) {
        const struct recording_pin *k = &s->pins[open[i]];
        int64_t k_end = k->ended ? b->was[2 * open[i] + 1] : INT64_MAX;
        if (end_of(w) > b->was[2 * open[i]] && w->start_ns < k_end)
            return 1;
    }
    return 0;
}

/* bounds_kept for every pin: what the parks not settled (and those still to come, which begin at cut
 * or later) may still read. */
static int mark_kept(struct bounding *b, int64_t cut)
{
    struct recording_session *s = b->s;
    size_t n_open = 0;
    size_t *open = malloc((b->np + b->npending + 1) * sizeof(*open));
    int64_t *pairs = malloc((b->np + 1) * 2 * sizeof(*pairs)); /* (lo, hi) pairs, sorted by lo */
    struct windows w = {.lo = malloc((b->np + 1) * sizeof(*w.lo)), .hi_max = malloc((b->np + 1) * sizeof(*w.hi_max))};
    int rc = open && pairs && w.lo && w.hi_max ? 0 : -ENOMEM;
    if (rc)
        goto done;
    for (size_t i = 0; i < b->np; i++) {
        size_t at = b->parks[i];
        const struct recording_pin *p = &s->pins[at];
        if (p->bounds_final || p->timed_by_kernel)
            continue;
        open[n_open++] = at;
        if (p->last_asleep_ns > 0) {
            pairs[2 * w.n] = p->last_asleep_ns;
            pairs[2 * w.n + 1] = b->was[2 * at + 1];
            w.n++;
        }
    }
    for (size_t i = 0; i < b->npending; i++)
        open[n_open++] = b->pending[i];
    qsort(pairs, w.n, 2 * sizeof(*pairs), cmp_i64);
    for (size_t i = 0; i < w.n; i++) {
        int64_t lo = pairs[2 * i], hi = pairs[2 * i + 1];
        w.lo[i] = lo;
        w.hi_max[i] = i > 0 && w.hi_max[i - 1] > hi ? w.hi_max[i - 1] : hi;
    }
    sort_session = s;
    qsort(open, n_open, sizeof(*open), by_vthread_start);
    for (size_t i = 0; i < s->n_pins; i++) {
        struct recording_pin *p = &s->pins[i];
        if (is_wait(p)) /* a wait first, whatever its stack, as bounding_begin sorts them */
            p->bounds_kept = !p->ended || p->end_ns > cut || overlaps_open_park(b, open, n_open, p);
        else if (attach_sampled_park(p))
            p->bounds_kept = !p->bounds_final || (!p->timed_by_kernel && in_window(&w, p->start_ns));
        else
            p->bounds_kept = 0;
    }
done:
    free(open);
    free(pairs);
    free(w.lo);
    free(w.hi_max);
    return rc;
}

int attach_bound_window(struct recording_session *s, int64_t before, int64_t cut)
{
    if (s->n_pins == 0)
        return 0;
    for (size_t i = 0; i < s->n_pins; i++) {
        if (s->pins[i].park_stack != RECORDING_PARK_UNKNOWN)
            continue;
        /* a pin whose stack is not defined yet may be a park: nothing is settled or let go until it is */
        for (size_t j = 0; j < s->n_pins; j++)
            s->pins[j].bounds_kept = 1;
        return 0;
    }
    struct bounding b;
    if (bounding_begin(&b, s))
        return -ENOMEM;
    int rc = 0;
    /* what the window before assumed of the parks then in progress: that none would read a pin it let
     * go, their last sample at or after its cut */
    for (size_t i = 0; i < b.np && !rc; i++) {
        struct recording_pin *p = &s->pins[b.parks[i]];
        if (!p->spanned)
            continue;
        p->spanned = 0;
        if (p->last_asleep_ns > 0 && p->last_asleep_ns < before)
            rc = RECORDING_WINDOW_AGAIN;
    }
    for (size_t i = 0; i < b.np && !rc; i++) {
        size_t at = b.parks[i];
        struct recording_pin *p = &s->pins[at];
        if (p->timed_by_kernel || p->bounds_final)
            continue;
        if (b.was[2 * at + 1] <= cut && !waits_on_pending(&b, p, b.was[2 * at + 1])) {
            rc = settle(&b, at, 1);
            continue;
        }
        p->start_ns = b.was[2 * at]; /* its inputs are not all read: bounded again later */
        p->end_ns = b.was[2 * at + 1];
    }
    for (size_t i = 0; i < b.npending; i++)
        s->pins[b.pending[i]].spanned |= s->pins[b.pending[i]].start_ns < cut;
    if (!rc)
        rc = mark_kept(&b, cut);
    bounding_free(&b);
    return rc;
}
