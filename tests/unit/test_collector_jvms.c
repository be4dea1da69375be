/* Unit tests for collector/jvms.c and collector/query.c: JVMs across
 * reconnects, the occupancy feed, carrier hogs, the starvation alert (log line
 * and Alert event), expiry, and the STATUS / TOP JSON read back with
 * common/jsonread. */
#include "jvms.h"
#include "query.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "collector_events.h"
#include "common/budget.h"
#include "common/jsonread.h"

#define MS 1000000LL
#define SEC 1000000000LL
#define START_UNIX 1700000000000000000LL

static struct jvms_config config(void)
{
    struct jvms_config c = {
        .max_carriers = 16,
        .window_ns = 10 * SEC,
        .bucket_ns = SEC,
        .linger_ns = 60 * SEC,
        .max_jvms = 2,
        .alert = {.k = 0, .hold_ns = 100 * MS},
    };
    return c;
}

static struct session *session_of(int64_t pid, uint32_t connection)
{
    WireEvent *ev = ev_hello(pid, START_UNIX, connection, WIRE_SCHEMA_VERSION);
    struct session *s = NULL;
    struct session_defs_limits limits = SESSION_LIMITS_DEFAULT;
    if (ev)
        session_new(&s, ev->hello, &limits);
    wire_event_free(ev);
    return s;
}

/* Feeds ev to the session tables or the JVM, like the server does. */
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

/* Strings, a method and a stack, two carriers mounted at t. */
static void setup_agent(struct jvm *j, struct session *s, int64_t t)
{
    CHECK_INT(feed(j, s, ev_string(1, "ForkJoinPool-1-worker-1"), t), 0);
    CHECK_INT(feed(j, s, ev_string(2, "ForkJoinPool-1-worker-2"), t), 0);
    CHECK_INT(feed(j, s, ev_string(3, "Repro"), t), 0);
    CHECK_INT(feed(j, s, ev_string(4, "settle"), t), 0);
    CHECK_INT(feed(j, s, ev_string(5, "Repro.java"), t), 0);
    CHECK_INT(feed(j, s, ev_method(1, 3, 4, 5, 0, 0), t), 0);
    uint32_t m[] = {1};
    int32_t l[] = {20};
    CHECK_INT(feed(j, s, ev_stack(1, 1, m, l), t), 0);
    CHECK_INT(feed(j, s, ev_carrier(101, 1, t), t), 0);
    CHECK_INT(feed(j, s, ev_carrier(102, 2, t), t), 0);
    int64_t times[] = {t}, v1[] = {19}, v2[] = {22};
    CHECK_INT(feed(j, s, ev_transitions(101, 1, times, 1, v1), t), 0);
    CHECK_INT(feed(j, s, ev_transitions(102, 1, times, 1, v2), t), 0);
}

static struct jsonread *ask(struct jvms *r, int kind, int64_t pid, int64_t now)
{
    struct query_info info = {.pid = 99, .version = "0.1.0", .socket = "/s", .dir = "/d", .started_ns = 1};
    char *json = NULL, err[256];
    size_t len = 0;
    struct jsonread *tree = NULL;
    if (!CHECK_INT(query_json(r, &info, kind, pid, now, &json, &len), 0))
        return NULL;
    CHECK_UINT(strlen(json), len);
    if (!CHECK_INT(jsonread_parse(json, len, &tree, err, sizeof(err)), 0))
        fprintf(stderr, "%s\n%s\n", err, json);
    free(json);
    return tree;
}

static const struct jsonread *carrier_of(const struct jsonread *top, size_t jvm, int64_t tid)
{
    const struct jsonread *cs = jsonread_get(jsonread_at(jsonread_get(top, "jvms"), jvm), "carriers");
    for (size_t i = 0; i < jsonread_len(cs); i++)
        if (jsonread_int(jsonread_get(jsonread_at(cs, i), "tid"), 0) == tid)
            return jsonread_at(cs, i);
    return NULL;
}

static void test_feed_and_query(void)
{
    struct jvms_config cfg = config();
    struct jvms *r = NULL;
    CHECK_INT(jvms_new(&r, &cfg), 0);
    struct session *s = session_of(4242, 0);
    struct jvm *j = NULL;
    int owner;
    if (!CHECK(s) || !CHECK_INT(jvms_attach(r, s, "/d/4242-1-0.vtp", &owner, 1 * SEC, &j), 0))
        return;
    int64_t t = 1 * SEC;
    setup_agent(j, s, t);
    CHECK_INT(feed(j, s, ev_pin_start(1, t + 100 * MS, 1, 19, 101, 1, 0), t), 0);
    CHECK_INT(feed(j, s, ev_stats(3, 4), t), 0);
    int64_t bad_times[] = {t, t}, bad_ids[] = {5};
    CHECK_INT(feed(j, s, ev_transitions(102, 2, bad_times, 1, bad_ids), t), 0);
    CHECK_UINT(j->malformed, 1);

    struct jsonread *top = ask(r, VTPIN__V1__QUERY__KIND__TOP, 0, t + 600 * MS);
    const struct jsonread *c1 = carrier_of(top, 0, 101), *c2 = carrier_of(top, 0, 102);
    if (CHECK(c1 && c2)) {
        CHECK_STR(jsonread_str(jsonread_get(c1, "name"), NULL), "ForkJoinPool-1-worker-1");
        CHECK_STR(jsonread_str(jsonread_get(c1, "state"), NULL), "pinned");
        CHECK_INT(jsonread_int(jsonread_get(c1, "vthread"), 0), 19);
        CHECK_INT(jsonread_int(jsonread_get(c1, "pinned_for_ns"), 0), 500 * MS);
        CHECK_STR(jsonread_str(jsonread_get(c1, "reason"), NULL), "MONITOR");
        CHECK_STR(jsonread_str(jsonread_get(c1, "culprit"), NULL), "Repro.settle(Repro.java:20)");
        CHECK_INT(jsonread_int(jsonread_get(c1, "mounts"), 0), 1);
        double busy = jsonread_num(jsonread_get(c1, "busy_pct"), -1),
               pinned = jsonread_num(jsonread_get(c1, "pinned_pct"), -1);
        CHECK(busy > 99.9 && pinned > 83.2 && pinned < 83.4); /* 500 of 600 ms */
        CHECK_STR(jsonread_str(jsonread_get(c2, "state"), NULL), "running");
        CHECK(jsonread_is_null(jsonread_get(c2, "pinned_for_ns")));
        CHECK(jsonread_is_null(jsonread_get(c2, "culprit")));
        CHECK(jsonread_is_null(jsonread_get(c2, "reason")));
        CHECK(jsonread_get(c2, "culprit") != NULL); /* present, as null */
    }
    jsonread_free(top);

    struct jsonread *st = ask(r, VTPIN__V1__QUERY__KIND__STATUS, 0, t + 600 * MS);
    const struct jsonread *col = jsonread_get(st, "collector"), *jv = jsonread_at(jsonread_get(st, "jvms"), 0);
    CHECK_INT(jsonread_int(jsonread_get(col, "pid"), 0), 99);
    CHECK_STR(jsonread_str(jsonread_get(col, "socket"), NULL), "/s");
    CHECK_INT(jsonread_int(jsonread_get(col, "uptime_ns"), 0), t + 600 * MS - 1);
    CHECK_INT(jsonread_int(jsonread_get(jv, "pid"), 0), 4242);
    CHECK_STR(jsonread_str(jsonread_get(jv, "mode"), NULL), "attach");
    CHECK_STR(jsonread_str(jsonread_get(jv, "occupancy"), NULL), "exact");
    CHECK(jsonread_is_null(jsonread_get(jv, "host"))); /* not said */
    CHECK(jsonread_bool(jsonread_get(jv, "connected"), 0));
    CHECK_INT(jsonread_int(jsonread_get(jv, "carriers"), 0), 2);
    CHECK_INT(jsonread_int(jsonread_get(jv, "pins_in_progress"), 0), 1);
    CHECK_INT(jsonread_int(jsonread_get(jv, "pins_total"), 0), 1);
    CHECK_STR(jsonread_str(jsonread_get(jv, "recording"), NULL), "/d/4242-1-0.vtp");
    CHECK_INT(jsonread_int(jsonread_get(jsonread_get(jv, "drops"), "events_dropped"), -1), 3);
    CHECK_INT(jsonread_int(jsonread_get(jsonread_get(jv, "drops"), "collector_dropped"), -1), 4);
    const struct jsonread *alert = jsonread_get(jv, "alert");
    CHECK(!jsonread_bool(jsonread_get(alert, "active"), 1));
    CHECK_INT(jsonread_int(jsonread_get(alert, "held"), -1), 1);
    CHECK_INT(jsonread_int(jsonread_get(alert, "total"), -1), 2);
    jsonread_free(st);

    st = ask(r, VTPIN__V1__QUERY__KIND__STATUS, 7, t); /* another pid */
    CHECK_UINT(jsonread_len(jsonread_get(st, "jvms")), 0);
    jsonread_free(st);
    char *json;
    size_t len;
    struct query_info info = {0};
    CHECK_INT(query_json(r, &info, 5, 0, t, &json, &len), -EINVAL);

    /* an agent must not send these */
    WireEvent *ev = ev_hello(1, 1, 0, 1);
    CHECK_INT(jvm_apply(j, s, ev, t), -EPROTO);
    wire_event_free(ev);
    ev = ev_query(0, 0);
    CHECK_INT(jvm_apply(j, s, ev, t), -EPROTO);
    wire_event_free(ev);

    jvms_detach(r, j, &owner, t + SEC);
    session_free(s);
    jvms_free(r);
}

static void test_reply_frame(void)
{
    struct jvms_config cfg = config();
    struct jvms *r = NULL;
    CHECK_INT(jvms_new(&r, &cfg), 0);
    struct query_info info = {.pid = 1, .version = "v", .socket = "/s", .dir = "/d"};
    WireEvent *q = ev_query(VTPIN__V1__QUERY__KIND__STATUS, 0);
    uint8_t *frame = NULL;
    size_t len = 0;
    CHECK_INT(query_reply(r, &info, q->query, 5, &frame, &len), 0);
    WireEvent *ev = NULL;
    wire_decode(frame, len, &ev);
    if (CHECK(ev) && CHECK_INT(ev->body_case, VTPIN__V1__EVENT__BODY_QUERY_REPLY))
        CHECK_CONTAINS(ev->query_reply->json, "\"jvms\": []");
    wire_event_free(ev);
    wire_event_free(q);
    free(frame);
    jvms_free(r);
}

static void test_reconnect(void)
{
    struct jvms_config cfg = config();
    struct jvms *r = NULL;
    CHECK_INT(jvms_new(&r, &cfg), 0);
    int owner1, owner2, owner0;
    struct session *s1 = session_of(4242, 0), *s2 = session_of(4242, 1), *s0 = session_of(4242, 0);
    struct jvm *j = NULL, *j2 = NULL, *j0 = NULL;
    CHECK_INT(jvms_attach(r, s1, "/d/a-0.vtp", &owner1, SEC, &j), 0);
    setup_agent(j, s1, SEC);
    CHECK_INT(feed(j, s1, ev_pin_start(5, SEC, 1, 19, 101, 1, 0), SEC), 0);
    CHECK_INT(feed(j, s1, ev_pin_start(6, SEC, 1, 22, 102, 1, 0), SEC), 0);
    jvms_detach(r, j, &owner1, 2 * SEC); /* lost; pin 6 ended while away */
    CHECK_UINT(j->live, 0);
    CHECK_INT(j->disconnected_at, 2 * SEC);

    CHECK_INT(jvms_attach(r, s2, "/d/a-1.vtp", &owner2, 3 * SEC, &j2), 0);
    CHECK(j2 == j);
    CHECK_UINT(jvms_count(r), 1);
    CHECK_UINT(j->connections, 2);
    CHECK_UINT(j->hello.connection, 1);
    CHECK_STR(j->recording, "/d/a-1.vtp");
    CHECK(j->owner == &owner2);
    setup_agent(j, s2, 3 * SEC);                                                /* re-sent definitions */
    CHECK_INT(feed(j, s2, ev_pin_start(5, SEC, 1, 19, 101, 1, 0), 3 * SEC), 0); /* re-sent, still pinned */
    CHECK_UINT(j->pins_total, 2);
    struct jsonread *top = ask(r, VTPIN__V1__QUERY__KIND__TOP, 0, 4 * SEC);
    const struct jsonread *c1 = carrier_of(top, 0, 101), *c2 = carrier_of(top, 0, 102);
    if (CHECK(c1 && c2)) {
        CHECK_STR(jsonread_str(jsonread_get(c1, "state"), NULL), "pinned");
        CHECK_INT(jsonread_int(jsonread_get(c1, "pinned_for_ns"), 0), 3 * SEC); /* since its start */
        CHECK_STR(jsonread_str(jsonread_get(c2, "state"), NULL), "running");    /* pin 6 ended */
    }
    jsonread_free(top);

    /* an older connection number while the newest is live: counted, not shown */
    CHECK_INT(jvms_attach(r, s0, "/d/a-0b.vtp", &owner0, 5 * SEC, &j0), 0);
    CHECK(j0 == j);
    CHECK_UINT(j->live, 2);
    CHECK_UINT(j->hello.connection, 1);
    CHECK_STR(j->recording, "/d/a-1.vtp");
    jvms_detach(r, j, &owner0, 6 * SEC);
    CHECK(j->owner == &owner2);
    CHECK_UINT(j->live, 1);
    CHECK_INT(jvm_clock(j, 7 * SEC), 7 * SEC);
    jvms_detach(r, j, &owner2, 8 * SEC);
    CHECK(j->owner == NULL);
    CHECK_INT(jvm_clock(j, 9 * SEC), 8 * SEC); /* frozen at the disconnect */
    CHECK_UINT(jvms_expire(r, 8 * SEC + cfg.linger_ns), 0);
    CHECK_UINT(jvms_expire(r, 8 * SEC + cfg.linger_ns + 1), 1);
    CHECK_UINT(jvms_count(r), 0);
    session_free(s0);
    session_free(s1);
    session_free(s2);
    jvms_free(r);
}

/* Two carriers' PinStarts in either order (pin 2 before pin 1) count both; a
 * PinStart re-sent after a reconnect (still open) does not count again. */
static void test_pins_out_of_order(void)
{
    struct jvms_config cfg = config();
    struct jvms *r = NULL;
    CHECK_INT(jvms_new(&r, &cfg), 0);
    int owner1, owner2;
    struct session *s1 = session_of(4242, 0), *s2 = session_of(4242, 1);
    struct jvm *j = NULL;
    CHECK_INT(jvms_attach(r, s1, "/d/a-0.vtp", &owner1, SEC, &j), 0);
    setup_agent(j, s1, SEC);
    CHECK_INT(feed(j, s1, ev_pin_start(2, SEC, 1, 22, 102, 1, 0), SEC), 0);
    CHECK_INT(feed(j, s1, ev_pin_start(1, SEC, 1, 19, 101, 1, 0), SEC), 0);
    CHECK_UINT(j->pins_total, 2);
    CHECK_INT(feed(j, s1, ev_pin_end(2, 2 * SEC), 2 * SEC), 0);
    jvms_detach(r, j, &owner1, 2 * SEC);

    struct jvm *j2 = NULL;
    CHECK_INT(jvms_attach(r, s2, "/d/a-1.vtp", &owner2, 3 * SEC, &j2), 0);
    CHECK(j2 == j);
    setup_agent(j, s2, 3 * SEC);
    CHECK_INT(feed(j, s2, ev_pin_start(1, SEC, 1, 19, 101, 1, 0), 3 * SEC), 0); /* re-sent, still pinned */
    CHECK_UINT(j->pins_total, 2);
    CHECK_INT(feed(j, s2, ev_pin_start(3, 3 * SEC, 1, 22, 102, 1, 0), 3 * SEC), 0);
    CHECK_UINT(j->pins_total, 3);
    session_free(s1);
    session_free(s2);
    jvms_free(r);
}

static void test_capacity(void)
{
    struct jvms_config cfg = config(); /* max_jvms 2 */
    struct jvms *r = NULL;
    CHECK_INT(jvms_new(&r, &cfg), 0);
    struct session *a = session_of(1, 0), *b = session_of(2, 0), *c = session_of(3, 0);
    int oa, ob, oc;
    struct jvm *ja, *jb, *jc;
    CHECK_INT(jvms_attach(r, a, NULL, &oa, SEC, &ja), 0);
    CHECK_INT(jvms_attach(r, b, NULL, &ob, SEC, &jb), 0);
    CHECK_INT(jvms_attach(r, c, NULL, &oc, SEC, &jc), -ENOSPC); /* both live */
    jvms_detach(r, ja, &oa, 2 * SEC);
    CHECK_INT(jvms_attach(r, c, NULL, &oc, 3 * SEC, &jc), 0); /* evicts the disconnected one */
    CHECK_UINT(jvms_count(r), 2);
    CHECK(jvms_first(r) == jb && jb->next == jc);
    CHECK(jc->recording == NULL);
    session_free(a);
    session_free(b);
    session_free(c);
    jvms_free(r);
}

/* An agent's deadlock notice (deadlock.KIND) is counted and kept, escaped and cut to fit; other
 * codes, and "deadlock." with no kind, are not. */
static void test_deadlock(void)
{
    struct jvms_config cfg = config();
    struct jvms *r = NULL;
    CHECK_INT(jvms_new(&r, &cfg), 0);
    struct session *a = session_of(1, 0);
    int oa;
    struct jvm *j;
    CHECK_INT(jvms_attach(r, a, NULL, &oa, SEC, &j), 0);
    CHECK_INT(jvm_note_deadlock(j, "capability.can_get_monitor_info", "no monitors", 2 * SEC), 0);
    CHECK_INT(jvm_note_deadlock(j, "deadlock.", "no kind", 2 * SEC), 0);
    CHECK_INT(jvm_note_deadlock(j, NULL, "no code", 2 * SEC), 0);
    CHECK_UINT(j->deadlock.count, 0);
    CHECK_INT(jvm_note_deadlock(j, "deadlock.carrier_starvation", "all 2 carriers\x1b[2J pinned", 3 * SEC), 1);
    CHECK_UINT(j->deadlock.count, 1);
    CHECK_INT(j->deadlock.at, 3 * SEC);
    CHECK_STR(j->deadlock.kind, "carrier_starvation");
    CHECK_STR(j->deadlock.text, "all 2 carriers\\x1b[2J pinned"); /* a terminal escape, escaped */
    char longer[3 * JVM_DEADLOCK_TEXT_MAX];
    memset(longer, 'x', sizeof(longer) - 1);
    longer[sizeof(longer) - 1] = '\0';
    CHECK_INT(jvm_note_deadlock(j, "deadlock.carrier_starvation", longer, 4 * SEC), 1);
    CHECK_UINT(j->deadlock.count, 2);
    CHECK_UINT(strlen(j->deadlock.text), JVM_DEADLOCK_TEXT_MAX - 1);
    session_free(a);
    jvms_free(r);
}

/* Each JVM's tables are charged to the collector's memory budget (issue 37): a JVM that finds no
 * room is not tracked, a profile that finds none leaves pins out (counted), and all of it comes
 * back when the JVM is forgotten. */
static void test_budget(void)
{
    struct budget b;
    budget_init(&b, 64u << 20);
    struct jvms_config cfg = config();
    cfg.budget = &b;
    struct jvms *r = NULL;
    CHECK_INT(jvms_new(&r, &cfg), 0);
    struct session *a = session_of(1, 0), *bs = session_of(2, 0);
    int oa, ob;
    struct jvm *ja = NULL, *jb = NULL;
    CHECK_INT(jvms_attach(r, a, NULL, &oa, SEC, &ja), 0);
    size_t base = b.used;
    /* what a JVM that only said Hello costs: its fixed tables, no carrier's window */
    CHECK(base > 0 && base < 256 * 1024);
    printf("a JVM that said only Hello: %zu bytes of the budget\n", base);
    CHECK_UINT(ja->charged, base);
    setup_agent(ja, a, SEC); /* two carriers: their state and windows come now */
    CHECK(b.used > base && b.used == ja->charged);
    jvms_free(r);
    CHECK_UINT(b.used, 0);

    /* room for one JVM and a little of its profile */
    budget_init(&b, base + base / 2);
    CHECK_INT(jvms_new(&r, &cfg), 0);
    CHECK_INT(jvms_attach(r, a, NULL, &oa, SEC, &ja), 0);
    CHECK_INT(jvms_attach(r, bs, NULL, &ob, SEC, &jb), -ENOBUFS);
    CHECK_UINT(b.refused, 1);
    CHECK_UINT(jvms_count(r), 1);
    setup_agent(ja, a, SEC);
    b.limit = b.used + 8 * 1024;
    /* pins of ever new stacks fill the profile until the budget is used up */
    uint32_t m[] = {1};
    for (uint32_t k = 0; k < 400; k++) {
        int32_t l[] = {(int32_t)k + 100};
        CHECK_INT(feed(ja, a, ev_stack(10 + k, 1, m, l), 2 * SEC), 0);
        CHECK_INT(
            feed(ja, a, ev_pin_start(1000 + k, 2 * SEC, VTPIN__V1__PIN_REASON__MONITOR, 19, 101, 10 + k, 0), 2 * SEC),
            0);
        CHECK_INT(feed(ja, a, ev_pin_end(1000 + k, 2 * SEC + MS), 2 * SEC + MS), 0);
    }
    CHECK(ja->profile_dropped > 0);
    CHECK_UINT(b.refused, 1 + ja->profile_dropped);
    /* past the limit by one event's growth at most (a pin's stack, a bucket's table) */
    CHECK(b.used <= b.limit + 16 * 1024);
    CHECK_UINT(b.used, ja->charged);
    /* a new JVM while A is connected: not tracked; once A is gone, A makes room for it */
    CHECK_INT(jvms_attach(r, bs, NULL, &ob, 3 * SEC, &jb), -ENOBUFS);
    jvms_detach(r, ja, &oa, 3 * SEC);
    b.limit = base + base / 2;
    CHECK_INT(jvms_attach(r, bs, NULL, &ob, 4 * SEC, &jb), 0);
    CHECK_UINT(jvms_count(r), 1);
    CHECK(jvms_first(r) == jb);
    CHECK_UINT(b.used, jb->charged);
    ja = jb;
    oa = ob;
    jvms_detach(r, ja, &oa, 5 * SEC);
    CHECK_UINT(jvms_expire(r, 5 * SEC + cfg.linger_ns + 1), 1);
    CHECK_UINT(b.used, 0);
    session_free(a);
    session_free(bs);
    jvms_free(r);
}

/* What the alert tests start from: a JVM (pid 4242) attached at 1 s whose agent said Hello then. */
struct alert_jvm {
    struct jvms_config cfg;
    struct jvms *r;
    struct session *s;
    struct jvm *j;
};

static int alert_jvm_open(struct alert_jvm *a)
{
    *a = (struct alert_jvm){.cfg = config()};
    int owner;
    a->s = session_of(4242, 0);
    if (!a->s || jvms_new(&a->r, &a->cfg) || jvms_attach(a->r, a->s, NULL, &owner, SEC, &a->j)) {
        session_free(a->s);
        jvms_free(a->r);
        return -1;
    }
    setup_agent(a->j, a->s, SEC);
    return 0;
}

static void alert_jvm_close(struct alert_jvm *a)
{
    session_free(a->s);
    jvms_free(a->r);
}

/* What an alert call said, freed: the next call's out-values start empty. */
static void said_free(char **line, uint8_t **frame)
{
    free(*line);
    free(*frame);
    *line = NULL;
    *frame = NULL;
}

static void test_alert(void)
{
    struct alert_jvm a;
    if (!CHECK_INT(alert_jvm_open(&a), 0))
        return;
    struct jvms_config cfg = a.cfg;
    struct session *s = a.s;
    struct jvm *j = a.j;
    int64_t t = SEC;
    char *line = NULL;
    uint8_t *frame = NULL;
    size_t len = 0;
    CHECK_INT(feed(j, s, ev_pin_start(1, t, 1, 19, 101, 1, 0), t), 0);
    CHECK_INT(jvm_alert_check(j, &cfg.alert, t + SEC, &line, &frame, &len), 0);      /* 1 of 2 */
    CHECK_INT(feed(j, s, ev_pin_start(2, t + 50 * MS, 6, 22, 102, 0, 0), t), 0);     /* native block, no stack */
    CHECK_INT(jvm_alert_check(j, &cfg.alert, t + 140 * MS, &line, &frame, &len), 0); /* 2nd held 90 ms */
    CHECK_INT(jvm_alert_check(j, &cfg.alert, t + 200 * MS, &line, &frame, &len), 1);
    if (CHECK(line && frame)) {
        CHECK_CONTAINS(line, "JVM pid 4242: carrier starvation: 2 of 2 carriers pinned for over 100.0 ms");
        CHECK_CONTAINS(line, "ForkJoinPool-1-worker-1 (tid 101) MONITOR at Repro.settle(Repro.java:20)");
        CHECK_CONTAINS(line, "ForkJoinPool-1-worker-2 (tid 102)");
        WireEvent *ev = NULL;
        wire_decode(frame, len, &ev);
        if (CHECK(ev) && CHECK_INT(ev->body_case, VTPIN__V1__EVENT__BODY_ALERT)) {
            const Vtpin__V1__Alert *a = ev->alert;
            CHECK(a->active);
            CHECK_INT(a->time_ns, t + 200 * MS);
            CHECK_UINT(a->held_carriers, 2);
            CHECK_UINT(a->total_carriers, 2);
            CHECK_UINT(a->n_carrier_tids, 2);
            CHECK_UINT(a->n_culprits, 2);
            if (a->n_carrier_tids == 2 && a->n_culprits == 2) {
                CHECK_INT(a->carrier_tids[0], 101);
                CHECK_STR(a->culprits[0], "Repro.settle(Repro.java:20)");
                CHECK_STR(a->culprits[1], "");
            }
            CHECK_STR(a->text, line);
        }
        wire_event_free(ev);
    }
    said_free(&line, &frame);
    CHECK(j->alert_active);
    CHECK_INT(jvm_alert_check(j, &cfg.alert, t + 300 * MS, &line, &frame, &len), 0); /* still on: no change */
    /* hysteresis: pin 2 ends and pin 3 starts at once on the same carrier; pin 3 is
     * younger than the hold time, but both carriers are pinned: the alert holds */
    CHECK_INT(feed(j, s, ev_pin_end(2, t + 350 * MS), t), 0);
    CHECK_INT(feed(j, s, ev_pin_start(3, t + 350 * MS, 1, 22, 102, 1, 0), t), 0);
    CHECK_INT(jvm_alert_check(j, &cfg.alert, t + 360 * MS, &line, &frame, &len), 0);
    CHECK(j->alert_active);
    CHECK_INT(feed(j, s, ev_pin_end(3, t + 400 * MS), t), 0);
    CHECK_INT(jvm_alert_check(j, &cfg.alert, t + 500 * MS, &line, &frame, &len), 1);
    if (CHECK(line && frame)) {
        CHECK_CONTAINS(line, "carrier starvation over after 300.0 ms: 1 of 2 carriers pinned");
        WireEvent *ev = NULL;
        wire_decode(frame, len, &ev);
        if (CHECK(ev))
            CHECK(!ev->alert->active);
        wire_event_free(ev);
    }
    said_free(&line, &frame);
    CHECK_INT(jvm_alert_reset(j, t + SEC, "gone", &line, &frame, &len), 0); /* not active */
    /* k = 1: one carrier held is enough; a disconnect clears it */
    struct alert_rule one = {.k = 1, .hold_ns = 100 * MS};
    CHECK_INT(jvm_alert_check(j, &one, t + SEC, &line, &frame, &len), 1);
    free(line);
    free(frame);
    CHECK_INT(jvm_alert_reset(j, t + 2 * SEC, "the JVM disconnected", &line, &frame, &len), 1);
    if (CHECK(line))
        CHECK_CONTAINS(line, "alert cleared after 1.00 s: the JVM disconnected");
    CHECK(!j->alert_active);
    said_free(&line, &frame);
    alert_jvm_close(&a);
}

/* The starvation alert names a deadlock its agent found live: at the alert's start when found
 * first, and said again at once when found while the alert is raised; never when cleared. */
static void test_alert_deadlock(void)
{
    struct alert_jvm a;
    if (!CHECK_INT(alert_jvm_open(&a), 0))
        return;
    struct jvms_config cfg = a.cfg;
    struct session *s = a.s;
    struct jvm *j = a.j;
    int64_t t = SEC;
    char *line = NULL;
    uint8_t *frame = NULL;
    size_t len = 0;
    CHECK_INT(feed(j, s, ev_pin_start(1, t, 1, 19, 101, 1, 0), t), 0);
    CHECK_INT(feed(j, s, ev_pin_start(2, t, 1, 19, 102, 1, 0), t), 0);
    CHECK_INT(jvm_alert_deadlock(j, t + 50 * MS, &line, &frame, &len), 0); /* no alert raised yet */
    CHECK_INT(jvm_note_deadlock(j, "deadlock.carrier_starvation", "all 2 carriers wait for \"holder\"", t), 1);
    CHECK_INT(jvm_alert_deadlock(j, t + 60 * MS, &line, &frame, &len), 0); /* still none */
    CHECK_INT(jvm_alert_check(j, &cfg.alert, t + 200 * MS, &line, &frame, &len), 1);
    if (CHECK(line && frame)) {
        CHECK_CONTAINS(line, "carrier starvation: 2 of 2 carriers pinned for over 100.0 ms: ");
        CHECK_CONTAINS(line, "; DEADLOCK (carrier_starvation, docs/deadlocks.md): all 2 carriers wait for \"holder\"");
        WireEvent *ev = NULL;
        wire_decode(frame, len, &ev);
        if (CHECK(ev) && CHECK_INT(ev->body_case, VTPIN__V1__EVENT__BODY_ALERT)) {
            CHECK(ev->alert->active);
            CHECK_STR(ev->alert->text, line);
        }
        wire_event_free(ev);
    }
    said_free(&line, &frame);
    /* found again while raised: said at once, still active */
    CHECK_INT(jvm_note_deadlock(j, "deadlock.carrier_starvation", "again", t + 2 * SEC), 1);
    CHECK_INT(jvm_alert_deadlock(j, t + 2 * SEC + 200 * MS, &line, &frame, &len), 1);
    if (CHECK(line && frame)) {
        CHECK_CONTAINS(line,
                       "JVM pid 4242: carrier starvation, raised 2.00 s ago, is a deadlock: 2 of 2 carriers pinned: ");
        CHECK_CONTAINS(line, "; DEADLOCK (carrier_starvation, docs/deadlocks.md): again");
        WireEvent *ev = NULL;
        wire_decode(frame, len, &ev);
        if (CHECK(ev))
            CHECK(ev->alert->active);
        wire_event_free(ev);
    }
    said_free(&line, &frame);
    CHECK(j->alert_active);
    /* cleared: the line says so without the deadlock */
    CHECK_INT(jvm_alert_reset(j, t + 3 * SEC, "the JVM disconnected", &line, &frame, &len), 1);
    if (CHECK(line))
        CHECK(!strstr(line, "DEADLOCK"));
    said_free(&line, &frame);
    alert_jvm_close(&a);
}

/* A hog: state "hog" with its time and culprit, counted per JVM; held for the
 * alert ("hog at"); ended by a reconnect, and re-sent after it counted once. */
static void test_hogs(void)
{
    struct jvms_config cfg = config();
    struct jvms *r = NULL;
    CHECK_INT(jvms_new(&r, &cfg), 0);
    struct session *s1 = session_of(4242, 0), *s2 = session_of(4242, 1);
    struct jvm *j = NULL;
    int owner1, owner2;
    if (!CHECK(s1 && s2) || !CHECK_INT(jvms_attach(r, s1, NULL, &owner1, SEC, &j), 0))
        goto cleanup;
    int64_t t = SEC;
    setup_agent(j, s1, t);
    CHECK_INT(feed(j, s1, ev_hog_start(1, t + 100 * MS, 19, 101, 1, 0), t + 400 * MS), 0);
    CHECK_UINT(j->hogs_total, 1);

    struct jsonread *top = ask(r, VTPIN__V1__QUERY__KIND__TOP, 0, t + 600 * MS);
    const struct jsonread *jv = jsonread_at(jsonread_get(top, "jvms"), 0);
    const struct jsonread *c1 = carrier_of(top, 0, 101), *c2 = carrier_of(top, 0, 102);
    CHECK_INT(jsonread_int(jsonread_get(jv, "hogs_total"), -1), 1);
    CHECK_INT(jsonread_int(jsonread_get(jv, "carriers_hogged"), -1), 1);
    if (CHECK(c1 && c2)) {
        CHECK_STR(jsonread_str(jsonread_get(c1, "state"), NULL), "hog");
        CHECK_INT(jsonread_int(jsonread_get(c1, "vthread"), 0), 19);
        CHECK_INT(jsonread_int(jsonread_get(c1, "hogged_for_ns"), 0), 500 * MS);
        CHECK(jsonread_is_null(jsonread_get(c1, "pinned_for_ns")));
        CHECK(jsonread_is_null(jsonread_get(c1, "reason")));
        CHECK_STR(jsonread_str(jsonread_get(c1, "culprit"), NULL), "Repro.settle(Repro.java:20)");
        double busy = jsonread_num(jsonread_get(c1, "busy_pct"), -1),
               pinned = jsonread_num(jsonread_get(c1, "pinned_pct"), -1);
        CHECK(busy > 99.9 && pinned == 0); /* busy, not pinned */
        CHECK_STR(jsonread_str(jsonread_get(c2, "state"), NULL), "running");
        CHECK(jsonread_get(c2, "hogged_for_ns") != NULL); /* present, as null */
        CHECK(jsonread_is_null(jsonread_get(c2, "hogged_for_ns")));
    }
    jsonread_free(top);

    struct jsonread *st = ask(r, VTPIN__V1__QUERY__KIND__STATUS, 0, t + 600 * MS);
    jv = jsonread_at(jsonread_get(st, "jvms"), 0);
    CHECK_INT(jsonread_int(jsonread_get(jv, "hogs_total"), -1), 1);
    CHECK_INT(jsonread_int(jsonread_get(jv, "carriers_hogged"), -1), 1);
    CHECK_INT(jsonread_int(jsonread_get(jv, "pins_in_progress"), -1), 0);
    CHECK_INT(jsonread_int(jsonread_get(jsonread_get(jv, "agent_occupancy"), "hogged_ns"), -1), 500 * MS);
    CHECK_INT(jsonread_int(jsonread_get(jsonread_get(jv, "agent_occupancy"), "pinned_ns"), -1), 0);
    CHECK_INT(jsonread_int(jsonread_get(jsonread_get(jv, "alert"), "held"), -1), 1); /* hogged over 100 ms */
    jsonread_free(st);

    /* the alert: a hog holds its carrier as a pin does */
    char *line = NULL;
    uint8_t *frame = NULL;
    size_t len = 0;
    CHECK_INT(feed(j, s1, ev_pin_start(2, t + 200 * MS, 1, 22, 102, 1, 0), t + 200 * MS), 0);
    CHECK_INT(jvm_alert_check(j, &cfg.alert, t + 700 * MS, &line, &frame, &len), 1);
    if (CHECK(line && frame)) {
        CHECK_CONTAINS(line, "carrier starvation: 2 of 2 carriers pinned or hogged for over 100.0 ms");
        CHECK_CONTAINS(line, "ForkJoinPool-1-worker-1 (tid 101) hog at Repro.settle(Repro.java:20)");
        CHECK_CONTAINS(line, "ForkJoinPool-1-worker-2 (tid 102) MONITOR at Repro.settle(Repro.java:20)");
        WireEvent *ev = NULL;
        wire_decode(frame, len, &ev);
        if (CHECK(ev) && CHECK_INT(ev->body_case, VTPIN__V1__EVENT__BODY_ALERT) && CHECK_UINT(ev->alert->n_culprits, 2))
            CHECK_STR(ev->alert->culprits[0], "Repro.settle(Repro.java:20)");
        wire_event_free(ev);
    }
    free(line);
    free(frame);
    line = NULL;
    frame = NULL;
    CHECK_INT(feed(j, s1, ev_pin_end(2, t + 750 * MS), t + 750 * MS), 0);
    CHECK_INT(jvm_alert_check(j, &cfg.alert, t + 800 * MS, &line, &frame, &len), 1);
    if (CHECK(line))
        CHECK_CONTAINS(line, "carrier starvation over after 100.0 ms: 1 of 2 carriers pinned or hogged");
    free(line);
    free(frame);

    /* a reconnect ends the hog at the disconnect; the agent re-sends it: counted once */
    jvms_detach(r, j, &owner1, 2 * SEC);
    CHECK_INT(jvms_attach(r, s2, NULL, &owner2, 3 * SEC, &j), 0);
    top = ask(r, VTPIN__V1__QUERY__KIND__TOP, 0, 3 * SEC);
    CHECK_STR(jsonread_str(jsonread_get(carrier_of(top, 0, 101), "state"), NULL), "running");
    jsonread_free(top);
    setup_agent(j, s2, 3 * SEC);
    CHECK_INT(feed(j, s2, ev_hog_start(1, t + 100 * MS, 19, 101, 1, 0), 3 * SEC), 0);
    CHECK_INT(feed(j, s2, ev_hog_start(2, 3 * SEC, 22, 102, 0, 0), 3 * SEC), 0);
    CHECK_UINT(j->hogs_total, 2);
    top = ask(r, VTPIN__V1__QUERY__KIND__TOP, 0, 4 * SEC);
    jv = jsonread_at(jsonread_get(top, "jvms"), 0);
    CHECK_INT(jsonread_int(jsonread_get(jv, "carriers_hogged"), -1), 2);
    CHECK_INT(jsonread_int(jsonread_get(carrier_of(top, 0, 101), "hogged_for_ns"), 0), 4 * SEC - (t + 100 * MS));
    CHECK(jsonread_is_null(jsonread_get(carrier_of(top, 0, 102), "culprit"))); /* no stack */
    jsonread_free(top);
    CHECK_INT(feed(j, s2, ev_hog_end(1, t + 100 * MS, 4 * SEC + 500 * MS), 4 * SEC), 0);
    st = ask(r, VTPIN__V1__QUERY__KIND__STATUS, 0, 5 * SEC);
    jv = jsonread_at(jsonread_get(st, "jvms"), 0);
    CHECK_INT(jsonread_int(jsonread_get(jv, "hogs_total"), -1), 2);
    CHECK_INT(jsonread_int(jsonread_get(jv, "carriers_hogged"), -1), 1);
    /* hog 1: [1.1 s, 4.5 s), once; hog 2: [3 s, 5 s) */
    CHECK_INT(jsonread_int(jsonread_get(jsonread_get(jv, "agent_occupancy"), "hogged_ns"), -1), 3400 * MS + 2000 * MS);
    jsonread_free(st);
cleanup:
    session_free(s1);
    session_free(s2);
    jvms_free(r);
}

int main(void)
{
    CHECK_RUN(test_feed_and_query);
    CHECK_RUN(test_reply_frame);
    CHECK_RUN(test_reconnect);
    CHECK_RUN(test_pins_out_of_order);
    CHECK_RUN(test_capacity);
    CHECK_RUN(test_deadlock);
    CHECK_RUN(test_budget);
    CHECK_RUN(test_alert);
    CHECK_RUN(test_alert_deadlock);
    CHECK_RUN(test_hogs);
    CHECK_MAIN_RETURN();
}
