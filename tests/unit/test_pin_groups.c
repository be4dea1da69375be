/* Unit tests for cli/report/pin_groups.c and pin_stream.c, a long session's ended pins summed up
 * as they are read: the text, collapsed, pprof and JSON reports (JSON lists the pins of a session
 * summed up by reading it again) and vtpin run's verdict, baseline and JUnit cases are the same
 * bytes summed up or not, at every batch size, on the corpus and on a recording made to hold what
 * could tell them apart: FFM and JNA downcalls, blockers, where the kernel said a pin slept, names
 * and stacks never defined, duplicates, ends without a start, pins that end long after later ones,
 * pins still in progress, several sessions. And the model holds only the groups and the pins in
 * progress.
 *
 * argv[1]: the corpus directory (tests/corpus). */
#include "pin_groups.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "baseline.h"
#include "check.h"
#include "gates.h"
#include "junit.h"
#include "report.h"
#include "run_kernel.h"
#include "synth.h"

#define MS 1000000LL

static const char *tmp_dir(void)
{
    const char *d = getenv("TMPDIR");
    return d && *d ? d : "/tmp";
}

/* A pin start with what few pins have: a downcall (1 FFM, 2 JNA), a blocker, the JDK's words (1, 2: never
 * defined). */
static void pin_start(struct synth *b, uint64_t id, int reason, int64_t start, uint32_t vthread_sid, int carrier,
                      uint32_t stack, int culprit, const char *blocked_in, int downcall, int blocked, int jdk)
{
    Vtpin__V1__PinStart p = VTPIN__V1__PIN_START__INIT;
    Vtpin__V1__Downcall dc = VTPIN__V1__DOWNCALL__INIT;
    Vtpin__V1__Blocker bl = VTPIN__V1__BLOCKER__INIT;
    p.pin_id = id;
    p.start_ns = start;
    p.reason = (Vtpin__V1__PinReason)reason;
    p.has_vthread_id = 1;
    p.vthread_id = 100 + (int64_t)id;
    p.has_vthread_name = vthread_sid != 0;
    p.vthread_name = vthread_sid;
    p.has_carrier_tid = carrier != 0;
    p.carrier_tid = 7000 + carrier;
    p.has_carrier_name = carrier != 0;
    p.carrier_name = 100 + (uint32_t)carrier;
    p.has_stack = stack != 0;
    p.stack = stack;
    p.has_culprit_frame = culprit >= 0;
    p.culprit_frame = culprit >= 0 ? (uint32_t)culprit : 0;
    p.blocked_in = (char *)blocked_in;
    p.has_jdk_reason = jdk != 0;
    p.jdk_reason = jdk == 1 ? 6 : 5000;
    if (downcall) {
        dc.symbol = downcall == 1 ? (id % 3 ? "qsort" : "strlen") : "usleep";
        dc.library = "/lib/x86_64-linux-gnu/libc.so.6";
        dc.has_address = 1;
        dc.address = 0x7f0000001000ULL + (id % 3 ? 0 : 0x40);
        dc.has_api = downcall == 2;
        dc.api = VTPIN__V1__NATIVE_API__NATIVE_API_JNA;
        p.downcall = &dc;
    }
    if (blocked) {
        bl.has_what = 1;
        bl.what = VTPIN__V1__BLOCKER_KIND__BLOCKER_MONITOR;
        bl.has_thread_id = 1;
        bl.thread_id = 40 + (int64_t)(id % 5);
        bl.has_thread_name = 1;
        bl.thread_name = 2000 + (uint32_t)(id % 7);
        p.blocker = &bl;
    }
    SYNTH_EVENT(b, pin_start, VTPIN__V1__EVENT__BODY_PIN_START, &p);
}

/* One session of n pins over 3 carriers, with everything the groups' key must tell apart; disorder: now
 * and then a pin written after pins that began later (Perfetto then reads the session again whole). */
static void mixed_session(struct synth *b, int64_t pid, long n, int disorder)
{
    int64_t mono0 = 5000 * MS;
    synth_hello(b, pid, VTPIN__V1__OCCUPANCY_SOURCE__OCCUPANCY_SAMPLED, 1700000000000000000LL, mono0);
    static const char *names[] = {"com.example.A", "com.example.B", "java.lang.Object", "run", "call",
                                  "wait",          "A.java"};
    for (uint32_t i = 0; i < 7; i++)
        synth_string(b, 1 + i, names[i]);
    for (uint32_t c = 1; c <= 3; c++) {
        char text[64];
        snprintf(text, sizeof(text), "ForkJoinPool-1-worker-%u", c);
        synth_string(b, 100 + c, text);
        if (c < 3)
            synth_carrier(b, 7000 + (int32_t)c, 100 + c, mono0); /* the third named by its pins alone */
    }
    for (uint32_t i = 0; i < 7; i++) {
        char text[64];
        snprintf(text, sizeof(text), "owner-%u", i);
        synth_string(b, 2000 + i, text);
    }
    for (uint32_t i = 0; i < 40; i++) { /* vthread names 3000..3039; 3040.. are never defined */
        char text[64];
        snprintf(text, sizeof(text), "vt-%u", i);
        synth_string(b, 3000 + i, text);
    }
    synth_method(b, 1, 1, 4, 7, 0);
    synth_method(b, 2, 1, 5, 7, 1); /* native */
    synth_method(b, 3, 2, 4, 7, 0);
    synth_method(b, 4, 3, 6, 0, 0); /* the JDK's own */
    for (uint32_t s = 1; s <= 12; s++) {
        uint32_t frames[4] = {s % 3 == 0 ? 2 : s % 4 == 0 ? 4 : 1, 1 + s % 3, 3, 1};
        synth_stack(b, s, frames, 4, s % 5 == 0 ? -1 : (int)(s % 4), s == 12);
    }
    int64_t t = mono0;
    uint64_t next = 1;
    for (long i = 0; i < n; i++, next++) {
        static const int reasons[] = {VTPIN__V1__PIN_REASON__MONITOR, VTPIN__V1__PIN_REASON__NATIVE,
                                      VTPIN__V1__PIN_REASON__NATIVE_BLOCK, VTPIN__V1__PIN_REASON__OBJECT_WAIT,
                                      VTPIN__V1__PIN_REASON__MONITOR_ENTER};
        int reason = reasons[i % 5];
        uint32_t stack = i % 17 == 0 ? 99 : i % 23 == 0 ? 0 : 1 + (uint32_t)(i % 12); /* 99: never defined */
        int culprit = i % 29 == 0 ? 9 : (int)(i % 4);                                 /* 9: outside the stack */
        const char *blocked_in = reason == VTPIN__V1__PIN_REASON__NATIVE_BLOCK ? (i % 2 ? "read" : "futex") : NULL;
        int downcall = reason == VTPIN__V1__PIN_REASON__NATIVE ? 1 + (int)(i % 3 == 0) : 0;
        int blocked = reason == VTPIN__V1__PIN_REASON__MONITOR_ENTER && i % 3 == 0;
        uint32_t vt = i % 11 == 0 ? 0 : 3000 + (uint32_t)(i % 45);
        int carrier = i % 31 == 0 ? 0 : 1 + (int)(i / 7 % 4); /* 4: its name never defined */
        int jdk = (int)(i / 5 % 3);
        t += 1000 + (int64_t)(i % 7) * 300;
        int64_t start = disorder && i % 53 == 0 ? t - 30000 : t;
        pin_start(b, next, reason, start, vt, carrier, stack, culprit, blocked_in, downcall, blocked, jdk);
        if (i % 97 == 0)
            pin_start(b, next, reason, t + 5, vt, carrier, stack, culprit, NULL, 0, 0, 0); /* a duplicate start */
        int64_t dur = i % 19 == 0 ? 20000 : 500 + (int64_t)(i % 13) * 700;
        if (i % 41 == 0)
            continue; /* ends later, after pins that began since (below), or never */
        synth_pin_end(b, next, start + dur, dur);
        if (i % 89 == 0)
            synth_pin_end(b, next, start + dur, dur); /* a duplicate end */
        if (i % 41 == 1 && i > 300 && (i / 41) % 3)
            synth_pin_end(b, next - 1 - 41 * 4, t + 2 * dur, 40 * MS); /* a long one, started 165 pins before */
    }
    /* the first pin of its kind ends after later ones of that kind were summed up: the group's
     * example becomes it (the site shows the earliest pin of its stack) */
    synth_stack(b, 13, (const uint32_t[]){3, 1}, 2, 0, 0);
    uint64_t first = next++;
    int64_t first_start = t += 1000;
    pin_start(b, first, VTPIN__V1__PIN_REASON__MONITOR, first_start, 3001, 2, 13, 0, NULL, 0, 0, 0);
    for (int k = 0; k < 100; k++, next++) {
        pin_start(b, next, VTPIN__V1__PIN_REASON__MONITOR, t += 1000, 3002, 2, 13, 0, NULL, 0, 0, 0);
        synth_pin_end(b, next, t + 500, 500);
    }
    synth_pin_end(b, first, t + 1000, t + 1000 - first_start);
    for (int k = 0; k < 3; k++, next++) { /* and later pins start: it is summed up */
        pin_start(b, next, VTPIN__V1__PIN_REASON__NATIVE, t += 2000, 3003, 1, 2, 0, NULL, 0, 0, 0);
        synth_pin_end(b, next, t + 500, 500);
    }
    synth_pin_end(b, 1u << 30, t, 1); /* an end without a start */
    synth_goodbye(b, t + 10 * MS, (uint64_t)n);
}

/* What each summary format writes of r, in memory (its bytes, malloc'ed); every_pin: also the formats
 * that show single pins (r was loaded with keep_input). */
static char *summaries(const struct recording *r, int every_pin, size_t *len)
{
    char *text = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&text, &n);
    if (!out)
        return NULL;
    int rc = 0;
    for (size_t i = 0; i < r->n_sessions && !rc; i++) {
        struct report_options o = {.session = i, .top = 0, .full_stacks = 1};
        fprintf(out, "== session %zu\n", i + 1);
        if (!(rc = report_text(out, r, &o)) && !(rc = report_collapsed(out, r, &o)) &&
            !(rc = report_pprof(out, r, &o)) && every_pin &&
            !(rc = report_json(out, r, &o)) /* every pin: summed up, read again (pin_stream.h) */ &&
            !(rc = report_html(out, r, &o)))  /* its lanes so too */
            rc = report_perfetto(out, r, &o); /* and its events, a file a lane, or read again whole */
    }
    struct report_options every = {.all_sessions = 1};
    if (!rc)
        rc = report_pprof(out, r, &every);
    fclose(out);
    if (rc) {
        free(text);
        return NULL;
    }
    *len = n;
    return text;
}

/* The summaries of path, summed up past `fold` pins (0: never); NULL when it cannot be read. every_pin:
 * the formats that show single pins too, which read the pins again; without them a session with the
 * kernel view is summed up too (kernel_fold.h). */
static char *summaries_of(const char *path, size_t fold, int every_pin, size_t *len, uint64_t *folded,
                          size_t *most_pins)
{
    struct report_plan plan = {.keep = RECORDING_KEEP_ALL, .fold_pins = fold, .keep_input = every_pin};
    struct recording *r = NULL;
    char err[512];
    if (report_open_plan(path, &plan, &r, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s\n", err);
        return NULL;
    }
    *folded = 0;
    *most_pins = 0;
    for (size_t i = 0; i < r->n_sessions; i++) {
        *folded += r->sessions[i]->pins_folded;
        if (r->sessions[i]->n_pins > *most_pins)
            *most_pins = r->sessions[i]->n_pins;
    }
    char *text = summaries(r, every_pin, len);
    recording_free(r);
    return text;
}

/* path's summaries the same summed up in batches of 1, 2, 5 and 64 pins as kept whole. Returns
 * the pins summed up at a batch of 1. */
static uint64_t check_same_as(const char *path, int every_pin)
{
    size_t len0 = 0, most;
    uint64_t folded, at_one = 0;
    char *whole = summaries_of(path, 0, every_pin, &len0, &folded, &most);
    if (!CHECK(whole != NULL))
        return 0;
    CHECK_UINT(folded, 0);
    static const size_t batches[] = {1, 2, 5, 64};
    for (size_t k = 0; k < sizeof(batches) / sizeof(batches[0]); k++) {
        size_t len = 0;
        char *summed = summaries_of(path, batches[k], every_pin, &len, &folded, &most);
        if (!CHECK(summed != NULL))
            continue;
        if (!CHECK(len == len0 && memcmp(summed, whole, len) == 0))
            fprintf(stderr, "  %s, summed past %zu pins: %zu bytes, whole %zu\n", path, batches[k], len, len0);
        if (batches[k] == 1)
            at_one = folded;
        free(summed);
    }
    free(whole);
    return at_one;
}

/* Every format, the summaries alone too (a session with the kernel view summed up then). */
static uint64_t check_same(const char *path)
{
    check_same_as(path, 0);
    return check_same_as(path, 1);
}

/* What vtpin run makes of path, summed up past fold pins: the gates' counts and verdict (a pattern
 * allowed, the JDK's own set aside, --only, then against a baseline of its own sites with no
 * tolerance), the baseline file and the JUnit report, as text. NULL when it cannot be read. */
static char *run_judged_in(const char *path, size_t fold, char *kernel_dir, size_t *len)
{
    /* as run_recordings_load reads it: with the run's collector, its kernel view as each Hello is read;
     * kept whole, as a run read it before, joined after the load */
    struct report_plan plan = {.keep = RECORDING_KEEP_ALL,
                               .skip_occupancy = 1,
                               .fold_pins = fold,
                               .kernel_at_hello = kernel_dir && fold ? run_kernel_at_hello : NULL,
                               .kernel_arg = kernel_dir};
    struct recording *r = NULL;
    char err[512], *text = NULL;
    size_t n = 0;
    FILE *out = NULL;
    if (report_open_plan(path, &plan, &r, err, sizeof(err)) != 0 || !(out = open_memstream(&text, &n))) {
        recording_free(r);
        return NULL;
    }
    if (kernel_dir) { /* then the run's join, and what its report shows */
        fprintf(out, "joined %zu\n", run_kernel_join(kernel_dir, &r, 1));
        size_t shown = 0;
        char *summed = summaries(r, 0, &shown);
        if (summed)
            fwrite(summed, 1, shown, out);
        free(summed);
    }
    const char *allow[] = {"com.example.B.call"}, *only[] = {"com.example.*"};
    struct gate_config c = {.fail_pins = 1,
                            .fail_pinned_ns = -1,
                            .fail_on_native_block = 1,
                            .allow = allow,
                            .n_allow = 1,
                            .baseline_tolerance_pct = -1};
    struct baseline sites = {0};
    for (int pass = 0; pass < 3; pass++) {
        if (pass == 1) { /* --only */
            c.only = only;
            c.n_only = 1;
        }
        if (pass == 2) { /* --baseline: the run's own sites, no tolerance, and the run's */
            c.baseline = &sites;
            c.run_sites = &sites;
            c.baseline_tolerance_pct = 0;
        }
        struct gate_result g;
        gates_begin(&g);
        CHECK_INT(gates_count(&c, r, &g), 0);
        gates_judge(&c, &g);
        fprintf(out,
                "pins %" PRIu64 " allowed %" PRIu64 " jdk %" PRIu64 " not_only %" PRIu64 " baselined %" PRIu64
                " native_blocks %" PRIu64 " pinned %" PRId64 " failed %d\n%s\n",
                g.pins, g.allowed, g.jdk_internal, g.not_only, g.baselined, g.native_blocks, g.pinned_ns, g.failed,
                g.why);
        struct junit *j = NULL;
        if (CHECK_INT(junit_new(&j), 0) && CHECK_INT(junit_add(j, &c, &g, r), 0))
            CHECK_INT(junit_write(out, j, &g), 0);
        junit_free(j);
        if (pass == 0) {
            CHECK_INT(gates_run_sites(&c, &r, 1, &sites), 0);
            baseline_write(out, &sites);
        }
    }
    baseline_free(&sites);
    fclose(out);
    recording_free(r);
    *len = n;
    return text;
}

static char *run_judged(const char *path, size_t fold, size_t *len)
{
    return run_judged_in(path, fold, NULL, len);
}

/* vtpin run's verdict of path summed up past each pin: the same bytes as kept whole. */
static void check_run_same(const char *path)
{
    size_t len0 = 0, len = 0;
    char *run0 = run_judged(path, 0, &len0), *run1 = run_judged(path, 1, &len);
    CHECK(run0 && run1 && len == len0 && memcmp(run0, run1, len) == 0);
    free(run0);
    free(run1);
}

/* path's n sessions kept whole (*whole) and summed up past 64 pins (*summed): 1 when both loaded, else 0
 * (each NULL or to free). */
static int load_whole_and_summed(const char *path, size_t n, struct recording **whole, struct recording **summed)
{
    struct report_plan plan = {.keep = RECORDING_KEEP_ALL, .fold_pins = 64}, kept = {.keep = RECORDING_KEEP_ALL};
    char err[512];
    *whole = *summed = NULL;
    return CHECK_INT(report_open_plan(path, &kept, whole, err, sizeof(err)), 0) &&
           CHECK_INT(report_open_plan(path, &plan, summed, err, sizeof(err)), 0) &&
           CHECK_UINT((*summed)->n_sessions, n);
}

static void test_mixed(void)
{
    struct synth b = {0};
    mixed_session(&b, 4242, 24000, 1); /* over HTML_LANE_DETAIL: the lanes merge */
    mixed_session(&b, 4343, 3000, 0);  /* a second session, concatenated, in start order */
    char path[512];
    snprintf(path, sizeof(path), "%s/vtpin-pin-groups-%d.vtp", tmp_dir(), (int)getpid());
    if (!CHECK_INT(synth_write(&b, path), 0))
        return;
    uint64_t folded = check_same(path);
    size_t len0 = 0, len = 0;
    char *whole = run_judged(path, 0, &len0);
    static const size_t batches[] = {1, 3, 64};
    for (size_t k = 0; whole && k < sizeof(batches) / sizeof(batches[0]); k++) {
        char *summed = run_judged(path, batches[k], &len);
        if (!CHECK(summed && len == len0 && memcmp(summed, whole, len) == 0))
            fprintf(stderr, "  vtpin run's verdict, summed up past %zu pins, differs:\n%.*s\n---\n%.*s\n", batches[k],
                    (int)(len < 1500 ? len : 1500), summed ? summed : "", (int)(len0 < 1500 ? len0 : 1500), whole);
        free(summed);
    }
    CHECK(whole && strstr(whole, "<testcase") && strstr(whole, "\"pins\""));
    free(whole);
    printf("mixed: %" PRIu64 " of 27208 pins summed up at a batch of 1\n", folded);
    CHECK(folded > 20000);
    /* what stays: blockers, the pins in progress; the groups a few hundred */
    struct report_plan plan = {.keep = RECORDING_KEEP_ALL, .fold_pins = 64};
    struct recording *r = NULL;
    char err[512];
    if (CHECK_INT(report_open_plan(path, &plan, &r, err, sizeof(err)), 0)) {
        const struct recording_session *s = r->sessions[0];
        size_t blockers = 0, ongoing = 0;
        for (size_t i = 0; i < s->n_pins; i++) {
            blockers += recording_pin_blocker(&s->pins[i]) != NULL;
            ongoing += !s->pins[i].ended;
        }
        printf("mixed: %zu pins kept (%zu with a blocker, %zu in progress), %zu groups\n", s->n_pins, blockers, ongoing,
               s->n_pin_groups);
        CHECK(blockers > 300);
        /* the rest ended since the last sum, which comes when the pins kept have doubled */
        CHECK(s->n_pins <= 2 * (blockers + ongoing) + 64);
        CHECK(s->n_pin_groups > 100 && s->n_pin_groups < 2000);
        CHECK(!s->kernel_after_fold);
        recording_free(r);
    }
    remove(path);
    free(b.data);
}

/* The kernel view's first interval comes after pins were summed up (a collector's recording of a
 * long session whose carriers never slept before): the report reads the intervals first
 * (kernel_fold.h), for every format, and sums every pin that ended up; a load that does not
 * (recording_plan.fold_kernel) says so, and sums up nothing more. */
static void test_kernel_after(void)
{
    struct synth b = {0};
    synth_hello(&b, 77, VTPIN__V1__OCCUPANCY_SOURCE__OCCUPANCY_SAMPLED, 1700000000000000000LL, 5000 * MS);
    int64_t t = 5000 * MS;
    for (uint64_t id = 1; id <= 40; id++) {
        if (id == 20) {
            char *stack[] = {"schedule+0x23", "do_nanosleep+0x6c"};
            synth_kinterval(&b, 7001, t, t + 800, 230, "clock_nanosleep", stack, 2, 0);
        }
        pin_start(&b, id, VTPIN__V1__PIN_REASON__MONITOR, t += 1000, 0, 1, 0, -1, NULL, 0, 0, 0);
        synth_pin_end(&b, id, t + 900, 900);
    }
    char path[512];
    snprintf(path, sizeof(path), "%s/vtpin-pin-groups-kernel-%d.vtp", tmp_dir(), (int)getpid());
    if (!CHECK_INT(synth_write(&b, path), 0))
        return;
    for (int fold = 0; fold <= 3; fold++) {
        struct report_plan plan = {.keep = RECORDING_KEEP_ALL, .fold_pins = fold != 0, .keep_input = fold == 3};
        struct recording_plan alone = {.keep = RECORDING_KEEP_ALL, .fold_pins = 1, .fold = pin_groups_fold};
        struct recording *r = NULL;
        char err[512];
        int rc = fold == 1 ? recording_load_plan(path, &alone, &r, err, sizeof(err))
                           : report_open_plan(path, &plan, &r, err, sizeof(err));
        if (!CHECK_INT(rc, 0))
            continue;
        const struct recording_session *s = r->sessions[0];
        CHECK_INT(s->kernel_after_fold, fold == 1);
        /* pins 1-18 ended before the 20th began; read first, the interval lets every pin that ended go */
        CHECK_UINT(s->pins_folded, fold == 1 ? 18 : fold >= 2 ? 39 : 0);
        CHECK_UINT(s->n_pins, fold == 1 ? 22 : fold >= 2 ? 1 : 40);
        CHECK_UINT(s->n_kintervals, 1);
        recording_free(r);
    }
    remove(path);
    free(b.data);
}

static void test_corpus(const char *dir)
{
    DIR *d = opendir(dir);
    if (!CHECK(d != NULL))
        return;
    struct dirent *e;
    size_t files = 0;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".vtp") != 0)
            continue;
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        uint64_t folded = check_same(path);
        printf("corpus %s: %" PRIu64 " pins summed up at a batch of 1\n", e->d_name, folded);
        if (strcmp(e->d_name, "alternating_long.vtp") == 0) /* a real session after attach, in windows */
            CHECK(folded > 200);
        files++;
    }
    closedir(d);
    CHECK(files >= 10);
}

static void notice(struct synth *b, int64_t t, const char *code)
{
    Vtpin__V1__Notice n = VTPIN__V1__NOTICE__INIT;
    n.time_ns = t;
    n.severity = VTPIN__V1__SEVERITY__INFO;
    n.code = (char *)code;
    n.text = "rotated";
    SYNTH_EVENT(b, notice, VTPIN__V1__EVENT__BODY_NOTICE, &n);
}

/* Pin id of a rotated recording's test session, as every file writes it. */
static void rotated_pin(struct synth *b, uint64_t id, int64_t start)
{
    static const int reasons[] = {VTPIN__V1__PIN_REASON__MONITOR, VTPIN__V1__PIN_REASON__NATIVE,
                                  VTPIN__V1__PIN_REASON__OBJECT_WAIT, VTPIN__V1__PIN_REASON__MONITOR_ENTER};
    pin_start(b, id, reasons[id % 4], start, 3000 + (uint32_t)(id % 10), 1 + (int)(id % 3), 1 + (uint32_t)(id % 4),
              (int)(id % 2), NULL, 0, 0, 0);
}

/* A session rotated into three files concatenated in order, as a collector's --record-max writes
 * them: each file the Hello, the definitions, what it continues and the starts of the two pins in
 * progress at the rotation, which end in it. */
static void rotated_session(struct synth *b, long per_file)
{
    int64_t mono0 = 5000 * MS, t = mono0;
    uint64_t next = 1, open[2] = {0, 0};
    int64_t open_start[2] = {0, 0};
    for (int file = 0; file < 3; file++) {
        synth_hello(b, 4545, VTPIN__V1__OCCUPANCY_SOURCE__OCCUPANCY_SAMPLED, 1700000000000000000LL, mono0);
        static const char *names[] = {"com.example.A", "com.example.B", "run", "call", "A.java"};
        for (uint32_t i = 0; i < 5; i++)
            synth_string(b, 1 + i, names[i]);
        for (uint32_t i = 0; i < 10; i++) {
            char text[32];
            snprintf(text, sizeof(text), "vt-%u", i);
            synth_string(b, 3000 + i, text);
        }
        for (uint32_t c = 1; c <= 3; c++) {
            char text[64];
            snprintf(text, sizeof(text), "ForkJoinPool-1-worker-%u", c);
            synth_string(b, 100 + c, text);
        }
        synth_method(b, 1, 1, 3, 5, 0);
        synth_method(b, 2, 2, 4, 5, 1);
        for (uint32_t s = 1; s <= 4; s++)
            synth_stack(b, s, (const uint32_t[]){1 + s % 2, 2, 1}, 3, (int)(s % 3), 0);
        if (file) {
            notice(b, t, "collector.recording_rotated");
            for (int k = 0; k < 2; k++)
                rotated_pin(b, open[k], open_start[k]); /* said again */
        }
        for (long i = 0; i < per_file; i++, next++) {
            rotated_pin(b, next, t += 1000 + (int64_t)(i % 5) * 300);
            int64_t dur = 400 + (int64_t)(i % 7) * 250;
            if (i == 10 && file) /* the pins in progress at the rotation end here */
                for (int k = 0; k < 2; k++)
                    synth_pin_end(b, open[k], t, t - open_start[k]);
            if (file < 2 && i >= per_file - 2) { /* in progress at the next rotation */
                open[i - (per_file - 2)] = next;
                open_start[i - (per_file - 2)] = t;
                continue;
            }
            synth_pin_end(b, next, t + dur, dur);
        }
        if (file < 2)
            notice(b, t + 10, "collector.recording_rotated_out");
        else
            synth_goodbye(b, t + 10 * MS, next - 1);
    }
}

/* A rotated recording read as one session (issue 37): summed up or not, every format the same. */
static void test_rotated(void)
{
    struct synth b = {0};
    rotated_session(&b, 3000);
    char path[512];
    snprintf(path, sizeof(path), "%s/vtpin-pin-groups-rotated-%d.vtp", tmp_dir(), (int)getpid());
    if (!CHECK_INT(synth_write(&b, path), 0))
        return;
    struct recording *r = NULL;
    char err[512];
    struct report_plan plan = {.keep = RECORDING_KEEP_ALL};
    if (CHECK_INT(report_open_plan(path, &plan, &r, err, sizeof(err)), 0) && CHECK_UINT(r->n_sessions, 1)) {
        const struct recording_session *s = r->sessions[0];
        CHECK_UINT(s->parts, 3);
        CHECK_UINT(s->n_pins, 9000);
        CHECK_UINT(s->duplicates + s->unmatched_ends + s->unknown_refs, 0);
        size_t ongoing = 0;
        for (size_t i = 0; i < s->n_pins; i++)
            ongoing += !s->pins[i].ended;
        CHECK_UINT(ongoing, 0);
    }
    recording_free(r);
    uint64_t folded = check_same(path);
    printf("rotated: %" PRIu64 " of 9000 pins summed up at a batch of 1\n", folded);
    CHECK(folded > 8000);
    remove(path);
    free(b.data);
}

/* A carrier's sleep as a collector's kernel view writes it, with what was mounted and how it waited. */
static void ksleep(struct synth *b, int32_t tid, int64_t start, int64_t end, int64_t vthread, int java_wait)
{
    static char *stacks[2][4] = {{"__schedule+0x628", "schedule+0x23", "pipe_read+0x3c1", "ksys_read+0x6d"},
                                 {"__schedule+0x628", "schedule+0x23", "futex_wait+0x9a", "do_futex+0xfd"}};
    int native = java_wait == VTPIN__V1__JAVA_WAIT__JAVA_IN_NATIVE;
    synth_ksleep(b, tid, start, end, native ? 0 : 202, native ? "read" : "futex", stacks[!native], 4, vthread,
                 java_wait, (end - start) / 9);
}

/* A session with a collector's kernel view: n pins over 3 carriers, blocks the kernel times (their
 * sleeps begin before the agent's first sample and end after its last), monitor pins, blockers, pins
 * that end late or never, sleeps with a virtual thread mounted outside every pin (held, unexplained),
 * the collector's kernel times at the end. The collector writes each interval a few pins after its
 * own (kjoin holds them back), so intervals come after pins that were summed up. damaged: a frame that
 * looks like a PinStart but cannot be read, in the middle (the rest of the session is skipped). */
static void kernel_session(struct synth *b, int64_t pid, long n, int damaged, struct synth *view)
{
    int64_t mono0 = 5000 * MS;
    synth_hello(b, pid, VTPIN__V1__OCCUPANCY_SOURCE__OCCUPANCY_SAMPLED, 1700000000000000000LL, mono0);
    if (view != b) /* the run's collector: its recording of the same JVM */
        synth_hello(view, pid, VTPIN__V1__OCCUPANCY_SOURCE__OCCUPANCY_SAMPLED, 1700000000000000000LL, mono0);
    static const char *names[] = {"com.example.A", "com.example.B", "run", "call", "A.java", "owner"};
    for (uint32_t i = 0; i < 6; i++)
        synth_string(b, 1 + i, names[i]);
    for (uint32_t c = 1; c <= 3; c++) {
        char text[64];
        snprintf(text, sizeof(text), "ForkJoinPool-1-worker-%u", c);
        synth_string(b, 100 + c, text);
        synth_carrier(b, 7000 + (int32_t)c, 100 + c, mono0);
    }
    for (uint32_t i = 0; i < 7; i++)
        synth_string(b, 2000 + i, "lock-owner");
    synth_string(b, 3000, "vt");
    synth_method(b, 1, 1, 3, 5, 0);
    synth_method(b, 2, 2, 4, 5, 1); /* native */
    for (uint32_t s = 1; s <= 5; s++)
        synth_stack(b, s, (const uint32_t[]){1 + s % 2, 2, 1}, 3, (int)(s % 3), 0);
    struct pending {
        int32_t tid;
        int64_t start, end, vthread;
        int wait;
    } held[8];
    size_t n_held = 0;
    int64_t cursor[3] = {mono0, mono0, mono0}, late_start = 0;
    uint64_t late = 0;
    /* a sleep before the first pin, none of them its */
    ksleep(view, 7001, mono0 + 100000, mono0 + 200000, 9999, VTPIN__V1__JAVA_WAIT__JAVA_BLOCKED);
    for (long i = 0; i < n; i++) {
        uint64_t id = (uint64_t)i + 1;
        int c = (int)(i % 3);
        int32_t tid = 7001 + c;
        static const int reasons[] = {VTPIN__V1__PIN_REASON__NATIVE_BLOCK, VTPIN__V1__PIN_REASON__MONITOR,
                                      VTPIN__V1__PIN_REASON__VM_BLOCK, VTPIN__V1__PIN_REASON__NATIVE_BLOCK,
                                      VTPIN__V1__PIN_REASON__MONITOR_ENTER};
        int reason = reasons[i % 5];
        int blocked = reason == VTPIN__V1__PIN_REASON__MONITOR_ENTER && i % 2;
        int64_t sample = cursor[c] += 2 * MS + (int64_t)(i % 7) * 100000;
        int64_t dur = 3 * MS + (int64_t)(i % 11) * 400000;
        int block = reason == VTPIN__V1__PIN_REASON__NATIVE_BLOCK || reason == VTPIN__V1__PIN_REASON__VM_BLOCK;
        /* a block's sleep began up to a sample period before the agent saw it, and ends after its last sample */
        int64_t sleep_lo = block ? sample - (int64_t)(i % 9) * 200000 : sample + 100000;
        int64_t sleep_hi = sample + dur - (block ? 300000 : 200000);
        pin_start(b, id, reason, sample, 3000, c + 1, 1 + (uint32_t)(i % 5), (int)(i % 2),
                  reason == VTPIN__V1__PIN_REASON__NATIVE_BLOCK ? "read" : NULL, 0, blocked, 0);
        if (damaged && i == n / 2) {
            static const uint8_t bad[] = {3, 0, 0, 0, 0x2a, 0x7f, 0}; /* field 5 (a PinStart), cut */
            synth_put(b, bad, sizeof(bad));
        }
        if (i % 41 == 7 && !late) { /* ends after the next 100 pins began */
            late = id;
            late_start = sample;
        } else if (i < n - 2) {
            Vtpin__V1__PinEnd e = VTPIN__V1__PIN_END__INIT;
            e.pin_id = id;
            e.end_ns = sample + dur;
            e.duration_ns = dur;
            e.has_last_asleep_ns = block;
            e.last_asleep_ns = sample + dur - 2 * MS;
            SYNTH_EVENT(b, pin_end, VTPIN__V1__EVENT__BODY_PIN_END, &e);
        } /* the last two never end */
        if (late && id == late + 100) {
            synth_pin_end(b, late, sample, sample - late_start);
            late = 0;
        }
        int wait = reason == VTPIN__V1__PIN_REASON__NATIVE_BLOCK ? VTPIN__V1__JAVA_WAIT__JAVA_IN_NATIVE
                                                                 : VTPIN__V1__JAVA_WAIT__JAVA_BLOCKED;
        held[n_held++] = (struct pending){tid, sleep_lo, sleep_hi, 100 + (int64_t)id, wait};
        if (i % 5 == 2) /* and a second sleep in it */
            held[n_held++] = (struct pending){tid, sleep_hi + 50000, sleep_hi + 150000, 100 + (int64_t)id, wait};
        cursor[c] = sample + dur;
        if (i % 37 == 0) { /* asleep with a virtual thread mounted, no pin: held, unexplained */
            held[n_held++] =
                (struct pending){tid, cursor[c] + 100000, cursor[c] + 5 * MS, 9999, VTPIN__V1__JAVA_WAIT__JAVA_BLOCKED};
            cursor[c] += 6 * MS;
        }
        if (n_held >= 5) { /* written late: the oldest after the pins that followed it */
            for (size_t k = 0; k < n_held - 2; k++)
                ksleep(view, held[k].tid, held[k].start, held[k].end, held[k].vthread, held[k].wait);
            memmove(held, held + n_held - 2, 2 * sizeof(*held));
            n_held = 2;
        }
    }
    for (size_t k = 0; k < n_held; k++)
        ksleep(view, held[k].tid, held[k].start, held[k].end, held[k].vthread, held[k].wait);
    int64_t end = cursor[0] > cursor[1] ? cursor[0] : cursor[1];
    end = cursor[2] > end ? cursor[2] : end;
    Vtpin__V1__KernelTimes kt = VTPIN__V1__KERNEL_TIMES__INIT;
    int32_t tids[3] = {7001, 7002, 7003};
    uint64_t on[3] = {5 * MS, 6 * MS, 7 * MS}, off[3] = {50 * MS, 60 * MS, 70 * MS}, rq[3] = {MS, MS, MS};
    kt.time_ns = end;
    kt.n_carrier_tids = kt.n_on_cpu_ns = kt.n_off_cpu_ns = kt.n_runqueue_ns = 3;
    kt.carrier_tids = tids;
    kt.on_cpu_ns = on;
    kt.off_cpu_ns = off;
    kt.runqueue_ns = rq;
    SYNTH_EVENT(view, kernel_times, VTPIN__V1__EVENT__BODY_KERNEL_TIMES, &kt);
    synth_goodbye(b, end + 10 * MS, (uint64_t)n);
}

/* Sessions with the kernel view, summed up as read (kernel_fold.h): every summary the same as kept
 * whole, every pin timed and joined as there; and what stays in memory is the intervals and the groups. */
static void test_kernel_folded(void)
{
    struct synth b = {0};
    kernel_session(&b, 5151, 6000, 0, &b);
    mixed_session(&b, 5252, 2000, 0); /* no kernel view: the sessions after it still find their intervals */
    kernel_session(&b, 5353, 3000, 1, &b);
    kernel_session(&b, 5454, 3000, 0, &b);
    char path[512];
    snprintf(path, sizeof(path), "%s/vtpin-pin-groups-kfold-%d.vtp", tmp_dir(), (int)getpid());
    if (!CHECK_INT(synth_write(&b, path), 0))
        return;
    uint64_t folded = check_same_as(path, 0), every = check_same_as(path, 1);
    printf("kernel: %" PRIu64 " of 14000 pins summed up at a batch of 1 (%" PRIu64 " for every format)\n", folded,
           every);
    CHECK(folded > 10000 && every == folded); /* all but blockers, pins in progress, the damaged session's rest */
    size_t len0 = 0;
    uint64_t n;
    size_t most;
    char *whole = summaries_of(path, 0, 0, &len0, &n, &most);
    /* what was compared holds what the kernel view adds: timed blocks, their sleeps, held time */
    CHECK(whole && strstr(whole, "kernel: sleeping in read") && strstr(whole, "kernel: sleeping in futex") &&
          strstr(whole, "% in pins") && strstr(whole, "kernel.held_unexplained"));
    free(whole);
    check_run_same(path);
    struct recording *r, *r0;
    if (load_whole_and_summed(path, 4, &r0, &r)) {
        const struct recording_session *s = r->sessions[0];
        size_t timed = 0;
        for (size_t i = 0; i < s->n_pin_groups; i++)
            timed += s->pin_groups[i].pin.timed_by_kernel;
        printf("kernel: %zu pins kept, %zu groups (%zu examples timed by the kernel), %zu intervals\n", s->n_pins,
               s->n_pin_groups, timed, s->n_kintervals);
        CHECK(s->n_pins < 1000 && s->n_pin_groups < 100 && timed > 0);
        CHECK_UINT(s->n_kintervals, 1 + 6000 + 1200 + 163);
        /* the damaged session holds the intervals before the damage, as kept whole (the first read
         * decodes no pin: it reads on past it) */
        CHECK(r->sessions[2]->damaged && r->sessions[2]->n_kintervals < 2000);
        for (size_t i = 0; i < 4; i++)
            CHECK_UINT(r->sessions[i]->n_kintervals, r0->sessions[i]->n_kintervals);
        CHECK(!s->kernel_after_fold && !r->sessions[3]->kernel_after_fold);
    }
    recording_free(r);
    recording_free(r0);
    if (getenv("VTPIN_KEEP_TEST_FILES"))
        printf("kept %s\n", path);
    else
        remove(path);
    free(b.data);
}

/* vtpin run with its collector's kernel view: an agent's recording, the collector's of the same JVM
 * in the run's directory. Summed up as read, the collector's view taken as the Hello is read, the
 * verdict and the report are the same as kept whole and joined after the load (as a run did before). */
static void test_run_kernel_folded(void)
{
    struct synth agent = {0}, view = {0};
    kernel_session(&agent, 6161, 6000, 0, &view);
    char dir[512], path[600], collector[700];
    snprintf(dir, sizeof(dir), "%s/vtpin-pin-groups-run-%d", tmp_dir(), (int)getpid());
    snprintf(path, sizeof(path), "%s/agent.vtp", dir);
    snprintf(collector, sizeof(collector), "%s/6161-1700000000000000000-1.vtp", dir);
    if (!CHECK_INT(mkdir(dir, 0700), 0) || !CHECK_INT(synth_write(&agent, path), 0) ||
        !CHECK_INT(synth_write(&view, collector), 0))
        return;
    size_t len0 = 0, len = 0;
    char *whole = run_judged_in(path, 0, dir, &len0);
    CHECK(whole && strstr(whole, "joined 1") && strstr(whole, "kernel: sleeping in read") &&
          strstr(whole, "% in pins") && strstr(whole, "kernel.held_unexplained"));
    static const size_t batches[] = {1, 64};
    for (size_t k = 0; whole && k < sizeof(batches) / sizeof(batches[0]); k++) {
        char *summed = run_judged_in(path, batches[k], dir, &len);
        if (!CHECK(summed && len == len0 && memcmp(summed, whole, len) == 0)) {
            fprintf(stderr, "  the run's verdict and report, summed up past %zu pins, differ (%zu bytes, whole %zu)\n",
                    batches[k], len, len0);
            if (getenv("VTPIN_KEEP_TEST_FILES")) {
                FILE *f = fopen("/tmp/run_whole.txt", "w"), *g = fopen("/tmp/run_summed.txt", "w");
                fwrite(whole, 1, len0, f);
                fwrite(summed, 1, len, g);
                fclose(f);
                fclose(g);
            }
        }
        free(summed);
    }
    free(whole);
    struct report_plan plan = {.keep = RECORDING_KEEP_ALL,
                               .skip_occupancy = 1,
                               .fold_pins = 64,
                               .kernel_at_hello = run_kernel_at_hello,
                               .kernel_arg = dir};
    struct recording *r = NULL;
    char err[512];
    if (CHECK_INT(report_open_plan(path, &plan, &r, err, sizeof(err)), 0)) {
        printf("run: %" PRIu64 " of 6000 pins summed up with the collector's kernel view\n",
               r->sessions[0]->pins_folded);
        CHECK(r->sessions[0]->pins_folded > 1000 && r->sessions[0]->n_kintervals > 6000);
    }
    recording_free(r);
    remove(path);
    remove(collector);
    rmdir(dir);
    free(agent.data);
    free(view.data);
}

/* ---- sessions after attach, bounded in windows as read (attach_bounds.h) ---- */

/* An event of a session after attach, written at `at`: the file is in the order the agent writes. */
struct written {
    int64_t at;
    long order;
    int end; /* a PinEnd, else a PinStart (a stack definition when stack_def) */
    int stack_def;
    uint64_t id;
    int reason, carrier; /* carrier 1..4 */
    int64_t start, stop, last_asleep, vthread;
    uint32_t stack;
};

static int cmp_written(const void *a, const void *b)
{
    const struct written *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

enum attach_twist { ATTACH_PLAIN, ATTACH_WRITTEN_LATE, ATTACH_SAMPLES_STOP };

/* A session after attach of n pins on 4 carriers: sampled parks (their start written two samples late,
 * every 97th lasting 3 s), each fifth pin a monitor wait of the virtual thread of the park before it
 * (inside it, or in progress as it began), parks of other carriers that begin in a park's last sample
 * period, a stack defined only after pins that use it, a park that never ends. twist: one park written
 * 30 s after it began (past the windows that close meanwhile), or one whose samples stopped 6 s before it ended. */
static void attach_session(struct synth *b, int64_t pid, long n, enum attach_twist twist)
{
    int64_t mono0 = 5000 * MS;
    synth_hello_in(b, pid, VTPIN__V1__OCCUPANCY_SOURCE__OCCUPANCY_SAMPLED, 1700000000000000000LL, mono0,
                   VTPIN__V1__LOAD_MODE__ATTACH);
    static const char *names[] = {"java.lang.VirtualThread",
                                  "parkOnCarrierThread",
                                  "com.example.Shop",
                                  "handle",
                                  "lock",
                                  "Shop.java",
                                  "com.example.Cache",
                                  "load"};
    for (uint32_t i = 0; i < 8; i++)
        synth_string(b, 1 + i, names[i]);
    for (uint32_t c = 1; c <= 4; c++) {
        char text[64];
        snprintf(text, sizeof(text), "ForkJoinPool-1-worker-%u", c);
        synth_string(b, 100 + c, text);
        synth_carrier(b, 7000 + (int32_t)c, 100 + c, mono0);
    }
    synth_method(b, 1, 1, 2, 0, 0);
    synth_method(b, 2, 3, 4, 6, 0);
    synth_method(b, 3, 3, 5, 6, 0);
    synth_method(b, 4, 7, 8, 6, 0);
    synth_stack(b, 1, (const uint32_t[]){1, 2}, 2, 1, 0);
    synth_stack(b, 2, (const uint32_t[]){1, 3, 2}, 3, 1, 0);
    synth_stack(b, 3, (const uint32_t[]){3, 2}, 2, 0, 0);
    struct written *w = calloc((size_t)n * 2 + 2, sizeof(*w));
    if (!w)
        return;
    size_t nw = 0;
    int64_t cursor[5] = {0, mono0, mono0, mono0, mono0};
    int64_t park_start = 0, park_stop = 0, park_vthread = 0, late_def = 0;
    for (long i = 0; i < n; i++) {
        int c = 1 + (int)(i % 4);
        uint64_t id = (uint64_t)i + 1;
        if (i % 5 == 3) { /* a wait of the last park's virtual thread: inside it, or in progress as it began */
            int64_t start = i % 2 ? park_start + (park_stop - park_start) / 2 : park_start - 2 * MS;
            int64_t stop = i % 2 ? start + MS + (i % 4) * MS : park_start + MS;
            int reason = i % 10 == 3 ? VTPIN__V1__PIN_REASON__OBJECT_WAIT : VTPIN__V1__PIN_REASON__MONITOR_ENTER;
            /* an Object.wait's stack may run through a park of its own: a wait still */
            w[nw++] = (struct written){.at = start,
                                       .order = nw,
                                       .id = id,
                                       .reason = reason,
                                       .carrier = c,
                                       .start = start,
                                       .vthread = park_vthread,
                                       .stack = i % 10 == 3 ? 2 : 3};
            w[nw++] = (struct written){.at = stop, .order = nw, .end = 1, .id = id, .start = start, .stop = stop};
            continue;
        }
        int64_t start = cursor[c] + (int64_t)(500 + (i * 389) % 2500) * 1000;
        int64_t dur = i % 97 == 0 ? 3000 * MS : (int64_t)(20 + (i * 7) % 36) * MS; /* two samples or more */
        int64_t asleep = start + dur - (int64_t)((i * 13) % 11) * MS;
        if (twist == ATTACH_SAMPLES_STOP && i == n / 2) {
            dur = 8000 * MS;
            asleep = start + 20 * MS;
        }
        int64_t written_at = start + 20 * MS; /* the second sample that saw it */
        if (twist == ATTACH_WRITTEN_LATE && i == n / 2)
            written_at = start + 30 * 1000 * MS;
        uint32_t stack = i % 11 == 0 ? 2 : i >= 150 && i < 300 && i % 3 == 0 ? 4 : 1;
        if (stack == 4 && !late_def)
            late_def = start + 400 * MS; /* defined after the pins that use it (written late) */
        w[nw++] = (struct written){.at = written_at,
                                   .order = nw,
                                   .id = id,
                                   .reason = VTPIN__V1__PIN_REASON__MONITOR,
                                   .carrier = c,
                                   .start = start,
                                   .vthread = 100 + (i * 7) % 30,
                                   .stack = stack};
        if (i != n - 1) /* the last never ends */
            w[nw++] = (struct written){.at = start + dur,
                                       .order = nw,
                                       .end = 1,
                                       .id = id,
                                       .start = start,
                                       .stop = start + dur,
                                       .last_asleep = asleep};
        cursor[c] = start + dur;
        park_start = start, park_stop = start + dur, park_vthread = 100 + (i * 7) % 30;
    }
    w[nw++] = (struct written){.at = late_def, .order = nw, .stack_def = 1};
    qsort(w, nw, sizeof(*w), cmp_written);
    int64_t last = mono0;
    for (size_t k = 0; k < nw; k++) {
        const struct written *e = &w[k];
        if (e->stack_def)
            synth_stack(b, 4, (const uint32_t[]){1, 4}, 2, 1, 0);
        else if (e->end)
            synth_pin_end_asleep(b, e->id, e->stop, e->stop - e->start, e->last_asleep);
        else
            synth_pin_start(b, e->id, e->reason, e->start, e->vthread, 3000 + (uint32_t)(e->vthread % 30),
                            7000 + e->carrier, 100 + (uint32_t)e->carrier, e->stack, e->stack == 3 ? 0 : 1, NULL);
        last = e->at > last ? e->at : last;
    }
    synth_goodbye(b, last + 10 * MS, (uint64_t)n);
    free(w);
}

/* Sessions after attach summed up as read, their parks bounded in windows: every format and vtpin run
 * the same bytes as kept whole, at every batch; the model holds a window's pins, not the session's; a
 * session where a pin reaches back past a window is read again whole, as is one whose park's samples
 * stopped long before its end, and the sessions around them are still summed up. */
static void test_attach_window(void)
{
    struct synth b = {0};
    attach_session(&b, 8181, 6000, ATTACH_PLAIN);
    attach_session(&b, 8282, 3000, ATTACH_WRITTEN_LATE);
    attach_session(&b, 8383, 3000, ATTACH_SAMPLES_STOP);
    attach_session(&b, 8484, 2000, ATTACH_PLAIN);
    char path[512];
    snprintf(path, sizeof(path), "%s/vtpin-pin-groups-attach-%d.vtp", tmp_dir(), (int)getpid());
    if (!CHECK_INT(synth_write(&b, path), 0))
        return;
    uint64_t folded = check_same(path);
    printf("attach: %" PRIu64 " of 14000 pins summed up at a batch of 1\n", folded);
    check_run_same(path);
    struct recording *r, *r0;
    char err[512];
    if (load_whole_and_summed(path, 4, &r0, &r)) {
        for (size_t i = 0; i < 4; i++) {
            const struct recording_session *s = r->sessions[i], *whole = r0->sessions[i];
            printf("attach session %zu: %" PRIu64 " pins summed up, %zu kept; %" PRIu64 " sampled parks, %" PRIu64
                   " bounded (kept whole: %" PRIu64 ", %" PRIu64 ")\n",
                   i + 1, s->pins_folded, s->n_pins, s->pins_sampled, s->pins_bounded, whole->pins_sampled,
                   whole->pins_bounded);
            CHECK_UINT(s->pins_sampled, whole->pins_sampled);
            CHECK_UINT(s->pins_bounded, whole->pins_bounded);
            CHECK(whole->pins_bounded > whole->pins_sampled / 10); /* the corrections are at work */
        }
        /* a window's pins kept (a park of 3 s and the pins it may still read), not the session's */
        CHECK(r->sessions[0]->pins_folded > 5000 && r->sessions[0]->n_pins < 600);
    }
    recording_free(r);
    /* summed up past every pin, a window closes at every start: the late one reaches back past one, and
     * the load reads again with that session whole; so does the park whose samples stopped; the session
     * after them is still read in windows */
    struct report_plan each_pin = {.keep = RECORDING_KEEP_ALL, .fold_pins = 1};
    if (CHECK_INT(report_open_plan(path, &each_pin, &r, err, sizeof(err)), 0)) {
        CHECK(r->sessions[0]->pins_folded > 5000);
        CHECK_UINT(r->sessions[1]->pins_folded, 0);
        CHECK_UINT(r->sessions[2]->pins_folded, 0);
        CHECK(r->sessions[3]->pins_folded > 1000);
        recording_free(r);
    }
    struct synth stop = {0};
    attach_session(&stop, 8585, 3000, ATTACH_PLAIN);
    attach_session(&stop, 8686, 3000, ATTACH_SAMPLES_STOP);
    if (CHECK_INT(synth_write(&stop, path), 0) &&
        CHECK_INT(report_open_plan(path, &each_pin, &r, err, sizeof(err)), 0)) {
        CHECK(r->sessions[0]->pins_folded > 2000);
        CHECK_UINT(r->sessions[1]->pins_folded, 0);
        recording_free(r);
    }
    free(stop.data);
    recording_free(r0);
    if (getenv("VTPIN_KEEP_TEST_FILES"))
        printf("kept %s\n", path);
    else
        remove(path);
    free(b.data);
}

/* A file of many sessions that reach back past a window is not read once for each: after
 * RECORDING_READS_AGAIN reads again, the sessions after the last that reached back are kept whole too. The
 * same bytes either way. */
static void test_attach_reads_again(void)
{
    struct synth b = {0};
    attach_session(&b, 9090, 1000, ATTACH_PLAIN);
    for (int i = 0; i < 5; i++)
        attach_session(&b, 9091 + i, 1000, ATTACH_WRITTEN_LATE);
    attach_session(&b, 9096, 1000, ATTACH_PLAIN);
    char path[512];
    snprintf(path, sizeof(path), "%s/vtpin-pin-groups-again-%d.vtp", tmp_dir(), (int)getpid());
    if (!CHECK_INT(synth_write(&b, path), 0))
        return;
    check_same(path);
    struct report_plan each_pin = {.keep = RECORDING_KEEP_ALL, .fold_pins = 1};
    struct recording *r = NULL;
    char err[512];
    if (CHECK_INT(report_open_plan(path, &each_pin, &r, err, sizeof(err)), 0) && CHECK_UINT(r->n_sessions, 7)) {
        CHECK(r->sessions[0]->pins_folded > 500);
        for (size_t i = 1; i < 7; i++) /* four read again, the fifth and the last whole after them */
            CHECK_UINT(r->sessions[i]->pins_folded, 0);
    }
    recording_free(r);
    /* with fewer (three reads again), the last is summed up */
    struct synth c = {0};
    attach_session(&c, 9190, 1000, ATTACH_PLAIN);
    for (int i = 0; i < 3; i++)
        attach_session(&c, 9191 + i, 1000, ATTACH_WRITTEN_LATE);
    attach_session(&c, 9194, 1000, ATTACH_PLAIN);
    if (CHECK_INT(synth_write(&c, path), 0) && CHECK_INT(report_open_plan(path, &each_pin, &r, err, sizeof(err)), 0)) {
        CHECK(r->sessions[0]->pins_folded > 500 && r->sessions[4]->pins_folded > 500);
        recording_free(r);
    }
    remove(path);
    free(b.data);
    free(c.data);
}

/* Given each session in turn (report_plan.each): its text report, appended, and how many of its pins were
 * summed up. */
struct each_text {
    FILE *out;
    uint64_t folded[4];
};

static int text_of_each(const struct recording *r, const struct recording_session *s, void *arg)
{
    struct each_text *e = arg;
    for (size_t i = 0; i < r->n_sessions; i++) {
        if (r->sessions[i] != s)
            continue;
        struct report_options o = {.session = i, .top = 0, .full_stacks = 1};
        fprintf(e->out, "== session %zu\n", i + 1);
        if (i < 4)
            e->folded[i] = s->pins_folded;
        return report_text(e->out, r, &o);
    }
    return -EINVAL;
}

/* A load that hands each session over as it completes (pprof of every session) cannot take one back:
 * the read again after a session that reached back past a window hands over only that one (whole) and
 * those after it (in windows). The same text as kept whole, each session once. */
static void test_attach_each(void)
{
    struct synth b = {0};
    attach_session(&b, 9191, 3000, ATTACH_PLAIN);
    attach_session(&b, 9292, 3000, ATTACH_WRITTEN_LATE);
    attach_session(&b, 9393, 2000, ATTACH_PLAIN);
    char path[512];
    snprintf(path, sizeof(path), "%s/vtpin-pin-groups-each-%d.vtp", tmp_dir(), (int)getpid());
    if (!CHECK_INT(synth_write(&b, path), 0))
        return;
    char *text[2] = {NULL, NULL};
    size_t len[2] = {0, 0};
    struct each_text each[2] = {{NULL}};
    for (int k = 0; k < 2; k++) {
        each[k].out = open_memstream(&text[k], &len[k]);
        struct report_plan plan = {.keep = RECORDING_KEEP_ALL, .fold_pins = k, .each = text_of_each, .arg = &each[k]};
        struct recording *r = NULL;
        char err[512];
        CHECK_INT(report_open_plan(path, &plan, &r, err, sizeof(err)), 0);
        recording_free(r);
        fclose(each[k].out);
    }
    /* the session that reached back whole, those before and after it in windows */
    CHECK(each[1].folded[0] > 1000 && each[1].folded[1] == 0 && each[1].folded[2] > 1000);
    CHECK(text[0] && text[1] && len[0] == len[1] && memcmp(text[0], text[1], len[0]) == 0);
    CHECK(text[1] && strstr(text[1], "== session 3") && !strstr(strstr(text[1], "== session 3") + 1, "== session"));
    CHECK(text[1] && strstr(text[1], "== session 1") == text[1] && strstr(text[1], "== session 2"));
    free(text[0]);
    free(text[1]);
    remove(path);
    free(b.data);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_pin_groups CORPUS_DIR\n");
        return 2;
    }
    CHECK_RUN(test_mixed);
    CHECK_RUN(test_kernel_after);
    CHECK_RUN(test_kernel_folded);
    CHECK_RUN(test_run_kernel_folded);
    CHECK_RUN(test_rotated);
    CHECK_RUN(test_attach_window);
    CHECK_RUN(test_attach_each);
    CHECK_RUN(test_attach_reads_again);
    const char *corpus = argv[1];
    test_corpus(corpus);
    CHECK_MAIN_RETURN();
}
