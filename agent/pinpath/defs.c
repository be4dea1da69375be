#include "defs.h"

#include <stdlib.h>

#include "outputs.h"

void defs_send_string(struct symbols *symbols, uint32_t sid)
{
    unsigned *sent = symbols_string_sent(symbols, sid);
    unsigned need = sent ? outputs_connected() & ~*sent : 0;
    if (!need)
        return;
    Vtpin__V1__StringDef def = VTPIN__V1__STRING_DEF__INIT;
    def.id = sid;
    def.value = (char *)symbols_string_text(symbols, sid);
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_STRING;
    ev.string = &def;
    *sent |= outputs_put(need, &ev);
}

void defs_send_method(struct symbols *symbols, uint32_t mid)
{
    struct method_info *m = symbols_method_by_id(symbols, mid);
    unsigned need = m ? outputs_connected() & ~m->sent : 0;
    if (!need)
        return;
    uint32_t sids[] = {m->class_sid, m->name_sid, m->sig_sid, m->source_sid, m->module_sid, m->library_sid};
    for (size_t i = 0; i < sizeof(sids) / sizeof(sids[0]); i++)
        defs_send_string(symbols, sids[i]);
    Vtpin__V1__MethodDef def = VTPIN__V1__METHOD_DEF__INIT;
    def.id = mid;
    def.class_name = m->class_sid;
    def.method_name = m->name_sid;
    OPT_U32(def, signature, m->sig_sid);
    OPT_U32(def, source_file, m->source_sid);
    OPT_U32(def, library, m->library_sid);
    OPT_U32(def, module, m->module_sid);
    def.has_is_native = 1;
    def.is_native = m->is_native;
    if (m->kind != FRAME_JAVA) {
        def.has_kind = 1;
        def.kind = (Vtpin__V1__FrameKind)m->kind;
    }
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_METHOD;
    ev.method = &def;
    m->sent |= outputs_put(need, &ev);
}

void defs_send_stack(struct symbols *symbols, const struct stack_info *cst)
{
    struct stack_info *st = cst ? symbols_stack_by_id(symbols, cst->id) : NULL;
    unsigned need = st ? outputs_connected() & ~st->sent : 0;
    if (!need)
        return;
    for (uint32_t i = 0; i < st->count; i++)
        defs_send_method(symbols, st->frames[i].method);
    Vtpin__V1__Frame *frames = calloc(st->count ? st->count : 1, sizeof(*frames));
    Vtpin__V1__Frame **ptrs = calloc(st->count ? st->count : 1, sizeof(*ptrs));
    if (!frames || !ptrs) {
        free(frames);
        free(ptrs);
        return;
    }
    for (uint32_t i = 0; i < st->count; i++) {
        Vtpin__V1__Frame init = VTPIN__V1__FRAME__INIT;
        frames[i] = init;
        frames[i].method = st->frames[i].method;
        frames[i].has_line = 1;
        frames[i].line = st->frames[i].line;
        frames[i].has_bci = 1;
        frames[i].bci = st->frames[i].bci;
        OPT_U32(frames[i], monitors, st->frames[i].monitors);
        ptrs[i] = &frames[i];
    }
    Vtpin__V1__StackDef def = VTPIN__V1__STACK_DEF__INIT;
    def.id = st->id;
    def.n_frames = st->count;
    def.frames = ptrs;
    if (st->truncated) {
        def.has_truncated = 1;
        def.truncated = 1;
    }
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_STACK;
    ev.stack = &def;
    st->sent |= outputs_put(need, &ev);
    free(frames);
    free(ptrs);
}
