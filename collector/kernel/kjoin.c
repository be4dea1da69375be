#include "kjoin.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/idmap.h"

#include "wire_names.h"

struct kjoin {
    struct idmap *by_host; /* host tid -> struct kjoin_carrier */
    size_t max;
};

struct kjoin *kjoin_new(size_t max)
{
    struct kjoin *j = calloc(1, sizeof(*j));
    if (!j || !(j->by_host = idmap_new())) {
        free(j);
        return NULL;
    }
    j->max = max;
    return j;
}

void kjoin_free(struct kjoin *j)
{
    if (!j)
        return;
    size_t pos = 0;
    struct kjoin_carrier *c;
    while ((c = kjoin_next(j, &pos)))
        free(c->proc_stack);
    idmap_free(j->by_host, free);
    free(j);
}

size_t kjoin_count(const struct kjoin *j)
{
    return idmap_count(j->by_host);
}

int kjoin_add(struct kjoin *j, void *owner, int32_t host_tid, int32_t ns_tid)
{
    struct kjoin_carrier *c = idmap_get(j->by_host, (uint32_t)host_tid);
    if (c) {
        /* a tid reused by a thread of another JVM, or the same carrier again */
        if (c->owner != owner || c->ns_tid != ns_tid) {
            free(c->proc_stack);
            memset(c, 0, sizeof(*c));
            c->host_tid = host_tid;
            c->ns_tid = ns_tid;
            c->owner = owner;
            return 1;
        }
        return 0;
    }
    if (idmap_count(j->by_host) >= j->max)
        return -ENOSPC;
    c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->host_tid = host_tid;
    c->ns_tid = ns_tid;
    c->owner = owner;
    if (idmap_put(j->by_host, (uint32_t)host_tid, c, NULL) != 0) {
        free(c);
        return -ENOMEM;
    }
    return 1;
}

struct kjoin_carrier *kjoin_by_host(const struct kjoin *j, int32_t host_tid)
{
    return idmap_get(j->by_host, (uint32_t)host_tid);
}

struct kjoin_carrier *kjoin_next(const struct kjoin *j, size_t *pos)
{
    uint64_t key;
    void *value;
    return idmap_next(j->by_host, pos, &key, &value) ? value : NULL;
}

struct kjoin_carrier *kjoin_by_ns(const struct kjoin *j, const void *owner, int32_t ns_tid)
{
    size_t pos = 0;
    struct kjoin_carrier *c;
    while ((c = kjoin_next(j, &pos)))
        if (c->owner == owner && c->ns_tid == ns_tid)
            return c;
    return NULL;
}

/* Removes the carriers of owner, all of them (host_tid < 0) or that one thread. */
static void remove_matching(struct kjoin *j, const void *owner, int32_t host_tid,
                            void (*gone)(void *arg, int32_t host_tid), void *arg)
{
    struct idmap *keep = idmap_new();
    if (!keep)
        return; /* stays tracked; harmless, and freed with the map */
    size_t pos = 0;
    uint64_t key;
    void *value;
    while (idmap_next(j->by_host, &pos, &key, &value)) {
        struct kjoin_carrier *c = value;
        if (c->owner == owner && (host_tid < 0 || c->host_tid == host_tid)) {
            if (gone)
                gone(arg, c->host_tid);
            free(c->proc_stack);
            free(c);
        } else if (idmap_put(keep, key, c, NULL) != 0) {
            free(c); /* out of memory: forgotten */
        }
    }
    idmap_free(j->by_host, NULL);
    j->by_host = keep;
}

void kjoin_remove_owner(struct kjoin *j, const void *owner, void (*gone)(void *arg, int32_t host_tid), void *arg)
{
    remove_matching(j, owner, -1, gone, arg);
}

void kjoin_remove(struct kjoin *j, const void *owner, int32_t host_tid, void (*gone)(void *arg, int32_t host_tid),
                  void *arg)
{
    if (host_tid >= 0)
        remove_matching(j, owner, host_tid, gone, arg);
}

/* iv overlaps a pin of c: the one in progress, or one of the last that ended. */
static int overlaps_pin(const struct kjoin_carrier *c, const struct kview_interval *iv)
{
    if (!c->pin_id)
        return 0;
    if (c->pin_open && iv->end_ns > c->pin_start)
        return 1;
    for (unsigned i = 0; i < c->n_past; i++)
        if (iv->end_ns > c->past_start[i] && iv->start_ns < c->past_end[i])
            return 1;
    return 0;
}

/* Adds the held part of iv to c. While the pin is open its end is unknown:
 * the agent's PinEnd comes in a later batch than the kernel's intervals, and
 * an interval after the real end (a preemption of the CPU work that follows)
 * is held until then; kjoin_pin_end takes back what lies after the end. */
static void held_add(struct kjoin_carrier *c, const struct kview_interval *iv)
{
    uint64_t held = kjoin_held_part(c, iv);
    int preempt = iv->state == KSTATE_RUNNABLE, mounted = kjoin_mounted_sleep(iv);
    c->held_ns += held;
    if (preempt)
        c->held_preempt_ns += held;
    if (mounted)
        c->mounted_in_pins_ns += held;
    if (!held || !c->pin_open)
        return;
    if (c->n_credited == KJOIN_CREDITED) { /* the oldest stays as it is: long before the end */
        memmove(c->credited, c->credited + 1, (KJOIN_CREDITED - 1) * sizeof(c->credited[0]));
        c->n_credited--;
    }
    unsigned i = c->n_credited++;
    c->credited[i].start = iv->start_ns;
    c->credited[i].end = iv->end_ns;
    c->credited[i].held = held;
    c->credited[i].preempt = preempt;
    c->credited[i].mounted = mounted;
}

/* The pin ended at end: the intervals held while it was open count up to end only. */
static void held_correct(struct kjoin_carrier *c, int64_t end)
{
    for (unsigned i = 0; i < c->n_credited; i++) {
        int64_t hi = c->credited[i].end < end ? c->credited[i].end : end;
        uint64_t right = hi > c->credited[i].start ? (uint64_t)(hi - c->credited[i].start) : 0;
        if (right >= c->credited[i].held)
            continue;
        uint64_t over = c->credited[i].held - right;
        c->held_ns -= over;
        if (c->credited[i].preempt)
            c->held_preempt_ns -= over;
        if (c->credited[i].mounted)
            c->mounted_in_pins_ns -= over;
    }
    c->n_credited = 0;
}

uint64_t kjoin_held_part(const struct kjoin_carrier *c, const struct kview_interval *iv)
{
    if (!c->pin_id)
        return 0;
    /* All of it from its start: a pin starts on CPU, so one that starts inside
     * an off-CPU interval was found asleep (the watchdog's NATIVE_BLOCK and
     * VM_BLOCK, a sampled pin after attach) and began when the carrier fell asleep.
     * It ends with the pin it overlaps: the open one (a woken carrier waiting
     * for a CPU inside the pin is still held), the latest, or one of the last
     * that ended (the ring buffer can deliver it after several pins' events). */
    int64_t lo = iv->start_ns, hi = lo;
    if (iv->end_ns > c->pin_start)
        hi = c->pin_open || c->pin_end > iv->end_ns ? iv->end_ns : c->pin_end;
    for (unsigned i = 0; i < c->n_past; i++)
        if (iv->end_ns > c->past_start[i] && iv->start_ns < c->past_end[i]) {
            int64_t h = c->past_end[i] < iv->end_ns ? c->past_end[i] : iv->end_ns;
            if (h > hi)
                hi = h;
        }
    return hi > lo ? (uint64_t)(hi - lo) : 0;
}

void kjoin_occupancy(const struct kjoin_carrier *c, const struct kview_times *t, int64_t now, struct kjoin_occ *out)
{
    uint64_t held_asleep = c->held_ns - c->held_preempt_ns, held_preempt = c->held_preempt_ns;
    if (t->off_since && c->pin_open) { /* the interval in progress, inside the pin (from its start, as above) */
        uint64_t live = now > t->off_since ? (uint64_t)(now - t->off_since) : 0;
        if (t->state == KSTATE_RUNNABLE)
            held_preempt += live;
        else
            held_asleep += live;
    }
    uint64_t asleep = t->off_ns > t->preempt_ns ? t->off_ns - t->preempt_ns : 0;
    if (held_asleep > asleep)
        held_asleep = asleep;
    if (held_preempt > t->preempt_ns)
        held_preempt = t->preempt_ns;
    out->busy_ns = t->on_ns + t->preempt_ns - held_preempt;
    out->held_ns = held_asleep + held_preempt;
    out->idle_ns = asleep - held_asleep;
    out->runqueue_ns = t->rq_ns;
}

void kjoin_snapshot(struct kjoin_carrier *c, int64_t now, int64_t window_ns, const struct kjoin_occ *occ)
{
    int64_t step = window_ns / (KJOIN_SNAPS - 1);
    if (c->n_snaps) {
        unsigned last = (c->snap_head + c->n_snaps - 1) % KJOIN_SNAPS;
        if (now - c->snaps[last].t < step)
            return;
    }
    struct kjoin_snap s = {.t = now, .occ = *occ};
    if (c->n_snaps < KJOIN_SNAPS) {
        c->snaps[(c->snap_head + c->n_snaps) % KJOIN_SNAPS] = s;
        c->n_snaps++;
    } else { /* the oldest goes */
        c->snaps[c->snap_head] = s;
        c->snap_head = (c->snap_head + 1) % KJOIN_SNAPS;
    }
}

static uint64_t minus(uint64_t a, uint64_t b)
{
    return a > b ? a - b : 0;
}

void kjoin_window(const struct kjoin_carrier *c, int64_t now, int64_t window_ns, const struct kjoin_occ *occ,
                  struct kjoin_occ *out)
{
    *out = *occ;
    for (unsigned i = 0; i < c->n_snaps; i++) {
        const struct kjoin_snap *s = &c->snaps[(c->snap_head + i) % KJOIN_SNAPS];
        if (now - s->t <= window_ns) { /* the oldest inside the window */
            if (i == 0 && c->n_snaps < KJOIN_SNAPS)
                return; /* none dropped yet: since tracked is the window (up to one step longer) */
            out->busy_ns = minus(occ->busy_ns, s->occ.busy_ns);
            out->held_ns = minus(occ->held_ns, s->occ.held_ns);
            out->idle_ns = minus(occ->idle_ns, s->occ.idle_ns);
            out->runqueue_ns = minus(occ->runqueue_ns, s->occ.runqueue_ns);
            return;
        }
    }
}

int kjoin_mounted_sleep(const struct kview_interval *iv)
{
    /* kstate.h's enums are the wire's (kglue.c asserts it) */
    return wire_held_sleep(iv->state, iv->vthread_id, iv->java_wait) && iv->end_ns > iv->start_ns;
}

struct kjoin_carrier *kjoin_interval(struct kjoin *j, const struct kview_interval *iv, kjoin_emit emit, void *arg)
{
    struct kjoin_carrier *c = kjoin_by_host(j, iv->tid);
    if (!c)
        return NULL;
    if (iv->vthread_id >= 0)
        c->java_known = 1;
    if (kjoin_mounted_sleep(iv))
        c->mounted_ns += (uint64_t)(iv->end_ns - iv->start_ns);
    if (overlaps_pin(c, iv)) {
        held_add(c, iv);
        emit(arg, c, iv);
        return c;
    }
    if (c->n_recent == KJOIN_RECENT) { /* the oldest goes: unexplained, and recorded so when held */
        if (kjoin_mounted_sleep(&c->recent[0]))
            emit(arg, c, &c->recent[0]);
        memmove(c->recent, c->recent + 1, (KJOIN_RECENT - 1) * sizeof(c->recent[0]));
        c->n_recent--;
    }
    c->recent[c->n_recent++] = *iv;
    return c;
}

void kjoin_pin_start(struct kjoin *j, struct kjoin_carrier *c, uint64_t pin_id, int64_t start, kjoin_emit emit,
                     void *arg)
{
    (void)j;
    /* kept intervals since the previous pin ended go too: after attach, pins are
     * sampled, and a park between two sampled pins of a loop is one of its parks */
    int64_t from = c->pin_id && !c->pin_open && c->pin_end < start ? c->pin_end : start;
    c->pin_open = 1;
    c->pin_id = pin_id;
    c->pin_start = start;
    c->pin_end = 0;
    c->n_credited = 0; /* a previous pin never ended: what it held stays */
    unsigned kept = 0;
    for (unsigned i = 0; i < c->n_recent; i++) {
        if (c->recent[i].end_ns > from) {
            held_add(c, &c->recent[i]); /* only its part after start */
            emit(arg, c, &c->recent[i]);
        } else
            c->recent[kept++] = c->recent[i];
    }
    c->n_recent = kept;
}

void kjoin_flush(struct kjoin *j, const void *owner, kjoin_emit emit, void *arg)
{
    size_t pos = 0;
    struct kjoin_carrier *c;
    while ((c = kjoin_next(j, &pos))) {
        if (c->owner != owner)
            continue;
        for (unsigned i = 0; i < c->n_recent; i++)
            if (kjoin_mounted_sleep(&c->recent[i]))
                emit(arg, c, &c->recent[i]);
        c->n_recent = 0;
    }
}

void kjoin_pin_end(struct kjoin *j, const void *owner, uint64_t pin_id, int64_t end)
{
    size_t pos = 0;
    struct kjoin_carrier *c;
    while ((c = kjoin_next(j, &pos)))
        if (c->owner == owner && c->pin_open && c->pin_id == pin_id) {
            c->pin_open = 0;
            c->pin_end = end;
            held_correct(c, end);
            if (c->n_past == KJOIN_PAST) {
                memmove(c->past_start, c->past_start + 1, (KJOIN_PAST - 1) * sizeof(c->past_start[0]));
                memmove(c->past_end, c->past_end + 1, (KJOIN_PAST - 1) * sizeof(c->past_end[0]));
                c->n_past--;
            }
            c->past_start[c->n_past] = c->pin_start;
            c->past_end[c->n_past++] = end;
            return;
        }
}
