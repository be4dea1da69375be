#include "session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "budget.h"
#include "common/frame_text.h"
#include "common/frames_kind.h"
#include "common/idmap.h"

struct method {
    uint32_t class_sid, name_sid, source_sid, module_sid, library_sid;
    int is_native;
};

struct frame {
    uint32_t method;
    int32_t line;
};

struct stack {
    uint32_t count;
    int truncated; /* the agent cut it */
    struct frame frames[];
};

struct session {
    struct session_hello hello;
    struct session_limits limits;
    struct idmap *strings, *methods, *stacks;
    size_t string_bytes, frames;
    uint64_t defs_dropped;
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
    return sizeof(struct stack) + frames * sizeof(struct frame) + ENTRY_OVERHEAD;
}

#define METHOD_COST (sizeof(struct method) + ENTRY_OVERHEAD)

/* Charges the budget for a new entry of cost `add` replacing one of cost
 * `old` (0: none). 0, or 1 when the budget refused (the definition is dropped). */
static int charge(struct session *s, size_t add, size_t old)
{
    if (add > old && budget_take(s->limits.budget, add - old) != 0) {
        s->defs_dropped++;
        s->budget_dropped++;
        return 1;
    }
    if (old > add)
        budget_give(s->limits.budget, old - add);
    s->charged = s->charged + add - old;
    return 0;
}

int session_classify_first(const WireEvent *ev, char *why, size_t whylen)
{
    if (ev->body_case == VTPIN__V1__EVENT__BODY_QUERY)
        return SESSION_FIRST_QUERY;
    if (ev->body_case != VTPIN__V1__EVENT__BODY_HELLO) {
        snprintf(why, whylen, "the first frame is not a Hello or a Query (event field %d)", (int)ev->body_case);
        return -EPROTO;
    }
    if (ev->hello->schema_version < WIRE_SCHEMA_MIN || ev->hello->schema_version > WIRE_SCHEMA_VERSION) {
        snprintf(why, whylen, "schema version %u in its Hello; this collector speaks versions %u to %u",
                 (unsigned)ev->hello->schema_version, (unsigned)WIRE_SCHEMA_MIN, (unsigned)WIRE_SCHEMA_VERSION);
        return -EPROTONOSUPPORT;
    }
    return SESSION_FIRST_AGENT;
}

int session_new(struct session **out, const Vtpin__V1__Hello *hi, const struct session_limits *limits)
{
    struct session *s = calloc(1, sizeof(*s));
    if (!s)
        return -ENOMEM;
    s->limits = *limits;
    int failed = session_hello_take(&s->hello, hi) != 0;
    s->strings = idmap_new();
    s->methods = idmap_new();
    s->stacks = idmap_new();
    if (failed || !s->strings || !s->methods || !s->stacks) {
        session_free(s);
        return -ENOMEM;
    }
    *out = s;
    return 0;
}

void session_free(struct session *s)
{
    if (!s)
        return;
    session_hello_fini(&s->hello);
    budget_give(s->limits.budget, s->charged);
    idmap_free(s->strings, free);
    idmap_free(s->methods, free);
    idmap_free(s->stacks, free);
    free(s);
}

const struct session_hello *session_hello(const struct session *s)
{
    return &s->hello;
}

uint64_t session_defs_dropped(const struct session *s)
{
    return s->defs_dropped;
}

uint64_t session_budget_dropped(const struct session *s)
{
    return s->budget_dropped;
}

static int define_string(struct session *s, const Vtpin__V1__StringDef *d)
{
    const char *value = d->value ? d->value : "";
    size_t len = strlen(value);
    char *old = idmap_get(s->strings, d->id);
    size_t old_len = old ? strlen(old) + 1 : 0;
    if ((!old && idmap_count(s->strings) >= s->limits.max_strings) ||
        s->string_bytes - old_len + len + 1 > s->limits.max_string_bytes) {
        s->defs_dropped++;
        return 1;
    }
    if (charge(s, string_cost(len), old ? string_cost(old_len - 1) : 0))
        return 1;
    char *copy = strdup(value);
    void *replaced = NULL;
    if (!copy || idmap_put(s->strings, d->id, copy, &replaced) != 0) {
        free(copy);
        charge(s, old ? string_cost(old_len - 1) : 0, string_cost(len));
        return -ENOMEM;
    }
    free(replaced);
    s->string_bytes = s->string_bytes - old_len + len + 1;
    return 1;
}

static int define_method(struct session *s, const Vtpin__V1__MethodDef *d)
{
    int exists = idmap_get(s->methods, d->id) != NULL;
    if (!exists && idmap_count(s->methods) >= s->limits.max_methods) {
        s->defs_dropped++;
        return 1;
    }
    if (!exists && charge(s, METHOD_COST, 0))
        return 1;
    struct method *m = malloc(sizeof(*m));
    if (!m) {
        if (!exists)
            charge(s, 0, METHOD_COST);
        return -ENOMEM;
    }
    m->class_sid = d->class_name;
    m->name_sid = d->method_name;
    m->source_sid = d->has_source_file ? d->source_file : 0;
    m->module_sid = d->has_module ? d->module : 0;
    m->library_sid = d->has_library ? d->library : 0;
    m->is_native = d->has_is_native && d->is_native;
    void *replaced = NULL;
    if (idmap_put(s->methods, d->id, m, &replaced) != 0) {
        free(m);
        if (!exists)
            charge(s, 0, METHOD_COST);
        return -ENOMEM;
    }
    free(replaced);
    return 1;
}

static int define_stack(struct session *s, const Vtpin__V1__StackDef *d)
{
    struct stack *old = idmap_get(s->stacks, d->id);
    size_t old_frames = old ? old->count : 0;
    if ((!old && idmap_count(s->stacks) >= s->limits.max_stacks) || d->n_frames > UINT32_MAX ||
        s->frames - old_frames + d->n_frames > s->limits.max_frames) {
        s->defs_dropped++;
        return 1;
    }
    size_t cost = stack_cost(d->n_frames), old_cost = old ? stack_cost(old_frames) : 0;
    if (charge(s, cost, old_cost))
        return 1;
    struct stack *st = malloc(sizeof(*st) + d->n_frames * sizeof(st->frames[0]));
    if (!st) {
        charge(s, old_cost, cost);
        return -ENOMEM;
    }
    st->count = (uint32_t)d->n_frames;
    st->truncated = d->has_truncated && d->truncated;
    for (size_t i = 0; i < d->n_frames; i++) {
        st->frames[i].method = d->frames[i]->method;
        st->frames[i].line = d->frames[i]->has_line ? d->frames[i]->line : -1;
    }
    void *replaced = NULL;
    if (idmap_put(s->stacks, d->id, st, &replaced) != 0) {
        free(st);
        charge(s, old_cost, cost);
        return -ENOMEM;
    }
    free(replaced);
    s->frames = s->frames - old_frames + d->n_frames;
    return 1;
}

int session_define(struct session *s, const WireEvent *ev)
{
    switch (ev->body_case) {
    case VTPIN__V1__EVENT__BODY_STRING:
        return define_string(s, ev->string);
    case VTPIN__V1__EVENT__BODY_METHOD:
        return define_method(s, ev->method);
    case VTPIN__V1__EVENT__BODY_STACK:
        return define_stack(s, ev->stack);
    default:
        return 0;
    }
}

const char *session_string(const struct session *s, uint32_t id)
{
    return idmap_get(s->strings, id);
}

const char *session_format_frame(const struct session *s, uint32_t stack, uint32_t index, char *out, size_t cap)
{
    const struct stack *st = stack ? idmap_get(s->stacks, stack) : NULL;
    if (!st || index >= st->count || cap == 0)
        return NULL;
    const struct frame *f = &st->frames[index];
    const struct method *m = idmap_get(s->methods, f->method);
    if (!m)
        return frame_text(NULL, out, cap);
    struct frame_parts parts = {.module = m->module_sid ? session_string(s, m->module_sid) : NULL,
                                .cls = session_string(s, m->class_sid),
                                .name = session_string(s, m->name_sid),
                                .source = m->source_sid ? session_string(s, m->source_sid) : NULL,
                                .line = f->line,
                                .is_native = m->is_native};
    return frame_text(&parts, out, cap);
}

struct origin_ctx {
    const struct session *s;
    const struct stack *st;
};

static const char *frame_class(const void *ctx, uint32_t i)
{
    const struct origin_ctx *c = ctx;
    const struct method *m = idmap_get(c->s->methods, c->st->frames[i].method);
    return m ? session_string(c->s, m->class_sid) : NULL;
}

int session_stack_origin(const struct session *s, uint32_t stack)
{
    const struct stack *st = stack ? idmap_get(s->stacks, stack) : NULL;
    if (!st)
        return PIN_ORIGIN_APP;
    struct origin_ctx c = {s, st};
    return frames_pin_origin(frame_class, &c, st->count, st->truncated);
}

uint32_t session_stack_depth(const struct session *s, uint32_t stack, int *truncated)
{
    const struct stack *st = stack ? idmap_get(s->stacks, stack) : NULL;
    if (truncated)
        *truncated = st && st->truncated;
    return st ? st->count : 0;
}

int session_frame(const struct session *s, uint32_t stack, uint32_t index, struct frame_parts *parts,
                  const char **library)
{
    const struct stack *st = stack ? idmap_get(s->stacks, stack) : NULL;
    *parts = (struct frame_parts){.line = -1};
    if (library)
        *library = NULL;
    if (!st || index >= st->count)
        return -ENOENT;
    const struct frame *f = &st->frames[index];
    const struct method *m = idmap_get(s->methods, f->method);
    if (!m)
        return 0;
    *parts = (struct frame_parts){.module = m->module_sid ? session_string(s, m->module_sid) : NULL,
                                  .cls = session_string(s, m->class_sid),
                                  .name = session_string(s, m->name_sid),
                                  .source = m->source_sid ? session_string(s, m->source_sid) : NULL,
                                  .line = f->line,
                                  .is_native = m->is_native};
    if (library)
        *library = m->library_sid ? session_string(s, m->library_sid) : NULL;
    return 0;
}
