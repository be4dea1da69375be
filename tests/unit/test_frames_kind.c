/* Unit tests for common/frames_kind.c: frame kinds from class and method names
 * and the culprit / blocking-operation choice over stacks as JDK 21 and 25
 * show them (JNI, FFM downcall with an upcall, FFM downcall blocking in C,
 * JNA interface calls blocking in C or calling back, nested boundaries,
 * plumbing-only stacks) and the FFM / JNA culprit markers. */
#include "common/frames_kind.h"

#include "check.h"

#define N(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))

/* A frame as symbols.c builds it: kind from the names. */
static struct frame_name fr(const char *cls, const char *method, int is_native)
{
    struct frame_name f = {cls, method, (int)frames_classify(cls, method, is_native)};
    return f;
}

static void test_classify(void)
{
    CHECK_INT(frames_classify("jdk.internal.foreign.abi.DowncallStub/0x0000000048049000", "invoke", 0),
              FRAME_DOWNCALL_STUB);
    CHECK_INT(frames_classify("jdk.internal.foreign.abi.DowncallStub", "invoke", 0), FRAME_DOWNCALL_STUB);
    CHECK_INT(frames_classify("jdk.internal.foreign.abi.DowncallLinker", "invokeInterpBindings", 0),
              FRAME_DOWNCALL_STUB);
    CHECK_INT(frames_classify("jdk.internal.foreign.abi.DowncallLinker", "getBoundMethodHandle", 0),
              FRAME_METHOD_HANDLE);
    CHECK_INT(frames_classify("jdk.internal.foreign.abi.UpcallStub/0x000000004804dc00", "invoke", 0),
              FRAME_UPCALL_STUB);
    CHECK_INT(frames_classify("jdk.internal.foreign.abi.UpcallLinker", "invokeInterpBindings", 0), FRAME_UPCALL_STUB);
    /* a user class whose name merely starts like the stub is not one */
    CHECK_INT(frames_classify("jdk.internal.foreign.abi.DowncallStubs", "invoke", 0), FRAME_METHOD_HANDLE);
    CHECK_INT(frames_classify("com.acme.DowncallStub", "invoke", 0), FRAME_JAVA);
    CHECK_INT(frames_classify("java.lang.invoke.LambdaForm$MH/0x0000000048051000", "invokeExact_MT", 0),
              FRAME_METHOD_HANDLE);
    CHECK_INT(frames_classify("java.lang.invoke.LambdaForm$DMH/0x0000000048049400", "invokeStatic", 0),
              FRAME_METHOD_HANDLE);
    CHECK_INT(frames_classify("java.lang.invoke.DirectMethodHandle$Holder", "invokeStatic", 0), FRAME_METHOD_HANDLE);
    CHECK_INT(frames_classify("java.lang.invoke.Invokers$Holder", "invokeExact_MT", 0), FRAME_METHOD_HANDLE);
    CHECK_INT(frames_classify("java.lang.Thread", "sleep", 0), FRAME_JAVA);
    CHECK_INT(frames_classify("JniSleep", "sleepInNative", 1), FRAME_NATIVE);
    CHECK_INT(frames_classify("com.sun.jna.Native", "invokeVoid", 1), FRAME_NATIVE);
    CHECK_INT(frames_classify("com.sun.jna.Function", "invoke", 0), FRAME_METHOD_HANDLE);
    CHECK_INT(frames_classify("com.sun.jna.Library$Handler", "invoke", 0), FRAME_METHOD_HANDLE);
    CHECK_INT(frames_classify("com.sun.jna.Native$3", "invoke", 0), FRAME_METHOD_HANDLE);
    CHECK_INT(frames_classify("com.sun.jna.CallbackReference$DefaultCallbackProxy", "invokeCallback", 0),
              FRAME_METHOD_HANDLE);
    CHECK_INT(frames_classify("com.sun.jna.CallbackReference$DefaultCallbackProxy", "callback", 0), FRAME_UPCALL_STUB);
    /* JNA's other classes are not plumbing: Native.load, Structure, the platform library */
    CHECK_INT(frames_classify("com.sun.jna.Native", "load", 0), FRAME_JAVA);
    CHECK_INT(frames_classify("com.sun.jna.Structure", "read", 0), FRAME_JAVA);
    CHECK_INT(frames_classify("com.sun.jna.FunctionX", "invoke", 0), FRAME_JAVA);
    /* a dynamic proxy is plumbing only right under JNA's handler (frames_native_site) */
    CHECK_INT(frames_classify("jdk.proxy1.$Proxy0", "usleep", 0), FRAME_JAVA);
    CHECK_INT(frames_classify("java.lang.reflect.Method", "invoke", 0), FRAME_METHOD_HANDLE);
    CHECK_INT(frames_classify("java.lang.reflect.Method", "getName", 0), FRAME_JAVA);
    CHECK(frames_is_proxy_class("jdk.proxy1.$Proxy0") && frames_is_proxy_class("com.sun.proxy.$Proxy12") &&
          frames_is_proxy_class("com.acme.$Proxy7") && frames_is_proxy_class("$Proxy3"));
    CHECK(!frames_is_proxy_class("com.acme.$Proxy") && !frames_is_proxy_class("com.acme.$ProxyFactory") &&
          !frames_is_proxy_class("com.acme.Proxy1") && !frames_is_proxy_class("jdk.proxy1.$Proxy0$1") &&
          !frames_is_proxy_class(NULL));
    CHECK_INT(frames_classify("FfmQsort$$Lambda/0x0000000048041210", "run", 0), FRAME_JAVA);
    CHECK_INT(frames_classify(NULL, NULL, 1), FRAME_NATIVE);
    CHECK_INT(frames_classify(NULL, NULL, 0), FRAME_JAVA);
    CHECK_STR(frames_kind_name(FRAME_DOWNCALL_STUB), "downcall_stub");
    CHECK_STR(frames_kind_name(FRAME_UPCALL_STUB), "upcall_stub");
    CHECK_STR(frames_kind_name(FRAME_METHOD_HANDLE), "method_handle");
    CHECK_STR(frames_kind_name(FRAME_NATIVE), "native");
    CHECK_STR(frames_kind_name(FRAME_JAVA), "java");
    CHECK_STR(frames_kind_name(99), "java");
}

static void test_blocking_natives(void)
{
    CHECK(frames_is_blocking_native("jdk.internal.misc.Unsafe", "park"));
    CHECK(frames_is_blocking_native("java.lang.Object", "wait0"));
    CHECK(frames_is_blocking_native("java.lang.Thread", "sleep0"));
    CHECK(frames_is_blocking_native("java.lang.Thread", "sleepNanos0"));
    CHECK(frames_is_blocking_native("jdk.internal.vm.Continuation", "doYield"));
    CHECK(!frames_is_blocking_native("JniSleep", "sleepInNative"));
    CHECK(!frames_is_blocking_native("jdk.internal.misc.Unsafe", "unpark"));
    CHECK(!frames_is_blocking_native(NULL, "park"));
    CHECK(frames_is_jdk_class("java.lang.Thread") && frames_is_jdk_class("jdk.internal.misc.Unsafe") &&
          frames_is_jdk_class("sun.nio.ch.Net") && frames_is_jdk_class("com.sun.jna.Native") &&
          frames_is_jdk_class("javax.net.Foo"));
    CHECK(!frames_is_jdk_class("FfmQsort") && !frames_is_jdk_class("javafoo.Bar") && !frames_is_jdk_class(NULL));
}

/* JDK 25, FfmQsort: qsort through FFM, the comparator (an upcall) sleeps. */
static void test_ffm_qsort_upcall(void)
{
    struct frame_name st[] = {
        fr("java.lang.VirtualThread", "parkOnCarrierThread", 0),
        fr("java.lang.VirtualThread", "parkNanos", 0),
        fr("java.lang.VirtualThread", "sleepNanos", 0),
        fr("java.lang.Thread", "sleepNanos", 0),
        fr("java.lang.Thread", "sleep", 0),
        fr("FfmQsort", "compare", 0), /* 5: the blocking operation */
        fr("java.lang.invoke.DirectMethodHandle$Holder", "invokeStatic", 0),
        fr("java.lang.invoke.LambdaForm$MH/0x0000000048052800", "invokeExact_MT", 0),
        fr("jdk.internal.foreign.abi.UpcallStub/0x000000004804dc00", "invoke", 0), /* 8 */
        fr("java.lang.invoke.LambdaForm$DMH/0x000000004804e000", "invokeStatic", 0),
        fr("java.lang.invoke.LambdaForm$MH/0x000000004804f400", "invoke", 0),
        fr("java.lang.invoke.LambdaForm$MH/0x0000000048052400", "invokeExact_MT", 0),
        fr("jdk.internal.foreign.abi.DowncallStub/0x0000000048049000", "invoke", 0), /* 12 */
        fr("java.lang.invoke.LambdaForm$DMH/0x0000000048049400", "invokeStatic", 0),
        fr("java.lang.invoke.LambdaForm$MH/0x000000004804b000", "invoke", 0),
        fr("java.lang.invoke.LambdaForm$MH/0x0000000048051000", "invokeExact_MT", 0),
        fr("FfmQsort", "sortInC", 0), /* 16: the culprit */
        fr("FfmQsort", "lambda$main$0", 0),
        fr("FfmQsort$$Lambda/0x0000000048041210", "run", 0),
        fr("java.lang.Thread", "runWith", 0),
        fr("java.lang.VirtualThread", "run", 0),
        fr("jdk.internal.vm.Continuation", "enter0", 0),
    };
    struct native_site site;
    frames_native_site(st, N(st), &site);
    CHECK_INT(site.culprit, 16);
    CHECK_INT(site.downcall, 12);
    CHECK_INT(site.upcall, 8);
    CHECK_INT(frames_blocking(st, N(st), site.culprit, site.upcall), 5);
}

/* A downcall that blocks in C (usleep): the stub is the top Java frame. */
static void test_ffm_native_block(void)
{
    struct frame_name st[] = {
        fr("jdk.internal.foreign.abi.DowncallStub/0x00007f0001000c00", "invoke", 0),
        fr("java.lang.invoke.LambdaForm$DMH/0x00007f0001001000", "invokeStatic", 0),
        fr("java.lang.invoke.LambdaForm$MH/0x00007f0001002000", "invokeExact_MT", 0),
        fr("FfmSleep", "sleepInC", 0),
        fr("FfmSleep", "lambda$main$0", 0),
    };
    struct native_site site;
    frames_native_site(st, N(st), &site);
    CHECK_INT(site.culprit, 3);
    CHECK_INT(site.downcall, 0);
    CHECK_INT(site.upcall, -1);
    CHECK_INT(frames_blocking(st, N(st), site.culprit, site.upcall), -1);
}

/* JNI: the native method is the culprit, its callback the blocking operation. */
static void test_jni(void)
{
    struct frame_name st[] = {
        fr("java.lang.VirtualThread", "parkOnCarrierThread", 0),
        fr("jdk.internal.misc.Unsafe", "park", 1), /* how it blocks: not the culprit */
        fr("java.lang.Thread", "sleep", 0),
        fr("JniSleep", "sleepCallback", 0),
        fr("JniSleep", "sleepInNative", 1),
        fr("JniSleep", "lambda$main$0", 0),
    };
    struct native_site site;
    frames_native_site(st, N(st), &site);
    CHECK_INT(site.culprit, 4);
    CHECK_INT(site.downcall, -1);
    CHECK_INT(site.upcall, -1);
    CHECK_INT(frames_blocking(st, N(st), site.culprit, site.upcall), 3);
    /* blocked inside the JNI method itself (NATIVE_BLOCK): nothing above it */
    struct frame_name top[] = {fr("NativeBlock", "blockInRead", 1), fr("NativeBlock", "lambda$main$0", 0)};
    frames_native_site(top, N(top), &site);
    CHECK_INT(site.culprit, 0);
    CHECK_INT(frames_blocking(top, N(top), site.culprit, site.upcall), -1);
}

/* JDK 21, JnaSleep: a JNA interface call blocks in libc's usleep (NATIVE_BLOCK). */
static void test_jna_native_block(void)
{
    struct frame_name st[] = {
        fr("com.sun.jna.Native", "invokeInt", 1), /* 0: JNA's JNI method */
        fr("com.sun.jna.Function", "invoke", 0),
        fr("com.sun.jna.Function", "invoke", 0),
        fr("com.sun.jna.Library$Handler", "invoke", 0),
        fr("jdk.proxy1.$Proxy0", "usleep", 0), /* 4: the interface method */
        fr("JnaSleep", "sleepInC", 0),         /* 5: the culprit */
        fr("JnaSleep", "lambda$main$0", 0),
        fr("JnaSleep$$Lambda/0x00007f54c4016858", "run", 0),
        fr("java.lang.Thread", "runWith", 0),
        fr("java.lang.VirtualThread", "run", 0),
    };
    struct native_site site;
    frames_native_site(st, N(st), &site);
    CHECK_INT(site.culprit, 5);
    CHECK_INT(site.jna, 0);
    CHECK_INT(site.jna_function, 4);
    CHECK_INT(site.downcall, -1);
    CHECK_INT(site.upcall, -1);
    CHECK_INT(frames_blocking(st, N(st), site.culprit, site.upcall), -1);
    /* a package-private interface's proxy lives in its package, not a JDK one: still plumbing, never blocking */
    st[4] = fr("com.acme.$Proxy7", "usleep", 0);
    frames_native_site(st, N(st), &site);
    CHECK_INT(site.culprit, 5);
    CHECK_INT(site.jna_function, 4);
    CHECK_INT(frames_blocking(st, N(st), site.culprit, site.upcall), -1);
    /* Native.synchronizedLibrary: a second proxy under JNA's own handler and reflection */
    struct frame_name sync[] = {
        fr("com.sun.jna.Native", "invokeInt", 1),
        fr("com.sun.jna.Function", "invoke", 0),
        fr("com.sun.jna.Library$Handler", "invoke", 0),
        fr("jdk.proxy1.$Proxy0", "usleep", 0), /* 3 */
        fr("jdk.internal.reflect.DirectMethodHandleAccessor", "invoke", 0),
        fr("java.lang.reflect.Method", "invoke", 0),
        fr("com.sun.jna.Native$2", "invoke", 0),
        fr("jdk.proxy1.$Proxy1", "usleep", 0),
        fr("App", "pause", 0), /* 8 */
    };
    frames_native_site(sync, N(sync), &site);
    CHECK_INT(site.culprit, 8);
    CHECK_INT(site.jna_function, 3);
    /* Function.invokeInt called directly: no interface, the caller is the culprit */
    struct frame_name direct[] = {
        fr("com.sun.jna.Native", "invokeInt", 1),
        fr("com.sun.jna.Function", "invoke", 0),
        fr("com.sun.jna.Function", "invokeInt", 0),
        fr("App", "pause", 0),
    };
    frames_native_site(direct, N(direct), &site);
    CHECK_INT(site.culprit, 3);
    CHECK_INT(site.jna, 0);
    CHECK_INT(site.jna_function, -1);
    /* a proxy not under JNA's handler is the user's (its handler calls Function.invokeInt): the culprit */
    struct frame_name mine[] = {
        fr("com.sun.jna.Native", "invokeInt", 1),
        fr("com.sun.jna.Function", "invokeInt", 0),
        fr("App$Handler", "invoke", 0),
        fr("jdk.proxy2.$Proxy5", "pause", 0),
    };
    frames_native_site(mine, N(mine), &site);
    CHECK_INT(site.culprit, 2);
    CHECK_INT(site.jna, 0);
    CHECK_INT(site.jna_function, -1);
    /* a stack cut inside the plumbing: the interface method, else the JNI method */
    frames_native_site(st, 5, &site);
    CHECK_INT(site.culprit, 4);
    CHECK_INT(site.jna_function, 4);
    frames_native_site(st, 3, &site);
    CHECK_INT(site.culprit, 0);
    CHECK_INT(site.jna, 0);
    CHECK_INT(site.jna_function, -1);
    /* direct mapping (Native.register): the user's own native method, as any JNI method */
    struct frame_name reg[] = {fr("JnaDirect", "usleep", 1), fr("JnaDirect", "pause", 0)};
    frames_native_site(reg, N(reg), &site);
    CHECK_INT(site.culprit, 0);
    CHECK_INT(site.jna, -1);
    CHECK_INT(site.jna_function, -1);
    /* JNA's other natives (memory access) are plain JNI methods */
    struct frame_name mem[] = {fr("com.sun.jna.Native", "getInt", 1), fr("com.sun.jna.Pointer", "getInt", 0)};
    frames_native_site(mem, N(mem), &site);
    CHECK_INT(site.culprit, 0);
    CHECK_INT(site.jna, -1);
}

/* JDK 21, JnaQsort: qsort through a JNA interface, the Callback comparator sleeps. */
static void test_jna_qsort_callback(void)
{
    struct frame_name st[] = {
        fr("jdk.internal.misc.Unsafe", "park", 1),
        fr("java.lang.VirtualThread", "parkOnCarrierThread", 0),
        fr("java.lang.VirtualThread", "parkNanos", 0),
        fr("java.lang.VirtualThread", "sleepNanos", 0),
        fr("java.lang.Thread", "sleep", 0),
        fr("JnaQsort", "compare", 0), /* 5: the blocking operation */
        fr("JnaQsort$$Lambda/0x00007f54c4009d20", "invoke", 0),
        fr("java.lang.invoke.LambdaForm$DMH/0x00007f54c4015000", "invokeInterface", 0),
        fr("java.lang.invoke.LambdaForm$MH/0x00007f54c4018400", "invoke", 0),
        fr("java.lang.invoke.LambdaForm$MH/0x00007f54c4018800", "invokeExact_MT", 0),
        fr("jdk.internal.reflect.DirectMethodHandleAccessor", "invokeImpl", 0),
        fr("jdk.internal.reflect.DirectMethodHandleAccessor", "invoke", 0),
        fr("java.lang.reflect.Method", "invoke", 0),
        fr("com.sun.jna.CallbackReference$DefaultCallbackProxy", "invokeCallback", 0),
        fr("com.sun.jna.CallbackReference$DefaultCallbackProxy", "callback", 0), /* 14: the upcall */
        fr("com.sun.jna.Native", "invokeVoid", 1),                               /* 15 */
        fr("com.sun.jna.Function", "invoke", 0),
        fr("com.sun.jna.Function", "invoke", 0),
        fr("com.sun.jna.Library$Handler", "invoke", 0),
        fr("jdk.proxy1.$Proxy0", "qsort", 0), /* 19 */
        fr("JnaQsort", "sortInC", 0),         /* 20: the culprit */
        fr("JnaQsort", "lambda$main$0", 0),
    };
    struct native_site site;
    frames_native_site(st, N(st), &site);
    CHECK_INT(site.culprit, 20);
    CHECK_INT(site.jna, 15);
    CHECK_INT(site.jna_function, 19);
    CHECK_INT(site.upcall, 14);
    CHECK_INT(site.downcall, -1);
    CHECK_INT(frames_blocking(st, N(st), site.culprit, site.upcall), 5);
    /* JDK code as the callback: the Java frame the callback entered */
    st[5] = fr("java.util.Comparator", "compare", 0);
    st[6] = fr("java.util.Comparator$$Lambda/0x1", "invoke", 0);
    CHECK_INT(frames_blocking(st, N(st), 20, 14), 6);
}

static void test_markers(void)
{
    char m[128];
    CHECK_STR(frames_call_marker(NATIVE_API_FFM, "qsort", "/lib/x86_64-linux-gnu/libc.so.6", m, sizeof(m)),
              " <== native (FFM downcall qsort, libc.so.6)");
    CHECK_STR(frames_call_marker(NATIVE_API_FFM, NULL, NULL, m, sizeof(m)),
              " <== native (FFM downcall, target unknown)");
    CHECK_STR(frames_call_marker(NATIVE_API_FFM, "", "", m, sizeof(m)), " <== native (FFM downcall, target unknown)");
    CHECK_STR(frames_call_marker(NATIVE_API_FFM, NULL, "libfoo.so", m, sizeof(m)),
              " <== native (FFM downcall ?, libfoo.so)");
    CHECK_STR(frames_call_marker(NATIVE_API_FFM, "f+0x10", NULL, m, sizeof(m)),
              " <== native (FFM downcall f+0x10, library unknown)");
    CHECK_STR(frames_call_marker(NATIVE_API_JNA, "usleep", "/lib/x86_64-linux-gnu/libc.so.6", m, sizeof(m)),
              " <== native (JNA usleep, libc.so.6)");
    CHECK_STR(frames_call_marker(NATIVE_API_JNA, "usleep", NULL, m, sizeof(m)), " <== native (JNA usleep)");
    CHECK_STR(frames_call_marker(NATIVE_API_JNA, NULL, "/lib/libc.so.6", m, sizeof(m)),
              " <== native (JNA, function unknown)");
    CHECK_STR(frames_call_marker(NATIVE_API_JNA, "usleep", "libc.so.6", m, 12), " <== native");
    CHECK_STR(frames_api_name(NATIVE_API_FFM), "ffm");
    CHECK_STR(frames_api_name(NATIVE_API_JNA), "jna");
}

/* The innermost boundary wins: a JNI method called from Java code that an FFM upcall entered. */
static void test_nested(void)
{
    struct frame_name st[] = {
        fr("java.lang.Thread", "sleep", 0),
        fr("App", "inner", 0),
        fr("App", "jniCall", 1), /* 2 */
        fr("App", "callback", 0),
        fr("jdk.internal.foreign.abi.UpcallStub/0x1", "invoke", 0),
        fr("jdk.internal.foreign.abi.DowncallStub/0x2", "invoke", 0),
        fr("App", "outer", 0),
    };
    struct native_site site;
    frames_native_site(st, N(st), &site);
    CHECK_INT(site.culprit, 2);
    CHECK_INT(site.downcall, -1);
    CHECK_INT(site.upcall, -1);
    CHECK_INT(frames_blocking(st, N(st), site.culprit, site.upcall), 1);
    /* the downcall invoked by the JDK's own code: the culprit is still the invoking frame */
    struct frame_name jdk[] = {
        fr("jdk.internal.foreign.abi.DowncallStub/0x2", "invoke", 0),
        fr("java.lang.invoke.LambdaForm$MH/0x3", "invokeExact_MT", 0),
        fr("sun.nio.fs.Whatever", "call", 0),
    };
    frames_native_site(jdk, N(jdk), &site);
    CHECK_INT(site.culprit, 2);
    CHECK_INT(site.downcall, 0);
}

/* Stacks with nothing native, or only plumbing below a stub, or cut short. */
static void test_edges(void)
{
    struct native_site site;
    struct frame_name plain[] = {fr("java.lang.Thread", "sleep", 0), fr("Repro", "settle", 0)};
    frames_native_site(plain, N(plain), &site);
    CHECK_INT(site.culprit, -1);
    CHECK_INT(site.downcall, -1);
    CHECK_INT(site.upcall, -1);
    frames_native_site(plain, 0, &site);
    CHECK_INT(site.culprit, -1);
    /* a stack cut just below the stub: the stub itself is blamed */
    struct frame_name cut[] = {fr("jdk.internal.foreign.abi.DowncallStub/0x2", "invoke", 0),
                               fr("java.lang.invoke.LambdaForm$MH/0x3", "invokeExact_MT", 0)};
    frames_native_site(cut, N(cut), &site);
    CHECK_INT(site.culprit, 0);
    CHECK_INT(site.downcall, 0);
    /* a downcall straight from an upcall stub (no user frame between) */
    struct frame_name direct[] = {fr("jdk.internal.foreign.abi.DowncallStub/0x2", "invoke", 0),
                                  fr("jdk.internal.foreign.abi.UpcallStub/0x1", "invoke", 0)};
    frames_native_site(direct, N(direct), &site);
    CHECK_INT(site.culprit, 0);
    /* an upcall stub without a native frame below (stack cut): no native site, so no upcall */
    struct frame_name up[] = {fr("App", "cb", 0), fr("jdk.internal.foreign.abi.UpcallStub/0x1", "invoke", 0)};
    frames_native_site(up, N(up), &site);
    CHECK_INT(site.culprit, -1);
    CHECK_INT(site.upcall, -1);
    /* JDK code called back: the Java frame the upcall entered is the blocking operation */
    struct frame_name jdkcb[] = {
        fr("java.lang.Thread", "sleep", 0),
        fr("java.util.Comparator", "compare", 0),
        fr("java.lang.invoke.LambdaForm$MH/0x3", "invokeExact_MT", 0),
        fr("jdk.internal.foreign.abi.UpcallStub/0x1", "invoke", 0),
        fr("jdk.internal.foreign.abi.DowncallStub/0x2", "invoke", 0),
        fr("java.util.Arrays", "nativeSort", 0),
    };
    frames_native_site(jdkcb, N(jdkcb), &site);
    CHECK_INT(site.culprit, 5);
    CHECK_INT(site.upcall, 3);
    CHECK_INT(frames_blocking(jdkcb, N(jdkcb), site.culprit, site.upcall), 1);
    CHECK_INT(frames_blocking(jdkcb, N(jdkcb), 0, -1), -1);
    CHECK_INT(frames_blocking(jdkcb, N(jdkcb), 7, -1), -1);
    CHECK_INT(frames_blocking(plain, N(plain), -1, -1), -1);
}

static const char *class_of(const void *ctx, uint32_t i)
{
    return ((const char *const *)ctx)[i];
}

/* The origin rule: the JDK's own only when every frame is a JDK class. */
static void test_origin(void)
{
    static const char *poller[] = {"jdk.internal.misc.Unsafe", "java.lang.VirtualThread",
                                   "sun.nio.ch.Poller",        "java.lang.invoke.LambdaForm$MH/0x1",
                                   "javax.net.ssl.SSLSocket",  "com.sun.jna.Native"};
    CHECK_INT(frames_pin_origin(class_of, poller, 6, 0), PIN_ORIGIN_JDK);
    static const char *app[] = {"jdk.internal.misc.Unsafe", "java.lang.Thread", "Repro", "java.lang.VirtualThread"};
    CHECK_INT(frames_pin_origin(class_of, app, 4, 0), PIN_ORIGIN_APP);
    static const char *lookalike[] = {"javaX.Foo", "jdkfoo.Bar", "sunshine.Baz", "com.sunny.Q"};
    for (uint32_t i = 0; i < 4; i++)
        CHECK_INT(frames_pin_origin(class_of, lookalike + i, 1, 0), PIN_ORIGIN_APP);
    static const char *unknown[] = {"java.lang.Thread", NULL};
    CHECK_INT(frames_pin_origin(class_of, unknown, 2, 0), PIN_ORIGIN_APP); /* a frame of unknown class */
    CHECK_INT(frames_pin_origin(class_of, poller, 0, 0), PIN_ORIGIN_APP);  /* no stack */
    CHECK_INT(frames_pin_origin(class_of, poller, 6, 1), PIN_ORIGIN_APP);  /* cut: its root is unknown */
    CHECK_STR(frames_origin_name(PIN_ORIGIN_JDK), "jdk");
    CHECK_STR(frames_origin_name(PIN_ORIGIN_APP), "app");
}

static int kind_of(const void *ctx, uint32_t i)
{
    return ((const struct frame_name *)ctx)[i].kind;
}

/* The native code as a frame of its own (the pprof profiles), and where it goes. */
static void test_native_frame(void)
{
    char m[128];
    CHECK_STR(frames_native_frame(NATIVE_API_FFM, "qsort", "/lib/x86_64-linux-gnu/libc.so.6", m, sizeof(m)),
              "[native: FFM downcall qsort, libc.so.6]");
    CHECK_STR(frames_native_frame(NATIVE_API_FFM, NULL, NULL, m, sizeof(m)), "[native: FFM downcall, target unknown]");
    CHECK_STR(frames_native_frame(NATIVE_API_JNA, "usleep", "libc.so.6", m, sizeof(m)),
              "[native: JNA usleep, libc.so.6]");
    CHECK_STR(frames_native_frame(-1, NULL, "/opt/app/lib/libvtpinfixture.so", m, sizeof(m)),
              "[native: JNI libvtpinfixture.so]");
    CHECK_STR(frames_native_frame(-1, NULL, NULL, m, sizeof(m)), "[native: JNI, library unknown]");
    char tiny[8];
    CHECK_STR(frames_native_frame(NATIVE_API_FFM, "qsort", "libc.so.6", tiny, sizeof(tiny)), "[native");

    /* JNI: the native method, below the Java code it called back */
    struct frame_name jni[] = {
        fr("jdk.internal.misc.Unsafe", "park", 1), fr("java.lang.Thread", "sleep", 0),
        fr("JniSleep", "sleepCallback", 0),        fr("JniSleep", "sleepInNative", 1), /* 3: the culprit */
        fr("JniSleep", "lambda$main$0", 0),
    };
    CHECK_UINT(frames_native_entry(kind_of, jni, 3), 3);
    /* FFM: the downcall stub, above the culprit and its plumbing, below the upcall */
    struct frame_name ffm[] = {
        fr("QsortUpcall", "compare", 0),
        fr("jdk.internal.foreign.abi.UpcallStub/0x1", "invoke", 0),
        fr("jdk.internal.foreign.abi.DowncallStub/0x2", "invoke", 0), /* 2 */
        fr("java.lang.invoke.LambdaForm$MH/0x3", "invoke", 0),
        fr("QsortUpcall", "sort", 0), /* 4: the culprit */
        fr("QsortUpcall", "main", 0),
    };
    CHECK_UINT(frames_native_entry(kind_of, ffm, 4), 2);
    /* no frame enters native code: the top */
    CHECK_UINT(frames_native_entry(kind_of, ffm + 3, 1), 0);
}

int main(void)
{
    CHECK_RUN(test_native_frame);
    CHECK_RUN(test_origin);
    CHECK_RUN(test_classify);
    CHECK_RUN(test_blocking_natives);
    CHECK_RUN(test_ffm_qsort_upcall);
    CHECK_RUN(test_ffm_native_block);
    CHECK_RUN(test_jni);
    CHECK_RUN(test_jna_native_block);
    CHECK_RUN(test_jna_qsort_callback);
    CHECK_RUN(test_markers);
    CHECK_RUN(test_nested);
    CHECK_RUN(test_edges);
    CHECK_MAIN_RETURN();
}
