/* The HTML report: one self-contained page (inline CSS and JS from
 * cli/report/report.html, nothing fetched) plus the session as compact JSON that
 * the page's script renders: summary, ranked sites, a flame graph of
 * pinned time, a per-carrier timeline, notices and counters.
 *
 * Size is bounded here, not in the browser: stacks arrive aggregated into a
 * tree (nodes under HTML_FLAME_MIN of the pinned total are left off), and
 * when there are more than HTML_LANE_DETAIL pins the short ones on a lane
 * are merged per 1/HTML_LANE_BUCKETS of the time axis. Occupancy becomes a
 * busy fraction per bucket. */
#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/frames_kind.h"
#include "common/grow.h"
#include "common/hash.h"
#include "common/json.h"
#include "common/table.h"
#include "pin_stream.h"
#include "sites.h"
#include "views.h"
#include "wire.h"

#define HTML_SITES 100
#define HTML_FLAME_MIN 20000   /* a node under 1/20000 of the total is not drawn at any zoom that matters */
#define HTML_FLAME_NODES 60000 /* and never more nodes than this */
#define HTML_LANE_DETAIL 20000 /* pins shown one by one up to this many */
#define HTML_LANE_BUCKETS 2000
#define HTML_BUSY_BUCKETS 1000

extern const char report_html_template[]; /* generated from cli/report/report.html */

/* ---- a string table for the lanes (virtual threads, culprits) ---- */

struct strtab {
    char **items; /* copies */
    size_t n, cap;
    struct table index; /* items by content */
};

static int item_is(const void *ctx, uint32_t item, const void *key)
{
    const struct strtab *t = ctx;
    return strcmp(t->items[item], key) == 0;
}

/* Index of a copy of s, or -1 for NULL, or -ENOMEM. */
static int64_t strtab_add(struct strtab *t, const char *s)
{
    if (!s)
        return -1;
    uint64_t h = hash_string(s);
    int64_t found = table_find(&t->index, h, item_is, t, s);
    if (found >= 0)
        return found;
    if (t->n == t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : 256;
        char **n = realloc(t->items, ncap * sizeof(*n));
        if (!n)
            return -ENOMEM;
        t->items = n;
        t->cap = ncap;
    }
    if (t->n > TABLE_MAX_ITEM || !(t->items[t->n] = strdup(s)))
        return -ENOMEM;
    if (table_add(&t->index, h, (uint32_t)t->n) != 0) {
        free(t->items[t->n]);
        return -ENOMEM;
    }
    return (int64_t)t->n++;
}

static void strtab_fini(struct strtab *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->items[i]);
    free(t->items);
    table_fini(&t->index);
}

/* ---- the page's data, through common/json.c ----
 *
 * Compact (no whitespace) and with JSON_EMBED_HTML on every key and string:
 * no '<', '>' or '&' is left in the data, so no name can end the data's
 * <script> element (or open a comment that hides its end). */

static void put_jvm(struct json *j, const struct recording *r, const struct recording_session *s)
{
    const char *occ[] = {"off", "exact", "sampled"};
    int64_t unix_ns = 0;
    json_key(j, "jvm");
    json_object_begin(j);
    json_kv_int(j, "pid", s->has_hello ? s->hello.pid : 0);
    json_kv_string(j, "java", s->hello.java_version);
    json_kv_string(j, "vm", s->hello.vm_name);
    json_kv_string(j, "vendor", s->hello.vm_vendor);
    json_kv_string(j, "host", s->hello.host);
    json_kv_string(j, "mode", wire_mode_name(s->hello.mode));
    json_kv_string(j, "agent", s->hello.agent_version);
    json_kv_string(j, "options", s->hello.options);
    json_kv_int(j, "parallelism", s->hello.parallelism);
    json_object_end(j);
    json_key(j, "recording");
    json_object_begin(j);
    json_kv_string(j, "file", r->path);
    if (s->hello.has_clock && s->has_time && recording_unix_ns(s, s->first_ns, &unix_ns) == 0)
        json_kv_int(j, "start_unix_ms", unix_ns / 1000000);
    json_kv_int(j, "duration_ns", s->has_time ? recording_sat_sub(s->last_ns, s->first_ns) : 0);
    json_kv_bool(j, "truncated", r->truncated);
    json_kv_bool(j, "complete", s->has_goodbye && !r->truncated);
    int known_occ = s->hello.occupancy >= 0 && s->hello.occupancy <= 2 && s->has_hello;
    json_kv_string(j, "occupancy", known_occ ? occ[s->hello.occupancy] : NULL);
    json_kv_int(j, "threshold_ns", s->hello.has_threshold ? (int64_t)s->hello.threshold_ns : -1);
    json_object_end(j);
}

static void put_sites(struct json *j, const struct recording_session *s, const struct sites *sites)
{
    char frame[1200], marks[300];
    int64_t by_reason_ns[WIRE_REASON_COUNT] = {0};
    uint64_t by_reason_n[WIRE_REASON_COUNT] = {0};
    json_key(j, "summary");
    json_object_begin(j);
    json_kv_uint(j, "pins", sites->pins);
    json_kv_uint(j, "ongoing", sites->ongoing);
    json_kv_int(j, "pinned_ns", sites->total_ns);
    json_kv_uint(j, "sites", sites->count);
    json_object_end(j);
    json_key(j, "sites");
    json_array_begin(j);
    for (size_t i = 0; i < sites->count; i++) {
        const struct site *site = &sites->items[i];
        int rk = site->reason >= 0 && site->reason < WIRE_REASON_COUNT ? site->reason : 0;
        by_reason_ns[rk] = recording_sat_add(by_reason_ns[rk], site->total_ns);
        by_reason_n[rk] += site->count;
        if (i >= HTML_SITES)
            continue;
        json_object_begin(j);
        json_kv_string(j, "reason", wire_reason_name(site->reason));
        json_kv_string(j, "origin", frames_origin_name(site->origin));
        const struct recording_pin *ex = site->example;
        if (site->culprit) {
            char full[1600];
            /* the example's markers name an FFM or JNA culprit's C function, as the text report does */
            snprintf(full, sizeof(full), "%s%s", report_format_frame(site->culprit, frame, sizeof(frame)),
                     ex->stack && ex->has_culprit ? report_pin_frame_markers(ex, ex->culprit, marks, sizeof(marks))
                                                  : report_frame_markers(site->culprit, 1, marks, sizeof(marks)));
            json_kv_string(j, "culprit", full);
        } else {
            json_kv_null(j, "culprit");
        }
        json_kv_uint(j, "count", site->count);
        json_kv_int(j, "total_ns", site->total_ns);
        json_kv_int(j, "max_ns", site->max_ns);
        json_kv_uint(j, "ongoing", site->ongoing);
        json_kv_uint(j, "stacks", site->distinct_stacks);
        json_key(j, "stack");
        json_array_begin(j);
        for (uint32_t k = 0; ex->stack && k < ex->stack->count; k++) {
            const struct recording_frame *f = &ex->stack->frames[k];
            int is_culprit = ex->has_culprit && ex->culprit == k;
            char line[1600];
            snprintf(line, sizeof(line), "%s%s%s", is_culprit ? "> " : "  ",
                     report_format_frame(f, frame, sizeof(frame)),
                     report_pin_frame_markers(ex, k, marks, sizeof(marks)));
            json_string(j, line);
        }
        json_array_end(j);
        json_kv_bool(j, "stack_truncated", ex->stack && ex->stack->truncated);
        json_kv_string(j, "blocked_in", ex->blocked_in);
        json_kv_string(j, "jdk_reason", ex->jdk_reason);
        char line[1400];
        json_kv_string(j, "blocker", recording_pin_blocker(ex) ? report_blocker_line(s, ex, line, sizeof(line)) : NULL);
        json_object_end(j);
    }
    json_array_end(j);
    json_key(j, "by_reason"); /* [reason, pins, pinned ns] for each reason that pinned */
    json_array_begin(j);
    for (int k = 0; k < WIRE_REASON_COUNT; k++) {
        if (!by_reason_n[k])
            continue;
        json_array_begin(j);
        json_string(j, wire_reason_name(k));
        json_uint(j, by_reason_n[k]);
        json_int(j, by_reason_ns[k]);
        json_array_end(j);
    }
    json_array_end(j);
}

static void put_counters(struct json *j, const struct recording_session *s)
{
    const struct session_stats *st = &s->stats;
    json_key(j, "notices"); /* [severity, code, text] */
    json_array_begin(j);
    for (size_t i = 0; i < s->n_notices; i++) {
        const struct recording_notice *n = &s->notices[i];
        json_array_begin(j);
        json_string(j, wire_severity_name(n->severity));
        json_string(j, n->code);
        json_string(j, n->text);
        json_array_end(j);
    }
    json_array_end(j);
    struct {
        const char *name;
        int has;
        uint64_t v;
    } c[] = {
        {"pins seen", st->msg.has_pins, st->msg.pins},
        {"pins reported", st->msg.has_pins_reported, st->msg.pins_reported},
        {"pins below threshold", st->msg.has_pins_below_threshold, st->msg.pins_below_threshold},
        {"events dropped", st->msg.has_events_dropped, st->msg.events_dropped},
        {"stacks dropped", st->msg.has_stacks_dropped, st->msg.stacks_dropped},
        {"mount records dropped", st->msg.has_transitions_dropped, st->msg.transitions_dropped},
        {"carriers started", st->msg.has_carriers_started, st->msg.carriers_started},
        {"compensations", st->msg.has_compensations, st->msg.compensations},
        {"references to undefined ids", 1, s->unknown_refs},
        {"pin ends without a start", 1, s->unmatched_ends},
        {"duplicate pin events", 1, s->duplicates},
        {"carrier hogs reported", st->msg.has_hogs, st->msg.hogs},
        {"hog ends without a start", s->unmatched_hog_ends != 0, s->unmatched_hog_ends}, /* only when some */
        {"duplicate hog events", s->duplicate_hogs != 0, s->duplicate_hogs},
        {"occupancy points lost", 1, s->occupancy_dropped},
    };
    json_key(j, "counters"); /* [name, value] */
    json_array_begin(j);
    for (size_t i = 0; s->stats.has && i < sizeof(c) / sizeof(c[0]); i++) {
        if (!c[i].has)
            continue;
        json_array_begin(j);
        json_string(j, c[i].name);
        json_uint(j, c[i].v);
        json_array_end(j);
    }
    json_array_end(j);
    json_kv_bool(j, "counters_final", s->has_goodbye);
}

/* Preorder, nodes flattened as label, depth, total_ns; small subtrees left off. */
static void put_flame(struct json *j, const struct flame *f)
{
    int64_t min = f->nodes[0].total_ns / HTML_FLAME_MIN;
    size_t emitted = 0, elided = 0;
    json_key(j, "labels");
    json_array_begin(j);
    for (size_t i = 0; i < f->n_labels; i++)
        json_string(j, f->labels[i]);
    json_array_end(j);
    /* which labels ("class.method") are the JDK's, by common/frames_kind.h's one rule: the page
     * colours them apart without a rule of its own */
    json_key(j, "labels_jdk");
    json_array_begin(j);
    for (size_t i = 0; i < f->n_labels; i++)
        json_int(j, frames_is_jdk_class(f->labels[i]) ? 1 : 0);
    json_array_end(j);
    json_key(j, "flame");
    json_array_begin(j);
    uint32_t node = 0;
    while (node != VIEWS_NO_NODE) {
        const struct flame_node *n = &f->nodes[node];
        int keep = node == 0 || (n->total_ns > min && emitted < HTML_FLAME_NODES);
        if (keep) {
            json_uint(j, n->label);
            json_uint(j, n->depth);
            json_int(j, n->total_ns);
            emitted++;
        } else {
            elided++;
        }
        if (keep && n->first_child != VIEWS_NO_NODE) {
            node = n->first_child;
            continue;
        }
        while (node != VIEWS_NO_NODE && f->nodes[node].next_sibling == VIEWS_NO_NODE)
            node = f->nodes[node].parent;
        if (node != VIEWS_NO_NODE)
            node = f->nodes[node].next_sibling;
    }
    json_array_end(j);
    json_kv_uint(j, "flame_elided", elided);
}

/* One merged or single pin (or hog) of a lane: start, duration (us from
 * the session's start), reason (-1 for a hog), pins merged, virtual thread
 * name and culprit (string table indices, -1 none), pin id (hog id; 0 for a
 * merged group), virtual thread id (0 unknown), where a NATIVE_BLOCK slept
 * (string index, -1). Strings are interned only for what is written. */
struct lane_item {
    int64_t start, end, longest;
    int reason;
    uint64_t count;
    const char *vthread;
    const struct recording_frame *culprit;
    uint64_t id;
    int64_t vthread_id;
    const char *blocked_in; /* NATIVE_BLOCK: where the kernel said the carrier slept */
    int shorts;             /* short items summed (a long session's lanes): merged, whatever its span */
};

static int put_item(struct json *j, struct strtab *st, const struct lane_item *it, int64_t origin)
{
    char label[1200];
    int64_t culprit = -1, vt, blocked;
    if (it->culprit && (culprit = strtab_add(st, report_format_frame(it->culprit, label, sizeof(label)))) < 0)
        return (int)culprit;
    if ((vt = strtab_add(st, it->vthread)) < -1)
        return (int)vt;
    if ((blocked = strtab_add(st, it->blocked_in)) < -1)
        return (int)blocked;
    json_int(j, (it->start - origin) / 1000);
    json_int(j, (it->end - it->start) / 1000);
    json_int(j, it->reason);
    json_uint(j, it->count);
    json_int(j, vt);
    json_int(j, culprit);
    json_uint(j, it->id);
    json_int(j, it->vthread_id);
    json_int(j, blocked);
    return 0;
}

static void lane_item_of(const struct recording_session *s, const struct recording_pin *p, struct lane_item *it)
{
    int64_t d = recording_pin_duration(s, p);
    *it = (struct lane_item){.start = p->start_ns,
                             .end = recording_sat_add(p->start_ns, d),
                             .longest = d,
                             .reason = p->reason,
                             .count = 1,
                             .vthread = p->vthread_name,
                             .culprit = p->has_culprit ? &p->stack->frames[p->culprit] : NULL,
                             .id = p->id,
                             .vthread_id = p->has_vthread_id ? p->vthread_id : 0,
                             .blocked_in = p->blocked_in};
}

static void hog_item_of(const struct recording_session *s, const struct recording_hog *h, struct lane_item *it)
{
    int64_t d = recording_hog_duration(s, h);
    *it = (struct lane_item){.start = h->start_ns,
                             .end = recording_sat_add(h->start_ns, d),
                             .longest = d,
                             .reason = -1,
                             .count = 1,
                             .vthread = h->vthread_name,
                             .culprit = h->has_culprit ? &h->stack->frames[h->culprit] : NULL,
                             .id = h->id,
                             .vthread_id = h->has_vthread_id ? h->vthread_id : 0};
}

/* Writes a lane's items in start order: one by one, or when merging, the
 * short ones (under a bucket) merged per bucket of the time axis, each group
 * shown as its longest item. */
struct lane_writer {
    struct json *j;
    struct strtab *st;
    int64_t origin, bucket;
    int merge, have_group;
    struct lane_item group;
};

static int lane_writer_add(struct lane_writer *w, const struct lane_item *it)
{
    if (!w->merge || (!it->shorts && it->end - it->start >= w->bucket))
        return put_item(w->j, w->st, it, w->origin);
    if (w->have_group && (w->group.start - w->origin) / w->bucket == (it->start - w->origin) / w->bucket) {
        struct lane_item *g = &w->group;
        g->count += it->count; /* an item may stand for several (a long session's lanes, below) */
        g->id = 0;
        if (it->end > g->end)
            g->end = it->end;
        if (it->longest > g->longest) { /* the group shows its longest item's reason and culprit */
            g->longest = it->longest;
            g->reason = it->reason;
            g->culprit = it->culprit;
            g->vthread = it->vthread;
            g->vthread_id = it->vthread_id;
            g->blocked_in = it->blocked_in;
        }
        return 0;
    }
    int rc = w->have_group ? put_item(w->j, w->st, &w->group, w->origin) : 0;
    w->group = *it;
    w->have_group = 1;
    return rc;
}

static int lane_writer_flush(struct lane_writer *w)
{
    int rc = w->have_group ? put_item(w->j, w->st, &w->group, w->origin) : 0;
    w->have_group = 0;
    return rc;
}

/* Bucket k of the busy strip covers [busy_edge(k), busy_edge(k + 1)) ns from the start. */
static int64_t busy_edge(int64_t span, size_t k)
{
    return (int64_t)((__int128)span * (__int128)k / HTML_BUSY_BUCKETS);
}

/* The busy percentage of a lane per 1/HTML_BUSY_BUCKETS of the recording,
 * -1 where less than half the bucket's occupancy is known. */
static void put_busy(struct json *j, const struct recording_session *s, const struct timeline *t, const struct lane *l)
{
    int64_t span = t->last_ns - t->first_ns;
    json_array_begin(j);
    if (!l->n_occ || span <= 0) {
        json_array_end(j);
        return;
    }
    int64_t busy[HTML_BUSY_BUCKETS], known[HTML_BUSY_BUCKETS]; /* 16 KB */
    memset(busy, 0, sizeof(busy));
    memset(known, 0, sizeof(known));
    for (size_t i = 0; i < l->n_occ; i++) {
        const struct recording_occupancy *o = &s->occupancy[l->occ[i]];
        int64_t a = recording_sat_sub(o->time_ns, t->first_ns);
        int64_t b = recording_sat_sub(timeline_occupancy_end(s, t, l, i), t->first_ns);
        if (a < 0)
            a = 0;
        if (b > span)
            b = span;
        if (a >= b)
            continue;
        size_t k = (size_t)((__int128)a * HTML_BUSY_BUCKETS / span);
        while (k + 1 < HTML_BUSY_BUCKETS && busy_edge(span, k + 1) <= a) /* integer division rounds down */
            k++;
        while (k > 0 && busy_edge(span, k) > a)
            k--;
        /* each step ends at the bucket's edge (> a) or at b: it always moves on */
        for (; a < b && k < HTML_BUSY_BUCKETS; k++) {
            int64_t edge = k + 1 == HTML_BUSY_BUCKETS ? span : busy_edge(span, k + 1);
            int64_t part = (b < edge ? b : edge) - a;
            known[k] += part;
            if (o->vthread_id)
                busy[k] += part;
            a += part;
        }
    }
    for (size_t k = 0; k < HTML_BUSY_BUCKETS; k++) {
        int64_t width = busy_edge(span, k + 1) - busy_edge(span, k);
        json_int(j, known[k] == 0 || known[k] * 2 < width ? -1 : (busy[k] * 100 + known[k] / 2) / known[k]);
    }
    json_array_end(j);
}

/* A lane's bucket of the time axis (its short pins merge per bucket). */
static int64_t lane_bucket(const struct timeline *t)
{
    int64_t span = t->last_ns - t->first_ns;
    return span / HTML_LANE_BUCKETS > 0 ? span / HTML_LANE_BUCKETS : 1;
}

/* Whether a lane's short pins merge: over HTML_LANE_DETAIL pins in the session (summed up ones too). */
static int lanes_merge(const struct recording_session *s)
{
    return s->n_pins + s->pins_folded > HTML_LANE_DETAIL;
}

/* ---- a long session's lanes ----
 *
 * A session whose ended pins were summed up as read (pin_groups.h) has its pins read again from the
 * file (pin_stream.h), in file order. Each lane keeps what its writer makes of them in start order
 * (merged: such a session has more than HTML_LANE_DETAIL pins): the long items, and per bucket its
 * first short item and the rest as one item (their count, latest end, and the longest, the earliest
 * of equals). Replayed in start order through the writer, they make the page of the session kept
 * whole, in the memory of a lane's buckets. */

struct keyed_item {
    struct lane_item it; /* it.count 0: none */
    uint64_t at;         /* with it.start, the lane's order: start, then place in the file */
};

struct bucket_items {
    int64_t b;
    struct keyed_item first, rest;
};

struct lane_items {
    uint64_t pins;
    int64_t pinned;
    struct keyed_item *longs;
    size_t n_longs, longs_cap;
    struct bucket_items *buckets; /* by b */
    size_t n_buckets, buckets_cap;
};

struct lanes_read {
    const struct recording_session *s;
    const struct timeline *t;
    struct lane_items *lanes; /* one per t->lanes */
    struct strtab kept;       /* where NATIVE_BLOCK pins slept, kept once: the pins' own go back */
    int64_t origin, bucket;
    int merge; /* as the lane writer: else every item is kept (HTML_LANE_DETAIL at most) */
    uint64_t at;
    size_t last; /* the lane of the last pin */
};

static int key_before(const struct keyed_item *a, const struct keyed_item *b)
{
    return a->it.start < b->it.start || (a->it.start == b->it.start && a->at < b->at);
}

/* Lane l's bucket b, made when new: its pins come mostly in time order (the last bucket first). */
static struct bucket_items *bucket_of(struct lane_items *l, int64_t b)
{
    size_t at = l->n_buckets;
    if (at && l->buckets[at - 1].b >= b) {
        size_t lo = 0, hi = at;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (l->buckets[mid].b < b)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < l->n_buckets && l->buckets[lo].b == b)
            return &l->buckets[lo];
        at = lo;
    }
    if (grow_array((void **)&l->buckets, &l->buckets_cap, l->n_buckets + 1, sizeof(*l->buckets)))
        return NULL;
    memmove(&l->buckets[at + 1], &l->buckets[at], (l->n_buckets - at) * sizeof(*l->buckets));
    l->n_buckets++;
    l->buckets[at] = (struct bucket_items){.b = b};
    return &l->buckets[at];
}

/* k into the rest of a bucket: one item more, its end, and its fields when it is the longest. */
static void add_to_rest(struct keyed_item *rest, const struct keyed_item *k)
{
    if (!rest->it.count) {
        *rest = *k;
        rest->it.shorts = 1;
        return;
    }
    uint64_t count = rest->it.count + 1;
    int64_t end = k->it.end > rest->it.end ? k->it.end : rest->it.end;
    if (k->it.longest > rest->it.longest || (k->it.longest == rest->it.longest && key_before(k, rest)))
        *rest = *k;
    rest->it.count = count;
    rest->it.end = end;
    rest->it.shorts = 1;
}

static int take_pin(const struct recording_pin *p, void *arg)
{
    struct lanes_read *lr = arg;
    struct keyed_item k = {.at = lr->at++};
    size_t li = timeline_lane_of(lr->t, p->has_carrier_tid, p->carrier_tid, &lr->last);
    if (li == lr->t->n_lanes)
        return 0; /* no lane: left off the timeline, as timeline_build leaves it */
    struct lane_items *l = &lr->lanes[li];
    lane_item_of(lr->s, p, &k.it);
    l->pins++;
    l->pinned = recording_sat_add(l->pinned, k.it.longest);
    if (k.it.blocked_in) {
        int64_t kept = strtab_add(&lr->kept, k.it.blocked_in);
        if (kept < 0)
            return (int)kept;
        k.it.blocked_in = lr->kept.items[kept];
    }
    if (!lr->merge || k.it.end - k.it.start >= lr->bucket) {
        if (grow_array((void **)&l->longs, &l->longs_cap, l->n_longs + 1, sizeof(*l->longs)))
            return -ENOMEM;
        l->longs[l->n_longs++] = k;
        return 0;
    }
    struct bucket_items *b = bucket_of(l, (k.it.start - lr->origin) / lr->bucket);
    if (!b)
        return -ENOMEM;
    if (!b->first.it.count) {
        b->first = k;
    } else if (key_before(&k, &b->first)) { /* the earlier is the first, the other joins the rest */
        add_to_rest(&b->rest, &b->first);
        b->first = k;
    } else {
        add_to_rest(&b->rest, &k);
    }
    return 0;
}

static int cmp_keyed(const void *a, const void *b)
{
    return key_before(a, b) ? -1 : key_before(b, a);
}

/* Lane l's items to w, in the order the lane kept whole gives them. */
static int replay(struct lane_writer *w, struct lane_items *l)
{
    if (l->n_longs > 1)
        qsort(l->longs, l->n_longs, sizeof(*l->longs), cmp_keyed);
    size_t i = 0, k = 0;
    int rc = 0;
    while (!rc && (i < l->n_longs || k < l->n_buckets)) {
        if (i < l->n_longs && (k == l->n_buckets || key_before(&l->longs[i], &l->buckets[k].first))) {
            rc = lane_writer_add(w, &l->longs[i++].it);
            continue;
        }
        const struct bucket_items *b = &l->buckets[k++];
        rc = lane_writer_add(w, &b->first.it);
        if (!rc && b->rest.it.count)
            rc = lane_writer_add(w, &b->rest.it);
    }
    return rc ? rc : lane_writer_flush(w);
}

static void lanes_read_fini(struct lanes_read *lr)
{
    for (size_t i = 0; lr->lanes && i < lr->t->n_lanes; i++) {
        free(lr->lanes[i].longs);
        free(lr->lanes[i].buckets);
    }
    free(lr->lanes);
    strtab_fini(&lr->kept);
}

/* The pins of s, a session summed up, read again into lr's lanes. 0 or -errno. */
static int lanes_read(struct lanes_read *lr, const struct recording *r, size_t session, const struct timeline *t)
{
    const struct recording_session *s = r->sessions[session];
    *lr = (struct lanes_read){.s = s, .t = t, .origin = t->first_ns, .bucket = lane_bucket(t), .merge = lanes_merge(s)};
    char err[512];
    if (table_init(&lr->kept.index, 0, TABLE_GROWING) || !(lr->lanes = calloc(t->n_lanes + 1, sizeof(*lr->lanes))))
        return -ENOMEM;
    int rc = pin_stream(r, session, take_pin, lr, err, sizeof(err));
    if (rc)
        fprintf(stderr, "vtpin report: %s\n", err);
    return rc;
}

static int put_lanes(struct json *j, const struct recording_session *s, const struct timeline *t,
                     struct lanes_read *read)
{
    struct strtab st = {0};
    int rc = 0;
    int64_t span = t->last_ns - t->first_ns;
    struct lane_writer pins = {
        .j = j, .st = &st, .origin = t->first_ns, .bucket = lane_bucket(t), .merge = lanes_merge(s)};
    struct lane_writer hogs = pins;
    hogs.merge = s->n_hogs > HTML_LANE_DETAIL;
    struct lane_item it;

    json_kv_int(j, "span_ns", span > 0 ? span : 0);
    json_kv_bool(j, "merged", pins.merge || hogs.merge);
    json_kv_uint(j, "occupancy_lost", s->occupancy_dropped);
    json_key(j, "lanes");
    json_array_begin(j);
    for (size_t li = 0; li < t->n_lanes; li++) {
        const struct lane *l = &t->lanes[li];
        int64_t pinned = 0, hogged = 0;
        uint64_t n_pins = read ? read->lanes[li].pins : l->n_pins;
        for (size_t k = 0; k < l->n_pins && !read; k++)
            pinned = recording_sat_add(pinned, recording_pin_duration(s, &s->pins[l->pins[k]]));
        if (read)
            pinned = read->lanes[li].pinned;
        for (size_t k = 0; k < l->n_hogs; k++)
            hogged = recording_sat_add(hogged, recording_hog_duration(s, &s->hogs[l->hogs[k]]));
        json_object_begin(j);
        json_kv_string(j, "name", l->name);
        if (l->has_tid)
            json_kv_int(j, "tid", l->tid);
        else
            json_kv_null(j, "tid");
        json_kv_uint(j, "pins", n_pins);
        json_kv_int(j, "pinned_ns", pinned);
        json_kv_uint(j, "hogs", l->n_hogs);
        json_kv_int(j, "hogged_ns", hogged);
        json_key(j, "p"); /* the lane's pins, nine numbers each (put_item) */
        json_array_begin(j);
        for (size_t k = 0; k < l->n_pins && !read; k++) {
            lane_item_of(s, &s->pins[l->pins[k]], &it);
            if ((rc = lane_writer_add(&pins, &it)))
                goto done;
        }
        if ((rc = read ? replay(&pins, &read->lanes[li]) : lane_writer_flush(&pins)))
            goto done;
        json_array_end(j);
        json_key(j, "h"); /* its carrier hogs, as "p" */
        json_array_begin(j);
        for (size_t k = 0; k < l->n_hogs; k++) {
            hog_item_of(s, &s->hogs[l->hogs[k]], &it);
            if ((rc = lane_writer_add(&hogs, &it)))
                goto done;
        }
        if ((rc = lane_writer_flush(&hogs)))
            goto done;
        json_array_end(j);
        json_key(j, "busy");
        put_busy(j, s, t, l);
        json_object_end(j);
    }
    json_array_end(j);
    json_key(j, "strings");
    json_array_begin(j);
    for (size_t i = 0; i < st.n; i++)
        json_string(j, st.items[i]);
    json_array_end(j);
done:
    strtab_fini(&st);
    return rc;
}

/* The hogs' totals, for the page's summary. */
static void put_hog_summary(struct json *j, const struct recording_session *s)
{
    uint64_t ongoing = 0;
    int64_t held = 0, longest = 0;
    for (size_t i = 0; i < s->n_hogs; i++) {
        int64_t d = recording_hog_duration(s, &s->hogs[i]);
        ongoing += !s->hogs[i].ended;
        held = recording_sat_add(held, d);
        if (d > longest)
            longest = d;
    }
    json_key(j, "hogs");
    json_object_begin(j);
    json_kv_uint(j, "count", s->n_hogs);
    json_kv_uint(j, "ongoing", ongoing);
    json_kv_int(j, "held_ns", held);
    json_kv_int(j, "longest_ns", longest);
    json_object_end(j);
}

/* The data for the page, as JSON in memory. */
static int html_data(const struct recording *r, size_t session, char **buf, size_t *len)
{
    const struct recording_session *s = r->sessions[session];
    struct sites sites = {0};
    struct flame f = {0};
    struct timeline t = {0};
    struct lanes_read read = {0};
    FILE *out = open_memstream(buf, len);
    if (!out)
        return -ENOMEM;
    int rc = sites_build(s, &sites);
    if (!rc)
        rc = flame_build(s, &f);
    if (!rc)
        rc = timeline_build(s, &t);
    if (!rc && s->pins_folded) /* a long session: its pins read again into the lanes */
        rc = lanes_read(&read, r, session, &t);
    if (!rc) {
        struct json j;
        json_init_opt(&j, out, JSON_COMPACT | JSON_EMBED_HTML);
        json_object_begin(&j);
        json_kv_string(&j, "schema", "vtpin.html/1");
        json_key(&j, "reasons");
        json_array_begin(&j);
        for (int k = 0; k < WIRE_REASON_COUNT; k++)
            json_string(&j, wire_reason_name(k));
        json_array_end(&j);
        put_jvm(&j, r, s);
        put_sites(&j, s, &sites);
        put_hog_summary(&j, s);
        put_counters(&j, s);
        put_flame(&j, &f);
        rc = put_lanes(&j, s, &t, s->pins_folded ? &read : NULL);
        if (!rc) {
            json_object_end(&j);
            rc = json_finish(&j);
        }
    }
    sites_fini(&sites);
    if (f.nodes)
        flame_fini(&f);
    if (read.t)
        lanes_read_fini(&read);
    timeline_fini(&t);
    if (fclose(out) && !rc)
        rc = -ENOMEM;
    return rc;
}

/* HTML text: escape what the page would parse. */
static void put_html_text(FILE *out, const char *text)
{
    for (const char *c = text; *c; c++) {
        if (*c == '<')
            fputs("&lt;", out);
        else if (*c == '&')
            fputs("&amp;", out);
        else
            fputc(*c, out);
    }
}

#define DATA_MARKER "@VTPIN_DATA@"
#define TITLE_MARKER "@VTPIN_TITLE@"

int report_html(FILE *out, const struct recording *r, const struct report_options *o)
{
    const struct recording_session *s = r->sessions[o->session];
    char *data = NULL;
    size_t len = 0;
    int rc = html_data(r, o->session, &data, &len);
    if (rc) {
        free(data);
        return rc;
    }
    char heading[300];
    snprintf(heading, sizeof(heading), "vtpin: JVM %" PRId64 "%s%s", s->has_hello ? s->hello.pid : 0,
             s->hello.java_version ? ", java " : "", s->hello.java_version ? s->hello.java_version : "");
    const char *tpl = report_html_template;
    for (;;) { /* the page with its markers replaced */
        const char *title = strstr(tpl, TITLE_MARKER), *mark = strstr(tpl, DATA_MARKER);
        const char *next = title && (!mark || title < mark) ? title : mark;
        if (!next) {
            fputs(tpl, out);
            break;
        }
        fwrite(tpl, 1, (size_t)(next - tpl), out);
        if (next == title) {
            put_html_text(out, heading);
            tpl = next + strlen(TITLE_MARKER);
        } else {
            fwrite(data, 1, len, out); /* its keys and strings escaped for HTML (JSON_EMBED_HTML) */
            tpl = next + strlen(DATA_MARKER);
        }
    }
    free(data);
    if (fflush(out) || ferror(out))
        return -EIO;
    return 0;
}
