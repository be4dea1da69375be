/* The text report: what a person reads first. Layout in docs/report-json.md. */
#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "common/blocker_text.h"
#include "common/frame_text.h"
#include "common/frames_kind.h"
#include "common/units.h"
#include "common/utf8.h"
#include "kernel_join.h"
#include "sites.h"
#include "wire.h"

/* Frames kept below the culprit (or the last frame holding a monitor) when a
 * stack is elided, and the fewest frames worth eliding. */
#define STACK_CONTEXT 4
#define STACK_ELIDE_MIN 6

_Static_assert((int)BLOCKER_KIND_CLASS_INIT == (int)VTPIN__V1__BLOCKER_KIND__BLOCKER_CLASS_INIT &&
                   (int)BLOCKER_KIND_LOCK == (int)VTPIN__V1__BLOCKER_KIND__BLOCKER_LOCK,
               "common's blocker kinds");

/* h as blocker_text's parts (no pin, frame or chain). */
static struct blocker_parts hop_parts(const struct recording_hop *h)
{
    return (struct blocker_parts){.what = h->what,
                                  .object_class = h->object_class,
                                  .has_thread = h->has_thread,
                                  .thread_name = h->thread_name,
                                  .is_virtual = h->is_virtual,
                                  .carrier = h->carrier_name,
                                  .state = h->state};
}

char *report_blocker_line(const struct recording_session *s, const struct recording_pin *p, char *out, size_t cap)
{
    const struct recording_blocker *b = recording_pin_blocker(p);
    const struct recording_frame *at = NULL;
    if (!b) {
        snprintf(out, cap, "%s", "");
        return out;
    }
    for (uint32_t i = 0; b->head.has_thread && b->stack && i < b->stack->count && !at; i++)
        if (b->stack->frames[i].method && !frames_is_jdk_class(b->stack->frames[i].method->class_name))
            at = &b->stack->frames[i];
    if (!at && b->head.has_thread && b->stack && b->stack->count)
        at = &b->stack->frames[0];
    char frame[1024] = "";
    if (at)
        report_format_frame(at, frame, sizeof(frame));
    struct blocker_parts parts = hop_parts(&b->head);
    parts.pin = b->pin;
    parts.at = at ? frame : NULL;
    struct blocker_parts hops[RECORDING_CHAIN_MAX];
    for (uint32_t i = 0; i < b->n_chain && i < RECORDING_CHAIN_MAX; i++)
        hops[parts.n_chain++] = hop_parts(&s->blocker_hops[b->chain_at + i]);
    parts.chain = hops;
    return blocker_text(&parts, out, cap);
}

char *report_format_frame(const struct recording_frame *f, char *out, size_t cap)
{
    const struct recording_method *m = f->method;
    if (!m || !m->defined)
        return frame_text(NULL, out, cap);
    struct frame_parts parts = {.module = m->module,
                                .cls = m->class_name,
                                .name = m->name,
                                .source = m->source_file,
                                .line = f->line,
                                .is_native = m->is_native};
    return frame_text(&parts, out, cap);
}

char *report_frame_markers(const struct recording_frame *f, int is_culprit, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    if (f->monitors > 0) {
        int n = snprintf(out, cap, " <== monitors:%" PRIu32, f->monitors);
        len = n > 0 && (size_t)n < cap ? (size_t)n : strlen(out);
    }
    if (is_culprit && f->method && f->method->is_native) {
        const char *lib = f->method->library;
        const char *slash = lib ? strrchr(lib, '/') : NULL;
        snprintf(out + len, cap - len, " <== native (%s)", lib ? (slash ? slash + 1 : lib) : "library unknown");
    }
    return out;
}

char *report_pin_frame_markers(const struct recording_pin *p, uint32_t i, char *out, size_t cap)
{
    const struct recording_frame *f = &p->stack->frames[i];
    int culprit = p->has_culprit && i == p->culprit;
    const struct recording_downcall *dc = culprit ? recording_pin_downcall(p) : NULL;
    report_frame_markers(f, culprit && !dc, out, cap);
    size_t len = strlen(out);
    if (dc && len < cap) {
        frames_call_marker(dc->api, dc->symbol, dc->library, out + len, cap - len);
        len = strlen(out);
    }
    if (f->method && f->method->kind == FRAME_UPCALL_STUB && len < cap) {
        snprintf(out + len, cap - len, " <== upcall");
        len = strlen(out);
    }
    if (p->has_blocking && i == p->blocking && len < cap)
        snprintf(out + len, cap - len, " <== blocking operation");
    return out;
}

static void put(FILE *out, const char *s)
{
    utf8_write_printable(out, s);
}

static void put_frame_line(FILE *out, const char *indent, const struct recording_pin *p, uint32_t i)
{
    char frame[2048], markers[512];
    fputs(indent, out);
    put(out, report_format_frame(&p->stack->frames[i], frame, sizeof(frame)));
    put(out, report_pin_frame_markers(p, i, markers, sizeof(markers)));
    fputc('\n', out);
}

static void put_wall_clock(FILE *out, int64_t unix_ns)
{
    time_t t = (time_t)(unix_ns / 1000000000LL);
    struct tm tm;
    char day[64], zone[16];
    if (unix_ns < 0 || !localtime_r(&t, &tm) || !strftime(day, sizeof(day), "%Y-%m-%d %H:%M:%S", &tm) ||
        !strftime(zone, sizeof(zone), "%z", &tm)) {
        fputs("?", out);
        return;
    }
    fprintf(out, "%s.%03d %s", day, (int)(unix_ns / 1000000 % 1000), zone);
}

static void put_header(FILE *out, const struct recording *r, const struct recording_session *s,
                       const struct report_options *o)
{
    char d[64];
    fputs("vtpin report: ", out);
    put(out, r->path);
    fputc('\n', out);

    fputs("  jvm        ", out);
    if (s->has_hello) {
        fprintf(out, "pid %" PRId64, s->hello.pid);
        if (s->hello.host) {
            fputs(" on ", out);
            put(out, s->hello.host);
        }
        fputs(", java ", out);
        put(out, s->hello.java_version ? s->hello.java_version : "?");
        if (s->hello.vm_name || s->hello.vm_version) {
            fputs(", ", out);
            put(out, s->hello.vm_name ? s->hello.vm_name : "?");
            fputc(' ', out);
            put(out, s->hello.vm_version ? s->hello.vm_version : "");
        }
        if (s->hello.vm_vendor) {
            fputs(" (", out);
            put(out, s->hello.vm_vendor);
            fputc(')', out);
        }
        fputc('\n', out);
        fputs("  agent      ", out);
        fputs("vtpin ", out);
        put(out, s->hello.agent_version ? s->hello.agent_version : "?");
        const char *mode = wire_mode_name(s->hello.mode);
        fprintf(out, ", %s",
                !mode                                           ? "load mode ?"
                : s->hello.mode == VTPIN__V1__LOAD_MODE__ATTACH ? "attached"
                : s->hello.mode == VTPIN__V1__LOAD_MODE__KERNEL
                    ? "none loaded: the collector's kernel view (zero-touch)"
                    : "loaded at startup");
        if (s->hello.has_threshold && s->hello.threshold_ns == 0)
            fputs(", threshold 0 (every pin)", out);
        else if (s->hello.has_threshold)
            fprintf(out, ", threshold %s", units_format_duration((int64_t)s->hello.threshold_ns, d, sizeof(d)));
        if (s->hello.options) {
            fputs(", options \"", out);
            put(out, s->hello.options);
            fputc('"', out);
        }
        fputc('\n', out);
        if (s->hello.n_capabilities_missing > 0) {
            fputs("  missing    ", out);
            for (size_t i = 0; i < s->hello.n_capabilities_missing; i++) {
                fputs(i ? ", " : "", out);
                put(out, s->hello.capabilities_missing[i]);
            }
            fputs(" (see notices)\n", out);
        }
    } else {
        fputs("unknown (the recording has no Hello for this session)\n", out);
    }

    fputs("  recording  ", out);
    int64_t start_unix;
    int have_start = s->hello.has_clock && recording_unix_ns(s, s->hello.start_mono_ns, &start_unix) == 0;
    if (have_start) {
        put_wall_clock(out, start_unix);
        fputs(", ", out);
    }
    if (s->has_time)
        fprintf(out, "%s", units_format_duration(recording_sat_sub(s->last_ns, s->first_ns), d, sizeof(d)));
    else
        fputs("no timestamps", out);
    const struct session_stats *st = &s->stats;
    if (recording_write_failed(s)) {
        fputs(", ends early: the agent could not write it", out);
        if (st->msg.has_write_failures)
            fprintf(out, " (%" PRIu64 " write%s failed, %" PRIu64 " event%s unwritten, as of the last counters)",
                    st->msg.write_failures, st->msg.write_failures == 1 ? "" : "s", st->msg.events_unwritten,
                    st->msg.events_unwritten == 1 ? "" : "s");
    } else if (recording_write_failed_probably(s)) {
        fputs(", ends early: writes probably failed on a full disk (the agent warned at the start that the disk "
              "was nearly full; no end marker)",
              out);
    } else if (s->damaged) {
        fprintf(out, ", damaged at byte offset %" PRIu64 ": the events before it are reported, the rest is skipped",
                s->damaged_at);
    } else if (r->truncated && r->zero_tail)
        fprintf(out, ", cut short: zeros from byte %" PRIu64 " on (the agent died before its data reached the disk)",
                r->truncated_at);
    else if (r->truncated)
        fprintf(out,
                ", cut short mid-frame at byte %" PRIu64 " (the agent was killed, the disk filled up, or it is "
                "still writing)",
                r->truncated_at);
    else if (recording_rotated(s))
        fputs(", rotated (record_max=, --record-max): the JVM's recording goes on in the newer file", out);
    else if (!s->has_goodbye)
        fputs(", no end marker (the JVM was killed, the disk filled up, or it is still running)", out);
    else
        fputs(", complete", out);
    if (s->parts > 1)
        fprintf(out, "; %u files of a rotated recording, read as one", s->parts);
    fputc('\n', out);
    if (r->n_sessions > 1)
        fprintf(out, "  session    %zu of %zu in this file (--session N for another)\n", o->session + 1, r->n_sessions);
}

/* The frames worth showing: from the top through the culprit and the last
 * frame holding a monitor, plus a little context; the rest is elided. */
static uint32_t shown_frames(const struct recording_pin *p, const struct report_options *o)
{
    const struct recording_stack *st = p->stack;
    if (o->full_stacks)
        return st->count;
    uint32_t last = p->has_culprit ? p->culprit : 0;
    for (uint32_t i = 0; i < st->count; i++)
        if (st->frames[i].monitors > 0 && i > last)
            last = i;
    uint64_t keep = (uint64_t)last + 1 + STACK_CONTEXT;
    if (keep + STACK_ELIDE_MIN > st->count)
        return st->count;
    return (uint32_t)keep;
}

/* "    kernel: sleeping in nanosleep, 1.2 s off CPU (3 intervals), 0.1 ms runnable" and the kernel stack
 * (kernel_join.h). */
static void put_kernel(FILE *out, const struct recording_session *s, const struct recording_pin *p)
{
    const struct recording_pin_kernel *k = kernel_joined_pin(s, p);
    char a[64], b[64];
    if (!k)
        return;
    const struct recording_kinterval *main = &s->kintervals[k->main];
    fprintf(out, "    kernel: %s", wire_kernel_state_name(main->state));
    if (main->syscall_name) {
        fputs(" in ", out);
        put(out, main->syscall_name);
    } else if (main->has_syscall)
        fprintf(out, " in syscall %" PRId32, main->syscall);
    fprintf(out, ", %s off CPU in %u interval%s, %s runnable\n", units_format_duration(k->off_cpu_ns, a, sizeof(a)),
            k->intervals, k->intervals == 1 ? "" : "s", units_format_duration(k->runqueue_ns, b, sizeof(b)));
    for (size_t i = 0; i < main->n_stack && i < 8; i++) {
        fputs("      ", out);
        put(out, main->stack[i]);
        fputc('\n', out);
    }
    if (main->n_stack > 8)
        fprintf(out, "      ... %d more kernel frames\n", main->n_stack - 8);
}

/* The collector's kernel times of each carrier, and its held time (kernel_join.h); nothing without them. */
static void put_kernel_times(FILE *out, const struct recording_session *s)
{
    if (!s->ktimes)
        return;
    fputs("kernel view (collector): carrier times since tracked\n", out);
    for (size_t i = 0; i < s->n_ktimes; i++) {
        const struct recording_ktimes *k = &s->ktimes[i];
        const struct recording_held *h = s->held ? &s->held[i] : NULL;
        char a[64], b[64], c[64];
        const char *name = recording_carrier_name(s, k->carrier_tid);
        fprintf(out, "  %s (tid %" PRId32 "): on CPU %s, off CPU %s, run queue %s", name ? name : "carrier",
                k->carrier_tid, units_format_duration((int64_t)k->on_cpu_ns, a, sizeof(a)),
                units_format_duration((int64_t)k->off_cpu_ns, b, sizeof(b)),
                units_format_duration((int64_t)k->runqueue_ns, c, sizeof(c)));
        if (h && h->known && h->held_ns > 0)
            fprintf(out, "; held %s (asleep, a virtual thread mounted), %.1f %% in pins",
                    units_format_duration(h->held_ns, a, sizeof(a)),
                    100.0 * (double)h->in_pins_ns / (double)h->held_ns);
        fputc('\n', out);
    }
}

/* The heading of the JDK's own sites: pins whose every frame is the JDK's (common/frames_kind.h). */
static void put_jdk_heading(FILE *out, const struct sites *sites)
{
    uint64_t pins = 0;
    int64_t ns = 0;
    char a[64];
    for (size_t i = sites->app_count; i < sites->count; i++) {
        pins += sites->items[i].count;
        ns = recording_sat_add(ns, sites->items[i].total_ns);
    }
    fprintf(out,
            "the JDK's own pins (every frame the JDK's: class linking, its pollers, its internal waits; no change "
            "to the application removes them): %" PRIu64 " pin%s, %s\n\n",
            pins, pins == 1 ? "" : "s", units_format_duration(ns, a, sizeof(a)));
}

static void put_site(FILE *out, const struct recording_session *s, size_t rank, const struct site *site,
                     const struct report_options *o)
{
    char frame[2048], markers[512], a[64], b[64];
    fprintf(out, "#%-3zu", rank);
    const struct recording_pin *p = site->example;
    if (site->culprit) {
        put(out, report_format_frame(site->culprit, frame, sizeof(frame)));
        if (p->stack && p->has_culprit)
            put(out, report_pin_frame_markers(p, p->culprit, markers, sizeof(markers)));
        else
            put(out, report_frame_markers(site->culprit, 1, markers, sizeof(markers)));
    } else {
        fputs("<stack not available>", out);
    }
    fputc('\n', out);
    fprintf(out, "    %s: %" PRIu64 " pin%s, total %s, longest %s", wire_reason_name(site->reason), site->count,
            site->count == 1 ? "" : "s", units_format_duration(site->total_ns, a, sizeof(a)),
            units_format_duration(site->max_ns, b, sizeof(b)));
    if (site->ongoing)
        fprintf(out, ", %" PRIu64 " still pinned at the end (counted up to it)", site->ongoing);
    else
        fputs(", 0 ongoing at the end", out);
    fputc('\n', out);

    if (p->jdk_reason) {
        fputs("    the JDK says: ", out);
        put(out, p->jdk_reason);
        fputc('\n', out);
    }
    if (recording_pin_blocker(p)) {
        char line[1400];
        fputs("    ", out);
        put(out, report_blocker_line(s, p, line, sizeof(line)));
        fputc('\n', out);
    }
    if (p->stack && p->has_blocking) {
        fputs("    blocking operation: ", out);
        put(out, report_format_frame(&p->stack->frames[p->blocking], frame, sizeof(frame)));
        fputc('\n', out);
    }
    if (p->blocked_in) {
        fprintf(out, "    blocked %s ",
                p->reason == VTPIN__V1__PIN_REASON__VM_BLOCK ? "in the JVM at" : "in the kernel in");
        put(out, p->blocked_in);
        fputc('\n', out);
    }
    put_kernel(out, s, p);
    if (!p->stack)
        return;
    fprintf(out, "    stack of pin #%" PRIu64, p->id);
    if (site->distinct_stacks > 1)
        fprintf(out, " (1 of %zu distinct stacks at this site)", site->distinct_stacks);
    fputs(":\n", out);
    uint32_t shown = shown_frames(p, o);
    for (uint32_t i = 0; i < shown; i++)
        put_frame_line(out, "      ", p, i);
    if (shown < p->stack->count)
        fprintf(out, "      ... %" PRIu32 " more frames (--full-stacks shows them)\n", p->stack->count - shown);
    if (p->stack->truncated)
        fputs("      ... (the stack was cut at the agent's depth limit)\n", out);
}

/* "virtual thread #31 "name" on ForkJoinPool-1-worker-2 (tid 4001)" */
static void put_hog_threads(FILE *out, const struct recording_hog *h)
{
    fputs("virtual thread ", out);
    if (h->has_vthread_id)
        fprintf(out, "#%" PRId64, h->vthread_id);
    else
        fputs("#?", out);
    if (h->vthread_name && h->vthread_name[0]) {
        fputs(" \"", out);
        put(out, h->vthread_name);
        fputc('"', out);
    }
    fputs(" on ", out);
    put(out, h->carrier_name ? h->carrier_name : "carrier ?");
    if (h->has_carrier_tid)
        fprintf(out, " (tid %" PRId32 ")", h->carrier_tid);
}

/* Carrier hogs, by culprit frame; only when the recording has some. */
static int put_hogs(FILE *out, const struct recording_session *s, const struct report_options *o)
{
    struct hog_sites hogs;
    char frame[2048], markers[512], a[64], b[64];
    int rc = hog_sites_build(s, &hogs);
    if (rc || hogs.count == 0)
        return rc;
    fprintf(out, "\ncarrier hogs: %" PRIu64 ", longest %s", hogs.hogs,
            units_format_duration(hogs.max_ns, a, sizeof(a)));
    if (hogs.ongoing)
        fprintf(out, ", %" PRIu64 " still running at the end", hogs.ongoing);
    fputs(" (virtual threads that kept their carrier on CPU without unmounting, nothing pinned", out);
    if (s->hello.sample_interval_ns)
        fprintf(out, "; timed by samples every %s",
                units_format_duration((int64_t)s->hello.sample_interval_ns, b, sizeof(b)));
    fputs(")\n", out);
    size_t shown = o->top && o->top < hogs.count ? o->top : hogs.count;
    for (size_t i = 0; i < shown; i++) {
        const struct hog_site *g = &hogs.items[i];
        fprintf(out, "\n#%-3zu", i + 1);
        if (g->culprit) {
            put(out, report_format_frame(g->culprit, frame, sizeof(frame)));
            put(out, report_frame_markers(g->culprit, 0, markers, sizeof(markers)));
        } else {
            fputs("<stack not available>", out);
        }
        fprintf(out, "\n    %" PRIu64 " hog%s, total %s, longest %s", g->count, g->count == 1 ? "" : "s",
                units_format_duration(g->total_ns, a, sizeof(a)), units_format_duration(g->max_ns, b, sizeof(b)));
        if (g->ongoing)
            fprintf(out, ", %" PRIu64 " still running at the end (counted up to it)", g->ongoing);
        fputs("\n    longest: ", out);
        put_hog_threads(out, g->example);
        fputc('\n', out);
        /* sampled occupancy counts mounts only near hog=: earlier, a thread given its carrier straight
         * back looks the same as one that held it */
        if (s->hello.occupancy != VTPIN__V1__OCCUPANCY_SOURCE__OCCUPANCY_EXACT &&
            recording_hog_seen_unmounting(g->example))
            fputs("    seen unmounting as it was reported (VirtualThread.yieldContinuation): without counted mounts\n"
                  "    for all of its run it may have yielded or parked and been given its carrier straight back\n"
                  "    at times, rather than have held it throughout (occupancy=exact counts every mount;\n"
                  "    docs/agent.md)\n",
                  out);
    }
    if (shown < hogs.count)
        fprintf(out, "\n... %zu more hog culprit%s (--top 0 shows all)\n", hogs.count - shown,
                hogs.count - shown == 1 ? "" : "s");
    hog_sites_fini(&hogs);
    return 0;
}

static void put_counter(FILE *out, const char *name, int has, uint64_t v)
{
    if (has)
        fprintf(out, "%s %" PRIu64, name, v);
    else
        fprintf(out, "%s ?", name);
}

/* What the agent cost, from itself: "the agent's own cost: writer thread CPU 12.0 ms (1.9 % of
 * 646.6 ms recorded); JVMTI calls that stop a thread: GetStackTrace 12, ...". */
static void put_self_cost(FILE *out, const struct recording_session *s)
{
    const struct session_stats *st = &s->stats;
    if (!st->msg.has_agent_cpu_ns && !st->n_jvmti_calls)
        return;
    char cpu[32], span[32];
    fputs("  the agent's own cost:", out);
    if (st->msg.has_agent_cpu_ns) {
        int64_t recorded = st->msg.time_ns - s->hello.start_mono_ns;
        fprintf(out, " writer thread CPU %s", units_format_duration((int64_t)st->msg.agent_cpu_ns, cpu, sizeof(cpu)));
        if (s->hello.has_clock && recorded > 0)
            fprintf(out, " (%.1f %% of %s recorded)", 100.0 * (double)st->msg.agent_cpu_ns / (double)recorded,
                    units_format_duration(recorded, span, sizeof(span)));
        fputc(';', out);
    }
    fputs(" JVMTI calls that stop a thread:", out);
    int any = 0;
    for (size_t i = 0; i < st->n_jvmti_calls; i++)
        if (st->jvmti_calls[i].calls) {
            fprintf(out, "%s %s %" PRIu64, any ? "," : "", st->jvmti_calls[i].function, st->jvmti_calls[i].calls);
            any = 1;
        }
    fputs(any ? "\n" : " none\n", out);
}

static void put_counters(FILE *out, const struct recording_session *s)
{
    const struct session_stats *st = &s->stats;
    if (!s->stats.has) {
        fputs("counters: none recorded (the agent stopped before writing any)\n", out);
        return;
    }
    fputs(s->has_goodbye ? "counters (at the end)\n" : "counters (the last ones written)\n", out);
    fputs("  ", out);
    put_counter(out, "pins seen", st->msg.has_pins, st->msg.pins);
    put_counter(out, ", reported", st->msg.has_pins_reported, st->msg.pins_reported);
    put_counter(out, ", below threshold", st->msg.has_pins_below_threshold, st->msg.pins_below_threshold);
    fputs("\n  ", out);
    put_counter(out, "events dropped", st->msg.has_events_dropped, st->msg.events_dropped);
    put_counter(out, ", stacks dropped", st->msg.has_stacks_dropped, st->msg.stacks_dropped);
    if (st->msg.has_pins_without_stack && st->msg.pins_without_stack)
        put_counter(out, ", pins without stack", 1, st->msg.pins_without_stack);
    if (st->msg.has_transitions_dropped && st->msg.transitions_dropped)
        put_counter(out, ", mount records dropped (exact occupancy: ring= full)", 1, st->msg.transitions_dropped);
    fputs("\n  ", out);
    put_counter(out, "carriers started", st->msg.has_carriers_started, st->msg.carriers_started);
    if (s->hello.parallelism)
        fprintf(out, " (parallelism %" PRIu32 ")", s->hello.parallelism);
    put_counter(out, ", compensations", st->msg.has_compensations, st->msg.compensations);
    fputc('\n', out);
    if ((st->msg.has_events_dropped && st->msg.events_dropped) ||
        (st->msg.has_stacks_dropped && st->msg.stacks_dropped))
        fputs("  (dropped events or stacks: some pins are missing or have no stack; see the agent's queue= and "
              "stacks= options)\n",
              out);
    /* Older agents do not write these: shown only when the agent counted them. */
    if (st->msg.has_collector_dropped || st->msg.has_reconnects) {
        fputs("  ", out);
        put_counter(out, "collector dropped", st->msg.has_collector_dropped, st->msg.collector_dropped);
        put_counter(out, ", reconnects", st->msg.has_reconnects, st->msg.reconnects);
        fputc('\n', out);
        if (st->msg.collector_dropped)
            fputs("  (events lost while the collector was away or slow: its view misses them, this file has "
                  "them)\n",
                  out);
    }
    if (st->msg.has_write_failures || st->msg.has_events_unwritten) {
        fputs("  ", out);
        put_counter(out, "writes failed", st->msg.has_write_failures, st->msg.write_failures);
        put_counter(out, ", events unwritten", st->msg.has_events_unwritten, st->msg.events_unwritten);
        fputc('\n', out);
    }
    if (st->msg.has_blockers_skipped && st->msg.blockers_skipped) {
        fputs("  ", out);
        put_counter(out, "blockers not looked up", 1, st->msg.blockers_skipped);
        fprintf(out, " (at most %d looks a second: each stops the JVM at a safepoint; or the wait was over by then)\n",
                20);
    }
    put_self_cost(out, s);
    if (st->msg.has_sample_gaps && st->msg.sample_gaps) {
        char d[32];
        fputs("  ", out);
        put_counter(out, "sampler late", 1, st->msg.sample_gaps);
        fprintf(out,
                " time(s), a carrier at most %s without a look: a park after attach, or a native or VM "
                "block, shorter than that may be missing, and a carrier hog too\n",
                units_format_duration((int64_t)st->msg.sample_gap_max_ns, d, sizeof(d)));
    }
    if (st->msg.has_hogs) { /* agents before hogs do not write it */
        fputs("  ", out);
        put_counter(out, "carrier hogs reported", 1, st->msg.hogs);
        fputc('\n', out);
    }
    if (st->msg.has_methods_dropped) {
        fputs("  ", out);
        put_counter(out, "methods dropped", st->msg.has_methods_dropped, st->msg.methods_dropped);
        fputc('\n', out);
        if (st->msg.methods_dropped)
            fputs("  (stack frames named <unknown>: the method table was full; see the agent's methods= "
                  "option)\n",
                  out);
    }
    if (st->msg.has_pins_without_stack && st->msg.pins_without_stack)
        fputs("  (pins without stack: the agent could not take their stacks; the pins are reported, their sites "
              "have no culprit)\n",
              out);
}

static void put_notices(FILE *out, const struct recording_session *s)
{
    if (s->n_notices == 0) {
        fputs("notices: none\n", out);
        return;
    }
    fputs("notices\n", out);
    for (size_t i = 0; i < s->n_notices; i++) {
        const struct recording_notice *n = &s->notices[i];
        fprintf(out, "  %-8s ", wire_severity_name(n->severity));
        put(out, n->code);
        fputs(": ", out);
        put(out, n->text);
        fputc('\n', out);
    }
}

/* First, before the pins: a deadlock is why the JVM stopped, and its pins never end. */
static void put_deadlocks(FILE *out, const struct recording_session *s)
{
    for (size_t i = 0; i < s->n_notices; i++) {
        const char *kind = recording_deadlock_kind(&s->notices[i]);
        if (!kind)
            continue;
        fputs("DEADLOCK (", out);
        put(out, kind);
        fputs(", found live; docs/deadlocks.md): ", out);
        put(out, s->notices[i].text);
        fputs("\n\n", out);
    }
}

static void put_problems(FILE *out, const struct recording_session *s)
{
    if (!s->unknown_refs && !s->unmatched_ends && !s->duplicates && !s->unmatched_hog_ends && !s->duplicate_hogs)
        return;
    fprintf(out,
            "problems in the recording: %" PRIu64 " reference(s) to undefined ids (shown as %s), %" PRIu64
            " pin end(s) without a start, %" PRIu64 " duplicate pin event(s)",
            s->unknown_refs, RECORDING_UNKNOWN, s->unmatched_ends, s->duplicates);
    if (s->unmatched_hog_ends || s->duplicate_hogs)
        fprintf(out, ", %" PRIu64 " hog end(s) without a start, %" PRIu64 " duplicate hog event(s)",
                s->unmatched_hog_ends, s->duplicate_hogs);
    fputc('\n', out);
}

int report_text(FILE *out, const struct recording *r, const struct report_options *o)
{
    const struct recording_session *s = r->sessions[o->session];
    struct sites sites;
    char a[64];
    int rc = sites_build(s, &sites);
    if (rc)
        return rc;
    put_header(out, r, s, o);
    fputc('\n', out);
    put_deadlocks(out, s);
    if (sites.count == 0) {
        fputs("no pins reported", out);
        if (s->stats.has && s->stats.msg.has_pins_below_threshold && s->stats.msg.pins_below_threshold > 0)
            fprintf(out, " (%" PRIu64 " pin%s shorter than the threshold %s were counted only)",
                    s->stats.msg.pins_below_threshold, s->stats.msg.pins_below_threshold == 1 ? "" : "s",
                    units_format_duration((int64_t)s->hello.threshold_ns, a, sizeof(a)));
        fputs("\n", out);
    } else {
        fprintf(out, "%" PRIu64 " pin%s at %zu site%s, %s pinned in total", sites.pins, sites.pins == 1 ? "" : "s",
                sites.count, sites.count == 1 ? "" : "s", units_format_duration(sites.total_ns, a, sizeof(a)));
        if (sites.ongoing)
            fprintf(out, ", %" PRIu64 " still pinned at the end", sites.ongoing);
        fputs("; sites by total pinned time:\n", out);
        if (s->pins_split)
            fprintf(out,
                    "(after attach: %" PRIu64 " sampled pin%s split into the parks the kernel view saw, "
                    "each timed by the kernel)\n",
                    s->pins_split, s->pins_split == 1 ? "" : "s");
        if (s->pins_sampled) {
            char period[32];
            fprintf(out,
                    "(after attach: %" PRIu64 " park pin%s timed by sampling every %s, start and end each to one "
                    "period%s; a collector with the kernel view times them exactly)\n",
                    s->pins_sampled, s->pins_sampled == 1 ? "" : "s",
                    units_format_duration((int64_t)s->hello.sample_interval_ns, period, sizeof(period)),
                    s->pins_bounded
                        ? ", cut where the monitor events, another carrier's samples or the kernel prove them over"
                        : "");
        }
        size_t shown = o->top && o->top < sites.count ? o->top : sites.count;
        for (size_t i = 0; i < shown; i++) {
            fputc('\n', out);
            if (i == sites.app_count) /* the JDK's own, after the application's (sites.h) */
                put_jdk_heading(out, &sites);
            put_site(out, s, i + 1, &sites.items[i], o);
        }
        if (shown < sites.count)
            fprintf(out, "\n... %zu more site%s (--top 0 shows all)\n", sites.count - shown,
                    sites.count - shown == 1 ? "" : "s");
    }
    rc = put_hogs(out, s, o);
    if (rc) {
        sites_fini(&sites);
        return rc;
    }
    fputc('\n', out);
    put_notices(out, s);
    fputc('\n', out);
    put_counters(out, s);
    put_kernel_times(out, s);
    put_problems(out, s);
    sites_fini(&sites);
    if (fflush(out) != 0 || ferror(out))
        return -EIO;
    return 0;
}
