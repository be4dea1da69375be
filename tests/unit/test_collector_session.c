/* Unit tests for collector/session.c: the first frame of a connection,
 * the id tables (bounded) and culprit frames formatted like the agent's trace. */
#include "session.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "collector_events.h"
#include "common/budget.h"

static int define(struct session *s, WireEvent *ev)
{
    int rc = ev ? session_define(s, ev) : -EINVAL;
    wire_event_free(ev);
    return rc;
}

static void test_classify(void)
{
    char why[256];
    WireEvent *ev = ev_hello(42, 1, 0, WIRE_SCHEMA_VERSION);
    CHECK_INT(session_classify_first(ev, why, sizeof(why)), SESSION_FIRST_AGENT);
    wire_event_free(ev);
    ev = ev_hello(42, 1, 0, 1); /* version 1 agents (no kernel view events) are still served */
    CHECK_INT(session_classify_first(ev, why, sizeof(why)), SESSION_FIRST_AGENT);
    wire_event_free(ev);
    ev = ev_hello(42, 1, 0, WIRE_SCHEMA_VERSION + 1);
    CHECK_INT(session_classify_first(ev, why, sizeof(why)), -EPROTONOSUPPORT);
    CHECK_CONTAINS(why, "schema version 3");
    wire_event_free(ev);
    ev = ev_query(VTPIN__V1__QUERY__KIND__TOP, 0);
    CHECK_INT(session_classify_first(ev, why, sizeof(why)), SESSION_FIRST_QUERY);
    wire_event_free(ev);
    ev = ev_pin_end(1, 2);
    CHECK_INT(session_classify_first(ev, why, sizeof(why)), -EPROTO);
    CHECK_CONTAINS(why, "not a Hello or a Query");
    wire_event_free(ev);
}

static void test_decode(void)
{
    WireEvent *ev = NULL;
    uint8_t good[64];
    WireEvent *q = ev_query(VTPIN__V1__QUERY__KIND__STATUS, 7);
    ssize_t n = wire_pack(q, good, sizeof(good), sizeof(good));
    wire_event_free(q);
    if (!CHECK(n > 0))
        return;
    CHECK_INT(wire_decode(good, (size_t)n, &ev), 1);
    if (CHECK(ev))
        CHECK_INT(ev->query->pid, 7);
    wire_event_free(ev);
    /* field 42, length-delimited: a body from a newer schema, well-formed */
    uint8_t newer[] = {5, 0, 0, 0, 0xd2, 0x02, 2, 0x08, 0x05};
    CHECK_INT(wire_decode(newer, sizeof(newer), &ev), 0);
    CHECK(ev == NULL);
    uint8_t empty[] = {0, 0, 0, 0};
    CHECK_INT(wire_decode(empty, sizeof(empty), &ev), -EPROTO);
    uint8_t junk[] = {4, 0, 0, 0, 0xff, 0xff, 0xff, 0xff};
    CHECK_INT(wire_decode(junk, sizeof(junk), &ev), -EPROTO);
    CHECK_INT(wire_decode(junk, 3, &ev), -EPROTO);
    uint8_t wrong_type[] = {2, 0, 0, 0, 0x08, 0x01}; /* Hello (field 1) as a varint */
    CHECK_INT(wire_decode(wrong_type, sizeof(wrong_type), &ev), -EPROTO);
}

static struct session *new_session(const struct session_defs_limits *limits)
{
    WireEvent *ev = ev_hello(4242, 1700000000000000000LL, 3, WIRE_SCHEMA_VERSION);
    struct session *s = NULL;
    if (!CHECK(ev))
        return NULL;
    CHECK_INT(session_new(&s, ev->hello, limits), 0);
    wire_event_free(ev);
    return s;
}

static void test_hello_copied(void)
{
    struct session_defs_limits limits = SESSION_LIMITS_DEFAULT;
    struct session *s = new_session(&limits);
    if (!s)
        return;
    const struct session_hello *h = session_hello(s);
    CHECK_INT(h->pid, 4242);
    CHECK_INT(h->start_unix_ns, 1700000000000000000LL);
    CHECK_UINT(h->connection, 3);
    CHECK_STR(h->java_version, "21.0.5");
    CHECK(h->host == NULL); /* absent: NULL, as the report keeps it (proto/session_hello.h) */
    CHECK_INT(h->mode, VTPIN__V1__LOAD_MODE__ATTACH);
    CHECK_INT(h->occupancy, VTPIN__V1__OCCUPANCY_SOURCE__OCCUPANCY_EXACT);
    session_free(s);
    session_free(NULL);
}

static void test_format_frames(void)
{
    struct session_defs_limits limits = SESSION_LIMITS_DEFAULT;
    struct session *s = new_session(&limits);
    if (!s)
        return;
    CHECK_INT(define(s, ev_string(1, "Repro")), 1);
    CHECK_INT(define(s, ev_string(2, "settle")), 1);
    CHECK_INT(define(s, ev_string(3, "Repro.java")), 1);
    CHECK_INT(define(s, ev_string(4, "java.base")), 1);
    CHECK_INT(define(s, ev_string(5, "java.lang.Thread")), 1);
    CHECK_INT(define(s, ev_string(6, "sleep0")), 1);
    CHECK_INT(define(s, ev_method(1, 1, 2, 3, 0, 0)), 1); /* Repro.settle, unnamed module */
    CHECK_INT(define(s, ev_method(2, 5, 6, 0, 4, 1)), 1); /* native, java.base */
    CHECK_INT(define(s, ev_method(3, 1, 2, 0, 0, 0)), 1); /* no source file */
    uint32_t methods[] = {2, 1, 3, 99};
    int32_t lines[] = {-1, 20, 7, 1};
    CHECK_INT(define(s, ev_stack(7, 4, methods, lines)), 1);
    char out[256];
    CHECK_STR(session_defs_frame_text(session_defs(s), 7, 1, out, sizeof(out)), "Repro.settle(Repro.java:20)");
    CHECK_STR(session_defs_frame_text(session_defs(s), 7, 0, out, sizeof(out)),
              "java.base/java.lang.Thread.sleep0(Native Method)");
    CHECK_STR(session_defs_frame_text(session_defs(s), 7, 2, out, sizeof(out)), "Repro.settle(Unknown Source)");
    CHECK_STR(session_defs_frame_text(session_defs(s), 7, 3, out, sizeof(out)), "<unknown method>");
    CHECK(session_defs_frame_text(session_defs(s), 7, 4, out, sizeof(out)) == NULL); /* index out of the stack */
    CHECK(session_defs_frame_text(session_defs(s), 8, 0, out, sizeof(out)) == NULL); /* unknown stack */
    CHECK(session_defs_frame_text(session_defs(s), 0, 0, out, sizeof(out)) == NULL); /* "no stack" */
    char small[8];
    CHECK_STR(session_defs_frame_text(session_defs(s), 7, 1, small, sizeof(small)), "Repro.s"); /* cut, terminated */
    /* a redefinition replaces */
    CHECK_INT(define(s, ev_string(2, "other")), 1);
    CHECK_STR(session_defs_frame_text(session_defs(s), 7, 1, out, sizeof(out)), "Repro.other(Repro.java:20)");
    CHECK_STR(session_defs_string(session_defs(s), 3), "Repro.java");
    CHECK(session_defs_string(session_defs(s), 77) == NULL);
    /* not a definition */
    WireEvent *ev = ev_pin_end(1, 1);
    CHECK_INT(session_define(s, ev), 0);
    wire_event_free(ev);
    CHECK_UINT(session_defs_dropped(session_defs(s)), 0);
    session_free(s);
}

static void test_limits(void)
{
    struct session_defs_limits limits = {
        .max_strings = 3, .max_string_bytes = 20, .max_methods = 2, .max_stacks = 2, .max_frames = 5};
    struct session *s = new_session(&limits);
    if (!s)
        return;
    CHECK_INT(define(s, ev_string(1, "aaaa")), 1);
    CHECK_INT(define(s, ev_string(2, "bbbb")), 1);
    CHECK_INT(define(s, ev_string(3, "cccccccccccccccc")), 1); /* over the byte budget: dropped */
    CHECK(session_defs_string(session_defs(s), 3) == NULL);
    CHECK_INT(define(s, ev_string(3, "cc")), 1);
    CHECK_INT(define(s, ev_string(4, "d")), 1); /* over the count: dropped */
    CHECK(session_defs_string(session_defs(s), 4) == NULL);
    CHECK_INT(define(s, ev_string(1, "a")), 1); /* replacing is not growing */
    CHECK_STR(session_defs_string(session_defs(s), 1), "a");
    CHECK_INT(define(s, ev_method(1, 1, 2, 0, 0, 0)), 1);
    CHECK_INT(define(s, ev_method(2, 1, 2, 0, 0, 0)), 1);
    CHECK_INT(define(s, ev_method(3, 1, 2, 0, 0, 0)), 1); /* dropped */
    CHECK_INT(define(s, ev_method(2, 2, 1, 0, 0, 0)), 1); /* replaced */
    uint32_t m[] = {1, 1, 1, 1};
    int32_t l[] = {1, 2, 3, 4};
    CHECK_INT(define(s, ev_stack(1, 3, m, l)), 1);
    CHECK_INT(define(s, ev_stack(2, 3, m, l)), 1); /* 6 frames > 5: dropped */
    CHECK_INT(define(s, ev_stack(2, 2, m, l)), 1);
    CHECK_INT(define(s, ev_stack(3, 1, m, l)), 1); /* a third stack: dropped */
    char out[64];
    CHECK_STR(session_defs_frame_text(session_defs(s), 1, 2, out, sizeof(out)), "a.bbbb(Unknown Source)");
    CHECK(session_defs_frame_text(session_defs(s), 3, 0, out, sizeof(out)) == NULL);
    CHECK_UINT(session_defs_dropped(session_defs(s)), 5);
    session_free(s);
}

/* Two sessions share the collector's budget: what it cannot hold is dropped
 * and counted apart; freeing a session gives its share back. */
static void test_budget(void)
{
    struct budget b;
    budget_init(&b, 4096);
    struct session_defs_limits limits = SESSION_LIMITS_DEFAULT;
    limits.budget = &b;
    struct session *s1 = new_session(&limits), *s2 = new_session(&limits);
    if (!s1 || !s2)
        goto out;
    char big[1501];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    CHECK_INT(define(s1, ev_string(1, big)), 1);
    CHECK_INT(define(s1, ev_string(2, big)), 1);
    CHECK(session_defs_string(session_defs(s1), 2) != NULL);
    CHECK_INT(define(s2, ev_string(1, big)), 1); /* a third would go over 4096 */
    CHECK(session_defs_string(session_defs(s2), 1) == NULL);
    CHECK_UINT(session_defs_budget_dropped(session_defs(s2)), 1);
    CHECK_UINT(session_defs_dropped(session_defs(s2)), 1);
    CHECK_INT(define(s2, ev_string(2, "small")), 1); /* what fits is kept */
    CHECK_STR(session_defs_string(session_defs(s2), 2), "small");
    uint32_t m[16];
    int32_t l[16];
    for (size_t i = 0; i < 16; i++) {
        m[i] = 1;
        l[i] = (int32_t)i;
    }
    CHECK_INT(define(s2, ev_stack(1, 16, m, l)), 1); /* a stack that fits is kept */
    CHECK(session_defs_frame_text(session_defs(s2), 1, 0, (char[64]){0}, 64) != NULL);
    CHECK_INT(define(s2, ev_string(4, big)), 1); /* another large one is not */
    CHECK(session_defs_string(session_defs(s2), 4) == NULL);
    CHECK_UINT(session_defs_budget_dropped(session_defs(s2)), 2);
    CHECK(b.used <= b.limit);
    CHECK_UINT(b.refused, 2);
    CHECK_INT(define(s1, ev_string(1, "a")), 1); /* replacing with less gives some back */
    size_t used = b.used;
    session_free(s1);
    s1 = NULL;
    CHECK(b.used < used);
    CHECK_INT(define(s2, ev_string(3, big)), 1); /* now it fits */
    CHECK(session_defs_string(session_defs(s2), 3) != NULL);
    CHECK_UINT(session_defs_budget_dropped(session_defs(s2)), 2);
out:
    session_free(s1);
    session_free(s2);
    CHECK_UINT(b.used, 0);
}

int main(void)
{
    CHECK_RUN(test_classify);
    CHECK_RUN(test_decode);
    CHECK_RUN(test_hello_copied);
    CHECK_RUN(test_format_frames);
    CHECK_RUN(test_limits);
    CHECK_RUN(test_budget);
    CHECK_MAIN_RETURN();
}
