/* Unit tests for agent/support/options.c: defaults, every option, both separators,
 * error messages that name the option, and duration parsing. */
#include "options.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "common/agent_codes.h"

#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull

/* Parses text over the defaults; returns the rc, fills o and err. */
static int parse(struct options *o, const char *text, char *err, size_t errlen)
{
    options_defaults(o);
    return options_parse(o, text, err, errlen);
}

/* Expects text to fail with a message containing each of the needles. */
static void expect_error(const char *text, const char *needle1, const char *needle2)
{
    struct options o;
    char err[256];
    memset(err, 'x', sizeof(err));
    err[sizeof(err) - 1] = '\0';
    int rc = parse(&o, text, err, sizeof(err));
    if (!CHECK_INT(rc, -EINVAL))
        fprintf(stderr, "    input: \"%s\"\n", text);
    if (!CHECK(err[0] != '\0' && strlen(err) < sizeof(err)))
        fprintf(stderr, "    input: \"%s\"\n", text);
    if (needle1 && !CHECK_CONTAINS(err, needle1))
        fprintf(stderr, "    input: \"%s\"\n", text);
    if (needle2 && !CHECK_CONTAINS(err, needle2))
        fprintf(stderr, "    input: \"%s\"\n", text);
}

static void expect_bad_value(const char *text, const char *option)
{
    char needle[64];
    snprintf(needle, sizeof(needle), "bad value for option '%s'", option);
    expect_error(text, needle, NULL);
}

static void test_defaults(void)
{
    struct options o;
    memset(&o, 0xa5, sizeof(o));
    options_defaults(&o);
    CHECK_UINT(o.threshold_ns, 1 * NS_PER_MS);
    CHECK_INT(o.trace, TRACE_OFF);
    CHECK_STR(o.trace_file, "");
    CHECK_STR(o.record_file, "");
    CHECK_UINT(o.record_mode, 0600); /* only this user reads a recording unless asked */
    CHECK_STR(o.log_file, "");
    CHECK_UINT(o.depth, 128);
    CHECK_UINT(o.queue_slots, 1024);
    CHECK_UINT(o.max_stacks, 65536);
    CHECK_UINT(o.max_methods, 65536);
    CHECK_UINT(o.stats_interval_ns, 1 * NS_PER_S);
    CHECK_INT(o.quiet, 0);
    CHECK_INT(o.help, 0);
    CHECK(options_usage[0] != '\0');
}

static void test_empty_input(void)
{
    struct options d, o;
    char err[128] = "stale";
    options_defaults(&d);

    CHECK_INT(parse(&o, "", err, sizeof(err)), 0);
    CHECK_STR(err, "");
    CHECK(memcmp(&o, &d, sizeof(o)) == 0);

    strcpy(err, "stale");
    CHECK_INT(parse(&o, NULL, err, sizeof(err)), 0);
    CHECK_STR(err, "");
    CHECK(memcmp(&o, &d, sizeof(o)) == 0);

    /* Only separators: nothing to set. */
    CHECK_INT(parse(&o, ",,,", err, sizeof(err)), 0);
    CHECK(memcmp(&o, &d, sizeof(o)) == 0);
}

static void test_every_option_equals(void)
{
    struct options o;
    char err[256];
    int rc = parse(&o,
                   "threshold=5ms,trace=short,tracefile=/tmp/t.txt,record=/tmp/r.vtpin,log=/tmp/l.log,"
                   "depth=64,queue=4096,stacks=1000,methods=2000,stats=250ms,quiet,help",
                   err, sizeof(err));
    if (!CHECK_INT(rc, 0))
        fprintf(stderr, "    err: %s\n", err);
    CHECK_UINT(o.threshold_ns, 5 * NS_PER_MS);
    CHECK_INT(o.trace, TRACE_SHORT); /* tracefile does not override an explicit mode */
    CHECK_STR(o.trace_file, "/tmp/t.txt");
    CHECK_STR(o.record_file, "/tmp/r.vtpin");
    CHECK_STR(o.log_file, "/tmp/l.log");
    CHECK_UINT(o.depth, 64);
    CHECK_UINT(o.queue_slots, 4096);
    CHECK_UINT(o.max_stacks, 1000);
    CHECK_UINT(o.max_methods, 2000);
    CHECK_UINT(o.stats_interval_ns, 250 * NS_PER_MS);
    CHECK_INT(o.quiet, 1);
    CHECK_INT(o.help, 1);
}

static void test_every_option_colon(void)
{
    struct options o;
    char err[256];
    int rc = parse(&o,
                   "threshold:250us,trace:full,tracefile:/tmp/t2,record:/tmp/r2,log:/tmp/l2,"
                   "depth:2048,queue:16,stacks:16,methods:16777216,stats:2s",
                   err, sizeof(err));
    if (!CHECK_INT(rc, 0))
        fprintf(stderr, "    err: %s\n", err);
    CHECK_UINT(o.threshold_ns, 250000);
    CHECK_INT(o.trace, TRACE_FULL);
    CHECK_STR(o.trace_file, "/tmp/t2");
    CHECK_STR(o.record_file, "/tmp/r2");
    CHECK_STR(o.log_file, "/tmp/l2");
    CHECK_UINT(o.depth, 2048);
    CHECK_UINT(o.queue_slots, 16);
    CHECK_UINT(o.max_stacks, 16);
    CHECK_UINT(o.max_methods, 16777216);
    CHECK_UINT(o.stats_interval_ns, 2 * NS_PER_S);
    CHECK_INT(o.quiet, 0);
    CHECK_INT(o.help, 0);
}

static void test_mixed_separators_and_paths(void)
{
    struct options o;
    char err[256];
    /* Only the first '=' or ':' separates; the rest belongs to the value. */
    CHECK_INT(parse(&o, "record=/tmp/a:b,log:/tmp/c=d,depth:7", err, sizeof(err)), 0);
    CHECK_STR(o.record_file, "/tmp/a:b");
    CHECK_STR(o.log_file, "/tmp/c=d");
    CHECK_UINT(o.depth, 7);

    /* Later occurrences win. */
    CHECK_INT(parse(&o, "depth=5,depth=9,threshold=1ms,threshold:0", err, sizeof(err)), 0);
    CHECK_UINT(o.depth, 9);
    CHECK_UINT(o.threshold_ns, 0);

    /* Leading, trailing and doubled commas are ignored. */
    CHECK_INT(parse(&o, ",quiet,,depth=3,", err, sizeof(err)), 0);
    CHECK_INT(o.quiet, 1);
    CHECK_UINT(o.depth, 3);
    CHECK_INT(parse(&o, "threshold=0,", err, sizeof(err)), 0);
    CHECK_UINT(o.threshold_ns, 0);
}

static void test_trace(void)
{
    struct options o;
    char err[256];
    CHECK_INT(parse(&o, "trace", err, sizeof(err)), 0);
    CHECK_INT(o.trace, TRACE_FULL);
    CHECK_INT(parse(&o, "trace=full", err, sizeof(err)), 0);
    CHECK_INT(o.trace, TRACE_FULL);
    CHECK_INT(parse(&o, "trace=short", err, sizeof(err)), 0);
    CHECK_INT(o.trace, TRACE_SHORT);
    CHECK_INT(parse(&o, "trace:short", err, sizeof(err)), 0);
    CHECK_INT(o.trace, TRACE_SHORT);

    /* tracefile alone turns the trace on (full); an explicit mode wins in either order. */
    CHECK_INT(parse(&o, "tracefile=/tmp/x", err, sizeof(err)), 0);
    CHECK_INT(o.trace, TRACE_FULL);
    CHECK_STR(o.trace_file, "/tmp/x");
    CHECK_INT(parse(&o, "tracefile=/tmp/x,trace=short", err, sizeof(err)), 0);
    CHECK_INT(o.trace, TRACE_SHORT);
    CHECK_INT(parse(&o, "trace=short,tracefile:/tmp/x", err, sizeof(err)), 0);
    CHECK_INT(o.trace, TRACE_SHORT);

    expect_bad_value("trace=long", "trace");
    expect_bad_value("trace=", "trace");
    expect_bad_value("trace:FULL", "trace");
    /* A failed tracefile does not turn the trace on. */
    CHECK_INT(parse(&o, "tracefile=", err, sizeof(err)), -EINVAL);
    CHECK_INT(o.trace, TRACE_OFF);
}

static void test_downcalls(void)
{
    struct options o;
    char err[256];
    CHECK_INT(parse(&o, "", err, sizeof(err)), 0);
    CHECK_INT(o.downcalls_marked, 0); /* targets are named by default */
    CHECK_INT(parse(&o, "downcalls=marked", err, sizeof(err)), 0);
    CHECK_INT(o.downcalls_marked, 1);
    CHECK_INT(parse(&o, "downcalls:marked,downcalls=named", err, sizeof(err)), 0);
    CHECK_INT(o.downcalls_marked, 0);
    expect_bad_value("downcalls", "downcalls");
    expect_bad_value("downcalls=off", "downcalls");
    expect_bad_value("downcalls=MARKED", "downcalls");
}

static void test_flags(void)
{
    struct options o;
    char err[256];
    CHECK_INT(parse(&o, "quiet", err, sizeof(err)), 0);
    CHECK_INT(o.quiet, 1);
    CHECK_INT(o.help, 0);
    CHECK_INT(parse(&o, "help", err, sizeof(err)), 0);
    CHECK_INT(o.help, 1);
    CHECK_INT(o.quiet, 0);

    expect_error("quiet=1", "'quiet'", "takes no value");
    expect_error("quiet:yes", "'quiet'", "takes no value");
    expect_error("quiet=", "'quiet'", "takes no value");
    expect_error("help=1", "'help'", "takes no value");
}

static void test_unknown_and_empty_names(void)
{
    expect_error("bogus", "unknown option 'bogus'", NULL);
    expect_error("bogus=1", "unknown option 'bogus'", NULL);
    expect_error("threshold=1ms,bogus:2,depth=4", "unknown option 'bogus'", NULL);
    expect_error("Threshold=1ms", "unknown option 'Threshold'", NULL);
    expect_error("=5", "empty name", NULL);
    expect_error(":5", "empty name", NULL);
    expect_error("depth=4,=", "empty name", NULL);
    /* The first error is the one reported. */
    expect_error("bogus,depth=0", "unknown option 'bogus'", NULL);
    expect_error("depth=0,bogus", "bad value for option 'depth'", NULL);
    /* the error lists every key of the table, in its order */
    struct options o;
    char err[512];
    CHECK_INT(parse(&o, "bogus", err, sizeof(err)), -EINVAL);
    CHECK_CONTAINS(err, "(valid: threshold, hog, trace, tracefile, record, record_mode, record_max, record_keep, log, "
                        "collector, collector_owner, buffer, occupancy, sample, occupancy_sample, carriers, ring, "
                        "depth, queue, stacks, methods, stats, downcalls, quiet, stop, help)");
}

static void test_bad_values(void)
{
    expect_bad_value("threshold=abc", "threshold");
    expect_bad_value("threshold", "threshold");
    expect_bad_value("threshold=", "threshold");
    expect_bad_value("threshold=-1ms", "threshold");
    expect_bad_value("threshold=1 ms", "threshold");
    expect_error("threshold=10xs", "bad value for option 'threshold'", "'10xs'");

    expect_bad_value("depth=0", "depth");
    expect_bad_value("depth=2049", "depth");
    expect_bad_value("depth=abc", "depth");
    expect_bad_value("depth=-1", "depth");
    expect_bad_value("depth=+5", "depth");
    expect_bad_value("depth= 5", "depth");
    expect_bad_value("depth=5x", "depth");
    expect_bad_value("depth=", "depth");
    expect_bad_value("depth", "depth");
    expect_bad_value("depth=99999999999999999999999", "depth");

    expect_bad_value("queue=15", "queue");
    expect_bad_value("queue=1048577", "queue");
    expect_bad_value("stacks=15", "stacks");
    expect_bad_value("stacks=16777217", "stacks");
    expect_bad_value("methods=15", "methods");
    expect_bad_value("methods=16777217", "methods");

    expect_bad_value("stats=0", "stats");
    expect_bad_value("stats=999us", "stats");
    expect_bad_value("stats=x", "stats");

    expect_bad_value("record=", "record");
    expect_bad_value("record", "record");
    expect_bad_value("log=", "log");
    expect_bad_value("tracefile", "tracefile");

    /* Edges that are accepted. */
    struct options o;
    char err[256];
    CHECK_INT(parse(&o, "depth=1,queue=1048576,stacks=16777216,methods=16,stats=1ms", err, sizeof(err)), 0);
    CHECK_UINT(o.depth, 1);
    CHECK_UINT(o.queue_slots, 1048576);
    CHECK_UINT(o.max_stacks, 16777216);
    CHECK_UINT(o.max_methods, 16);
    CHECK_UINT(o.stats_interval_ns, NS_PER_MS);
}

static void test_path_lengths(void)
{
    static const char *keys[] = {"tracefile", "record", "log"};
    char longest[OPTIONS_PATH_MAX], too_long[OPTIONS_PATH_MAX + 1];
    memset(longest, 'p', sizeof(longest) - 1);
    longest[0] = '/';
    longest[sizeof(longest) - 1] = '\0'; /* strlen 511: fits with its NUL */
    memset(too_long, 'p', sizeof(too_long) - 1);
    too_long[0] = '/';
    too_long[sizeof(too_long) - 1] = '\0'; /* strlen 512 */

    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        char text[OPTIONS_PATH_MAX + 32], err[256];
        struct options o;
        snprintf(text, sizeof(text), "%s=%s", keys[i], longest);
        if (!CHECK_INT(parse(&o, text, err, sizeof(err)), 0))
            fprintf(stderr, "    key %s: %s\n", keys[i], err);
        const char *got = i == 0 ? o.trace_file : i == 1 ? o.record_file : o.log_file;
        CHECK_STR(got, longest);

        snprintf(text, sizeof(text), "%s=%s", keys[i], too_long);
        expect_bad_value(text, keys[i]);
    }
}

static void test_error_buffer(void)
{
    struct options o;
    /* A small buffer gets a truncated, terminated message. */
    char small[12];
    memset(small, 'x', sizeof(small));
    CHECK_INT(parse(&o, "bogus", small, sizeof(small)), -EINVAL);
    CHECK_UINT(strlen(small), sizeof(small) - 1);
    CHECK(strncmp(small, "unknown opt", sizeof(small) - 1) == 0);
    /* No buffer at all. */
    CHECK_INT(parse(&o, "bogus", NULL, 0), -EINVAL);
    CHECK_INT(parse(&o, "depth=2", NULL, 0), 0);
    CHECK_UINT(o.depth, 2);
    /* A very long bad value does not overflow the message. */
    char text[4096], err[128];
    strcpy(text, "threshold=");
    memset(text + 10, '9', sizeof(text) - 11);
    text[sizeof(text) - 1] = '\0';
    CHECK_INT(parse(&o, text, err, sizeof(err)), -EINVAL);
    CHECK_CONTAINS(err, "bad value for option 'threshold'");
    CHECK(strlen(err) < sizeof(err));
}

/* Duration text → expected nanoseconds. */
static void expect_duration(const char *text, uint64_t want)
{
    uint64_t ns = 12345;
    int rc = options_parse_duration(text, &ns);
    if (!CHECK_INT(rc, 0) || !CHECK_UINT(ns, want))
        fprintf(stderr, "    input: \"%s\"\n", text);
}

static void expect_bad_duration(const char *text)
{
    uint64_t ns = 12345;
    int rc = options_parse_duration(text, &ns);
    if (!CHECK_INT(rc, -EINVAL) || !CHECK_UINT(ns, 12345)) /* untouched on error */
        fprintf(stderr, "    input: \"%s\"\n", text ? text : "(null)");
}

static void test_durations(void)
{
    expect_duration("0", 0);
    expect_duration("0ms", 0);
    expect_duration("0.0s", 0);
    expect_duration("10", 10 * NS_PER_MS); /* bare numbers are milliseconds */
    expect_duration("1.5", 1500000);
    expect_duration("1.5ms", 1500000);
    expect_duration("0.1ms", 100000);
    expect_duration("250us", 250000);
    expect_duration("0.5us", 500);
    expect_duration("7ns", 7);
    expect_duration("2s", 2 * NS_PER_S);
    expect_duration("1.25s", 1250000000);
    expect_duration("1m", 60 * NS_PER_S);
    expect_duration("1.5m", 90 * NS_PER_S);
    expect_duration("9000000000s", 9000000000ull * NS_PER_S); /* 9e18: fits */
    expect_duration("1000000000000000000ns", 1000000000000000000ull);

    expect_bad_duration(NULL);
    expect_bad_duration("");
    expect_bad_duration("-1ms");
    expect_bad_duration("-1");
    expect_bad_duration("1 ms");
    expect_bad_duration(" 1ms");
    expect_bad_duration("1ms ");
    expect_bad_duration("10xs");
    expect_bad_duration("1h");
    expect_bad_duration("1msx");
    expect_bad_duration("ms");
    expect_bad_duration("s");
    expect_bad_duration("abc");
    expect_bad_duration("nan");
    expect_bad_duration("inf");
    expect_bad_duration("infs");
    expect_bad_duration("10000000000s");         /* 1e19 ns > INT64_MAX */
    expect_bad_duration("20000000000000000000"); /* 2e19 ms */
    expect_bad_duration("153722868m");           /* just past INT64_MAX ns */
    expect_bad_duration("1e400");                /* strtod overflow */
}

static void test_stop_and_pid(void)
{
    struct options o;
    char err[256];
    options_defaults(&o);
    CHECK_INT(options_parse(&o, "stop", err, sizeof(err)), 0);
    CHECK(o.stop);
    options_defaults(&o);
    CHECK_INT(options_parse(&o, "stop=1", err, sizeof(err)), -EINVAL);
    char path[OPTIONS_PATH_MAX] = "/tmp/app-%p.vtp";
    CHECK_INT(options_expand_pid(path, sizeof(path), 4242), 0);
    CHECK_STR(path, "/tmp/app-4242.vtp");
    char two[OPTIONS_PATH_MAX] = "%p/%p%";
    CHECK_INT(options_expand_pid(two, sizeof(two), 7), 0);
    CHECK_STR(two, "7/7%");
    char small[8] = "%p%p%p";
    CHECK_INT(options_expand_pid(small, sizeof(small), 123456), -ENAMETOOLONG);
    options_defaults(&o);
    CHECK_INT(options_parse(&o, "collector,occupancy=exact,sample=5ms,carriers=8,ring=1024", err, sizeof(err)), 0);
    CHECK(o.collector && o.occupancy == OCCUPANCY_EXACT && o.sample_interval_ns == 5000000 && o.max_carriers == 8 &&
          o.ring_entries == 1024);
    CHECK_INT(options_parse(&o, "occupancy=loose", err, sizeof(err)), -EINVAL);
    CHECK(strstr(err, "'occupancy'") != NULL);
    CHECK_INT(options_parse(&o, "sample=0", err, sizeof(err)), -EINVAL);
    /* occupancy samples: 40 ms by default, never more often than the watchdog's sample= */
    options_defaults(&o);
    CHECK_UINT(options_occupancy_interval_ns(&o), 40000000);
    CHECK_INT(options_parse(&o, "occupancy_sample=20ms", err, sizeof(err)), 0);
    CHECK_UINT(options_occupancy_interval_ns(&o), 20000000);
    CHECK_INT(options_parse(&o, "sample=50ms", err, sizeof(err)), 0);
    CHECK_UINT(options_occupancy_interval_ns(&o), 50000000);
    CHECK_INT(options_parse(&o, "occupancy_sample=0", err, sizeof(err)), -EINVAL);
    CHECK_INT(options_parse(&o, "occupancy_sample=11s", err, sizeof(err)), -EINVAL);
}

/* A collector path longer than sun_path would be cut by connect(): refused. */
static void test_collector_path_length(void)
{
    struct options o;
    char err[512], opt[400], path[300];
    memset(path, 'a', sizeof(path));
    path[0] = '/';
    path[107] = '\0'; /* 107 bytes + NUL: the most sun_path holds */
    snprintf(opt, sizeof(opt), "collector=%s", path);
    options_defaults(&o);
    CHECK_INT(options_parse(&o, opt, err, sizeof(err)), 0);
    CHECK_STR(o.collector_path, path);
    path[107] = 'a';
    path[108] = '\0';
    snprintf(opt, sizeof(opt), "collector=%s", path);
    options_defaults(&o);
    CHECK_INT(options_parse(&o, opt, err, sizeof(err)), -EINVAL);
    CHECK(strstr(err, "108 bytes") != NULL);
    CHECK(strstr(err, "107") != NULL);
    path[200] = '\0';
    memset(path + 108, 'b', 92);
    snprintf(opt, sizeof(opt), "collector:%s", path);
    CHECK_INT(options_parse(&o, opt, err, sizeof(err)), -EINVAL);
    CHECK(strstr(err, "Unix socket") != NULL);
}

/* A load after "stop": carriers=, ring= and exact occupancy were set up at
 * the first load. Given with another value they are refused (named by bit);
 * not given, they keep the first load's values. */
static unsigned refit(const char *first_text, const char *again_text, struct options *again)
{
    struct options first;
    char err[256];
    options_defaults(&first);
    CHECK_INT(options_parse(&first, first_text, err, sizeof(err)), 0);
    options_defaults(again);
    CHECK_INT(options_parse(again, again_text, err, sizeof(err)), 0);
    return options_fixed_conflicts(&first, again, again_text);
}

static void test_fixed_at_first_load(void)
{
    struct options a;
    CHECK_UINT(refit("", "record=/tmp/x.vtp", &a), 0);
    CHECK_UINT(refit("", "carriers=8", &a), VTPIN_FIXED_CARRIERS);
    CHECK_UINT(refit("", "ring=128", &a), VTPIN_FIXED_RING);
    CHECK_UINT(refit("", "occupancy=exact", &a), VTPIN_FIXED_OCCUPANCY);
    CHECK_UINT(refit("", "carriers=8,ring=128,occupancy=exact", &a), VTPIN_FIXED_ALL);
    /* the same values, or a change between sampled and off: fine */
    CHECK_UINT(refit("carriers=8,ring=128", "carriers=8,ring=128", &a), 0);
    CHECK_UINT(refit("", "carriers=256,occupancy=off", &a), 0);
    CHECK(a.occupancy == OCCUPANCY_OFF);
    /* not given: the first load's values go on */
    CHECK_UINT(refit("carriers=8,ring=128,occupancy=exact", "trace", &a), 0);
    CHECK_UINT(a.max_carriers, 8);
    CHECK_UINT(a.ring_entries, 128);
    CHECK(a.occupancy == OCCUPANCY_EXACT);
    CHECK_UINT(refit("occupancy=exact", "occupancy=sampled", &a), VTPIN_FIXED_OCCUPANCY);
    CHECK_UINT(refit("occupancy=exact", "occupancy=exact", &a), 0);
}

/* hog=: a duration, 0 off; in effect at least two watchdog samples. */
static void test_hog(void)
{
    struct options o;
    char err[256];
    options_defaults(&o);
    CHECK_UINT(o.hog_ns, 200 * NS_PER_MS);
    CHECK_UINT(options_hog_ns(&o), 200 * NS_PER_MS);
    CHECK_INT(parse(&o, "hog=50ms", err, sizeof(err)), 0);
    CHECK_UINT(options_hog_ns(&o), 50 * NS_PER_MS);
    CHECK_INT(parse(&o, "hog=0", err, sizeof(err)), 0);
    CHECK_UINT(options_hog_ns(&o), 0);
    CHECK_INT(parse(&o, "hog=5ms,sample=10ms", err, sizeof(err)), 0);
    CHECK_UINT(options_hog_ns(&o), 20 * NS_PER_MS);
    CHECK_INT(parse(&o, "hog=soon", err, sizeof(err)), -EINVAL);
    CHECK(strstr(err, "hog") != NULL);
}

/* record_mode=: octal, the owner reads and writes, no execute or special bits */
static void test_record_mode(void)
{
    struct options o;
    char err[256];
    options_defaults(&o);
    CHECK_INT(parse(&o, "record=/tmp/r.vtp,record_mode=0640", err, sizeof(err)), 0);
    CHECK_UINT(o.record_mode, 0640);
    CHECK_INT(parse(&o, "record_mode:644", err, sizeof(err)), 0);
    CHECK_UINT(o.record_mode, 0644);
    CHECK_INT(parse(&o, "record_mode=0600", err, sizeof(err)), 0);
    CHECK_UINT(o.record_mode, 0600);
    static const char *const bad[] = {"record_mode=",      "record_mode",      "record_mode=0400", "record_mode=0700",
                                      "record_mode=0755",  "record_mode=4600", "record_mode=0680", "record_mode=rw",
                                      "record_mode=00640", "record_mode=-600"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        expect_bad_value(bad[i], "record_mode");
}

/* record_max= and record_keep=: a size of at least 64k or 0 (never), a count from 1 */
static void test_record_rotation(void)
{
    struct options o;
    char err[256];
    options_defaults(&o);
    CHECK_UINT(o.record_max, 256u << 20); /* a recording is bounded unless asked */
    CHECK_UINT(o.record_keep, 3);
    CHECK_INT(parse(&o, "record=/tmp/r.vtp,record_max=64k,record_keep=1", err, sizeof(err)), 0);
    CHECK_UINT(o.record_max, 64u << 10);
    CHECK_UINT(o.record_keep, 1);
    CHECK_INT(parse(&o, "record_max:2g,record_keep:1000", err, sizeof(err)), 0);
    CHECK_UINT(o.record_max, 2ull << 30);
    CHECK_UINT(o.record_keep, 1000);
    CHECK_INT(parse(&o, "record_max=0", err, sizeof(err)), 0);
    CHECK_UINT(o.record_max, 0);
    static const char *const bad_max[] = {"record_max=",   "record_max",      "record_max=63k", "record_max=1",
                                          "record_max=-1", "record_max=lots", "record_max=1t"};
    for (size_t i = 0; i < sizeof(bad_max) / sizeof(bad_max[0]); i++)
        expect_bad_value(bad_max[i], "record_max");
    static const char *const bad_keep[] = {"record_keep=",     "record_keep",    "record_keep=0",
                                           "record_keep=1001", "record_keep=-1", "record_keep=two"};
    for (size_t i = 0; i < sizeof(bad_keep) / sizeof(bad_keep[0]); i++)
        expect_bad_value(bad_keep[i], "record_keep");
}

/* collector_owner=: a uid or a user name of the passwd database; none by default */
static void test_collector_owner(void)
{
    struct options o;
    char err[256];
    options_defaults(&o);
    CHECK_INT(o.collector_owner, -1);
    CHECK_INT(parse(&o, "collector=/tmp/c.sock,collector_owner=4242", err, sizeof(err)), 0);
    CHECK_INT(o.collector_owner, 4242);
    CHECK_INT(parse(&o, "collector_owner:root", err, sizeof(err)), 0);
    CHECK_INT(o.collector_owner, 0);
    CHECK_INT(parse(&o, "collector_owner=nobody", err, sizeof(err)), 0); /* Debian's: 65534 */
    CHECK_INT(o.collector_owner, 65534);
    static const char *const bad[] = {
        "collector_owner=",           "collector_owner",     "collector_owner=no-such-user-vtpin", "collector_owner=-1",
        "collector_owner=4294967295", "collector_owner=12ab"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        expect_bad_value(bad[i], "collector_owner");
}

int main(void)
{
    CHECK_RUN(test_defaults);
    CHECK_RUN(test_hog);
    CHECK_RUN(test_empty_input);
    CHECK_RUN(test_every_option_equals);
    CHECK_RUN(test_every_option_colon);
    CHECK_RUN(test_mixed_separators_and_paths);
    CHECK_RUN(test_trace);
    CHECK_RUN(test_downcalls);
    CHECK_RUN(test_flags);
    CHECK_RUN(test_unknown_and_empty_names);
    CHECK_RUN(test_bad_values);
    CHECK_RUN(test_path_lengths);
    CHECK_RUN(test_error_buffer);
    CHECK_RUN(test_durations);
    CHECK_RUN(test_stop_and_pid);
    CHECK_RUN(test_collector_path_length);
    CHECK_RUN(test_fixed_at_first_load);
    CHECK_RUN(test_record_mode);
    CHECK_RUN(test_record_rotation);
    CHECK_RUN(test_collector_owner);
    CHECK_MAIN_RETURN();
}
