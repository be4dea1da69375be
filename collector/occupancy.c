/* Per-carrier occupancy: see occupancy.h for the time model.
 *
 * Each carrier has a cursor (acct): its time is accounted up to there. Every
 * event first brings the cursor up to the event's time, accounting the span
 * with the state the carrier had before the event, then changes the state.
 * A span is
 *   pinned  while a pin is in progress (always busy too, whatever the source);
 *   busy    while a hog is in progress (it runs, whatever the source);
 *   busy or idle, by the mounted vthread, for a carrier with mount events;
 *   pending otherwise: its state is decided by the carrier's next sample (or
 *           first mount), which then moves it to busy or idle.
 * Pending time is in no total and no percentage until it is decided.
 *
 * Every span goes into the carrier's totals and into a ring of buckets
 * (bucket number = time / bucket_ns, slot = number mod ring size); a slot
 * holding an older bucket number is cleared when a newer bucket reuses it,
 * and views only read slots whose number is inside the window.
 *
 * Hogged time is a total of its own beside the split: a hog is reported once
 * it has lasted hog=, so the part before its report (already accounted as
 * busy, or pending) is added at its start, and the rest as the cursor moves.
 *
 * All memory is allocated by occupancy_new; events never allocate. */
#include "occupancy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/table.h"

#define NAME_CAP 64
#define CULPRIT_CAP 256
#define PIN_REASON_NATIVE_BLOCK 6 /* vtpin.v1.PinReason */
#define MAX_BUCKETS (1u << 20)

enum source {
    SRC_NONE = 0, /* nothing seen yet: time is not accounted */
    SRC_PINS,     /* only pins and hogs so far: the other time is pending */
    SRC_SAMPLED,  /* samples: non-pinned time is pending until the next sample */
    SRC_EXACT,    /* mount events: every instant is known */
};

enum span_kind { SPAN_IDLE, SPAN_BUSY, SPAN_PINNED, SPAN_PENDING };

struct bucket {
    int64_t id; /* bucket number held by this slot; INT64_MIN when never used */
    int64_t busy, pinned, idle, pending;
};

struct pin {
    int active;
    uint64_t id;
    int64_t start; /* as reported (only clamped into [0, TIME_MAX]): shown and used by alerts */
    int64_t vthread_id;
    int reason;
    char culprit[CULPRIT_CAP];
    char blocker[CULPRIT_CAP]; /* what it waits for (common/blocker_text.h), "" when not known */
};

struct hog {
    int active;
    uint64_t id;     /* kept after its end, with counted: a hog re-sent after a reconnect is counted once */
    int64_t start;   /* as reported (clamped as a pin's) */
    int64_t counted; /* its time is in the carrier's hogged total up to here */
    int64_t vthread_id;
    char culprit[CULPRIT_CAP];
};

struct carrier {
    int32_t tid;
    enum source src;
    int64_t vthread_id; /* mounted (exact) or last seen (sampled, pins) */
    int64_t acct;       /* time accounted up to here (valid unless SRC_NONE) */
    int64_t seen_at;    /* the latest mount or sample (its own time) */
    uint64_t mounts;
    int64_t busy, pinned, idle, pending;
    int64_t hogged; /* time of ended hogs, and of the one in progress up to the cursor */
    struct pin pin;
    struct hog hog;
    struct bucket *ring;
    char name[NAME_CAP];
};

struct occupancy {
    unsigned max, count;
    unsigned nbuckets;
    int64_t window_ns, bucket_ns;
    int64_t now; /* latest time seen; INT64_MIN before any */
    uint64_t dropped;
    unsigned refused;         /* refused tids remembered in the table (at most max) */
    struct carrier *carriers; /* [count] of [cap], grown as carriers come: a JVM costs what it uses */
    unsigned cap;
    unsigned *order;       /* carrier indexes sorted by name, then tid */
    int32_t *refused_tids; /* [refused] */
    struct table by_tid;   /* item i < max: carriers[i]; max + k: refused_tids[k]; never removed */
};

/* ---- helpers ------------------------------------------------------------ */

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b < 0) ? q - 1 : q;
}

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* Copies src (NULL = "") into dst[cap], cutting on a UTF-8 character boundary. */
static void copy_text(char *dst, size_t cap, const char *src)
{
    size_t n = src ? strlen(src) : 0;
    if (n >= cap) {
        n = cap - 1;
        while (n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80)
            n--;
    }
    if (n)
        memcpy(dst, src, n);
    dst[n] = '\0';
}

/* Every time entering the model, clamped to [0, TIME_MAX]: CLOCK_MONOTONIC
 * never leaves it, and within it spans, bucket edges and sums cannot
 * overflow, whatever a damaged or hostile agent sends. */
#define TIME_MAX (INT64_MAX / 4)

static int64_t clamp_time(int64_t t)
{
    return t < 0 ? 0 : t > TIME_MAX ? TIME_MAX : t;
}

static void note_time(struct occupancy *o, int64_t t)
{
    if (t > o->now)
        o->now = t;
}

/* ---- carriers ------------------------------------------------------------ */

static uint64_t tid_hash(int32_t tid)
{
    return hash_u64((uint32_t)tid);
}

static int tid_eq(const void *ctx, uint32_t item, const void *key)
{
    const struct occupancy *o = ctx;
    int32_t tid = item < o->max ? o->carriers[item].tid : o->refused_tids[item - o->max];
    return tid == *(const int32_t *)key;
}

static int carrier_before(const struct carrier *a, const struct carrier *b)
{
    int c = strcmp(a->name, b->name);
    return c < 0 || (c == 0 && a->tid < b->tid);
}

static void order_insert(struct occupancy *o, unsigned idx, unsigned n)
{
    unsigned pos = n;
    while (pos > 0 && carrier_before(&o->carriers[idx], &o->carriers[o->order[pos - 1]]))
        pos--;
    memmove(&o->order[pos + 1], &o->order[pos], (n - pos) * sizeof(o->order[0]));
    o->order[pos] = idx;
}

static void order_remove(struct occupancy *o, unsigned idx)
{
    unsigned pos = 0;
    while (o->order[pos] != idx)
        pos++;
    memmove(&o->order[pos], &o->order[pos + 1], (o->count - pos - 1) * sizeof(o->order[0]));
}

/* Room for one more carrier: twice as many, at most max. 0 or -ENOMEM. */
static int grow(struct occupancy *o)
{
    unsigned ncap = o->cap ? o->cap * 2 : 4;
    if (ncap > o->max)
        ncap = o->max;
    struct carrier *n = realloc(o->carriers, ncap * sizeof(*n));
    if (!n)
        return -ENOMEM;
    o->carriers = n;
    o->cap = ncap;
    return 0;
}

/* The carrier, declared if new (name NULL: unnamed ""), renamed if name is not
 * NULL and differs; NULL when refused because max carriers are tracked. */
static struct carrier *carrier_get(struct occupancy *o, int32_t tid, const char *name)
{
    int64_t at = table_find(&o->by_tid, tid_hash(tid), tid_eq, o, &tid);
    if (at >= 0 && at < o->max) {
        struct carrier *c = &o->carriers[at];
        if (name && strcmp(c->name, name) != 0) {
            unsigned idx = (unsigned)at;
            order_remove(o, idx);
            copy_text(c->name, sizeof(c->name), name);
            order_insert(o, idx, o->count - 1);
        }
        return c;
    }
    if (at >= 0)
        return NULL; /* refused before, already counted */
    if (o->count == o->max) {
        o->dropped++;
        if (o->refused < o->max && table_add(&o->by_tid, tid_hash(tid), o->max + o->refused) == 0)
            o->refused_tids[o->refused++] = tid; /* remembered, so it is counted once */
        return NULL;
    }
    if (o->count == o->cap && grow(o) != 0) {
        o->dropped++; /* out of memory: refused as past max, but not remembered (it may fit later) */
        return NULL;
    }
    struct bucket *ring = malloc(o->nbuckets * sizeof(*ring));
    if (!ring) {
        o->dropped++;
        return NULL;
    }
    if (table_add(&o->by_tid, tid_hash(tid), o->count) != 0) {
        free(ring);
        return NULL; /* cannot happen: room for max carriers and max refused tids */
    }
    unsigned idx = o->count;
    struct carrier *c = &o->carriers[idx];
    memset(c, 0, sizeof(*c));
    c->ring = ring;
    c->tid = tid;
    copy_text(c->name, sizeof(c->name), name);
    for (unsigned i = 0; i < o->nbuckets; i++)
        c->ring[i] = (struct bucket){.id = INT64_MIN};
    order_insert(o, idx, o->count);
    o->count++;
    return c;
}

/* ---- accounting ---------------------------------------------------------- */

/* The ring slot for bucket id, cleared if it held an older bucket; NULL if it
 * already holds a newer one (id has left the ring). */
static struct bucket *bucket_slot(const struct occupancy *o, struct carrier *c, int64_t id)
{
    int64_t i = id % (int64_t)o->nbuckets;
    struct bucket *b = &c->ring[i < 0 ? i + o->nbuckets : i];
    if (b->id == id)
        return b;
    if (b->id > id)
        return NULL;
    *b = (struct bucket){.id = id};
    return b;
}

static void bucket_add(struct bucket *b, enum span_kind kind, int64_t d)
{
    switch (kind) {
    case SPAN_IDLE:
        b->idle += d;
        break;
    case SPAN_PINNED: /* pinned time is busy time */
        b->pinned += d;
        b->busy += d;
        break;
    case SPAN_BUSY:
        b->busy += d;
        break;
    case SPAN_PENDING:
        b->pending += d;
        break;
    }
}

/* Accounts [a, b) of carrier c as kind. */
static void span_add(struct occupancy *o, struct carrier *c, int64_t a, int64_t b, enum span_kind kind)
{
    if (b <= a)
        return;
    switch (kind) {
    case SPAN_IDLE:
        c->idle += b - a;
        break;
    case SPAN_PINNED:
        c->pinned += b - a;
        c->busy += b - a;
        break;
    case SPAN_BUSY:
        c->busy += b - a;
        break;
    case SPAN_PENDING:
        c->pending += b - a;
        break;
    }
    int64_t first = floor_div(a, o->bucket_ns), last = floor_div(b - 1, o->bucket_ns);
    if (last - first >= (int64_t)o->nbuckets) /* only the newest buckets fit in the ring */
        first = last - o->nbuckets + 1;
    for (int64_t id = first; id <= last; id++) {
        int64_t lo = max64(a, id * o->bucket_ns), hi = min64(b, (id + 1) * o->bucket_ns);
        struct bucket *bk = bucket_slot(o, c, id);
        if (bk)
            bucket_add(bk, kind, hi - lo);
    }
}

/* Accounts c up to t with its current state; times before the cursor are
 * clamped to it (nothing is accounted twice or negatively). */
static void carrier_advance(struct occupancy *o, struct carrier *c, int64_t t)
{
    if (c->src == SRC_NONE || t <= c->acct)
        return;
    enum span_kind kind;
    if (c->pin.active)
        kind = SPAN_PINNED;
    else if (c->hog.active)
        kind = SPAN_BUSY;
    else if (c->src == SRC_EXACT)
        kind = c->vthread_id ? SPAN_BUSY : SPAN_IDLE;
    else
        kind = SPAN_PENDING;
    span_add(o, c, c->acct, t, kind);
    if (c->hog.active) {
        c->hogged += t - c->acct;
        c->hog.counted = t;
    }
    c->acct = t;
}

/* Decides all pending time of c as busy or idle. */
static void pending_resolve(const struct occupancy *o, struct carrier *c, int busy)
{
    if (c->pending == 0)
        return;
    for (unsigned i = 0; i < o->nbuckets; i++) {
        struct bucket *b = &c->ring[i];
        if (busy)
            b->busy += b->pending;
        else
            b->idle += b->pending;
        b->pending = 0;
    }
    if (busy)
        c->busy += c->pending;
    else
        c->idle += c->pending;
    c->pending = 0;
}

/* Starts c's accounting at t if nothing was seen yet; returns 1 if it did. */
static int carrier_start(struct carrier *c, enum source src, int64_t t)
{
    if (c->src != SRC_NONE)
        return 0;
    c->src = src;
    c->acct = t;
    return 1;
}

static void pin_clear(struct pin *p)
{
    p->active = 0;
    p->id = 0;
    p->start = 0;
    p->vthread_id = 0;
    p->reason = 0;
    p->culprit[0] = '\0';
    p->blocker[0] = '\0';
}

/* Ends the hog in progress (if any); its id and what was counted of it stay. */
static void hog_clear(struct hog *h)
{
    h->active = 0;
    h->vthread_id = 0;
    h->culprit[0] = '\0';
}

/* A hog cannot unmount: what a mount or sample at t says (vthread_id, 0 =
 * none) ends the hog in progress, unless it is older than the hog's start (a
 * late record of the time before it). Call after advancing c to t. */
static void hog_end_by_mount(struct carrier *c, int64_t vthread_id, int64_t t)
{
    if (c->hog.active && t >= c->hog.start &&
        (vthread_id == 0 || (c->hog.vthread_id != 0 && vthread_id != c->hog.vthread_id)))
        hog_clear(&c->hog);
}

/* ---- API ------------------------------------------------------------------ */

struct occupancy *occupancy_new(unsigned max_carriers, int64_t window_ns, int64_t bucket_ns)
{
    if (max_carriers == 0 || max_carriers > (1u << 24) || bucket_ns <= 0 || window_ns <= 0 ||
        window_ns / bucket_ns >= MAX_BUCKETS) {
        errno = EINVAL;
        return NULL;
    }
    struct occupancy *o = calloc(1, sizeof(*o));
    if (!o)
        return NULL;
    o->max = max_carriers;
    o->window_ns = window_ns;
    o->bucket_ns = bucket_ns;
    o->nbuckets = (unsigned)((window_ns + bucket_ns - 1) / bucket_ns);
    o->now = INT64_MIN;
    o->order = calloc(max_carriers, sizeof(*o->order));
    o->refused_tids = calloc(max_carriers, sizeof(*o->refused_tids));
    int rc = table_init(&o->by_tid, 2 * (size_t)max_carriers, TABLE_FIXED); /* carriers and refused tids */
    if (!o->order || !o->refused_tids || rc) {
        occupancy_free(o);
        errno = ENOMEM;
        return NULL;
    }
    return o;
}

void occupancy_free(struct occupancy *o)
{
    if (!o)
        return;
    for (unsigned i = 0; i < o->count; i++)
        free(o->carriers[i].ring);
    free(o->carriers);
    free(o->order);
    free(o->refused_tids);
    table_fini(&o->by_tid);
    free(o);
}

size_t occupancy_memory(const struct occupancy *o)
{
    return sizeof(*o) + (size_t)o->cap * sizeof(*o->carriers) + (size_t)o->count * o->nbuckets * sizeof(struct bucket) +
           (size_t)o->max * (sizeof(*o->order) + sizeof(*o->refused_tids)) + table_bytes(&o->by_tid);
}

int occupancy_carrier(struct occupancy *o, int32_t tid, const char *name, int64_t t)
{
    t = clamp_time(t);
    note_time(o, t);
    return carrier_get(o, tid, name) ? 0 : -ENOSPC;
}

void occupancy_mount(struct occupancy *o, int32_t tid, int64_t vthread_id, int64_t t)
{
    t = clamp_time(t);
    struct carrier *c = carrier_get(o, tid, NULL);
    if (!c)
        return;
    note_time(o, t);
    if (!carrier_start(c, SRC_EXACT, t)) {
        carrier_advance(o, c, t);
        if (c->src != SRC_EXACT) /* what was pending continued the last known state */
            pending_resolve(o, c, c->vthread_id != 0);
        c->src = SRC_EXACT;
    }
    /* A pinned virtual thread cannot unmount: an unmount, or a mount of another
     * thread, means the pin is over and its end was lost. */
    if (c->pin.active && (vthread_id == 0 || (c->pin.vthread_id != 0 && vthread_id != c->pin.vthread_id)))
        pin_clear(&c->pin);
    hog_end_by_mount(c, vthread_id, t);
    c->vthread_id = vthread_id;
    if (t > c->seen_at)
        c->seen_at = t;
    if (vthread_id)
        c->mounts++;
}

void occupancy_sample(struct occupancy *o, int32_t tid, int64_t vthread_id, int64_t t)
{
    t = clamp_time(t);
    struct carrier *c = carrier_get(o, tid, NULL);
    if (!c)
        return;
    note_time(o, t);
    if (c->src == SRC_EXACT)
        return; /* mount events are exact: samples add nothing */
    if (!carrier_start(c, SRC_SAMPLED, t)) {
        carrier_advance(o, c, t);
        pending_resolve(o, c, vthread_id != 0);
        c->src = SRC_SAMPLED;
    }
    hog_end_by_mount(c, vthread_id, t);
    c->vthread_id = vthread_id;
    if (t > c->seen_at)
        c->seen_at = t;
}

void occupancy_pin_start(struct occupancy *o, int32_t tid, uint64_t pin_id, int reason, const char *culprit,
                         int64_t vthread_id, int64_t start)
{
    start = clamp_time(start);
    struct carrier *c = carrier_get(o, tid, NULL);
    if (!c)
        return;
    note_time(o, start);
    if (!carrier_start(c, SRC_PINS, start))
        carrier_advance(o, c, start); /* closes a pin or hog in progress at this start */
    hog_clear(&c->hog);               /* the agent ends a hog when a pin begins */
    c->pin.active = 1;
    c->pin.id = pin_id;
    c->pin.start = start;
    c->pin.vthread_id = vthread_id;
    c->pin.reason = reason;
    copy_text(c->pin.culprit, sizeof(c->pin.culprit), culprit);
    c->pin.blocker[0] = '\0';
    if (vthread_id) /* the pinned thread is the mounted one */
        c->vthread_id = vthread_id;
}

void occupancy_pin_blocker(struct occupancy *o, uint64_t pin_id, const char *blocker)
{
    for (unsigned i = 0; i < o->count; i++) {
        struct carrier *c = &o->carriers[i];
        if (c->pin.active && c->pin.id == pin_id) {
            copy_text(c->pin.blocker, sizeof(c->pin.blocker), blocker);
            return;
        }
    }
}

void occupancy_pin_end(struct occupancy *o, uint64_t pin_id, int64_t t)
{
    t = clamp_time(t);
    for (unsigned i = 0; i < o->count; i++) {
        struct carrier *c = &o->carriers[i];
        if (c->pin.active && c->pin.id == pin_id) {
            note_time(o, t);
            carrier_advance(o, c, t);
            pin_clear(&c->pin);
            return;
        }
    }
}

void occupancy_hog_start(struct occupancy *o, int32_t tid, uint64_t hog_id, const char *culprit, int64_t vthread_id,
                         int64_t start)
{
    start = clamp_time(start);
    struct carrier *c = carrier_get(o, tid, NULL);
    if (!c)
        return;
    note_time(o, start);
    if (!carrier_start(c, SRC_PINS, start))
        carrier_advance(o, c, start); /* closes a hog in progress at this start */
    hog_clear(&c->hog);
    /* the time from its start to the cursor passed before the HogStart came;
     * a re-sent hog's time is counted from where it was counted to */
    int ended_by_pin = c->pin.active && c->pin.start >= start;
    int64_t from = c->hog.id == hog_id ? max64(start, c->hog.counted) : start;
    int64_t to = ended_by_pin ? c->pin.start : c->acct;
    c->hogged += max64(0, to - from);
    c->hog.id = hog_id;
    c->hog.start = start;
    c->hog.counted = max64(from, to);
    if (ended_by_pin)
        return;         /* over: counted, not shown */
    pin_clear(&c->pin); /* the agent saw no pin from the hog's start: that pin's end was lost */
    c->hog.active = 1;
    c->hog.vthread_id = vthread_id;
    copy_text(c->hog.culprit, sizeof(c->hog.culprit), culprit);
    if (vthread_id) /* the hog is the mounted thread */
        c->vthread_id = vthread_id;
}

void occupancy_hog_end(struct occupancy *o, uint64_t hog_id, int64_t t)
{
    t = clamp_time(t);
    for (unsigned i = 0; i < o->count; i++) {
        struct carrier *c = &o->carriers[i];
        if (c->hog.active && c->hog.id == hog_id) {
            note_time(o, t);
            carrier_advance(o, c, t);
            hog_clear(&c->hog);
            return;
        }
    }
}

void occupancy_advance(struct occupancy *o, int64_t now)
{
    now = clamp_time(now);
    note_time(o, now);
    for (unsigned i = 0; i < o->count; i++)
        carrier_advance(o, &o->carriers[i], now);
}

size_t occupancy_view(struct occupancy *o, struct carrier_view *out, size_t cap)
{
    /* the window: the nbuckets buckets up to the one holding the last instant before now */
    int64_t last = o->now == INT64_MIN ? INT64_MIN : floor_div(o->now - 1, o->bucket_ns);
    for (size_t k = 0; k < cap && k < o->count; k++) {
        struct carrier *c = &o->carriers[o->order[k]];
        struct carrier_view *v = &out[k];
        memset(v, 0, sizeof(*v));
        v->tid = c->tid;
        v->name = c->name;
        v->mounts = c->mounts;
        v->seen_at = c->seen_at;
        v->busy_ns = c->busy;
        v->pinned_ns = c->pinned;
        v->idle_ns = c->idle;
        v->hogged_ns = c->hogged;
        if (c->pin.active) {
            v->state = c->pin.reason == PIN_REASON_NATIVE_BLOCK ? CARRIER_NATIVE_BLOCK : CARRIER_PINNED;
            v->vthread_id = c->pin.vthread_id ? c->pin.vthread_id : c->vthread_id;
            v->pinned_since = c->pin.start;
            v->reason = c->pin.reason;
            v->culprit = c->pin.culprit;
            v->blocker = c->pin.blocker[0] ? c->pin.blocker : NULL;
        } else if (c->hog.active) {
            v->state = CARRIER_HOG;
            v->vthread_id = c->hog.vthread_id ? c->hog.vthread_id : c->vthread_id;
            v->hogged_since = c->hog.start;
            v->culprit = c->hog.culprit;
        } else {
            v->state = c->vthread_id ? CARRIER_RUNNING : CARRIER_IDLE;
            v->vthread_id = c->vthread_id;
        }
        if (last == INT64_MIN)
            continue;
        int64_t busy = 0, pinned = 0, idle = 0;
        for (unsigned i = 0; i < o->nbuckets; i++) {
            const struct bucket *b = &c->ring[i];
            if (b->id <= last && b->id > last - (int64_t)o->nbuckets) {
                busy += b->busy;
                pinned += b->pinned;
                idle += b->idle;
            }
        }
        if (busy + idle > 0) {
            double covered = (double)(busy + idle);
            v->busy_pct = 100.0 * (double)busy / covered;
            v->pinned_pct = 100.0 * (double)pinned / covered;
            v->idle_pct = 100.0 * (double)idle / covered;
        }
    }
    return o->count;
}

uint64_t occupancy_carriers_dropped(const struct occupancy *o)
{
    return o->dropped;
}

int occupancy_alert_check(struct occupancy *o, const struct alert_rule *rule, int64_t now, struct alert_state *st)
{
    now = clamp_time(now);
    unsigned held = 0, hogged = 0, n = 0;
    for (unsigned i = 0; i < o->count; i++) {
        const struct carrier *c = &o->carriers[i];
        int pinned = c->pin.active && now - c->pin.start > rule->hold_ns;
        int hog = c->hog.active && now - c->hog.start > rule->hold_ns; /* never both: one excludes the other */
        if (!pinned && !hog)
            continue;
        held++;
        hogged += (unsigned)hog;
        if (n < sizeof(st->tids) / sizeof(st->tids[0])) {
            unsigned j = n++; /* insertion sort: tids ascending */
            while (j > 0 && st->tids[j - 1] > c->tid) {
                st->tids[j] = st->tids[j - 1];
                j--;
            }
            st->tids[j] = c->tid;
        }
    }
    int active = rule->k == 0 ? (o->count > 0 && held == o->count) : held >= rule->k;
    int changed = active != st->active;
    st->active = active;
    st->held = held;
    st->hogged = hogged;
    st->total = o->count;
    st->tid_count = n;
    return changed;
}
