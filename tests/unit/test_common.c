/* Unit tests for common/: the one duration syntax (units.c, with and without
 * bare milliseconds), the one frame formatter (frame_text.c), the one blocker
 * line (blocker_text.c) and write_all (io.c). */
#include "common/blocker_text.h"
#include "common/frame_text.h"
#include "common/io.h"
#include "common/json.h"
#include "common/strbuf.h"
#include "common/units.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static void test_durations(void)
{
    int64_t ns = -1;
    /* the same text, the same value, with or without the agent's flag */
    const char *both[] = {"250ms", "1.5s", "2m", "7ns", "0.5us", ".5ms", "1e3ms", "2.5E-3s", "0"};
    const int64_t want[] = {250000000, 1500000000, 120000000000LL, 7, 500, 500000, 1000000000, 2500000, 0};
    for (size_t i = 0; i < sizeof(both) / sizeof(both[0]); i++) {
        ns = -1;
        CHECK_INT(units_parse_duration(both[i], &ns), 0);
        CHECK_INT(ns, want[i]);
        ns = -1;
        CHECK_INT(units_parse_duration_flags(both[i], UNITS_BARE_MS, &ns), 0);
        CHECK_INT(ns, want[i]);
    }
    /* a bare number: milliseconds for the agent's options only */
    ns = -1;
    CHECK_INT(units_parse_duration("10", &ns), -EINVAL);
    CHECK_INT(ns, -1); /* untouched on error */
    CHECK_INT(units_parse_duration_flags("10", UNITS_BARE_MS, &ns), 0);
    CHECK_INT(ns, 10000000);
    CHECK_INT(units_parse_duration_flags("1.5", UNITS_BARE_MS, &ns), 0);
    CHECK_INT(ns, 1500000);
    /* not numbers this syntax knows, with the flag or without */
    const char *bad[] = {"",    "-1ms", "+1ms", " 1ms", "1ms ", "1 ms", "0x10s",  "inf", "infs",
                         "nan", ".",    "ms",   "1h",   "1e",   "1e+s", "1.2.3s", "1msx"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ns = -1;
        if (!CHECK_INT(units_parse_duration_flags(bad[i], UNITS_BARE_MS, &ns), -EINVAL) ||
            !CHECK_INT(units_parse_duration(bad[i], &ns), -EINVAL) || !CHECK_INT(ns, -1))
            fprintf(stderr, "    input: \"%s\"\n", bad[i]);
    }
    CHECK_INT(units_parse_duration(NULL, &ns), -EINVAL);
    CHECK_INT(units_parse_duration("1e30s", &ns), -ERANGE);
    CHECK_INT(units_parse_duration("1e400s", &ns), -ERANGE);
    CHECK_INT(units_parse_duration_flags("20000000000000000000", UNITS_BARE_MS, &ns), -ERANGE);
    CHECK_INT(units_parse_duration("9000000000s", &ns), 0);
    CHECK_INT(ns, 9000000000000000000LL);
}

static void test_sizes(void)
{
    char b[32];
    CHECK_STR(units_format_size(0, b, sizeof(b)), "0 B");
    CHECK_STR(units_format_size(1023, b, sizeof(b)), "1023 B");
    CHECK_STR(units_format_size(1024, b, sizeof(b)), "1 KiB");
    CHECK_STR(units_format_size(1536 * 1024, b, sizeof(b)), "1.5 MiB");
    CHECK_STR(units_format_size(256u << 20, b, sizeof(b)), "256 MiB");
    CHECK_STR(units_format_size(1ull << 40, b, sizeof(b)), "1 TiB");
    CHECK_STR(units_format_size(UINT64_MAX, b, sizeof(b)), "16777216.0 TiB");
}

static void test_frame_text(void)
{
    char out[256];
    struct frame_parts f = {
        .module = "java.base", .cls = "java.lang.Thread", .name = "sleep", .source = "Thread.java", .line = 507};
    CHECK_STR(frame_text(&f, out, sizeof(out)), "java.base/java.lang.Thread.sleep(Thread.java:507)");
    f.line = -1;
    CHECK_STR(frame_text(&f, out, sizeof(out)), "java.base/java.lang.Thread.sleep(Thread.java)");
    f.is_native = 1;
    CHECK_STR(frame_text(&f, out, sizeof(out)), "java.base/java.lang.Thread.sleep(Native Method)");
    struct frame_parts anon = {.module = "", .cls = "A$$Lambda", .name = "run", .line = 3};
    CHECK_STR(frame_text(&anon, out, sizeof(out)), "A$$Lambda.run(Unknown Source)"); /* "" module: none */
    struct frame_parts lost = {.source = "Repro.java", .line = 20};
    CHECK_STR(frame_text(&lost, out, sizeof(out)), "<unknown>.<unknown>(Repro.java:20)");
    CHECK_STR(frame_text(NULL, out, sizeof(out)), "<unknown method>");
    char small[8];
    struct frame_parts app = {.cls = "Repro", .name = "settle", .source = "Repro.java", .line = 20};
    CHECK_STR(frame_text(&app, small, sizeof(small)), "Repro.s"); /* cut, terminated */
}

static void test_blocker_text(void)
{
    char out[256];
    struct blocker_parts none = {0};
    CHECK_STR(blocker_text(&none, out, sizeof(out)), "");
    struct blocker_parts owner = {.what = BLOCKER_KIND_MONITOR,
                                  .object_class = "java.lang.Object",
                                  .has_thread = 1,
                                  .thread_name = "lock-owner",
                                  .state = "sleeping",
                                  .at = "Owner.holdLong(Owner.java:9)"};
    CHECK_STR(blocker_text(&owner, out, sizeof(out)),
              "blocked by \"lock-owner\" (platform, sleeping) at Owner.holdLong(Owner.java:9)");
    struct blocker_parts pinned = owner;
    pinned.is_virtual = 1;
    pinned.carrier = "ForkJoinPool-1-worker-2";
    pinned.state = NULL;
    pinned.pin = 7;
    pinned.at = NULL;
    CHECK_STR(blocker_text(&pinned, out, sizeof(out)),
              "blocked by \"lock-owner\" (virtual on ForkJoinPool-1-worker-2, state unknown, itself pinned: pin #7)");
    pinned.carrier = "ignored"; /* a platform owner has no carrier */
    pinned.is_virtual = 0;
    pinned.pin = 0;
    CHECK_STR(blocker_text(&pinned, out, sizeof(out)), "blocked by \"lock-owner\" (platform, state unknown)");
    struct blocker_parts unowned = {.what = BLOCKER_KIND_MONITOR, .object_class = "A"};
    CHECK_STR(blocker_text(&unowned, out, sizeof(out)), "blocked entering a A monitor (its owner not known)");
    struct blocker_parts wait = {.what = BLOCKER_KIND_NOTIFY, .object_class = "java.lang.Object"};
    CHECK_STR(blocker_text(&wait, out, sizeof(out)), "waits for notify on a java.lang.Object");
    wait.object_class = NULL;
    CHECK_STR(blocker_text(&wait, out, sizeof(out)), "waits for notify (JVMTI does not say on what)");
    struct blocker_parts init = {.what = BLOCKER_KIND_CLASS_INIT,
                                 .object_class = "A$Slow",
                                 .has_thread = 1,
                                 .thread_name = "initializer",
                                 .state = "sleeping",
                                 .at = "A.sleepInInit(A.java:24)"};
    CHECK_STR(blocker_text(&init, out, sizeof(out)),
              "waits for \"initializer\" (platform, sleeping) to initialize A$Slow at A.sleepInInit(A.java:24)");
    init.has_thread = 0;
    CHECK_STR(blocker_text(&init, out, sizeof(out)), "waits for the initialization of A$Slow (its thread not found)");
    struct blocker_parts lock = {.what = BLOCKER_KIND_LOCK,
                                 .object_class = "java.util.concurrent.locks.ReentrantLock$NonfairSync",
                                 .has_thread = 1,
                                 .thread_name = "lock-holder",
                                 .is_virtual = 1,
                                 .state = "waiting for a carrier",
                                 .at = "LockChain.hold(LockChain.java:60)"};
    CHECK_STR(blocker_text(&lock, out, sizeof(out)),
              "blocked by \"lock-holder\" (virtual, unmounted, waiting for a carrier) holding a "
              "java.util.concurrent.locks.ReentrantLock$NonfairSync at LockChain.hold(LockChain.java:60)");
    lock.has_thread = 0;
    lock.object_class = "java.util.concurrent.Semaphore$NonfairSync";
    CHECK_STR(blocker_text(&lock, out, sizeof(out)),
              "parked on a java.util.concurrent.Semaphore$NonfairSync, which no single thread owns (held shared, or "
              "just released)");
    /* a chain: the owner waits for a lock held by a platform thread, which waits for a monitor whose
     * owner is not known, then (never said) one more hop: a hop with no owner ends the line */
    struct blocker_parts hops[3] = {{.what = BLOCKER_KIND_LOCK,
                                     .object_class = "java.util.concurrent.locks.ReentrantLock$NonfairSync",
                                     .has_thread = 1,
                                     .thread_name = "deep-holder",
                                     .state = "blocked"},
                                    {.what = BLOCKER_KIND_MONITOR, .object_class = "B"},
                                    {.what = BLOCKER_KIND_MONITOR, .has_thread = 1, .thread_name = "never"}};
    struct blocker_parts chained = {.what = BLOCKER_KIND_LOCK,
                                    .object_class = "L",
                                    .has_thread = 1,
                                    .thread_name = "lock-holder",
                                    .is_virtual = 1,
                                    .state = "parked",
                                    .chain = hops,
                                    .n_chain = 3};
    char longer[512];
    CHECK_STR(blocker_text(&chained, longer, sizeof(longer)),
              "blocked by \"lock-holder\" (virtual, unmounted, parked) holding a L; \"lock-holder\" in turn is blocked "
              "by \"deep-holder\" (platform, blocked) holding a java.util.concurrent.locks.ReentrantLock$NonfairSync; "
              "\"deep-holder\" in turn is blocked entering a B monitor (its owner not known)");
    CHECK_STR(blocker_text(&chained, out, 60),
              "blocked by \"lock-holder\" (virtual, unmounted, parked) holdi"); /* cut */
    char small[12];
    CHECK_STR(blocker_text(&owner, small, sizeof(small)), "blocked by "); /* cut, terminated */
    CHECK_STR(blocker_kind_name(BLOCKER_KIND_CLASS_INIT), "class_init");
    CHECK_STR(blocker_kind_name(BLOCKER_KIND_LOCK), "lock");
    CHECK(blocker_kind_name(BLOCKER_KIND_NONE) == NULL && blocker_kind_name(99) == NULL);
}

static void test_write_all(void)
{
    int p[2];
    if (!CHECK_INT(pipe(p), 0))
        return;
    uint8_t data[4096];
    for (size_t i = 0; i < sizeof(data); i++)
        data[i] = (uint8_t)i;
    CHECK_INT(io_write_all(p[1], data, sizeof(data)), 0);
    CHECK_INT(io_write_all(p[1], data, 0), 0);
    close(p[1]);
    uint8_t back[8192];
    size_t got = 0;
    ssize_t n;
    while ((n = read(p[0], back + got, sizeof(back) - got)) > 0)
        got += (size_t)n;
    close(p[0]);
    CHECK_UINT(got, sizeof(data));
    CHECK_MEM(back, data, sizeof(data));
    CHECK_INT(io_write_all(p[1], data, 1), -EBADF); /* closed */
    int full = open("/dev/full", O_WRONLY);
    if (full >= 0) {
        CHECK_INT(io_write_all(full, data, sizeof(data)), -ENOSPC);
        close(full);
    }
}

/* Appends across growth keep every byte and the terminating NUL. */
static void test_strbuf(void)
{
    struct strbuf b = {0};
    CHECK(b.s == NULL);
    strbuf_printf(&b, "%s", "");
    CHECK(b.s && b.len == 0 && b.s[0] == '\0');
    for (int i = 0; i < 1000; i++)
        strbuf_printf(&b, "%03d,", i);
    CHECK_UINT(b.len, 4000);
    CHECK(!b.oom && strlen(b.s) == 4000 && b.cap > b.len);
    CHECK(memcmp(b.s, "000,001,", 8) == 0 && memcmp(b.s + 3996, "999,", 4) == 0);
    strbuf_fini(&b);
    CHECK(b.s == NULL && b.len == 0 && b.cap == 0);
    strbuf_fini(&b); /* twice is safe */
}

/* json_milli: thousandths as a decimal with three places (the Perfetto trace's microseconds). */
static void test_json_milli(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!CHECK(out))
        return;
    struct json j;
    json_init(&j, out);
    json_array_begin_inline(&j);
    json_milli(&j, 1234567);
    json_milli(&j, 5);
    json_milli(&j, 0);
    json_milli(&j, -1500);
    json_milli(&j, INT64_MIN); /* saturates instead of overflowing */
    json_array_end(&j);
    CHECK_INT(json_finish(&j), 0);
    fclose(out);
    CHECK_STR(text, "[1234.567, 0.005, 0.000, -1.500, -9223372036854775.807]\n");
    free(text);
}

/* One small document of every kind of value, nested, with a name that would end a <script> element. */
static char *json_sample(unsigned opts)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!CHECK(out))
        return NULL;
    struct json j;
    json_init_opt(&j, out, opts);
    json_object_begin(&j);
    json_kv_string(&j, "name", "</script><!--&");
    json_kv_string(&j, "<k>", NULL);
    json_key(&j, "n");
    json_array_begin(&j);
    json_int(&j, -1);
    json_uint(&j, UINT64_MAX);
    json_array_begin_inline(&j);
    json_bool(&j, 1);
    json_null(&j);
    json_array_end(&j);
    json_object_begin(&j);
    json_object_end(&j);
    json_array_end(&j);
    json_key(&j, "e");
    json_array_begin(&j);
    json_array_end(&j);
    json_key(&j, "o");
    json_object_begin_inline(&j);
    json_kv_bool(&j, "f", 0);
    json_kv_int(&j, "i", 7);
    json_object_end(&j);
    json_object_end(&j);
    CHECK_INT(json_finish(&j), 0);
    fclose(out);
    return text;
}

/* JSON_COMPACT: no space or newline anywhere, nested containers and inline ones alike, and none at the end;
 * JSON_EMBED_HTML escapes keys and strings through the writer; json_init's layout is unchanged. */
static void test_json_opts(void)
{
    char *t = json_sample(JSON_COMPACT | JSON_EMBED_HTML);
    CHECK_STR(t, "{\"name\":\"\\u003c/script\\u003e\\u003c!--\\u0026\",\"\\u003ck\\u003e\":null,"
                 "\"n\":[-1,18446744073709551615,[true,null],{}],\"e\":[],\"o\":{\"f\":false,\"i\":7}}");
    free(t);
    t = json_sample(JSON_COMPACT);
    CHECK_STR(t, "{\"name\":\"</script><!--&\",\"<k>\":null,\"n\":[-1,18446744073709551615,[true,null],{}],"
                 "\"e\":[],\"o\":{\"f\":false,\"i\":7}}");
    free(t);
    const char *pretty = "{\n"
                         "  \"name\": %s,\n"
                         "  %s: null,\n"
                         "  \"n\": [\n"
                         "    -1,\n"
                         "    18446744073709551615,\n"
                         "    [true, null],\n"
                         "    {}\n"
                         "  ],\n"
                         "  \"e\": [],\n"
                         "  \"o\": {\"f\": false, \"i\": 7}\n"
                         "}\n";
    char want[512];
    snprintf(want, sizeof(want), pretty, "\"</script><!--&\"", "\"<k>\"");
    CHECK_STR(t = json_sample(0), want);
    free(t);
    snprintf(want, sizeof(want), pretty, "\"\\u003c/script\\u003e\\u003c!--\\u0026\"", "\"\\u003ck\\u003e\"");
    CHECK_STR(t = json_sample(JSON_EMBED_HTML), want);
    free(t);
}

int main(void)
{
    CHECK_RUN(test_durations);
    CHECK_RUN(test_sizes);
    CHECK_RUN(test_frame_text);
    CHECK_RUN(test_blocker_text);
    CHECK_RUN(test_write_all);
    CHECK_RUN(test_strbuf);
    CHECK_RUN(test_json_milli);
    CHECK_RUN(test_json_opts);
    CHECK_MAIN_RETURN();
}
