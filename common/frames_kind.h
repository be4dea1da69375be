/* What kind of native boundary each frame of a stack is, and which frame to
 * blame for a native pin: a JNI native method (JNA's included), or the frame
 * that invoked an FFM downcall handle. Pure functions over class and method
 * names, shared by the agent and the CLI (recordings without frame kinds). */
#ifndef VTPIN_COMMON_FRAMES_KIND_H
#define VTPIN_COMMON_FRAMES_KIND_H

#include <stdint.h>

/* Values match vtpin.v1.FrameKind. */
enum frame_kind {
    FRAME_JAVA = 0,          /* an ordinary Java frame */
    FRAME_NATIVE = 1,        /* a JNI native method */
    FRAME_DOWNCALL_STUB = 2, /* jdk.internal.foreign.abi.DowncallStub: Java calling C through FFM */
    FRAME_UPCALL_STUB = 3,   /* jdk.internal.foreign.abi.UpcallStub: C calling back into Java */
    FRAME_METHOD_HANDLE = 4, /* method-handle and FFM plumbing (LambdaForm, Invokers, DirectMethodHandle$Holder) */
};

/* cls is the dotted binary name (hidden classes as "pkg.Name/0x..."). */
enum frame_kind frames_classify(const char *cls, const char *method, int is_native);

/* Native frames that are how a thread blocks (Unsafe.park, Object.wait0,
 * Thread.sleep*, Continuation), not why it is pinned. */
int frames_is_blocking_native(const char *cls, const char *method);

/* java., jdk., sun., javax., com.sun. */
int frames_is_jdk_class(const char *cls);

struct frame_name {
    const char *cls;    /* NULL when unknown */
    const char *method; /* NULL when unknown */
    int kind;           /* enum frame_kind */
};

/* The innermost native boundary of a stack (top frame first). */
struct native_site {
    int culprit;  /* the frame whose native code pins: the JNI method, or the frame that invoked the
                     downcall handle (first frame below the stub that is not plumbing); -1: none */
    int downcall; /* that downcall's stub frame; -1 for a JNI method or none */
    int upcall;   /* the upcall stub nearest above the culprit; -1 when native code did not call back */
};

void frames_native_site(const struct frame_name *frames, uint32_t n, struct native_site *out);

/* The blocking operation (what JFR 24+ calls blockingOperation, as a frame):
 * the first application frame above culprit; else, below an upcall stub, the
 * first Java frame above it. -1 when the culprit is itself where it blocks. */
int frames_blocking(const struct frame_name *frames, uint32_t n, int culprit, int upcall);

const char *frames_kind_name(int kind); /* "java", "native", "downcall_stub", "upcall_stub", "method_handle" */

#endif
