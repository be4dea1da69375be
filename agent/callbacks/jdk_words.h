/* The JDK's own words for why a carrier is pinned.
 *
 * The codes Continuation.isPinned0 returns are HotSpot's freeze results, and
 * they move between releases (26 dropped MONITOR, so EXCEPTION went from 5 to
 * 4): they are read from the running JDK's Continuation.pinnedReason(int),
 * never assumed. The text is what JFR's jdk.VirtualThreadPinned says on 24+
 * (pinnedReason), and its equivalent where JFR says nothing (21-23, and pins
 * JFR never sees: blocked in native code or in the VM). Pure logic: the agent
 * fills the table through JNI (pins.c), the unit tests by hand. */
#ifndef VTPIN_JDK_WORDS_H
#define VTPIN_JDK_WORDS_H

#include <stddef.h>

#include "pin_rec.h"

#define JDK_WORDS_CODES 16
#define JDK_REASON_MAX 192
#define JDK_CLASS_MAX 160 /* a class named in the words */

/* A freeze result code -> vtpin's reason, and whether the JDK named it. */
struct jdk_words {
    int read_from_jdk; /* the table came from pinnedReason, not from jdk_words_assume */
    unsigned char named[JDK_WORDS_CODES];
    unsigned char reason[JDK_WORDS_CODES]; /* enum pin_reason */
};

/* The table of JDK 21-25 (2 CRITICAL_SECTION, 3 NATIVE, 4 MONITOR), for a JDK that cannot be asked. */
void jdk_words_assume(struct jdk_words *w);
/* Code `code` is Continuation.Pinned.<name> in the running JDK. */
void jdk_words_learn(struct jdk_words *w, int code, const char *name);
/* vtpin's reason for an isPinned0 result: REASON_UNKNOWN for 0, 1 and codes the JDK did not name. */
enum pin_reason jdk_words_reason(const struct jdk_words *w, int code);

/* What the words of one pin depend on. */
struct jdk_words_pin {
    int jdk_feature;             /* 21, 25, ... */
    int reason;                  /* enum pin_reason, vtpin's */
    int code;                    /* the isPinned0 result, -1 when not asked */
    const char *clinit_class;    /* the innermost X.<clinit> on the stack (dotted name), or NULL */
    const char *waits_for_class; /* waits for another thread's initialization of this class, or NULL */
};

/* The JDK's words for p into out[cap], e.g. "Native or VM frame on stack",
 * "VM call to com.example.Slow.<clinit> on stack"; "" when there are none. */
void jdk_words_format(const struct jdk_words_pin *p, char *out, size_t cap);

#endif
