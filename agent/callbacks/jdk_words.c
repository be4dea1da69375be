#include "jdk_words.h"

#include <stdio.h>
#include <string.h>

void jdk_words_assume(struct jdk_words *w)
{
    memset(w, 0, sizeof(*w));
    jdk_words_learn(w, 2, "CRITICAL_SECTION");
    jdk_words_learn(w, 3, "NATIVE");
    jdk_words_learn(w, 4, "MONITOR");
}

void jdk_words_learn(struct jdk_words *w, int code, const char *name)
{
    if (code < 0 || code >= JDK_WORDS_CODES || !name)
        return;
    w->named[code] = 1;
    w->reason[code] = strcmp(name, "NATIVE") == 0             ? REASON_NATIVE
                      : strcmp(name, "CRITICAL_SECTION") == 0 ? REASON_CRITICAL_SECTION
                      : strcmp(name, "MONITOR") == 0          ? REASON_MONITOR
                                                              : REASON_UNKNOWN; /* EXCEPTION, or a name to come */
}

enum pin_reason jdk_words_reason(const struct jdk_words *w, int code)
{
    if (code < 0 || code >= JDK_WORDS_CODES || !w->named[code])
        return REASON_UNKNOWN;
    return (enum pin_reason)w->reason[code];
}

/* JavaThread::post_vthread_pinned_event's order: a class initialization first, then a native or VM
 * frame, then the bare freeze result. */
void jdk_words_format(const struct jdk_words_pin *p, char *out, size_t cap)
{
    int modern = p->jdk_feature >= 24; /* JEP 491: monitors no longer pin */
    if (p->waits_for_class && p->waits_for_class[0]) {
        snprintf(out, cap, "Waited for initialization of %s by another thread", p->waits_for_class);
        return;
    }
    if (p->clinit_class && p->clinit_class[0]) {
        snprintf(out, cap, "VM call to %s.<clinit> on stack", p->clinit_class);
        return;
    }
    const char *words = NULL;
    switch (p->reason) {
    case REASON_NATIVE:
    case REASON_NATIVE_BLOCK:
    case REASON_VM_BLOCK:
        words = "Native or VM frame on stack";
        break;
    case REASON_MONITOR:
        words = "Monitor held"; /* 21-23: Continuation.Pinned.MONITOR */
        break;
    case REASON_MONITOR_ENTER:
        words = "Contended monitor enter"; /* 21-23 cannot unmount there; JFR 24+'s blockingOperation */
        break;
    case REASON_OBJECT_WAIT:
        words = "Object.wait";
        break;
    case REASON_CRITICAL_SECTION:
        if (!modern)
            words = "Critical section"; /* 21-23: Continuation.Pinned.CRITICAL_SECTION */
        break;
    default:
        break;
    }
    if (words)
        snprintf(out, cap, "%s", words);
    else if (p->code > 1)
        snprintf(out, cap, "Freeze or preempt failed (%d)", p->code);
    else
        out[0] = '\0';
}
