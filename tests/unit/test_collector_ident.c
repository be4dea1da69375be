/* Unit tests for how the collector names a JVM (issue 22): by its peer's pid
 * on the host when the peer is the process its Hello names (a JVM in a pid
 * namespace says it is pid 1), else by the Hello's pid with the reason; the
 * name keys the JVM across reconnects, labels its metrics and filters
 * queries; /proc/self read by nspid_process; recording states added up. */
#include "jvms.h"
#include "metrics.h"
#include "nspid.h"
#include "query.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "collector_events.h"

#define SEC 1000000000LL

static void test_choose(void)
{
    struct jvm_ident id;
    char text[160];
    /* in a container: the Hello says 1, the peer is 31435 and says it is 1 in its namespace */
    jvm_ident_choose(&id, 1, 31435, 1, 4026532001u);
    CHECK_INT(id.source, JVM_PID_PEER);
    CHECK_INT(id.pid, 31435);
    CHECK_INT(id.ns_pid, 1);
    CHECK_UINT(id.pidns, 4026532001u);
    CHECK(id.why == NULL);
    CHECK_STR(jvm_ident_text(&id, text, sizeof(text)), "31435 (pid 1 in its namespace)");
    /* the same namespace as the collector: one pid */
    jvm_ident_choose(&id, 777, 777, 777, 4026531836u);
    CHECK_INT(id.source, JVM_PID_PEER);
    CHECK_INT(id.pid, 777);
    CHECK_STR(jvm_ident_text(&id, text, sizeof(text)), "777");
    /* /proc unreadable, same pid: the same namespace, the peer's */
    jvm_ident_choose(&id, 777, 777, -1, 0);
    CHECK_INT(id.source, JVM_PID_PEER);
    CHECK_INT(id.pid, 777);
    /* a relay or a replayed recording: the peer is another process; the Hello's pid, said why */
    jvm_ident_choose(&id, 4242, 999, 999, 4026531836u);
    CHECK_INT(id.source, JVM_PID_HELLO);
    CHECK_INT(id.pid, 4242);
    CHECK_UINT(id.pidns, 0);
    CHECK_CONTAINS(id.why, "not the process its Hello names");
    CHECK_CONTAINS(jvm_ident_text(&id, text, sizeof(text)), "4242 (pid from its Hello: the peer is not");
    /* no peer pid (SO_PEERCRED 0: a namespace the collector cannot see) */
    jvm_ident_choose(&id, 1, 0, -1, 0);
    CHECK_INT(id.source, JVM_PID_HELLO);
    CHECK_INT(id.pid, 1);
    CHECK_CONTAINS(id.why, "no peer pid");
    /* a different pid and an unreadable status: cannot tell, the Hello's */
    jvm_ident_choose(&id, 1, 31435, -1, 0);
    CHECK_INT(id.source, JVM_PID_HELLO);
    CHECK_INT(id.pid, 1);
}

static void test_nspid_self(void)
{
    int64_t ns_pid = 0;
    uint64_t pidns = 0;
    struct stat st;
    CHECK_INT(nspid_process("/proc", getpid(), &ns_pid, &pidns), 0);
    CHECK(ns_pid > 0);
    if (CHECK_INT(stat("/proc/self/ns/pid", &st), 0))
        CHECK_UINT(pidns, (uint64_t)st.st_ino);
    CHECK(nspid_process("/proc", 0x7ffffff0, &ns_pid, &pidns) < 0);
    CHECK_INT(ns_pid, -1);
}

static struct session *hello_session(int64_t pid, int64_t start, uint32_t connection)
{
    WireEvent *ev = ev_hello(pid, start, connection, WIRE_SCHEMA_VERSION);
    struct session *s = NULL;
    struct session_defs_limits limits = SESSION_LIMITS_DEFAULT;
    if (ev && session_new(&s, ev->hello, &limits) != 0)
        s = NULL;
    wire_event_free(ev);
    return s;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* Two containers' JVMs, both pid 1 in their Hellos: two JVMs by their host pids, a
 * reconnect of one finds it again, metrics and queries tell them apart. */
static void test_two_containers(void)
{
    struct jvms_config cfg = {
        .max_carriers = 8, .window_ns = 60 * SEC, .bucket_ns = SEC, .linger_ns = 60 * SEC, .max_jvms = 16};
    struct jvms *r = NULL;
    CHECK_INT(jvms_new(&r, &cfg), 0);
    struct session *a = hello_session(1, 1000, 0), *b = hello_session(1, 2000, 0), *a2 = hello_session(1, 1000, 1);
    struct jvm *ja = NULL, *jb = NULL, *ja2 = NULL;
    struct jvm_ident ia, ib;
    int oa, ob, oa2;
    jvm_ident_choose(&ia, 1, 31435, 1, 11);
    jvm_ident_choose(&ib, 1, 31436, 1, 12);
    if (!CHECK(r && a && b && a2))
        goto cleanup;
    CHECK_INT(jvms_attach_as(r, a, &ia, "/d/31435-1000-0.vtp", &oa, SEC, &ja), 0);
    CHECK_INT(jvms_attach_as(r, b, &ib, "/d/31436-2000-0.vtp", &ob, SEC, &jb), 0);
    CHECK_UINT(jvms_count(r), 2);
    if (!CHECK(ja && jb && ja != jb))
        goto cleanup;
    CHECK_INT(ja->pid, 31435);
    CHECK_INT(jb->pid, 31436);
    /* a reconnect (connection 1) of the first: the same JVM by the same host pid */
    jvms_detach(r, ja, &oa, 2 * SEC);
    CHECK_INT(jvms_attach_as(r, a2, &ia, "/d/31435-1000-1.vtp", &oa2, 3 * SEC, &ja2), 0);
    CHECK(ja2 == ja);
    CHECK_UINT(jvms_count(r), 2);
    CHECK_UINT(ja->connections, 2);

    char *text = NULL;
    size_t len = 0;
    struct metrics_info mi = {.started_ns = 0, .clients = 2};
    if (CHECK_INT(metrics_render(r, &mi, 4 * SEC, &text, &len), 0)) {
        CHECK_CONTAINS(text, "vtpin_collector_jvms 2\n");
        CHECK_INT(count(text, "vtpin_jvm_connected{jvm=\"31435\""), 1);
        CHECK_INT(count(text, "vtpin_jvm_connected{jvm=\"31436\""), 1);
        CHECK_INT(count(text, "jvm=\"1\""), 0);
        CHECK_CONTAINS(text, "ns_pid=\"1\",source=\"agent\"} 1\n");
        CHECK_CONTAINS(text, "vtpin_recording_stopped{jvm=\"31435\",app=\"\"} 0\n");
    }
    free(text);

    struct query_info qi = {.pid = 1, .version = "t", .socket = "/s", .dir = "/d"};
    char *json = NULL;
    if (CHECK_INT(query_json(r, &qi, VTPIN__V1__QUERY__KIND__STATUS, 31436, 4 * SEC, &json, &len), 0)) {
        CHECK_INT(count(json, "\"pid\": 31436"), 1);
        CHECK_INT(count(json, "\"pid\": 31435"), 0);
        CHECK_CONTAINS(json, "\"ns_pid\": 1");
        CHECK_CONTAINS(json, "\"pid_namespace\": 12");
        CHECK_CONTAINS(json, "\"pid_source\": \"peer\"");
        CHECK_CONTAINS(json, "\"recording_error\": null");
    }
    free(json);
    json = NULL;
    /* a namespace's pid names no JVM */
    if (CHECK_INT(query_json(r, &qi, VTPIN__V1__QUERY__KIND__TOP, 1, 4 * SEC, &json, &len), 0))
        CHECK_CONTAINS(json, "\"jvms\": []");
    free(json);
cleanup:
    session_free(a);
    session_free(b);
    session_free(a2);
    jvms_free(r);
}

/* Issue 37: a peer that is not the process its Hello names, or is another
 * user, never joins the entry the JVM itself made; queries of a uid that does
 * not see all list only the JVMs its own peers made. */
static void test_impostor(void)
{
    struct jvms_config cfg = {
        .max_carriers = 8, .window_ns = 60 * SEC, .bucket_ns = SEC, .linger_ns = 60 * SEC, .max_jvms = 16};
    struct jvms *r = NULL;
    CHECK_INT(jvms_new(&r, &cfg), 0);
    /* root's JVM pid 500, its own peer; a relay of root naming it; uid 1001 naming it (the collector
     * refuses that Hello, access_hello_allowed: the entry is kept apart all the same); root's reconnect */
    struct session *real = hello_session(500, 7000, 0), *relay = hello_session(500, 7000, 0),
                   *other = hello_session(500, 7000, 1), *again = hello_session(500, 7000, 1);
    struct jvm *jr = NULL, *jrelay = NULL, *jother = NULL, *jagain = NULL;
    struct jvm_ident ir, irelay, iother;
    int or, orelay, oother, oagain;
    jvm_ident_choose(&ir, 500, 500, 500, 11);
    jvm_ident_choose(&irelay, 500, 600, 600, 11);
    jvm_ident_choose(&iother, 500, 700, 700, 11);
    iother.uid = 1001;
    CHECK_INT(irelay.source, JVM_PID_HELLO);
    CHECK(jvm_ident_same(&ir, &ir));
    CHECK(!jvm_ident_same(&ir, &irelay));
    CHECK(!jvm_ident_same(&ir, &iother));
    if (!CHECK(r && real && relay && other && again))
        goto cleanup;
    CHECK_INT(jvms_attach_as(r, real, &ir, "/d/500-7000-0.vtp", & or, SEC, &jr), 0);
    CHECK_INT(jvms_attach_as(r, relay, &irelay, "/d/500-7000-0-2.vtp", &orelay, 2 * SEC, &jrelay), 0);
    CHECK_INT(jvms_attach_as(r, other, &iother, "/tmp/evil.vtp", &oother, 3 * SEC, &jother), 0);
    if (!CHECK(jr && jrelay && jother))
        goto cleanup;
    CHECK(jrelay != jr && jother != jr && jother != jrelay);
    CHECK_UINT(jvms_count(r), 3);
    CHECK_STR(jr->recording, "/d/500-7000-0.vtp");
    CHECK_UINT(jr->connections, 1);
    CHECK(jr->owner == & or);
    CHECK_INT(jr->ident.source, JVM_PID_PEER);
    CHECK_UINT(jother->ident.uid, 1001);
    /* its own reconnect (a newer connection) still finds it */
    CHECK_INT(jvms_attach_as(r, again, &ir, "/d/500-7000-1.vtp", &oagain, 4 * SEC, &jagain), 0);
    CHECK(jagain == jr);
    CHECK_UINT(jr->connections, 2);

    /* uid 1001 asks: its own entry only; with see_all (or as root): all three */
    struct query_info qi = {.pid = 1, .version = "t", .socket = "/s", .dir = "/d", .mine_only = 1, .asker_uid = 1001};
    char *json = NULL;
    size_t len = 0;
    if (CHECK_INT(query_json(r, &qi, VTPIN__V1__QUERY__KIND__STATUS, 0, 5 * SEC, &json, &len), 0)) {
        CHECK_INT(count(json, "\"pid\": 500"), 1);
        CHECK_CONTAINS(json, "\"uid\": 1001");
        CHECK_INT(count(json, "\"uid\": 0"), 0);
        CHECK_CONTAINS(json, "\"jvms_of_uid\": 1001");
    }
    free(json);
    json = NULL;
    if (CHECK_INT(query_json(r, &qi, VTPIN__V1__QUERY__KIND__TOP, 500, 5 * SEC, &json, &len), 0)) {
        CHECK_INT(count(json, "\"pid\": 500"), 1);
        CHECK_CONTAINS(json, "\"jvms_of_uid\": 1001");
    }
    free(json);
    json = NULL;
    qi.asker_uid = 1002; /* another allowed user: nothing of theirs */
    if (CHECK_INT(query_json(r, &qi, VTPIN__V1__QUERY__KIND__TOP, 0, 5 * SEC, &json, &len), 0))
        CHECK_CONTAINS(json, "\"jvms\": []");
    free(json);
    json = NULL;
    qi.mine_only = 0;
    if (CHECK_INT(query_json(r, &qi, VTPIN__V1__QUERY__KIND__STATUS, 0, 5 * SEC, &json, &len), 0)) {
        CHECK_INT(count(json, "\"pid\": 500"), 3);
        CHECK_CONTAINS(json, "\"jvms_of_uid\": null");
    }
    free(json);
cleanup:
    session_free(real);
    session_free(relay);
    session_free(other);
    session_free(again);
    jvms_free(r);
}

/* A recording stopped by a full disk, then resumed: the JVM shows the newest
 * connection's state; its totals add every connection's new stops and losses. */
static void test_recording_state(void)
{
    struct jvm j;
    memset(&j, 0, sizeof(j));
    struct rec_state seen = {0}, other_seen = {0};
    struct rec_state st = {.error = -ENOSPC,
                           .last_error = -ENOSPC,
                           .stopped_unix_ns = 5,
                           .stops = 1,
                           .frames_lost = 10,
                           .bytes_lost = 1000};
    jvm_note_recording(&j, &st, &seen, 1);
    CHECK_INT(j.rec.error, -ENOSPC);
    CHECK_UINT(j.rec_stops, 1);
    CHECK_UINT(j.rec_frames_lost, 10);
    st.frames_lost = 15; /* still stopped: more lost, the same stop */
    jvm_note_recording(&j, &st, &seen, 1);
    CHECK_UINT(j.rec_stops, 1);
    CHECK_UINT(j.rec_frames_lost, 15);
    st.error = 0; /* resumed */
    st.resumed_unix_ns = 9;
    jvm_note_recording(&j, &st, &seen, 1);
    CHECK_INT(j.rec.error, 0);
    CHECK_INT(j.rec.last_error, -ENOSPC);
    /* an older connection's recording stops too: counted, not shown */
    struct rec_state other = {.error = -EIO, .last_error = -EIO, .stops = 1, .frames_lost = 3};
    jvm_note_recording(&j, &other, &other_seen, 0);
    CHECK_INT(j.rec.error, 0);
    CHECK_UINT(j.rec_stops, 2);
    CHECK_UINT(j.rec_frames_lost, 18);
    /* a new recording of the newest connection starts clean */
    CHECK_INT(jvm_set_recording(&j, "/d/x.vtp"), 0);
    CHECK_UINT(j.rec.stops, 0);
    CHECK_UINT(j.rec_stops, 2);
    free(j.recording);
}

int main(void)
{
    CHECK_RUN(test_choose);
    CHECK_RUN(test_nspid_self);
    CHECK_RUN(test_two_containers);
    CHECK_RUN(test_impostor);
    CHECK_RUN(test_recording_state);
    CHECK_MAIN_RETURN();
}
