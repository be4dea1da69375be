/* Names for what the callbacks captured: methods, stacks and strings,
 * each given a small id that the wire format references. Owned by the
 * writer thread alone (no locking); every table is bounded by options. */
#ifndef VTPIN_SYMBOLS_H
#define VTPIN_SYMBOLS_H

#include <jvmti.h>
#include <stdint.h>

#include "common/frames_kind.h"
#include "pins.h"

struct symbols;

struct method_info {
    jmethodID mid;
    uint32_t id;
    uint32_t class_sid, name_sid, sig_sid, source_sid, module_sid, library_sid; /* 0: none */
    int is_native;
    int kind; /* enum frame_kind */
    jint line_count;
    jvmtiLineNumberEntry *lines;
    int is_synchronized;
    jint code_len; /* bytecodes, kept when monitors are inferred */
    unsigned char *code;
    unsigned sent; /* bit per sink that has its MethodDef */
};

struct stack_frame {
    uint32_t method; /* method id */
    int32_t bci;
    int32_t line;
    uint16_t monitors;
};

struct stack_info {
    uint32_t id;
    uint32_t count;
    int truncated;
    unsigned sent;
    uint64_t hash;
    jmethodID *mids; /* raw key, for comparison */
    uint16_t *raw_monitors;
    struct stack_frame *frames;
};

/* The dotted name of the class whose <clinit> is the innermost on st (the VM
 * called it: a VM frame lies below everything above it), or NULL. */
const char *symbols_innermost_clinit(struct symbols *s, const struct stack_info *st);

/* infer_monitors: the JVM cannot say which frame holds which monitor (after
 * attach), so count them from each frame's bytecode. */
struct symbols *symbols_new(jvmtiEnv *jvmti, unsigned max_methods, unsigned max_stacks, int infer_monitors);
void symbols_free(struct symbols *s);

/* Interned string id (1-based), 0 when the table is full. */
uint32_t symbols_string(struct symbols *s, const char *text);
const char *symbols_string_text(const struct symbols *s, uint32_t id);
unsigned *symbols_string_sent(struct symbols *s, uint32_t id);

/* The stack of a pin-start record, named and deduplicated; NULL when the
 * stack table is full (counted). */
const struct stack_info *symbols_stack(struct symbols *s, JNIEnv *jni, const struct pin_rec *r, unsigned depth);
struct stack_info *symbols_stack_by_id(struct symbols *s, uint32_t id);
/* 1 when the record holds the same frames as the stack (methods and
 * locations, monitors aside): the thread is still where the stack was taken. */
int symbols_stack_same_frames(const struct stack_info *st, const struct pin_rec *r);
struct method_info *symbols_method_by_id(struct symbols *s, uint32_t id);
uint64_t symbols_stacks_dropped(const struct symbols *s);
/* Frames of kept stacks whose method has no id (methods= table full or unreadable). */
uint64_t symbols_methods_dropped(const struct symbols *s);
/* Forgets that a sink has the definitions (it reconnected and must get them again). */
void symbols_forget_sink(struct symbols *s, unsigned sink_bit);

/* Whether the stack of a callback's record has a native frame (a JNI method,
 * or an FFM downcall), without keeping the stack: 1, 0, or -ENOMEM. */
int symbols_rec_has_native(struct symbols *s, JNIEnv *jni, const struct pin_rec *r);

/* Index of st's top application frame (outside the JDK), 0 when it has none. */
uint32_t symbols_first_app_frame(struct symbols *s, const struct stack_info *st);

/* Index of the frame to blame for a pin of this reason. */
uint32_t symbols_culprit(struct symbols *s, const struct stack_info *st, int reason);

/* The stack's innermost native boundary (JNI method, FFM downcall or JNA call) and the
 * blocking operation above culprit (-1: none). */
void symbols_native_site(struct symbols *s, const struct stack_info *st, uint32_t culprit, struct native_site *site,
                         int *blocking);

/* A reason inferred from the stack when the JDK could not say; monitors_pin:
 * holding a monitor pins on this JDK (21-23). */
int symbols_infer_reason(struct symbols *s, const struct stack_info *st, int monitors_pin);

#endif
