#include "kernel_join.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

int kernel_pin(const struct recording_session *s, const struct recording_pin *p, struct recording_pin_kernel *out)
{
    memset(out, 0, sizeof(*out));
    if (!p->has_carrier_tid || s->n_kintervals == 0)
        return 0;
    int64_t best = -1;
    for (size_t i = 0; i < s->n_kintervals; i++) {
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

/* The pin of the same virtual thread on the same carrier that ended last before p
 * started (NULL: none). After attach the sampler can break one pinned loop into
 * several pins; the parks between them belong to the loop. */
static const struct recording_pin *previous_pin(const struct recording_session *s, const struct recording_pin *p)
{
    const struct recording_pin *best = NULL;
    if (!p->has_carrier_tid || !p->has_vthread_id)
        return NULL;
    for (size_t i = 0; i < s->n_pins; i++) {
        const struct recording_pin *q = &s->pins[i];
        if (q == p || !q->ended || !q->has_carrier_tid || q->carrier_tid != p->carrier_tid || !q->has_vthread_id ||
            q->vthread_id != p->vthread_id || q->end_ns > p->start_ns)
            continue;
        if (!best || q->end_ns > best->end_ns)
            best = q;
    }
    return best;
}

static int push_park(struct recording_session *s, size_t *cap, size_t k)
{
    if (s->n_kparks == *cap) {
        size_t n = *cap ? *cap * 2 : 64;
        size_t *v = realloc(s->kparks, n * sizeof(*v));
        if (!v)
            return -ENOMEM;
        s->kparks = v;
        *cap = n;
    }
    s->kparks[s->n_kparks++] = k;
    return 0;
}

/* p's parks: the intervals of its carrier overlapping it in which it slept (S or D), whole. After
 * attach also those between it and the sampler's previous pin of the same loop (a pin split from a
 * sampled one has its park exactly: nothing between). */
static int join_parks(struct recording_session *s, const struct recording_pin *p, struct recording_pin_kernel *pk,
                      size_t *cap)
{
    const struct recording_pin *prev =
        p->split_from || s->hello.mode != VTPIN__V1__LOAD_MODE__ATTACH ? NULL : previous_pin(s, p);
    pk->first_park = s->n_kparks;
    for (size_t i = 0; i < s->n_kintervals; i++) {
        const struct recording_kinterval *k = &s->kintervals[i];
        if (k->state != VTPIN__V1__KERNEL_STATE__KERNEL_SLEEPING && k->state != VTPIN__V1__KERNEL_STATE__KERNEL_DISK)
            continue;
        int between =
            prev && k->carrier_tid == p->carrier_tid && k->start_ns >= prev->end_ns && k->end_ns <= p->start_ns;
        if ((between || overlap(s, p, k) > 0) && push_park(s, cap, i))
            return -ENOMEM;
    }
    pk->n_parks = s->n_kparks - pk->first_park;
    return 0;
}

static void forget(struct recording_session *s)
{
    free(s->pin_kernels);
    free(s->kparks);
    free(s->held);
    s->pin_kernels = NULL;
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
    if (s->n_kintervals && s->n_pins) {
        size_t cap = 0;
        if (!(s->pin_kernels = calloc(s->n_pins, sizeof(*s->pin_kernels))))
            return -ENOMEM;
        for (size_t i = 0; i < s->n_pins; i++)
            if (kernel_pin(s, &s->pins[i], &s->pin_kernels[i]) &&
                join_parks(s, &s->pins[i], &s->pin_kernels[i], &cap)) {
                forget(s);
                return -ENOMEM;
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
    if (!s->pin_kernels || p < s->pins || p >= s->pins + s->n_pins)
        return NULL;
    const struct recording_pin_kernel *k = &s->pin_kernels[p - s->pins];
    return k->intervals ? k : NULL;
}
