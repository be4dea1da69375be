#include "kernel_held.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/units.h"

#include "wire.h"
#include "wire_names.h"

struct span {
    int64_t lo, hi;
};

static int by_lo(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

int kernel_held_sleep(const struct recording_kinterval *k)
{
    return k->has_java && wire_held_sleep(k->state, k->vthread_id, k->java_wait) && k->end_ns > k->start_ns;
}

/* The pins of carrier tid (those summed up too: their spans) as disjoint spans, in order: *out
 * (malloc'ed) and *n. */
static int pin_spans(const struct recording_session *s, int32_t tid, struct span **out, size_t *n)
{
    size_t m = 0;
    struct span *v = malloc((s->n_pins + s->n_folded_spans + 1) * sizeof(*v));
    if (!v)
        return -ENOMEM;
    for (size_t i = 0; i < s->n_folded_spans; i++)
        if (s->folded_spans[i].tid == tid)
            v[m++] = (struct span){s->folded_spans[i].lo, s->folded_spans[i].hi};
    for (size_t i = 0; i < s->n_pins; i++) {
        const struct recording_pin *p = &s->pins[i];
        if (!p->has_carrier_tid || p->carrier_tid != tid)
            continue;
        int64_t end = recording_sat_add(p->start_ns, recording_pin_duration(s, p));
        if (end > p->start_ns)
            v[m++] = (struct span){p->start_ns, end};
    }
    qsort(v, m, sizeof(*v), by_lo);
    size_t k = 0;
    for (size_t i = 0; i < m; i++) {
        if (k && v[i].lo <= v[k - 1].hi) {
            if (v[i].hi > v[k - 1].hi)
                v[k - 1].hi = v[i].hi;
        } else
            v[k++] = v[i];
    }
    *out = v;
    *n = k;
    return 0;
}

/* How much of [lo, hi) the spans cover. */
static int64_t covered(const struct span *v, size_t n, int64_t lo, int64_t hi)
{
    size_t a = 0, b = n; /* the first span ending after lo */
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (v[mid].hi <= lo)
            a = mid + 1;
        else
            b = mid;
    }
    int64_t sum = 0;
    for (size_t i = a; i < n && v[i].lo < hi; i++) {
        int64_t l = v[i].lo > lo ? v[i].lo : lo, h = v[i].hi < hi ? v[i].hi : hi;
        if (h > l)
            sum += h - l;
    }
    return sum;
}

int kernel_held(const struct recording_session *s, int32_t tid, struct kernel_held *out)
{
    memset(out, 0, sizeof(*out));
    out->known = s->hello.has_thread_layout && s->ktimes;
    struct span *spans = NULL;
    size_t n = 0;
    for (size_t i = 0; i < s->n_kintervals; i++) {
        const struct recording_kinterval *k = &s->kintervals[i];
        if (k->carrier_tid != tid)
            continue;
        if (k->has_java)
            out->known = 1;
        if (!kernel_held_sleep(k))
            continue;
        if (!spans && pin_spans(s, tid, &spans, &n)) {
            memset(out, 0, sizeof(*out));
            return -ENOMEM;
        }
        int64_t len = k->end_ns - k->start_ns, in = covered(spans, n, k->start_ns, k->end_ns);
        out->held_ns = recording_sat_add(out->held_ns, len);
        out->in_pins_ns = recording_sat_add(out->in_pins_ns, in);
        if (len - in > out->worst_outside_ns) {
            out->worst_outside_ns = len - in;
            out->worst = k;
        }
    }
    free(spans);
    return 0;
}

/* The switch out's own frames, innermost: the BPF program that took the stack and the scheduler. */
static int machinery(const char *f)
{
    static const char *const prefixes[] = {"bpf_", "__bpf", "__traceiter", "__schedule+", "schedule+", "0x"};
    for (size_t i = 0; f && i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
        if (strncmp(f, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    return 0;
}

/* "do_nanosleep+0x5e < hrtimer_nanosleep+0xb5 < ..." (innermost first, after the switch out's own
 * frames, at most 6). */
static void put_stack(char *out, size_t cap, const struct recording_kinterval *k)
{
    size_t used = 0, from = 0, shown = 0;
    while (from < k->n_stack && machinery(k->stack[from]))
        from++;
    if (from == k->n_stack)
        from = 0;
    snprintf(out, cap, "%s", k->n_stack ? "" : "not taken");
    for (size_t i = from; i < k->n_stack && shown < 6 && used < cap; i++, shown++) {
        int w = snprintf(out + used, cap - used, "%s%s", shown ? " < " : "", k->stack[i] ? k->stack[i] : "?");
        if (w < 0)
            break;
        used += (size_t)w;
    }
    if (k->n_stack > from + shown && used < cap)
        snprintf(out + used, cap - used, " < ...");
}

int kernel_held_notices(struct recording_session *s)
{
    for (size_t i = 0; s->held && i < s->n_ktimes; i++) {
        int32_t tid = s->ktimes[i].carrier_tid;
        const struct recording_held *h = &s->held[i];
        int64_t outside = h->held_ns - h->in_pins_ns;
        if (!h->known || !h->has_worst || outside * 100 <= h->held_ns)
            continue;
        const struct recording_kinterval *k = &s->kintervals[h->worst];
        const char *name = recording_carrier_name(s, tid);
        char a[32], b[32], c[32], stack[1024], below[160] = "";
        if (s->stats.has && s->stats.msg.has_pins_below_threshold && s->stats.msg.pins_below_threshold &&
            s->hello.has_threshold)
            snprintf(below, sizeof(below), "; %" PRIu64 " pins below the threshold (%s) were not reported",
                     s->stats.msg.pins_below_threshold,
                     units_format_duration((int64_t)s->hello.threshold_ns, c, sizeof(c)));
        put_stack(stack, sizeof(stack), k);
        char text[2048];
        snprintf(text, sizeof(text),
                 "carrier %s (tid %" PRId32 "): %s of the %s it slept with a virtual thread mounted (%.1f %%) lies "
                 "outside every reported pin%s. The largest such sleep: %s %s%s%s (virtual thread #%" PRId64
                 "), kernel stack: %s",
                 name ? name : "?", tid, units_format_duration(outside, a, sizeof(a)),
                 units_format_duration(h->held_ns, b, sizeof(b)), 100.0 * (double)outside / (double)h->held_ns, below,
                 units_format_duration(h->worst_outside_ns, c, sizeof(c)), wire_kernel_state_name(k->state),
                 k->syscall_name ? " in " : "", k->syscall_name ? k->syscall_name : "", k->vthread_id, stack);
        int rc = recording_add_notice(s, k->start_ns, VTPIN__V1__SEVERITY__WARNING, "kernel.held_unexplained", text);
        if (rc)
            return rc;
    }
    return 0;
}
