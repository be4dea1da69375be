#include "session_defs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/budget.h"
#include "common/frame_text.h"
#include "common/frames_kind.h"
#include "common/grow.h"
#include "common/idmap.h"

struct session_defs {
    struct session_defs_limits limits;
    struct idmap *strings, *methods, *stacks;
    size_t string_bytes, frames;
    uint64_t dropped;
    size_t charged;          /* taken from limits.budget */
    uint64_t budget_dropped; /* definitions dropped because the budget was used up */
};

/* What an entry costs the budget besides its payload: the id map's slot and malloc's header, roughly. */
#define ENTRY_OVERHEAD 48

static size_t string_cost(size_t len)
{
    return len + 1 + ENTRY_OVERHEAD;
}

static size_t stack_cost(size_t frames)
{
    return sizeof(struct session_defs_stack) + frames * sizeof(struct session_defs_frame) + ENTRY_OVERHEAD;
}

#define METHOD_COST (sizeof(struct session_defs_method) + ENTRY_OVERHEAD)

/* value goes over limit (0: none). */
static int over(size_t limit, size_t value)
{
    return limit && value > limit;
}

/* Charges the budget for a new entry of cost `add` replacing one of cost
 * `old` (0: none). 0, or 1 when the budget refused (the definition is dropped). */
static int charge(struct session_defs *d, size_t add, size_t old)
{
    if (add > old && budget_take(d->limits.budget, add - old) != 0) {
        d->dropped++;
        d->budget_dropped++;
        return 1;
    }
    if (old > add)
        budget_give(d->limits.budget, old - add);
    d->charged = d->charged + add - old;
    return 0;
}

int session_defs_new(struct session_defs **out, const struct session_defs_limits *limits)
{
    struct session_defs *d = calloc(1, sizeof(*d));
    if (!d)
        return -ENOMEM;
    if (limits)
        d->limits = *limits;
    d->strings = idmap_new();
    d->methods = idmap_new();
    d->stacks = idmap_new();
    if (!d->strings || !d->methods || !d->stacks) {
        session_defs_free(d);
        return -ENOMEM;
    }
    *out = d;
    return 0;
}

void session_defs_free(struct session_defs *d)
{
    if (!d)
        return;
    budget_give(d->limits.budget, d->charged);
    if (d->strings)
        idmap_free(d->strings, free);
    if (d->methods)
        idmap_free(d->methods, free);
    if (d->stacks)
        idmap_free(d->stacks, free);
    free(d);
}

uint64_t session_defs_dropped(const struct session_defs *d)
{
    return d->dropped;
}

uint64_t session_defs_budget_dropped(const struct session_defs *d)
{
    return d->budget_dropped;
}

static int define_string(struct session_defs *d, const Vtpin__V1__StringDef *def)
{
    const char *value = def->value ? def->value : "";
    size_t len = strlen(value);
    char *old = idmap_get(d->strings, def->id);
    size_t old_len = old ? strlen(old) + 1 : 0;
    if ((!old && over(d->limits.max_strings, idmap_count(d->strings) + 1)) ||
        over(d->limits.max_string_bytes, d->string_bytes - old_len + len + 1)) {
        d->dropped++;
        return 1;
    }
    if (charge(d, string_cost(len), old ? string_cost(old_len - 1) : 0))
        return 1;
    char *copy = strdup(value);
    void *replaced = NULL;
    if (!copy || idmap_put(d->strings, def->id, copy, &replaced) != 0) {
        free(copy);
        charge(d, old ? string_cost(old_len - 1) : 0, string_cost(len));
        return -ENOMEM;
    }
    free(replaced);
    d->string_bytes = d->string_bytes - old_len + len + 1;
    return 1;
}

static int define_method(struct session_defs *d, const Vtpin__V1__MethodDef *def)
{
    int exists = idmap_get(d->methods, def->id) != NULL;
    if (!exists && over(d->limits.max_methods, idmap_count(d->methods) + 1)) {
        d->dropped++;
        return 1;
    }
    if (!exists && charge(d, METHOD_COST, 0))
        return 1;
    struct session_defs_method *m = malloc(sizeof(*m));
    if (!m) {
        if (!exists)
            charge(d, 0, METHOD_COST);
        return -ENOMEM;
    }
    *m = (struct session_defs_method){
        .class_sid = def->class_name,
        .name_sid = def->method_name,
        .signature_sid = def->has_signature ? def->signature : 0,
        .source_sid = def->has_source_file ? def->source_file : 0,
        .module_sid = def->has_module ? def->module : 0,
        .library_sid = def->has_library ? def->library : 0,
        .is_native = def->has_is_native && def->is_native,
        /* a value outside int8 is no kind this reader knows: -1, classified by name */
        .kind = def->has_kind && def->kind >= 0 && def->kind <= INT8_MAX ? (int8_t)def->kind : -1,
    };
    void *replaced = NULL;
    if (idmap_put(d->methods, def->id, m, &replaced) != 0) {
        free(m);
        if (!exists)
            charge(d, 0, METHOD_COST);
        return -ENOMEM;
    }
    free(replaced);
    return 1;
}

static int define_stack(struct session_defs *d, const Vtpin__V1__StackDef *def)
{
    size_t n = def->n_frames;
    if (d->limits.max_depth && n > d->limits.max_depth)
        n = d->limits.max_depth;
    struct session_defs_stack *old = idmap_get(d->stacks, def->id);
    size_t old_frames = old ? old->count : 0;
    if ((!old && over(d->limits.max_stacks, idmap_count(d->stacks) + 1)) || n > UINT32_MAX ||
        over(d->limits.max_frames, d->frames - old_frames + n)) {
        d->dropped++;
        return 1;
    }
    size_t cost = stack_cost(n), old_cost = old ? stack_cost(old_frames) : 0;
    if (charge(d, cost, old_cost))
        return 1;
    struct session_defs_stack *st = malloc(sizeof(*st) + n * sizeof(st->frames[0]));
    if (!st) {
        charge(d, old_cost, cost);
        return -ENOMEM;
    }
    st->count = 0;
    st->truncated = (def->has_truncated && def->truncated) || def->n_frames > n;
    for (size_t i = 0; i < n; i++) {
        const Vtpin__V1__Frame *f = def->frames[i];
        if (!f)
            continue;
        st->frames[st->count++] = (struct session_defs_frame){
            .method = f->method,
            .line = f->has_line && f->line >= 0 ? f->line : -1,
            .bci = f->has_bci && f->bci >= 0 ? f->bci : -1,
            .monitors = f->has_monitors ? f->monitors : 0,
        };
    }
    void *replaced = NULL;
    if (idmap_put(d->stacks, def->id, st, &replaced) != 0) {
        free(st);
        charge(d, old_cost, cost);
        return -ENOMEM;
    }
    free(replaced);
    d->frames = d->frames - old_frames + st->count;
    return 1;
}

int session_defs_take(struct session_defs *d, const WireEvent *ev)
{
    switch (ev->body_case) {
    case VTPIN__V1__EVENT__BODY_STRING:
        return define_string(d, ev->string);
    case VTPIN__V1__EVENT__BODY_METHOD:
        return define_method(d, ev->method);
    case VTPIN__V1__EVENT__BODY_STACK:
        return define_stack(d, ev->stack);
    default:
        return 0;
    }
}

const char *session_defs_string(const struct session_defs *d, uint32_t id)
{
    return idmap_get(d->strings, id);
}

const struct session_defs_method *session_defs_method(const struct session_defs *d, uint32_t id)
{
    return idmap_get(d->methods, id);
}

const struct session_defs_stack *session_defs_stack(const struct session_defs *d, uint32_t id)
{
    return id ? idmap_get(d->stacks, id) : NULL;
}

int session_defs_next_method(const struct session_defs *d, size_t *pos, uint32_t *id,
                             const struct session_defs_method **m)
{
    uint64_t key;
    void *value;
    if (!idmap_next(d->methods, pos, &key, &value))
        return 0;
    *id = (uint32_t)key;
    *m = value;
    return 1;
}

int session_defs_next_stack(const struct session_defs *d, size_t *pos, uint32_t *id,
                            const struct session_defs_stack **st)
{
    uint64_t key;
    void *value;
    if (!idmap_next(d->stacks, pos, &key, &value))
        return 0;
    *id = (uint32_t)key;
    *st = value;
    return 1;
}

/* What session_defs_write packs with: one buffer, and a stack's frames. */
struct def_writer {
    int (*fn)(void *arg, const uint8_t *frame, size_t len);
    void *arg;
    uint8_t *buf;
    size_t cap;
    Vtpin__V1__Frame *frames, **frame_ptrs;
    size_t frames_cap, ptrs_cap;
};

static int write_def(struct def_writer *w, const WireEvent *ev)
{
    size_t size = wire_packed_size(ev);
    if (grow_array((void **)&w->buf, &w->cap, size, 1) != 0)
        return -ENOMEM;
    ssize_t len = wire_pack(ev, w->buf, w->cap, w->cap);
    return len < 0 ? (int)len : w->fn(w->arg, w->buf, (size_t)len);
}

static int write_stack(struct def_writer *w, uint32_t id, const struct session_defs_stack *st)
{
    if (grow_array((void **)&w->frames, &w->frames_cap, st->count, sizeof(*w->frames)) != 0 ||
        grow_array((void **)&w->frame_ptrs, &w->ptrs_cap, st->count, sizeof(*w->frame_ptrs)) != 0)
        return -ENOMEM;
    for (uint32_t i = 0; i < st->count; i++) {
        const struct session_defs_frame *f = &st->frames[i];
        Vtpin__V1__Frame *out = &w->frames[i];
        vtpin__v1__frame__init(out);
        out->method = f->method;
        out->has_line = 1;
        out->line = f->line;
        out->has_bci = 1;
        out->bci = f->bci;
        out->has_monitors = f->monitors != 0;
        out->monitors = f->monitors;
        w->frame_ptrs[i] = out;
    }
    Vtpin__V1__StackDef def = VTPIN__V1__STACK_DEF__INIT;
    def.id = id;
    def.n_frames = st->count;
    def.frames = w->frame_ptrs;
    def.has_truncated = st->truncated;
    def.truncated = st->truncated;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_STACK;
    ev.stack = &def;
    return write_def(w, &ev);
}

static int write_method(struct def_writer *w, uint32_t id, const struct session_defs_method *m)
{
    Vtpin__V1__MethodDef def = VTPIN__V1__METHOD_DEF__INIT;
    def.id = id;
    def.class_name = m->class_sid;
    def.method_name = m->name_sid;
    def.has_signature = m->signature_sid != 0;
    def.signature = m->signature_sid;
    def.has_source_file = m->source_sid != 0;
    def.source_file = m->source_sid;
    def.has_module = m->module_sid != 0;
    def.module = m->module_sid;
    def.has_library = m->library_sid != 0;
    def.library = m->library_sid;
    def.has_is_native = 1;
    def.is_native = m->is_native != 0;
    def.has_kind = m->kind >= 0;
    def.kind = (Vtpin__V1__FrameKind)m->kind;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_METHOD;
    ev.method = &def;
    return write_def(w, &ev);
}

int session_defs_write(const struct session_defs *d, int (*fn)(void *arg, const uint8_t *frame, size_t len), void *arg)
{
    struct def_writer w = {.fn = fn, .arg = arg};
    int rc = 0;
    size_t pos = 0;
    uint64_t key;
    void *value;
    while (!rc && idmap_next(d->strings, &pos, &key, &value)) {
        Vtpin__V1__StringDef def = VTPIN__V1__STRING_DEF__INIT;
        def.id = (uint32_t)key;
        def.value = value;
        WireEvent ev = VTPIN__V1__EVENT__INIT;
        ev.body_case = VTPIN__V1__EVENT__BODY_STRING;
        ev.string = &def;
        rc = write_def(&w, &ev);
    }
    uint32_t id;
    const struct session_defs_method *m;
    for (pos = 0; !rc && session_defs_next_method(d, &pos, &id, &m);)
        rc = write_method(&w, id, m);
    const struct session_defs_stack *st;
    for (pos = 0; !rc && session_defs_next_stack(d, &pos, &id, &st);)
        rc = write_stack(&w, id, st);
    free(w.buf);
    free(w.frames);
    free(w.frame_ptrs);
    return rc;
}

/* An optional string id: NULL when 0 (not sent) or never defined. */
static const char *optional(const struct session_defs *d, uint32_t sid)
{
    return sid ? session_defs_string(d, sid) : NULL;
}

/* session_defs_frame's reading: -ENOENT, 0 when the frame's method was never defined, 1 when it was. */
static int frame_of(const struct session_defs *d, uint32_t stack, uint32_t index, struct frame_parts *parts,
                    const char **library)
{
    const struct session_defs_stack *st = session_defs_stack(d, stack);
    *parts = (struct frame_parts){.line = -1};
    if (library)
        *library = NULL;
    if (!st || index >= st->count)
        return -ENOENT;
    const struct session_defs_frame *f = &st->frames[index];
    const struct session_defs_method *m = session_defs_method(d, f->method);
    if (!m)
        return 0;
    *parts = (struct frame_parts){.module = optional(d, m->module_sid),
                                  .cls = session_defs_string(d, m->class_sid),
                                  .name = session_defs_string(d, m->name_sid),
                                  .source = optional(d, m->source_sid),
                                  .line = f->line,
                                  .is_native = m->is_native};
    if (library)
        *library = optional(d, m->library_sid);
    return 1;
}

int session_defs_frame(const struct session_defs *d, uint32_t stack, uint32_t index, struct frame_parts *parts,
                       const char **library)
{
    int rc = frame_of(d, stack, index, parts, library);
    return rc < 0 ? rc : 0;
}

const char *session_defs_frame_text(const struct session_defs *d, uint32_t stack, uint32_t index, char *out, size_t cap)
{
    struct frame_parts parts;
    int known = cap ? frame_of(d, stack, index, &parts, NULL) : -ENOENT;
    if (known < 0)
        return NULL;
    return frame_text(known ? &parts : NULL, out, cap); /* a method never defined: frame_text's placeholder */
}

struct origin_ctx {
    const struct session_defs *d;
    const struct session_defs_stack *st;
};

static const char *frame_class(const void *ctx, uint32_t i)
{
    const struct origin_ctx *c = ctx;
    const struct session_defs_method *m = session_defs_method(c->d, c->st->frames[i].method);
    return m ? session_defs_string(c->d, m->class_sid) : NULL;
}

int session_defs_stack_origin(const struct session_defs *d, uint32_t stack)
{
    const struct session_defs_stack *st = session_defs_stack(d, stack);
    if (!st)
        return PIN_ORIGIN_APP;
    struct origin_ctx c = {d, st};
    return frames_pin_origin(frame_class, &c, st->count, st->truncated);
}
