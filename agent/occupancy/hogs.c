#include "hogs.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "active_pins.h"
#include "defs.h"
#include "mount_events.h"
#include "outputs.h"
#include "stack_read.h"
#include "trace.h"
#include "vmblock.h"
#include "vmstructs.h"

static struct {
    const struct writer_config *cfg;
    struct symbols *symbols;
    struct pin_rec *scratch;
    int64_t hog_ns;
    struct hog_rule rule;
    int exact;          /* exact occupancy counts every mount */
    int64_t count_from; /* a watch this old wants mounts counted (on demand) */
    int want_count;     /* a carrier of this round does */
    uint64_t next_id, reported;
} hogs;

int hogs_init(const struct writer_config *cfg, struct symbols *symbols)
{
    hogs.cfg = cfg;
    hogs.symbols = symbols;
    hogs.hog_ns = (int64_t)options_hog_ns(cfg->options);
    int64_t period = (int64_t)cfg->options->sample_interval_ns;
    /* a late sampler (sample_gaps counts spans over two periods) may stretch a watch to a quarter of hog=;
     * half the looks a sampler on time would take must have seen it */
    int64_t gap = 2 * period > hogs.hog_ns / 4 ? 2 * period : hogs.hog_ns / 4;
    int64_t looks = hogs.hog_ns / (2 * period);
    hogs.rule =
        (struct hog_rule){.hog_ns = hogs.hog_ns, .max_gap_ns = gap, .min_looks = looks > 2 ? (unsigned)looks : 2};
    hogs.exact = cfg->options->occupancy == OCCUPANCY_EXACT;
    if (!hogs.exact && cfg->mounts_on_demand) {
        /* a quarter of hog= (two periods at least) of counted mounts, none seen, before a hog is said:
         * counting starts that long before a watch reaches hog=, and a period more, as its first
         * sample only takes the base count */
        hogs.rule.verify_ns = 2 * period > hogs.hog_ns / 4 ? 2 * period : hogs.hog_ns / 4;
        hogs.count_from = hogs.hog_ns - hogs.rule.verify_ns - period;
    }
    hogs.scratch = calloc(1, pins_record_size(cfg->options->depth));
    return hogs.scratch ? 0 : -ENOMEM;
}

void hogs_fini(void)
{
    mount_events_count(0);
    free(hogs.scratch);
    memset(&hogs, 0, sizeof(hogs));
}

int hogs_enabled(void)
{
    return hogs.hog_ns > 0;
}

uint64_t hogs_reported(void)
{
    return hogs.reported;
}

static void send_start(const struct carrier_slot *c, unsigned sinks)
{
    uint32_t cname = symbols_string(hogs.symbols, c->name);
    defs_send_string(hogs.symbols, c->hog_vname);
    defs_send_string(hogs.symbols, cname);
    Vtpin__V1__HogStart h = VTPIN__V1__HOG_START__INIT;
    h.hog_id = c->hog_id;
    h.start_ns = c->hog.since;
    h.has_vthread_id = 1;
    h.vthread_id = c->hog.vthread_id;
    OPT_U32(h, vthread_name, c->hog_vname);
    h.has_carrier_tid = 1;
    h.carrier_tid = c->tid;
    OPT_U32(h, carrier_name, cname);
    if (c->hog_stack) {
        defs_send_stack(hogs.symbols, symbols_stack_by_id(hogs.symbols, c->hog_stack));
        h.has_stack = 1;
        h.stack = c->hog_stack;
        h.has_culprit_frame = 1;
        h.culprit_frame = c->hog_culprit;
    }
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_HOG_START;
    ev.hog_start = &h;
    outputs_put(sinks, &ev);
}

/* A hog that has lasted hog=: its stack now, while it runs, and the report. */
static void report_start(JNIEnv *jni, struct carrier_slot *c, jthread vt)
{
    struct pin_rec *r = hogs.scratch;
    unsigned depth = hogs.cfg->options->depth;
    memset(r, 0, pins_record_size(depth));
    stack_read_full(vt, r);
    const struct stack_info *st = r->frame_count ? symbols_stack(hogs.symbols, jni, r, depth) : NULL;
    char name[REC_NAME_MAX];
    jthread_copy_name(jni, vt, name);
    c->hog_id = ++hogs.next_id;
    c->hog_stack = st ? st->id : 0;
    c->hog_culprit = symbols_first_app_frame(hogs.symbols, st);
    c->hog_vname = name[0] ? symbols_string(hogs.symbols, name) : 0;
    hogs.reported++;
    send_start(c, outputs_all());
    if (outputs_trace()) {
        char frame[1024] = "", line[1400];
        if (st)
            trace_format_frame(hogs.symbols, st, c->hog_culprit, frame, sizeof(frame));
        snprintf(line, sizeof(line),
                 "hog #%llu started: VirtualThread[#%lld,%s] has run on %s (tid %d) for %lld ms without unmounting%s%s",
                 (unsigned long long)c->hog_id, (long long)c->hog.vthread_id, name, c->name, c->tid,
                 (long long)((c->hog.last_running - c->hog.since) / 1000000), frame[0] ? " at " : "", frame);
        trace_line(outputs_trace(), line);
    }
}

static void report_end(struct carrier_slot *c, const struct hog_ended *ended)
{
    Vtpin__V1__HogEnd h = VTPIN__V1__HOG_END__INIT;
    h.hog_id = c->hog_id;
    h.end_ns = ended->end;
    h.duration_ns = ended->end - ended->since;
    h.has_last_running_ns = 1;
    h.last_running_ns = ended->last_running;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_HOG_END;
    ev.hog_end = &h;
    outputs_put_all(&ev);
    if (outputs_trace()) {
        char line[400];
        snprintf(line, sizeof(line), "hog #%llu ended: %.3f ms on %s (tid %d)", (unsigned long long)c->hog_id,
                 (double)h.duration_ns / 1e6, c->name, c->tid);
        trace_line(outputs_trace(), line);
    }
    c->hog_id = 0;
}

/* c's OS thread runs or waits for a CPU. In Java it does (HotSpot's thread state, no system call:
 * a safepoint or a GC shows as blocked); in native code, and when the state is unknown, /proc says
 * (asleep, S or D, is no hog: a block the watchdog or a pin reports; unknown is none either). */
static int runs(struct carrier_slot *c)
{
    switch (vmstructs_thread_state(c->java_thread)) {
    case VM_STATE_OTHER:
        return 1;
    case VM_STATE_BLOCKED:
        return 0;
    default:
        return vmblock_thread_sleeps(c->tid, &c->stat_fd1, &c->stat_tid) == 0;
    }
}

void hogs_sample(JNIEnv *jni, struct carrier_slot *c, jthread vt, int64_t vid, int64_t now)
{
    if (!hogs_enabled())
        return;
    struct hog_sample s = {.now = now, .vthread_id = vt ? vid : 0};
    if (hogs.exact) {
        s.counting = 1;
        s.mounts = c->mounts_taken;
    } else if (mount_events_counting()) {
        s.counting = 1;
        s.mounts = atomic_load_explicit(&c->mounts_counted, memory_order_relaxed);
    }
    if (s.vthread_id) {
        s.running = runs(c);
        s.cpu_ns = s.running ? vmblock_thread_cpu_ns(c->tid) : 0;
        s.pinned = c->block_pin != 0 || active_pins_on_carrier(c->tid, 0);
    }
    struct hog_ended ended;
    switch (hog_track_sample(&c->hog, &s, &hogs.rule, &ended)) {
    case HOG_STARTS:
        report_start(jni, c, vt);
        break;
    case HOG_ENDS:
        report_end(c, &ended);
        break;
    default:
        break;
    }
    if (hogs.rule.verify_ns && c->hog.state == HOG_WATCHED && now - c->hog.since >= hogs.count_from)
        hogs.want_count = 1;
}

void hogs_round_end(void)
{
    if (!hogs.rule.verify_ns)
        return;
    mount_events_count(hogs.want_count); /* the JVM's every mount calls the agent while it counts */
    hogs.want_count = 0;
}

void hogs_carrier_gone(struct carrier_slot *c, int64_t now)
{
    struct hog_sample none = {.now = now};
    struct hog_ended ended;
    if (hogs_enabled() && hog_track_sample(&c->hog, &none, &hogs.rule, &ended) == HOG_ENDS)
        report_end(c, &ended);
}

int hogs_on(const struct carrier_slot *c, int64_t *vthread_id, const char **name)
{
    if (!hogs_enabled() || c->hog.state != HOG_RUNNING || !c->hog_id)
        return 0;
    *vthread_id = c->hog.vthread_id;
    *name = c->hog_vname ? symbols_string_text(hogs.symbols, c->hog_vname) : NULL;
    return 1;
}

void hogs_resend(unsigned sinks)
{
    for (unsigned i = 0; i < carriers_capacity(); i++) {
        struct carrier_slot *c = carriers_slot(i);
        if (c && c->hog.state == HOG_RUNNING && c->hog_id)
            send_start(c, sinks);
    }
}
