#include "common/blocker_text.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

const char *blocker_kind_name(int what)
{
    switch (what) {
    case BLOCKER_KIND_MONITOR:
        return "monitor";
    case BLOCKER_KIND_NOTIFY:
        return "notify";
    case BLOCKER_KIND_CLASS_INIT:
        return "class_init";
    case BLOCKER_KIND_LOCK:
        return "lock";
    default:
        return NULL;
    }
}

static char *one_blocker(const struct blocker_parts *b, char *out, size_t cap);

char *blocker_text(const struct blocker_parts *b, char *out, size_t cap)
{
    one_blocker(b, out, cap);
    const char *who = b->thread_name;
    for (size_t i = 0; i < b->n_chain && who && out[0]; i++) {
        char hop[512];
        one_blocker(&b->chain[i], hop, sizeof(hop));
        size_t len = strlen(out);
        if (hop[0] && len < cap)
            snprintf(out + len, cap - len, "; \"%s\" in turn is %s", who, hop);
        who = b->chain[i].has_thread ? b->chain[i].thread_name : NULL;
    }
    return out;
}

/* b alone, without its chain. */
static char *one_blocker(const struct blocker_parts *b, char *out, size_t cap)
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
    case BLOCKER_KIND_LOCK:
        if (!b->has_thread) {
            snprintf(out, cap, "parked on a %s, which no single thread owns (held shared, or just released)", cls);
            return out;
        }
        break;
    default:
        return out;
    }
    /* an unmounted virtual owner can run again only on a carrier: the pinned ones may be all there are */
    char carrier[160] = "", pin[48] = "";
    if (b->is_virtual)
        snprintf(carrier, sizeof(carrier), "%s%s", b->carrier ? " on " : ", unmounted", b->carrier ? b->carrier : "");
    if (b->pin)
        snprintf(pin, sizeof(pin), ", itself pinned: pin #%" PRIu64, b->pin);
    const char *what = b->what == BLOCKER_KIND_CLASS_INIT ? " to initialize "
                       : b->what == BLOCKER_KIND_LOCK     ? " holding a "
                                                          : "";
    snprintf(out, cap, "%s \"%s\" (%s%s, %s%s)%s%s%s%s",
             b->what == BLOCKER_KIND_CLASS_INIT ? "waits for" : "blocked by", b->thread_name ? b->thread_name : "",
             b->is_virtual ? "virtual" : "platform", carrier, b->state && b->state[0] ? b->state : "state unknown", pin,
             what, what[0] ? cls : "", b->at ? " at " : "", b->at ? b->at : "");
    return out;
}

const char *blocker_deadlock_kind(const char *code)
{
    static const char prefix[] = "deadlock.";
    if (!code || strncmp(code, prefix, sizeof(prefix) - 1) != 0 || !code[sizeof(prefix) - 1])
        return NULL;
    return code + sizeof(prefix) - 1;
}
