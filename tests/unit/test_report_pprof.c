/* vtpin report --format pprof on a recording built in memory (synth.h):
 * samples by stack, reason and carrier, the frames of a cut stack, a pin
 * without a stack, a JNI culprit's native frame, the JVM's labels,
 * several sessions in one profile, and carrier hogs' time as "hogged". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "pprof.pb-c.h"
#include "pprof_build.h"
#include "recording.h"
#include "report.h"
#include "synth.h"

#define MS 1000000LL
#define MONO0 (10 * 1000 * MS)

static struct recording *load(const struct synth *b)
{
    struct recording *r = NULL;
    char err[256];
    if (recording_load_buffer(b->data, b->len, "synth", &r, err, sizeof(err)) || report_passes(r)) {
        fprintf(stderr, "load: %s\n", err);
        exit(2);
    }
    return r;
}

/* Methods 1 Repro.settle, 2 Thread.sleep, 3 VirtualThread.run, 4 com.ex.Codec.encode (native);
 * stacks 1 = sleep, settle, run; 2 = encode, run (truncated). */
static void session(struct synth *b, int64_t pid)
{
    synth_hello(b, pid, VTPIN__V1__OCCUPANCY_SOURCE__OCCUPANCY_OFF, 1700000000000000000LL, MONO0);
    const char *s[] = {NULL,  "Repro",        "settle", "java.lang.Thread", "sleep",    "java.lang.VirtualThread",
                       "run", "com.ex.Codec", "encode", "worker-1",         "worker-2", "Repro.java"};
    for (uint32_t i = 1; i < sizeof(s) / sizeof(s[0]); i++)
        synth_string(b, i, s[i]);
    synth_method(b, 1, 1, 2, 11, 0);
    synth_method(b, 2, 3, 4, 0, 0);
    synth_method(b, 3, 5, 6, 0, 0);
    synth_method(b, 4, 7, 8, 0, 1);
    uint32_t s1[] = {2, 1, 3}, s2[] = {4, 3};
    synth_stack(b, 1, s1, 3, 1, 0);
    synth_stack(b, 2, s2, 2, -1, 1);
}

static Vtpin__Pprof__Profile *profile_of(const struct recording *r, int all, size_t session_index)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&buf, &n);
    struct report_options o = {.session = session_index, .all_sessions = all};
    CHECK_INT(report_pprof(out, r, &o), 0);
    fclose(out);
    uint8_t *raw = NULL;
    size_t raw_len = 0;
    Vtpin__Pprof__Profile *p = NULL;
    if (CHECK_INT(pprof_gunzip((const uint8_t *)buf, n, 1u << 24, &raw, &raw_len), 0))
        p = vtpin__pprof__profile__unpack(NULL, raw_len, raw);
    CHECK(p != NULL);
    free(buf);
    free(raw);
    return p;
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

/* The sample whose leaf is function on carrier with reason (NULL: any). */
static const Vtpin__Pprof__Sample *sample_with(const Vtpin__Pprof__Profile *p, const char *leaf, const char *carrier,
                                               const char *pid, const char *reason)
{
    for (size_t i = 0; i < p->n_sample; i++) {
        const Vtpin__Pprof__Sample *s = p->sample[i];
        const char *c = label(p, s, "carrier"), *pd = label(p, s, "pid"), *r = label(p, s, "reason");
        if (s->n_location_id && strcmp(function_at(p, s->location_id[0]), leaf) == 0 &&
            (!carrier || (c && strcmp(c, carrier) == 0)) && (!pid || (pd && strcmp(pd, pid) == 0)) &&
            (!reason || (r && strcmp(r, reason) == 0)))
            return s;
    }
    return NULL;
}

static const Vtpin__Pprof__Sample *sample_of(const Vtpin__Pprof__Profile *p, const char *leaf, const char *carrier,
                                             const char *pid)
{
    return sample_with(p, leaf, carrier, pid, NULL);
}

static void test_one_session(void)
{
    struct synth b = {0};
    session(&b, 99);
    /* two pins of stack 1 on worker-1: one sample; one on worker-2: another */
    synth_pin_start(&b, 1, VTPIN__V1__PIN_REASON__MONITOR, MONO0 + 1 * MS, 1, 0, 7001, 9, 1, 1, NULL);
    synth_pin_end(&b, 1, MONO0 + 4 * MS, 3 * MS);
    synth_pin_start(&b, 2, VTPIN__V1__PIN_REASON__MONITOR, MONO0 + 5 * MS, 2, 0, 7001, 9, 1, 1, NULL);
    synth_pin_end(&b, 2, MONO0 + 7 * MS, 2 * MS);
    synth_pin_start(&b, 3, VTPIN__V1__PIN_REASON__MONITOR, MONO0 + 5 * MS, 3, 0, 7002, 10, 1, 1, NULL);
    synth_pin_end(&b, 3, MONO0 + 6 * MS, 1 * MS);
    /* no stack, no carrier */
    synth_pin_start(&b, 4, VTPIN__V1__PIN_REASON__MONITOR, MONO0 + 9 * MS, 4, 0, 0, 0, 0, -1, NULL);
    synth_pin_end(&b, 4, MONO0 + 9 * MS + MS / 2, MS / 2);
    /* the native culprit of a cut stack, on a carrier known by its tid only */
    synth_pin_start(&b, 5, VTPIN__V1__PIN_REASON__NATIVE_BLOCK, MONO0 + 10 * MS, 5, 0, 7003, 0, 2, 0, "read");
    synth_pin_end(&b, 5, MONO0 + 11 * MS + MS / 2, MS + MS / 2);
    struct recording *r = load(&b);
    Vtpin__Pprof__Profile *p = profile_of(r, 0, 0);
    if (!p)
        goto out;
    CHECK_UINT(p->n_sample, 4);
    if (CHECK_UINT(p->n_sample_type, PPROF_PINNED_N))
        CHECK_STR(str(p, p->sample_type[PPROF_VALUE_HOGGED_NS]->type), "hogged");
    int64_t total = 0;
    for (size_t i = 0; i < p->n_sample; i++)
        total += p->sample[i]->value[0];
    CHECK_INT(total, 8 * MS);
    const Vtpin__Pprof__Sample *s = sample_of(p, "java.lang.Thread.sleep", "worker-1", NULL);
    if (CHECK(s) && CHECK_UINT(s->n_location_id, 3)) {
        CHECK(s->n_value == 3 && s->value[0] == 5 * MS && s->value[1] == 2 && s->value[2] == 0);
        CHECK_STR(function_at(p, s->location_id[1]), "Repro.settle");
        CHECK_STR(function_at(p, s->location_id[2]), "java.lang.VirtualThread.run");
        CHECK_STR(label(p, s, "reason"), "MONITOR");
        CHECK_STR(label(p, s, "origin"), "app");
        CHECK_STR(label(p, s, "pid"), "99");
        /* file and line of Repro.settle (synth_stack puts frame i at line 10 + i) */
        for (size_t i = 0; i < p->n_location; i++)
            if (p->location[i]->id == s->location_id[1]) {
                CHECK_INT(p->location[i]->line[0]->line, 11);
                for (size_t k = 0; k < p->n_function; k++)
                    if (p->function[k]->id == p->location[i]->line[0]->function_id)
                        CHECK_STR(str(p, p->function[k]->filename), "Repro.java");
            }
    }
    s = sample_of(p, "java.lang.Thread.sleep", "worker-2", NULL);
    CHECK(s && s->value[0] == 1 * MS && s->value[1] == 1);
    s = sample_of(p, "[no stack: MONITOR]", "unknown", NULL);
    CHECK(s && s->value[0] == MS / 2 && s->n_location_id == 1);
    s = sample_of(p, "[native: JNI, library unknown]", "tid 7003", NULL);
    if (CHECK(s) && CHECK_UINT(s->n_location_id, 4)) {
        CHECK_STR(function_at(p, s->location_id[1]), "com.ex.Codec.encode");
        CHECK_STR(function_at(p, s->location_id[3]), "[truncated]"); /* the root of a cut stack */
        CHECK_STR(label(p, s, "reason"), "NATIVE_BLOCK");
    }
    CHECK(p->duration_nanos > 0);
    vtpin__pprof__profile__free_unpacked(p, NULL);
out:
    recording_free(r);
    free(b.data);
}

/* Carrier hogs: a sample each with their stack and hogged time (pinned 0, pins 0), labelled as pins are
 * with reason HOG; one on a pin's stack and carrier is a sample of its own; the pin's values are unchanged. */
static void test_hogs(void)
{
    struct synth b = {0};
    session(&b, 99);
    synth_pin_start(&b, 1, VTPIN__V1__PIN_REASON__MONITOR, MONO0 + 1 * MS, 1, 0, 7001, 9, 1, 1, NULL);
    synth_pin_end(&b, 1, MONO0 + 4 * MS, 3 * MS);
    /* two hogs of stack 1 on worker-1 (merged), one without a stack on a tid, one still running at the end */
    synth_hog_start(&b, 1, MONO0 + 10 * MS, 501, 0, 7001, 9, 1, 1);
    synth_hog_end(&b, 1, MONO0 + 310 * MS, 300 * MS, MONO0 + 300 * MS);
    synth_hog_start(&b, 2, MONO0 + 400 * MS, 502, 0, 7001, 9, 1, 1);
    synth_hog_end(&b, 2, MONO0 + 650 * MS, 250 * MS, 0);
    synth_hog_start(&b, 3, MONO0 + 700 * MS, 503, 0, 7004, 0, 0, -1);
    synth_hog_end(&b, 3, MONO0 + 900 * MS, 200 * MS, 0);
    synth_hog_start(&b, 4, MONO0 + 1000 * MS, 504, 0, 7002, 10, 2, 0);
    synth_pin_start(&b, 2, VTPIN__V1__PIN_REASON__MONITOR, MONO0 + 1500 * MS, 3, 0, 7001, 9, 1, 1, NULL);
    synth_pin_end(&b, 2, MONO0 + 1502 * MS, 2 * MS);
    struct recording *r = load(&b);
    Vtpin__Pprof__Profile *p = profile_of(r, 0, 0);
    if (!p || !CHECK_UINT(r->sessions[0]->n_hogs, 4))
        goto out;
    CHECK_UINT(p->n_sample, 4);
    const Vtpin__Pprof__Sample *pin = sample_with(p, "java.lang.Thread.sleep", "worker-1", "99", "MONITOR");
    if (CHECK(pin) && CHECK_UINT(pin->n_value, 3)) { /* the pins alone */
        CHECK_INT(pin->value[0], 5 * MS);
        CHECK_INT(pin->value[1], 2);
        CHECK_INT(pin->value[2], 0);
    }
    const Vtpin__Pprof__Sample *s = sample_with(p, "java.lang.Thread.sleep", "worker-1", "99", "HOG");
    if (CHECK(s) && CHECK_UINT(s->n_value, 3) && CHECK_UINT(s->n_location_id, 3)) {
        CHECK_INT(s->value[0], 0);
        CHECK_INT(s->value[1], 0);
        CHECK_INT(s->value[2], 550 * MS);
        CHECK_STR(function_at(p, s->location_id[1]), "Repro.settle");
        CHECK_STR(function_at(p, s->location_id[2]), "java.lang.VirtualThread.run");
        CHECK_STR(label(p, s, "origin"), "app");
        CHECK_UINT(s->location_id[0], pin->location_id[0]); /* one location for pins and hogs */
    }
    s = sample_with(p, "[no stack: HOG]", "tid 7004", NULL, "HOG");
    CHECK(s && s->n_location_id == 1 && s->value[0] == 0 && s->value[2] == 200 * MS);
    /* the one in progress: up to the end of the recording, as a pin in progress */
    s = sample_with(p, "com.ex.Codec.encode", "worker-2", NULL, "HOG");
    if (CHECK(s) && CHECK_UINT(s->n_location_id, 3)) {
        CHECK_INT(s->value[2], recording_hog_duration(r->sessions[0], &r->sessions[0]->hogs[3]));
        CHECK(s->value[2] >= 500 * MS);
        CHECK_STR(function_at(p, s->location_id[2]), "[truncated]");
    }
    int64_t pinned = 0, pins = 0, hogged = 0;
    for (size_t i = 0; i < p->n_sample; i++) {
        pinned += p->sample[i]->value[0];
        pins += p->sample[i]->value[1];
        hogged += p->sample[i]->value[2];
    }
    CHECK_INT(pinned, 5 * MS);
    CHECK_INT(pins, 2);
    CHECK(hogged >= 1250 * MS);
out:
    if (p)
        vtpin__pprof__profile__free_unpacked(p, NULL);
    recording_free(r);
    free(b.data);
}

static void test_sessions(void)
{
    struct synth b = {0};
    session(&b, 101);
    synth_pin_start(&b, 1, VTPIN__V1__PIN_REASON__MONITOR, MONO0 + 1 * MS, 1, 0, 7001, 9, 1, 1, NULL);
    synth_pin_end(&b, 1, MONO0 + 4 * MS, 3 * MS);
    session(&b, 102); /* a second JVM, the same stack */
    synth_pin_start(&b, 1, VTPIN__V1__PIN_REASON__MONITOR, MONO0 + 1 * MS, 1, 0, 7001, 9, 1, 1, NULL);
    synth_pin_end(&b, 1, MONO0 + 8 * MS, 7 * MS);
    struct recording *r = load(&b);
    if (!CHECK_UINT(r->n_sessions, 2))
        goto out;
    Vtpin__Pprof__Profile *p = profile_of(r, 1, 1);
    if (p) { /* both, told apart by pid */
        CHECK_UINT(p->n_sample, 2);
        const Vtpin__Pprof__Sample *a = sample_of(p, "java.lang.Thread.sleep", NULL, "101"),
                                   *c = sample_of(p, "java.lang.Thread.sleep", NULL, "102");
        CHECK(a && a->value[0] == 3 * MS);
        CHECK(c && c->value[0] == 7 * MS);
        if (a && c)
            CHECK_UINT(a->location_id[0], c->location_id[0]); /* one location for both */
        vtpin__pprof__profile__free_unpacked(p, NULL);
    }
    p = profile_of(r, 0, 0); /* --session 1 */
    if (p) {
        CHECK_UINT(p->n_sample, 1);
        CHECK(sample_of(p, "java.lang.Thread.sleep", NULL, "101") != NULL);
        vtpin__pprof__profile__free_unpacked(p, NULL);
    }
out:
    recording_free(r);
    free(b.data);
}

int main(void)
{
    (void)synth_carrier; /* synth.h's builders this test has no use for */
    (void)synth_sample;
    (void)synth_transitions;
    (void)synth_goodbye;
    test_one_session();
    test_hogs();
    test_sessions();
    CHECK_MAIN_RETURN();
}
