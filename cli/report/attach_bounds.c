#include "attach_bounds.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

int attach_sampled_park(const struct recording_pin *p)
{
    if (!p->ended || !p->has_carrier_tid || !p->has_vthread_id || !p->stack)
        return 0;
    for (uint32_t i = 0; i < p->stack->count; i++) {
        const struct recording_method *m = p->stack->frames[i].method;
        if (strcmp(m->name, "parkOnCarrierThread") == 0 && strcmp(m->class_name, "java.lang.VirtualThread") == 0)
            return 1;
    }
    return 0;
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
        } else if (p->start_ns < kernel_end) {
            p->start_ns = kernel_end < p->end_ns ? kernel_end : p->end_ns;
        }
    }
}

static int by_start(const void *a, const void *b)
{
    return key_then_start(0, 0, a, b);
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

int attach_bound_samples(struct recording_session *s)
{
    s->pins_sampled = s->pins_bounded = 0;
    if (s->hello.mode != VTPIN__V1__LOAD_MODE__ATTACH || s->n_pins == 0)
        return 0;
    size_t nw = 0, np = 0, nsampled = 0;
    size_t *waits = malloc(s->n_pins * sizeof(*waits));
    size_t *parks = malloc(s->n_pins * sizeof(*parks));  /* every park, kernel-timed ones too */
    int64_t *was = malloc(s->n_pins * 2 * sizeof(*was)); /* each pin's start and end before */
    if (!waits || !parks || !was) {
        free(waits);
        free(parks);
        free(was);
        return -ENOMEM;
    }
    for (size_t i = 0; i < s->n_pins; i++) {
        const struct recording_pin *p = &s->pins[i];
        was[2 * i] = p->start_ns;
        was[2 * i + 1] = p->end_ns;
        if (is_wait(p))
            waits[nw++] = i;
        else if (attach_sampled_park(p)) {
            parks[np++] = i;
            nsampled += !p->timed_by_kernel;
        }
    }
    sort_session = s;
    qsort(waits, nw, sizeof(*waits), by_vthread_start);
    for (size_t i = 0; i < np; i++) {
        struct recording_pin *p = &s->pins[parks[i]];
        if (!p->timed_by_kernel)
            cut_at_waits(s, waits, nw, p);
    }
    qsort(parks, np, sizeof(*parks), by_carrier_start);
    start_after_kernel_parks(s, parks, np);
    /* Another carrier's park that began after this one's last sample and before its end:
     * this one had ended by then as far as the samples can tell. */
    qsort(parks, np, sizeof(*parks), by_start);
    for (size_t i = 0; i < np; i++) {
        struct recording_pin *p = &s->pins[parks[i]];
        if (p->timed_by_kernel || p->last_asleep_ns <= 0)
            continue;
        for (size_t j = first_starting_at(s, parks, np, p->last_asleep_ns); j < np; j++) {
            const struct recording_pin *q = &s->pins[parks[j]];
            if (q->start_ns >= p->end_ns)
                break;
            if (q != p && q->carrier_tid != p->carrier_tid) {
                p->end_ns = q->start_ns > p->start_ns ? q->start_ns : p->start_ns;
                break;
            }
        }
    }
    for (size_t i = 0; i < np; i++) {
        struct recording_pin *p = &s->pins[parks[i]];
        if (p->timed_by_kernel)
            continue;
        if (p->end_ns < p->start_ns)
            p->end_ns = p->start_ns;
        p->duration_ns = recording_sat_sub(p->end_ns, p->start_ns);
        s->pins_bounded += p->start_ns != was[2 * parks[i]] || p->end_ns != was[2 * parks[i] + 1];
    }
    s->pins_sampled = nsampled;
    free(waits);
    free(parks);
    free(was);
    return 0;
}
