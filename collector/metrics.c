#include "metrics.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/frames_kind.h"
#include "common/strbuf.h"
#include "common/utf8.h"
#include "wire.h"

#define NS_PER_SEC UINT64_C(1000000000)
#define LABEL_CAP 1024 /* an escaped label value: a site (255 bytes) escaped at worst */

char *metrics_escape_label(const char *s, char *out, size_t cap)
{
    size_t o = 0, n = s ? strlen(s) : 0;
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    if (cap == 0)
        return out;
    while (n > 0) {
        uint32_t cp;
        int valid;
        size_t used = utf8_decode(p, n, &cp, &valid);
        char enc[4];
        size_t len;
        if (cp == '\\' || cp == '"' || cp == '\n') {
            enc[0] = '\\';
            enc[1] = cp == '\n' ? 'n' : (char)cp;
            len = 2;
        } else {
            /* U+0000 (C0 80 in the JVM's modified UTF-8) is no use in a label */
            len = utf8_encode(!valid || cp == 0 ? UTF8_REPLACEMENT : cp, enc);
        }
        if (o + len >= cap)
            break;
        memcpy(out + o, enc, len);
        o += len;
        p += used;
        n -= used;
    }
    out[o] = '\0';
    return out;
}

/* One JVM as the metrics show it. */
struct row {
    struct jvm *j;
    char labels[LABEL_CAP + 64]; /* jvm="pid",app="..." */
    struct carrier_view *views;
    size_t nviews;
};

static void family(struct strbuf *b, const char *name, const char *type, const char *help)
{
    strbuf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* ns as seconds, exactly (no binary fraction). */
static void put_seconds(struct strbuf *b, uint64_t ns)
{
    strbuf_printf(b, "%" PRIu64 ".%09" PRIu64 "\n", ns / NS_PER_SEC, ns % NS_PER_SEC);
}

/* A later JVM of the list has the same pid: only the newest is shown. */
static int shadowed(const struct jvm *j)
{
    for (const struct jvm *k = j->next; k; k = k->next)
        if (k->pid == j->pid)
            return 1;
    return 0;
}

static void pins(struct strbuf *b, const struct row *rows, size_t n)
{
    family(b, "jvm_threads_virtual_pinned_seconds", "summary",
           "Pinned virtual threads: count and total time of the pins that ended, by reason and origin "
           "(app, or jdk: every frame the JDK's own) (Micrometer's jvm.threads.virtual.pinned).");
    for (size_t i = 0; i < n; i++) {
        const struct pinstats *p = rows[i].j->pinstats;
        for (int r = 0; r < PINSTATS_REASONS; r++) {
            const char *reason = wire_reason_name(r); /* plain capitals: no escaping needed */
            struct pinstats_total by_origin[2] = {
                {p->reasons[r].count - p->jdk[r].count, p->reasons[r].ns - p->jdk[r].ns}, p->jdk[r]};
            for (int o = PIN_ORIGIN_APP; o <= PIN_ORIGIN_JDK; o++) {
                if (!by_origin[o].count)
                    continue;
                const char *origin = frames_origin_name(o);
                strbuf_printf(b,
                              "jvm_threads_virtual_pinned_seconds_count{%s,reason=\"%s\",origin=\"%s\"} %" PRIu64 "\n",
                              rows[i].labels, reason, origin, by_origin[o].count);
                strbuf_printf(b, "jvm_threads_virtual_pinned_seconds_sum{%s,reason=\"%s\",origin=\"%s\"} ",
                              rows[i].labels, reason, origin);
                put_seconds(b, by_origin[o].ns);
            }
        }
    }
    family(b, "vtpin_pin_site_seconds_total", "counter",
           "Pinned time by pin site (culprit frame): the first 20 sites of each JVM, later ones as site=\"other\".");
    for (size_t i = 0; i < n; i++) {
        const struct pinstats *p = rows[i].j->pinstats;
        char site[LABEL_CAP];
        for (unsigned s = 0; s < p->nsites; s++) {
            if (!p->sites[s].t.count)
                continue; /* a site whose first pin is still in progress */
            strbuf_printf(b, "vtpin_pin_site_seconds_total{%s,site=\"%s\"} ", rows[i].labels,
                          metrics_escape_label(p->sites[s].name, site, sizeof(site)));
            put_seconds(b, p->sites[s].t.ns);
        }
        if (p->other.count) {
            strbuf_printf(b, "vtpin_pin_site_seconds_total{%s,site=\"other\"} ", rows[i].labels);
            put_seconds(b, p->other.ns);
        }
    }
}

static void hogs(struct strbuf *b, const struct row *rows, size_t n)
{
    family(b, "vtpin_hogs_total", "counter",
           "Carrier hogs reported: virtual threads that ran on their carrier for at least the agent's hog= without "
           "unmounting, nothing pinned (a hog re-sent after a reconnect counts once).");
    for (size_t i = 0; i < n; i++)
        strbuf_printf(b, "vtpin_hogs_total{%s} %" PRIu64 "\n", rows[i].labels, rows[i].j->hogs_total);
    family(b, "vtpin_hog_seconds_total", "counter",
           "Carrier time held by hogs, each from its start: the hogs that ended and those in progress (busy time, "
           "not pinned).");
    for (size_t i = 0; i < n; i++) {
        uint64_t ns = 0;
        for (size_t c = 0; c < rows[i].nviews; c++)
            ns += (uint64_t)rows[i].views[c].hogged_ns;
        strbuf_printf(b, "vtpin_hog_seconds_total{%s} ", rows[i].labels);
        put_seconds(b, ns);
    }
    family(b, "vtpin_carriers_hogged", "gauge",
           "Carrier threads held by a hog now (counted as busy in vtpin_carriers).");
    for (size_t i = 0; i < n; i++) {
        unsigned hogged = 0;
        for (size_t c = 0; c < rows[i].nviews; c++)
            hogged += rows[i].views[c].state == CARRIER_HOG;
        strbuf_printf(b, "vtpin_carriers_hogged{%s} %u\n", rows[i].labels, hogged);
    }
}

static void carriers(struct strbuf *b, const struct row *rows, size_t n)
{
    static const char *const states[] = {"idle", "busy", "pinned", "native_blocked"}; /* enum carrier_state */
    family(b, "vtpin_carriers", "gauge",
           "Carrier threads by what they do now: idle, busy (a virtual thread mounted, not pinned, a hog included), "
           "pinned, native_blocked.");
    for (size_t i = 0; i < n; i++) {
        unsigned count[4] = {0};
        for (size_t c = 0; c < rows[i].nviews; c++) {
            enum carrier_state st = rows[i].views[c].state;
            if (st == CARRIER_HOG) /* a hog runs: busy, and vtpin_carriers_hogged says which */
                st = CARRIER_RUNNING;
            if ((unsigned)st < 4)
                count[st]++;
        }
        for (unsigned s = 0; s < 4; s++)
            strbuf_printf(b, "vtpin_carriers{%s,state=\"%s\"} %u\n", rows[i].labels, states[s], count[s]);
    }
    /* per JVM: the mean over its carriers whose state over the window is known */
    static const struct {
        const char *name, *help;
    } ratios[] = {
        {"vtpin_carrier_busy_ratio", "Share of carrier time with a virtual thread mounted over the collector's "
                                     "window (--window), mean over the carriers."},
        {"vtpin_carrier_held_ratio", "Share of carrier time held by a pinned or native-blocked virtual thread over "
                                     "the window (part of busy), mean over the carriers."},
        {"vtpin_carrier_idle_ratio", "Share of carrier time with nothing mounted over the window, mean over the "
                                     "carriers."},
    };
    for (unsigned k = 0; k < 3; k++) {
        family(b, ratios[k].name, "gauge", ratios[k].help);
        for (size_t i = 0; i < n; i++) {
            double sum = 0;
            unsigned known = 0;
            for (size_t c = 0; c < rows[i].nviews; c++) {
                const struct carrier_view *v = &rows[i].views[c];
                if (v->busy_pct + v->idle_pct <= 0)
                    continue;
                sum += k == 0 ? v->busy_pct : k == 1 ? v->pinned_pct : v->idle_pct;
                known++;
            }
            if (known)
                strbuf_printf(b, "%s{%s} %.6f\n", ratios[k].name, rows[i].labels, sum / known / 100.0);
        }
    }
    family(b, "vtpin_carrier_seconds_total", "counter",
           "Carrier time since each carrier was first seen, summed over the carriers: busy, held (pinned or "
           "native-blocked, part of busy), idle.");
    for (size_t i = 0; i < n; i++) {
        uint64_t busy = 0, held = 0, idle = 0;
        for (size_t c = 0; c < rows[i].nviews; c++) {
            busy += (uint64_t)rows[i].views[c].busy_ns;
            held += (uint64_t)rows[i].views[c].pinned_ns;
            idle += (uint64_t)rows[i].views[c].idle_ns;
        }
        strbuf_printf(b, "vtpin_carrier_seconds_total{%s,state=\"busy\"} ", rows[i].labels);
        put_seconds(b, busy);
        strbuf_printf(b, "vtpin_carrier_seconds_total{%s,state=\"held\"} ", rows[i].labels);
        put_seconds(b, held);
        strbuf_printf(b, "vtpin_carrier_seconds_total{%s,state=\"idle\"} ", rows[i].labels);
        put_seconds(b, idle);
    }
}

static void alerts(struct strbuf *b, const struct row *rows, size_t n)
{
    family(b, "vtpin_starvation_alert", "gauge",
           "1 while the carrier starvation alert of the JVM is raised (--alert-k carriers pinned or hogged over "
           "--alert-after).");
    for (size_t i = 0; i < n; i++)
        strbuf_printf(b, "vtpin_starvation_alert{%s} %d\n", rows[i].labels, rows[i].j->alert_active ? 1 : 0);
    family(b, "vtpin_deadlocks_total", "counter",
           "Deadlocks the JVM's agent found live: every carrier pinned behind a lock whose owner has no carrier "
           "(docs/deadlocks.md).");
    for (size_t i = 0; i < n; i++)
        strbuf_printf(b, "vtpin_deadlocks_total{%s} %" PRIu64 "\n", rows[i].labels, rows[i].j->deadlock.count);
    family(b, "vtpin_carriers_held", "gauge",
           "Carriers pinned, native-blocked or hogged for longer than --alert-after, at the last alert check.");
    for (size_t i = 0; i < n; i++)
        strbuf_printf(b, "vtpin_carriers_held{%s} %u\n", rows[i].labels, rows[i].j->live ? rows[i].j->alert.held : 0);
}

static void dropped(struct strbuf *b, const struct row *rows, size_t n)
{
    family(b, "vtpin_events_dropped_total", "counter",
           "What was lost, by kind: events, stacks, transitions (agent buffers full), collector (while the "
           "collector was away or slow), definitions, carriers, pins (collector tables full), recording (frames "
           "the collector could not write to the JVM's recording).");
    for (size_t i = 0; i < n; i++) {
        const struct jvm *j = rows[i].j;
        const struct {
            const char *kind;
            uint64_t v;
        } kinds[] = {
            {"events", j->stats.msg.events_dropped},
            {"stacks", j->stats.msg.stacks_dropped},
            {"transitions", j->stats.msg.transitions_dropped},
            {"collector", j->stats.msg.collector_dropped},
            {"definitions", j->defs_dropped},
            {"carriers", occupancy_carriers_dropped(j->occ)},
            {"pins", session_pins_lost(j->pins)},
            {"recording", j->rec_frames_lost},
        };
        for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
            strbuf_printf(b, "vtpin_events_dropped_total{%s,kind=\"%s\"} %" PRIu64 "\n", rows[i].labels, kinds[k].kind,
                          kinds[k].v);
    }
}

static void recordings(struct strbuf *b, const struct row *rows, size_t n)
{
    family(b, "vtpin_recording_stopped", "gauge",
           "1 while the JVM's session recording is stopped by a write error (a full disk); the collector tries "
           "again every second.");
    for (size_t i = 0; i < n; i++)
        strbuf_printf(b, "vtpin_recording_stopped{%s} %d\n", rows[i].labels, rows[i].j->rec.error ? 1 : 0);
    family(b, "vtpin_recording_errors_total", "counter",
           "Times a write error stopped one of the JVM's session recordings.");
    for (size_t i = 0; i < n; i++)
        strbuf_printf(b, "vtpin_recording_errors_total{%s} %" PRIu64 "\n", rows[i].labels, rows[i].j->rec_stops);
}

static void jvm_info(struct strbuf *b, const struct row *rows, size_t n)
{
    family(b, "vtpin_jvm_connected", "gauge",
           "1 while the JVM's agent is connected; a disconnected JVM stays listed (0) for a minute.");
    for (size_t i = 0; i < n; i++)
        strbuf_printf(b, "vtpin_jvm_connected{%s} %d\n", rows[i].labels, rows[i].j->live ? 1 : 0);
    family(b, "vtpin_jvm_info", "gauge",
           "The JVM's Java version, vendor and occupancy source, its pid in its own pid namespace (ns_pid; "
           "jvm is its pid on this host), and where its pins come from (source: agent, or kernel for a JVM with "
           "no agent, --jvms=all); always 1.");
    for (size_t i = 0; i < n; i++) {
        const struct session_hello *h = &rows[i].j->hello;
        char java[128], vendor[256];
        strbuf_printf(b,
                      "vtpin_jvm_info{%s,java_version=\"%s\",vendor=\"%s\",occupancy=\"%s\",ns_pid=\"%" PRId64
                      "\",source=\"%s\"} 1\n",
                      rows[i].labels, metrics_escape_label(h->java_version, java, sizeof(java)),
                      metrics_escape_label(h->vm_vendor, vendor, sizeof(vendor)), wire_occupancy_name(h->occupancy),
                      rows[i].j->ident.ns_pid, h->mode == VTPIN__V1__LOAD_MODE__KERNEL ? "kernel" : "agent");
    }
}

int metrics_render(struct jvms *r, const struct metrics_info *info, int64_t now, char **out, size_t *len)
{
    size_t total = jvms_count(r), n = 0;
    struct row *rows = calloc(total ? total : 1, sizeof(*rows));
    struct strbuf b = {0};
    int rc = -ENOMEM;
    if (!rows)
        return -ENOMEM;
    for (struct jvm *j = jvms_first(r); j && n < total; j = j->next) {
        if (shadowed(j))
            continue;
        struct row *w = &rows[n++];
        char app[LABEL_CAP];
        w->j = j;
        snprintf(w->labels, sizeof(w->labels), "jvm=\"%" PRId64 "\",app=\"%s\"", j->pid,
                 metrics_escape_label(j->hello.app, app, sizeof(app)));
        occupancy_advance(j->occ, jvm_clock(j, now));
        w->nviews = occupancy_view(j->occ, NULL, 0);
        if (w->nviews) {
            w->views = calloc(w->nviews, sizeof(*w->views));
            if (!w->views)
                goto cleanup;
            occupancy_view(j->occ, w->views, w->nviews);
        }
    }
    family(&b, "vtpin_collector_jvms", "gauge", "JVMs the collector shows, connected or lingering.");
    strbuf_printf(&b, "vtpin_collector_jvms %zu\n", n);
    family(&b, "vtpin_collector_connections", "gauge", "Connections open now (agents and queries).");
    strbuf_printf(&b, "vtpin_collector_connections %u\n", info->clients);
    family(&b, "vtpin_collector_pprof_profiles_built_total", "counter",
           "Profiles of /debug/pprof/pinned built (one a span at a time, in steps between the loop's turns).");
    strbuf_printf(&b, "vtpin_collector_pprof_profiles_built_total %" PRIu64 "\n", info->pprof.built);
    family(&b, "vtpin_collector_pprof_answers_total", "counter",
           "Answers of /debug/pprof/pinned: built for it (or while it waited), a profile built in the last second, "
           "or 503 (too many spans asked for at once, or not built within 4 s).");
    strbuf_printf(&b,
                  "vtpin_collector_pprof_answers_total{from=\"built\"} %" PRIu64 "\n"
                  "vtpin_collector_pprof_answers_total{from=\"cache\"} %" PRIu64 "\n"
                  "vtpin_collector_pprof_answers_total{from=\"busy\"} %" PRIu64 "\n",
                  info->pprof.built_answers, info->pprof.cached_answers, info->pprof.busy_answers);
    family(&b, "vtpin_collector_uptime_seconds", "gauge", "Time since the collector started.");
    strbuf_printf(&b, "vtpin_collector_uptime_seconds ");
    put_seconds(&b, now > info->started_ns ? (uint64_t)(now - info->started_ns) : 0);
    jvm_info(&b, rows, n);
    pins(&b, rows, n);
    carriers(&b, rows, n);
    hogs(&b, rows, n);
    alerts(&b, rows, n);
    dropped(&b, rows, n);
    recordings(&b, rows, n);
    if (b.oom)
        goto cleanup;
    *out = b.s;
    *len = b.len;
    b.s = NULL;
    rc = 0;
cleanup:
    for (size_t i = 0; i < n; i++)
        free(rows[i].views);
    free(rows);
    free(b.s);
    return rc;
}
