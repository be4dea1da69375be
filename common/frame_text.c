#include "frame_text.h"

#include <inttypes.h>
#include <stdio.h>

char *frame_text(const struct frame_parts *f, char *out, size_t cap)
{
    if (!f) {
        snprintf(out, cap, "%s", FRAME_TEXT_UNKNOWN_METHOD);
        return out;
    }
    const char *module = f->module && *f->module ? f->module : NULL;
    const char *cls = f->cls ? f->cls : FRAME_TEXT_UNKNOWN, *name = f->name ? f->name : FRAME_TEXT_UNKNOWN;
    if (f->is_native)
        snprintf(out, cap, "%s%s%s.%s(Native Method)", module ? module : "", module ? "/" : "", cls, name);
    else if (f->source && f->line >= 0)
        snprintf(out, cap, "%s%s%s.%s(%s:%" PRId32 ")", module ? module : "", module ? "/" : "", cls, name, f->source,
                 f->line);
    else
        snprintf(out, cap, "%s%s%s.%s(%s)", module ? module : "", module ? "/" : "", cls, name,
                 f->source ? f->source : "Unknown Source");
    return out;
}
