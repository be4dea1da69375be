/* collector/pinprofile and pinned_pprof: pinned time (and carrier hogs'
 * time) by stack over the window, as the collector's /debug/pprof/pinned
 * serves it, read back through pprof_build's gzip and protobuf-c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "collector_events.h"
#include "jvms.h"
#include "pinned_pprof.h"
#include "pinprofile.h"
#include "pprof.pb-c.h"
#include "pprof_build.h"
#include "session.h"

#define SEC 1000000000LL
#define MS 1000000LL

static struct session *session_of(int64_t pid, uint32_t connection)
{
    WireEvent *ev = ev_hello(pid, 1700000000LL * SEC, connection, WIRE_SCHEMA_VERSION);
    struct session *s = NULL;
    struct session_defs_limits limits = SESSION_LIMITS_DEFAULT;
    if (ev)
        session_new(&s, ev->hello, &limits);
    wire_event_free(ev);
    return s;
}

static void define(struct session *s, WireEvent *ev)
{
    CHECK(ev && session_define(s, ev) == 1);
    wire_event_free(ev);
}

/* JniSleep's stack: Thread.sleep <- JniSleep.sleepCallback <- JniSleep.sleepInNative (JNI) <- JniSleep.run,
 * as stack `id` with ids from base (another connection: other ids, the same content). */
static void define_jnisleep(struct session *s, uint32_t base, uint32_t id)
{
    define(s, ev_string(base + 1, "java.lang.Thread"));
    define(s, ev_string(base + 2, "sleep"));
    define(s, ev_string(base + 3, "JniSleep"));
    define(s, ev_string(base + 4, "sleepCallback"));
    define(s, ev_string(base + 5, "sleepInNative"));
    define(s, ev_string(base + 6, "run"));
    define(s, ev_string(base + 7, "JniSleep.java"));
    define(s, ev_string(base + 8, "Thread.java"));
    define(s, ev_method(base + 1, base + 1, base + 2, base + 8, 0, 0));
    define(s, ev_method(base + 2, base + 3, base + 4, base + 7, 0, 0));
    define(s, ev_method(base + 3, base + 3, base + 5, base + 7, 0, 1));
    define(s, ev_method(base + 4, base + 3, base + 6, base + 7, 0, 0));
    uint32_t methods[] = {base + 1, base + 2, base + 3, base + 4};
    int32_t lines[] = {507, 23, -1, 35};
    define(s, ev_stack(id, 4, methods, lines));
}

/* The pins and hogs in progress, as a JVM keeps them (proto/session_pins.h): a start re-sent
 * changes nothing, an end hands back what the profile took at the start. */
static struct session_pins *in_progress;

static void start(struct pinprofile *p, struct session *s, uint64_t pin, int reason, int32_t tid, uint32_t stack,
                  uint32_t culprit, int64_t now)
{
    WireEvent *ev = ev_pin_start(pin, now, reason, 100 + (int64_t)pin, tid, stack, culprit);
    struct session_pin *kept;
    if (CHECK(ev != NULL)) {
        struct session_pin begun = session_pin_of_start(ev->pin_start);
        if (session_pins_start(in_progress, &begun, &kept) == SESSION_PINS_NEW)
            pinprofile_start(p, session_defs(s), ev->pin_start, kept);
    }
    wire_event_free(ev);
}

static void hog_start(struct pinprofile *p, struct session *s, uint64_t hog, int32_t tid, uint32_t stack,
                      uint32_t culprit, int64_t now)
{
    WireEvent *ev = ev_hog_start(hog, now - 200 * MS, 300 + (int64_t)hog, tid, stack, culprit);
    struct session_pin *kept;
    if (CHECK(ev != NULL)) {
        struct session_pin begun = session_pin_of_hog(ev->hog_start);
        if (session_pins_start(in_progress, &begun, &kept) == SESSION_PINS_NEW)
            pinprofile_hog_start(p, session_defs(s), ev->hog_start, kept);
    }
    wire_event_free(ev);
}

static void held_end(struct pinprofile *p, int kind, uint64_t id, int64_t duration_ns, int64_t now)
{
    struct session_pin begun;
    if (session_pins_end(in_progress, kind, id, &begun) == SESSION_PINS_ENDS)
        pinprofile_end(p, &begun, duration_ns, now);
}

static void end(struct pinprofile *p, uint64_t pin, int64_t duration_ns, int64_t now)
{
    held_end(p, SESSION_PIN, pin, duration_ns, now);
}

static void hog_end(struct pinprofile *p, uint64_t hog, int64_t duration_ns, int64_t now)
{
    held_end(p, SESSION_HOG, hog, duration_ns, now);
}

static const char *str(const Vtpin__Pprof__Profile *p, int64_t i)
{
    return i >= 0 && (size_t)i < p->n_string_table ? p->string_table[i] : "<out of table>";
}

static const char *function_at(const Vtpin__Pprof__Profile *p, uint64_t location_id)
{
    for (size_t i = 0; i < p->n_location; i++)
        if (p->location[i]->id == location_id && p->location[i]->n_line == 1)
            for (size_t k = 0; k < p->n_function; k++)
                if (p->function[k]->id == p->location[i]->line[0]->function_id)
                    return str(p, p->function[k]->name);
    return "<no function>";
}

static const char *label(const Vtpin__Pprof__Profile *p, const Vtpin__Pprof__Sample *s, const char *key)
{
    for (size_t i = 0; i < s->n_label; i++)
        if (strcmp(str(p, s->label[i]->key), key) == 0)
            return str(p, s->label[i]->str);
    return NULL;
}

/* p's samples of the span_ns up to now, with a pid label, unpacked. */
static Vtpin__Pprof__Profile *collect(const struct pinprofile *p, int64_t now, int64_t span_ns)
{
    struct pprof_builder *b = NULL;
    uint8_t *gz = NULL, *raw = NULL;
    size_t gz_len = 0, raw_len = 0;
    Vtpin__Pprof__Profile *out = NULL;
    struct pprof_label jvm[] = {{.key = "pid", .str = "4242"}};
    if (CHECK_INT(pprof_builder_new(&b, pprof_pinned_types, PPROF_PINNED_N), 0) &&
        CHECK_INT(pinprofile_collect(p, now, span_ns, b, jvm, 1), 0) &&
        CHECK_INT(pprof_builder_encode(b, &gz, &gz_len), 0) &&
        CHECK_INT(pprof_gunzip(gz, gz_len, 1u << 26, &raw, &raw_len), 0))
        out = vtpin__pprof__profile__unpack(NULL, raw_len, raw);
    CHECK(out != NULL);
    pprof_builder_free(b);
    free(gz);
    free(raw);
    return out;
}

static void test_stack_labels_and_reconnect(void)
{
    struct pinprofile *p = pinprofile_new(60 * SEC);
    struct session *s = session_of(4242, 1), *again = session_of(4242, 2);
    if (!CHECK(p && s && again))
        goto out;
    define_jnisleep(s, 0, 1);
    int64_t t = 1000 * SEC;
    start(p, s, 1, VTPIN__V1__PIN_REASON__NATIVE, 17, 1, 2, t);
    start(p, s, 1, VTPIN__V1__PIN_REASON__NATIVE, 17, 1, 2, t); /* re-sent: nothing changes */
    end(p, 1, 150 * MS, t + 150 * MS);
    end(p, 1, 150 * MS, t + 150 * MS);  /* ended twice: counted once */
    end(p, 99, 150 * MS, t + 150 * MS); /* never started: ignored */
    /* a reconnect: other ids for the same stack, the same carrier */
    define_jnisleep(again, 50, 7);
    start(p, again, 2, VTPIN__V1__PIN_REASON__NATIVE, 17, 7, 2, t + SEC);
    end(p, 2, 100 * MS, t + SEC + 100 * MS);
    /* no stack: its own sample, "[no stack: ...]" */
    start(p, s, 3, VTPIN__V1__PIN_REASON__MONITOR, 18, 0, 0, t + SEC);
    end(p, 3, 5 * MS, t + 2 * SEC);

    Vtpin__Pprof__Profile *pr = collect(p, t + 3 * SEC, 60 * SEC);
    if (!pr || !CHECK_UINT(pr->n_sample, 2))
        goto free_profile;
    const Vtpin__Pprof__Sample *a = pr->sample[0], *nost = pr->sample[1];
    if (CHECK_UINT(a->n_value, 3)) {
        CHECK_INT(a->value[0], 250 * MS);
        CHECK_INT(a->value[1], 2);
        CHECK_INT(a->value[2], 0);
    }
    const char *want[] = {"java.lang.Thread.sleep", "JniSleep.sleepCallback", "[native: JNI, library unknown]",
                          "JniSleep.sleepInNative", "JniSleep.run"};
    if (CHECK_UINT(a->n_location_id, 5))
        for (size_t i = 0; i < 5; i++)
            CHECK_STR(function_at(pr, a->location_id[i]), want[i]);
    CHECK_STR(label(pr, a, "reason"), "NATIVE");
    CHECK_STR(label(pr, a, "origin"), "app");
    CHECK_STR(label(pr, a, "carrier"), "tid 17");
    CHECK_STR(label(pr, a, "pid"), "4242");
    if (CHECK_UINT(nost->n_location_id, 1))
        CHECK_STR(function_at(pr, nost->location_id[0]), "[no stack: MONITOR]");
    CHECK(nost->n_value == 3 && nost->value[0] == 5 * MS && nost->value[1] == 1 && nost->value[2] == 0);
free_profile:
    if (pr)
        vtpin__pprof__profile__free_unpacked(pr, NULL);
out:
    session_free(s);
    session_free(again);
    pinprofile_free(p);
}

/* The sample of p whose reason is reason and leaf is leaf. */
static const Vtpin__Pprof__Sample *sample_of(const Vtpin__Pprof__Profile *p, const char *reason, const char *leaf)
{
    for (size_t i = 0; i < p->n_sample; i++) {
        const Vtpin__Pprof__Sample *sm = p->sample[i];
        const char *r = label(p, sm, "reason");
        if (r && strcmp(r, reason) == 0 && sm->n_location_id && strcmp(function_at(p, sm->location_id[0]), leaf) == 0)
            return sm;
    }
    return NULL;
}

/* Carrier hogs: counted when they end, as pins, with their stack, carrier and hogged time, reason HOG; their
 * ids apart from pins' (hog 1 and pin 1 at once); a pin's values unchanged beside them. */
static void test_hogs(void)
{
    struct pinprofile *p = pinprofile_new(60 * SEC);
    struct session *s = session_of(4242, 1);
    if (!CHECK(p && s))
        goto out;
    define_jnisleep(s, 0, 1);
    int64_t t = 2000 * SEC;
    start(p, s, 1, VTPIN__V1__PIN_REASON__NATIVE, 17, 1, 2, t);
    hog_start(p, s, 1, 17, 1, 1, t);
    hog_start(p, s, 1, 17, 1, 1, t); /* re-sent: nothing changes */
    hog_start(p, s, 2, 18, 1, 1, t);
    hog_start(p, s, 3, 18, 0, 0, t); /* no stack */
    hog_start(p, s, 4, 19, 1, 1, t); /* never ends here */
    end(p, 1, 150 * MS, t + 150 * MS);
    hog_end(p, 1, 400 * MS, t + 200 * MS);
    hog_end(p, 1, 400 * MS, t + 200 * MS); /* ended twice: counted once */
    hog_end(p, 2, 300 * MS, t + SEC);
    hog_end(p, 3, 250 * MS, t + SEC);
    hog_end(p, 99, 250 * MS, t + SEC); /* never started: ignored */
    Vtpin__Pprof__Profile *pr = collect(p, t + 2 * SEC, 60 * SEC);
    if (!pr || !CHECK_UINT(pr->n_sample, 4))
        goto free_profile;
    const Vtpin__Pprof__Sample *pin = sample_of(pr, "NATIVE", "java.lang.Thread.sleep");
    if (CHECK(pin) && CHECK_UINT(pin->n_value, 3)) {
        CHECK_INT(pin->value[0], 150 * MS);
        CHECK_INT(pin->value[1], 1);
        CHECK_INT(pin->value[2], 0);
    }
    int64_t hogged = 0, on[2] = {0, 0};
    for (size_t i = 0; i < pr->n_sample; i++) {
        const Vtpin__Pprof__Sample *sm = pr->sample[i];
        if (strcmp(label(pr, sm, "reason"), "HOG") != 0)
            continue;
        CHECK(sm->n_value == 3 && sm->value[0] == 0 && sm->value[1] == 0);
        hogged += sm->value[2];
        const char *carrier = label(pr, sm, "carrier");
        if (strcmp(function_at(pr, sm->location_id[0]), "java.lang.Thread.sleep") == 0) {
            /* the hog's stack as a pin's, without the native frame: that is a pin's culprit */
            const char *want[] = {"java.lang.Thread.sleep", "JniSleep.sleepCallback", "JniSleep.sleepInNative",
                                  "JniSleep.run"};
            if (CHECK_UINT(sm->n_location_id, 4))
                for (size_t k = 0; k < 4; k++)
                    CHECK_STR(function_at(pr, sm->location_id[k]), want[k]);
            CHECK_STR(label(pr, sm, "origin"), "app");
            CHECK_STR(label(pr, sm, "pid"), "4242");
            CHECK_UINT(sm->location_id[0], pin->location_id[0]);
            on[strcmp(carrier, "tid 17") == 0 ? 0 : 1] += sm->value[2];
        }
    }
    CHECK_INT(hogged, 950 * MS);
    CHECK_INT(on[0], 400 * MS); /* on tid 17, beside the pin there */
    CHECK_INT(on[1], 300 * MS); /* on tid 18 */
    const Vtpin__Pprof__Sample *nost = sample_of(pr, "HOG", "[no stack: HOG]");
    CHECK(nost && nost->value[2] == 250 * MS && strcmp(label(pr, nost, "carrier"), "tid 18") == 0);
free_profile:
    if (pr)
        vtpin__pprof__profile__free_unpacked(pr, NULL);
out:
    session_free(s);
    pinprofile_free(p);
}

static void test_window(void)
{
    struct pinprofile *p = pinprofile_new(60 * SEC);
    struct session *s = session_of(1, 1);
    if (!CHECK(p && s))
        goto out;
    define_jnisleep(s, 0, 1);
    int64_t t = 5000 * SEC;
    start(p, s, 1, VTPIN__V1__PIN_REASON__NATIVE, 17, 1, 2, t);
    end(p, 1, 10 * MS, t); /* at t */
    start(p, s, 2, VTPIN__V1__PIN_REASON__NATIVE, 17, 1, 2, t + 30 * SEC);
    end(p, 2, 20 * MS, t + 30 * SEC);                               /* at t + 30 s */
    Vtpin__Pprof__Profile *pr = collect(p, t + 40 * SEC, 15 * SEC); /* the last 15 s: only the second */
    if (pr && CHECK_UINT(pr->n_sample, 1))
        CHECK_INT(pr->sample[0]->value[0], 20 * MS);
    if (pr)
        vtpin__pprof__profile__free_unpacked(pr, NULL);
    pr = collect(p, t + 40 * SEC, 60 * SEC); /* the whole window: both */
    if (pr && CHECK_UINT(pr->n_sample, 1))
        CHECK_INT(pr->sample[0]->value[0], 30 * MS);
    if (pr)
        vtpin__pprof__profile__free_unpacked(pr, NULL);
    pr = collect(p, t + 75 * SEC, 60 * SEC); /* 75 s later: the first is out of the window, its bucket stale */
    if (pr && CHECK_UINT(pr->n_sample, 1))
        CHECK_INT(pr->sample[0]->value[0], 20 * MS);
    if (pr)
        vtpin__pprof__profile__free_unpacked(pr, NULL);
    pr = collect(p, t + 200 * SEC, 60 * SEC); /* long after: nothing */
    if (pr)
        CHECK_UINT(pr->n_sample, 0);
    if (pr)
        vtpin__pprof__profile__free_unpacked(pr, NULL);
    CHECK_INT(pinprofile_window(p), 60 * SEC);
out:
    session_free(s);
    pinprofile_free(p);
}

/* Past every bound: dropped and counted, memory bounded. */
static void test_bounds(void)
{
    struct pinprofile *p = pinprofile_new(60 * SEC);
    struct session *s = session_of(1, 1);
    if (!CHECK(p && s))
        goto out;
    define(s, ev_string(1, "Cls"));
    define(s, ev_string(2, "m"));
    define(s, ev_method(1, 1, 2, 0, 0, 0));
    int64_t t = 100 * SEC;
    uint32_t n_stacks = PINPROFILE_STACKS + 10;
    for (uint32_t i = 1; i <= n_stacks; i++) { /* distinct stacks: the same frame at other lines */
        uint32_t methods[] = {1};
        int32_t lines[] = {(int32_t)i};
        define(s, ev_stack(i, 1, methods, lines));
        start(p, s, i, VTPIN__V1__PIN_REASON__MONITOR, 17, i, 0, t);
        end(p, i, 1 * MS, t + (int64_t)(i % 50) * SEC); /* over 50 buckets: no bucket is full */
    }
    struct pinprofile_drops d;
    pinprofile_drops(p, &d);
    CHECK_UINT(d.stacks, 11); /* stack 0 is the "other" stack: PINPROFILE_STACKS - 1 of the stacks fit */
    CHECK_UINT(d.entries, 0);
    Vtpin__Pprof__Profile *pr = collect(p, t + 55 * SEC, 60 * SEC);
    if (pr) { /* every pin's time is there, the dropped stacks' under the other stack */
        int64_t total = 0, other = 0;
        for (size_t i = 0; i < pr->n_sample; i++) {
            total += pr->sample[i]->value[0];
            if (strstr(function_at(pr, pr->sample[i]->location_id[0]), "[other stacks"))
                other += pr->sample[i]->value[0];
        }
        CHECK_INT(total, (int64_t)n_stacks * MS);
        CHECK_INT(other, 11 * MS);
        vtpin__pprof__profile__free_unpacked(pr, NULL);
    }
    /* one bucket, more (stack, carrier) pairs than it holds */
    for (uint32_t i = 0; i < PINPROFILE_ENTRIES + 5; i++) {
        uint64_t pin = 100000 + i;
        start(p, s, pin, VTPIN__V1__PIN_REASON__MONITOR, (int32_t)(1000 + i), 1, 0, t);
        end(p, pin, MS, t + 59 * SEC);
    }
    pinprofile_drops(p, &d);
    CHECK_UINT(d.entries, 5);
    size_t bytes = pinprofile_memory(p);
    printf("pinprofile: %zu bytes with %u stacks and a full bucket\n", bytes, (unsigned)PINPROFILE_STACKS);
    CHECK(bytes < (2u << 20));
out:
    session_free(s);
    pinprofile_free(p);
    p = pinprofile_new(60 * SEC);
    if (CHECK(p != NULL))
        printf("pinprofile: %zu bytes empty\n", pinprofile_memory(p));
    pinprofile_free(p);
}

/* The endpoint's body: the pins jvms.c fed each JVM's profile, labelled with its pid and app. */
static void test_render(void)
{
    struct jvms_config cfg = {
        .max_carriers = 16, .window_ns = 60 * SEC, .bucket_ns = SEC, .linger_ns = 60 * SEC, .max_jvms = 4};
    struct jvms *r = NULL;
    struct session *s = NULL;
    struct jvm *j = NULL;
    int owner = 0;
    int64_t t = 3000 * SEC;
    WireEvent *hello = ev_hello(4242, 1700000000LL * SEC, 1, WIRE_SCHEMA_VERSION);
    struct session_defs_limits limits = SESSION_LIMITS_DEFAULT;
    if (!CHECK(hello) || !CHECK_INT(jvms_new(&r, &cfg), 0))
        goto out;
    char *app = hello->hello->app;
    hello->hello->app = "JniSleep";
    CHECK_INT(session_new(&s, hello->hello, &limits), 0);
    hello->hello->app = app;
    if (!CHECK(s) || !CHECK_INT(jvms_attach(r, s, NULL, &owner, t, &j), 0))
        goto out;
    define_jnisleep(s, 0, 1);
    WireEvent *ev = ev_pin_start(1, t, VTPIN__V1__PIN_REASON__NATIVE, 101, 17, 1, 2);
    if (CHECK(ev))
        CHECK_INT(jvm_apply(j, s, ev, t), 0);
    wire_event_free(ev);
    Vtpin__V1__PinEnd end = VTPIN__V1__PIN_END__INIT;
    end.pin_id = 1;
    end.end_ns = t + 150 * MS;
    end.duration_ns = 150 * MS;
    WireEvent end_ev = VTPIN__V1__EVENT__INIT;
    end_ev.body_case = VTPIN__V1__EVENT__BODY_PIN_END;
    end_ev.pin_end = &end;
    CHECK_INT(jvm_apply(j, s, &end_ev, t + 150 * MS), 0);
    /* and a carrier hog, through jvm_apply too */
    ev = ev_hog_start(1, t + 200 * MS, 102, 18, 1, 3);
    if (CHECK(ev))
        CHECK_INT(jvm_apply(j, s, ev, t + 400 * MS), 0);
    wire_event_free(ev);
    ev = ev_hog_end(1, t + 200 * MS, t + 700 * MS);
    if (CHECK(ev))
        CHECK_INT(jvm_apply(j, s, ev, t + 700 * MS), 0);
    wire_event_free(ev);

    int64_t span = 0;
    char why[128];
    CHECK_INT(pinned_pprof_span(NULL, cfg.window_ns, &span, why, sizeof(why)), 0);
    uint8_t *gz = NULL, *raw = NULL;
    size_t gz_len = 0, raw_len = 0;
    /* a collector started 10 s before the JVM: the profile spans 11 s, not the whole window */
    if (!CHECK_INT(pinned_pprof_render(r, t + SEC, 1700000000LL * SEC, t - 10 * SEC, span, &gz, &gz_len), 0) ||
        !CHECK_INT(pprof_gunzip(gz, gz_len, 1u << 24, &raw, &raw_len), 0)) {
        free(gz);
        goto out;
    }
    Vtpin__Pprof__Profile *p = vtpin__pprof__profile__unpack(NULL, raw_len, raw);
    if (CHECK(p) && CHECK_UINT(p->n_sample, 2)) {
        const Vtpin__Pprof__Sample *sm = sample_of(p, "NATIVE", "java.lang.Thread.sleep"),
                                   *hog = sample_of(p, "HOG", "java.lang.Thread.sleep");
        if (!CHECK(sm && hog))
            goto free_profile;
        CHECK(sm->n_value == 3 && sm->value[0] == 150 * MS && sm->value[1] == 1 && sm->value[2] == 0);
        CHECK(hog->n_value == 3 && hog->value[0] == 0 && hog->value[1] == 0 && hog->value[2] == 500 * MS);
        CHECK_STR(label(p, hog, "carrier"), "tid 18");
        CHECK_STR(label(p, hog, "app"), "JniSleep");
        CHECK_STR(label(p, sm, "pid"), "4242");
        CHECK_STR(label(p, sm, "app"), "JniSleep");
        CHECK_STR(label(p, sm, "reason"), "NATIVE");
        CHECK_INT(p->duration_nanos, 11 * SEC);
        CHECK_INT(p->time_nanos, 1700000000LL * SEC - 11 * SEC);
    }
free_profile:
    if (p)
        vtpin__pprof__profile__free_unpacked(p, NULL);
    free(gz);
    free(raw);
    jvms_detach(r, j, &owner, t + 2 * SEC);
out:
    wire_event_free(hello);
    session_free(s);
    jvms_free(r);
}

static int64_t fake_now;

/* A clock that moves 1 ms at each look: a step sees its deadline after a known number of JVMs. */
static int64_t fake_clock(void)
{
    return fake_now += MS;
}

/* A profile built in steps (pprof_service.c) is the one built in one go; a step ends at its
 * deadline and the next one goes on from there; a JVM gone between two steps adds nothing. */
static void test_steps(void)
{
    struct jvms_config cfg = {
        .max_carriers = 16, .window_ns = 60 * SEC, .bucket_ns = SEC, .linger_ns = 60 * SEC, .max_jvms = 16};
    struct jvms *r = NULL;
    struct session *ss[10] = {0};
    int owners[10];
    struct jvm *js[10] = {0};
    int64_t t = 3000 * SEC;
    if (!CHECK_INT(jvms_new(&r, &cfg), 0))
        return;
    for (int k = 0; k < 10; k++) {
        ss[k] = session_of(5000 + k, 0);
        if (!CHECK(ss[k]) || !CHECK_INT(jvms_attach(r, ss[k], NULL, &owners[k], t, &js[k]), 0))
            goto out;
        define_jnisleep(ss[k], 0, 1);
        start(js[k]->pinprofile, ss[k], 1, VTPIN__V1__PIN_REASON__NATIVE, 17, 1, 2, t);
        end(js[k]->pinprofile, 1, (k + 1) * MS, t + 100 * MS);
    }
    uint8_t *whole = NULL, *stepped = NULL;
    size_t whole_len = 0, stepped_len = 0;
    CHECK_INT(pinned_pprof_render(r, t + SEC, 1700000000LL * SEC, t - SEC, 60 * SEC, &whole, &whole_len), 0);
    struct pinned_pprof_build *pb = NULL;
    int steps = 0, rc = 0;
    if (!CHECK_INT(pinned_pprof_begin(&pb, r, t + SEC, 60 * SEC), 0))
        goto out;
    do { /* until = 3 looks ahead: 3 JVMs a step */
        rc = pinned_pprof_step(pb, r, fake_clock, fake_now + 3 * MS);
        steps++;
    } while (rc == 0);
    CHECK_INT(rc, 1);
    CHECK_INT(steps, 4); /* 3 + 3 + 3 + 1 */
    CHECK_INT(pinned_pprof_finish(pb, 1700000000LL * SEC, t - SEC, &stepped, &stepped_len), 0);
    CHECK(whole_len == stepped_len && memcmp(whole, stepped, whole_len) == 0);
    pinned_pprof_free(pb);
    free(stepped);
    /* JVM 5001 forgotten after the first step (which added 5000): the profile has the other nine */
    pb = NULL;
    if (CHECK_INT(pinned_pprof_begin(&pb, r, t + SEC, 60 * SEC), 0) &&
        CHECK_INT(pinned_pprof_step(pb, r, fake_clock, fake_now + 1 * MS), 0)) {
        jvms_detach(r, js[1], &owners[1], t + SEC);
        CHECK_UINT(jvms_expire(r, t + SEC + cfg.linger_ns + 1), 1);
        CHECK_INT(pinned_pprof_step(pb, r, NULL, 0), 1);
        uint8_t *raw = NULL;
        size_t raw_len = 0;
        stepped = NULL;
        if (CHECK_INT(pinned_pprof_finish(pb, 1700000000LL * SEC, t - SEC, &stepped, &stepped_len), 0) &&
            CHECK_INT(pprof_gunzip(stepped, stepped_len, 1u << 24, &raw, &raw_len), 0)) {
            Vtpin__Pprof__Profile *p = vtpin__pprof__profile__unpack(NULL, raw_len, raw);
            if (CHECK(p))
                CHECK_UINT(p->n_sample, 9);
            if (p)
                vtpin__pprof__profile__free_unpacked(p, NULL);
        }
        free(raw);
        free(stepped);
    }
    pinned_pprof_free(pb);
    free(whole);
out:
    for (int k = 0; k < 10; k++)
        session_free(ss[k]);
    jvms_free(r);
}

static void test_span(void)
{
    int64_t span = 0;
    char why[160];
    CHECK_INT(pinned_pprof_span(NULL, 60 * SEC, &span, why, sizeof(why)), 0);
    CHECK_INT(span, 60 * SEC);
    CHECK_INT(pinned_pprof_span("30", 60 * SEC, &span, why, sizeof(why)), 0);
    CHECK_INT(span, 30 * SEC);
    CHECK_INT(pinned_pprof_span("60", 60 * SEC, &span, why, sizeof(why)), 0);
    const char *bad[] = {"abc", "-1", "0", "", "5x", "1.5", " 5", "61", "99999999999999999999999", "+5"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        why[0] = '\0';
        CHECK_INT(pinned_pprof_span(bad[i], 60 * SEC, &span, why, sizeof(why)), -EINVAL);
        CHECK_CONTAINS(why, "seconds=");
    }
}

int main(void)
{
    if (session_pins_new(&in_progress, 1024, 0) != 0)
        return 1;
    test_stack_labels_and_reconnect();
    test_hogs();
    test_window();
    test_bounds();
    test_render();
    test_steps();
    test_span();
    session_pins_free(in_progress);
    CHECK_MAIN_RETURN();
}
