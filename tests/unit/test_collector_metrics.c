/* Unit tests for the collector's metrics: label escaping, the --metrics
 * address rules (loopback only unless allowed), pinned time by reason and
 * site (pinstats), and the exposition read back line by line: valid names,
 * HELP and TYPE once before each family's samples, escaped labels, the
 * values, the site bound, counters that only grow, one series per pid,
 * carrier hogs. */
#include "jvms.h"
#include "metrics.h"
#include "metrics_http.h"
#include "pinstats.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "collector_events.h"
#include "common/frames_kind.h"

#define MS 1000000LL
#define SEC 1000000000LL
#define START_UNIX 1700000000000000000LL

/* ---- escaping and addresses ------------------------------------------------ */

static void test_escape(void)
{
    char out[64];
    CHECK_STR(metrics_escape_label("a\"b\\c\nd", out, sizeof(out)), "a\\\"b\\\\c\\nd");
    CHECK_STR(metrics_escape_label("Foo.bar(Foo.java:12)", out, sizeof(out)), "Foo.bar(Foo.java:12)");
    CHECK_STR(metrics_escape_label(NULL, out, sizeof(out)), "");
    /* invalid UTF-8 and the JVM's encoded NUL become U+FFFD; valid text stays */
    CHECK_STR(metrics_escape_label("x\xffy", out, sizeof(out)), "x\xef\xbf\xbdy");
    CHECK_STR(metrics_escape_label("a\xc0\x80z", out, sizeof(out)), "a\xef\xbf\xbdz");
    CHECK_STR(metrics_escape_label("caf\xc3\xa9", out, sizeof(out)), "caf\xc3\xa9");
    /* cut on a character or escape boundary, never inside one */
    CHECK_STR(metrics_escape_label("caf\xc3\xa9", out, 5), "caf");
    CHECK_STR(metrics_escape_label("ab\"", out, 4), "ab");
}

static void test_parse_addr(void)
{
    struct sockaddr_storage ss;
    socklen_t len = 0;
    char err[512];
    CHECK_INT(metrics_http_parse_addr("127.0.0.1:9400", 0, &ss, &len, err, sizeof(err)), 0);
    CHECK_INT(ss.ss_family, AF_INET);
    CHECK_INT(ntohs(((struct sockaddr_in *)&ss)->sin_port), 9400);
    CHECK_INT(metrics_http_parse_addr("127.1.2.3:0", 0, &ss, &len, err, sizeof(err)), 0);
    CHECK_INT(metrics_http_parse_addr("localhost:80", 0, &ss, &len, err, sizeof(err)), 0);
    CHECK_INT(ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr), INADDR_LOOPBACK);
    CHECK_INT(metrics_http_parse_addr("[::1]:9400", 0, &ss, &len, err, sizeof(err)), 0);
    CHECK_INT(ss.ss_family, AF_INET6);
    CHECK_INT(len, sizeof(struct sockaddr_in6));
    /* not loopback: refused without listen_any, and the error names the flag */
    CHECK_INT(metrics_http_parse_addr("0.0.0.0:9400", 0, &ss, &len, err, sizeof(err)), -EACCES);
    CHECK_CONTAINS(err, "--metrics-listen-any");
    CHECK_INT(metrics_http_parse_addr("192.168.1.5:9400", 0, &ss, &len, err, sizeof(err)), -EACCES);
    CHECK_INT(metrics_http_parse_addr("[::]:9400", 0, &ss, &len, err, sizeof(err)), -EACCES);
    CHECK_INT(metrics_http_parse_addr("[::ffff:10.0.0.1]:9400", 0, &ss, &len, err, sizeof(err)), -EACCES);
    CHECK_INT(metrics_http_parse_addr("[::ffff:127.0.0.1]:9400", 0, &ss, &len, err, sizeof(err)), 0);
    CHECK_INT(metrics_http_parse_addr("0.0.0.0:9400", 1, &ss, &len, err, sizeof(err)), 0);
    CHECK_INT(metrics_http_parse_addr("[::]:9400", 1, &ss, &len, err, sizeof(err)), 0);
    /* malformed */
    const char *bad[] = {"9400",         ":9400",         "127.0.0.1:",       "127.0.0.1:65536",
                         "127.0.0.1:-1", "127.0.0.1:94x", "example.com:9400", "[::1:9400",
                         "[zz]:1",       "127.0.0.1:+5"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (!CHECK_INT(metrics_http_parse_addr(bad[i], 1, &ss, &len, err, sizeof(err)), -EINVAL))
            fprintf(stderr, "  accepted: %s\n", bad[i]);
}

/* ---- pinstats --------------------------------------------------------------- */

/* A pin's start and end as the JVM's table and the metrics take them (jvms.c's way). */
static int stats_start(struct pinstats *p, struct session_pins *t, uint64_t id, int reason, const char *site)
{
    Vtpin__V1__PinStart ps = VTPIN__V1__PIN_START__INIT;
    ps.pin_id = id;
    ps.reason = (Vtpin__V1__PinReason)reason;
    struct session_pin start = session_pin_of_start(&ps), *pin;
    int seen = session_pins_start(t, &start, &pin);
    if (seen == SESSION_PINS_NEW)
        pin->site = pinstats_site(p, site);
    return seen;
}

static void stats_end(struct pinstats *p, struct session_pins *t, uint64_t id, int64_t duration_ns)
{
    struct session_pin start;
    if (session_pins_end(t, SESSION_PIN, id, &start) == SESSION_PINS_ENDS)
        pinstats_end(p, &start, duration_ns);
}

static void test_pinstats(void)
{
    struct pinstats *p = pinstats_new();
    struct session_pins *t = NULL;
    if (!CHECK(p) || !CHECK_INT(session_pins_new(&t, 1024, 0), 0)) {
        pinstats_free(p);
        return;
    }
    CHECK_INT(stats_start(p, t, 1, 1, "A.a(A.java:1)"), SESSION_PINS_NEW);
    CHECK_INT(stats_start(p, t, 2, 2, NULL), SESSION_PINS_NEW);
    CHECK_INT(stats_start(p, t, 1, 1, "A.a(A.java:1)"), SESSION_PINS_AGAIN); /* re-sent after a reconnect */
    stats_end(p, t, 1, 300 * MS);
    stats_end(p, t, 1, 300 * MS); /* a second end of the same pin */
    stats_end(p, t, 7, 5 * SEC);  /* never started */
    stats_end(p, t, 2, 100 * MS);
    CHECK_UINT(p->reasons[1].count, 1);
    CHECK_UINT(p->reasons[1].ns, 300 * MS);
    CHECK_UINT(p->reasons[2].count, 1);
    CHECK_UINT(p->nsites, 2);
    CHECK_STR(p->sites[1].name, "unknown");
    CHECK_UINT(session_pins_in_progress(t), 0);
    /* an out-of-range reason counts as 0 (unknown) */
    stats_start(p, t, 3, 99, "A.a(A.java:1)");
    stats_end(p, t, 3, 1);
    CHECK_UINT(p->reasons[0].count, 1);
    /* the last reason of the schema has its own series (VM_BLOCK was folded into 0 once) */
    stats_start(p, t, 4, WIRE_REASON_COUNT - 1, "A.a(A.java:1)");
    stats_end(p, t, 4, 2 * MS);
    CHECK_UINT(p->reasons[WIRE_REASON_COUNT - 1].count, 1);
    CHECK_UINT(p->reasons[0].count, 1);
    /* the site bound: 20 named sites, the rest in other */
    char site[32];
    for (uint64_t i = 0; i < 30; i++) {
        snprintf(site, sizeof(site), "S.m%02u(S.java:1)", (unsigned)i);
        stats_start(p, t, 100 + i, 1, site);
        stats_end(p, t, 100 + i, 1 * MS);
    }
    CHECK_UINT(p->nsites, PINSTATS_SITES);
    CHECK_UINT(p->other.count, 30 - (PINSTATS_SITES - 2));
    CHECK_UINT(p->other.ns, (30 - (PINSTATS_SITES - 2)) * MS);
    /* the JDK's own pins have their series too */
    struct session_pin jdk = {.id = 500, .reason = 1, .origin = PIN_ORIGIN_JDK, .site = -1};
    pinstats_end(p, &jdk, 4 * MS);
    CHECK_UINT(p->jdk[1].count, 1);
    CHECK_UINT(p->jdk[1].ns, 4 * MS);
    session_pins_free(t);
    pinstats_free(p);
}

/* ---- the exposition --------------------------------------------------------- */

static struct jvms_config config(void)
{
    struct jvms_config c = {
        .max_carriers = 16,
        .window_ns = 10 * SEC,
        .bucket_ns = SEC,
        .linger_ns = 60 * SEC,
        .max_jvms = 4,
        .alert = {.k = 0, .hold_ns = 100 * MS},
    };
    return c;
}

static struct session *session_of(int64_t pid, int64_t start_unix, const char *app)
{
    Vtpin__V1__Hello h = VTPIN__V1__HELLO__INIT;
    h.schema_version = WIRE_SCHEMA_VERSION;
    h.pid = pid;
    h.java_version = "21.0.5";
    h.vm_vendor = "Eclipse \"Adoptium\"";
    h.app = (char *)app;
    h.has_start_unix_ns = 1;
    h.start_unix_ns = start_unix;
    h.has_occupancy = 1;
    h.occupancy = VTPIN__V1__OCCUPANCY_SOURCE__OCCUPANCY_EXACT;
    WireEvent e = VTPIN__V1__EVENT__INIT;
    e.body_case = VTPIN__V1__EVENT__BODY_HELLO;
    e.hello = &h;
    WireEvent *ev = ev_roundtrip(&e);
    struct session *s = NULL;
    struct session_defs_limits limits = SESSION_LIMITS_DEFAULT;
    if (ev)
        session_new(&s, ev->hello, &limits);
    wire_event_free(ev);
    return s;
}

static WireEvent *pin_end(uint64_t pin, int64_t end, int64_t duration)
{
    Vtpin__V1__PinEnd p = VTPIN__V1__PIN_END__INIT;
    p.pin_id = pin;
    p.end_ns = end;
    p.duration_ns = duration;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_PIN_END;
    ev.pin_end = &p;
    return ev_roundtrip(&ev);
}

static int feed(struct jvm *j, struct session *s, WireEvent *ev, int64_t now)
{
    if (!ev)
        return -EINVAL;
    int rc = session_define(s, ev);
    if (rc == 0)
        rc = jvm_apply(j, s, ev, now);
    else if (rc == 1)
        rc = 0;
    wire_event_free(ev);
    return rc;
}

/* Two carriers, methods Repro.settle and a class with a quote and backslash in its name. */
static void setup_agent(struct jvm *j, struct session *s, int64_t t)
{
    CHECK_INT(feed(j, s, ev_string(1, "ForkJoinPool-1-worker-1"), t), 0);
    CHECK_INT(feed(j, s, ev_string(2, "ForkJoinPool-1-worker-2"), t), 0);
    CHECK_INT(feed(j, s, ev_string(3, "Repro"), t), 0);
    CHECK_INT(feed(j, s, ev_string(4, "settle"), t), 0);
    CHECK_INT(feed(j, s, ev_string(5, "Repro.java"), t), 0);
    CHECK_INT(feed(j, s, ev_string(6, "Odd\"Name\\"), t), 0);
    CHECK_INT(feed(j, s, ev_method(1, 3, 4, 5, 0, 0), t), 0);
    CHECK_INT(feed(j, s, ev_method(2, 6, 4, 0, 0, 0), t), 0);
    uint32_t m1[] = {1}, m2[] = {2};
    int32_t l[] = {20};
    CHECK_INT(feed(j, s, ev_stack(1, 1, m1, l), t), 0);
    CHECK_INT(feed(j, s, ev_stack(2, 1, m2, l), t), 0);
    CHECK_INT(feed(j, s, ev_carrier(101, 1, t), t), 0);
    CHECK_INT(feed(j, s, ev_carrier(102, 2, t), t), 0);
    int64_t times[] = {t}, v1[] = {19}, v2[] = {0};
    CHECK_INT(feed(j, s, ev_transitions(101, 1, times, 1, v1), t), 0);
    CHECK_INT(feed(j, s, ev_transitions(102, 1, times, 1, v2), t), 0);
}

/* One sample line of the exposition. */
struct sample {
    char key[512]; /* name{labels} as written */
    double value;
};

struct parsed {
    struct sample samples[256];
    size_t n;
    char families[64][96]; /* in the order of their TYPE lines */
    size_t nfam;
};

static int name_ok(const char *s, size_t n)
{
    if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_' || s[0] == ':'))
        return 0;
    for (size_t i = 1; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == ':'))
            return 0;
    return 1;
}

/* The family a sample name belongs to (summary suffixes stripped when the family is one). */
static int belongs(const char *sample, size_t n, const char *family)
{
    size_t f = strlen(family);
    if (n == f && memcmp(sample, family, n) == 0)
        return 1;
    return n > f && memcmp(sample, family, f) == 0 &&
           (strncmp(sample + f, "_count", n - f) == 0 || strncmp(sample + f, "_sum", n - f) == 0);
}

/* Checks the syntax of text line by line and collects the samples. */
static int parse(const char *text, struct parsed *out)
{
    memset(out, 0, sizeof(*out));
    const char *line = text;
    char help_for[96] = "";
    int ok = 1;
    while (*line) {
        const char *eol = strchr(line, '\n');
        if (!CHECK(eol)) /* every line ends with a newline */
            return 0;
        size_t len = (size_t)(eol - line);
        if (len > 7 && strncmp(line, "# HELP ", 7) == 0) {
            const char *sp = memchr(line + 7, ' ', len - 7);
            size_t n = sp ? (size_t)(sp - line - 7) : 0;
            ok &= CHECK(sp && name_ok(line + 7, n) && n < sizeof(help_for));
            snprintf(help_for, sizeof(help_for), "%.*s", (int)n, line + 7);
        } else if (len > 7 && strncmp(line, "# TYPE ", 7) == 0) {
            char name[96], type[16];
            ok &= CHECK(sscanf(line, "# TYPE %95s %15s", name, type) == 2);
            ok &= CHECK_STR(name, help_for); /* HELP right before TYPE */
            ok &= CHECK(!strcmp(type, "counter") || !strcmp(type, "gauge") || !strcmp(type, "summary"));
            if (!strcmp(type, "counter"))
                ok &= CHECK(strlen(name) > 6 && !strcmp(name + strlen(name) - 6, "_total"));
            for (size_t i = 0; i < out->nfam; i++)
                ok &= CHECK(strcmp(out->families[i], name) != 0); /* each family once */
            if (out->nfam < 64)
                snprintf(out->families[out->nfam++], sizeof(out->families[0]), "%s", name);
        } else {
            ok &= CHECK(line[0] != '#' && len > 0);
            const char *p = line;
            while (p < eol && *p != '{' && *p != ' ')
                p++;
            size_t nlen = (size_t)(p - line);
            ok &= CHECK(name_ok(line, nlen));
            /* samples follow their own family's TYPE */
            ok &= CHECK(out->nfam > 0 && belongs(line, nlen, out->families[out->nfam - 1]));
            if (*p == '{') {
                p++;
                while (p < eol && *p != '}') {
                    const char *eq = memchr(p, '=', (size_t)(eol - p));
                    if (!CHECK(eq && eq[1] == '"' && name_ok(p, (size_t)(eq - p))))
                        return 0;
                    p = eq + 2;
                    while (p < eol && *p != '"') {
                        if (*p == '\\') {
                            ok &= CHECK(p[1] == '\\' || p[1] == '"' || p[1] == 'n');
                            p++;
                        }
                        p++;
                    }
                    if (!CHECK(p < eol))
                        return 0;
                    p++;
                    if (*p == ',')
                        p++;
                }
                if (!CHECK(p < eol && *p == '}'))
                    return 0;
                p++;
            }
            ok &= CHECK(*p == ' ');
            char *end;
            double v = strtod(p + 1, &end);
            ok &= CHECK(end == eol);
            if (out->n < 256) {
                struct sample *s = &out->samples[out->n++];
                snprintf(s->key, sizeof(s->key), "%.*s", (int)(p - line), line);
                s->value = v;
            }
        }
        line = eol + 1;
    }
    return ok;
}

static const struct sample *find(const struct parsed *m, const char *key)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->samples[i].key, key) == 0)
            return &m->samples[i];
    return NULL;
}

static double value(const struct parsed *m, const char *key)
{
    const struct sample *s = find(m, key);
    if (!s)
        fprintf(stderr, "no sample %s\n", key);
    return s ? s->value : -1;
}

static int render(struct jvms *r, int64_t now, struct parsed *m, char **text)
{
    struct metrics_info info = {.started_ns = 1 * SEC, .clients = 3};
    size_t len = 0;
    if (!CHECK_INT(metrics_render(r, &info, now, text, &len), 0))
        return 0;
    CHECK_UINT(strlen(*text), len);
    int ok = parse(*text, m);
    if (!ok)
        fprintf(stderr, "%s", *text);
    return ok;
}

#define L "jvm=\"4242\",app=\"com.example.My\\\"App\\\\\""

static void test_render(void)
{
    struct jvms_config cfg = config();
    struct jvms *r = NULL;
    CHECK_INT(jvms_new(&r, &cfg), 0);
    struct session *s = session_of(4242, START_UNIX, "com.example.My\"App\\");
    struct jvm *j = NULL;
    int owner;
    if (!CHECK(s) || !CHECK_INT(jvms_attach(r, s, NULL, &owner, 1 * SEC, &j), 0))
        return;
    int64_t t = 1 * SEC;
    setup_agent(j, s, t);
    /* two MONITOR pins at Repro.settle, one NATIVE at the odd class, one in progress */
    CHECK_INT(feed(j, s, ev_pin_start(1, t, 1, 19, 101, 1, 0), t), 0);
    CHECK_INT(feed(j, s, pin_end(1, t + 200 * MS, 200 * MS), t), 0);
    CHECK_INT(feed(j, s, ev_pin_start(2, t + 300 * MS, 1, 19, 101, 1, 0), t), 0);
    CHECK_INT(feed(j, s, pin_end(2, t + 400 * MS, 100 * MS), t), 0);
    CHECK_INT(feed(j, s, ev_pin_start(3, t + 500 * MS, 2, 22, 102, 2, 0), t), 0);
    CHECK_INT(feed(j, s, pin_end(3, t + 550 * MS, 50 * MS), t), 0);
    /* the JDK's own MONITOR pin (every frame the JDK's): its own origin series */
    CHECK_INT(feed(j, s, ev_string(60, "sun.nio.ch.Poller"), t), 0);
    CHECK_INT(feed(j, s, ev_string(61, "poll"), t), 0);
    CHECK_INT(feed(j, s, ev_method(60, 60, 61, 0, 0, 0), t), 0);
    uint32_t mjdk[] = {60};
    int32_t ljdk[] = {7};
    CHECK_INT(feed(j, s, ev_stack(60, 1, mjdk, ljdk), t), 0);
    CHECK_INT(feed(j, s, ev_pin_start(50, t + 550 * MS, 1, 22, 102, 60, 0), t), 0); /* 0 ns: no carrier time */
    CHECK_INT(feed(j, s, pin_end(50, t + 550 * MS, 0), t), 0);
    CHECK_INT(feed(j, s, ev_pin_start(4, t + 600 * MS, 1, 19, 101, 1, 0), t), 0);
    CHECK_INT(feed(j, s, ev_stats(5, 2), t), 0);

    struct parsed *m = calloc(2, sizeof(*m));
    char *text = NULL, *text2 = NULL;
    if (!CHECK(m) || !render(r, t + 1 * SEC, &m[0], &text))
        goto cleanup;
    CHECK_CONTAINS(text, "# TYPE jvm_threads_virtual_pinned_seconds summary\n");
    CHECK(value(&m[0], "jvm_threads_virtual_pinned_seconds_count{" L ",reason=\"MONITOR\",origin=\"app\"}") == 2);
    CHECK_CONTAINS(text,
                   "jvm_threads_virtual_pinned_seconds_sum{" L ",reason=\"MONITOR\",origin=\"app\"} 0.300000000\n");
    CHECK(value(&m[0], "jvm_threads_virtual_pinned_seconds_count{" L ",reason=\"NATIVE\",origin=\"app\"}") == 1);
    CHECK(value(&m[0], "jvm_threads_virtual_pinned_seconds_count{" L ",reason=\"MONITOR\",origin=\"jdk\"}") == 1);
    CHECK_CONTAINS(text,
                   "jvm_threads_virtual_pinned_seconds_sum{" L ",reason=\"MONITOR\",origin=\"jdk\"} 0.000000000\n");
    CHECK(!find(&m[0], "jvm_threads_virtual_pinned_seconds_count{" L ",reason=\"OBJECT_WAIT\"}"));
    CHECK(value(&m[0], "vtpin_pin_site_seconds_total{" L ",site=\"Repro.settle(Repro.java:20)\"}") == 0.3);
    CHECK(value(&m[0], "vtpin_pin_site_seconds_total{" L ",site=\"Odd\\\"Name\\\\.settle(Unknown Source)\"}") == 0.05);
    /* carrier 101 pinned now (pin 4); 102 busy: pin 3's thread stays mounted after it */
    CHECK(value(&m[0], "vtpin_carriers{" L ",state=\"pinned\"}") == 1);
    CHECK(value(&m[0], "vtpin_carriers{" L ",state=\"busy\"}") == 1);
    CHECK(value(&m[0], "vtpin_carriers{" L ",state=\"idle\"}") == 0);
    CHECK(value(&m[0], "vtpin_carriers{" L ",state=\"native_blocked\"}") == 0);
    /* over the first second: 101 busy 1.0, held 0.7; 102 idle 0.5, busy 0.5, held 0.05 */
    CHECK(value(&m[0], "vtpin_carrier_busy_ratio{" L "}") == 0.75);
    CHECK(value(&m[0], "vtpin_carrier_held_ratio{" L "}") == 0.375);
    CHECK(value(&m[0], "vtpin_carrier_idle_ratio{" L "}") == 0.25);
    CHECK(value(&m[0], "vtpin_carrier_seconds_total{" L ",state=\"held\"}") == 0.75);
    CHECK(value(&m[0], "vtpin_starvation_alert{" L "}") == 0);
    CHECK(value(&m[0], "vtpin_events_dropped_total{" L ",kind=\"events\"}") == 5);
    CHECK(value(&m[0], "vtpin_events_dropped_total{" L ",kind=\"collector\"}") == 2);
    CHECK(value(&m[0], "vtpin_jvm_connected{" L "}") == 1);
    CHECK(find(&m[0], "vtpin_jvm_info{" L ",java_version=\"21.0.5\",vendor=\"Eclipse \\\"Adoptium\\\"\",occupancy="
                      "\"exact\",ns_pid=\"4242\",source=\"agent\"}"));
    CHECK(value(&m[0], "vtpin_events_dropped_total{" L ",kind=\"recording\"}") == 0);
    CHECK(value(&m[0], "vtpin_recording_stopped{" L "}") == 0);
    CHECK(value(&m[0], "vtpin_recording_errors_total{" L "}") == 0);
    CHECK(value(&m[0], "vtpin_collector_connections") == 3);

    /* more pins, a disconnect: every counter only grows */
    CHECK_INT(feed(j, s, pin_end(4, t + 2 * SEC, 1400 * MS), t), 0);
    CHECK_INT(feed(j, s, ev_pin_start(5, t + 2 * SEC, 3, 19, 101, 1, 0), t), 0);
    CHECK_INT(feed(j, s, pin_end(5, t + 3 * SEC, 1 * SEC), t), 0);
    jvms_detach(r, j, &owner, t + 3 * SEC);
    if (!render(r, t + 4 * SEC, &m[1], &text2))
        goto cleanup;
    for (size_t i = 0; i < m[0].n; i++) {
        const char *k = m[0].samples[i].key;
        if (strstr(k, "_total{") || strstr(k, "_count{") || strstr(k, "_sum{")) {
            const struct sample *later = find(&m[1], k);
            if (!CHECK(later && later->value >= m[0].samples[i].value))
                fprintf(stderr, "  %s went from %g to %g\n", k, m[0].samples[i].value, later ? later->value : -1);
        }
    }
    CHECK(value(&m[1], "jvm_threads_virtual_pinned_seconds_count{" L ",reason=\"MONITOR\",origin=\"app\"}") == 3);
    CHECK(value(&m[1], "jvm_threads_virtual_pinned_seconds_count{" L ",reason=\"CRITICAL_SECTION\",origin=\"app\"}") ==
          1);
    CHECK(value(&m[1], "vtpin_pin_site_seconds_total{" L ",site=\"Repro.settle(Repro.java:20)\"}") == 2.7);
    CHECK(value(&m[1], "vtpin_jvm_connected{" L "}") == 0);
cleanup:
    free(text);
    free(text2);
    free(m);
    session_free(s);
    jvms_free(r);
}

/* Carrier hogs: counted, their time (ended and in progress), the carriers hogged now (busy in vtpin_carriers). */
static void test_hogs(void)
{
    struct jvms_config cfg = config();
    struct jvms *r = NULL;
    CHECK_INT(jvms_new(&r, &cfg), 0);
    struct session *s = session_of(4242, START_UNIX, "com.example.My\"App\\");
    struct jvm *j = NULL;
    int owner;
    if (!CHECK(s) || !CHECK_INT(jvms_attach(r, s, NULL, &owner, 1 * SEC, &j), 0))
        return;
    int64_t t = 1 * SEC;
    setup_agent(j, s, t);
    struct parsed *m = calloc(3, sizeof(*m));
    char *text[3] = {NULL, NULL, NULL};
    if (!CHECK(m) || !render(r, t, &m[0], &text[0]))
        goto cleanup;
    CHECK(value(&m[0], "vtpin_hogs_total{" L "}") == 0);
    CHECK_CONTAINS(text[0], "vtpin_hog_seconds_total{" L "} 0.000000000\n");
    CHECK(value(&m[0], "vtpin_carriers_hogged{" L "}") == 0);

    CHECK_INT(feed(j, s, ev_hog_start(1, t + 200 * MS, 19, 101, 1, 0), t + 400 * MS), 0);
    if (!render(r, t + 1 * SEC, &m[1], &text[1]))
        goto cleanup;
    CHECK_CONTAINS(text[1], "# TYPE vtpin_hogs_total counter\n");
    CHECK_CONTAINS(text[1], "# TYPE vtpin_hog_seconds_total counter\n");
    CHECK_CONTAINS(text[1], "# TYPE vtpin_carriers_hogged gauge\n");
    CHECK(value(&m[1], "vtpin_hogs_total{" L "}") == 1);
    CHECK_CONTAINS(text[1], "vtpin_hog_seconds_total{" L "} 0.800000000\n"); /* in progress */
    CHECK(value(&m[1], "vtpin_carriers_hogged{" L "}") == 1);
    CHECK(value(&m[1], "vtpin_carriers{" L ",state=\"busy\"}") == 1); /* the hog runs */
    CHECK(value(&m[1], "vtpin_carriers{" L ",state=\"idle\"}") == 1);
    CHECK(value(&m[1], "vtpin_carriers{" L ",state=\"pinned\"}") == 0);
    CHECK(value(&m[1], "vtpin_carrier_seconds_total{" L ",state=\"held\"}") == 0); /* not pinned time */

    /* it ends; a second one is ended by a pin */
    CHECK_INT(feed(j, s, ev_hog_end(1, t + 200 * MS, t + 1500 * MS), t + 1500 * MS), 0);
    CHECK_INT(feed(j, s, ev_hog_start(2, t + 1600 * MS, 19, 101, 1, 0), t + 1800 * MS), 0);
    CHECK_INT(feed(j, s, ev_pin_start(3, t + 1900 * MS, 1, 19, 101, 1, 0), t + 1900 * MS), 0);
    if (!render(r, t + 2 * SEC, &m[2], &text[2]))
        goto cleanup;
    CHECK(value(&m[2], "vtpin_hogs_total{" L "}") == 2);
    CHECK_CONTAINS(text[2], "vtpin_hog_seconds_total{" L "} 1.600000000\n"); /* 1.3 s + 0.3 s */
    CHECK(value(&m[2], "vtpin_carriers_hogged{" L "}") == 0);
    CHECK(value(&m[2], "vtpin_carriers{" L ",state=\"pinned\"}") == 1);
    for (int k = 1; k < 3; k++)
        for (size_t i = 0; i < m[k - 1].n; i++) {
            const char *key = m[k - 1].samples[i].key;
            if (strstr(key, "_total{")) {
                const struct sample *later = find(&m[k], key);
                if (!CHECK(later && later->value >= m[k - 1].samples[i].value))
                    fprintf(stderr, "  %s went from %g to %g\n", key, m[k - 1].samples[i].value,
                            later ? later->value : -1);
            }
        }
cleanup:
    for (int k = 0; k < 3; k++)
        free(text[k]);
    free(m);
    session_free(s);
    jvms_free(r);
}

/* A pid reused while the old JVM lingers: one series set, the newest JVM's. */
static void test_reused_pid(void)
{
    struct jvms_config cfg = config();
    struct jvms *r = NULL;
    CHECK_INT(jvms_new(&r, &cfg), 0);
    struct session *old = session_of(77, START_UNIX, "Old"), *young = session_of(77, START_UNIX + SEC, "New");
    struct jvm *a = NULL, *b = NULL;
    int o1, o2;
    if (!CHECK(old && young) || !CHECK_INT(jvms_attach(r, old, NULL, &o1, 1 * SEC, &a), 0))
        goto cleanup;
    jvms_detach(r, a, &o1, 2 * SEC);
    if (!CHECK_INT(jvms_attach(r, young, NULL, &o2, 3 * SEC, &b), 0))
        goto cleanup;
    CHECK_UINT(jvms_count(r), 2);
    struct parsed *m = calloc(1, sizeof(*m));
    char *text = NULL;
    if (CHECK(m) && render(r, 4 * SEC, m, &text)) {
        CHECK(value(m, "vtpin_collector_jvms") == 1);
        CHECK(value(m, "vtpin_jvm_connected{jvm=\"77\",app=\"New\"}") == 1);
        CHECK(!strstr(text, "app=\"Old\""));
    }
    free(text);
    free(m);
cleanup:
    session_free(old);
    session_free(young);
    jvms_free(r);
}

int main(void)
{
    CHECK_RUN(test_escape);
    CHECK_RUN(test_parse_addr);
    CHECK_RUN(test_pinstats);
    CHECK_RUN(test_render);
    CHECK_RUN(test_hogs);
    CHECK_RUN(test_reused_pid);
    CHECK_MAIN_RETURN();
}
