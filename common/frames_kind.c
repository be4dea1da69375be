#include "frames_kind.h"

#include <stdio.h>
#include <string.h>

static int starts_with(const char *s, const char *prefix)
{
    return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

/* "jdk.internal.foreign.abi.DowncallStub" or one of its hidden classes ("...DowncallStub/0x7f..."). */
static int is_class_or_hidden(const char *cls, const char *name)
{
    size_t n = strlen(name);
    return cls && strncmp(cls, name, n) == 0 && (cls[n] == '\0' || cls[n] == '/');
}

int frames_is_jdk_class(const char *cls)
{
    return starts_with(cls, "java.") || starts_with(cls, "jdk.") || starts_with(cls, "sun.") ||
           starts_with(cls, "javax.") || starts_with(cls, "com.sun.");
}

int frames_pin_origin(const char *(*class_at)(const void *ctx, uint32_t i), const void *ctx, uint32_t n, int truncated)
{
    if (n == 0 || truncated)
        return PIN_ORIGIN_APP;
    for (uint32_t i = 0; i < n; i++)
        if (!frames_is_jdk_class(class_at(ctx, i)))
            return PIN_ORIGIN_APP;
    return PIN_ORIGIN_JDK;
}

const char *frames_origin_name(int origin)
{
    return origin == PIN_ORIGIN_JDK ? "jdk" : "app";
}

int frames_is_blocking_native(const char *cls, const char *method)
{
    return (cls && method) && ((strcmp(cls, "jdk.internal.misc.Unsafe") == 0 && strcmp(method, "park") == 0) ||
                               (strcmp(cls, "java.lang.Object") == 0 && strcmp(method, "wait0") == 0) ||
                               (strcmp(cls, "java.lang.Thread") == 0 && strncmp(method, "sleep", 5) == 0) ||
                               strcmp(cls, "jdk.internal.vm.Continuation") == 0);
}

int frames_is_proxy_class(const char *cls)
{
    if (!cls)
        return 0;
    const char *dot = strrchr(cls, '.');
    const char *simple = dot ? dot + 1 : cls;
    if (strncmp(simple, "$Proxy", 6) != 0 || !simple[6])
        return 0;
    for (const char *c = simple + 6; *c; c++)
        if (*c < '0' || *c > '9')
            return 0;
    return 1;
}

/* JNA's own frames between its JNI method and the interface's proxy (or the
 * caller of Function.invoke*), and between C and a Callback's method. */
static int is_jna_plumbing(const char *cls)
{
    return strcmp(cls, "com.sun.jna.Function") == 0 || starts_with(cls, "com.sun.jna.Library$Handler") ||
           starts_with(cls, "com.sun.jna.Native$") || starts_with(cls, "com.sun.jna.CallbackReference");
}

/* The InvocationHandler right under a JNA interface's proxy frame: Library$Handler, or Native.synchronizedLibrary's. */
static int is_jna_handler(const char *cls)
{
    return starts_with(cls, "com.sun.jna.Library$Handler") || starts_with(cls, "com.sun.jna.Native$");
}

/* JNA's JNI method that calls a C function: Native.invokeInt, invokeVoid, invokePointer, ... */
static int is_jna_invoke(const struct frame_name *f)
{
    return f->kind == FRAME_NATIVE && f->cls && f->method && strcmp(f->cls, "com.sun.jna.Native") == 0 &&
           starts_with(f->method, "invoke");
}

enum frame_kind frames_classify(const char *cls, const char *method, int is_native)
{
    if (!cls)
        return is_native ? FRAME_NATIVE : FRAME_JAVA;
    /* Specialized stubs (the default), and the interpreted bindings
     * (-Djdk.internal.foreign.DowncallLinker.USE_SPEC=false). */
    if (is_class_or_hidden(cls, "jdk.internal.foreign.abi.DowncallStub") ||
        (strcmp(cls, "jdk.internal.foreign.abi.DowncallLinker") == 0 && method &&
         strcmp(method, "invokeInterpBindings") == 0))
        return FRAME_DOWNCALL_STUB;
    if (is_class_or_hidden(cls, "jdk.internal.foreign.abi.UpcallStub") ||
        (strcmp(cls, "jdk.internal.foreign.abi.UpcallLinker") == 0 && method &&
         strcmp(method, "invokeInterpBindings") == 0))
        return FRAME_UPCALL_STUB;
    if (strcmp(cls, "com.sun.jna.CallbackReference$DefaultCallbackProxy") == 0 && method &&
        strcmp(method, "callback") == 0) /* what JNA's C code calls for a Callback */
        return FRAME_UPCALL_STUB;
    if (is_native) /* MethodHandle.linkTo* and invokeBasic are native too, but never appear as frames */
        return FRAME_NATIVE;
    if (starts_with(cls, "java.lang.invoke.") || starts_with(cls, "jdk.internal.foreign.") ||
        starts_with(cls, "sun.invoke.") || starts_with(cls, "jdk.internal.reflect.") ||
        (strcmp(cls, "java.lang.reflect.Method") == 0 && method && strcmp(method, "invoke") == 0) ||
        is_jna_plumbing(cls))
        return FRAME_METHOD_HANDLE;
    return FRAME_JAVA;
}

/* The culprit of the JNA call whose JNI method is frame i: the first frame
 * below JNA's plumbing and the interface's proxy (a proxy frame counts as
 * plumbing when JNA's handler, Library$Handler or a synchronizedLibrary's, is
 * right above it). A stack cut inside the plumbing blames the
 * proxy frame, else the JNI method. */
static void jna_site(const struct frame_name *frames, uint32_t n, uint32_t i, struct native_site *out)
{
    out->jna = out->culprit = (int)i;
    for (uint32_t j = i + 1; j < n; j++) {
        const struct frame_name *f = &frames[j];
        if (f->kind == FRAME_JAVA && frames_is_proxy_class(f->cls) && frames[j - 1].cls &&
            is_jna_handler(frames[j - 1].cls)) {
            if (out->jna_function < 0)
                out->jna_function = (int)j;
            out->culprit = (int)j;
            continue;
        }
        if (f->kind == FRAME_METHOD_HANDLE)
            continue;
        /* a JNA call made right from an upcall stub has no user frame of its own */
        if (f->kind == FRAME_JAVA || f->kind == FRAME_NATIVE)
            out->culprit = (int)j;
        break;
    }
}

void frames_native_site(const struct frame_name *frames, uint32_t n, struct native_site *out)
{
    out->culprit = out->downcall = out->upcall = out->jna = out->jna_function = -1;
    int upcall = -1;
    for (uint32_t i = 0; i < n; i++) {
        const struct frame_name *f = &frames[i];
        if (f->kind == FRAME_UPCALL_STUB) {
            upcall = (int)i;
        } else if (f->kind == FRAME_NATIVE && !frames_is_blocking_native(f->cls, f->method)) {
            if (is_jna_invoke(f))
                jna_site(frames, n, i, out);
            else
                out->culprit = (int)i;
            break;
        } else if (f->kind == FRAME_DOWNCALL_STUB) {
            out->downcall = out->culprit = (int)i;
            for (uint32_t j = i + 1; j < n; j++) {
                if (frames[j].kind != FRAME_METHOD_HANDLE) {
                    /* a downcall invoked right from an upcall stub has no user frame of its own */
                    if (frames[j].kind == FRAME_JAVA || frames[j].kind == FRAME_NATIVE)
                        out->culprit = (int)j;
                    break;
                }
            }
            break;
        }
    }
    if (out->culprit >= 0)
        out->upcall = upcall;
}

int frames_blocking(const struct frame_name *frames, uint32_t n, int culprit, int upcall)
{
    if (culprit <= 0 || (uint32_t)culprit > n)
        return -1;
    for (int i = 0; i < culprit; i++)
        if (frames[i].kind == FRAME_JAVA && frames[i].cls && !frames_is_jdk_class(frames[i].cls) &&
            !frames_is_proxy_class(frames[i].cls))
            return i;
    /* JDK code called back from C: the Java frame the upcall entered */
    for (int i = (upcall >= 0 && upcall < culprit ? upcall : 0) - 1; i >= 0; i--)
        if (frames[i].kind == FRAME_JAVA)
            return i;
    return -1;
}

static const char *basename_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

char *frames_call_marker(int api, const char *symbol, const char *library, char *out, size_t cap)
{
    int has_sym = symbol && *symbol, has_lib = library && *library;
    if (!cap)
        return out;
    if (api == NATIVE_API_JNA) {
        if (!has_sym)
            snprintf(out, cap, " <== native (JNA, function unknown)");
        else if (!has_lib)
            snprintf(out, cap, " <== native (JNA %s)", symbol);
        else
            snprintf(out, cap, " <== native (JNA %s, %s)", symbol, basename_of(library));
    } else if (!has_sym && !has_lib) {
        snprintf(out, cap, " <== native (FFM downcall, target unknown)");
    } else {
        snprintf(out, cap, " <== native (FFM downcall %s, %s)", has_sym ? symbol : "?",
                 has_lib ? basename_of(library) : "library unknown");
    }
    return out;
}

char *frames_native_frame(int api, const char *symbol, const char *library, char *out, size_t cap)
{
    char marker[512];
    if (!cap)
        return out;
    if (api < 0) {
        if (library && *library)
            snprintf(out, cap, "[native: JNI %s]", basename_of(library));
        else
            snprintf(out, cap, "[native: JNI, library unknown]");
        return out;
    }
    /* " <== native (FFM downcall qsort, libc.so.6)": the words inside the parentheses */
    frames_call_marker(api, symbol, library, marker, sizeof(marker));
    const char *open = strchr(marker, '(');
    size_t len = open ? strlen(open + 1) : 0;
    if (len && open[len] == ')')
        len--;
    snprintf(out, cap, "[native: %.*s]", (int)len, open ? open + 1 : "");
    return out;
}

uint32_t frames_native_entry(int (*kind_at)(const void *ctx, uint32_t i), const void *ctx, uint32_t culprit)
{
    for (uint32_t i = culprit + 1; i-- > 0;) {
        int kind = kind_at(ctx, i);
        if (kind == FRAME_NATIVE || kind == FRAME_DOWNCALL_STUB)
            return i;
    }
    return 0;
}

const char *frames_api_name(int api)
{
    return api == NATIVE_API_JNA ? "jna" : "ffm";
}

const char *frames_kind_name(int kind)
{
    switch (kind) {
    case FRAME_NATIVE:
        return "native";
    case FRAME_DOWNCALL_STUB:
        return "downcall_stub";
    case FRAME_UPCALL_STUB:
        return "upcall_stub";
    case FRAME_METHOD_HANDLE:
        return "method_handle";
    default:
        return "java";
    }
}
