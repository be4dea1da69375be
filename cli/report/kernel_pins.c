#include "kernel_pins.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attach_bounds.h"
#include "wire.h"

/* ---- the kernel's sleeps by carrier (both passes below) ---- */

/* The agent's sample period, as its Hello said (bounded: the file may say anything). */
static int64_t sample_period(const struct recording_session *s)
{
    return s->hello.sample_interval_ns && s->hello.sample_interval_ns < 10000000000ull
               ? (int64_t)s->hello.sample_interval_ns
               : 10000000;
}

static int is_sleep(const struct recording_kinterval *k)
{
    return k->state == VTPIN__V1__KERNEL_STATE__KERNEL_SLEEPING || k->state == VTPIN__V1__KERNEL_STATE__KERNEL_DISK;
}

static const struct recording_session *sort_session; /* qsort has no context argument */

/* Intervals by carrier, then start, then file order (qsort is not stable). A carrier's intervals
 * do not overlap, so their ends sort too (sleeps_by_carrier checks). */
static int by_carrier_start(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    const struct recording_kinterval *x = &sort_session->kintervals[i];
    const struct recording_kinterval *y = &sort_session->kintervals[j];
    if (x->carrier_tid != y->carrier_tid)
        return x->carrier_tid < y->carrier_tid ? -1 : 1;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return i < j ? -1 : i > j;
}

/* The first of sorted[0..n) on carrier tid that ends after t (n when none). */
static size_t first_ending_after(const struct recording_session *s, const size_t *sorted, size_t n, int32_t tid,
                                 int64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct recording_kinterval *k = &s->kintervals[sorted[mid]];
        if (k->carrier_tid < tid || (k->carrier_tid == tid && k->end_ns <= t))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The sleeps (S or D) of s, as indexes into s->kintervals sorted by_carrier_start: *ks
 * (malloc'ed; s has intervals) and *n. *ends_sorted (when not NULL): each carrier's ends sort
 * too, as first_ending_after() needs; they do unless its sleeps overlap (a malformed or merged
 * view). 0 or -ENOMEM. */
static int sleeps_by_carrier(const struct recording_session *s, size_t **ks, size_t *n, int *ends_sorted)
{
    size_t nk = 0, *x = malloc(s->n_kintervals * sizeof(*x));
    if (!x)
        return -ENOMEM;
    for (size_t i = 0; i < s->n_kintervals; i++)
        if (is_sleep(&s->kintervals[i]))
            x[nk++] = i;
    sort_session = s;
    qsort(x, nk, sizeof(*x), by_carrier_start);
    if (ends_sorted) {
        *ends_sorted = 1;
        for (size_t i = 1; i < nk && *ends_sorted; i++) {
            const struct recording_kinterval *a = &s->kintervals[x[i - 1]], *b = &s->kintervals[x[i]];
            *ends_sorted = a->carrier_tid != b->carrier_tid || a->end_ns <= b->end_ns;
        }
    }
    *ks = x;
    *n = nk;
    return 0;
}

/* ---- blocks timed by the kernel ---- */

/* Whether sleep k is known to be native block p's own: the kernel view read the carrier's
 * JavaThread as it fell asleep, with p's virtual thread mounted, in a native method. */
static int is_own_native_sleep(const struct recording_kinterval *k, const struct recording_pin *p)
{
    return p->reason == VTPIN__V1__PIN_REASON__NATIVE_BLOCK && p->has_vthread_id && k->has_java &&
           k->vthread_id == p->vthread_id && k->java_wait == VTPIN__V1__JAVA_WAIT__JAVA_IN_NATIVE;
}

/* The sleep of p's carrier in progress at a sample of p taken at t (the sample reads the
 * carrier's state just after t): of those that end after t and began by t + period, the
 * first to begin (the first in the file of those that began together). A native block's
 * own sleep (is_own_native_sleep) may begin later, up to own_by: the sample saw the thread
 * in native, and under load it can wait for the CPU long before its syscall puts it to
 * sleep. A sleep the kernel view read as someone else's (another virtual thread, or not in
 * native) is not a native block's. NULL when the kernel kept none (e.g. sleeps below
 * --kernel-min). ks[0..n) from sleeps_by_carrier(); without ends_sorted the search starts
 * at ks[0] and skips what ended by t. */
static const struct recording_kinterval *sleep_at(const struct recording_session *s, const size_t *ks, size_t n,
                                                  int ends_sorted, const struct recording_pin *p, int64_t t,
                                                  int64_t period, int64_t own_by)
{
    int32_t tid = p->carrier_tid;
    int native = p->reason == VTPIN__V1__PIN_REASON__NATIVE_BLOCK && p->has_vthread_id;
    for (size_t i = ends_sorted ? first_ending_after(s, ks, n, tid, t) : 0; i < n; i++) {
        const struct recording_kinterval *k = &s->kintervals[ks[i]];
        if (k->carrier_tid < tid || (k->carrier_tid == tid && k->end_ns <= t))
            continue;
        if (k->carrier_tid > tid || k->start_ns > (t + period > own_by ? t + period : own_by))
            break;
        if (native && k->has_java && !is_own_native_sleep(k, p))
            continue;
        if (k->start_ns > t + period && !is_own_native_sleep(k, p))
            continue;
        return k;
    }
    return NULL;
}

int kernel_sleeps_index(const struct recording_session *s, struct kernel_sleeps *ix)
{
    memset(ix, 0, sizeof(*ix));
    ix->s = s;
    return s->n_kintervals ? sleeps_by_carrier(s, &ix->ks, &ix->n, &ix->ends_sorted) : 0;
}

void kernel_sleeps_free(struct kernel_sleeps *ix)
{
    free(ix->ks);
    memset(ix, 0, sizeof(*ix));
}

int kernel_time_block(const struct kernel_sleeps *ix, struct recording_pin *p)
{
    const struct recording_session *s = ix->s;
    int64_t period = sample_period(s);
    if ((p->reason != VTPIN__V1__PIN_REASON__NATIVE_BLOCK && p->reason != VTPIN__V1__PIN_REASON__VM_BLOCK) ||
        !p->has_carrier_tid || p->split_from || p->timed_by_kernel || !ix->n)
        return 0;
    /* its own sleep began by its last sample that saw it asleep (the sample reads the
     * carrier just after its timestamp) and before it ended */
    int64_t own_by = p->last_asleep_ns ? p->last_asleep_ns + period : p->start_ns + period;
    if (p->ended && p->end_ns < own_by)
        own_by = p->end_ns;
    const struct recording_kinterval *first =
        sleep_at(s, ix->ks, ix->n, ix->ends_sorted, p, p->start_ns, period, own_by);
    if (!first)
        return 0; /* the kernel kept no sleep there: the agent's times stay */
    /* the first sample that saw it asleep: it began when that sleep did (the sample
     * reads the carrier just after its timestamp, so that can be after it too) */
    p->start_ns = first->start_ns;
    if (p->ended && p->last_asleep_ns) {
        /* the last sample that saw it asleep: it ended when that sleep did (not at the next sample,
         * which reads the carrier just after its timestamp: the sleep can end after that too) */
        const struct recording_kinterval *last =
            sleep_at(s, ix->ks, ix->n, ix->ends_sorted, p, p->last_asleep_ns, period, p->last_asleep_ns + period);
        if (last && last->end_ns <= p->end_ns + period)
            p->end_ns = last->end_ns;
    }
    if (p->ended)
        p->duration_ns = recording_sat_sub(p->end_ns, p->start_ns);
    p->timed_by_kernel = 1;
    return 1;
}

size_t kernel_time_blocks(struct recording_session *s)
{
    struct kernel_sleeps ix;
    size_t timed = 0;
    if (!s->n_kintervals || kernel_sleeps_index(s, &ix))
        return 0; /* none, or out of memory: the agent's times stay, as without a kernel view */
    for (size_t i = 0; i < s->n_pins; i++)
        timed += (size_t)kernel_time_block(&ix, &s->pins[i]);
    kernel_sleeps_free(&ix);
    return timed;
}

/* ---- exact pins after attach ---- */

/* Whether sleep k can be a park of p. When the kernel view read the carrier's JavaThread as
 * it fell asleep, only when p's virtual thread was mounted and the carrier waited for no
 * monitor: a contended entry or Object.wait is a pin of its own (the monitor events time it),
 * an idle carrier parks with no virtual thread mounted, and another virtual thread's turn on
 * the carrier is not p's. Without that read, any sleep inside p can be (the sampled bounds). */
static int can_be_park_of(const struct recording_kinterval *k, const struct recording_pin *p)
{
    return !k->has_java || (k->vthread_id == p->vthread_id && k->java_wait == VTPIN__V1__JAVA_WAIT__JAVA_BLOCKED);
}

/* Pins by carrier, then start. */
static int pins_by_carrier_start(const void *a, const void *b)
{
    const struct recording_pin *x = &sort_session->pins[*(const size_t *)a];
    const struct recording_pin *y = &sort_session->pins[*(const size_t *)b];
    if (x->carrier_tid != y->carrier_tid)
        return x->carrier_tid < y->carrier_tid ? -1 : 1;
    return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

static int dup_opt(const char *in, char **out)
{
    *out = NULL;
    return in && !(*out = strdup(in)) ? -ENOMEM : 0;
}

/* kernel_split_parks' work: which sleeps each sampled park claims, then the pins that replace
 * the parks that claimed some. */
struct park_split {
    struct recording_session *s;
    int64_t period;
    size_t *ks, nk;            /* the sleeps (kinterval indexes) by carrier, then start */
    size_t *owner;             /* by sleep: the pin that claimed it, index + 1; SIZE_MAX: too short; 0: none */
    size_t *chain;             /* by pin: its loop (index of the loop's first pin) + 1; 0: not a candidate */
    unsigned char *loop_parks; /* by a loop's first pin: the loop claimed a sleep */
};

/* Pin i is replaced by the sleeps it claimed: its loop claimed some (a pin whose park went to
 * its neighbour leaves nothing). */
static int replaced(const struct park_split *w, size_t i)
{
    return w->chain[i] && w->loop_parks[w->chain[i] - 1];
}

/* Each sampled park (cand[nc], by carrier and start) claims the sleeps of its carrier that
 * overlap it: the sampler saw one park at its start and every sample until its end, and a park
 * in progress at the first sample began less than a period before. When the previous sampled
 * park of the same virtual thread on the same carrier ended at most two periods earlier (a
 * sample between two parks broke the loop, or the agent ended one park and began the next), the
 * two are one loop and the sleeps in that gap are its parks too. A sleep is claimed once, by the
 * earlier pin. Returns the sleeps claimed. */
static size_t claim_sleeps(struct park_split *w, const size_t *cand, size_t nc)
{
    struct recording_session *s = w->s;
    size_t pieces = 0;
    for (size_t c = 0; c < nc; c++) {
        const struct recording_pin *p = &s->pins[cand[c]];
        int64_t lo = p->start_ns;
        w->chain[cand[c]] = cand[c] + 1;
        if (c > 0) {
            const struct recording_pin *q = &s->pins[cand[c - 1]];
            if (q->carrier_tid == p->carrier_tid && q->vthread_id == p->vthread_id && q->end_ns <= p->start_ns &&
                recording_sat_sub(p->start_ns, q->end_ns) <= 2 * w->period) {
                lo = q->end_ns;
                w->chain[cand[c]] = w->chain[cand[c - 1]];
            }
        }
        for (size_t i = first_ending_after(s, w->ks, w->nk, p->carrier_tid, lo); i < w->nk; i++) {
            const struct recording_kinterval *k = &s->kintervals[w->ks[i]];
            if (k->carrier_tid != p->carrier_tid || k->start_ns >= p->end_ns)
                break;
            if (w->owner[w->ks[i]] || !can_be_park_of(k, p))
                continue;
            if (s->hello.has_threshold && (uint64_t)recording_sat_sub(k->end_ns, k->start_ns) < s->hello.threshold_ns) {
                w->owner[w->ks[i]] = SIZE_MAX; /* a park too short to report, as at startup */
                continue;
            }
            w->owner[w->ks[i]] = cand[c] + 1;
            w->loop_parks[w->chain[cand[c]] - 1] = 1;
            pieces++;
        }
    }
    return pieces;
}

/* The pieces of replaced pin i (the sleeps it claimed, in time order: ks is sorted by start per
 * carrier) into out from *o, each a pin of its own timed by the kernel. 0 or -ENOMEM. */
static int put_pieces(const struct park_split *w, size_t i, struct recording_pin *out, size_t *o, size_t n_out,
                      uint64_t *next_id)
{
    const struct recording_session *s = w->s;
    const struct recording_pin *p = &s->pins[i];
    for (size_t j = first_ending_after(s, w->ks, w->nk, p->carrier_tid, recording_sat_sub(p->start_ns, 2 * w->period));
         j < w->nk && *o < n_out; j++) {
        const struct recording_kinterval *k = &s->kintervals[w->ks[j]];
        if (k->carrier_tid != p->carrier_tid || k->start_ns >= p->end_ns)
            break;
        if (w->owner[w->ks[j]] != i + 1)
            continue;
        struct recording_pin *x = &out[(*o)++];
        *x = *p;
        x->id = ++*next_id;
        x->split_from = p->id;
        x->timed_by_kernel = 1;
        x->start_ns = k->start_ns;
        x->end_ns = k->end_ns;
        x->duration_ns = recording_sat_sub(k->end_ns, k->start_ns);
        x->blocked_in = NULL; /* its own copy; the extra (blocker, downcall) is the session's, shared */
        if (dup_opt(p->blocked_in, &x->blocked_in))
            return -ENOMEM;
    }
    return 0;
}

static void free_pin_strings(struct recording_pin *p)
{
    free(p->blocked_in);
}

/* The session's pins with each replaced one in its place as its pieces (pieces in all). 0 or
 * -ENOMEM (the session unchanged). */
static int replace_pins(struct park_split *w, size_t pieces)
{
    struct recording_session *s = w->s;
    size_t split = 0;
    for (size_t i = 0; i < s->n_pins; i++)
        split += replaced(w, i);
    size_t n_out = s->n_pins - split + pieces;
    struct recording_pin *out = calloc(n_out, sizeof(*out));
    if (!out)
        return -ENOMEM;
    uint64_t next_id = 0;
    for (size_t i = 0; i < s->n_pins; i++)
        if (s->pins[i].id > next_id)
            next_id = s->pins[i].id;
    size_t o = 0;
    for (size_t i = 0; i < s->n_pins; i++) {
        if (!replaced(w, i)) {
            out[o++] = s->pins[i]; /* moved: its strings now belong to out */
            continue;
        }
        if (put_pieces(w, i, out, &o, n_out, &next_id)) {
            for (size_t j = 0; j < o; j++)
                if (out[j].split_from)
                    free_pin_strings(&out[j]);
            free(out);
            return -ENOMEM;
        }
    }
    for (size_t i = 0; i < s->n_pins; i++)
        if (replaced(w, i))
            free_pin_strings(&s->pins[i]);
    free(s->pins);
    s->pins = out;
    s->n_pins = o;
    s->pins_split = split;
    return 0;
}

int kernel_split_parks(struct recording_session *s)
{
    if (s->hello.mode != VTPIN__V1__LOAD_MODE__ATTACH || s->n_kintervals == 0 || s->n_pins == 0)
        return 0;
    struct park_split w = {.s = s, .period = sample_period(s)};
    int rc = -ENOMEM;
    size_t nc = 0;
    w.owner = calloc(s->n_kintervals, sizeof(*w.owner));
    size_t *cand = malloc(s->n_pins * sizeof(*cand));
    w.chain = calloc(s->n_pins, sizeof(*w.chain));
    w.loop_parks = calloc(s->n_pins, 1);
    if (!w.owner || !cand || !w.chain || !w.loop_parks || sleeps_by_carrier(s, &w.ks, &w.nk, NULL))
        goto done;
    for (size_t i = 0; i < s->n_pins; i++)
        if (attach_sampled_park(&s->pins[i]))
            cand[nc++] = i;
    sort_session = s;
    qsort(cand, nc, sizeof(*cand), pins_by_carrier_start);
    size_t pieces = claim_sleeps(&w, cand, nc);
    rc = pieces ? replace_pins(&w, pieces) : 0;
done:
    free(w.ks);
    free(w.owner);
    free(cand);
    free(w.chain);
    free(w.loop_parks);
    return rc;
}
