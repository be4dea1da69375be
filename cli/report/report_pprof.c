/* pprof (go tool pprof, Grafana Pyroscope): a gzipped Profile message
 * (proto/pprof_build.h) with the pinned time and the number of pins of each
 * distinct stack, reason, carrier and JVM, and the carrier hogs' time
 * ("hogged": samples labelled reason HOG, their pinned time and pins 0; a
 * pin's hogged is 0). Every session of the file by default (each JVM named
 * by its pid and app labels), or the one --session names.
 *
 * Functions are "Class.method" (as the flame graph labels frames), with the
 * source file and line of each frame. The native code a pin is in (a JNI
 * library, an FFM or JNA target) is a frame of its own, "[native: FFM
 * downcall qsort, libc.so.6]", where the native code ran: right above the
 * frame that called into it (the JNI method, the downcall stub), so below
 * any Java code it called back. A stack the agent cut hangs under "[truncated]"; a pin
 * without a stack is one "[no stack: REASON]" frame, as in the flame graph (a hog's: "[no stack: HOG]"). */
#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/frames_kind.h"
#include "common/hash.h"
#include "common/table.h"
#include "pin_groups.h"
#include "pprof_build.h"
#include "views.h"
#include "wire.h"

/* The native code the pin is in as a frame (frames_native_frame), when its culprit is in native code; NULL when not. */
static const char *native_frame(const struct recording_pin *p, char *out, size_t cap)
{
    if (!p->stack || !p->has_culprit)
        return NULL;
    const struct recording_method *m = p->stack->frames[p->culprit].method;
    const struct recording_downcall *dc = recording_pin_downcall(p);
    if (dc)
        return frames_native_frame(dc->api, dc->symbol, dc->library, out, cap);
    if (!m || !m->is_native)
        return NULL;
    return frames_native_frame(-1, NULL, m->library, out, cap);
}

static int kind_at(const void *ctx, uint32_t i)
{
    const struct recording_frame *f = &((const struct recording_stack *)ctx)->frames[i];
    return f->method ? f->method->kind : FRAME_JAVA;
}

/* A stack's locations as add_stack made them, for the session's next pin with the same stack and
 * native frame: a session's pins share a few hundred stacks, and making a location formats and
 * looks up each frame. */
struct stack_locs {
    const struct recording_stack *st;
    uint32_t native_at;
    char *native; /* NULL: none */
    size_t at, n; /* in report_pprof.pool */
};

struct report_pprof {
    struct pprof_builder *b;
    uint64_t *locs; /* a stack's locations, reused from sample to sample */
    /* the session's stacks seen (stack_locs), by stack, native frame and where it goes: forgotten
     * when the next session is added (its stacks are others, maybe at the same addresses) */
    struct stack_locs *seen;
    size_t n_seen, seen_cap;
    uint64_t *pool;
    size_t n_pool, pool_cap;
    struct table seen_ix;
};

struct seen_key {
    const struct recording_stack *st;
    uint32_t native_at;
    const char *native;
};

static uint64_t seen_hash(const struct seen_key *k)
{
    uint64_t h = hash_combine(hash_u64((uint64_t)(uintptr_t)k->st), k->native_at);
    return k->native ? hash_combine(h, hash_string(k->native)) : h;
}

static int seen_eq(const void *ctx, uint32_t item, const void *key)
{
    const struct stack_locs *e = &((const struct report_pprof *)ctx)->seen[item];
    const struct seen_key *k = key;
    return e->st == k->st && e->native_at == k->native_at &&
           (e->native && k->native ? strcmp(e->native, k->native) == 0 : e->native == k->native);
}

static void forget_seen(struct report_pprof *p)
{
    for (size_t i = 0; i < p->n_seen; i++)
        free(p->seen[i].native);
    p->n_seen = p->n_pool = 0;
    table_fini(&p->seen_ix);
    memset(&p->seen_ix, 0, sizeof(p->seen_ix));
}

/* Keeps locs[0..n) as the locations of key. 0 or -ENOMEM (the next pin makes them again). */
static int remember(struct report_pprof *p, const struct seen_key *key, const uint64_t *locs, size_t n)
{
    if (!p->seen_ix.slots && table_init(&p->seen_ix, 0, TABLE_GROWING))
        return -ENOMEM;
    if (p->n_seen == p->seen_cap) {
        size_t cap = p->seen_cap ? 2 * p->seen_cap : 64;
        struct stack_locs *grown = realloc(p->seen, cap * sizeof(*grown));
        if (!grown)
            return -ENOMEM;
        p->seen = grown;
        p->seen_cap = cap;
    }
    if (p->n_pool + n > p->pool_cap) {
        size_t cap = p->pool_cap ? p->pool_cap : 4096;
        while (cap < p->n_pool + n)
            cap *= 2;
        uint64_t *grown = realloc(p->pool, cap * sizeof(*grown));
        if (!grown)
            return -ENOMEM;
        p->pool = grown;
        p->pool_cap = cap;
    }
    struct stack_locs e = {.st = key->st, .native_at = key->native_at, .at = p->n_pool, .n = n};
    if ((key->native && !(e.native = strdup(key->native))) ||
        table_add(&p->seen_ix, seen_hash(key), (uint32_t)p->n_seen)) {
        free(e.native);
        return -ENOMEM;
    }
    memcpy(p->pool + p->n_pool, locs, n * sizeof(*locs));
    p->n_pool += n;
    p->seen[p->n_seen++] = e;
    return 0;
}

static int64_t add_location(struct pprof_builder *b, const struct recording_frame *f)
{
    char label[1024];
    return pprof_builder_location(b, views_frame_label(f, label, sizeof(label)), f->method->source_file,
                                  f->line > 0 ? f->line : 0);
}

/* st's frames (leaf first) into locs: native (NULL: none) above frame native_at, "[truncated]" under a cut
 * stack; one "[no stack: what]" frame when st has none. Their count, or -ENOMEM. */
static int64_t make_stack(struct pprof_builder *b, const struct recording_stack *st, const char *native,
                          uint32_t native_at, const char *what, uint64_t *locs)
{
    char text[640];
    size_t n = 0;
    int64_t id;
    if (!st || st->count == 0) {
        snprintf(text, sizeof(text), "[no stack: %s]", what);
        if ((id = pprof_builder_location(b, text, NULL, 0)) < 0)
            return id;
        locs[n++] = (uint64_t)id;
        return (int64_t)n;
    }
    for (uint32_t k = 0; k < st->count; k++) {
        if (native && k == native_at) {
            if ((id = pprof_builder_location(b, native, NULL, 0)) < 0)
                return id;
            locs[n++] = (uint64_t)id;
        }
        if ((id = add_location(b, &st->frames[k])) < 0)
            return id;
        locs[n++] = (uint64_t)id;
    }
    if (st->truncated) {
        if ((id = pprof_builder_location(b, "[truncated]", NULL, 0)) < 0)
            return id;
        locs[n++] = (uint64_t)id;
    }
    return (int64_t)n;
}

/* The same into p->locs, made once per session for each stack and native frame. */
static int64_t add_stack(struct report_pprof *p, const struct recording_stack *st, const char *native,
                         uint32_t native_at, const char *what)
{
    if (!st || st->count == 0)
        return make_stack(p->b, st, native, native_at, what, p->locs);
    struct seen_key key = {st, native_at, native};
    int64_t at = p->seen_ix.slots ? table_find(&p->seen_ix, seen_hash(&key), seen_eq, p, &key) : -1;
    if (at >= 0) {
        const struct stack_locs *e = &p->seen[at];
        memcpy(p->locs, p->pool + e->at, e->n * sizeof(*p->locs));
        return (int64_t)e->n;
    }
    int64_t n = make_stack(p->b, st, native, native_at, what, p->locs);
    if (n > 0)
        remember(p, &key, p->locs, (size_t)n); /* out of memory: made again next time */
    return n;
}

/* A carrier's label: its name, else "tid N", else "unknown". */
static const char *carrier_label(const char *name, int has_tid, int32_t tid, char *out, size_t cap)
{
    if (name)
        snprintf(out, cap, "%s", name);
    else if (has_tid)
        snprintf(out, cap, "tid %" PRId32, tid);
    else
        snprintf(out, cap, "unknown");
    return out;
}

static int add_pin(struct report_pprof *pp, const struct recording_pin_sum *sum, struct pprof_label *labels,
                   size_t n_labels)
{
    const struct recording_pin *p = sum->pin;
    char native_text[640], carrier[160];
    const struct recording_stack *st = p->stack;
    const char *native = st && st->count ? native_frame(p, native_text, sizeof(native_text)) : NULL;
    uint32_t native_at = native ? frames_native_entry(kind_at, st, p->culprit) : UINT32_MAX;
    int64_t n = add_stack(pp, st, native, native_at, wire_reason_name(p->reason));
    if (n < 0)
        return (int)n;
    labels[0] = (struct pprof_label){.key = "reason", .str = wire_reason_name(p->reason)};
    labels[1] = (struct pprof_label){.key = "origin", .str = frames_origin_name(p->origin)};
    labels[2] = (struct pprof_label){
        .key = "carrier",
        .str = carrier_label(p->carrier_name, p->has_carrier_tid, p->carrier_tid, carrier, sizeof(carrier))};
    int64_t values[PPROF_PINNED_N] = {[PPROF_VALUE_PINNED_NS] = sum->total_ns,
                                      [PPROF_VALUE_PINS] = sum->count > INT64_MAX ? INT64_MAX : (int64_t)sum->count};
    return pprof_builder_sample(pp->b, pp->locs, (size_t)n, values, labels, n_labels);
}

/* A carrier hog: its stack and labels as a pin's, with reason HOG (as `vtpin top` names it); only hogged. */
static int add_hog(struct report_pprof *pp, const struct recording_session *s, const struct recording_hog *h,
                   struct pprof_label *labels, size_t n_labels)
{
    char carrier[160];
    int64_t n = add_stack(pp, h->stack, NULL, UINT32_MAX, "HOG");
    if (n < 0)
        return (int)n;
    labels[0] = (struct pprof_label){.key = "reason", .str = "HOG"};
    labels[1] = (struct pprof_label){.key = "origin", .str = frames_origin_name(recording_stack_origin(h->stack))};
    labels[2] = (struct pprof_label){
        .key = "carrier",
        .str = carrier_label(h->carrier_name, h->has_carrier_tid, h->carrier_tid, carrier, sizeof(carrier))};
    int64_t values[PPROF_PINNED_N] = {[PPROF_VALUE_HOGGED_NS] = recording_hog_duration(s, h)};
    return pprof_builder_sample(pp->b, pp->locs, (size_t)n, values, labels, n_labels);
}

/* The session's pins and carrier hogs into p, labelled with its JVM. */
static int add_session(struct report_pprof *p, const struct recording_session *s)
{
    forget_seen(p);
    char pid[32];
    struct pprof_label labels[5];
    size_t n_labels = 3;
    if (s->has_hello) {
        snprintf(pid, sizeof(pid), "%" PRId64, s->hello.pid);
        labels[n_labels++] = (struct pprof_label){.key = "pid", .str = pid};
    }
    if (s->hello.app && *s->hello.app)
        labels[n_labels++] = (struct pprof_label){.key = "app", .str = s->hello.app};
    struct pin_sums cursor;
    struct recording_pin_sum sum;
    int rc = pin_sums_begin(&cursor, s);
    while (!rc && pin_sums_next(&cursor, &sum))
        rc = add_pin(p, &sum, labels, n_labels);
    pin_sums_end(&cursor);
    if (rc)
        return rc;
    for (size_t i = 0; i < s->n_hogs; i++) {
        int rc = add_hog(p, s, &s->hogs[i], labels, n_labels);
        if (rc)
            return rc;
    }
    return 0;
}

/* The span of the sessions reported, on the wall clock when they have one. */
static void set_time(struct pprof_builder *b, const struct recording *r, size_t from, size_t to)
{
    int64_t first = 0, last = 0;
    int any = 0;
    for (size_t i = from; i < to; i++) {
        const struct recording_session *s = r->sessions[i];
        int64_t a, z;
        if (!s->has_time || recording_unix_ns(s, s->first_ns, &a) || recording_unix_ns(s, s->last_ns, &z))
            continue;
        if (!any || a < first)
            first = a;
        if (!any || z > last)
            last = z;
        any = 1;
    }
    if (any)
        pprof_builder_set_time(b, first, last - first);
}

int report_pprof_new(struct report_pprof **out, const char *path)
{
    struct report_pprof *p = calloc(1, sizeof(*p));
    int rc = p && (p->locs = calloc(RECORDING_MAX_FRAMES + 2, sizeof(*p->locs)))
                 ? pprof_builder_new(&p->b, pprof_pinned_types, PPROF_PINNED_N)
                 : -ENOMEM;
    char comment[1024];
    snprintf(comment, sizeof(comment), "vtpin report: %s", path);
    if (!rc)
        rc = pprof_builder_comment(p->b, comment);
    if (rc) {
        report_pprof_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

int report_pprof_add(struct report_pprof *p, const struct recording_session *s)
{
    return add_session(p, s);
}

int report_pprof_write(FILE *out, struct report_pprof *p, const struct recording *r, size_t from, size_t to)
{
    uint8_t *bytes = NULL;
    size_t len = 0;
    set_time(p->b, r, from, to);
    int rc = pprof_builder_encode(p->b, &bytes, &len);
    if (!rc && (fwrite(bytes, 1, len, out) != len || fflush(out) || ferror(out)))
        rc = -EIO;
    free(bytes);
    return rc;
}

void report_pprof_free(struct report_pprof *p)
{
    if (!p)
        return;
    pprof_builder_free(p->b);
    free(p->locs);
    forget_seen(p);
    free(p->seen);
    free(p->pool);
    free(p);
}

int report_pprof(FILE *out, const struct recording *r, const struct report_options *o)
{
    size_t from = o->all_sessions ? 0 : o->session, to = o->all_sessions ? r->n_sessions : o->session + 1;
    struct report_pprof *p = NULL;
    int rc = report_pprof_new(&p, r->path);
    for (size_t i = from; i < to && !rc; i++)
        rc = report_pprof_add(p, r->sessions[i]);
    if (!rc)
        rc = report_pprof_write(out, p, r, from, to);
    report_pprof_free(p);
    return rc;
}
