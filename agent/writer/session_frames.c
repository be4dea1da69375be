#include "session_frames.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "active_pins.h"
#include "blocker.h"
#include "carriers.h"
#include "clock.h"
#include "hogs.h"
#include "outputs.h"
#include "pins.h"
#include "queue.h"
#include "sampler.h"
#include "self_cost.h"
#include "vmstructs.h"

#define MAX_NOTICES 32

struct pending_notice {
    int severity;
    char code[64];
    char text[256];
};

static struct {
    const struct writer_config *cfg;
    struct symbols *symbols;
    struct pending_notice notices[MAX_NOTICES];
    unsigned notice_count;
    int64_t start_mono, start_unix; /* one pair per session, repeated on reconnects */
    Vtpin__V1__Stats base;          /* the counters at its start: a session after "stop" counts its own */
} session;

static char host_name[256];

static void fill_stats(Vtpin__V1__Stats *s);

void session_init(const struct writer_config *cfg, struct symbols *symbols)
{
    session.cfg = cfg;
    session.symbols = symbols;
    self_cost_reset(); /* a session's stats count from its start */
    vtpin__v1__stats__init(&session.base);
    fill_stats(&session.base);
}

void session_fini(void)
{
    memset(&session, 0, sizeof(session));
}

void session_add_notice(int severity, const char *code, const char *text)
{
    if (session.notice_count >= MAX_NOTICES)
        return;
    struct pending_notice *n = &session.notices[session.notice_count++];
    n->severity = severity;
    snprintf(n->code, sizeof(n->code), "%s", code);
    snprintf(n->text, sizeof(n->text), "%s", text);
}

void session_notices(unsigned sinks)
{
    for (unsigned i = 0; i < session.notice_count; i++)
        outputs_notice(sinks, session.notices[i].severity, session.notices[i].code, session.notices[i].text);
}

static uint64_t since(uint64_t now, uint64_t at)
{
    return now >= at ? now - at : now; /* a counter of its own that started again at 0 */
}

/* The process-wide counters as this session's: what they were at its start taken away. */
static void since_start(Vtpin__V1__Stats *s)
{
    const Vtpin__V1__Stats *b = &session.base;
    s->pins = since(s->pins, b->pins);
    s->pins_below_threshold = since(s->pins_below_threshold, b->pins_below_threshold);
    s->pins_reported = since(s->pins_reported, b->pins_reported);
    s->events_dropped = since(s->events_dropped, b->events_dropped);
    s->stacks_dropped = since(s->stacks_dropped, b->stacks_dropped);
    s->carriers_started = since(s->carriers_started, b->carriers_started);
    s->compensations = since(s->compensations, b->compensations);
    s->collector_dropped = since(s->collector_dropped, b->collector_dropped);
    s->transitions_dropped = since(s->transitions_dropped, b->transitions_dropped);
    s->write_failures = since(s->write_failures, b->write_failures);
    s->events_unwritten = since(s->events_unwritten, b->events_unwritten);
    s->methods_dropped = since(s->methods_dropped, b->methods_dropped);
    s->pins_without_stack = since(s->pins_without_stack, b->pins_without_stack);
    s->blockers_skipped = since(s->blockers_skipped, b->blockers_skipped);
    s->hogs = since(s->hogs, b->hogs);
    s->sample_gaps = since(s->sample_gaps, b->sample_gaps);
}

static void fill_stats(Vtpin__V1__Stats *s)
{
    struct active_pins_counts pins;
    struct outputs_counts out;
    active_pins_counts(&pins);
    outputs_counts(&out);
    s->time_ns = clock_mono_ns();
    s->has_pins = 1;
    /* the callbacks count every start; on 24+ most contended entries turn out not to pin (the
     * writer decides from the stack): not pins. A start the writer has not read yet counts until it does. */
    uint64_t started = pins_started();
    s->pins = started > pins.not_pins ? started - pins.not_pins : 0;
    s->has_pins_below_threshold = 1;
    s->pins_below_threshold = pins.below_threshold;
    s->has_pins_reported = 1;
    s->pins_reported = pins.reported;
    s->has_events_dropped = 1;
    s->events_dropped = queue_dropped(session.cfg->queue) + out.record_lost + pins.dropped;
    s->has_stacks_dropped = 1;
    s->stacks_dropped = symbols_stacks_dropped(session.symbols);
    s->has_carriers_started = 1;
    s->carriers_started = pins.carriers_started;
    s->has_compensations = 1;
    s->compensations = pins.compensations;
    s->has_collector_dropped = 1;
    s->collector_dropped = out.collector_dropped;
    s->has_transitions_dropped = 1;
    s->transitions_dropped = carriers_dropped();
    s->has_reconnects = 1;
    s->reconnects = out.connections > 1 ? out.connections - 1 : 0;
    s->has_write_failures = 1;
    s->write_failures = out.write_failures;
    s->has_events_unwritten = 1;
    s->events_unwritten = out.events_unwritten;
    s->has_methods_dropped = 1;
    s->methods_dropped = symbols_methods_dropped(session.symbols);
    s->has_pins_without_stack = 1;
    s->pins_without_stack = pins.without_stack;
    s->has_blockers_skipped = 1;
    s->blockers_skipped = blocker_skipped();
    s->has_hogs = 1;
    s->hogs = hogs_reported();
    int64_t gap_max = 0;
    s->has_sample_gaps = s->has_sample_gap_max_ns = 1;
    sampler_gaps(&s->sample_gaps, &gap_max);
    s->sample_gap_max_ns = (uint64_t)gap_max;
    int64_t cpu = self_cost_writer_cpu_ns();
    s->has_agent_cpu_ns = cpu >= 0;
    s->agent_cpu_ns = cpu >= 0 ? (uint64_t)cpu : 0;
}

/* Stats with the JVMTI calls by function: calls[]/ptrs[] are the caller's, CALL_KINDS long. */
static void fill_calls(Vtpin__V1__Stats *s, Vtpin__V1__JvmtiCalls *calls, Vtpin__V1__JvmtiCalls **ptrs)
{
    for (unsigned i = 0; i < CALL_KINDS; i++) {
        vtpin__v1__jvmti_calls__init(&calls[i]);
        calls[i].function = (char *)self_cost_call_name((enum jvmti_call)i);
        calls[i].calls = self_cost_calls((enum jvmti_call)i);
        ptrs[i] = &calls[i];
    }
    s->n_jvmti_calls = CALL_KINDS;
    s->jvmti_calls = ptrs;
}

/* This session's counters now, with its JVMTI calls: calls[]/ptrs[] are the caller's. */
static void fill_session_stats(Vtpin__V1__Stats *s, Vtpin__V1__JvmtiCalls *calls, Vtpin__V1__JvmtiCalls **ptrs)
{
    fill_stats(s);
    since_start(s);
    fill_calls(s, calls, ptrs);
}

void session_stats(unsigned sinks)
{
    Vtpin__V1__Stats s = VTPIN__V1__STATS__INIT;
    Vtpin__V1__JvmtiCalls calls[CALL_KINDS], *ptrs[CALL_KINDS];
    fill_session_stats(&s, calls, ptrs);
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_STATS;
    ev.stats = &s;
    outputs_put(sinks, &ev);
}

void session_goodbye(void)
{
    Vtpin__V1__Stats s = VTPIN__V1__STATS__INIT;
    Vtpin__V1__JvmtiCalls calls[CALL_KINDS], *ptrs[CALL_KINDS];
    fill_session_stats(&s, calls, ptrs);
    Vtpin__V1__Goodbye g = VTPIN__V1__GOODBYE__INIT;
    g.time_ns = s.time_ns;
    /* the wall clock at time_ns, from a pair read together as the Hello's is (the report compares) */
    int64_t mono = clock_mono_ns(), wall = clock_unix_ns();
    g.has_unix_ns = 1;
    g.unix_ns = wall - (mono - s.time_ns);
    g.stats = &s;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_GOODBYE;
    ev.goodbye = &g;
    outputs_put_all(&ev);
}

void session_hello(unsigned sinks, uint32_t connection)
{
    const struct writer_config *c = session.cfg;
    Vtpin__V1__Hello h = VTPIN__V1__HELLO__INIT;
    h.schema_version = WIRE_SCHEMA_VERSION;
    h.pid = c->pid;
    h.java_version = (char *)c->java_version;
    h.vm_name = (char *)c->vm_name;
    h.vm_version = (char *)c->vm_version;
    h.vm_vendor = (char *)c->vm_vendor;
    if (c->app && *c->app)
        h.app = (char *)c->app;
    if (gethostname(host_name, sizeof(host_name) - 1) == 0)
        h.host = host_name;
    h.agent_version = VTPIN_VERSION;
    h.options = (char *)c->option_text;
    h.has_mode = 1;
    h.mode = c->attach_mode ? VTPIN__V1__LOAD_MODE__ATTACH : VTPIN__V1__LOAD_MODE__STARTUP;
    if (!session.start_mono) {
        session.start_mono = clock_mono_ns();
        session.start_unix = clock_unix_ns();
    }
    h.has_start_unix_ns = h.has_start_mono_ns = 1;
    h.start_mono_ns = session.start_mono;
    h.start_unix_ns = session.start_unix;
    h.has_threshold_ns = 1;
    h.threshold_ns = c->options->threshold_ns;
    h.has_jdk_feature = 1;
    h.jdk_feature = c->jdk_feature;
    h.has_parallelism = 1;
    h.parallelism = c->parallelism;
    h.n_capabilities_missing = c->capabilities_missing_count;
    h.capabilities_missing = (char **)c->capabilities_missing;
    h.has_occupancy = 1;
    h.occupancy = (Vtpin__V1__OccupancySource)c->options->occupancy;
    h.has_sample_interval_ns = 1;
    h.sample_interval_ns = c->options->sample_interval_ns;
    h.has_occupancy_sample_interval_ns = 1;
    h.occupancy_sample_interval_ns = options_occupancy_interval_ns(c->options);
    h.has_connection = 1;
    h.connection = connection;
    struct vm_thread_layout l;
    Vtpin__V1__ThreadLayout tl = VTPIN__V1__THREAD_LAYOUT__INIT;
    if (vmstructs_thread_layout(&l)) {
        tl.thread_obj_offset = l.thread_obj;
        tl.vthread_offset = l.vthread;
        tl.pending_monitor_offset = l.pending_monitor;
        tl.waiting_monitor_offset = l.waiting_monitor;
        tl.thread_state_offset = l.thread_state;
        tl.tid_offset = l.tid;
        tl.has_vthread_state_offset = l.vt_state != 0;
        tl.vthread_state_offset = l.vt_state;
        tl.state_blocked = l.state_blocked;
        tl.state_in_native = l.state_in_native;
        h.thread_layout = &tl;
    }
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_HELLO;
    ev.hello = &h;
    outputs_put(sinks, &ev);
}
