#include "common/blocker_text.h"

#include <inttypes.h>
#include <stdio.h>

const char *blocker_kind_name(int what)
{
    switch (what) {
    case BLOCKER_KIND_MONITOR:
        return "monitor";
    case BLOCKER_KIND_NOTIFY:
        return "notify";
    case BLOCKER_KIND_CLASS_INIT:
        return "class_init";
    default:
        return NULL;
    }
}

char *blocker_text(const struct blocker_parts *b, char *out, size_t cap)
{
    const char *cls = b->object_class ? b->object_class : "?";
    out[0] = '\0';
    switch (b->what) {
    case BLOCKER_KIND_NOTIFY:
        if (b->object_class)
            snprintf(out, cap, "waits for notify on a %s", cls);
        else
            snprintf(out, cap, "waits for notify (JVMTI does not say on what)");
        return out;
    case BLOCKER_KIND_MONITOR:
        if (!b->has_thread) {
            snprintf(out, cap, "blocked entering a %s monitor (its owner not known)", cls);
            return out;
        }
        break;
    case BLOCKER_KIND_CLASS_INIT:
        if (!b->has_thread) {
            snprintf(out, cap, "waits for the initialization of %s (its thread not found)", cls);
            return out;
        }
        break;
    default:
        return out;
    }
    char carrier[160] = "", pin[48] = "";
    if (b->is_virtual && b->carrier)
        snprintf(carrier, sizeof(carrier), " on %s", b->carrier);
    if (b->pin)
        snprintf(pin, sizeof(pin), ", itself pinned: pin #%" PRIu64, b->pin);
    snprintf(out, cap, "%s \"%s\" (%s%s, %s%s)%s%s%s%s",
             b->what == BLOCKER_KIND_CLASS_INIT ? "waits for" : "blocked by", b->thread_name ? b->thread_name : "",
             b->is_virtual ? "virtual" : "platform", carrier, b->state && b->state[0] ? b->state : "state unknown", pin,
             b->what == BLOCKER_KIND_CLASS_INIT ? " to initialize " : "", b->what == BLOCKER_KIND_CLASS_INIT ? cls : "",
             b->at ? " at " : "", b->at ? b->at : "");
    return out;
}
