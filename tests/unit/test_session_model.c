/* Unit tests for the one model of an agent session that the collector and the report share:
 * its counters (proto/session_stats.c: taken from a Stats message, read by name, and written to
 * JSON by the schema's own descriptor, every counter of message Stats, null when not said) and
 * its Hello (proto/session_hello.c: taken, copied deep, its strings counted) and its definitions
 * (proto/session_defs.c: taken, replaced, cut to a depth, bounded and charged to a budget). */
#include "session_defs.h"
#include "session_hello.h"
#include "session_stats.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "collector_events.h"
#include "common/budget.h"
#include "common/frame_text.h"
#include "common/frames_kind.h"
#include "common/json.h"
#include "common/jsonread.h"

/* The JSON object that put writes of what. */
static char *render_object(void (*put)(struct json *, const void *), const void *what)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    struct json j;
    json_init(&j, out);
    json_object_begin(&j);
    put(&j, what);
    json_object_end(&j);
    json_finish(&j);
    fclose(out);
    return text;
}

static void put_stats(struct json *j, const void *st)
{
    session_stats_json(j, st);
}

static void put_hello(struct json *j, const void *h)
{
    session_hello_json(j, h);
}

static char *render(const struct session_stats *st)
{
    return render_object(put_stats, st);
}

static void test_take_and_read(void)
{
    Vtpin__V1__JvmtiCalls c1 = VTPIN__V1__JVMTI_CALLS__INIT, c2 = VTPIN__V1__JVMTI_CALLS__INIT;
    c1.function = "GetStackTrace";
    c1.calls = 5;
    c2.function = "GetObjectMonitorUsage";
    c2.calls = 2;
    Vtpin__V1__JvmtiCalls *calls[] = {&c1, &c2};
    Vtpin__V1__Stats d = VTPIN__V1__STATS__INIT;
    d.time_ns = 77;
    d.has_pins = 1;
    d.pins = 10;
    d.has_pins_below_threshold = 1;
    d.pins_below_threshold = 0; /* said, and zero: not the same as not said */
    d.has_reconnects = 1;
    d.reconnects = 3;
    d.n_jvmti_calls = 2;
    d.jvmti_calls = calls;

    struct session_stats st = {0};
    uint64_t v = 99;
    CHECK_INT(session_stats_get(&st, "pins", &v), 0); /* nothing taken yet */
    CHECK_UINT(v, 0);
    session_stats_take(&st, &d);
    CHECK(st.has);
    CHECK(st.msg.jvmti_calls == NULL && st.msg.n_jvmti_calls == 0); /* no pointer into the caller's message */
    CHECK_INT(st.msg.time_ns, 77);
    CHECK_INT(session_stats_get(&st, "pins", &v), 1);
    CHECK_UINT(v, 10);
    CHECK_INT(session_stats_get(&st, "pins_below_threshold", &v), 1);
    CHECK_UINT(v, 0);
    CHECK_INT(session_stats_get(&st, "reconnects", &v), 1); /* a uint32 field */
    CHECK_UINT(v, 3);
    CHECK_INT(session_stats_get(&st, "hogs", &v), 0); /* not said */
    CHECK_INT(session_stats_get(&st, "no_such_counter", &v), 0);
    CHECK_INT(session_stats_get(&st, "time_ns", &v), 0); /* a timestamp, not a counter */
    CHECK_INT(session_stats_get(&st, "jvmti_calls", &v), 0);
    CHECK_UINT(session_stats_jvmti_total(&st), 7);
}

/* The JSON holds every counter the schema has, by its field name: one the schema gains appears
 * with no change to the model or the renderer. */
static void test_json_by_schema(void)
{
    Vtpin__V1__Stats d = VTPIN__V1__STATS__INIT;
    d.time_ns = 1;
    d.has_hogs = 1;
    d.hogs = 4;
    struct session_stats st = {0};
    session_stats_take(&st, &d);
    char *text = render(&st);
    struct jsonread *tree = NULL;
    char err[128];
    if (!CHECK(text && jsonread_parse(text, strlen(text), &tree, err, sizeof(err)) == 0)) {
        free(text);
        return;
    }
    const ProtobufCMessageDescriptor *desc = &vtpin__v1__stats__descriptor;
    size_t counters = 0;
    for (unsigned i = 0; i < desc->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &desc->fields[i];
        if (f->label != PROTOBUF_C_LABEL_OPTIONAL)
            continue;
        counters++;
        const struct jsonread *v = jsonread_get(tree, f->name);
        if (!CHECK(v != NULL))
            fprintf(stderr, "  counter %s missing from %s\n", f->name, text);
        else if (strcmp(f->name, "hogs") == 0)
            CHECK_INT(jsonread_int(v, -1), 4);
        else
            CHECK(jsonread_is_null(v));
    }
    CHECK(counters >= 19);
    CHECK(jsonread_get(tree, "time_ns") == NULL); /* the caller's */
    CHECK(jsonread_get(tree, "jvmti_calls") != NULL && jsonread_is_null(jsonread_get(tree, "jvmti_calls")));
    jsonread_free(tree);
    free(text);
    /* nothing taken: every counter null */
    struct session_stats none = {0};
    text = render(&none);
    CHECK_CONTAINS(text, "\"pins\": null");
    CHECK_CONTAINS(text, "\"hogs\": null");
    free(text);
}

static void test_hello(void)
{
    char *caps[] = {"can_support_virtual_threads", NULL};
    Vtpin__V1__Hello d = VTPIN__V1__HELLO__INIT;
    d.schema_version = 2;
    d.pid = 4242;
    d.java_version = "21.0.5";
    d.app = "Repro";
    d.has_start_unix_ns = d.has_start_mono_ns = 1;
    d.start_unix_ns = 1700000000000000000LL;
    d.start_mono_ns = 5;
    d.has_sample_interval_ns = 1;
    d.sample_interval_ns = 10000000;
    d.n_capabilities_missing = 2;
    d.capabilities_missing = caps;
    struct session_hello h = {0};
    CHECK_INT(session_hello_take(&h, &d), 0);
    CHECK_INT(h.pid, 4242);
    CHECK_STR(h.java_version, "21.0.5");
    CHECK(h.java_version != d.java_version);    /* owned */
    CHECK(h.host == NULL && h.vm_name == NULL); /* not said */
    CHECK(h.has_clock && h.start_mono_ns == 5);
    CHECK(!h.has_threshold && !h.has_thread_layout);
    CHECK_UINT(h.occupancy_interval_ns, 10000000); /* an older agent's: the sample period */
    CHECK_UINT(h.n_capabilities_missing, 2);
    CHECK_STR(h.capabilities_missing[0], "can_support_virtual_threads");
    CHECK_STR(h.capabilities_missing[1], ""); /* a NULL in the message */
    CHECK_UINT(session_hello_bytes(&h),
               sizeof("21.0.5") + sizeof("Repro") + 2 * sizeof(char *) + sizeof("can_support_virtual_threads") + 1);
    struct session_hello c = {0};
    CHECK_INT(session_hello_copy(&c, &h), 0);
    CHECK_STR(c.app, "Repro");
    CHECK(c.app != h.app && c.capabilities_missing != h.capabilities_missing);
    session_hello_fini(&h); /* the copy stands alone */
    CHECK_STR(c.java_version, "21.0.5");
    CHECK_STR(c.capabilities_missing[0], "can_support_virtual_threads");
    d.has_occupancy_sample_interval_ns = 1;
    d.occupancy_sample_interval_ns = 7;
    CHECK_INT(session_hello_take(&c, &d), 0); /* taken again: what it held is freed first */
    CHECK_UINT(c.occupancy_interval_ns, 7);
    /* its JSON, as the report's "jvm" and status's JVMs both have it */
    char *text = render_object(put_hello, &c);
    CHECK_CONTAINS(text, "\"java_version\": \"21.0.5\"");
    CHECK_CONTAINS(text, "\"vm\": null"); /* not said */
    CHECK_CONTAINS(text, "\"app\": \"Repro\"");
    CHECK_CONTAINS(text, "\"parallelism\": null");
    CHECK_CONTAINS(text, "\"capabilities_missing\": [\"can_support_virtual_threads\", \"\"]");
    free(text);
    session_hello_fini(&c);
    CHECK(c.java_version == NULL && c.n_capabilities_missing == 0);
}

/* ---- definitions ---- */

/* ev (collector_events.h: packed and decoded again, as the wire gives it) taken by d, then freed. */
static int take(struct session_defs *d, WireEvent *ev)
{
    int rc = ev ? session_defs_take(d, ev) : -ENOMEM;
    wire_event_free(ev);
    return rc;
}

static int take_string(struct session_defs *d, uint32_t id, const char *value)
{
    return take(d, ev_string(id, value));
}

/* kind < 0: not said */
static int take_method(struct session_defs *d, uint32_t id, uint32_t cls, uint32_t name, uint32_t source, int kind)
{
    WireEvent *ev = ev_method(id, cls, name, source, 0, 0);
    if (ev && kind >= 0) {
        ev->method->has_kind = 1;
        ev->method->kind = (Vtpin__V1__FrameKind)kind;
    }
    return take(d, ev);
}

/* A stack of n frames calling methods[i] at line 10 + i, bci 3 * i, the first holding one monitor. */
static int take_stack(struct session_defs *d, uint32_t id, const uint32_t *methods, size_t n)
{
    int32_t lines[8];
    for (size_t i = 0; i < n && i < 8; i++)
        lines[i] = 10 + (int32_t)i;
    WireEvent *ev = ev_stack(id, n, methods, lines);
    for (size_t i = 0; ev && i < ev->stack->n_frames; i++) {
        ev->stack->frames[i]->has_bci = 1;
        ev->stack->frames[i]->bci = 3 * (int64_t)i;
        ev->stack->frames[i]->has_monitors = i == 0;
        ev->stack->frames[i]->monitors = 1;
    }
    return take(d, ev);
}

static void test_defs(void)
{
    struct session_defs *d = NULL;
    if (!CHECK_INT(session_defs_new(&d, NULL), 0))
        return;
    CHECK_INT(take_string(d, 1, "java.lang.Thread"), 1);
    CHECK_INT(take_string(d, 2, "sleep0"), 1);
    CHECK_INT(take_string(d, 3, "Repro"), 1);
    CHECK_INT(take_string(d, 4, "settle"), 1);
    CHECK_INT(take_string(d, 5, "Repro.java"), 1);
    CHECK_INT(take_method(d, 1, 1, 2, 0, -1), 1);
    CHECK_INT(take_method(d, 2, 3, 4, 5, 0), 1);
    uint32_t calls[] = {1, 2, 9}; /* method 9 is never defined */
    CHECK_INT(take_stack(d, 7, calls, 3), 1);
    WireEvent other = VTPIN__V1__EVENT__INIT;
    other.body_case = VTPIN__V1__EVENT__BODY_PIN_END;
    CHECK_INT(session_defs_take(d, &other), 0); /* not a definition */

    CHECK_STR(session_defs_string(d, 3), "Repro");
    CHECK(session_defs_string(d, 6) == NULL);
    const struct session_defs_method *m = session_defs_method(d, 1);
    if (CHECK(m != NULL))
        CHECK_INT(m->kind, -1); /* not said: the reader classifies it by name */
    m = session_defs_method(d, 2);
    if (CHECK(m != NULL)) {
        CHECK_INT(m->kind, 0);
        CHECK_UINT(m->source_sid, 5);
        CHECK_UINT(m->module_sid, 0);
    }
    const struct session_defs_stack *st = session_defs_stack(d, 7);
    if (CHECK(st != NULL) && CHECK_UINT(st->count, 3)) {
        CHECK_INT(st->frames[1].line, 11);
        CHECK_INT(st->frames[1].bci, 3);
        CHECK_UINT(st->frames[0].monitors, 1);
        CHECK_UINT(st->frames[1].monitors, 0);
        CHECK(!st->truncated);
    }
    CHECK(session_defs_stack(d, 0) == NULL); /* 0: no stack */
    char out[128];
    CHECK_STR(session_defs_frame_text(d, 7, 1, out, sizeof(out)), "Repro.settle(Repro.java:11)");
    CHECK_STR(session_defs_frame_text(d, 7, 2, out, sizeof(out)), FRAME_TEXT_UNKNOWN_METHOD);
    CHECK(session_defs_frame_text(d, 7, 3, out, sizeof(out)) == NULL);
    CHECK_INT(session_defs_stack_origin(d, 7), PIN_ORIGIN_APP); /* Repro's frame is the application's */
    uint32_t jdk_only[] = {1};
    CHECK_INT(take_stack(d, 8, jdk_only, 1), 1);
    CHECK_INT(session_defs_stack_origin(d, 8), PIN_ORIGIN_JDK); /* every frame a JDK class */

    /* the last definition wins */
    CHECK_INT(take_string(d, 4, "other"), 1);
    CHECK_STR(session_defs_frame_text(d, 7, 1, out, sizeof(out)), "Repro.other(Repro.java:11)");
    CHECK_INT(take_stack(d, 7, jdk_only, 1), 1);
    st = session_defs_stack(d, 7);
    if (CHECK(st != NULL))
        CHECK_UINT(st->count, 1);
    CHECK_INT(session_defs_stack_origin(d, 7), PIN_ORIGIN_JDK);

    size_t pos = 0, n = 0;
    uint32_t id;
    while (session_defs_next_method(d, &pos, &id, &m))
        n++;
    CHECK_UINT(n, 2);
    CHECK_UINT(session_defs_dropped(d), 0);
    session_defs_free(d);
}

/* A stack deeper than max_depth is cut and marked; past a limit or the budget a definition is dropped, counted. */
static void test_defs_bounded(void)
{
    struct budget budget;
    budget_init(&budget, 1u << 20);
    struct session_defs_limits limits = {.max_strings = 2, .max_stacks = 1, .max_depth = 2, .budget = &budget};
    struct session_defs *d = NULL;
    if (!CHECK_INT(session_defs_new(&d, &limits), 0))
        return;
    uint32_t calls[] = {1, 2, 3};
    CHECK_INT(take_stack(d, 1, calls, 3), 1);
    const struct session_defs_stack *st = session_defs_stack(d, 1);
    if (CHECK(st != NULL)) {
        CHECK_UINT(st->count, 2);
        CHECK(st->truncated);
    }
    CHECK_INT(take_stack(d, 2, calls, 1), 1); /* a second stack: over max_stacks */
    CHECK(session_defs_stack(d, 2) == NULL);
    CHECK_INT(take_string(d, 1, "a"), 1);
    CHECK_INT(take_string(d, 2, "b"), 1);
    CHECK_INT(take_string(d, 3, "c"), 1); /* over max_strings */
    CHECK(session_defs_string(d, 3) == NULL);
    CHECK_UINT(session_defs_dropped(d), 2);
    CHECK_UINT(session_defs_budget_dropped(d), 0);
    CHECK(budget.used > 0);
    session_defs_free(d);
    CHECK_UINT(budget.used, 0); /* all given back */

    budget_init(&budget, 8);
    if (!CHECK_INT(session_defs_new(&d, &limits), 0))
        return;
    CHECK_INT(take_string(d, 1, "a"), 1); /* the budget refuses it */
    CHECK(session_defs_string(d, 1) == NULL);
    CHECK_UINT(session_defs_budget_dropped(d), 1);
    CHECK_UINT(session_defs_dropped(d), 1);
    session_defs_free(d);
}

/* session_defs_write's frames, decoded as a reader would and taken into another table. */
struct rewritten {
    struct session_defs *into;
    int kinds[64]; /* body_case of each frame, in order */
    size_t n;
    int stop_at; /* fn's -1 at this frame (0: never) */
};

static int take_written(void *arg, const uint8_t *frame, size_t len)
{
    struct rewritten *w = arg;
    WireEvent *ev = NULL;
    if (!CHECK_INT(wire_decode(frame, len, &ev), 1))
        return -EIO;
    if (w->n < 64)
        w->kinds[w->n] = (int)ev->body_case;
    w->n++;
    int rc = session_defs_take(w->into, ev);
    wire_event_free(ev);
    CHECK_INT(rc, 1);
    return w->stop_at && (int)w->n == w->stop_at ? -1 : 0;
}

static int same_method(const struct session_defs_method *a, const struct session_defs_method *b)
{
    return a->class_sid == b->class_sid && a->name_sid == b->name_sid && a->signature_sid == b->signature_sid &&
           a->source_sid == b->source_sid && a->module_sid == b->module_sid && a->library_sid == b->library_sid &&
           a->is_native == b->is_native && a->kind == b->kind;
}

static int same_frame(const struct session_defs_frame *a, const struct session_defs_frame *b)
{
    return a->bci == b->bci && a->method == b->method && a->line == b->line && a->monitors == b->monitors;
}

/* Every definition kept is written again as its event: another table that takes them holds the same
 * (a rotated collector recording starts with them); a stack cut to max_depth stays marked truncated. */
static void test_defs_written_again(void)
{
    struct session_defs_limits limits = {.max_depth = 2};
    struct session_defs *d = NULL, *again = NULL;
    if (!CHECK_INT(session_defs_new(&d, &limits), 0) || !CHECK_INT(session_defs_new(&again, NULL), 0))
        return;
    CHECK_INT(take_stack(d, 4, (const uint32_t[]){2, 1, 2}, 3), 1); /* cut to 2 frames, marked */
    CHECK_INT(take_string(d, 1, "java.lang.Thread"), 1);
    CHECK_INT(take_string(d, 2, ""), 1);
    CHECK_INT(take_method(d, 1, 1, 2, 0, -1), 1);
    CHECK_INT(take_method(d, 2, 1, 1, 2, 3), 1);
    CHECK_INT(take_stack(d, 9, (const uint32_t[]){1}, 1), 1);
    struct rewritten w = {.into = again};
    CHECK_INT(session_defs_write(d, take_written, &w), 0);
    if (!CHECK_UINT(w.n, 6))
        return;
    int order[] = {VTPIN__V1__EVENT__BODY_STRING, VTPIN__V1__EVENT__BODY_STRING, VTPIN__V1__EVENT__BODY_METHOD,
                   VTPIN__V1__EVENT__BODY_METHOD, VTPIN__V1__EVENT__BODY_STACK,  VTPIN__V1__EVENT__BODY_STACK};
    for (size_t i = 0; i < 6; i++)
        CHECK_INT(w.kinds[i], order[i]); /* what a stack names is defined before it */
    CHECK_STR(session_defs_string(again, 1), "java.lang.Thread");
    CHECK_STR(session_defs_string(again, 2), "");
    for (uint32_t id = 1; id <= 2; id++) {
        const struct session_defs_method *a = session_defs_method(d, id), *b = session_defs_method(again, id);
        if (CHECK(a && b))
            CHECK(same_method(a, b));
    }
    uint32_t ids[] = {4, 9};
    for (size_t k = 0; k < 2; k++) {
        const struct session_defs_stack *a = session_defs_stack(d, ids[k]), *b = session_defs_stack(again, ids[k]);
        if (CHECK(a && b) && CHECK_UINT(b->count, a->count)) {
            CHECK_INT(b->truncated, a->truncated);
            for (uint32_t i = 0; i < a->count; i++)
                CHECK(same_frame(&a->frames[i], &b->frames[i]));
        }
    }
    CHECK(session_defs_stack(again, 4)->truncated);
    char x[128], y[128];
    CHECK_STR(session_defs_frame_text(again, 4, 0, x, sizeof(x)), session_defs_frame_text(d, 4, 0, y, sizeof(y)));
    /* the writer's error ends it */
    struct rewritten stop = {.stop_at = 3};
    if (CHECK_INT(session_defs_new(&stop.into, NULL), 0)) {
        CHECK_INT(session_defs_write(d, take_written, &stop), -1);
        CHECK_UINT(stop.n, 3);
        session_defs_free(stop.into);
    }
    session_defs_free(again);
    session_defs_free(d);
}

int main(void)
{
    test_hello();
    test_defs();
    test_defs_bounded();
    test_defs_written_again();
    test_take_and_read();
    test_json_by_schema();
    CHECK_MAIN_RETURN();
}
