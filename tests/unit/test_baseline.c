/* vtpin run's baselines (cli/run/baseline.c) and --only (cli/run/gates.c) over pins built in
 * memory: a site's name without lines or generated suffixes; a baseline written, read back
 * and judged (a new site and a grown one fail, named; a known one is accepted; the tolerance);
 * a bad file said; --only counts only the culprits it names. */
#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "check.h"
#include "gates.h"
#include "vtpin.pb-c.h"

#define MONITOR VTPIN__V1__PIN_REASON__MONITOR
#define NATIVE VTPIN__V1__PIN_REASON__NATIVE

static struct recording_method m_park = {.defined = 1, .class_name = "jdk.internal.misc.Unsafe", .name = "park"};
static struct recording_method m_save = {.defined = 1, .class_name = "com.acme.Repo", .name = "save"};
static struct recording_method m_lambda = {
    .defined = 1, .class_name = "com.acme.Jobs$$Lambda/0x00007f0a3c00a000", .name = "run"};
static struct recording_method m_sleep = {.defined = 1,
                                          .class_name = "com.acme.Native",
                                          .name = "sleepInC",
                                          .library = "/opt/acme/lib/libacme.so",
                                          .is_native = 1};
static struct recording_method m_vendor = {.defined = 1, .class_name = "org.vendor.Driver", .name = "read"};

/* culprit: the frame at index 1 (under the park), or 0 for the native method */
static struct recording_frame save_frames[] = {{.method = &m_park}, {.method = &m_save, .line = 20}};
static struct recording_frame save_frames_other_line[] = {{.method = &m_park}, {.method = &m_save, .line = 31}};
static struct recording_frame lambda_frames[] = {{.method = &m_park}, {.method = &m_lambda, .line = 5}};
static struct recording_frame native_frames[] = {{.method = &m_sleep, .line = -1}};
static struct recording_frame vendor_frames[] = {{.method = &m_park}, {.method = &m_vendor, .line = 7}};
static struct recording_stack save_stack = {.count = 2, .frames = save_frames};
static struct recording_stack save_stack_2 = {.count = 2, .frames = save_frames_other_line};
static struct recording_stack lambda_stack = {.count = 2, .frames = lambda_frames};
static struct recording_stack native_stack = {.count = 1, .frames = native_frames};
static struct recording_stack vendor_stack = {.count = 2, .frames = vendor_frames};

static struct recording_pin pin(int reason, struct recording_stack *st, uint32_t culprit)
{
    return (struct recording_pin){.reason = reason,
                                  .ended = 1,
                                  .duration_ns = 1000000,
                                  .stack = st,
                                  .has_culprit = st != NULL,
                                  .culprit = culprit,
                                  .origin = recording_stack_origin(st)};
}

static void test_class_names(void)
{
    static const char *const cases[][2] = {
        {"com.acme.Repo", "com.acme.Repo"},
        {"com.acme.Jobs$$Lambda/0x00007f0a3c00a000", "com.acme.Jobs$$Lambda"},
        {"com.acme.Jobs$$Lambda$14/0x0000000800c0b440", "com.acme.Jobs$$Lambda"},
        {"java.lang.invoke.LambdaForm$MH/0x0000000801004000", "java.lang.invoke.LambdaForm$MH"},
        {"jdk.proxy3.$Proxy12", "jdk.proxy.$Proxy"},
        {"com.acme.$ProxyFactory", "com.acme.$ProxyFactory"}, /* no digits: a name like any other */
        {"com.acme.Outer$Inner$1", "com.acme.Outer$Inner$1"}, /* an anonymous class is the source's own */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char out[256];
        baseline_class_name(cases[i][0], out, sizeof(out));
        CHECK_STR(out, cases[i][1]);
    }
    char small[8];
    baseline_class_name("com.acme.Repo", small, sizeof(small));
    CHECK_STR(small, "com.acm"); /* cut, terminated */
}

/* Sites: the same method at two lines is one site; the native library by file name; no stack is
 * its own site; sorted; written, read back, the same. */
static void test_sites_round_trip(void)
{
    struct recording_pin pins[] = {pin(MONITOR, &save_stack, 1), pin(MONITOR, &save_stack_2, 1),
                                   pin(NATIVE, &native_stack, 0), pin(MONITOR, &lambda_stack, 1),
                                   pin(MONITOR, NULL, 0)};
    struct baseline b = {0};
    for (size_t i = 0; i < sizeof(pins) / sizeof(pins[0]); i++)
        CHECK_INT(baseline_add_pins(&b, &pins[i], 1), 0);
    baseline_sort(&b);
    if (!CHECK_UINT(b.n, 4)) {
        baseline_free(&b);
        return;
    }
    CHECK_STR(b.sites[0].class_name, "(no stack)");
    CHECK_STR(b.sites[1].class_name, "com.acme.Jobs$$Lambda");
    CHECK_STR(b.sites[2].class_name, "com.acme.Native");
    CHECK_STR(b.sites[2].library, "libacme.so");
    CHECK_STR(b.sites[2].reason, "NATIVE");
    CHECK_STR(b.sites[3].class_name, "com.acme.Repo");
    CHECK_STR(b.sites[3].method, "save");
    CHECK_UINT(b.sites[3].pins, 2);
    CHECK(baseline_site_of(&b, &pins[1]) == &b.sites[3]);

    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK_INT(baseline_write(f, &b), 0);
    fclose(f);
    CHECK(strstr(text, "\"format\": \"vtpin.baseline/1\"") != NULL);
    /* one site a line, reviewable in a diff */
    CHECK(strstr(text,
                 "{\"class\": \"com.acme.Repo\", \"method\": \"save\", \"reason\": \"MONITOR\", \"library\": null, "
                 "\"pins\": 2}") != NULL);
    struct baseline back = {0};
    char err[256] = "";
    CHECK_INT(baseline_parse(text, len, &back, err, sizeof(err)), 0);
    if (CHECK_UINT(back.n, b.n))
        for (size_t i = 0; i < b.n; i++) {
            CHECK(baseline_find(&back, &b.sites[i]) == &back.sites[i]);
            CHECK_UINT(back.sites[i].pins, b.sites[i].pins);
        }
    free(text);
    baseline_free(&back);
    baseline_free(&b);
}

static void test_bad_files(void)
{
    static const char *const bad[][2] = {
        {"not json", "not JSON"},
        {"{\"sites\": []}", "\"format\""},
        {"{\"format\": \"vtpin.baseline/2\", \"sites\": []}", "\"format\""},
        {"{\"format\": \"vtpin.baseline/1\"}", "no \"sites\""},
        {"{\"format\": \"vtpin.baseline/1\", \"sites\": [{\"class\": 1}]}", "site 1: \"class\""},
        {"{\"format\": \"vtpin.baseline/1\", \"sites\": [{\"class\": \"A\", \"method\": \"b\", \"reason\": "
         "\"MONITOR\", "
         "\"library\": null}]}",
         "site 1: \"pins\""},
        {"{\"format\": \"vtpin.baseline/1\", \"sites\": [{\"class\": \"A\", \"method\": \"b\", \"reason\": "
         "\"MONITOR\", "
         "\"pins\": 1}, {\"class\": \"A\", \"method\": \"b\", \"reason\": \"MONITOR\", \"pins\": 2}]}",
         "listed twice"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct baseline b = {0};
        char err[256] = "";
        CHECK_INT(baseline_parse(bad[i][0], strlen(bad[i][0]), &b, err, sizeof(err)), -22);
        if (!CHECK(strstr(err, bad[i][1]) != NULL))
            fprintf(stderr, "    case %zu: %s\n", i, err);
        baseline_free(&b);
    }
}

/* The session of the gates test: pins, no hogs. */
static void evaluate(const struct gate_config *c, struct recording_pin *pins, size_t n, struct gate_result *g,
                     struct baseline *sites)
{
    struct recording_session s;
    memset(&s, 0, sizeof(s));
    s.pins = pins;
    s.n_pins = n;
    struct recording_session *sp = &s;
    struct recording r;
    memset(&r, 0, sizeof(r));
    r.sessions = &sp;
    r.n_sessions = 1;
    struct recording *rp = &r;
    struct gate_config with_sites = *c;
    memset(sites, 0, sizeof(*sites));
    CHECK_INT(gates_run_sites(c, &rp, 1, sites), 0);
    with_sites.run_sites = sites;
    gates_evaluate(&with_sites, &rp, 1, g);
}

/* A baseline of Repo.save (2 pins): a run with 4 there passes at 100 %, fails at 50 %; a new site
 * (the vendor's) fails, named alone; --only com.acme.* sets the vendor's aside. */
static void test_gates(void)
{
    static const char file[] = "{\"format\": \"vtpin.baseline/1\", \"sites\": [\n"
                               "  {\"class\": \"com.acme.Repo\", \"method\": \"save\", \"reason\": \"MONITOR\", "
                               "\"library\": null, \"pins\": 2}\n]}\n";
    struct baseline base = {0};
    char err[256];
    CHECK_INT(baseline_parse(file, sizeof(file) - 1, &base, err, sizeof(err)), 0);
    struct recording_pin pins[] = {pin(MONITOR, &save_stack, 1), pin(MONITOR, &save_stack_2, 1),
                                   pin(MONITOR, &save_stack, 1), pin(MONITOR, &save_stack, 1)};
    struct gate_config c = {.fail_pins = -1, .fail_pinned_ns = -1, .baseline = &base, .baseline_tolerance_pct = 100};
    struct gate_result g;
    struct baseline sites;
    evaluate(&c, pins, 4, &g, &sites);
    CHECK(!g.failed);
    CHECK_UINT(g.baselined, 4);
    CHECK_UINT(g.pins, 0);
    CHECK(gates_pin_set_aside(
        &(struct gate_config){.baseline = &base, .run_sites = &sites, .baseline_tolerance_pct = 100}, &pins[0]));
    baseline_free(&sites);

    c.baseline_tolerance_pct = 50; /* 4 > 2 + 50 %: grown */
    evaluate(&c, pins, 4, &g, &sites);
    CHECK(g.failed);
    CHECK_UINT(g.sites_failed, 1);
    CHECK_UINT(g.pins, 4);
    CHECK(strstr(g.why, "--baseline: grown pin site com.acme.Repo.save MONITOR: 4 pin(s), the baseline has 2, over "
                        "its 50 % tolerance; at com.acme.Repo.save") != NULL);
    baseline_free(&sites);

    c.baseline_tolerance_pct = -1; /* counts not compared */
    evaluate(&c, pins, 4, &g, &sites);
    CHECK(!g.failed);
    baseline_free(&sites);

    struct recording_pin mixed[] = {pin(MONITOR, &save_stack, 1), pin(MONITOR, &vendor_stack, 1),
                                    pin(NATIVE, &native_stack, 0)};
    c.baseline_tolerance_pct = 100;
    evaluate(&c, mixed, 3, &g, &sites);
    CHECK(g.failed);
    CHECK_UINT(g.sites_failed, 2);
    CHECK_UINT(g.baselined, 1);
    CHECK(strstr(g.why, "--baseline: new pin site org.vendor.Driver.read MONITOR: 1 pin(s), not in the baseline") !=
          NULL);
    CHECK(strstr(g.why, "--baseline: new pin site com.acme.Native.sleepInC NATIVE (libacme.so): 1 pin(s)") != NULL);
    CHECK(!strstr(g.why, "Repo.save")); /* only the failing sites are named */
    baseline_free(&sites);

    const char *only[] = {"com.acme.*"};
    c.only = only;
    c.n_only = 1;
    evaluate(&c, mixed, 3, &g, &sites);
    CHECK_UINT(g.not_only, 1); /* the vendor's */
    CHECK_UINT(g.sites_failed, 1);
    CHECK(!strstr(g.why, "org.vendor"));
    CHECK(gates_pin_not_only(&c, &mixed[1]));
    CHECK(!gates_pin_not_only(&c, &mixed[0]));
    struct recording_pin stackless = pin(MONITOR, NULL, 0);
    CHECK(gates_pin_not_only(&c, &stackless)); /* no culprit: blamed on nothing --only names */
    baseline_free(&sites);

    /* --only alone, no baseline: the vendor's pin is not counted against --fail-on-pins */
    struct gate_config o = {.fail_pins = 1, .fail_pinned_ns = -1, .only = only, .n_only = 1};
    struct recording_pin vendor_only[] = {pin(MONITOR, &vendor_stack, 1)};
    evaluate(&o, vendor_only, 1, &g, &sites);
    CHECK(!g.failed);
    CHECK_UINT(g.pins, 0);
    baseline_free(&sites);
    baseline_free(&base);
}

int main(void)
{
    CHECK_RUN(test_class_names);
    CHECK_RUN(test_sites_round_trip);
    CHECK_RUN(test_bad_files);
    CHECK_RUN(test_gates);
    CHECK_MAIN_RETURN();
}
