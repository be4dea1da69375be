/* Unit tests for the graphical report formats: the stack tree (flame_build),
 * the per-carrier timeline, folded stacks and their rounding, the Perfetto
 * trace events, and the HTML page's data (escaping, merging of many pins).
 * Recordings are built in memory (synth.h) and loaded like a file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "common/jsonread.h"
#include "recording.h"
#include "report.h"
#include "synth.h"
#include "views.h"

#define MS 1000000LL
#define MONO0 (10 * 1000 * MS)

static struct recording *load(const struct synth *b)
{
    FILE *f = tmpfile();
    struct recording *r = NULL;
    char err[256];
    if (!f || fwrite(b->data, 1, b->len, f) != b->len || fflush(f)) {
        fprintf(stderr, "tmpfile failed\n");
        exit(2);
    }
    lseek(fileno(f), 0, SEEK_SET);
    int rc = recording_load_fd(fileno(f), "synth", &r, err, sizeof(err));
    if (!rc)
        rc = report_passes(r); /* as report_open */
    fclose(f);
    if (rc) {
        fprintf(stderr, "load: %s\n", err);
        exit(2);
    }
    return r;
}

/* A report format's output as a string (free it). */
static char *render(int (*fn)(FILE *, const struct recording *, const struct report_options *),
                    const struct recording *r, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&buf, &n);
    struct report_options o = {.session = r->n_sessions - 1};
    CHECK_INT(fn(out, r, &o), 0);
    fclose(out);
    if (len)
        *len = n;
    return buf;
}

static size_t count_of(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* Methods: 1 Repro.settle (line 20), 2 Thread.sleep, 3 VirtualThread.run,
 * 4 Continuation.enter, 5 Codec.encode (native). Stacks (top first):
 * 1 = sleep, settle, run, enter; 2 = settle, run, enter; 3 = encode, run
 * (truncated). Carriers 7001 and 7002 announced; pins on 7001, 7002, on
 * 7003 (named only by the pin) and one without a carrier. */
static void base_recording(struct synth *b, int occupancy)
{
    synth_hello(b, 99, occupancy, 1700000000000000000LL, MONO0);
    const char *s[] = {NULL,
                       "Repro",
                       "settle",
                       "java.lang.Thread",
                       "sleep",
                       "java.lang.VirtualThread",
                       "run",
                       "jdk.internal.vm.Continuation",
                       "enter",
                       "com.ex.Codec",
                       "encode",
                       "worker-1",
                       "worker-2",
                       "worker-3",
                       "vt</script><script>alert(1)</script>"};
    for (uint32_t i = 1; i < sizeof(s) / sizeof(s[0]); i++)
        synth_string(b, i, s[i]);
    synth_method(b, 1, 1, 2, 0, 0);
    synth_method(b, 2, 3, 4, 0, 0);
    synth_method(b, 3, 5, 6, 0, 0);
    synth_method(b, 4, 7, 8, 0, 0);
    synth_method(b, 5, 9, 10, 0, 1);
    uint32_t s1[] = {2, 1, 3, 4}, s2[] = {1, 3, 4}, s3[] = {5, 3};
    synth_stack(b, 1, s1, 4, 1, 0);
    synth_stack(b, 2, s2, 3, 0, 0);
    synth_stack(b, 3, s3, 2, -1, 1);
    synth_carrier(b, 7001, 11, MONO0);
    synth_carrier(b, 7002, 12, MONO0);
}

static void test_flame_tree(void)
{
    struct synth b = {0};
    base_recording(&b, VTPIN__V1__OCCUPANCY_SOURCE__OCCUPANCY_OFF);
    synth_pin_start(&b, 1, VTPIN__V1__PIN_REASON__MONITOR, MONO0 + 1 * MS, 1, 0, 7001, 11, 1, 1, NULL);
    synth_pin_end(&b, 1, MONO0 + 4 * MS, 3 * MS);
    synth_pin_start(&b, 2, VTPIN__V1__PIN_REASON__MONITOR, MONO0 + 5 * MS, 2, 0, 7002, 12, 1, 1, NULL);
    synth_pin_end(&b, 2, MONO0 + 7 * MS, 2 * MS);
    synth_pin_start(&b, 3, VTPIN__V1__PIN_REASON__MONITOR_ENTER, MONO0 + 8 * MS, 3, 0, 7001, 11, 2, 0, NULL);
    synth_pin_end(&b, 3, MONO0 + 9 * MS, 1 * MS);
    synth_pin_start(&b, 4, VTPIN__V1__PIN_REASON__MONITOR, MONO0 + 9 * MS, 4, 0, 0, 0, 0, -1, NULL);
    synth_pin_end(&b, 4, MONO0 + 9 * MS + MS / 2, MS / 2);
    synth_pin_start(&b, 5, VTPIN__V1__PIN_REASON__NATIVE_BLOCK, MONO0 + 10 * MS, 5, 0, 7003, 13, 3, 0, "read");
    synth_pin_end(&b, 5, MONO0 + 11 * MS + MS / 2, MS + MS / 2);
    struct recording *r = load(&b);
    struct flame f;
    if (!CHECK_INT(flame_build(r->sessions[0], &f), 0))
        return;
    CHECK_STR(f.labels[f.nodes[0].label], "all");
    CHECK_INT(f.nodes[0].total_ns, 8 * MS);
    /* root's children in the order first seen: enter (pins 1-3), [no stack: MONITOR], [truncated] */
    uint32_t c = f.nodes[0].first_child;
    CHECK_STR(f.labels[f.nodes[c].label], "jdk.internal.vm.Continuation.enter");
    CHECK_INT(f.nodes[c].total_ns, 6 * MS);
    CHECK_INT(f.nodes[c].self_ns, 0);
    uint32_t run = f.nodes[c].first_child;
    CHECK_STR(f.labels[f.nodes[run].label], "java.lang.VirtualThread.run");
    uint32_t settle = f.nodes[run].first_child;
    CHECK_STR(f.labels[f.nodes[settle].label], "Repro.settle");
    CHECK_INT(f.nodes[settle].total_ns, 6 * MS);
    CHECK_INT(f.nodes[settle].self_ns, 1 * MS); /* pin 3's stack ends at settle */
    uint32_t sleep = f.nodes[settle].first_child;
    CHECK_STR(f.labels[f.nodes[sleep].label], "java.lang.Thread.sleep");
    CHECK_INT(f.nodes[sleep].self_ns, 5 * MS); /* pins 1 and 2 share stack 1 */
    CHECK_UINT(f.nodes[sleep].depth, 4);
    c = f.nodes[c].next_sibling;
    CHECK_STR(f.labels[f.nodes[c].label], "[no stack: MONITOR]");
    CHECK_INT(f.nodes[c].self_ns, MS / 2);
    c = f.nodes[c].next_sibling;
    CHECK_STR(f.labels[f.nodes[c].label], "[truncated]");
    CHECK_INT(f.nodes[c].total_ns, MS + MS / 2);
    CHECK(f.nodes[c].next_sibling == VIEWS_NO_NODE);
    flame_fini(&f);

    /* timeline: announced carriers first, then 7003 (named by its pin), then the lane without a tid */
    struct timeline t;
    if (CHECK_INT(timeline_build(r->sessions[0], &t), 0)) {
        CHECK_UINT(t.n_lanes, 4);
        CHECK_INT(t.lanes[0].tid, 7001);
        CHECK_STR(t.lanes[0].name, "worker-1");
        CHECK_UINT(t.lanes[0].n_pins, 2);
        CHECK_INT(t.lanes[2].tid, 7003);
        CHECK_STR(t.lanes[2].name, "worker-3");
        CHECK(!t.lanes[3].has_tid);
        CHECK_UINT(t.lanes[3].n_pins, 1);
        timeline_fini(&t);
    }

    /* folded stacks: root first, pinned microseconds, the same tree */
    char *text = render(report_collapsed, r, NULL);
    CHECK_STR(
        text,
        "jdk.internal.vm.Continuation.enter;java.lang.VirtualThread.run;Repro.settle 1000\n"
        "jdk.internal.vm.Continuation.enter;java.lang.VirtualThread.run;Repro.settle;java.lang.Thread.sleep 5000\n"
        "[no stack: MONITOR] 500\n"
        "[truncated];java.lang.VirtualThread.run;com.ex.Codec.encode 1500\n");
    free(text);
    recording_free(r);
    free(b.data);
}

/* Each line is rounded from a running sum, so the lines add up to the rounded total. */
static void test_collapsed_rounding(void)
{
    struct synth b = {0};
    base_recording(&b, VTPIN__V1__OCCUPANCY_SOURCE__OCCUPANCY_OFF);
    for (uint64_t i = 1; i <= 3; i++) { /* 1.5 us each on three distinct stacks: 4.5 us -> 5 us */
        synth_pin_start(&b, i, VTPIN__V1__PIN_REASON__MONITOR, MONO0 + (int64_t)i * MS, 1, 0, 7001, 11, (uint32_t)i,
                        i == 3 ? -1 : 0, NULL);
        synth_pin_end(&b, i, MONO0 + (int64_t)i * MS + 1500, 1500);
    }
    struct recording *r = load(&b);
    char *text = render(report_collapsed, r, NULL);
    long sum = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
        sum += strtol(strrchr(line, ' ') + 1, NULL, 10);
    CHECK_INT(sum, 5);
    free(text);
    recording_free(r);
    free(b.data);
}

static void test_perfetto(void)
{
    struct synth b = {0};
    base_recording(&b, VTPIN__V1__OCCUPANCY_SOURCE__OCCUPANCY_SAMPLED);
    synth_pin_start(&b, 1, VTPIN__V1__PIN_REASON__MONITOR, MONO0 + 2 * MS, 41, 14, 7001, 11, 1, 1, NULL);
    synth_pin_end(&b, 1, MONO0 + 5 * MS, 3 * MS + 250);
    synth_pin_start(&b, 2, VTPIN__V1__PIN_REASON__NATIVE_BLOCK, MONO0 + 6 * MS, 42, 0, 7002, 12, 3, 0, "read");
    int32_t tids[] = {7001, 7002};
    int64_t busy[] = {41, 0}, idle[] = {0, 42};
    synth_sample(&b, MONO0, tids, busy, 2);
    synth_sample(&b, MONO0 + 10 * MS, tids, busy, 2); /* unchanged: no new counter value */
    synth_sample(&b, MONO0 + 20 * MS, tids, idle, 2);
    struct recording *r = load(&b);
    size_t len;
    char *text = render(report_perfetto, r, &len);
    struct jsonread *doc = NULL;
    char err[200];
    if (!CHECK_INT(jsonread_parse(text, len, &doc, err, sizeof(err)), 0)) {
        fprintf(stderr, "%s\n%s\n", err, text);
        free(text);
        return;
    }
    const struct jsonread *ev = jsonread_get(doc, "traceEvents");
    size_t pins = 0, names = 0, counters = 0;
    for (size_t i = 0; i < jsonread_len(ev); i++) {
        const struct jsonread *e = jsonread_at(ev, i);
        const char *ph = jsonread_str(jsonread_get(e, "ph"), "");
        CHECK_INT(jsonread_int(jsonread_get(e, "pid"), 0), 99);
        if (strcmp(ph, "X") == 0) {
            const struct jsonread *args = jsonread_get(e, "args");
            int64_t id = jsonread_int(jsonread_get(args, "pin_id"), 0);
            pins++;
            if (id == 1) {
                CHECK_STR(jsonread_str(jsonread_get(e, "name"), ""), "MONITOR Repro.settle");
                CHECK_INT(jsonread_int(jsonread_get(e, "tid"), 0), 7001);
                CHECK(jsonread_num(jsonread_get(e, "ts"), 0) == 2000.0);
                CHECK(jsonread_num(jsonread_get(e, "dur"), 0) == 3000.25);
                CHECK_INT(jsonread_int(jsonread_get(args, "vthread_id"), 0), 41);
                CHECK_STR(jsonread_str(jsonread_get(args, "vthread_name"), ""), "vt</script><script>alert(1)</script>");
                CHECK_INT(jsonread_int(jsonread_get(args, "monitors"), 0), 1);
                CHECK_STR(jsonread_str(jsonread_at(jsonread_get(args, "monitor_frames"), 0), ""),
                          "Repro.settle(Unknown Source) x1");
            } else {
                /* still in progress: its duration so far, up to the last timestamp (the sample at +20 ms) */
                CHECK_STR(jsonread_str(jsonread_get(e, "name"), ""), "NATIVE_BLOCK com.ex.Codec.encode");
                CHECK(jsonread_bool(jsonread_get(args, "ongoing"), 0));
                CHECK(jsonread_num(jsonread_get(e, "dur"), 0) == 14000.0);
                CHECK_STR(jsonread_str(jsonread_get(args, "blocked_in"), ""), "read");
            }
        } else if (strcmp(ph, "M") == 0 && strcmp(jsonread_str(jsonread_get(e, "name"), ""), "thread_name") == 0) {
            names++;
            if (jsonread_int(jsonread_get(e, "tid"), 0) == 7002)
                CHECK_STR(jsonread_str(jsonread_get(jsonread_get(e, "args"), "name"), ""), "worker-2");
        } else if (strcmp(ph, "C") == 0) {
            counters++;
        }
    }
    CHECK_UINT(pins, 2);
    CHECK_UINT(names, 2);
    CHECK_UINT(counters, 6); /* per carrier: two changes and the end of the last state */
    jsonread_free(doc);
    free(text);
    recording_free(r);
    free(b.data);
}

static const char *data_of(const char *html, size_t *len)
{
    const char *open = strstr(html, "<script id=\"vtpin-data\" type=\"application/json\">");
    if (!open)
        return NULL;
    open = strchr(open, '>') + 1;
    const char *close = strstr(open, "</script>");
    *len = close ? (size_t)(close - open) : 0;
    return close ? open : NULL;
}

static void test_html(void)
{
    struct synth b = {0};
    base_recording(&b, VTPIN__V1__OCCUPANCY_SOURCE__OCCUPANCY_EXACT);
    synth_pin_start(&b, 1, VTPIN__V1__PIN_REASON__MONITOR, MONO0 + 2 * MS, 41, 14, 7001, 11, 1, 1, NULL);
    synth_pin_end(&b, 1, MONO0 + 5 * MS, 3 * MS);
    int64_t times[] = {MONO0, MONO0 + 1 * MS, MONO0 + 6 * MS}, vts[] = {0, 41, 0};
    synth_transitions(&b, 7001, times, vts, 3);
    synth_goodbye(&b, MONO0 + 10 * MS, 1);
    struct recording *r = load(&b);
    size_t len, dlen;
    char *html = render(report_html, r, &len);
    CHECK(strstr(html, "@VTPIN_") == NULL);
    CHECK_CONTAINS(html, "<title>vtpin: JVM 99, java 21.0.5</title>");
    /* the hostile virtual thread name cannot close the data's script element */
    CHECK_UINT(count_of(html, "</script>"), 2);
    CHECK(strstr(html, "http://") == NULL || strstr(html, "http://www.w3.org/2000/svg")); /* nothing fetched */
    CHECK(strstr(html, "https://") == NULL);
    const char *data = data_of(html, &dlen);
    if (CHECK(data)) {
        char *copy = strndup(data, dlen);
        CHECK(strchr(copy, '<') == NULL); /* escaped: nothing in the data can end its script element */
        struct jsonread *doc = NULL;
        char err[200];
        if (CHECK_INT(jsonread_parse(copy, strlen(copy), &doc, err, sizeof(err)), 0)) {
            const struct jsonread *lanes = jsonread_get(doc, "lanes");
            CHECK_UINT(jsonread_len(lanes), 2);
            const struct jsonread *l0 = jsonread_at(lanes, 0);
            CHECK_STR(jsonread_str(jsonread_get(l0, "name"), ""), "worker-1");
            const struct jsonread *p = jsonread_get(l0, "p");
            CHECK_UINT(jsonread_len(p), 9);
            CHECK_INT(jsonread_int(jsonread_at(p, 8), 0), -1);    /* not a NATIVE_BLOCK */
            CHECK_INT(jsonread_int(jsonread_at(p, 0), -1), 2000); /* us from the first timestamp */
            CHECK_INT(jsonread_int(jsonread_at(p, 1), -1), 3000);
            const struct jsonread *strings = jsonread_get(doc, "strings");
            CHECK_STR(jsonread_str(jsonread_at(strings, (size_t)jsonread_int(jsonread_at(p, 4), 0)), ""),
                      "vt</script><script>alert(1)</script>");
            CHECK_STR(jsonread_str(jsonread_at(strings, (size_t)jsonread_int(jsonread_at(p, 5), 0)), ""),
                      "Repro.settle(Unknown Source)");
            /* exact occupancy over 10 ms: idle 1 ms, busy 5 ms, idle 4 ms */
            const struct jsonread *busy = jsonread_get(l0, "busy");
            CHECK_UINT(jsonread_len(busy), 1000);
            CHECK_INT(jsonread_int(jsonread_at(busy, 50), -2), 0);
            CHECK_INT(jsonread_int(jsonread_at(busy, 300), -2), 100);
            CHECK_INT(jsonread_int(jsonread_at(busy, 900), -2), 0);
            CHECK_INT(jsonread_len(jsonread_get(jsonread_at(lanes, 1), "busy")), 0); /* no occupancy recorded */
            CHECK_STR(jsonread_str(jsonread_get(jsonread_at(jsonread_get(doc, "sites"), 0), "culprit"), ""),
                      "Repro.settle(Unknown Source) <== monitors:1");
            CHECK_INT(jsonread_int(jsonread_get(jsonread_get(doc, "summary"), "pinned_ns"), 0), 3 * MS);
            jsonread_free(doc);
        } else {
            fprintf(stderr, "%s\n", err);
        }
        free(copy);
    }
    free(html);
    recording_free(r);
    free(b.data);
}

/* Carrier hogs in the page: in their carrier's lane ("h", as pins' "p"), on a
 * lane of its own for a carrier only a hog names, in the summary and the
 * page's legend and tooltip code; and in the Perfetto trace. */
static void test_html_hogs(void)
{
    struct synth b = {0};
    base_recording(&b, VTPIN__V1__OCCUPANCY_SOURCE__OCCUPANCY_OFF);
    synth_pin_start(&b, 1, VTPIN__V1__PIN_REASON__MONITOR, MONO0 + 2 * MS, 41, 14, 7001, 11, 1, 1, NULL);
    synth_pin_end(&b, 1, MONO0 + 5 * MS, 3 * MS);
    synth_hog_start(&b, 1, MONO0 + 10 * MS, 42, 14, 7001, 11, 2, 0);
    synth_hog_end(&b, 1, MONO0 + 30 * MS, 20 * MS, MONO0 + 25 * MS);
    synth_hog_start(&b, 2, MONO0 + 40 * MS, 43, 0, 7004, 13, 0, -1); /* still running at the end */
    synth_goodbye(&b, MONO0 + 100 * MS, 1);
    struct recording *r = load(&b);
    size_t len, dlen;
    char *html = render(report_html, r, &len);
    CHECK_CONTAINS(html, "carrier hog (on CPU without unmounting, nothing pinned)"); /* the legend */
    CHECK_CONTAINS(html, "classList.contains('hog')");                               /* the tooltip */
    const char *data = data_of(html, &dlen);
    if (CHECK(data)) {
        char *copy = strndup(data, dlen);
        struct jsonread *doc = NULL;
        char err[200];
        if (CHECK_INT(jsonread_parse(copy, strlen(copy), &doc, err, sizeof(err)), 0)) {
            const struct jsonread *lanes = jsonread_get(doc, "lanes");
            CHECK_UINT(jsonread_len(lanes), 3); /* 7001, 7002 announced; 7004 only a hog names */
            const struct jsonread *l0 = jsonread_at(lanes, 0), *h = jsonread_get(l0, "h");
            CHECK_UINT(jsonread_int(jsonread_get(l0, "hogs"), 0), 1);
            CHECK_INT(jsonread_int(jsonread_get(l0, "hogged_ns"), 0), 20 * MS);
            CHECK_UINT(jsonread_len(jsonread_get(l0, "p")), 9);
            CHECK_UINT(jsonread_len(h), 9);
            CHECK_INT(jsonread_int(jsonread_at(h, 0), -1), 10000); /* us from the first timestamp */
            CHECK_INT(jsonread_int(jsonread_at(h, 1), -1), 20000);
            CHECK_INT(jsonread_int(jsonread_at(h, 2), 0), -1); /* no reason: a hog */
            CHECK_INT(jsonread_int(jsonread_at(h, 6), 0), 1);  /* hog id */
            CHECK_INT(jsonread_int(jsonread_at(h, 7), 0), 42);
            const struct jsonread *strings = jsonread_get(doc, "strings");
            CHECK_STR(jsonread_str(jsonread_at(strings, (size_t)jsonread_int(jsonread_at(h, 5), 0)), ""),
                      "Repro.settle(Unknown Source)");
            const struct jsonread *l2 = jsonread_at(lanes, 2), *h2 = jsonread_get(l2, "h");
            CHECK_INT(jsonread_int(jsonread_get(l2, "tid"), 0), 7004);
            CHECK_STR(jsonread_str(jsonread_get(l2, "name"), ""), "worker-3");
            CHECK_UINT(jsonread_len(h2), 9);
            CHECK_INT(jsonread_int(jsonread_at(h2, 1), -1), 60000); /* ongoing: up to the last timestamp */
            CHECK_INT(jsonread_int(jsonread_at(h2, 5), 0), -1);     /* no stack, no culprit */
            const struct jsonread *hogs = jsonread_get(doc, "hogs");
            CHECK_INT(jsonread_int(jsonread_get(hogs, "count"), 0), 2);
            CHECK_INT(jsonread_int(jsonread_get(hogs, "ongoing"), 0), 1);
            CHECK_INT(jsonread_int(jsonread_get(hogs, "longest_ns"), 0), 60 * MS);
            CHECK_INT(jsonread_int(jsonread_get(hogs, "held_ns"), 0), 80 * MS);
            jsonread_free(doc);
        } else {
            fprintf(stderr, "%s\n", err);
        }
        free(copy);
    }
    free(html);
    char *trace = render(report_perfetto, r, NULL); /* and in the Perfetto trace, on their carrier's track */
    CHECK_CONTAINS(trace,
                   "{\"ph\": \"X\", \"cat\": \"hog\", \"name\": \"HOG Repro.settle\", \"pid\": 99, \"tid\": 7001, "
                   "\"ts\": 10000.000, \"dur\": 20000.000, \"args\": {\"hog_id\": 1, \"vthread_id\": 42");
    CHECK_CONTAINS(trace, "\"name\": \"HOG\", \"pid\": 99, \"tid\": 7004");
    free(trace);
    recording_free(r);
    free(b.data);
}

/* Sampled occupancy on a span that does not divide into the strip's buckets:
 * every bucket is known, and the busy share follows the samples. */
static void test_html_busy_strip(void)
{
    struct synth b = {0};
    base_recording(&b, VTPIN__V1__OCCUPANCY_SOURCE__OCCUPANCY_SAMPLED);
    int32_t tids[] = {7001};
    for (int64_t i = 0; i < 300; i++) { /* every 10 ms for 3 s: busy in the first third, then idle */
        int64_t vt = i < 100 ? 5 : 0;
        synth_sample(&b, MONO0 + i * 10 * MS, tids, &vt, 1);
    }
    synth_goodbye(&b, MONO0 + 3000 * MS + 890988, 0); /* 3.000890988 s */
    struct recording *r = load(&b);
    size_t len, dlen;
    char *html = render(report_html, r, &len);
    const char *data = data_of(html, &dlen);
    struct jsonread *doc = NULL;
    char err[200];
    if (CHECK(data) && CHECK_INT(jsonread_parse(data, dlen, &doc, err, sizeof(err)), 0)) {
        const struct jsonread *busy = jsonread_get(jsonread_at(jsonread_get(doc, "lanes"), 0), "busy");
        size_t known = 0, full = 0, idle = 0;
        for (size_t k = 0; k < jsonread_len(busy); k++) {
            int64_t v = jsonread_int(jsonread_at(busy, k), -2);
            known += v >= 0;
            full += v == 100;
            idle += v == 0;
        }
        CHECK_UINT(known, 1000);
        CHECK(full >= 332 && full <= 334); /* 1 s of 3.0009 s */
        CHECK(idle >= 665 && idle <= 667);
        jsonread_free(doc);
    }
    free(html);
    recording_free(r);
    free(b.data);
}

/* Many short pins: merged per lane slot, so the page stays small. */
static void test_html_merged(void)
{
    struct synth b = {0};
    base_recording(&b, VTPIN__V1__OCCUPANCY_SOURCE__OCCUPANCY_OFF);
    const uint64_t n = 30000;
    for (uint64_t i = 1; i <= n; i++) {
        int64_t at = MONO0 + (int64_t)i * 100000; /* every 100 us, 50 us long, on two carriers */
        synth_pin_start(&b, i, VTPIN__V1__PIN_REASON__MONITOR, at, (int64_t)i, 0, i % 2 ? 7001 : 7002, 0, 1, 1, NULL);
        synth_pin_end(&b, i, at + 50000, 50000);
    }
    struct recording *r = load(&b);
    size_t len;
    char *html = render(report_html, r, &len);
    CHECK_CONTAINS(html, "\"merged\":true");
    CHECK(len < 400 * 1024); /* 30000 pins one by one would be ~1 MB of lane data */
    free(html);
    char *folded = render(report_collapsed, r, NULL);
    CHECK_STR(folded,
              "jdk.internal.vm.Continuation.enter;java.lang.VirtualThread.run;Repro.settle;java.lang.Thread.sleep "
              "1500000\n");
    free(folded);
    recording_free(r);
    free(b.data);
}

/* A recording of only the magic: every format still writes a valid document. */
static void test_empty(void)
{
    struct synth b = {0};
    synth_put(&b, WIRE_MAGIC, WIRE_MAGIC_LEN);
    struct recording *r = load(&b);
    size_t len;
    char *text = render(report_collapsed, r, &len);
    CHECK_UINT(len, 0);
    free(text);
    text = render(report_perfetto, r, &len);
    struct jsonread *doc = NULL;
    char err[200];
    if (CHECK_INT(jsonread_parse(text, len, &doc, err, sizeof(err)), 0))
        CHECK_UINT(jsonread_len(jsonread_get(doc, "traceEvents")), 1); /* the process name only */
    jsonread_free(doc);
    free(text);
    text = render(report_html, r, &len);
    CHECK_CONTAINS(text, "\"lanes\":[]");
    CHECK_CONTAINS(text, "\"flame\":[0,0,0]");
    free(text);
    recording_free(r);
    free(b.data);
}

/* No raw control character (C0 but the line break, DEL, C1) in text. */
static int printable_text(const char *text)
{
    for (const unsigned char *c = (const unsigned char *)text; *c; c++)
        if ((*c < 0x20 && *c != '\n') || *c == 0x7F || (c[0] == 0xC2 && c[1] >= 0x80 && c[1] < 0xA0) ||
            (c[0] == 0xC0 && c[1] == 0x80))
            return 0;
    return 1;
}

/* Names from the JVM with control characters (ESC, a NUL as modified UTF-8's
 * C0 80, a line break, DEL, a C1 CSI), a ';', a bidirectional override and
 * markup: every text format escapes the control characters (\x1b, \x00) and
 * keeps the rest; the JSON formats escape them as JSON does; the HTML page's
 * data holds no '<', '>', '&', U+2028 or U+2029 and parses back to the names. */
static void test_hostile_names(void)
{
    struct synth b = {0};
    synth_hello(&b, 99, VTPIN__V1__OCCUPANCY_SOURCE__OCCUPANCY_OFF, 1700000000000000000LL, MONO0);
    const char *s[] = {NULL,
                       "com.ex.Esc\x1b[2JClass",
                       "nul\xc0\x80here;semi",
                       "com.ex.Lines",
                       "two\nlines\x7f\xc2\x9b"
                       "6n",
                       "rtl\xe2\x80\xae"
                       "evil",
                       "worker-1",
                       "<!--<script>]]>&amp;\xe2\x80\xa8\xe2\x80\xa9\x1b\xc0\x80"};
    for (uint32_t i = 1; i < sizeof(s) / sizeof(s[0]); i++)
        synth_string(&b, i, s[i]);
    synth_method(&b, 1, 1, 2, 0, 0);
    synth_method(&b, 2, 3, 4, 5, 0);
    uint32_t st[] = {1, 2};
    synth_stack(&b, 1, st, 2, -1, 0);
    synth_carrier(&b, 7001, 6, MONO0);
    synth_pin_start(&b, 1, VTPIN__V1__PIN_REASON__NATIVE_BLOCK, MONO0 + 1 * MS, 41, 7, 7001, 6, 1, 0,
                    "sys\x1b]0;title\x07");
    synth_pin_end(&b, 1, MONO0 + 4 * MS, 3 * MS);
    synth_goodbye(&b, MONO0 + 10 * MS, 1);
    struct recording *r = load(&b);

    char *text = render(report_collapsed, r, NULL);
    CHECK(printable_text(text));
    CHECK_STR(text, "com.ex.Lines.two\\x0alines\\x7f\\x9b6n;com.ex.Esc\\x1b[2JClass.nul\\x00here_semi 3000\n");
    free(text);

    text = render(report_text, r, NULL);
    CHECK(printable_text(text));
    CHECK_CONTAINS(text, "com.ex.Esc\\x1b[2JClass.nul\\x00here;semi(Unknown Source)");
    CHECK_CONTAINS(text, "com.ex.Lines.two\\x0alines\\x7f\\x9b6n(rtl\\u202eevil:11)");
    CHECK_CONTAINS(text, "blocked in the kernel in sys\\x1b]0;title\\x07\n");
    free(text);

    text = render(report_json, r, NULL);
    CHECK(printable_text(text));
    CHECK_CONTAINS(text, "\"com.ex.Esc\\u001b[2JClass\"");
    CHECK_CONTAINS(text, "\"nul\\u0000here;semi\"");
    free(text);

    size_t len, dlen;
    char *html = render(report_html, r, &len);
    const char *data = data_of(html, &dlen);
    if (CHECK(data)) {
        char *copy = strndup(data, dlen);
        CHECK(strpbrk(copy, "<>&") == NULL);
        CHECK(strstr(copy, "\xe2\x80\xa8") == NULL && strstr(copy, "\xe2\x80\xa9") == NULL);
        CHECK(printable_text(copy));
        CHECK_CONTAINS(copy, "\\u003c!--\\u003cscript\\u003e]]\\u003e\\u0026amp;\\u2028\\u2029\\u001b\\u0000");
        struct jsonread *doc = NULL;
        char err[200];
        if (CHECK_INT(jsonread_parse(copy, strlen(copy), &doc, err, sizeof(err)), 0)) {
            const struct jsonread *culprit = jsonread_get(jsonread_at(jsonread_get(doc, "sites"), 0), "culprit");
            CHECK_STR(jsonread_str(culprit, ""), "com.ex.Esc\x1b[2JClass.nul\xc0\x80here;semi(Unknown Source)");
            jsonread_free(doc);
        } else {
            fprintf(stderr, "%s\n", err);
        }
        free(copy);
    }
    CHECK_UINT(count_of(html, "</script>"), 2);
    CHECK_UINT(count_of(html, "<!--"), 1); /* the page's own comment at its top */
    free(html);
    recording_free(r);
    free(b.data);
}

/* recording_load loads only; report_open (and report_passes) then run the
 * kernel passes: a NATIVE_BLOCK pin whose carrier the kernel saw asleep
 * from before the watchdog's first sample starts when that sleep began. */
static void test_open_runs_passes(void)
{
    struct synth b = {0};
    base_recording(&b, VTPIN__V1__OCCUPANCY_SOURCE__OCCUPANCY_OFF);
    synth_pin_start(&b, 1, VTPIN__V1__PIN_REASON__NATIVE_BLOCK, MONO0 + 100 * MS, 1, 0, 7001, 11, 3, 0, "read");
    synth_pin_end(&b, 1, MONO0 + 300 * MS, 200 * MS);
    Vtpin__V1__KernelInterval k = VTPIN__V1__KERNEL_INTERVAL__INIT;
    k.carrier_tid = 7001;
    k.start_ns = MONO0 + 95 * MS;
    k.end_ns = MONO0 + 290 * MS;
    k.has_state = 1;
    k.state = VTPIN__V1__KERNEL_STATE__KERNEL_SLEEPING;
    SYNTH_EVENT(&b, kernel_interval, VTPIN__V1__EVENT__BODY_KERNEL_INTERVAL, &k);
    char path[] = "/tmp/vtpin-test-views-XXXXXX";
    int fd = mkstemp(path);
    if (!CHECK(fd >= 0))
        return;
    close(fd);
    CHECK_INT(synth_write(&b, path), 0);
    struct recording *r = NULL;
    char err[256] = "";
    if (CHECK_INT(recording_load(path, &r, err, sizeof(err)), 0) && CHECK_UINT(r->sessions[0]->n_pins, 1)) {
        CHECK_INT(r->sessions[0]->pins[0].start_ns, MONO0 + 100 * MS); /* as the agent wrote it */
        CHECK_INT(r->sessions[0]->pins[0].timed_by_kernel, 0);
        CHECK_INT(report_passes(r), 0);
        CHECK_INT(r->sessions[0]->pins[0].start_ns, MONO0 + 95 * MS);
        CHECK_INT(r->sessions[0]->pins[0].timed_by_kernel, 1);
    }
    recording_free(r);
    r = NULL;
    if (CHECK_INT(report_open(path, &r, err, sizeof(err)), 0) && CHECK_UINT(r->sessions[0]->n_pins, 1)) {
        CHECK_INT(r->sessions[0]->pins[0].start_ns, MONO0 + 95 * MS);
        CHECK_INT(r->sessions[0]->pins[0].timed_by_kernel, 1);
    }
    recording_free(r);
    unlink(path);
    free(b.data);
}

/* Occupancy is kept only for the timelines (report_plan.skip_occupancy for the other formats): none
 * is kept, yet the samples' times still make the session's span, so a pin still in progress lasts
 * as long, and the text report is the same. */
static void test_skip_occupancy(void)
{
    struct synth b = {0};
    base_recording(&b, VTPIN__V1__OCCUPANCY_SOURCE__OCCUPANCY_SAMPLED);
    synth_pin_start(&b, 1, VTPIN__V1__PIN_REASON__NATIVE_BLOCK, MONO0 + 6 * MS, 42, 0, 7002, 12, 3, 0, "read");
    int32_t tids[] = {7001, 7002};
    int64_t busy[] = {41, 0};
    synth_sample(&b, MONO0, tids, busy, 2);
    synth_sample(&b, MONO0 + 20 * MS, tids, busy, 2); /* the last timestamp */
    FILE *f = tmpfile();
    if (!CHECK(f != NULL) || !CHECK(fwrite(b.data, 1, b.len, f) == b.len) || !CHECK_INT(fflush(f), 0))
        return;
    char path[64], err[256];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fileno(f));
    struct recording *with = NULL, *without = NULL;
    struct report_plan all = {.keep = RECORDING_KEEP_ALL}, none = {.keep = RECORDING_KEEP_ALL, .skip_occupancy = 1};
    if (CHECK_INT(report_open_plan(path, &all, &with, err, sizeof(err)), 0) &&
        CHECK_INT(report_open_plan(path, &none, &without, err, sizeof(err)), 0)) {
        const struct recording_session *a = with->sessions[0], *n = without->sessions[0];
        CHECK_UINT(a->n_occupancy, 4);
        CHECK_UINT(n->n_occupancy, 0);
        CHECK_INT(n->first_ns, a->first_ns);
        CHECK_INT(n->last_ns, MONO0 + 20 * MS);
        if (CHECK_UINT(n->n_pins, 1))
            CHECK_INT(recording_pin_duration(n, &n->pins[0]), 14 * MS);
        char *text_with = render(report_text, with, NULL), *text_without = render(report_text, without, NULL);
        CHECK_STR(text_without, text_with);
        free(text_with);
        free(text_without);
    }
    recording_free(with);
    recording_free(without);
    fclose(f);
    free(b.data);
}

int main(void)
{
    CHECK_RUN(test_empty);
    CHECK_RUN(test_flame_tree);
    CHECK_RUN(test_collapsed_rounding);
    CHECK_RUN(test_perfetto);
    CHECK_RUN(test_skip_occupancy);
    CHECK_RUN(test_html);
    CHECK_RUN(test_html_busy_strip);
    CHECK_RUN(test_html_hogs);
    CHECK_RUN(test_html_merged);
    CHECK_RUN(test_hostile_names);
    CHECK_RUN(test_open_runs_passes);
    CHECK_MAIN_RETURN();
}
