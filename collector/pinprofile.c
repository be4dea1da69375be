#include "pinprofile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/frame_text.h"
#include "common/frames_kind.h"
#include "common/hash.h"
#include "common/table.h"
#include "pprof_build.h"
#include "wire_names.h"

#define OTHER_STACK 0    /* the stack of pins whose own found no room */
#define HOG_REASON "HOG" /* a carrier hog's reason label, as `vtpin top` names it */
#define OTHER_FRAME "[other stacks: the collector's stack table is full]"
#define MIN_BUCKET_NS 1000000000LL
#define MAX_WINDOW_NS 86400000000000LL

struct frame {
    uint32_t function, file; /* string indices */
    int32_t line;
};

struct stack {
    uint32_t n;
    int origin; /* enum pin_origin */
    uint32_t frames[];
};

struct entry {
    uint32_t stack, carrier; /* carrier: a string index */
    uint32_t count;          /* pins; 0 for hogs */
    uint16_t reason;         /* a pin's; 0 for hogs */
    uint8_t kind;            /* enum session_pin_kind */
    uint64_t ns;             /* pinned or hogged */
};

struct bucket {
    int64_t epoch; /* now / bucket_ns of the pins it holds; -1: empty */
    uint32_t n;
    struct entry *e; /* PINPROFILE_ENTRIES, allocated at first use */
};

struct pinprofile {
    int64_t window_ns, bucket_ns;
    char **strings; /* index 0: "" */
    size_t n_strings, strings_cap, string_bytes;
    struct table string_ix; /* each index: entries by content (common/table.h) */
    struct frame *frames;
    size_t n_frames, frames_cap;
    struct table frame_ix;
    struct stack *stacks[PINPROFILE_STACKS];
    size_t n_stacks;
    struct table stack_ix;
    struct bucket ring[PINPROFILE_BUCKETS];
    struct pinprofile_drops drops;
    size_t bytes; /* malloc'ed beside the struct */
};

static int string_eq(const void *ctx, uint32_t item, const void *key)
{
    const struct pinprofile *p = ctx;
    return strcmp(p->strings[item], key) == 0;
}

static int frame_eq(const void *ctx, uint32_t item, const void *key)
{
    const struct frame *g = &((const struct pinprofile *)ctx)->frames[item], *f = key;
    return g->function == f->function && g->file == f->file && g->line == f->line;
}

struct stack_key {
    const uint32_t *frames;
    uint32_t n;
    int origin;
};

static int stack_eq(const void *ctx, uint32_t item, const void *key)
{
    const struct stack *st = ((const struct pinprofile *)ctx)->stacks[item];
    const struct stack_key *k = key;
    return st->n == k->n && st->origin == k->origin && memcmp(st->frames, k->frames, k->n * sizeof(*k->frames)) == 0;
}

/* The string's index, added when new; -1 when the table is full. */
static int64_t intern(struct pinprofile *p, const char *s)
{
    if (!s || !*s)
        return 0;
    size_t len = strlen(s);
    uint64_t h = hash_string(s);
    int64_t at = table_find(&p->string_ix, h, string_eq, p, s);
    if (at >= 0)
        return at;
    if (p->string_bytes + len + 1 > PINPROFILE_STRING_BYTES || p->n_strings > TABLE_MAX_ITEM)
        return -1;
    if (p->n_strings == p->strings_cap) {
        size_t ncap = p->strings_cap * 2;
        char **n = realloc(p->strings, ncap * sizeof(*n));
        if (!n)
            return -1;
        p->bytes += (ncap - p->strings_cap) * sizeof(*n);
        p->strings = n;
        p->strings_cap = ncap;
    }
    char *copy = strdup(s);
    if (!copy || table_add(&p->string_ix, h, (uint32_t)p->n_strings)) {
        free(copy);
        return -1;
    }
    p->string_bytes += len + 1;
    p->bytes += len + 1;
    p->strings[p->n_strings] = copy;
    return (int64_t)p->n_strings++;
}

/* The frame's index, added when new; -1 when a table is full. */
static int64_t intern_frame(struct pinprofile *p, const char *function, const char *file, int32_t line)
{
    int64_t fn = intern(p, function), fl = intern(p, file);
    if (fn < 0 || fl < 0)
        return -1;
    struct frame f = {.function = (uint32_t)fn, .file = (uint32_t)fl, .line = line > 0 ? line : 0};
    uint64_t h = hash_combine(hash_combine(hash_u64(f.function), f.file), (uint32_t)f.line);
    int64_t at = table_find(&p->frame_ix, h, frame_eq, p, &f);
    if (at >= 0)
        return at;
    if (p->n_frames >= PINPROFILE_FRAMES)
        return -1;
    if (p->n_frames == p->frames_cap) {
        size_t ncap = p->frames_cap ? p->frames_cap * 2 : 64;
        struct frame *n = realloc(p->frames, ncap * sizeof(*n));
        if (!n)
            return -1;
        p->bytes += (ncap - p->frames_cap) * sizeof(*n);
        p->frames = n;
        p->frames_cap = ncap;
    }
    if (table_add(&p->frame_ix, h, (uint32_t)p->n_frames))
        return -1;
    p->frames[p->n_frames] = f;
    return (int64_t)p->n_frames++;
}

/* The stack of frames[n]'s index, added when new; -1 when the table is full. */
static int64_t intern_stack(struct pinprofile *p, const uint32_t *frames, uint32_t n, int origin)
{
    uint64_t h = hash_u64((uint64_t)origin);
    for (uint32_t i = 0; i < n; i++)
        h = hash_combine(h, frames[i]);
    struct stack_key k = {frames, n, origin};
    int64_t at = table_find(&p->stack_ix, h, stack_eq, p, &k);
    if (at >= 0)
        return at;
    if (p->n_stacks >= PINPROFILE_STACKS)
        return -1;
    struct stack *st = malloc(sizeof(*st) + n * sizeof(*frames));
    if (!st)
        return -1;
    if (table_add(&p->stack_ix, h, (uint32_t)p->n_stacks)) {
        free(st);
        return -1;
    }
    st->n = n;
    st->origin = origin;
    memcpy(st->frames, frames, n * sizeof(*frames));
    p->bytes += sizeof(*st) + n * sizeof(*frames);
    p->stacks[p->n_stacks] = st;
    return (int64_t)p->n_stacks++;
}

struct pinprofile *pinprofile_new(int64_t window_ns)
{
    struct pinprofile *p = calloc(1, sizeof(*p));
    if (!p)
        goto fail;
    if (window_ns < MIN_BUCKET_NS)
        window_ns = MIN_BUCKET_NS;
    if (window_ns > MAX_WINDOW_NS)
        window_ns = MAX_WINDOW_NS;
    p->window_ns = window_ns;
    p->bucket_ns = window_ns / PINPROFILE_BUCKETS;
    if (p->bucket_ns < MIN_BUCKET_NS)
        p->bucket_ns = MIN_BUCKET_NS;
    for (size_t i = 0; i < PINPROFILE_BUCKETS; i++)
        p->ring[i].epoch = -1;
    p->strings_cap = 64;
    p->strings = calloc(p->strings_cap, sizeof(*p->strings));
    if (!p->strings || table_init(&p->string_ix, 64, TABLE_GROWING) || table_init(&p->frame_ix, 64, TABLE_GROWING) ||
        table_init(&p->stack_ix, 64, TABLE_GROWING) || !(p->strings[0] = strdup("")))
        goto fail;
    p->n_strings = 1;
    p->bytes = p->strings_cap * sizeof(*p->strings) + 1;
    /* stack 0: where pins go whose stack finds no room */
    int64_t f = intern_frame(p, OTHER_FRAME, NULL, 0);
    uint32_t frame = (uint32_t)f;
    if (f < 0 || intern_stack(p, &frame, 1, PIN_ORIGIN_APP) != OTHER_STACK)
        goto fail;
    return p;
fail:
    pinprofile_free(p);
    errno = ENOMEM;
    return NULL;
}

void pinprofile_free(struct pinprofile *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_strings; i++)
        free(p->strings[i]);
    free(p->strings);
    table_fini(&p->string_ix);
    free(p->frames);
    table_fini(&p->frame_ix);
    for (size_t i = 0; i < p->n_stacks; i++)
        free(p->stacks[i]);
    table_fini(&p->stack_ix);
    for (size_t i = 0; i < PINPROFILE_BUCKETS; i++)
        free(p->ring[i].e);
    free(p);
}

/* ---- a PinStart's or HogStart's stack, by content ---- */

struct defs_stack {
    const struct session_defs *d;
    uint32_t stack;
};

static int kind_at(const void *ctx, uint32_t i)
{
    const struct defs_stack *ss = ctx;
    struct frame_parts parts;
    if (session_defs_frame(ss->d, ss->stack, i, &parts, NULL) != 0)
        return FRAME_JAVA;
    return (int)frames_classify(parts.cls, parts.name, parts.is_native);
}

/* The native code the pin is in, as a frame, into out; NULL when its culprit is not in native code. */
static const char *native_frame(const struct session_defs *d, const Vtpin__V1__PinStart *ps, char *out, size_t cap)
{
    struct frame_parts parts;
    const char *library = NULL;
    if (!ps->has_culprit_frame || session_defs_frame(d, ps->stack, ps->culprit_frame, &parts, &library) != 0)
        return NULL;
    if (ps->downcall) {
        int api = ps->downcall->has_api && ps->downcall->api == VTPIN__V1__NATIVE_API__NATIVE_API_JNA ? NATIVE_API_JNA
                                                                                                      : NATIVE_API_FFM;
        return frames_native_frame(api, ps->downcall->symbol, ps->downcall->library, out, cap);
    }
    return parts.is_native ? frames_native_frame(-1, NULL, library, out, cap) : NULL;
}

static int64_t add_frame(struct pinprofile *p, uint32_t *frames, uint32_t *n, const char *function, const char *file,
                         int32_t line)
{
    int64_t f = intern_frame(p, function, file, line);
    if (f >= 0)
        frames[(*n)++] = (uint32_t)f;
    return f;
}

/* The index of the stack (leaf first, as pprof wants it), with the native frame nat (NULL: none) where
 * frames_native_entry puts it for the culprit frame nat_culprit, or one "[no stack: what]" frame when there
 * is none; OTHER_STACK when it finds no room. */
static uint32_t stack_of(struct pinprofile *p, const struct session_defs *d, int has_stack, uint32_t stack,
                         const char *nat, uint32_t nat_culprit, const char *what)
{
    uint32_t frames[PINPROFILE_DEPTH + 2], n = 0;
    char text[640];
    const struct session_defs_stack *def = has_stack ? session_defs_stack(d, stack) : NULL;
    uint32_t depth = def ? def->count : 0;
    int truncated = def && def->truncated;
    struct defs_stack ss = {.d = d, .stack = stack};
    int origin = depth ? session_defs_stack_origin(d, stack) : PIN_ORIGIN_APP; /* the reports' one rule */
    int64_t ok = 0;
    if (depth == 0) {
        snprintf(text, sizeof(text), "[no stack: %s]", what);
        ok = add_frame(p, frames, &n, text, NULL, 0);
    } else {
        uint32_t keep = depth < PINPROFILE_DEPTH ? depth : PINPROFILE_DEPTH;
        uint32_t nat_at = nat ? frames_native_entry(kind_at, &ss, nat_culprit) : UINT32_MAX;
        for (uint32_t k = 0; k < keep && ok >= 0; k++) {
            struct frame_parts parts;
            if (k == nat_at && (ok = add_frame(p, frames, &n, nat, NULL, 0)) < 0)
                break;
            session_defs_frame(d, stack, k, &parts, NULL);
            snprintf(text, sizeof(text), "%s.%s", parts.cls ? parts.cls : FRAME_TEXT_UNKNOWN,
                     parts.name ? parts.name : FRAME_TEXT_UNKNOWN);
            ok = add_frame(p, frames, &n, text, parts.source, parts.line);
        }
        if (ok >= 0 && (truncated || keep < depth))
            ok = add_frame(p, frames, &n, "[truncated]", NULL, 0);
    }
    int64_t st = ok >= 0 ? intern_stack(p, frames, n, origin) : -1;
    if (st < 0) {
        p->drops.stacks++;
        return OTHER_STACK;
    }
    return (uint32_t)st;
}

/* The carrier's name (a string index): its name, else "tid N", else "unknown". */
static uint32_t carrier_of(struct pinprofile *p, const struct session_defs *d, int has_name, uint32_t name_sid,
                           int has_tid, int32_t tid)
{
    char carrier[64];
    const char *name = has_name ? session_defs_string(d, name_sid) : NULL;
    if (!name || !*name) {
        if (has_tid)
            snprintf(carrier, sizeof(carrier), "tid %" PRId32, tid);
        else
            snprintf(carrier, sizeof(carrier), "unknown");
        name = carrier;
    }
    int64_t c = intern(p, name);
    return c > 0 ? (uint32_t)c : 0;
}

void pinprofile_start(struct pinprofile *p, const struct session_defs *d, const Vtpin__V1__PinStart *ps,
                      struct session_pin *pin)
{
    char native[512];
    const char *nat = ps->has_stack ? native_frame(d, ps, native, sizeof(native)) : NULL;
    pin->profile_stack =
        stack_of(p, d, ps->has_stack, ps->stack, nat, ps->culprit_frame, wire_reason_name((int)ps->reason));
    pin->profile_carrier =
        carrier_of(p, d, ps->has_carrier_name, ps->carrier_name, ps->has_carrier_tid, ps->carrier_tid);
}

void pinprofile_hog_start(struct pinprofile *p, const struct session_defs *d, const Vtpin__V1__HogStart *hs,
                          struct session_pin *pin)
{
    pin->profile_stack = stack_of(p, d, hs->has_stack, hs->stack, NULL, 0, HOG_REASON);
    pin->profile_carrier =
        carrier_of(p, d, hs->has_carrier_name, hs->carrier_name, hs->has_carrier_tid, hs->carrier_tid);
}

void pinprofile_end(struct pinprofile *p, const struct session_pin *pin, int64_t duration_ns, int64_t now)
{
    if (pin->profile_stack == PINPROFILE_NONE)
        return; /* left out at its start */
    int64_t epoch = now / p->bucket_ns;
    struct bucket *b = &p->ring[epoch % PINPROFILE_BUCKETS];
    if (b->epoch != epoch) {
        b->epoch = epoch;
        b->n = 0;
    }
    if (!b->e) {
        if (!(b->e = calloc(PINPROFILE_ENTRIES, sizeof(*b->e)))) {
            p->drops.entries++;
            return;
        }
        p->bytes += PINPROFILE_ENTRIES * sizeof(*b->e);
    }
    uint64_t ns = duration_ns > 0 ? (uint64_t)duration_ns : 0;
    uint16_t reason = pin->kind == SESSION_PIN ? (uint16_t)pin->reason : 0;
    for (uint32_t i = 0; i < b->n; i++) {
        struct entry *e = &b->e[i];
        if (e->stack == pin->profile_stack && e->carrier == pin->profile_carrier && e->reason == reason &&
            e->kind == pin->kind) {
            e->ns = e->ns + ns < e->ns ? UINT64_MAX : e->ns + ns;
            e->count += pin->kind == SESSION_PIN;
            return;
        }
    }
    if (b->n == PINPROFILE_ENTRIES) {
        p->drops.entries++;
        return;
    }
    b->e[b->n++] = (struct entry){.stack = pin->profile_stack,
                                  .carrier = pin->profile_carrier,
                                  .count = pin->kind == SESSION_PIN,
                                  .reason = reason,
                                  .kind = pin->kind,
                                  .ns = ns};
}

int pinprofile_collect(const struct pinprofile *p, int64_t now, int64_t span_ns, struct pprof_builder *b,
                       const struct pprof_label *jvm_labels, size_t n)
{
    uint64_t locs[PINPROFILE_DEPTH + 2];
    struct pprof_label labels[PPROF_MAX_LABELS];
    if (n > PPROF_MAX_LABELS - 3)
        return -EINVAL;
    memcpy(labels + 3, jvm_labels, n * sizeof(*labels));
    int64_t last = now / p->bucket_ns, first = (now - span_ns) / p->bucket_ns;
    if (first <= last - PINPROFILE_BUCKETS)
        first = last - PINPROFILE_BUCKETS + 1;
    for (size_t i = 0; i < PINPROFILE_BUCKETS; i++) {
        const struct bucket *bk = &p->ring[i];
        if (bk->epoch < first || bk->epoch > last)
            continue;
        for (uint32_t k = 0; k < bk->n; k++) {
            const struct entry *e = &bk->e[k];
            const struct stack *st = p->stacks[e->stack];
            for (uint32_t f = 0; f < st->n; f++) {
                const struct frame *fr = &p->frames[st->frames[f]];
                int64_t id = pprof_builder_location(b, p->strings[fr->function], p->strings[fr->file], fr->line);
                if (id < 0)
                    return (int)id;
                locs[f] = (uint64_t)id;
            }
            int hog = e->kind == SESSION_HOG;
            int64_t ns = e->ns > INT64_MAX ? INT64_MAX : (int64_t)e->ns;
            labels[0] = (struct pprof_label){.key = "reason", .str = hog ? HOG_REASON : wire_reason_name(e->reason)};
            labels[1] = (struct pprof_label){.key = "origin", .str = frames_origin_name(st->origin)};
            labels[2] = (struct pprof_label){.key = "carrier", .str = p->strings[e->carrier]};
            int64_t values[PPROF_PINNED_N] = {[PPROF_VALUE_PINNED_NS] = hog ? 0 : ns,
                                              [PPROF_VALUE_PINS] = e->count,
                                              [PPROF_VALUE_HOGGED_NS] = hog ? ns : 0};
            int rc = pprof_builder_sample(b, locs, st->n, values, labels, n + 3);
            if (rc)
                return rc;
        }
    }
    return 0;
}

int64_t pinprofile_window(const struct pinprofile *p)
{
    return p->window_ns;
}

void pinprofile_drops(const struct pinprofile *p, struct pinprofile_drops *out)
{
    *out = p->drops;
}

size_t pinprofile_memory(const struct pinprofile *p)
{
    return sizeof(*p) + p->bytes + table_bytes(&p->string_ix) + table_bytes(&p->frame_ix) + table_bytes(&p->stack_ix);
}
