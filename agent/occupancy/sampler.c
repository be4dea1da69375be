#include "sampler.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carriers.h"
#include "clock.h"
#include "defs.h"
#include "hogs.h"
#include "jthread.h"
#include "outputs.h"
#include "vmstructs.h"
#include "watchdog.h"
#include "writer_thread.h"

#define TRANSITIONS_BATCH 4096
#define MAX_SAMPLED 256

static struct {
    const struct writer_config *cfg;
    struct symbols *symbols;
    struct mount_entry *mounts;
    int64_t next_sample_ns;
    int64_t next_occupancy_ns;
    int64_t last_round_ns; /* when the last sampling round began (0: none yet this session) */
    uint64_t gaps;         /* rounds that ended more than two periods after the previous one began */
    int64_t gap_max_ns;
} sampler;

/* Said once per process: kept across sessions, as the carrier table is. */
static int told_untracked, told_no_tid;

int sampler_init(const struct writer_config *cfg, struct symbols *symbols)
{
    sampler.cfg = cfg;
    sampler.symbols = symbols;
    sampler.mounts = calloc(TRANSITIONS_BATCH, sizeof(*sampler.mounts));
    if (!sampler.mounts)
        return -ENOMEM;
    return hogs_init(cfg, symbols);
}

void sampler_fini(void)
{
    free(sampler.mounts);
    memset(&sampler, 0, sizeof(sampler));
    hogs_fini();
    for (unsigned i = 0; i < carriers_capacity(); i++) {
        struct carrier_slot *c = carriers_slot(i);
        if (!c)
            continue;
        c->announced = 0;
        memset(&c->hog, 0, sizeof(c->hog)); /* a hog going on is one of the next session's */
        c->hog_id = 0;
        watchdog_forget(c);
    }
}

int64_t sampler_next_ns(void)
{
    return sampler.next_sample_ns;
}

void sampler_due_now(void)
{
    sampler.next_sample_ns = 0;
    sampler.next_occupancy_ns = 0;
}

void sampler_forget_sink(unsigned sink)
{
    for (unsigned i = 0; i < carriers_capacity(); i++) {
        struct carrier_slot *c = carriers_slot(i);
        if (c)
            c->announced &= ~sink;
    }
}

static void announce_carrier(struct carrier_slot *c)
{
    unsigned need = outputs_connected() & ~c->announced;
    if (!need)
        return;
    uint32_t sid = symbols_string(sampler.symbols, c->name);
    defs_send_string(sampler.symbols, sid);
    Vtpin__V1__Carrier m = VTPIN__V1__CARRIER__INIT;
    m.tid = c->tid;
    OPT_U32(m, name, sid);
    m.has_start_ns = 1;
    m.start_ns = c->start_ns;
    if (c->java_thread) {
        m.has_java_thread = 1;
        m.java_thread = (uint64_t)c->java_thread;
    }
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_CARRIER;
    ev.carrier = &m;
    c->announced |= outputs_put(need, &ev);
}

static void send_transitions(struct carrier_slot *c)
{
    int64_t times[TRANSITIONS_BATCH], vts[TRANSITIONS_BATCH];
    unsigned n;
    while ((n = carriers_take(c, sampler.mounts, TRANSITIONS_BATCH)) > 0) {
        for (unsigned i = 0; i < n; i++) {
            times[i] = sampler.mounts[i].time_ns;
            vts[i] = sampler.mounts[i].vthread_id;
            c->mounts_taken += vts[i] != 0; /* a hog spans no mount (hogs.c) */
        }
        Vtpin__V1__Transitions t = VTPIN__V1__TRANSITIONS__INIT;
        t.carrier_tid = c->tid;
        t.n_times_ns = t.n_vthread_ids = n;
        t.times_ns = times;
        t.vthread_ids = vts;
        WireEvent ev = VTPIN__V1__EVENT__INIT;
        ev.body_case = VTPIN__V1__EVENT__BODY_TRANSITIONS;
        ev.transitions = &t;
        outputs_put_all(&ev);
    }
}

/* sampled: an occupancy round (every occupancy_sample=), which asks every carrier which
 * virtual thread it carries; the other rounds look only where the watchdog must. */
static void sample_carriers(int64_t now, int sampled)
{
    unsigned cap = carriers_capacity(), n = 0;
    int32_t tids[MAX_SAMPLED];
    int64_t vts[MAX_SAMPLED];
    for (unsigned i = 0; i < cap; i++) {
        struct carrier_slot *c = carriers_slot(i);
        if (!c || atomic_load(&c->state) != SLOT_LIVE)
            continue;
        int look = watchdog_must_look(c);
        /* a hog runs: a carrier blocked in the JVM (idle in its pool, parked) holds none, and one
         * that held none before is not asked */
        int hog_look =
            hogs_enabled() && (c->hog.state != HOG_NONE || vmstructs_thread_state(c->java_thread) != VM_STATE_BLOCKED);
        JNIEnv *jni = look || sampled || hog_look ? writer_thread_jni() : NULL;
        if (!jni)
            continue;
        /* Read without JVMTI (jthread_mounted): an idle carrier (parked in its pool, so looked
         * at) has no virtual thread mounted, and a mounted one is classified from it. */
        jthread vt = NULL;
        jthread_mounted(jni, c->thread, &vt);
        int64_t vid = vt ? jthread_id(jni, vt) : 0;
        watchdog_sample(c, look ? vt : NULL, vid, now); /* NULL: nothing to classify, as the watchdog would say */
        hogs_sample(jni, c, vt, vid, now);              /* after the watchdog: a block it just found is no hog */
        if (vt)
            (*jni)->DeleteLocalRef(jni, vt);
        if (sampled && n < MAX_SAMPLED) {
            tids[n] = c->tid;
            vts[n++] = vid;
        }
    }
    hogs_round_end();
    if (n == 0)
        return;
    Vtpin__V1__CarrierSample m = VTPIN__V1__CARRIER_SAMPLE__INIT;
    m.time_ns = now;
    m.n_carrier_tids = m.n_vthread_ids = n;
    m.carrier_tids = tids;
    m.vthread_ids = vts;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_CARRIER_SAMPLE;
    ev.carrier_sample = &m;
    outputs_put_all(&ev);
}

/* How late the sampler ran: a carrier can have gone unlooked at from the previous round's start to
 * the end of this one, and a park (after attach) or a block shorter than that may never be seen. */
static void note_round(int64_t began)
{
    if (sampler.last_round_ns) {
        int64_t span = clock_mono_ns() - sampler.last_round_ns;
        sampler.gaps += span > 2 * (int64_t)sampler.cfg->options->sample_interval_ns;
        if (span > sampler.gap_max_ns)
            sampler.gap_max_ns = span;
    }
    sampler.last_round_ns = began;
}

void sampler_gaps(uint64_t *gaps, int64_t *max_ns)
{
    *gaps = sampler.gaps;
    *max_ns = sampler.gap_max_ns;
}

void sampler_round(int64_t now)
{
    if (!told_untracked && carriers_unregistered() > 0) {
        told_untracked = 1;
        char text[200];
        snprintf(text, sizeof(text),
                 "more carriers than carriers=%u: the others are not sampled, watched for native blocks or "
                 "counted in occupancy",
                 sampler.cfg->options->max_carriers);
        outputs_say(SINK_RECORD | SINK_LINK, VTPIN__V1__SEVERITY__WARNING, "carriers.untracked", text);
    }
    unsigned cap = carriers_capacity();
    for (unsigned i = 0; i < cap; i++) {
        struct carrier_slot *c = carriers_slot(i);
        if (!c)
            continue;
        if (!told_no_tid && c->tid <= 0 && atomic_load(&c->state) == SLOT_LIVE) {
            /* after attach the tid comes from HotSpot's VMStructs (vmstructs.c); a layout it does not know */
            told_no_tid = 1;
            outputs_say(SINK_RECORD | SINK_LINK, VTPIN__V1__SEVERITY__WARNING, "carriers.tid_unknown",
                        "a carrier's OS thread id is unknown (HotSpot's thread layout not recognised): "
                        "NATIVE_BLOCK and VM_BLOCK are not looked for on it, and the kernel view cannot follow it");
        }
        announce_carrier(c);
        send_transitions(c);
        if (atomic_load(&c->state) == SLOT_DEAD) {
            hogs_carrier_gone(c, now);
            watchdog_end(c, now);
            carriers_release(writer_thread_jni(), c);
        }
    }
    if (now >= sampler.next_sample_ns) {
        int occupancy = sampler.cfg->options->occupancy == OCCUPANCY_SAMPLED && now >= sampler.next_occupancy_ns;
        sample_carriers(now, occupancy);
        note_round(now);
        sampler.next_sample_ns = now + (int64_t)sampler.cfg->options->sample_interval_ns;
        if (occupancy)
            sampler.next_occupancy_ns = now + (int64_t)options_occupancy_interval_ns(sampler.cfg->options);
    }
}
