#include "frames_kind.h"

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

int frames_is_blocking_native(const char *cls, const char *method)
{
    return (cls && method) && ((strcmp(cls, "jdk.internal.misc.Unsafe") == 0 && strcmp(method, "park") == 0) ||
                               (strcmp(cls, "java.lang.Object") == 0 && strcmp(method, "wait0") == 0) ||
                               (strcmp(cls, "java.lang.Thread") == 0 && strncmp(method, "sleep", 5) == 0) ||
                               strcmp(cls, "jdk.internal.vm.Continuation") == 0);
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
    if (is_native) /* MethodHandle.linkTo* and invokeBasic are native too, but never appear as frames */
        return FRAME_NATIVE;
    if (starts_with(cls, "java.lang.invoke.") || starts_with(cls, "jdk.internal.foreign.") ||
        starts_with(cls, "sun.invoke.") || starts_with(cls, "jdk.internal.reflect."))
        return FRAME_METHOD_HANDLE;
    return FRAME_JAVA;
}

void frames_native_site(const struct frame_name *frames, uint32_t n, struct native_site *out)
{
    out->culprit = out->downcall = out->upcall = -1;
    int upcall = -1;
    for (uint32_t i = 0; i < n; i++) {
        const struct frame_name *f = &frames[i];
        if (f->kind == FRAME_UPCALL_STUB) {
            upcall = (int)i;
        } else if (f->kind == FRAME_NATIVE && !frames_is_blocking_native(f->cls, f->method)) {
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
        if (frames[i].kind == FRAME_JAVA && frames[i].cls && !frames_is_jdk_class(frames[i].cls))
            return i;
    /* JDK code called back from C: the Java frame the upcall entered */
    for (int i = (upcall >= 0 && upcall < culprit ? upcall : 0) - 1; i >= 0; i--)
        if (frames[i].kind == FRAME_JAVA)
            return i;
    return -1;
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
