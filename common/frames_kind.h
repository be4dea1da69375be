/* What kind of native boundary each frame of a stack is, and which frame to
 * blame for a native pin: a JNI native method, the frame that invoked an FFM
 * downcall handle, or the frame that called a JNA function (JNA's JNI method
 * com.sun.jna.Native.invoke* under its Function, Library$Handler and proxy
 * frames). Pure functions over class and method names, shared by the agent,
 * the collector and the CLI (recordings without frame kinds). */
#ifndef VTPIN_COMMON_FRAMES_KIND_H
#define VTPIN_COMMON_FRAMES_KIND_H

#include <stddef.h>
#include <stdint.h>

/* Values match vtpin.v1.FrameKind. */
enum frame_kind {
    FRAME_JAVA = 0,          /* an ordinary Java frame */
    FRAME_NATIVE = 1,        /* a JNI native method */
    FRAME_DOWNCALL_STUB = 2, /* jdk.internal.foreign.abi.DowncallStub: Java calling C through FFM */
    FRAME_UPCALL_STUB = 3,   /* C calling back into Java: jdk.internal.foreign.abi.UpcallStub, or JNA's
                                callback entry (CallbackReference$DefaultCallbackProxy.callback) */
    FRAME_METHOD_HANDLE = 4, /* method-handle, reflection, FFM and JNA plumbing (LambdaForm, Invokers,
                                DirectMethodHandle$Holder, Method.invoke;
                                com.sun.jna.Function, Library$Handler, Native$*, CallbackReference$*) */
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
    int culprit;      /* the frame whose native code pins: the JNI method, the frame that invoked the
                         downcall handle (first frame below the stub that is not plumbing), or the frame
                         that called the JNA function (first frame below JNA's plumbing); -1: none */
    int downcall;     /* that FFM downcall's stub frame; -1 otherwise */
    int upcall;       /* the upcall stub nearest above the culprit; -1 when native code did not call back */
    int jna;          /* JNA's JNI method (com.sun.jna.Native.invoke*) of a JNA call; -1 otherwise */
    int jna_function; /* that call's interface method, a dynamic proxy frame ($Proxy7.usleep): its name is
                         the C function's (JNA's default mapping); -1 without one (Function.invoke* called
                         directly, or the stack was cut) */
};

void frames_native_site(const struct frame_name *frames, uint32_t n, struct native_site *out);

/* Whether cls is a dynamic proxy class: "jdk.proxy1.$Proxy0", "com.sun.proxy.$Proxy3", "com.acme.$Proxy12". */
int frames_is_proxy_class(const char *cls);

/* The marker of a culprit that calls C through FFM or JNA, into out[cap]:
 * " <== native (FFM downcall qsort, libc.so.6)", " <== native (FFM downcall, target unknown)",
 * " <== native (JNA usleep, libc.so.6)", " <== native (JNA usleep)" (library unknown),
 * " <== native (JNA, function unknown)". symbol and library are NULL (or "") when unknown;
 * library may be a path. Returns out. */
enum native_api { NATIVE_API_FFM = 0, NATIVE_API_JNA = 1 }; /* values match vtpin.v1.NativeApi */
char *frames_call_marker(int api, const char *symbol, const char *library, char *out, size_t cap);
const char *frames_api_name(int api); /* "ffm", "jna" */

/* The native code a pin is in as a frame of its own (the pprof profiles, flame graphs):
 * "[native: FFM downcall qsort, libc.so.6]", "[native: JNA usleep, libc.so.6]" (frames_call_marker's
 * words) for a call through FFM or JNA (api an enum native_api), or for a JNI method (api -1)
 * "[native: JNI libfoo.so]" ("[native: JNI, library unknown]"); library may be a path. Returns out. */
char *frames_native_frame(int api, const char *symbol, const char *library, char *out, size_t cap);
/* Where that frame goes in a stack (top frame first): right above the frame that enters the
 * native code, the first from culprit towards the top that is a native method (the JNI culprit,
 * JNA's Native.invoke*) or an FFM downcall stub; frames above it are the native code's callbacks.
 * kind_at(ctx, i) is frame i's enum frame_kind. Returns that frame's index, 0 when there is none. */
uint32_t frames_native_entry(int (*kind_at)(const void *ctx, uint32_t i), const void *ctx, uint32_t culprit);

/* The blocking operation (what JFR 24+ calls blockingOperation, as a frame):
 * the first application frame above culprit (never a dynamic proxy's); else,
 * below an upcall stub, the first Java frame above it. -1 when the culprit is
 * itself where it blocks. */
int frames_blocking(const struct frame_name *frames, uint32_t n, int culprit, int upcall);

const char *frames_kind_name(int kind); /* "java", "native", "downcall_stub", "upcall_stub", "method_handle" */

/* Whose pin it is, the one rule the report, `vtpin run`'s gates, the collector's metrics and the
 * tests share: the JDK's own when every frame of the pinned virtual thread's stack is a JDK class
 * (frames_is_jdk_class: class linking, the JDK's pollers, JDK-internal waits), which no change to
 * the application removes; else the application's. A pin without a stack, or with a stack cut
 * short (truncated: the cut frames, the root of a virtual thread's stack, are where the
 * application's code would be), is the application's: nothing shows it is not. */
enum pin_origin { PIN_ORIGIN_APP = 0, PIN_ORIGIN_JDK = 1 };
/* class_at(ctx, i) is frame i's dotted class name (NULL when unknown: not the JDK's). */
int frames_pin_origin(const char *(*class_at)(const void *ctx, uint32_t i), const void *ctx, uint32_t n, int truncated);
const char *frames_origin_name(int origin); /* "app", "jdk" */

#endif
