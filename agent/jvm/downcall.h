/* Which C function an FFM downcall or a JNA call on a pinned thread's stack calls.
 *
 * The specialized stub (jdk.internal.foreign.abi.DowncallStub.invoke) takes
 * the target as its second parameter, a MemorySegment: with
 * can_access_local_variables (load at startup only) the writer reads it from
 * the stub's frame while the thread is still pinned, asks it for its
 * address() and names it with dladdr. Writer thread only; never on a
 * callback. After attach the target stays unknown.
 *
 * A JNA call names its function by the interface method's name (JNA's
 * default mapping): the library is where dlsym(RTLD_DEFAULT) finds that name,
 * in startup and attach mode alike. */
#ifndef VTPIN_DOWNCALL_H
#define VTPIN_DOWNCALL_H

#include <jvmti.h>
#include <stdint.h>

#define DOWNCALL_SYMBOL_MAX 128
#define DOWNCALL_LIBRARY_MAX 256

struct downcall_target {
    int api;                            /* enum native_api (common/frames_kind.h): FFM or JNA */
    uint64_t address;                   /* 0: unknown */
    char symbol[DOWNCALL_SYMBOL_MAX];   /* "" when dladdr names none; "sym+0x10" inside a function */
    char library[DOWNCALL_LIBRARY_MAX]; /* "" when unknown */
};

/* Whether the env holds can_access_local_variables. */
void downcall_configure(int can_read_locals);
int downcall_can_resolve(void);

/* The target of the downcall whose stub frame is at depth on thread, if that
 * frame is still stub (the thread may have moved on). Returns 0, -ENOTSUP
 * (no capability), -ESTALE (the frame is no longer the stub) or -EIO. */
int downcall_resolve(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jint depth, jmethodID stub,
                     struct downcall_target *out);

/* The call sites whose target was read, so that a pin over before the writer
 * looked (a short one, or a writer late under load) is still named: a call
 * site (the culprit frame's method and bci) that called one target is
 * assumed to call it again; one seen calling two is never named this way.
 * Bounded (64 sites; later ones are not remembered). Writer thread only. */
void downcall_site_learn(jmethodID caller, int32_t bci, const struct downcall_target *target);
/* 0 and *out when the site called exactly one target so far, else -ENOENT. */
int downcall_site_recall(jmethodID caller, int32_t bci, struct downcall_target *out);

/* Names an address: symbol (with +offset when inside it) and library path. Returns 0 or -ENOENT. */
int downcall_name(uint64_t address, struct downcall_target *out);

/* A JNA call of the C function symbol (NULL: unknown): out gets the symbol,
 * and its address and library when dlsym finds it. Returns 0 or -ENOENT. */
int downcall_name_jna(const char *symbol, struct downcall_target *out);

#endif
