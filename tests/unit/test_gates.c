/* vtpin run's verdict (cli/run/gates.c) over pins built in memory: --allow, the
 * JDK's own pins set aside unless --count-jdk-pins, the pin and time gates, the hog gate, the
 * deadlock gate (a notice deadlock.KIND);
 * what could not be judged fails it; the exit status of each outcome. */
#include <string.h>

#include "check.h"
#include "exit_codes.h"
#include "gates.h"

static struct recording_method m_app = {.class_name = "com.example.Repo", .name = "save"};
static struct recording_method m_park = {.class_name = "jdk.internal.misc.Unsafe", .name = "park"};
static struct recording_method m_lf = {.class_name = "java.lang.invoke.LambdaForm$MH/0x1", .name = "invoke"};
static struct recording_method m_poller = {.class_name = "sun.nio.ch.Poller", .name = "start"};

static struct recording_frame app_frames[] = {{.method = &m_park}, {.method = &m_app}};
static struct recording_frame jdk_frames[] = {{.method = &m_lf}, {.method = &m_poller}, {.method = &m_park}};
static struct recording_stack app_stack = {.count = 2, .frames = app_frames};
static struct recording_stack jdk_stack = {.count = 3, .frames = jdk_frames};

static struct recording_pin pins[] = {
    {.reason = 1, .ended = 1, .duration_ns = 1000000, .stack = &app_stack},
    {.reason = 1, .ended = 1, .duration_ns = 2000000, .stack = &jdk_stack},
    {.reason = 1, .ended = 1, .duration_ns = 4000000, .stack = NULL}, /* no stack: never set aside */
};

static struct recording_hog hogs[] = {
    {.ended = 1, .duration_ns = 300000000, .stack = &app_stack},
    {.ended = 1, .duration_ns = 250000000, .stack = NULL},
};

static struct recording_notice notices[] = {
    {.code = "output.record.disk_nearly_full", .text = "the disk is nearly full"},
    {.code = "deadlock.carrier_starvation", .text = "deadlock (carrier starvation): all 2 carriers ..."},
    {.code = "deadlock.", .text = "a code with no kind: no deadlock"},
    {.code = "deadlocks.x", .text = "another code"},
};
static size_t n_notices = 1; /* evaluate()'s session holds the first n_notices */

static void evaluate(struct gate_config *c, struct gate_result *g)
{
    struct recording_session s;
    memset(&s, 0, sizeof(s));
    s.pins = pins;
    s.n_pins = 3;
    s.hogs = hogs;
    s.n_hogs = 2;
    s.notices = notices;
    s.n_notices = n_notices;
    struct recording_session *sp = &s;
    struct recording r;
    memset(&r, 0, sizeof(r));
    r.sessions = &sp;
    r.n_sessions = 1;
    struct recording *rp = &r;
    gates_evaluate(c, &rp, 1, g);
}

int main(void)
{
    for (size_t i = 0; i < sizeof(pins) / sizeof(pins[0]); i++)
        pins[i].origin = recording_stack_origin(pins[i].stack); /* as the loader sets it */
    CHECK(!gates_pin_jdk_internal(&pins[0]));
    CHECK(gates_pin_jdk_internal(&pins[1]));
    CHECK(!gates_pin_jdk_internal(&pins[2]));

    struct gate_config c = {.fail_pins = 1, .fail_pinned_ns = -1};
    struct gate_result g;
    evaluate(&c, &g);
    CHECK_UINT(g.pins, 2);
    CHECK_UINT(g.jdk_internal, 1);
    CHECK_UINT(g.allowed, 0);
    CHECK(g.failed);

    const char *allow[] = {"com.example.*"};
    c.allow = allow;
    c.n_allow = 1;
    evaluate(&c, &g);
    CHECK_UINT(g.pins, 1);
    CHECK_UINT(g.allowed, 1);
    CHECK_UINT(g.jdk_internal, 1);

    c.count_jdk_pins = 1;
    evaluate(&c, &g);
    CHECK_UINT(g.pins, 2);
    CHECK_UINT(g.jdk_internal, 0);
    CHECK(gates_pin_set_aside(&c, &pins[0]));
    CHECK(!gates_pin_set_aside(&c, &pins[1]));

    /* the time gate sums only what counts */
    c.count_jdk_pins = 0;
    c.fail_pins = -1;
    c.fail_pinned_ns = 4000001;
    evaluate(&c, &g);
    CHECK(!g.failed);
    c.fail_pinned_ns = 4000000;
    evaluate(&c, &g);
    CHECK(g.failed);

    /* hogs: counted (0: no gate), --allow sets aside a hog whose stack matches */
    c.fail_pinned_ns = -1;
    c.n_allow = 0;
    evaluate(&c, &g);
    CHECK(!g.failed);
    CHECK_UINT(g.hogs, 2);
    CHECK_INT(g.hogged_ns, 550000000);
    c.fail_hogs = 2;
    evaluate(&c, &g);
    CHECK(g.failed);
    CHECK(strstr(g.why, "--fail-on-hogs 2: 2 carrier hog(s), 550.0 ms in all") != NULL);
    c.n_allow = 1;
    evaluate(&c, &g);
    CHECK(!g.failed);
    CHECK_UINT(g.hogs, 1);
    CHECK_UINT(g.hogs_allowed, 1);

    /* deadlocks: any fails the run while the gate is on (vtpin run's default); only deadlock.KIND is one */
    c.n_allow = 0;
    c.fail_hogs = 0;
    c.fail_on_deadlock = 1;
    evaluate(&c, &g);
    CHECK(!g.failed);
    CHECK_UINT(g.deadlocks, 0);
    n_notices = 4;
    CHECK_STR(recording_deadlock_kind(&notices[1]), "carrier_starvation");
    CHECK(recording_deadlock_kind(&notices[2]) == NULL);
    CHECK(recording_deadlock_kind(&notices[3]) == NULL);
    evaluate(&c, &g);
    CHECK(g.failed);
    CHECK_UINT(g.deadlocks, 1);
    CHECK_CONTAINS(g.why, "--fail-on-deadlock: 1 deadlock(s) found live (carrier_starvation): the report's DEADLOCK "
                          "line names the lock, its owner and every pinned carrier");
    c.fail_on_deadlock = 0;
    evaluate(&c, &g);
    CHECK(!g.failed);
    CHECK_UINT(g.deadlocks, 1);
    c.n_allow = 1;

    /* JVMs still running past --background-timeout, unreadable recordings, a baseline that could not be
     * applied: not judged, failed */
    CHECK(!g.failed);
    gates_unjudged(&g, 0, 5000000000LL, 0, 0);
    CHECK(!g.failed);
    gates_unjudged(&g, 2, 5000000000LL, 1, 1);
    CHECK(g.failed);
    CHECK_CONTAINS(g.why, "not judged: 2 JVM(s) still running 5.00 s after the command exited (--background-timeout)\n"
                          "not judged: 1 recording(s) of this run could not be read\n"
                          "not judged against --baseline: out of memory for the run's pin sites");

    /* the exit status: a signal, then a failed gate, then the command's failure, then nothing judged */
    struct gate_result passed = {.failed = 0}, failed = {.failed = 1};
    CHECK_INT(gates_exit_status(&failed, 1, 7, 15), CLI_EXIT_SIGNAL_BASE + 15);
    CHECK_INT(gates_exit_status(&passed, 0, 0, 2), CLI_EXIT_SIGNAL_BASE + 2);
    CHECK_INT(gates_exit_status(&failed, 0, 7, 0), CLI_EXIT_GATE);
    CHECK_INT(gates_exit_status(&passed, 1, 7, 0), 7);
    CHECK_INT(gates_exit_status(&passed, 0, 127, 0), 127);
    CHECK_INT(gates_exit_status(&passed, 0, 0, 0), CLI_EXIT_NOTHING_JUDGED);
    CHECK_INT(gates_exit_status(&passed, 3, 0, 0), CLI_EXIT_OK);
    CHECK_MAIN_RETURN();
}
