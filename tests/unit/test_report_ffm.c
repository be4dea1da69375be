/* Unit tests for the native-boundary parts of vtpin report (cli/): frame
 * kinds (sent by the agent, or classified by name for recordings without
 * them), the FFM downcall and JNA call markers and their targets, the upcall
 * and blocking-operation markers, in text and JSON, and bad blocking indexes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "common/frames_kind.h"
#include "recording.h"
#include "report.h"
#include "wire.h"

#define MS 1000000LL

static char path[] = "/tmp/vtpin-test-report-ffm.XXXXXX";
static FILE *file;

static void put_event(const WireEvent *ev)
{
    size_t need = wire_packed_size(ev);
    uint8_t *tmp = malloc(need);
    if (CHECK(tmp != NULL) && CHECK_INT(wire_pack(ev, tmp, need, RECORDING_MAX_FRAME), (ssize_t)need))
        fwrite(tmp, 1, need, file);
    free(tmp);
}

static void ev_string(uint32_t id, const char *value)
{
    Vtpin__V1__StringDef d = VTPIN__V1__STRING_DEF__INIT;
    d.id = id;
    d.value = (char *)value;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_STRING;
    ev.string = &d;
    put_event(&ev);
}

/* kind < 0: not sent (a recording from an agent before frame kinds). */
static void ev_method(uint32_t id, uint32_t cls, uint32_t name, uint32_t source, int native, uint32_t library, int kind)
{
    Vtpin__V1__MethodDef d = VTPIN__V1__METHOD_DEF__INIT;
    d.id = id;
    d.class_name = cls;
    d.method_name = name;
    d.has_source_file = source != 0;
    d.source_file = source;
    d.has_is_native = 1;
    d.is_native = native;
    d.has_library = library != 0;
    d.library = library;
    d.has_kind = kind >= 0;
    d.kind = (Vtpin__V1__FrameKind)(kind >= 0 ? kind : 0);
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_METHOD;
    ev.method = &d;
    put_event(&ev);
}

static void ev_stack(uint32_t id, const uint32_t *methods, const int32_t *lines, size_t n)
{
    Vtpin__V1__Frame frames[16], *ptrs[16];
    for (size_t i = 0; i < n; i++) {
        Vtpin__V1__Frame init = VTPIN__V1__FRAME__INIT;
        frames[i] = init;
        frames[i].method = methods[i];
        frames[i].has_line = 1;
        frames[i].line = lines[i];
        ptrs[i] = &frames[i];
    }
    Vtpin__V1__StackDef d = VTPIN__V1__STACK_DEF__INIT;
    d.id = id;
    d.n_frames = n;
    d.frames = ptrs;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_STACK;
    ev.stack = &d;
    put_event(&ev);
}

/* blocking < 0: none; dc NULL: no downcall. */
static void ev_pin(uint64_t id, int reason, uint32_t stack, uint32_t culprit, int blocking,
                   const Vtpin__V1__Downcall *dc, int64_t duration)
{
    Vtpin__V1__PinStart p = VTPIN__V1__PIN_START__INIT;
    p.pin_id = id;
    p.start_ns = (int64_t)id * 1000 * MS;
    p.reason = (Vtpin__V1__PinReason)reason;
    p.has_stack = 1;
    p.stack = stack;
    p.has_culprit_frame = 1;
    p.culprit_frame = culprit;
    p.has_blocking_frame = blocking >= 0;
    p.blocking_frame = (uint32_t)(blocking >= 0 ? blocking : 0);
    p.downcall = (Vtpin__V1__Downcall *)dc;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_PIN_START;
    ev.pin_start = &p;
    put_event(&ev);
    Vtpin__V1__PinEnd e = VTPIN__V1__PIN_END__INIT;
    e.pin_id = id;
    e.end_ns = p.start_ns + duration;
    e.duration_ns = duration;
    ev.body_case = VTPIN__V1__EVENT__BODY_PIN_END;
    ev.pin_end = &e;
    put_event(&ev);
}

enum {
    S_THREAD = 1,
    S_SLEEP,
    S_QSORT_CLS,
    S_COMPARE,
    S_UPCALL_CLS,
    S_INVOKE,
    S_DOWNCALL_CLS,
    S_LF_CLS,
    S_SORT,
    S_SRC,
    S_JNI,
    S_CALL,
    S_LIBFOO,
    S_CALLBACK,
    S_JNA_NATIVE,
    S_INVOKE_INT,
    S_JNA_FUNCTION,
    S_JNA_HANDLER,
    S_PROXY,
    S_USLEEP,
    S_JNA_SLEEP,
    S_SLEEP_IN_C,
    S_JNIDISPATCH
};
enum {
    M_SLEEP = 1,
    M_COMPARE,
    M_UPCALL,
    M_DOWNCALL,
    M_LF,
    M_SORT,
    M_JNI_CALL,
    M_CALLBACK,
    M_JNA_INVOKE,
    M_JNA_FUNCTION,
    M_JNA_HANDLER,
    M_PROXY,
    M_SLEEP_IN_C
};

static struct recording *build(void)
{
    int fd = mkstemp(path);
    if (!CHECK(fd >= 0) || !CHECK((file = fdopen(fd, "w")) != NULL))
        return NULL;
    fwrite(WIRE_MAGIC, 1, WIRE_MAGIC_LEN, file);
    const char *strings[] = {NULL,
                             "java.lang.Thread",
                             "sleep",
                             "FfmQsort",
                             "compare",
                             "jdk.internal.foreign.abi.UpcallStub/0x1",
                             "invoke",
                             "jdk.internal.foreign.abi.DowncallStub/0x2",
                             "java.lang.invoke.LambdaForm$MH/0x3",
                             "sortInC",
                             "FfmQsort.java",
                             "com.example.Jni",
                             "call",
                             "/opt/lib/libfoo.so",
                             "callback",
                             "com.sun.jna.Native",
                             "invokeInt",
                             "com.sun.jna.Function",
                             "com.sun.jna.Library$Handler",
                             "jdk.proxy1.$Proxy0",
                             "usleep",
                             "JnaSleep",
                             "sleepInC",
                             "/usr/lib/x86_64-linux-gnu/jni/libjnidispatch.system.so"};
    for (uint32_t i = 1; i < sizeof(strings) / sizeof(strings[0]); i++)
        ev_string(i, strings[i]);
    ev_method(M_SLEEP, S_THREAD, S_SLEEP, 0, 0, 0, 0);
    ev_method(M_COMPARE, S_QSORT_CLS, S_COMPARE, S_SRC, 0, 0, 0);
    ev_method(M_UPCALL, S_UPCALL_CLS, S_INVOKE, 0, 0, 0, 3);
    ev_method(M_DOWNCALL, S_DOWNCALL_CLS, S_INVOKE, 0, 0, 0, -1); /* kind from the name */
    ev_method(M_LF, S_LF_CLS, S_INVOKE, 0, 0, 0, 4);
    ev_method(M_SORT, S_QSORT_CLS, S_SORT, S_SRC, 0, 0, 0);
    ev_method(M_JNI_CALL, S_JNI, S_CALL, 0, 1, S_LIBFOO, -1); /* kind from is_native */
    ev_method(M_CALLBACK, S_JNI, S_CALLBACK, 0, 0, 0, -1);
    ev_method(M_JNA_INVOKE, S_JNA_NATIVE, S_INVOKE_INT, 0, 1, S_JNIDISPATCH, 1);
    ev_method(M_JNA_FUNCTION, S_JNA_FUNCTION, S_INVOKE, 0, 0, 0, -1); /* plumbing by its name */
    ev_method(M_JNA_HANDLER, S_JNA_HANDLER, S_INVOKE, 0, 0, 0, 4);
    ev_method(M_PROXY, S_PROXY, S_USLEEP, 0, 0, 0, 0);
    ev_method(M_SLEEP_IN_C, S_JNA_SLEEP, S_SLEEP_IN_C, 0, 0, 0, 0);
    uint32_t ffm[] = {M_SLEEP, M_COMPARE, M_UPCALL, M_LF, M_DOWNCALL, M_LF, M_SORT};
    int32_t ffm_lines[] = {507, 38, -1, -1, -1, -1, 52};
    ev_stack(1, ffm, ffm_lines, 7);
    int32_t ffm_lines2[] = {507, 38, -1, -1, -1, -1, 60};
    ev_stack(2, ffm, ffm_lines2, 7);
    uint32_t jni[] = {M_SLEEP, M_CALLBACK, M_JNI_CALL};
    int32_t jni_lines[] = {507, 10, -1};
    ev_stack(3, jni, jni_lines, 3);
    uint32_t jna[] = {M_JNA_INVOKE, M_JNA_FUNCTION, M_JNA_FUNCTION, M_JNA_HANDLER, M_PROXY, M_SLEEP_IN_C};
    int32_t jna_lines[][6] = {{-1, 426, 361, 270, -1, 28}, {-1, 426, 361, 270, -1, 29}, {-1, 426, 361, 270, -1, 30}};
    for (uint32_t i = 0; i < 3; i++)
        ev_stack(4 + i, jna, jna_lines[i], 6);
    Vtpin__V1__Downcall known = VTPIN__V1__DOWNCALL__INIT, unknown = VTPIN__V1__DOWNCALL__INIT;
    known.symbol = "qsort";
    known.library = "/lib/x86_64-linux-gnu/libc.so.6";
    known.has_address = 1;
    known.address = 0x7f0012345678ULL;
    ev_pin(1, VTPIN__V1__PIN_REASON__NATIVE, 1, 6, 1, &known, 300 * MS);
    ev_pin(2, VTPIN__V1__PIN_REASON__NATIVE, 2, 6, 1, &unknown, 200 * MS);
    ev_pin(3, VTPIN__V1__PIN_REASON__NATIVE, 3, 2, 1, NULL, 100 * MS);
    ev_pin(4, VTPIN__V1__PIN_REASON__NATIVE, 3, 2, 9, NULL, 50 * MS); /* blocking index outside the stack */
    Vtpin__V1__Downcall jna_known = VTPIN__V1__DOWNCALL__INIT, jna_nolib = VTPIN__V1__DOWNCALL__INIT,
                        jna_unknown = VTPIN__V1__DOWNCALL__INIT;
    jna_known.has_api = jna_nolib.has_api = jna_unknown.has_api = 1;
    jna_known.api = jna_nolib.api = jna_unknown.api = VTPIN__V1__NATIVE_API__NATIVE_API_JNA;
    jna_known.symbol = jna_nolib.symbol = "usleep";
    jna_known.library = "/lib/x86_64-linux-gnu/libc.so.6";
    ev_pin(5, VTPIN__V1__PIN_REASON__NATIVE_BLOCK, 4, 5, -1, &jna_known, 40 * MS);
    ev_pin(6, VTPIN__V1__PIN_REASON__NATIVE_BLOCK, 5, 5, -1, &jna_nolib, 30 * MS);
    ev_pin(7, VTPIN__V1__PIN_REASON__NATIVE_BLOCK, 6, 5, -1, &jna_unknown, 20 * MS);
    fclose(file);
    struct recording *r = NULL;
    char err[256] = "";
    if (!CHECK_INT(report_open(path, &r, err, sizeof(err)), 0))
        fprintf(stderr, "    %s\n", err);
    return r;
}

static char *render(int (*f)(FILE *, const struct recording *, const struct report_options *),
                    const struct recording *r)
{
    char *text = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&text, &n);
    struct report_options o = {.top = 0};
    if (CHECK(out != NULL)) {
        CHECK_INT(f(out, r, &o), 0);
        fclose(out);
    }
    return text;
}

static void test_model(const struct recording *r)
{
    const struct recording_session *s = r->sessions[0];
    if (!CHECK_INT(s->n_pins, 7))
        return;
    const struct recording_pin *p = &s->pins[0];
    const struct recording_downcall *dc = recording_pin_downcall(p);
    if (!CHECK(dc != NULL))
        return;
    CHECK_INT(dc->api, NATIVE_API_FFM); /* not said: FFM, as recordings before JNA calls */
    CHECK_STR(dc->symbol, "qsort");
    CHECK_STR(dc->library, "/lib/x86_64-linux-gnu/libc.so.6");
    CHECK_UINT(dc->address, 0x7f0012345678ULL);
    CHECK(p->has_blocking && p->blocking == 1);
    CHECK_INT(p->stack->frames[2].method->kind, 3);
    CHECK_INT(p->stack->frames[4].method->kind, 2); /* classified by name: the recording did not say */
    CHECK_INT(p->stack->frames[3].method->kind, 4);
    CHECK_INT(p->stack->frames[6].method->kind, 0);
    dc = recording_pin_downcall(&s->pins[1]);
    CHECK(dc && !dc->symbol && !dc->library);
    CHECK(recording_pin_downcall(&s->pins[2]) == NULL);
    CHECK_INT(s->pins[2].stack->frames[2].method->kind, 1);
    CHECK(!s->pins[3].has_blocking);
    CHECK_UINT(s->unknown_refs, 1);

    char m[256];
    CHECK_STR(report_pin_frame_markers(p, 6, m, sizeof(m)), " <== native (FFM downcall qsort, libc.so.6)");
    CHECK_STR(report_pin_frame_markers(p, 2, m, sizeof(m)), " <== upcall");
    CHECK_STR(report_pin_frame_markers(p, 1, m, sizeof(m)), " <== blocking operation");
    CHECK_STR(report_pin_frame_markers(p, 4, m, sizeof(m)), "");
    CHECK_STR(report_pin_frame_markers(&s->pins[1], 6, m, sizeof(m)), " <== native (FFM downcall, target unknown)");
    CHECK_STR(report_pin_frame_markers(&s->pins[2], 2, m, sizeof(m)), " <== native (libfoo.so)");
    CHECK_STR(report_pin_frame_markers(&s->pins[2], 1, m, sizeof(m)), " <== blocking operation");
    const struct recording_pin *jna = &s->pins[4];
    const struct recording_downcall *jdc = recording_pin_downcall(jna);
    if (!CHECK(jdc != NULL))
        return;
    CHECK_INT(jdc->api, NATIVE_API_JNA);
    CHECK_STR(jdc->symbol, "usleep");
    CHECK_INT(jna->stack->frames[0].method->kind, 1);
    CHECK_INT(jna->stack->frames[1].method->kind, 4); /* classified by name */
    CHECK_STR(report_pin_frame_markers(jna, 5, m, sizeof(m)), " <== native (JNA usleep, libc.so.6)");
    CHECK_STR(report_pin_frame_markers(jna, 0, m, sizeof(m)), ""); /* JNA's JNI method is not the culprit */
    CHECK_STR(report_pin_frame_markers(jna, 4, m, sizeof(m)), "");
    CHECK_STR(report_pin_frame_markers(&s->pins[5], 5, m, sizeof(m)), " <== native (JNA usleep)");
    CHECK_STR(report_pin_frame_markers(&s->pins[6], 5, m, sizeof(m)), " <== native (JNA, function unknown)");
    char tiny[12];
    CHECK_STR(report_pin_frame_markers(p, 6, tiny, sizeof(tiny)), " <== native");
}

static void test_text(const struct recording *r)
{
    char *t = render(report_text, r);
    if (!CHECK(t != NULL))
        return;
    CHECK_CONTAINS(t, "#1  FfmQsort.sortInC(FfmQsort.java:52) <== native (FFM downcall qsort, libc.so.6)\n"
                      "    NATIVE: 1 pin, total 300.0 ms, longest 300.0 ms, 0 ongoing at the end\n"
                      "    blocking operation: FfmQsort.compare(FfmQsort.java:38)\n"
                      "    stack of pin #1:\n"
                      "      java.lang.Thread.sleep(Unknown Source)\n"
                      "      FfmQsort.compare(FfmQsort.java:38) <== blocking operation\n"
                      "      jdk.internal.foreign.abi.UpcallStub/0x1.invoke(Unknown Source) <== upcall\n"
                      "      java.lang.invoke.LambdaForm$MH/0x3.invoke(Unknown Source)\n"
                      "      jdk.internal.foreign.abi.DowncallStub/0x2.invoke(Unknown Source)\n");
    CHECK_CONTAINS(t, "#2  FfmQsort.sortInC(FfmQsort.java:60) <== native (FFM downcall, target unknown)\n");
    CHECK_CONTAINS(t, "#3  com.example.Jni.call(Native Method) <== native (libfoo.so)\n"
                      "    NATIVE: 2 pins");
    CHECK_CONTAINS(t, "      com.example.Jni.callback(Unknown Source) <== blocking operation\n");
    CHECK_CONTAINS(t, "#4  JnaSleep.sleepInC(Unknown Source) <== native (JNA usleep, libc.so.6)\n"
                      "    NATIVE_BLOCK: 1 pin, total 40.0 ms, longest 40.0 ms, 0 ongoing at the end\n"
                      "    stack of pin #5:\n"
                      "      com.sun.jna.Native.invokeInt(Native Method)\n"
                      "      com.sun.jna.Function.invoke(Unknown Source)\n");
    CHECK_CONTAINS(t, "      jdk.proxy1.$Proxy0.usleep(Unknown Source)\n"
                      "      JnaSleep.sleepInC(Unknown Source) <== native (JNA usleep, libc.so.6)\n");
    CHECK_CONTAINS(t, "#5  JnaSleep.sleepInC(Unknown Source) <== native (JNA usleep)\n");
    CHECK_CONTAINS(t, "#6  JnaSleep.sleepInC(Unknown Source) <== native (JNA, function unknown)\n");
    free(t);
}

static void test_json(const struct recording *r)
{
    char *j = render(report_json, r);
    if (!CHECK(j != NULL))
        return;
    CHECK_CONTAINS(j, "\"blocking_frame\": 1,");
    CHECK_CONTAINS(j, "\"blocking_frame\": null,"); /* pin 4: its index was outside the stack */
    CHECK_CONTAINS(
        j, "{\"class\": \"FfmQsort\", \"method\": \"sortInC\", \"line\": 52, \"native\": false, "
           "\"monitors\": 0, \"library\": null, \"module\": null, \"source\": \"FfmQsort.java\", "
           "\"bci\": null, \"kind\": \"java\", \"downcall\": {\"api\": \"ffm\", \"symbol\": \"qsort\", \"library\": "
           "\"/lib/x86_64-linux-gnu/libc.so.6\"}}");
    CHECK_CONTAINS(j, "\"kind\": \"java\", \"downcall\": {\"api\": \"ffm\", \"symbol\": null, \"library\": null}}");
    CHECK_CONTAINS(j, "{\"class\": \"JnaSleep\", \"method\": \"sleepInC\", \"line\": 28, \"native\": false, "
                      "\"monitors\": 0, \"library\": null, \"module\": null, \"source\": null, "
                      "\"bci\": null, \"kind\": \"java\", \"downcall\": {\"api\": \"jna\", \"symbol\": \"usleep\", "
                      "\"library\": \"/lib/x86_64-linux-gnu/libc.so.6\"}}");
    CHECK_CONTAINS(j, "\"downcall\": {\"api\": \"jna\", \"symbol\": \"usleep\", \"library\": null}}");
    CHECK_CONTAINS(j, "\"downcall\": {\"api\": \"jna\", \"symbol\": null, \"library\": null}}");
    CHECK_CONTAINS(j, "\"method\": \"invokeInt\", \"line\": null, \"native\": true, \"monitors\": 0, \"library\": "
                      "\"/usr/lib/x86_64-linux-gnu/jni/libjnidispatch.system.so\", \"module\": null, \"source\": null, "
                      "\"bci\": null, \"kind\": \"native\", \"downcall\": null}");
    CHECK_CONTAINS(j, "\"kind\": \"upcall_stub\", \"downcall\": null}");
    CHECK_CONTAINS(j, "\"kind\": \"downcall_stub\", \"downcall\": null}");
    CHECK_CONTAINS(j, "\"kind\": \"method_handle\", \"downcall\": null}");
    CHECK_CONTAINS(j, "\"method\": \"call\", \"line\": null, \"native\": true, \"monitors\": 0, \"library\": "
                      "\"/opt/lib/libfoo.so\", \"module\": null, \"source\": null, \"bci\": null, \"kind\": "
                      "\"native\", \"downcall\": null}");
    /* the site's culprit carries its example's downcall */
    CHECK_CONTAINS(j, "\"culprit\": {\"class\": \"FfmQsort\", \"method\": \"sortInC\", \"line\": 52");
    free(j);
}

/* The HTML report's sites carry the same markers as the text report. */
static void test_html(const struct recording *r)
{
    char *h = render(report_html, r);
    if (!CHECK(h != NULL))
        return;
    CHECK_CONTAINS(h, "native (JNA usleep, libc.so.6)");
    CHECK_CONTAINS(h, "native (FFM downcall qsort, libc.so.6)");
    CHECK_CONTAINS(h, "native (JNA, function unknown)");
    free(h);
}

int main(void)
{
    struct recording *r = build();
    if (r) {
        test_model(r);
        test_text(r);
        test_json(r);
        test_html(r);
        recording_free(r);
    }
    unlink(path);
    CHECK_MAIN_RETURN();
}
