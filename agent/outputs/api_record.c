#include "api_record.h"

#include <stdlib.h>

#include "common/blocker_text.h"
#include "common/frames_kind.h"
#include "common/strbuf.h"
#include "wire_names.h"

/* A name as one field: no tab, no line end. */
static void put_field(struct strbuf *b, const char *text)
{
    char clean[1024];
    size_t n = 0;
    for (const char *c = text ? text : ""; *c && n < sizeof(clean) - 1; c++)
        clean[n++] = *c == '\t' || *c == '\n' || *c == '\r' ? ' ' : *c;
    clean[n] = '\0';
    strbuf_printf(b, "\t%s", clean);
}

struct origin_ctx {
    struct symbols *s;
    const struct stack_info *st;
};

static const char *frame_class(const void *ctx, uint32_t i)
{
    const struct origin_ctx *c = ctx;
    const struct method_info *m = symbols_method_by_id(c->s, c->st->frames[i].method);
    return m ? symbols_string_text(c->s, m->class_sid) : NULL;
}

static void put_blocker(struct strbuf *b, const struct blocker *bl)
{
    char text[512] = "";
    if (bl && bl->what != BLOCKER_NONE) {
        struct blocker_parts parts = {.what = bl->what,
                                      .object_class = bl->object_class[0] ? bl->object_class : NULL,
                                      .has_thread = bl->has_thread,
                                      .thread_name = bl->name,
                                      .is_virtual = bl->is_virtual,
                                      .carrier = bl->carrier[0] ? bl->carrier : NULL,
                                      .state = bl->state};
        blocker_text(&parts, text, sizeof(text));
    }
    put_field(b, text);
}

static const char *culprit_library(struct symbols *s, const struct pin_view *p)
{
    if (p->downcall && p->downcall->library[0])
        return p->downcall->library;
    if (!p->stack || p->culprit >= p->stack->count)
        return "";
    const struct method_info *m = symbols_method_by_id(s, p->stack->frames[p->culprit].method);
    const char *lib = m && m->is_native ? symbols_string_text(s, m->library_sid) : NULL;
    return lib ? lib : "";
}

char *api_record_format(struct symbols *s, const struct pin_view *p, const struct blocker *bl)
{
    struct strbuf b = {0};
    const struct stack_info *st = p->stack;
    struct origin_ctx octx = {s, st};
    int origin = st ? frames_pin_origin(frame_class, &octx, st->count, st->truncated) : PIN_ORIGIN_APP;
    strbuf_printf(&b, "pin\t%llu\t%s\t%lld\t%lld\t%lld", (unsigned long long)p->pin_id, wire_reason_name(p->reason),
                  (long long)p->start_ns, (long long)(p->end_ns ? p->end_ns - p->start_ns : -1),
                  (long long)p->vthread_id);
    put_field(&b, p->vthread_name);
    put_field(&b, p->carrier_name);
    strbuf_printf(&b, "\t%s\t%d\t%d", frames_origin_name(origin), st ? (int)p->culprit : -1, st ? st->truncated : 0);
    put_field(&b, p->jdk_reason);
    put_blocker(&b, bl);
    put_field(&b, culprit_library(s, p));
    strbuf_printf(&b, "\n");
    for (uint32_t i = 0; st && i < st->count; i++) {
        const struct method_info *m = symbols_method_by_id(s, st->frames[i].method);
        char text[1024];
        strbuf_printf(&b, "frame");
        put_field(&b, m ? symbols_string_text(s, m->class_sid) : "");
        put_field(&b, m ? symbols_string_text(s, m->name_sid) : "");
        put_field(&b, trace_format_frame(s, st, i, text, sizeof(text)));
        strbuf_printf(&b, "\n");
    }
    if (b.oom) {
        strbuf_fini(&b);
        return NULL;
    }
    return b.s;
}
