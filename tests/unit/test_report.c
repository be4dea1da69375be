/* Unit tests for vtpin report (cli/): recordings built here with protobuf-c
 * and wire_pack are loaded into the model, ranked into sites and formatted
 * as text and JSON. Also: files cut short, bad magic, oversized and
 * malformed frames, undefined ids, several sessions, hostile strings. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "common/frames_kind.h"
#include "common/idmap.h"
#include "common/json.h"
#include "common/jsonread.h"
#include "common/units.h"
#include "common/utf8.h"
#include "recording.h"
#include "report.h"
#include "sites.h"
#include "wire.h"

#define MS 1000000LL
#define SEC 1000000000LL
#define START_UNIX 1700000000000000000LL
#define START_MONO (1 * SEC)

static char tmpdir[] = "/tmp/vtpin-test-report.XXXXXX";

/* ---- building recordings ---------------------------------------------- */

struct buf {
    uint8_t *data;
    size_t len, cap;
};

static void buf_put(struct buf *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t ncap = b->cap ? b->cap : 4096;
        while (ncap < b->len + n)
            ncap *= 2;
        uint8_t *d = realloc(b->data, ncap);
        if (!d) {
            fprintf(stderr, "out of memory\n");
            exit(2);
        }
        b->data = d;
        b->cap = ncap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

static void buf_magic(struct buf *b)
{
    buf_put(b, WIRE_MAGIC, WIRE_MAGIC_LEN);
}

/* Appends one frame; returns the offset it starts at. */
static size_t put_event(struct buf *b, const WireEvent *ev)
{
    size_t at = b->len;
    size_t need = wire_packed_size(ev);
    uint8_t *tmp = malloc(need);
    ssize_t n = tmp ? wire_pack(ev, tmp, need, RECORDING_MAX_FRAME) : -ENOMEM;
    if (CHECK_INT(n, (ssize_t)need))
        buf_put(b, tmp, (size_t)n);
    free(tmp);
    return at;
}

static size_t ev_hello(struct buf *b, int64_t pid, const char *java_version)
{
    Vtpin__V1__Hello h = VTPIN__V1__HELLO__INIT;
    h.schema_version = WIRE_SCHEMA_VERSION;
    h.pid = pid;
    h.java_version = (char *)java_version;
    h.vm_name = "OpenJDK 64-Bit Server VM";
    h.vm_version = "21.0.5+11-LTS";
    h.vm_vendor = "Eclipse Adoptium";
    h.host = "build-host";
    h.agent_version = "0.1.0";
    h.options = "record=app.vtp,threshold=0";
    h.has_mode = 1;
    h.mode = VTPIN__V1__LOAD_MODE__STARTUP;
    h.has_start_unix_ns = h.has_start_mono_ns = 1;
    h.start_unix_ns = START_UNIX;
    h.start_mono_ns = START_MONO;
    h.has_threshold_ns = 1;
    h.threshold_ns = 0;
    h.has_jdk_feature = 1;
    h.jdk_feature = 21;
    h.has_parallelism = 1;
    h.parallelism = 4;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_HELLO;
    ev.hello = &h;
    return put_event(b, &ev);
}

static size_t ev_string(struct buf *b, uint32_t id, const char *value)
{
    Vtpin__V1__StringDef d = VTPIN__V1__STRING_DEF__INIT;
    d.id = id;
    d.value = (char *)value;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_STRING;
    ev.string = &d;
    return put_event(b, &ev);
}

/* A method; 0 for an optional string id leaves it out. */
static size_t ev_method(struct buf *b, uint32_t id, uint32_t cls, uint32_t name, uint32_t source, int native,
                        uint32_t library, uint32_t module)
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
    d.has_module = module != 0;
    d.module = module;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_METHOD;
    ev.method = &d;
    return put_event(b, &ev);
}

struct fspec {
    uint32_t method;
    int32_t line;
    int64_t bci;
    uint32_t monitors;
};

static size_t ev_stack(struct buf *b, uint32_t id, const struct fspec *f, size_t n)
{
    Vtpin__V1__Frame frames[64];
    Vtpin__V1__Frame *ptrs[64];
    if (!CHECK(n <= 64))
        return b->len;
    for (size_t i = 0; i < n; i++) {
        Vtpin__V1__Frame init = VTPIN__V1__FRAME__INIT;
        frames[i] = init;
        frames[i].method = f[i].method;
        frames[i].has_line = 1;
        frames[i].line = f[i].line;
        frames[i].has_bci = 1;
        frames[i].bci = f[i].bci;
        frames[i].has_monitors = f[i].monitors != 0;
        frames[i].monitors = f[i].monitors;
        ptrs[i] = &frames[i];
    }
    Vtpin__V1__StackDef d = VTPIN__V1__STACK_DEF__INIT;
    d.id = id;
    d.n_frames = n;
    d.frames = ptrs;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_STACK;
    ev.stack = &d;
    return put_event(b, &ev);
}

static size_t ev_pin_start(struct buf *b, uint64_t id, int64_t start, int reason, uint32_t stack, uint32_t culprit,
                           uint32_t vname, uint32_t cname)
{
    Vtpin__V1__PinStart p = VTPIN__V1__PIN_START__INIT;
    p.pin_id = id;
    p.start_ns = start;
    p.reason = (Vtpin__V1__PinReason)reason;
    p.has_vthread_id = 1;
    p.vthread_id = 100 + (int64_t)id;
    p.has_vthread_name = vname != 0;
    p.vthread_name = vname;
    p.has_carrier_tid = 1;
    p.carrier_tid = 4000 + (int32_t)id;
    p.has_carrier_name = cname != 0;
    p.carrier_name = cname;
    p.has_stack = stack != 0;
    p.stack = stack;
    p.has_culprit_frame = stack != 0;
    p.culprit_frame = culprit;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_PIN_START;
    ev.pin_start = &p;
    return put_event(b, &ev);
}

static size_t ev_pin_end(struct buf *b, uint64_t id, int64_t start, int64_t end)
{
    Vtpin__V1__PinEnd p = VTPIN__V1__PIN_END__INIT;
    p.pin_id = id;
    p.end_ns = end;
    p.duration_ns = end - start;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_PIN_END;
    ev.pin_end = &p;
    return put_event(b, &ev);
}

/* A carrier hog's start on carrier 4001 (named cname); stack 0 = none (and no culprit). */
static size_t ev_hog_start(struct buf *b, uint64_t id, int64_t start, int64_t vthread_id, uint32_t vname,
                           uint32_t cname, uint32_t stack, uint32_t culprit)
{
    Vtpin__V1__HogStart h = VTPIN__V1__HOG_START__INIT;
    h.hog_id = id;
    h.start_ns = start;
    h.has_vthread_id = 1;
    h.vthread_id = vthread_id;
    h.has_vthread_name = vname != 0;
    h.vthread_name = vname;
    h.has_carrier_tid = 1;
    h.carrier_tid = 4001;
    h.has_carrier_name = cname != 0;
    h.carrier_name = cname;
    h.has_stack = stack != 0;
    h.stack = stack;
    h.has_culprit_frame = stack != 0;
    h.culprit_frame = culprit;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_HOG_START;
    ev.hog_start = &h;
    return put_event(b, &ev);
}

/* Its end; last_running 0 = not said. */
static size_t ev_hog_end(struct buf *b, uint64_t id, int64_t start, int64_t end, int64_t last_running)
{
    Vtpin__V1__HogEnd h = VTPIN__V1__HOG_END__INIT;
    h.hog_id = id;
    h.end_ns = end;
    h.duration_ns = end - start;
    h.has_last_running_ns = last_running != 0;
    h.last_running_ns = last_running;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_HOG_END;
    ev.hog_end = &h;
    return put_event(b, &ev);
}

static void fill_stats(Vtpin__V1__Stats *s, int64_t time)
{
    s->time_ns = time;
    s->has_pins = s->has_pins_reported = s->has_pins_below_threshold = s->has_events_dropped = 1;
    s->has_stacks_dropped = s->has_carriers_started = s->has_compensations = 1;
    s->pins = 5;
    s->pins_reported = 3;
    s->pins_below_threshold = 2;
    s->events_dropped = 1;
    s->stacks_dropped = 0;
    s->carriers_started = 4;
    s->compensations = 0;
    s->has_pins_without_stack = 1;
    s->pins_without_stack = 1;
}

static size_t ev_notice(struct buf *b, int64_t time, const char *code, const char *text)
{
    Vtpin__V1__Notice n = VTPIN__V1__NOTICE__INIT;
    n.time_ns = time;
    n.severity = VTPIN__V1__SEVERITY__WARNING;
    n.code = (char *)code;
    n.text = (char *)text;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_NOTICE;
    ev.notice = &n;
    return put_event(b, &ev);
}

/* The session's end with these last counters, at their time. */
static size_t ev_goodbye_stats(struct buf *b, Vtpin__V1__Stats *s)
{
    Vtpin__V1__Goodbye g = VTPIN__V1__GOODBYE__INIT;
    g.time_ns = s->time_ns;
    g.stats = s;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_GOODBYE;
    ev.goodbye = &g;
    return put_event(b, &ev);
}

static size_t ev_goodbye(struct buf *b, int64_t time)
{
    Vtpin__V1__Stats s = VTPIN__V1__STATS__INIT;
    fill_stats(&s, time);
    return ev_goodbye_stats(b, &s);
}

enum {
    S_THREAD = 1,
    S_SLEEP,
    S_THREAD_JAVA,
    S_JAVA_BASE,
    S_DB,
    S_QUERY,
    S_DB_JAVA,
    S_JNI,
    S_CALL,
    S_LIBFOO,
    S_VNAME_TRICKY,
    S_VNAME_BAD,
    S_CARRIER,
    S_MAIN,
    S_APP,
    S_APP_JAVA,
    S_OTHER
};
enum { M_SLEEP = 1, M_QUERY, M_JNI_CALL, M_MAIN, M_OTHER };
enum { ST_A1 = 1, ST_A2, ST_B };

static const char tricky_name[] = "say \"hi\"\n\tbye\\ \x01";
static const char bad_utf8_name[] = "bad\xff\xfe name \xc0\x80 \xed\xa0\xbd\xed\xb8\x80";

/* The sample: site A (Db.query:42, MONITOR) has two pins on two stacks,
 * 100 ms and 300 ms; site B (native Jni.call, NATIVE) has one pin still in
 * progress at the end: 3.5 s to the last timestamp 4.0 s = 500 ms, so B ranks first. */
static void sample_events(struct buf *b, int with_goodbye)
{
    ev_hello(b, 4242, "21.0.5");
    ev_string(b, S_THREAD, "java.lang.Thread");
    ev_string(b, S_SLEEP, "sleep");
    ev_string(b, S_THREAD_JAVA, "Thread.java");
    ev_string(b, S_JAVA_BASE, "java.base");
    ev_string(b, S_DB, "com.example.Db");
    ev_string(b, S_QUERY, "query");
    ev_string(b, S_DB_JAVA, "Db.java");
    ev_string(b, S_JNI, "com.example.Jni");
    ev_string(b, S_CALL, "call");
    ev_string(b, S_LIBFOO, "/opt/app/lib/libfoo.so");
    ev_string(b, S_VNAME_TRICKY, tricky_name);
    ev_string(b, S_VNAME_BAD, bad_utf8_name);
    ev_string(b, S_CARRIER, "ForkJoinPool-1-worker-1");
    ev_string(b, S_MAIN, "main");
    ev_string(b, S_APP, "com.example.App");
    ev_string(b, S_APP_JAVA, "App.java");
    ev_string(b, S_OTHER, "other");
    ev_method(b, M_SLEEP, S_THREAD, S_SLEEP, S_THREAD_JAVA, 0, 0, S_JAVA_BASE);
    ev_method(b, M_QUERY, S_DB, S_QUERY, S_DB_JAVA, 0, 0, 0);
    ev_method(b, M_JNI_CALL, S_JNI, S_CALL, 0, 1, S_LIBFOO, 0);
    ev_method(b, M_MAIN, S_APP, S_MAIN, S_APP_JAVA, 0, 0, 0);
    ev_method(b, M_OTHER, S_APP, S_OTHER, S_APP_JAVA, 0, 0, 0);
    struct fspec a1[] = {{M_SLEEP, 507, 53, 0}, {M_QUERY, 42, 7, 1}, {M_MAIN, 10, 3, 0}};
    struct fspec a2[] = {{M_SLEEP, 507, 53, 0}, {M_QUERY, 42, 7, 1}, {M_OTHER, 20, 5, 0}};
    struct fspec bst[] = {{M_SLEEP, 507, 53, 0}, {M_JNI_CALL, -1, -1, 0}, {M_MAIN, 11, 9, 0}};
    ev_stack(b, ST_A1, a1, 3);
    ev_stack(b, ST_A2, a2, 3);
    ev_stack(b, ST_B, bst, 3);
    ev_notice(b, 1 * SEC + 5 * MS, "capability.breakpoints", "park-based pins are \"not\" seen\nsecond line");
    ev_pin_start(b, 1, 2 * SEC, VTPIN__V1__PIN_REASON__MONITOR, ST_A1, 1, S_VNAME_TRICKY, S_CARRIER);
    ev_pin_end(b, 1, 2 * SEC, 2 * SEC + 100 * MS);
    ev_pin_start(b, 2, 2 * SEC + 200 * MS, VTPIN__V1__PIN_REASON__MONITOR, ST_A2, 1, S_VNAME_BAD, S_CARRIER);
    ev_pin_end(b, 2, 2 * SEC + 200 * MS, 2 * SEC + 500 * MS);
    ev_pin_start(b, 3, 3 * SEC + 500 * MS, VTPIN__V1__PIN_REASON__NATIVE, ST_B, 1, 0, S_CARRIER);
    Vtpin__V1__Stats s = VTPIN__V1__STATS__INIT;
    fill_stats(&s, 4 * SEC);
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_STATS;
    ev.stats = &s;
    put_event(b, &ev);
    if (with_goodbye)
        ev_goodbye(b, 4 * SEC);
}

static char *write_file(const char *name, const struct buf *b)
{
    static char path[512];
    snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (!CHECK(fd >= 0))
        return path;
    CHECK_INT(write(fd, b->data, b->len), (ssize_t)b->len);
    close(fd);
    return path;
}

static struct recording *load_ok(const char *path)
{
    struct recording *r = NULL;
    char err[512] = "";
    int rc = report_open(path, &r, err, sizeof(err));
    if (!CHECK_INT(rc, 0))
        fprintf(stderr, "    loading %s: %s\n", path, err);
    return r;
}

/* ---- a strict JSON validator (RFC 8259), for the formatter's output ---- */

struct jp {
    const char *s;
    size_t i, n;
    const char *error;
};

static void jp_ws(struct jp *p)
{
    while (p->i < p->n && strchr(" \t\r\n", p->s[p->i]))
        p->i++;
}

static int jp_fail(struct jp *p, const char *why)
{
    if (!p->error)
        p->error = why;
    return 0;
}

static int jp_value(struct jp *p, int depth);

static int jp_string(struct jp *p)
{
    if (p->i >= p->n || p->s[p->i] != '"')
        return jp_fail(p, "expected a string");
    p->i++;
    while (p->i < p->n) {
        unsigned char c = (unsigned char)p->s[p->i];
        if (c == '"') {
            p->i++;
            return 1;
        }
        if (c < 0x20)
            return jp_fail(p, "raw control character in a string");
        if (c == '\\') {
            if (++p->i >= p->n)
                return jp_fail(p, "cut escape");
            char e = p->s[p->i];
            if (e == 'u') {
                for (int k = 1; k <= 4; k++)
                    if (p->i + k >= p->n || !strchr("0123456789abcdefABCDEF", p->s[p->i + k]) || !p->s[p->i + k])
                        return jp_fail(p, "bad \\u escape");
                p->i += 5;
            } else if (e && strchr("\"\\/bfnrt", e)) {
                p->i++;
            } else {
                return jp_fail(p, "bad escape");
            }
            continue;
        }
        /* raw bytes must be standard UTF-8: decoding and re-encoding gives them back */
        uint32_t cp;
        int valid;
        size_t used = utf8_decode((const unsigned char *)p->s + p->i, p->n - p->i, &cp, &valid);
        char enc[4];
        size_t elen = utf8_encode(cp, enc);
        if (!valid || elen != used || memcmp(enc, p->s + p->i, used) != 0)
            return jp_fail(p, "invalid UTF-8 in a string");
        p->i += used;
    }
    return jp_fail(p, "unterminated string");
}

static int jp_number(struct jp *p)
{
    size_t start = p->i;
    if (p->i < p->n && p->s[p->i] == '-')
        p->i++;
    if (p->i < p->n && p->s[p->i] == '0') {
        p->i++;
    } else {
        if (p->i >= p->n || p->s[p->i] < '1' || p->s[p->i] > '9')
            return jp_fail(p, "bad number");
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
            p->i++;
    }
    if (p->i < p->n && p->s[p->i] == '.') {
        p->i++;
        size_t d = p->i;
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
            p->i++;
        if (d == p->i)
            return jp_fail(p, "bad fraction");
    }
    if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
        p->i++;
        if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-'))
            p->i++;
        size_t d = p->i;
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
            p->i++;
        if (d == p->i)
            return jp_fail(p, "bad exponent");
    }
    return p->i > start;
}

static int jp_container(struct jp *p, int depth, char close)
{
    p->i++;
    jp_ws(p);
    if (p->i < p->n && p->s[p->i] == close) {
        p->i++;
        return 1;
    }
    for (;;) {
        jp_ws(p);
        if (close == '}') {
            if (!jp_string(p))
                return 0;
            jp_ws(p);
            if (p->i >= p->n || p->s[p->i] != ':')
                return jp_fail(p, "expected ':'");
            p->i++;
        }
        if (!jp_value(p, depth + 1))
            return 0;
        jp_ws(p);
        if (p->i < p->n && p->s[p->i] == ',') {
            p->i++;
            jp_ws(p);
            if (p->i < p->n && p->s[p->i] == close)
                return jp_fail(p, "trailing comma");
            continue;
        }
        if (p->i < p->n && p->s[p->i] == close) {
            p->i++;
            return 1;
        }
        return jp_fail(p, "expected ',' or the end of a container");
    }
}

static int jp_value(struct jp *p, int depth)
{
    if (depth > 64)
        return jp_fail(p, "too deep");
    jp_ws(p);
    if (p->i >= p->n)
        return jp_fail(p, "expected a value");
    char c = p->s[p->i];
    if (c == '{')
        return jp_container(p, depth, '}');
    if (c == '[')
        return jp_container(p, depth, ']');
    if (c == '"')
        return jp_string(p);
    static const char *const literals[] = {"true", "false", "null"};
    for (size_t k = 0; k < 3; k++) {
        size_t len = strlen(literals[k]);
        if (p->n - p->i >= len && memcmp(p->s + p->i, literals[k], len) == 0) {
            p->i += len;
            return 1;
        }
    }
    return jp_number(p);
}

/* 1 when text is one valid JSON document; otherwise says where it breaks. */
static int json_valid(const char *text, size_t n)
{
    struct jp p = {text, 0, n, NULL};
    int ok = jp_value(&p, 0);
    jp_ws(&p);
    if (ok && p.i != n)
        ok = jp_fail(&p, "text after the document");
    if (!ok)
        fprintf(stderr, "    invalid JSON at byte %zu: %s: ...%.60s\n", p.i, p.error ? p.error : "?",
                text + (p.i > 20 ? p.i - 20 : 0));
    return ok;
}

/* ---- rendering into memory ---- */

typedef int (*formatter)(FILE *, const struct recording *, const struct report_options *);

static char *render(formatter f, const struct recording *r, const struct report_options *o, size_t *len)
{
    char *text = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&text, &n);
    if (!CHECK(out != NULL))
        return NULL;
    CHECK_INT(f(out, r, o), 0);
    fclose(out);
    if (len)
        *len = n;
    return text;
}

/* r's JSON report, valid and parsed (NULL when not, with a failed check and the parser's word); text, when not NULL,
 * takes the JSON itself (the caller frees both). */
static struct jsonread *render_json_doc(const struct recording *r, const struct report_options *o, char **text)
{
    size_t n = 0;
    char *j = render(report_json, r, o, &n);
    struct jsonread *doc = NULL;
    char err[200];
    if (CHECK(j && json_valid(j, n)) && !CHECK_INT(jsonread_parse(j, n, &doc, err, sizeof(err)), 0)) {
        fprintf(stderr, "    %s\n", err);
        doc = NULL;
    }
    if (text)
        *text = j;
    else
        free(j);
    return doc;
}

static char *json_of_string(const char *s)
{
    char *text = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&text, &n);
    if (!out)
        return NULL;
    json_write_string(out, s);
    fclose(out);
    return text;
}

static const char *after(const char *hay, const char *needle)
{
    const char *p = hay ? strstr(hay, needle) : NULL;
    return p ? p + strlen(needle) : NULL;
}

/* ---- tests ------------------------------------------------------------ */

static void test_load_sample(void)
{
    struct buf b = {0};
    buf_magic(&b);
    sample_events(&b, 1);
    struct recording *r = load_ok(write_file("sample.vtp", &b));
    free(b.data);
    if (!CHECK(r != NULL))
        return;
    CHECK_UINT(r->n_sessions, 1);
    CHECK(!r->truncated);
    CHECK_UINT(r->segments, 1);
    const struct recording_session *s = r->sessions[0];
    CHECK(s->has_hello);
    CHECK(s->has_goodbye);
    CHECK_INT(s->hello.pid, 4242);
    CHECK_STR(s->hello.java_version, "21.0.5");
    CHECK_STR(wire_mode_name(s->hello.mode), "startup");
    CHECK_UINT(s->hello.threshold_ns, 0);
    CHECK_UINT(s->n_pins, 3);
    CHECK_UINT(s->n_notices, 1);
    CHECK_UINT(s->unknown_refs, 0);
    CHECK(s->stats.has);
    CHECK_UINT(s->stats.msg.pins_below_threshold, 2);
    CHECK_INT(s->last_ns, 4 * SEC);
    if (s->n_pins == 3) {
        const struct recording_pin *p = &s->pins[0];
        CHECK(p->ended);
        CHECK_INT(p->duration_ns, 100 * MS);
        CHECK_STR(p->vthread_name, tricky_name);
        CHECK_STR(p->carrier_name, "ForkJoinPool-1-worker-1");
        CHECK(p->has_culprit && p->culprit == 1);
        CHECK_STR(p->stack->frames[0].method->class_name, "java.lang.Thread");
        CHECK_STR(p->stack->frames[1].method->module, NULL);
        p = &s->pins[2];
        CHECK(!p->ended);
        CHECK_INT(recording_pin_duration(s, p), 500 * MS);
        CHECK_STR(p->vthread_name, NULL);
        int64_t unix_ns = 0;
        CHECK_INT(recording_unix_ns(s, p->start_ns, &unix_ns), 0);
        CHECK_INT(unix_ns, START_UNIX + 2 * SEC + 500 * MS);
    }
    recording_free(r);
}

static void test_sites_ranking(void)
{
    struct buf b = {0};
    buf_magic(&b);
    sample_events(&b, 1);
    struct recording *r = load_ok(write_file("sites.vtp", &b));
    free(b.data);
    if (!CHECK(r != NULL))
        return;
    struct sites sites;
    CHECK_INT(sites_build(r->sessions[0], &sites), 0);
    CHECK_UINT(sites.count, 2);
    CHECK_UINT(sites.pins, 3);
    CHECK_UINT(sites.ongoing, 1);
    CHECK_INT(sites.total_ns, 900 * MS);
    if (sites.count == 2) {
        const struct site *first = &sites.items[0], *second = &sites.items[1];
        /* the native site ranks first on its duration so far (500 ms > 400 ms) */
        CHECK_INT(first->reason, VTPIN__V1__PIN_REASON__NATIVE);
        CHECK_UINT(first->count, 1);
        CHECK_UINT(first->ongoing, 1);
        CHECK_INT(first->total_ns, 500 * MS);
        CHECK(first->culprit && strcmp(first->culprit->method->name, "call") == 0);
        CHECK_INT(second->reason, VTPIN__V1__PIN_REASON__MONITOR);
        CHECK_UINT(second->count, 2);
        CHECK_UINT(second->ongoing, 0);
        CHECK_INT(second->total_ns, 400 * MS);
        CHECK_INT(second->max_ns, 300 * MS);
        CHECK_UINT(second->distinct_stacks, 2);
        CHECK_UINT(second->example->id, 2); /* its stack holds the most time */
        CHECK(second->culprit && second->culprit->line == 42 && second->culprit->monitors == 1);
    }
    sites_fini(&sites);
    recording_free(r);
}

/* The JDK's own pins (every frame the JDK's) make sites of their own, after the application's
 * whatever their time: in the sites, the text report (under a heading) and the JSON. */
static void test_jdk_sites(void)
{
    enum { S_POLLER = 40, S_POLL, M_POLL = 40, ST_JDK = 40 };
    struct buf b = {0};
    buf_magic(&b);
    sample_events(&b, 1);
    ev_string(&b, S_POLLER, "sun.nio.ch.Poller");
    ev_string(&b, S_POLL, "poll");
    ev_method(&b, M_POLL, S_POLLER, S_POLL, 0, 0, 0, S_JAVA_BASE);
    struct fspec jdk[] = {{M_SLEEP, 507, 53, 0}, {M_POLL, 99, 4, 0}};
    ev_stack(&b, ST_JDK, jdk, 2);
    ev_pin_start(&b, 9, 3 * SEC, VTPIN__V1__PIN_REASON__MONITOR_ENTER, ST_JDK, 1, 0, S_CARRIER);
    ev_pin_end(&b, 9, 3 * SEC, 3 * SEC + 800 * MS); /* more than any application site */
    struct recording *r = load_ok(write_file("jdk-sites.vtp", &b));
    free(b.data);
    if (!CHECK(r != NULL))
        return;
    struct sites sites;
    CHECK_INT(sites_build(r->sessions[0], &sites), 0);
    CHECK_UINT(sites.count, 3);
    CHECK_UINT(sites.app_count, 2);
    if (sites.count == 3) {
        CHECK_INT(sites.items[0].origin, PIN_ORIGIN_APP);
        CHECK_INT(sites.items[1].origin, PIN_ORIGIN_APP);
        CHECK_INT(sites.items[2].origin, PIN_ORIGIN_JDK);
        CHECK_INT(sites.items[2].total_ns, 800 * MS);
    }
    sites_fini(&sites);
    struct report_options o = {.top = 10};
    char *t = render(report_text, r, &o, NULL);
    if (CHECK(t != NULL)) {
        const char *app = strstr(t, "#2  com.example.Db.query"), *heading = strstr(t, "the JDK's own pins ("),
                   *poller = strstr(t, "#3  java.base/sun.nio.ch.Poller.poll");
        CHECK(app && heading && poller && app < heading && heading < poller);
        CHECK_CONTAINS(t, "no change to the application removes them): 1 pin, 800.0 ms\n");
    }
    free(t);
    char *js = render(report_json, r, &o, NULL);
    if (CHECK(js != NULL)) {
        CHECK_CONTAINS(js, "\"origin\": \"jdk\"");
        CHECK_CONTAINS(js, "\"origin\": \"app\"");
    }
    free(js);
    recording_free(r);
}

static void test_frame_format(void)
{
    struct recording_method thread = {.defined = 1,
                                      .class_name = "java.lang.Thread",
                                      .name = "sleep",
                                      .source_file = "Thread.java",
                                      .module = "java.base"};
    struct recording_method jni = {.defined = 1,
                                   .class_name = "com.example.Jni",
                                   .name = "call",
                                   .is_native = 1,
                                   .library = "/opt/app/lib/libfoo.so"};
    struct recording_method nosrc = {.defined = 1, .class_name = "A$$Lambda", .name = "run"};
    struct recording_method unknown = {.class_name = RECORDING_UNKNOWN, .name = RECORDING_UNKNOWN};
    struct recording_frame f1 = {&thread, 1, 507, 53, 0}, f2 = {&jni, 3, -1, -1, 0}, f3 = {&nosrc, 4, -1, 2, 0},
                           f4 = {&unknown, 9, 3, 3, 2}, f5 = {&thread, 1, -1, 3, 0};
    char out[512], m[128];
    CHECK_STR(report_format_frame(&f1, out, sizeof(out)), "java.base/java.lang.Thread.sleep(Thread.java:507)");
    CHECK_STR(report_format_frame(&f2, out, sizeof(out)), "com.example.Jni.call(Native Method)");
    CHECK_STR(report_format_frame(&f3, out, sizeof(out)), "A$$Lambda.run(Unknown Source)");
    CHECK_STR(report_format_frame(&f4, out, sizeof(out)), "<unknown method>");
    CHECK_STR(report_format_frame(&f5, out, sizeof(out)), "java.base/java.lang.Thread.sleep(Thread.java)");
    CHECK_STR(report_frame_markers(&f2, 1, m, sizeof(m)), " <== native (libfoo.so)");
    CHECK_STR(report_frame_markers(&f2, 0, m, sizeof(m)), "");
    CHECK_STR(report_frame_markers(&f4, 1, m, sizeof(m)), " <== monitors:2");
    jni.library = NULL;
    CHECK_STR(report_frame_markers(&f2, 1, m, sizeof(m)), " <== native (library unknown)");
    CHECK_STR(units_format_duration(850, m, sizeof(m)), "850 ns");
    CHECK_STR(units_format_duration(12345, m, sizeof(m)), "12.3 us");
    CHECK_STR(units_format_duration(201300000, m, sizeof(m)), "201.3 ms");
    CHECK_STR(units_format_duration(19950000000LL, m, sizeof(m)), "19.95 s");
}

static void test_json_report(void)
{
    struct buf b = {0};
    buf_magic(&b);
    sample_events(&b, 1);
    struct recording *r = load_ok(write_file("json.vtp", &b));
    free(b.data);
    if (!CHECK(r != NULL))
        return;
    struct report_options o = {0};
    size_t n = 0;
    char *j = render(report_json, r, &o, &n);
    if (CHECK(j != NULL)) {
        CHECK(json_valid(j, n));
        CHECK_CONTAINS(j, "\"schema\": \"vtpin.report/1\"");
        CHECK_CONTAINS(j, "\"pid\": 4242");
        CHECK_CONTAINS(j, "\"mode\": \"startup\"");
        CHECK_CONTAINS(j, "\"threshold_ns\": 0");
        CHECK_CONTAINS(j, "\"start_unix_ns\": 1700000000000000000");
        CHECK_CONTAINS(j, "\"start_mono_ns\": 1000000000,");
        CHECK_CONTAINS(j, "\"truncated\": false");
        CHECK_CONTAINS(j, "\"class\": \"java.lang.Thread\", \"method\": \"sleep\", \"line\": 507");
        CHECK_CONTAINS(j, "\"class\": \"com.example.Jni\", \"method\": \"call\", \"line\": null, \"native\": true");
        CHECK_CONTAINS(j, "\"library\": \"/opt/app/lib/libfoo.so\"");
        /* the tricky names, escaped */
        CHECK_CONTAINS(j, "\"name\": \"say \\\"hi\\\"\\n\\tbye\\\\ \\u0001\"");
        CHECK_CONTAINS(j, "\"name\": \"bad\\ufffd\\ufffd name \\u0000 \xf0\x9f\x98\x80\"");
        CHECK_CONTAINS(j, "\"text\": \"park-based pins are \\\"not\\\" seen\\nsecond line\"");
        /* pin 3 is still in progress: null duration */
        const char *pin3 = after(j, "\"id\": 3,");
        CHECK_CONTAINS(pin3, "\"duration_ns\": null");
        CHECK_CONTAINS(pin3, "\"ongoing\": true");
        CHECK_CONTAINS(after(j, "\"id\": 1,"), "\"start_ns\": 1700000001000000000");
        /* sites ranked: NATIVE (500 ms so far) before MONITOR (400 ms) */
        const char *sites = after(j, "\"sites\": [");
        const char *native = sites ? strstr(sites, "\"reason\": \"NATIVE\"") : NULL;
        const char *monitor = sites ? strstr(sites, "\"reason\": \"MONITOR\"") : NULL;
        CHECK(native && monitor && native < monitor);
        CHECK_CONTAINS(native, "\"total_ns\": 500000000");
        CHECK_CONTAINS(monitor, "\"count\": 2,\n      \"total_ns\": 400000000,\n      \"max_ns\": 300000000");
        CHECK_CONTAINS(j, "\"pins_below_threshold\": 2");
        CHECK_CONTAINS(j, "\"events_dropped\": 1");
        CHECK_CONTAINS(j, "\"pins_without_stack\": 1");
    }
    free(j);
    /* --top 1 keeps one site and says how many there were */
    o.top = 1;
    j = render(report_json, r, &o, &n);
    if (CHECK(j != NULL)) {
        CHECK(json_valid(j, n));
        CHECK(strstr(after(j, "\"sites\": ["), "\"reason\": \"MONITOR\"") == NULL);
        CHECK_CONTAINS(j, "\"sites_total\": 2");
    }
    free(j);
    recording_free(r);
}

static void test_text_report(void)
{
    struct buf b = {0};
    buf_magic(&b);
    sample_events(&b, 1);
    struct recording *r = load_ok(write_file("text.vtp", &b));
    free(b.data);
    if (!CHECK(r != NULL))
        return;
    struct report_options o = {.top = 10};
    char *t = render(report_text, r, &o, NULL);
    if (CHECK(t != NULL)) {
        CHECK_CONTAINS(t, "pid 4242 on build-host, java 21.0.5");
        CHECK_CONTAINS(t, "threshold 0 (every pin)");
        CHECK_CONTAINS(t, ", complete");
        CHECK_CONTAINS(t, "3 pins at 2 sites, 900.0 ms pinned in total, 1 still pinned at the end");
        CHECK_CONTAINS(t, "#1  com.example.Jni.call(Native Method) <== native (libfoo.so)\n"
                          "    NATIVE: 1 pin, total 500.0 ms, longest 500.0 ms, 1 still pinned at the end");
        CHECK_CONTAINS(t, "#2  com.example.Db.query(Db.java:42) <== monitors:1\n"
                          "    MONITOR: 2 pins, total 400.0 ms, longest 300.0 ms, 0 ongoing at the end\n"
                          "    stack of pin #2 (1 of 2 distinct stacks at this site):\n"
                          "      java.base/java.lang.Thread.sleep(Thread.java:507)\n"
                          "      com.example.Db.query(Db.java:42) <== monitors:1\n"
                          "      com.example.App.other(App.java:20)\n");
        /* a notice's newline cannot break the layout */
        CHECK_CONTAINS(t, "  warning  capability.breakpoints: park-based pins are \"not\" seen\\x0asecond line\n");
        CHECK_CONTAINS(t, "pins seen 5, reported 3, below threshold 2");
        CHECK_CONTAINS(t, "events dropped 1, stacks dropped 0, pins without stack 1");
        CHECK_CONTAINS(t, "(pins without stack: the agent could not take their stacks");
    }
    free(t);
    recording_free(r);
}

static void test_no_pins(void)
{
    struct buf b = {0};
    buf_magic(&b);
    ev_hello(&b, 1, "25");
    ev_goodbye(&b, 2 * SEC);
    struct recording *r = load_ok(write_file("nopins.vtp", &b));
    free(b.data);
    if (!CHECK(r != NULL))
        return;
    struct report_options o = {.top = 10};
    size_t n;
    char *t = render(report_text, r, &o, NULL);
    CHECK_CONTAINS(t, "\nno pins reported (2 pins shorter than the threshold 0 ns were counted only)\n");
    free(t);
    char *j = render(report_json, r, &o, &n);
    if (CHECK(j != NULL)) {
        CHECK(json_valid(j, n));
        CHECK_CONTAINS(j, "\"pins\": []");
        CHECK_CONTAINS(j, "\"sites\": []");
    }
    free(j);
    recording_free(r);
}

static void test_truncated(void)
{
    struct buf b = {0};
    buf_magic(&b);
    sample_events(&b, 0);
    size_t last = ev_goodbye(&b, 4 * SEC);
    /* cut inside the last frame's payload, then inside its header */
    size_t cuts[] = {b.len - 3, last + 2};
    for (size_t k = 0; k < 2; k++) {
        struct buf cut = {b.data, cuts[k], b.cap};
        struct recording *r = load_ok(write_file("cut.vtp", &cut));
        if (!CHECK(r != NULL))
            continue;
        CHECK(r->truncated);
        CHECK(!r->zero_tail);
        CHECK_UINT(r->truncated_at, last);
        CHECK_UINT(r->sessions[0]->n_pins, 3); /* everything before the cut is there */
        CHECK(!r->sessions[0]->has_goodbye);
        struct report_options o = {0};
        size_t n;
        char *j = render(report_json, r, &o, &n);
        CHECK(j && json_valid(j, n));
        CHECK_CONTAINS(j, "\"truncated\": true");
        free(j);
        recording_free(r);
    }
    /* a file system's zero-filled tail is a cut too */
    struct buf z = {0};
    buf_put(&z, b.data, last);
    static const uint8_t zeros[100];
    buf_put(&z, zeros, sizeof(zeros));
    struct recording *r = load_ok(write_file("zeros.vtp", &z));
    if (CHECK(r != NULL)) {
        CHECK(r->truncated && r->zero_tail);
        CHECK_UINT(r->truncated_at, last);
    }
    recording_free(r);
    free(z.data);
    free(b.data);
}

static void expect_error(const char *name, const struct buf *b, int want_rc, const char *want_msg)
{
    char *path = write_file(name, b);
    struct recording *r = NULL;
    char err[512] = "";
    int rc = report_open(path, &r, err, sizeof(err));
    CHECK_INT(rc, want_rc);
    CHECK(r == NULL);
    CHECK_CONTAINS(err, path);
    CHECK_CONTAINS(err, want_msg);
    recording_free(r);
}

static void test_bad_files(void)
{
    struct buf b = {0};
    buf_put(&b, "VTPIN\0\0\2", 8); /* another framing version */
    ev_hello(&b, 1, "21");
    expect_error("magic.vtp", &b, -EPROTO, "not a vtpin recording (bad magic)");
    free(b.data);

    struct buf e = {0};
    expect_error("empty.vtp", &e, -EPROTO, "empty file");

    /* damage right after the Hello: the Hello is kept, the damage said */
    struct buf big = {0};
    buf_magic(&big);
    ev_hello(&big, 1, "21");
    size_t at = big.len;
    uint8_t header[4] = {0x01, 0x00, 0x00, 0x01}; /* 16 MiB + 1 */
    buf_put(&big, header, 4);
    buf_put(&big, "xxxx", 4);
    char msg[128];
    snprintf(msg, sizeof(msg), "the frame at byte offset %zu announces 16777217 bytes", at);
    struct recording *d = load_ok(write_file("big.vtp", &big));
    if (CHECK(d != NULL)) {
        CHECK_UINT(d->damaged, 1);
        CHECK_UINT(d->damaged_at, at);
        CHECK_CONTAINS(d->damage, msg);
        CHECK_INT(d->sessions[0]->hello.pid, 1);
    }
    recording_free(d);
    free(big.data);

    struct buf bad = {0};
    buf_magic(&bad);
    ev_hello(&bad, 1, "21");
    at = bad.len;
    uint8_t garbage[] = {0x03, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0x42};
    buf_put(&bad, garbage, sizeof(garbage));
    snprintf(msg, sizeof(msg), "the frame at byte offset %zu is not a vtpin event", at);
    d = load_ok(write_file("garbage.vtp", &bad));
    if (CHECK(d != NULL)) {
        CHECK_UINT(d->damaged, 1);
        CHECK_UINT(d->damaged_at, at);
        CHECK_UINT(d->damaged_bytes, sizeof(garbage));
        CHECK_CONTAINS(d->damage, msg);
    }
    recording_free(d);
    free(bad.data);

    struct recording *r = NULL;
    char err[256];
    CHECK_INT(report_open("/nonexistent/vtpin.vtp", &r, err, sizeof(err)), -ENOENT);
    CHECK_CONTAINS(err, "/nonexistent/vtpin.vtp: ");
}

/* A damaged frame in mid-file: the pins before it are all there; reading
 * resumes at the next recording's magic. */
static void test_damaged(void)
{
    struct buf b = {0};
    buf_magic(&b);
    sample_events(&b, 0);
    size_t at = b.len;
    uint8_t garbage[] = {0x05, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x02};
    buf_put(&b, garbage, sizeof(garbage));
    ev_pin_end(&b, 1, 2 * SEC, 3 * SEC); /* after the damage, same recording: not trusted */
    struct recording *r = load_ok(write_file("damaged.vtp", &b));
    if (CHECK(r != NULL)) {
        CHECK_UINT(r->damaged, 1);
        CHECK_UINT(r->damaged_at, at);
        CHECK_UINT(r->damaged_bytes, b.len - at);
        CHECK(!r->truncated);
        CHECK_UINT(r->n_sessions, 1);
        CHECK_UINT(r->sessions[0]->n_pins, 3); /* the valid prefix */
        CHECK_INT(r->sessions[0]->hello.pid, 4242);
    }
    recording_free(r);
    /* another recording appended after the damage is read */
    buf_magic(&b);
    ev_hello(&b, 777, "25");
    r = load_ok(write_file("damaged2.vtp", &b));
    if (CHECK(r != NULL)) {
        CHECK_UINT(r->damaged, 1);
        CHECK_UINT(r->segments, 2);
        CHECK_UINT(r->n_sessions, 2);
        if (r->n_sessions == 2) {
            CHECK_UINT(r->sessions[0]->n_pins, 3);
            CHECK_INT(r->sessions[1]->hello.pid, 777);
        }
    }
    recording_free(r);
    free(b.data);
}

/* Two recordings concatenated: sample_events' session, then JVM 31337's of one pin. */
static void two_sessions(struct buf *b)
{
    buf_magic(b);
    sample_events(b, 1);
    buf_magic(b);
    ev_hello(b, 31337, "25");
    ev_pin_start(b, 1, 2 * SEC, VTPIN__V1__PIN_REASON__NATIVE, 0, 0, 0, 0);
}

/* cat a.vtp b.vtp | vtpin report -: a pipe cannot be probed or seeked. */
static void test_concatenated_pipe(void)
{
    struct buf b = {0};
    two_sessions(&b);
    int fds[2];
    if (!CHECK_INT(pipe(fds), 0))
        return;
    pid_t pid = fork();
    if (pid == 0) { /* the writer, like cat */
        close(fds[0]);
        ssize_t n = write(fds[1], b.data, b.len);
        _exit(n == (ssize_t)b.len ? 0 : 1);
    }
    close(fds[1]);
    struct recording *r = NULL;
    char err[512] = "";
    int rc = recording_load_fd(fds[0], "<stdin>", &r, err, sizeof(err));
    if (!rc)
        rc = report_passes(r); /* as report_open("-") */
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!CHECK_INT(rc, 0))
        fprintf(stderr, "    %s\n", err);
    if (CHECK(r != NULL)) {
        CHECK_UINT(r->segments, 2);
        CHECK_UINT(r->n_sessions, 2);
        CHECK(!r->damaged && !r->truncated);
        if (r->n_sessions == 2) {
            CHECK_INT(r->sessions[0]->hello.pid, 4242);
            CHECK(r->sessions[0]->has_goodbye);
            CHECK_INT(r->sessions[1]->hello.pid, 31337);
            CHECK_UINT(r->sessions[1]->n_pins, 1);
        }
    }
    recording_free(r);
    free(b.data);
}

/* Three sessions: 4242 (3 pins, a notice, a Goodbye), 31337 (1 pin), 555 (2 pins, Stats that say
 * events were unwritten). */
static void three_sessions(struct buf *b)
{
    two_sessions(b);
    ev_hello(b, 555, "27");
    ev_pin_start(b, 7, 2 * SEC, VTPIN__V1__PIN_REASON__NATIVE, 0, 0, 0, 0);
    ev_pin_start(b, 8, 3 * SEC, VTPIN__V1__PIN_REASON__NATIVE, 0, 0, 0, 0);
    Vtpin__V1__Stats st = VTPIN__V1__STATS__INIT;
    st.has_events_unwritten = 1;
    st.events_unwritten = 9;
    ev_goodbye_stats(b, &st);
}

static struct recording *load_keep(const char *path, size_t keep)
{
    struct recording *r = NULL;
    char err[512] = "";
    struct report_plan plan = {.keep = keep};
    int rc = report_open_plan(path, &plan, &r, err, sizeof(err));
    if (!CHECK_INT(rc, 0))
        fprintf(stderr, "    loading %s (keep %zu): %s\n", path, keep, err);
    return r;
}

/* Only the sessions shown are kept whole: every one is counted, the others keep their Hello,
 * notices and Stats (the warnings' sources) and nothing of their pins. */
static void check_kept(struct recording *r, size_t keep)
{
    static const int64_t pids[] = {4242, 31337, 555};
    static const size_t pins[] = {3, 1, 2};
    if (!CHECK(r != NULL) || !CHECK_UINT(r->n_sessions, 3))
        return;
    for (size_t i = 0; i < 3; i++) {
        const struct recording_session *s = r->sessions[i];
        int kept = keep == RECORDING_KEEP_ALL || keep == i + 1 || (keep == RECORDING_KEEP_LAST && i == 2);
        CHECK_INT(s->hello.pid, pids[i]);
        CHECK_INT(s->skipped, !kept);
        CHECK_UINT(s->n_pins, kept ? pins[i] : 0);
        CHECK(kept && i == 0 ? idmap_count(s->methods) > 0 : idmap_count(s->methods) == 0);
    }
    CHECK_UINT(r->sessions[0]->n_notices, 1);
    CHECK(r->sessions[0]->has_goodbye);
    CHECK(recording_write_failed(r->sessions[2]) != NULL);
}

/* What report_plan.each was handed, session by session. */
struct handed {
    size_t calls;
    int64_t pids[4];
    size_t pins[4];
    int whole[4];   /* not skipped, its methods resolved (the first session has some) */
    size_t fail_at; /* a call that fails with -EIO (0: none) */
};

static int take_session(const struct recording *r, const struct recording_session *s, void *arg)
{
    struct handed *h = arg;
    size_t i = h->calls++;
    if (i < 4) {
        h->pids[i] = s->hello.pid;
        h->pins[i] = s->n_pins;
        h->whole[i] = !s->skipped && (i != 0 || idmap_count(s->methods) > 0);
    }
    /* the sessions before are given back already: memory follows one session */
    for (size_t k = 0; k + 1 < r->n_sessions; k++)
        if (r->sessions[k] != s && (!r->sessions[k]->skipped || r->sessions[k]->n_pins))
            return -EFAULT;
    return h->calls == h->fail_at ? -EIO : 0;
}

/* report_open_plan with .each = take_session, handing h over. */
static int open_each(const char *file, struct handed *h, struct recording **r, char *err, size_t errlen)
{
    struct report_plan plan = {.keep = RECORDING_KEEP_ALL, .each = take_session, .arg = h};
    return report_open_plan(file, &plan, r, err, errlen);
}

/* Every session in turn (pprof's every session): each handed over whole, in file order, then given
 * back, so that after the load each is as a session not kept is; a failing consumer stops the load. */
static void test_each_session(void)
{
    struct buf b = {0};
    three_sessions(&b);
    const char *file = write_file("three-each.vtp", &b);
    struct handed h = {0};
    struct recording *r = NULL;
    char err[512] = "";
    if (CHECK_INT(open_each(file, &h, &r, err, sizeof(err)), 0) && CHECK_UINT(h.calls, 3)) {
        static const int64_t pids[] = {4242, 31337, 555};
        static const size_t pins[] = {3, 1, 2};
        for (size_t i = 0; i < 3; i++) {
            CHECK_INT(h.pids[i], pids[i]);
            CHECK_UINT(h.pins[i], pins[i]);
            CHECK(h.whole[i]);
        }
        check_kept(r, 4); /* as for a fourth session shown: none of the three kept */
    }
    recording_free(r);
    struct handed fails = {.fail_at = 2};
    r = NULL;
    CHECK_INT(open_each(file, &fails, &r, err, sizeof(err)), -EIO);
    CHECK(r == NULL);
    CHECK_UINT(fails.calls, 2);
    CHECK(strstr(err, "three-each.vtp") != NULL);
    free(b.data);
}

/* A session given back (not the last, or handed over one at a time) whose pins had extras (a blocker,
 * a downcall) gives them back once: they were freed again with the recording (a double free, which
 * vtpin report --format pprof of the blockers corpus twice over hit). */
static void test_dropped_extras(void)
{
    struct buf b = {0};
    buf_magic(&b);
    for (int session = 0; session < 2; session++) {
        ev_hello(&b, 4242 + session, "21");
        Vtpin__V1__Blocker blocker = VTPIN__V1__BLOCKER__INIT;
        blocker.has_what = 1;
        blocker.what = VTPIN__V1__BLOCKER_KIND__BLOCKER_MONITOR;
        blocker.has_thread_id = 1;
        blocker.thread_id = 7;
        Vtpin__V1__PinStart p = VTPIN__V1__PIN_START__INIT;
        p.pin_id = 1;
        p.start_ns = SEC;
        p.reason = VTPIN__V1__PIN_REASON__MONITOR_ENTER;
        p.blocker = &blocker;
        WireEvent ev = VTPIN__V1__EVENT__INIT;
        ev.body_case = VTPIN__V1__EVENT__BODY_PIN_START;
        ev.pin_start = &p;
        put_event(&b, &ev);
    }
    const char *file = write_file("extras.vtp", &b);
    struct recording *r = load_keep(file, RECORDING_KEEP_LAST);
    if (CHECK(r != NULL) && CHECK_UINT(r->n_sessions, 2) && CHECK_UINT(r->sessions[1]->n_pins, 1)) {
        CHECK(recording_pin_blocker(&r->sessions[1]->pins[0]) != NULL);
        CHECK_UINT(r->sessions[0]->n_extras, 0);
    }
    recording_free(r); /* once each, ASan and glibc's checks say */
    struct handed h = {0};
    char err[512] = "";
    r = NULL;
    CHECK_INT(open_each(file, &h, &r, err, sizeof(err)), 0);
    CHECK_UINT(h.calls, 2);
    recording_free(r);
    free(b.data);
}

/* A file still being written (a JVM that vtpin run left running) reads the same in every pass:
 * max_bytes, its size when first read, and nothing written since. */
static void test_max_bytes(void)
{
    struct buf b = {0};
    three_sessions(&b);
    size_t first = b.len;
    ev_hello(&b, 777, "25"); /* written on: a fourth session, then a pin of it */
    ev_pin_start(&b, 1, 5 * SEC, VTPIN__V1__PIN_REASON__NATIVE, 0, 0, 0, 0);
    const char *file = write_file("growing.vtp", &b);
    struct report_plan then = {.keep = RECORDING_KEEP_ALL, .max_bytes = first}, now = {.keep = RECORDING_KEEP_ALL};
    struct recording *r = NULL;
    char err[512] = "";
    if (CHECK_INT(report_open_plan(file, &then, &r, err, sizeof(err)), 0)) {
        check_kept(r, RECORDING_KEEP_ALL);
        CHECK(!r->truncated);
        CHECK_UINT(r->bytes, first);
    }
    recording_free(r);
    r = NULL;
    if (CHECK_INT(report_open_plan(file, &now, &r, err, sizeof(err)), 0) && CHECK_UINT(r->n_sessions, 4))
        CHECK_UINT(r->sessions[3]->n_pins, 1);
    recording_free(r);
    free(b.data);
}

/* --session N keeps only that session, but decodes every frame: a PinStart of session 2 whose payload
 * cannot be decoded is damage to every read, whatever it keeps, and what follows it up to the next
 * magic (a third Hello here) is skipped by each. So the sessions are numbered the same by every read
 * (a read that did not decode session 2's pins, as one did, found a session 3 that the whole read
 * has not: `--session 3` showed what the report said was not there, and a second read of the file
 * found other sessions than the first). */
static void test_session_unread(void)
{
    struct buf b = {0};
    two_sessions(&b);
    size_t bad = b.len;
    /* a PinStart body (field 5) announcing 5 bytes, of which the frame holds 1 */
    const uint8_t damaged[] = {3, 0, 0, 0, (5 << 3) | 2, 5, 1};
    buf_put(&b, damaged, sizeof(damaged));
    ev_hello(&b, 555, "27");
    ev_pin_start(&b, 7, 2 * SEC, VTPIN__V1__PIN_REASON__NATIVE, 0, 0, 0, 0);
    ev_pin_start(&b, 8, 3 * SEC, VTPIN__V1__PIN_REASON__NATIVE, 0, 0, 0, 0);
    const char *file = write_file("unread.vtp", &b);
    static const size_t keeps[] = {RECORDING_KEEP_ALL, RECORDING_KEEP_LAST, 1, 2, 3};
    for (size_t k = 0; k < sizeof(keeps) / sizeof(keeps[0]); k++) {
        struct recording *r = load_keep(file, keeps[k]);
        if (CHECK(r != NULL)) {
            CHECK_UINT(r->damaged, 1);
            CHECK_UINT(r->damaged_at, bad);
            CHECK_UINT(r->n_sessions, 2); /* what follows the damage up to the next magic is skipped */
            CHECK_INT(r->sessions[1]->damaged, 1);
        }
        recording_free(r);
    }
    free(b.data);
}

/* A second read of a file (recording_load_again: pin_stream's, for JSON, the HTML lanes and Perfetto)
 * reads the bytes the first read did, not only up to its last whole frame: a frame that does not
 * decode and announces more bytes than follow that frame (the next session's magic inside them) was
 * damage to skip the first time, and must not be a cut tail the second (the second read lost the next
 * session, and pin_stream said it was not there). */
static void test_read_again_damaged(void)
{
    struct buf b = {0};
    two_sessions(&b);
    size_t bad = b.len;
    /* a frame whose payload begins with "VTP" (not an Event: wire type 6), and whose announced end
     * falls inside the frame cut short that ends the file: past the last whole frame */
    const uint8_t damaged[] = {0, 0, 0, 0};
    buf_put(&b, damaged, sizeof(damaged));
    buf_magic(&b); /* the next session starts inside those bytes */
    ev_hello(&b, 555, "27");
    ev_pin_start(&b, 7, 2 * SEC, VTPIN__V1__PIN_REASON__NATIVE, 0, 0, 0, 0);
    ev_pin_end(&b, 7, 2 * SEC, 3 * SEC);
    size_t announced = b.len + 2 - (bad + 4);
    b.data[bad] = (uint8_t)announced;
    b.data[bad + 1] = (uint8_t)(announced >> 8);
    const uint8_t cut[] = {200, 0, 0, 0, 0x2a}; /* and the file ends in a frame cut short */
    buf_put(&b, cut, sizeof(cut));
    const char *file = write_file("again.vtp", &b);
    struct recording *r = NULL, *again = NULL;
    char err[512];
    struct recording_plan plan = {.keep = RECORDING_KEEP_ALL, .keep_input = 1}, all = {.keep = RECORDING_KEEP_ALL};
    if (CHECK_INT(recording_load_plan(file, &plan, &r, err, sizeof(err)), 0) &&
        CHECK_INT(recording_load_again(r, &all, &again, err, sizeof(err)), 0)) {
        CHECK_UINT(r->damaged, 1);
        CHECK_UINT(r->damaged_at, bad);
        CHECK(r->truncated && r->n_sessions == 3 && r->sessions[2]->n_pins == 1);
        CHECK(r->bytes < bad + 4 + announced); /* the damaged frame's bytes run past the last whole frame */
        CHECK_UINT(again->n_sessions, r->n_sessions);
        CHECK_UINT(again->damaged, r->damaged);
        CHECK_UINT(again->truncated_at, r->truncated_at);
    }
    recording_free(r);
    recording_free(again);
    free(b.data);
}

/* A rotated recording's file as the agent and the collector write them: the Hello, the notices said
 * so far, what it continues, the definitions, the pins in progress; then `pins` pins of its own. The
 * first file (continues 0) has no head to say again; every file but the last ends rotating out. */
static void rotated_part(struct buf *b, int64_t pid, int continues, int last, const char *out_code)
{
    buf_magic(b);
    ev_hello(b, pid, "21.0.5");
    ev_notice(b, SEC / 2, "agent.capability", "can_generate_monitor_events missing");
    ev_string(b, 1, "Repro");
    ev_string(b, 2, "settle");
    ev_method(b, 1, 1, 2, 0, 0, 0, 0);
    const struct fspec frames[] = {{1, 10, 3, 1}};
    ev_stack(b, 1, frames, 1);
    if (continues) {
        ev_notice(b, continues * SEC, "collector.recording_rotated", "this file continues ...");
        ev_pin_start(b, (uint64_t)continues * 10 + 1, continues * SEC, VTPIN__V1__PIN_REASON__MONITOR_ENTER, 1, 0, 0,
                     0); /* in progress at the rotation: said again */
    }
    int64_t t = (continues + 1) * SEC;
    if (continues)
        ev_pin_end(b, (uint64_t)continues * 10 + 1, continues * SEC, t);
    ev_pin_start(b, (uint64_t)(continues + 1) * 10, t, VTPIN__V1__PIN_REASON__NATIVE, 1, 0, 0, 0);
    ev_pin_end(b, (uint64_t)(continues + 1) * 10, t, t + SEC / 10);
    if (last) {
        ev_goodbye(b, t + SEC / 2);
        return;
    }
    ev_pin_start(b, (uint64_t)(continues + 1) * 10 + 1, t + SEC / 5, VTPIN__V1__PIN_REASON__MONITOR_ENTER, 1, 0, 0, 0);
    ev_notice(b, t + SEC / 2, out_code, "the recording goes on in PATH");
}

/* Rotated files concatenated in order (cat PATH.2 PATH.1 PATH) read as one session: each pin once,
 * the one in progress at each rotation ended where the next file ends it, no duplicate, the
 * notices said again once; the agent's files (record_max=) and the collector's (--record-max). A file
 * that did not rotate out, or the Hello of another JVM, starts a session of its own. */
static void test_rotated_parts(void)
{
    static const char *const codes[] = {"output.record.rotated_out", "collector.recording_rotated_out"};
    for (size_t c = 0; c < 2; c++) {
        struct buf b = {0};
        rotated_part(&b, 4242, 0, 0, codes[c]);
        rotated_part(&b, 4242, 1, 0, codes[c]);
        rotated_part(&b, 4242, 2, 1, codes[c]);
        const char *file = write_file("rotated.vtp", &b);
        struct recording *r = load_keep(file, RECORDING_KEEP_ALL);
        if (CHECK(r != NULL) && CHECK_UINT(r->n_sessions, 1)) {
            const struct recording_session *s = r->sessions[0];
            CHECK_UINT(s->parts, 3);
            CHECK_UINT(s->n_pins, 5); /* 10, 11 (ends in the second file), 20, 21 (ends in the third), 30 */
            for (size_t i = 0; i < s->n_pins; i++)
                CHECK(s->pins[i].ended);
            CHECK_UINT(s->duplicates, 0);
            CHECK_UINT(s->unmatched_ends, 0);
            CHECK_UINT(s->unknown_refs, 0);
            CHECK(s->has_goodbye && !recording_rotated(s));
            size_t said = 0;
            for (size_t i = 0; i < s->n_notices; i++)
                said += strcmp(s->notices[i].code, "agent.capability") == 0;
            CHECK_UINT(said, 1);
        }
        recording_free(r);
        /* read up to a file that rotated out: the session goes on elsewhere */
        struct buf two = {0};
        rotated_part(&two, 4242, 0, 0, codes[c]);
        rotated_part(&two, 4242, 1, 0, codes[c]);
        r = load_keep(write_file("rotated2.vtp", &two), RECORDING_KEEP_ALL);
        if (CHECK(r != NULL) && CHECK_UINT(r->n_sessions, 1)) {
            CHECK_UINT(r->sessions[0]->parts, 2);
            CHECK(recording_rotated(r->sessions[0]));
        }
        recording_free(r);
        free(two.data);
        free(b.data);
    }
    /* not a rotation: the first file ends without rotating out, or the next is another connection's */
    struct buf b = {0};
    rotated_part(&b, 4242, 0, 1, codes[0]);
    rotated_part(&b, 4242, 1, 1, codes[0]);
    struct recording *r = load_keep(write_file("not_rotated.vtp", &b), RECORDING_KEEP_ALL);
    if (CHECK(r != NULL) && CHECK_UINT(r->n_sessions, 2))
        CHECK_UINT(r->sessions[1]->parts, 1);
    recording_free(r);
    b.len = 0;
    rotated_part(&b, 4242, 0, 0, codes[1]);
    rotated_part(&b, 4243, 1, 1, codes[1]);
    r = load_keep(write_file("other_jvm.vtp", &b), RECORDING_KEEP_ALL);
    if (CHECK(r != NULL) && CHECK_UINT(r->n_sessions, 2))
        CHECK(r->sessions[1]->hello.pid != r->sessions[0]->hello.pid);
    recording_free(r);
    free(b.data);
}

static void test_keep_sessions(void)
{
    struct buf b = {0};
    three_sessions(&b);
    const char *file = write_file("three.vtp", &b);
    static const size_t keeps[] = {RECORDING_KEEP_ALL, RECORDING_KEEP_LAST, 1, 2, 3};
    for (size_t k = 0; k < sizeof(keeps) / sizeof(keeps[0]); k++) {
        struct recording *r = load_keep(file, keeps[k]);
        check_kept(r, keeps[k]);
        recording_free(r);
    }
    /* a stream (a FIFO: vtpin report - of a pipe takes the same path) is copied to a file of its own */
    char fifo[512];
    snprintf(fifo, sizeof(fifo), "%s/three.fifo", tmpdir);
    if (!CHECK_INT(mkfifo(fifo, 0600), 0))
        return;
    pid_t pid = fork();
    if (pid == 0) { /* the writer, like cat */
        int fd = open(fifo, O_WRONLY);
        ssize_t n = fd >= 0 ? write(fd, b.data, b.len) : -1;
        _exit(n == (ssize_t)b.len ? 0 : 1);
    }
    struct recording *r = load_keep(fifo, 2);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    check_kept(r, 2);
    recording_free(r);
    unlink(fifo);
    free(b.data);
}

static void test_unknown_ids(void)
{
    struct buf b = {0};
    buf_magic(&b);
    ev_hello(&b, 7, "21");
    ev_string(&b, 1, "com.example.Known");
    ev_method(&b, 1, 1, 55, 56, 0, 0, 57);            /* name, source and module strings never defined */
    struct fspec f[] = {{1, 3, 1, 1}, {77, 4, 2, 0}}; /* method 77 never defined */
    ev_stack(&b, 1, f, 2);
    ev_pin_start(&b, 1, 2 * SEC, VTPIN__V1__PIN_REASON__MONITOR, 1, 0, 99, 98); /* names undefined */
    ev_pin_start(&b, 2, 2 * SEC, VTPIN__V1__PIN_REASON__MONITOR, 42, 0, 0, 0);  /* stack undefined */
    ev_pin_start(&b, 3, 2 * SEC, 77, 1, 9, 0, 0); /* unknown reason, culprit outside the stack */
    ev_pin_start(&b, 1, 2 * SEC, VTPIN__V1__PIN_REASON__MONITOR, 1, 0, 0, 0); /* pin 1 again */
    ev_pin_end(&b, 1234, 2 * SEC, 3 * SEC);                                   /* never started */
    ev_pin_end(&b, 1, 2 * SEC, 3 * SEC);
    struct recording *r = load_ok(write_file("unknown.vtp", &b));
    free(b.data);
    if (!CHECK(r != NULL))
        return;
    const struct recording_session *s = r->sessions[0];
    CHECK_UINT(s->n_pins, 3);
    CHECK_UINT(s->unmatched_ends, 1);
    CHECK_UINT(s->duplicates, 1);
    CHECK(s->unknown_refs >= 7);
    if (s->n_pins == 3) {
        const struct recording_pin *p = &s->pins[0];
        CHECK_STR(p->vthread_name, RECORDING_UNKNOWN);
        CHECK_STR(p->stack->frames[0].method->class_name, "com.example.Known");
        CHECK_STR(p->stack->frames[0].method->name, RECORDING_UNKNOWN);
        CHECK_STR(p->stack->frames[1].method->class_name, RECORDING_UNKNOWN);
        CHECK(!p->stack->frames[1].method->defined);
        CHECK(s->pins[1].stack == NULL);
        CHECK(!s->pins[2].has_culprit);
    }
    struct report_options o = {.top = 10};
    char *t = render(report_text, r, &o, NULL);
    CHECK_CONTAINS(t, "<unknown method>");
    CHECK_CONTAINS(t, "<stack not available>");
    CHECK_CONTAINS(t, "UNKNOWN: 1 pin");
    CHECK_CONTAINS(t, "problems in the recording:");
    free(t);
    size_t n;
    char *j = render(report_json, r, &o, &n);
    CHECK(j && json_valid(j, n));
    CHECK_CONTAINS(j, "\"culprit\": null");
    CHECK_CONTAINS(j, "\"method\": \"<unknown>\"");
    free(j);
    recording_free(r);
}

/* A recording whose last counters say the sampler ran late `gaps` times, at most gap_max_ns. */
static struct recording *late_sampler_recording(const char *name, uint64_t gaps, uint64_t gap_max_ns)
{
    struct buf b = {0};
    buf_magic(&b);
    sample_events(&b, 0);
    Vtpin__V1__Stats st = VTPIN__V1__STATS__INIT;
    fill_stats(&st, 4 * SEC);
    st.has_sample_gaps = st.has_sample_gap_max_ns = 1;
    st.sample_gaps = gaps;
    st.sample_gap_max_ns = gap_max_ns;
    ev_goodbye_stats(&b, &st);
    struct recording *r = load_ok(write_file(name, &b));
    free(b.data);
    return r;
}

/* A late sampler is said: the JSON's stats carry its rounds and longest span, and the text report
 * says what may be missing; a sampler on time adds no line. */
static void test_sample_gaps(void)
{
    struct recording *r = late_sampler_recording("late.vtp", 3, 45 * MS);
    if (!CHECK(r != NULL))
        return;
    const struct session_stats *st = &r->sessions[0]->stats;
    CHECK(st->msg.has_sample_gaps && st->msg.sample_gaps == 3 && st->msg.has_sample_gap_max_ns &&
          st->msg.sample_gap_max_ns == 45 * MS);
    struct report_options o = {.top = 10};
    struct jsonread *doc = render_json_doc(r, &o, NULL);
    if (doc) {
        CHECK_INT(jsonread_int(jsonread_get(jsonread_get(doc, "stats"), "sample_gaps"), 0), 3);
        CHECK_INT(jsonread_int(jsonread_get(jsonread_get(doc, "stats"), "sample_gap_max_ns"), 0), 45 * MS);
    }
    jsonread_free(doc);
    char *t = render(report_text, r, &o, NULL);
    if (CHECK(t != NULL))
        CHECK_CONTAINS(t, "\n  sampler late 3 time(s), a carrier at most 45.0 ms without a look: a park after attach, "
                          "or a native or VM block, shorter than that may be missing, and a carrier hog too\n");
    free(t);
    recording_free(r);
    r = late_sampler_recording("on_time.vtp", 0, 12 * MS);
    if (!CHECK(r != NULL))
        return;
    t = render(report_text, r, &o, NULL);
    CHECK(t && !strstr(t, "sampler late"));
    free(t);
    recording_free(r);
}

/* A hog whose stack, taken as it was reported, shows it unmounting (VirtualThread.yieldContinuation:
 * ci10's "hog" on a yielding thread of JDK 25 had it on top): seen_unmounting in the JSON, and the
 * text says what sampled occupancy cannot tell; a hog computing in App.other is neither. */
static void test_hog_seen_unmounting(void)
{
    enum { S_VT = 60, S_YC, S_VT_JAVA, M_YC = 30, ST_Y = 60, ST_C };
    struct buf b = {0};
    buf_magic(&b);
    sample_events(&b, 0);
    ev_string(&b, S_VT, "java.lang.VirtualThread");
    ev_string(&b, S_YC, "yieldContinuation");
    ev_string(&b, S_VT_JAVA, "VirtualThread.java");
    ev_method(&b, M_YC, S_VT, S_YC, S_VT_JAVA, 0, 0, 0);
    struct fspec ys[] = {{M_YC, 537, 8, 0}, {M_OTHER, 20, 5, 0}, {M_MAIN, 10, 3, 0}};
    struct fspec cs[] = {{M_MAIN, 12, 4, 0}};
    ev_stack(&b, ST_Y, ys, 3);
    ev_stack(&b, ST_C, cs, 1);
    ev_hog_start(&b, 1, 2 * SEC, 201, 0, S_CARRIER, ST_Y, 1);
    ev_hog_end(&b, 1, 2 * SEC, 2 * SEC + 250 * MS, 2 * SEC + 240 * MS);
    ev_hog_start(&b, 2, 3 * SEC, 202, 0, S_CARRIER, ST_C, 0);
    ev_hog_end(&b, 2, 3 * SEC, 3 * SEC + 300 * MS, 3 * SEC + 290 * MS);
    Vtpin__V1__Stats st = VTPIN__V1__STATS__INIT;
    fill_stats(&st, 4 * SEC);
    ev_goodbye_stats(&b, &st);
    struct recording *r = load_ok(write_file("hog_unmounting.vtp", &b));
    free(b.data);
    if (!CHECK(r != NULL))
        return;
    const struct recording_session *s = r->sessions[0];
    if (CHECK_UINT(s->n_hogs, 2)) {
        CHECK(recording_hog_seen_unmounting(&s->hogs[0]));
        CHECK(!recording_hog_seen_unmounting(&s->hogs[1]));
    }
    struct report_options o = {.top = 10};
    struct jsonread *doc = render_json_doc(r, &o, NULL);
    if (doc) {
        const struct jsonread *hogs = jsonread_get(doc, "hogs");
        CHECK(jsonread_bool(jsonread_get(jsonread_at(hogs, 0), "seen_unmounting"), 0));
        CHECK(!jsonread_bool(jsonread_get(jsonread_at(hogs, 1), "seen_unmounting"), 1));
    }
    jsonread_free(doc);
    char *t = render(report_text, r, &o, NULL);
    if (CHECK(t != NULL)) {
        const char *said =
            strstr(t, "    seen unmounting as it was reported (VirtualThread.yieldContinuation): without "
                      "counted mounts\n");
        CHECK(said != NULL);
        CHECK(said && !strstr(strchr(said, '\n'), "seen unmounting")); /* once: the computing hog has none */
        const char *other = strstr(t, "com.example.App.other(App.java:20)");
        CHECK(other && said && other < said); /* under its culprit, App.other */
    }
    free(t);
    recording_free(r);
}

/* Carrier hogs: loaded as pins are (an end without its start and a second
 * start counted), in the JSON's hogs[] and stats.hogs, and in the text's
 * section grouped by culprit frame. Hogs 1 (400 ms) and 2 (ongoing: 800 ms
 * to the last timestamp) blame App.other; hog 3 (50 ms) has no stack. */
static void test_hogs(void)
{
    enum { S_CRUNCH = 50, ST_H = 50 };
    struct buf b = {0};
    buf_magic(&b);
    sample_events(&b, 0);
    ev_string(&b, S_CRUNCH, "crunch");
    struct fspec hs[] = {{M_OTHER, 20, 5, 0}, {M_MAIN, 10, 3, 0}};
    ev_stack(&b, ST_H, hs, 2);
    ev_hog_start(&b, 3, 2 * SEC + 550 * MS, 203, 0, S_CARRIER, 0, 0);
    ev_hog_end(&b, 3, 2 * SEC + 550 * MS, 2 * SEC + 600 * MS, 0);
    ev_hog_start(&b, 1, 2 * SEC + 600 * MS, 201, S_CRUNCH, S_CARRIER, ST_H, 0);
    ev_hog_start(&b, 1, 2 * SEC + 700 * MS, 999, 0, 0, 0, 0); /* hog 1 again: counted, the first kept */
    ev_hog_end(&b, 1, 2 * SEC + 600 * MS, 3 * SEC, 3 * SEC - 10 * MS);
    ev_hog_end(&b, 1, 2 * SEC + 600 * MS, 3 * SEC, 0); /* ended again */
    ev_hog_end(&b, 77, 2 * SEC, 3 * SEC, 0);           /* never started */
    ev_hog_start(&b, 2, 3 * SEC + 200 * MS, 202, S_CRUNCH, S_CARRIER, ST_H, 0);
    Vtpin__V1__Stats st = VTPIN__V1__STATS__INIT;
    fill_stats(&st, 4 * SEC);
    st.has_hogs = 1;
    st.hogs = 3;
    ev_goodbye_stats(&b, &st);
    struct recording *r = load_ok(write_file("hogs.vtp", &b));
    free(b.data);
    if (!CHECK(r != NULL))
        return;
    const struct recording_session *s = r->sessions[0];
    CHECK_UINT(s->n_hogs, 3);
    CHECK_UINT(s->unmatched_hog_ends, 1);
    CHECK_UINT(s->duplicate_hogs, 2);
    CHECK_UINT(s->unmatched_ends, 0); /* the pins' counters stay the pins' */
    CHECK_UINT(s->duplicates, 0);
    CHECK_UINT(s->unknown_refs, 0);
    CHECK(s->stats.msg.has_hogs && s->stats.msg.hogs == 3);
    if (s->n_hogs == 3) {
        const struct recording_hog *h = &s->hogs[1];
        CHECK_UINT(h->id, 1);
        CHECK(h->ended);
        CHECK_INT(h->duration_ns, 400 * MS);
        CHECK_INT(h->vthread_id, 201);
        CHECK_STR(h->vthread_name, "crunch");
        CHECK(h->has_culprit && h->culprit == 0);
        CHECK_INT(recording_hog_duration(s, &s->hogs[2]), 800 * MS);
    }
    struct report_options o = {.top = 10};
    char *j = NULL;
    struct jsonread *doc = render_json_doc(r, &o, &j);
    if (doc) {
        const char *pins = strstr(j, "\"pins\": ["), *hogs_at = strstr(j, "\"hogs\": [\n"),
                   *sites = strstr(j, "\"sites\": [");
        CHECK(pins && hogs_at && sites && pins < hogs_at && hogs_at < sites); /* after pins */
        const struct jsonread *hogs = jsonread_get(doc, "hogs");
        CHECK_UINT(jsonread_len(hogs), 3);
        const struct jsonread *h = jsonread_at(hogs, 1);
        CHECK_INT(jsonread_int(jsonread_get(h, "id"), 0), 1);
        CHECK_INT(jsonread_int(jsonread_get(jsonread_get(h, "vthread"), "id"), 0), 201);
        CHECK_STR(jsonread_str(jsonread_get(jsonread_get(h, "vthread"), "name"), ""), "crunch");
        CHECK_INT(jsonread_int(jsonread_get(jsonread_get(h, "carrier"), "tid"), 0), 4001);
        CHECK_STR(jsonread_str(jsonread_get(jsonread_get(h, "carrier"), "name"), ""), "ForkJoinPool-1-worker-1");
        /* Unix epoch ns, as the pins' times */
        CHECK_INT(jsonread_int(jsonread_get(h, "start_ns"), 0), START_UNIX + 1 * SEC + 600 * MS);
        CHECK_INT(jsonread_int(jsonread_get(h, "end_ns"), 0), START_UNIX + 2 * SEC);
        CHECK_INT(jsonread_int(jsonread_get(h, "duration_ns"), 0), 400 * MS);
        CHECK(!jsonread_bool(jsonread_get(h, "ongoing"), 1));
        CHECK_INT(jsonread_int(jsonread_get(h, "last_running_ns"), 0), START_UNIX + 2 * SEC - 10 * MS);
        const struct jsonread *culprit = jsonread_get(h, "culprit");
        CHECK_STR(jsonread_str(jsonread_get(culprit, "class"), ""), "com.example.App");
        CHECK_STR(jsonread_str(jsonread_get(culprit, "method"), ""), "other");
        CHECK_INT(jsonread_int(jsonread_get(culprit, "line"), 0), 20);
        CHECK_STR(jsonread_str(jsonread_get(culprit, "kind"), ""), "java");
        CHECK_UINT(jsonread_len(jsonread_get(h, "stack")), 2);
        CHECK_STR(jsonread_str(jsonread_get(jsonread_at(jsonread_get(h, "stack"), 1), "method"), ""), "main");
        const struct jsonread *ongoing = jsonread_at(hogs, 2);
        CHECK(jsonread_bool(jsonread_get(ongoing, "ongoing"), 0));
        CHECK(jsonread_is_null(jsonread_get(ongoing, "duration_ns")) && jsonread_get(ongoing, "duration_ns"));
        CHECK(jsonread_is_null(jsonread_get(ongoing, "end_ns")) && jsonread_get(ongoing, "end_ns"));
        CHECK(jsonread_is_null(jsonread_get(ongoing, "last_running_ns")) && jsonread_get(ongoing, "last_running_ns"));
        const struct jsonread *stackless = jsonread_at(hogs, 0);
        CHECK(jsonread_is_null(jsonread_get(stackless, "culprit")) && jsonread_get(stackless, "culprit"));
        CHECK_UINT(jsonread_len(jsonread_get(stackless, "stack")), 0);
        CHECK(jsonread_is_null(jsonread_get(stackless, "vthread_name")));
        CHECK(jsonread_is_null(jsonread_get(jsonread_get(stackless, "vthread"), "name")));
        CHECK(jsonread_is_null(jsonread_get(stackless, "last_running_ns"))); /* not said */
        CHECK_INT(jsonread_int(jsonread_get(jsonread_get(doc, "stats"), "hogs"), 0), 3);
        const struct jsonread *rec = jsonread_get(doc, "recording");
        CHECK_INT(jsonread_int(jsonread_get(rec, "unmatched_hog_ends"), 0), 1);
        CHECK_INT(jsonread_int(jsonread_get(rec, "duplicate_hog_events"), 0), 2);
    }
    jsonread_free(doc);
    free(j);
    char *t = render(report_text, r, &o, NULL);
    if (CHECK(t != NULL)) {
        const char *section = strstr(t, "\ncarrier hogs: 3, longest 800.0 ms, 1 still running at the end ("),
                   *notices = strstr(t, "\nnotices");
        CHECK(section && notices && strstr(t, "#2  com.example.Db.query") < section && section < notices);
        CHECK_CONTAINS(section, "\n\n#1  com.example.App.other(App.java:20)\n"
                                "    2 hogs, total 1.20 s, longest 800.0 ms, 1 still running at the end (counted up "
                                "to it)\n"
                                "    longest: virtual thread #202 \"crunch\" on ForkJoinPool-1-worker-1 (tid 4001)\n"
                                "\n#2  <stack not available>\n"
                                "    1 hog, total 50.0 ms, longest 50.0 ms\n"
                                "    longest: virtual thread #203 on ForkJoinPool-1-worker-1 (tid 4001)\n");
        CHECK_CONTAINS(t, "  carrier hogs reported 3\n");
        CHECK_CONTAINS(t, ", 1 hog end(s) without a start, 2 duplicate hog event(s)\n");
    }
    free(t);
    /* --top 1: one culprit, and how many more */
    o.top = 1;
    t = render(report_text, r, &o, NULL);
    CHECK_CONTAINS(t, "\n... 1 more hog culprit (--top 0 shows all)\n");
    free(t);
    recording_free(r);

    /* no hogs, no section */
    b = (struct buf){0};
    buf_magic(&b);
    sample_events(&b, 1);
    r = load_ok(write_file("nohogs.vtp", &b));
    free(b.data);
    if (!CHECK(r != NULL))
        return;
    o.top = 10;
    t = render(report_text, r, &o, NULL);
    CHECK(t && strstr(t, "carrier hogs") == NULL);
    free(t);
    j = render(report_json, r, &o, NULL);
    CHECK_CONTAINS(j, "\"hogs\": []");
    CHECK_CONTAINS(j, "\"hogs\": null"); /* stats.hogs: not written by this agent */
    free(j);
    recording_free(r);
}

static void test_sessions(void)
{
    struct buf b = {0};
    buf_magic(&b);
    ev_string(&b, 1, "before any hello"); /* events without a Hello: a session of their own */
    ev_hello(&b, 100, "21");
    ev_string(&b, 1, "first.Session");
    ev_method(&b, 1, 1, 1, 0, 0, 0, 0);
    struct fspec f[] = {{1, 5, 0, 1}};
    ev_stack(&b, 1, f, 1);
    ev_pin_start(&b, 1, 2 * SEC, VTPIN__V1__PIN_REASON__MONITOR, 1, 0, 0, 0);
    ev_hello(&b, 200, "25"); /* ids start over */
    ev_string(&b, 1, "second.Session");
    ev_method(&b, 1, 1, 1, 0, 0, 0, 0);
    ev_stack(&b, 1, f, 1);
    ev_pin_start(&b, 1, 2 * SEC, VTPIN__V1__PIN_REASON__MONITOR, 1, 0, 0, 0);
    ev_pin_end(&b, 1, 2 * SEC, 2 * SEC + 5 * MS);
    size_t second = b.len;
    /* then a whole second recording appended (cat a.vtp b.vtp) */
    buf_magic(&b);
    ev_hello(&b, 300, "25");
    struct recording *r = load_ok(write_file("sessions.vtp", &b));
    free(b.data);
    if (!CHECK(r != NULL))
        return;
    CHECK_UINT(r->n_sessions, 4);
    CHECK_UINT(r->segments, 2);
    CHECK(r->bytes > second);
    if (r->n_sessions == 4) {
        CHECK(!r->sessions[0]->has_hello);
        CHECK_INT(r->sessions[1]->hello.pid, 100);
        CHECK_INT(r->sessions[2]->hello.pid, 200);
        CHECK_INT(r->sessions[3]->hello.pid, 300);
        CHECK_STR(r->sessions[1]->pins[0].stack->frames[0].method->class_name, "first.Session");
        CHECK_STR(r->sessions[2]->pins[0].stack->frames[0].method->class_name, "second.Session");
        CHECK(!r->sessions[1]->pins[0].ended);
        CHECK(r->sessions[2]->pins[0].ended);
        struct report_options o = {.session = 0, .top = 10};
        char *t = render(report_text, r, &o, NULL);
        CHECK_CONTAINS(t, "no Hello");
        free(t);
        o.session = 1;
        size_t n;
        char *j = render(report_json, r, &o, &n);
        CHECK(j && json_valid(j, n));
        CHECK_CONTAINS(j, "\"session\": 2");
        CHECK_CONTAINS(j, "\"sessions\": 4");
        free(j);
    }
    recording_free(r);
}

static void test_long_stack_elided(void)
{
    struct buf b = {0};
    buf_magic(&b);
    ev_hello(&b, 1, "21");
    ev_string(&b, 1, "deep.Stack");
    ev_string(&b, 2, "f");
    ev_string(&b, 3, "Stack.java");
    ev_method(&b, 1, 1, 2, 3, 0, 0, 0);
    struct fspec f[40];
    for (int i = 0; i < 40; i++)
        f[i] = (struct fspec){1, 100 + i, i, i == 2};
    ev_stack(&b, 1, f, 40);
    ev_pin_start(&b, 1, 2 * SEC, VTPIN__V1__PIN_REASON__MONITOR, 1, 2, 0, 0);
    ev_pin_end(&b, 1, 2 * SEC, 3 * SEC);
    struct recording *r = load_ok(write_file("deep.vtp", &b));
    free(b.data);
    if (!CHECK(r != NULL))
        return;
    struct report_options o = {.top = 10};
    char *t = render(report_text, r, &o, NULL);
    CHECK_CONTAINS(t, "      deep.Stack.f(Stack.java:106)\n      ... 33 more frames (--full-stacks shows them)\n");
    free(t);
    o.full_stacks = 1;
    t = render(report_text, r, &o, NULL);
    CHECK_CONTAINS(t, "deep.Stack.f(Stack.java:139)\n");
    CHECK(strstr(t, "more frames") == NULL);
    free(t);
    recording_free(r);
}

static void test_json_strings(void)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"plain", "\"plain\""},
        {"q\"b\\s/", "\"q\\\"b\\\\s/\""},
        {"\n\r\t\b\f\x01\x1f\x7f", "\"\\n\\r\\t\\b\\f\\u0001\\u001f\\u007f\""},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\""},
        {"\xff", "\"\\ufffd\""},
        {"a\xc3", "\"a\\ufffd\""},                                /* cut 2-byte sequence */
        {"\xe2\x82x", "\"\\ufffdx\""},                            /* cut 3-byte sequence: one U+FFFD */
        {"\xc1\xbf", "\"\\ufffd\\ufffd\""},                       /* overlong */
        {"\xf5\x80\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""}, /* beyond U+10FFFF */
        {"\xc0\x80", "\"\\u0000\""},                              /* modified UTF-8 NUL */
        {"\xed\xa0\xbd\xed\xb8\x80", "\"\xf0\x9f\x98\x80\""},     /* CESU-8 pair: U+1F600 */
        {"\xed\xa0\xbd!", "\"\\ufffd!\""},                        /* lone surrogate */
        {"\xe2\x80\xa8", "\"\\u2028\""},
        {"", "\"\""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *got = json_of_string(cases[i].in);
        if (!CHECK_STR(got, cases[i].out))
            fprintf(stderr, "    (case %zu)\n", i);
        CHECK(got && json_valid(got, strlen(got)));
        free(got);
    }
    /* the emitter: nesting, separators, inline containers, no trailing commas */
    char *text = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&text, &n);
    struct json j;
    json_init(&j, out);
    json_object_begin(&j);
    json_kv_string(&j, "a", NULL);
    json_key(&j, "b");
    json_array_begin(&j);
    json_array_end(&j);
    json_key(&j, "c");
    json_array_begin_inline(&j);
    json_int(&j, -1);
    json_uint(&j, UINT64_MAX);
    json_bool(&j, 1);
    json_object_begin(&j); /* inside an inline array: inline too */
    json_kv_int(&j, "x", INT64_MIN);
    json_object_end(&j);
    json_array_end(&j);
    json_object_end(&j);
    CHECK_INT(json_finish(&j), 0);
    fclose(out);
    CHECK_STR(text, "{\n  \"a\": null,\n  \"b\": [],\n  \"c\": [-1, 18446744073709551615, true, "
                    "{\"x\": -9223372036854775808}]\n}\n");
    CHECK(json_valid(text, n));
    free(text);
}

static void test_text_sanitized(void)
{
    char *text = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&text, &n);
    utf8_write_printable(out, "ok \x1b[31mred\x1b[0m \xc2\x9b \xe2\x80\xae \xff caf\xc3\xa9");
    fclose(out);
    CHECK_STR(text, "ok \\x1b[31mred\\x1b[0m \\x9b \\u202e \xef\xbf\xbd caf\xc3\xa9");
    free(text);

    /* the bounded form (the agent's trace): the same rule, a NUL (C0 80) and the line separators
     * escaped, cut only between characters */
    char buf[64];
    CHECK_STR(utf8_printable("a\xc0\x80"
                             "b\ne\xe2\x80\xa8"
                             "f\xe2\x80\xa9"
                             "g\x1b",
                             buf, sizeof(buf)),
              "a\\x00b\\x0ae\\u2028f\\u2029g\\x1b");
    CHECK_STR(utf8_printable("ab\x1b", buf, 6), "ab"); /* "\\x1b" does not fit whole */
    CHECK_STR(utf8_printable("ab\x1b", buf, 7), "ab\\x1b");
    CHECK_STR(utf8_printable("caf\xc3\xa9", buf, 5), "caf");
    CHECK_STR(utf8_printable("", buf, 1), "");
}

/* A recording whose writes failed (the agent's notice and counters after the
 * last whole frame), with collector drops and a full method table: the report
 * says it ends early because of failed writes and shows every counter. */
static void test_lost_on_the_way_out(void)
{
    struct buf b = {0};
    buf_magic(&b);
    sample_events(&b, 0);
    ev_notice(&b, 4 * SEC, "output.record.write_failed",
              "cannot write the recording /data/x.vtp: No space left on device; it ends here");
    Vtpin__V1__Stats st = VTPIN__V1__STATS__INIT;
    fill_stats(&st, 5 * SEC);
    st.has_collector_dropped = st.has_reconnects = st.has_write_failures = 1;
    st.has_events_unwritten = st.has_methods_dropped = 1;
    st.collector_dropped = 7;
    st.reconnects = 2;
    st.write_failures = 1;
    st.events_unwritten = 42;
    st.methods_dropped = 3;
    ev_goodbye_stats(&b, &st);
    struct recording *r = load_ok(write_file("lost.vtp", &b));
    free(b.data);
    if (!CHECK(r != NULL))
        return;
    const struct recording_session *se = r->sessions[0];
    CHECK(recording_write_failed(se) != NULL);
    CHECK_CONTAINS(recording_write_failed(se), "No space left on device");
    CHECK(se->stats.msg.has_collector_dropped && se->stats.msg.collector_dropped == 7);
    CHECK(se->stats.msg.has_reconnects && se->stats.msg.reconnects == 2);
    CHECK(se->stats.msg.has_events_unwritten && se->stats.msg.events_unwritten == 42);
    /* pin 3 started at 3.5 s, its end unwritten: counted up to the failure (4 s), not the Goodbye (5 s) */
    for (size_t i = 0; i < se->n_pins; i++)
        if (se->pins[i].id == 3)
            CHECK_INT(recording_pin_duration(se, &se->pins[i]), 500 * MS);
    struct report_options o = {0};
    size_t n;
    char *t = render(report_text, r, &o, &n);
    CHECK_CONTAINS(t, "ends early: the agent could not write it (1 write failed, 42 events unwritten");
    CHECK(t && !strstr(t, "killed"));
    CHECK_CONTAINS(t, "collector dropped 7, reconnects 2");
    CHECK_CONTAINS(t, "writes failed 1, events unwritten 42");
    CHECK_CONTAINS(t, "methods dropped 3");
    free(t);
    char *j = render(report_json, r, &o, &n);
    CHECK(j && json_valid(j, n));
    CHECK_CONTAINS(j, "\"write_failed\": true");
    CHECK_CONTAINS(j, "\"complete\": false");
    CHECK_CONTAINS(j, "\"collector_dropped\": 7");
    CHECK_CONTAINS(j, "\"reconnects\": 2");
    CHECK_CONTAINS(j, "\"write_failures\": 1");
    CHECK_CONTAINS(j, "\"events_unwritten\": 42");
    CHECK_CONTAINS(j, "\"methods_dropped\": 3");
    free(j);
    recording_free(r);

    /* an older agent's counters: null in JSON, not shown in text, nothing failed */
    struct buf old = {0};
    buf_magic(&old);
    sample_events(&old, 1);
    r = load_ok(write_file("old.vtp", &old));
    free(old.data);
    if (!CHECK(r != NULL))
        return;
    CHECK(recording_write_failed(r->sessions[0]) == NULL);
    t = render(report_text, r, &o, &n);
    CHECK(t && !strstr(t, "collector dropped") && !strstr(t, "ends early"));
    free(t);
    j = render(report_json, r, &o, &n);
    CHECK_CONTAINS(j, "\"collector_dropped\": null");
    CHECK_CONTAINS(j, "\"write_failed\": false");
    free(j);
    recording_free(r);
}

/* The agent warned after its Hello that the disk was nearly full, and the
 * file then stops with no end marker and no failure notice (no room was
 * left to write one): the report says the writes probably failed on a full
 * disk, not that the JVM was killed. */
static void test_disk_nearly_full(void)
{
    struct buf b = {0};
    buf_magic(&b);
    ev_hello(&b, 4242, "21.0.5");
    ev_notice(&b, 1 * SEC, "output.record.disk_nearly_full",
              "the disk holding the recording /small/x.vtp is nearly full (no room for the 8 KiB kept for its last "
              "counters: No space left on device): the recording may be cut short by a failed write");
    ev_pin_start(&b, 1, 2 * SEC, VTPIN__V1__PIN_REASON__NATIVE, 0, 0, 0, 0);
    struct recording *r = load_ok(write_file("nearly_full.vtp", &b));
    free(b.data);
    if (!CHECK(r != NULL))
        return;
    const struct recording_session *se = r->sessions[0];
    CHECK(recording_write_failed(se) == NULL);
    CHECK(recording_disk_nearly_full(se) != NULL);
    CHECK(recording_write_failed_probably(se));
    struct report_options o = {0};
    size_t n;
    char *t = render(report_text, r, &o, &n);
    CHECK_CONTAINS(t, "ends early: writes probably failed on a full disk");
    CHECK(t && !strstr(t, "killed") && !strstr(t, "no end marker (the JVM"));
    free(t);
    char *j = render(report_json, r, &o, &n);
    CHECK(j && json_valid(j, n));
    CHECK_CONTAINS(j, "\"write_failed\": true");
    CHECK_CONTAINS(j, "\"disk_nearly_full\": true");
    CHECK_CONTAINS(j, "\"complete\": false");
    free(j);
    recording_free(r);
}

/* A damaged frame: the header says where, not that the JVM was killed; the
 * JSON has the offset. */
static void test_damaged_report(void)
{
    struct buf b = {0};
    buf_magic(&b);
    sample_events(&b, 0);
    size_t at = b.len;
    uint8_t garbage[] = {0x05, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x02};
    buf_put(&b, garbage, sizeof(garbage));
    struct recording *r = load_ok(write_file("damaged_report.vtp", &b));
    free(b.data);
    if (!CHECK(r != NULL))
        return;
    CHECK(r->sessions[0]->damaged);
    CHECK_UINT(r->sessions[0]->damaged_at, at);
    struct report_options o = {0};
    size_t n;
    char want[128];
    snprintf(want, sizeof(want), "damaged at byte offset %zu", at);
    char *t = render(report_text, r, &o, &n);
    CHECK_CONTAINS(t, want);
    CHECK(t && !strstr(t, "killed") && !strstr(t, "no end marker"));
    free(t);
    char *j = render(report_json, r, &o, &n);
    CHECK(j && json_valid(j, n));
    snprintf(want, sizeof(want), "\"damaged\": {\"offset\": %zu, \"bytes_skipped\": %zu}", at, sizeof(garbage));
    CHECK_CONTAINS(j, want);
    free(j);
    recording_free(r);

    /* a whole file: "damaged": null */
    struct buf whole = {0};
    buf_magic(&whole);
    sample_events(&whole, 1);
    r = load_ok(write_file("whole.vtp", &whole));
    free(whole.data);
    if (!CHECK(r != NULL))
        return;
    j = render(report_json, r, &o, &n);
    CHECK_CONTAINS(j, "\"damaged\": null");
    CHECK_CONTAINS(j, "\"disk_nearly_full\": false");
    free(j);
    recording_free(r);
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 2;
    }
    CHECK_RUN(test_load_sample);
    CHECK_RUN(test_sites_ranking);
    CHECK_RUN(test_frame_format);
    CHECK_RUN(test_json_report);
    CHECK_RUN(test_text_report);
    CHECK_RUN(test_no_pins);
    CHECK_RUN(test_truncated);
    CHECK_RUN(test_bad_files);
    CHECK_RUN(test_damaged);
    CHECK_RUN(test_concatenated_pipe);
    CHECK_RUN(test_keep_sessions);
    CHECK_RUN(test_session_unread);
    CHECK_RUN(test_read_again_damaged);
    CHECK_RUN(test_rotated_parts);
    CHECK_RUN(test_each_session);
    CHECK_RUN(test_max_bytes);
    CHECK_RUN(test_dropped_extras);
    CHECK_RUN(test_unknown_ids);
    CHECK_RUN(test_sessions);
    CHECK_RUN(test_long_stack_elided);
    CHECK_RUN(test_json_strings);
    CHECK_RUN(test_text_sanitized);
    CHECK_RUN(test_lost_on_the_way_out);
    CHECK_RUN(test_disk_nearly_full);
    CHECK_RUN(test_damaged_report);
    CHECK_RUN(test_jdk_sites);
    CHECK_RUN(test_hogs);
    CHECK_RUN(test_hog_seen_unmounting);
    CHECK_RUN(test_sample_gaps);
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    CHECK_MAIN_RETURN();
}
