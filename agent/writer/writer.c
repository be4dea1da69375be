/* The writer's loop and dispatch: each round it drains the callbacks' queue
 * into the active-pin table (active_pins.c), runs the carrier sampler and
 * watchdog (sampler.c, watchdog.c), reports the pins that crossed the
 * threshold, puts the counters out and flushes the outputs (outputs.c); then
 * it sleeps on a futex until the next thing is due or a callback wakes it. */
#include "writer.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "active_pins.h"
#include "api_pins.h"
#include "clock.h"
#include "deadlock.h"
#include "hogs.h"
#include "jthread.h"
#include "log.h"
#include "outputs.h"
#include "pins.h"
#include "sampler.h"
#include "session_frames.h"
#include "symbols.h"
#include "trace.h"
#include "vmstructs.h"
#include "watchdog.h"
#include "writer_thread.h"

static struct {
    struct writer_config cfg;
    JavaVM *vm;
    jvmtiEnv *jvmti;
    struct symbols *symbols;
    int64_t next_stats_ns;
} writer;

static _Atomic uint32_t wake_word;
static _Atomic int sleeping;
static _Atomic int64_t sleep_until; /* when the sleeping writer wakes by itself */
static _Atomic int stop_requested;
static _Atomic int finished;
static _Atomic int running;
/* A sync (writer_sync): tickets asked and the last one whose round is done. */
static _Atomic uint64_t sync_asked;
static _Atomic uint64_t sync_done;
static _Atomic uint32_t sync_word; /* bumped at each sync round's end: its waiters sleep on it */

static long futex(_Atomic uint32_t *word, int op, uint32_t value, const struct timespec *timeout)
{
    return syscall(SYS_futex, word, op, value, timeout, NULL, 0);
}

void writer_wake(int64_t due_ns)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&sleeping, memory_order_relaxed) &&
        due_ns < atomic_load_explicit(&sleep_until, memory_order_relaxed)) {
        atomic_fetch_add(&wake_word, 1);
        futex(&wake_word, FUTEX_WAKE_PRIVATE, 1, NULL);
    }
}

void writer_notice(int severity, const char *code, const char *text)
{
    session_add_notice(severity, code, text);
}

void writer_configure(const struct writer_config *config)
{
    writer.cfg = *config;
}

int writer_open(const struct options *o, char *err, size_t errlen)
{
    int rc = outputs_open(o, err, errlen);
    int low = rc ? 0 : outputs_record_reserve_error();
    if (low) {
        /* A write that fails later may find no room to say so in the file: say it now,
         * right after the Hello, while it still fits (vtpin report reads it). */
        char text[OPTIONS_PATH_MAX + 200];
        snprintf(text, sizeof(text),
                 "the disk holding the recording %s is nearly full (no room for the 8 KiB kept for its last "
                 "counters: %s): the recording may be cut short by a failed write",
                 outputs_record_file(), strerror(low));
        log_warn("%s", text);
        session_add_notice(VTPIN__V1__SEVERITY__WARNING, "output.record.disk_nearly_full", text);
    }
    return rc;
}

int writer_recording(void)
{
    return outputs_has_record();
}

static void drain(void)
{
    const struct pin_rec *r;
    while ((r = queue_peek(writer.cfg.queue)) != NULL) {
        switch (r->kind) {
        case REC_PIN_START:
            active_pins_start(r, NULL, NULL, NULL);
            break;
        case REC_PIN_END:
            active_pins_end(r);
            break;
        case REC_CARRIER_START:
            active_pins_carrier_started(r);
            break;
        default:
            break;
        }
        queue_release(writer.cfg.queue);
    }
}

/* A sink that starts again gets the session from the start, as far as it can be told now:
 * Hello, notices (and what it continues, when given), carriers, the pins and hogs in progress,
 * counters; its definitions are put again as events need them, so it is read alone. */
static void start_sink_over(unsigned sink, uint32_t connection, const char *continues)
{
    symbols_forget_sink(writer.symbols, sink);
    sampler_forget_sink(sink);
    session_hello(sink, connection);
    session_notices(sink);
    if (continues)
        outputs_notice(sink, VTPIN__V1__SEVERITY__INFO, "output.record.rotated", continues);
    active_pins_resend(sink);
    hogs_resend(sink);
    session_stats(sink);
}

/* A new connection: the collector gets the session from the start. */
static void on_connected(void)
{
    start_sink_over(SINK_LINK, outputs_connections() - 1, NULL);
}

/* record_max= reached: the file ends with its counters, and the new one starts as a
 * recording does. */
static void rotate_record(void)
{
    char text[OPTIONS_PATH_MAX + 160];
    snprintf(text, sizeof(text), "the recording goes on in %s (record_max=, rotated; this file becomes %s.1)",
             outputs_record_file(), outputs_record_file());
    outputs_notice(SINK_RECORD, VTPIN__V1__SEVERITY__INFO, "output.record.rotated_out", text);
    session_stats(SINK_RECORD);
    if (outputs_record_rotate() != 0)
        return;
    snprintf(text, sizeof(text),
             "this file continues the recording rotated before it (record_max=): %s.1 when this one is %s, "
             "PATH.N+1 when it is PATH.N",
             outputs_record_file(), outputs_record_file());
    start_sink_over(SINK_RECORD, 0, text);
}

/* A recording that just failed ends with its counters. */
static void counters_to_record(void)
{
    session_stats(SINK_RECORD);
}

static void wait_for_work(int64_t timeout_ns)
{
    uint32_t seen = atomic_load(&wake_word);
    atomic_store(&sleep_until, clock_mono_ns() + timeout_ns);
    atomic_store(&sleeping, 1);
    atomic_thread_fence(memory_order_seq_cst);
    if (!queue_peek(writer.cfg.queue) && !atomic_load(&stop_requested) &&
        atomic_load(&sync_asked) == atomic_load(&sync_done)) {
        /* A producer between its reserve and its commit holds back the records behind
         * it, and its commit may not wake us (an end never does): look again soon. Only
         * a copy lies between the two (pins.c fills its record first), unless the
         * producer was preempted there or had no scratch record. */
        if (queue_pending(writer.cfg.queue) && timeout_ns > 1000000)
            timeout_ns = 1000000;
        struct timespec ts = {timeout_ns / 1000000000LL, timeout_ns % 1000000000LL};
        futex(&wake_word, FUTEX_WAIT_PRIVATE, seen, &ts);
    }
    atomic_store(&sleeping, 0);
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static void writer_main(void *arg)
{
    (void)arg;
    const struct options *o = writer.cfg.options;
    /* Exact occupancy fills per-carrier rings quickly on mount-heavy code. */
    int64_t max_wait = o->occupancy == OCCUPANCY_EXACT ? 5000000LL : 200000000LL;
    while (!atomic_load(&stop_requested)) {
        /* read first: the round drains what was committed before the sync was asked */
        uint64_t asked = atomic_load(&sync_asked);
        int syncing = asked != atomic_load(&sync_done);
        int64_t now = clock_mono_ns();
        if (outputs_poll_connect(now))
            on_connected();
        drain();
        if (syncing)
            sampler_due_now(); /* a watchdog pin that ended is seen ended */
        sampler_round(now);
        int64_t wait = min64(active_pins_report_crossings(now), max_wait);
        if (syncing) {
            if (api_pins_enabled())
                active_pins_to_api();
            atomic_store(&sync_done, asked);
            atomic_fetch_add(&sync_word, 1);
            futex(&sync_word, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL);
        }
        deadlock_check(writer.jvmti, writer.symbols, writer.cfg.parallelism, now);
        /* Only sampled occupancy knows it will need the JVM at the next sample. */
        writer_thread_end_round(now, o->occupancy == OCCUPANCY_SAMPLED ? sampler_next_ns() : INT64_MAX,
                                atomic_load(&stop_requested));
        if (now >= writer.next_stats_ns) {
            session_stats(outputs_all());
            writer.next_stats_ns = now + (int64_t)o->stats_interval_ns;
        }
        wait = min64(min64(wait, writer.next_stats_ns - now), sampler_next_ns() - now);
        outputs_flush(now, counters_to_record);
        if (outputs_record_due())
            rotate_record();
        if (wait > 0)
            wait_for_work(wait);
    }
    /* Exit: everything queued so far, a last look at the carriers (a native
     * block that just ended), then the pins still in progress. */
    drain();
    int64_t now = clock_mono_ns();
    sampler_due_now();
    sampler_round(now);
    active_pins_report_crossings(now);
    writer_thread_end_round(now, INT64_MAX, 1);
    session_goodbye();
    if (outputs_trace() && active_pins_count()) {
        char line[128];
        snprintf(line, sizeof(line), "%u pin(s) still in progress at exit", active_pins_count());
        trace_line(outputs_trace(), line);
    }
    outputs_flush(now, counters_to_record);
    outputs_drain(1000000000LL);
    log_info("the writer joined the JVM %llu times (each a ThreadStart and ThreadEnd for every JVMTI agent)",
             (unsigned long long)writer_thread_joins());
    atomic_store(&finished, 1);
}

int writer_start(jvmtiEnv *jvmti, JNIEnv *jni)
{
    if (atomic_load(&running))
        return 0;
    const struct writer_config *cfg = &writer.cfg;
    writer.symbols = symbols_new(jvmti, cfg->options->max_methods, cfg->options->max_stacks, !cfg->monitor_depths);
    if (!writer.symbols)
        return -ENOMEM;
    session_init(cfg, writer.symbols);
    writer.jvmti = jvmti;
    deadlock_reset();
    int rc = active_pins_init(cfg, jvmti, writer.symbols);
    if (!rc)
        rc = watchdog_init(cfg, jvmti);
    if (!rc)
        rc = sampler_init(cfg, writer.symbols);
    if (rc)
        return rc;
    vmstructs_init(jni);
    struct vm_thread_layout layout;
    if (!vmstructs_thread_layout(&layout))
        session_add_notice(
            VTPIN__V1__SEVERITY__INFO, "carriers.layout_unknown",
            "HotSpot's thread layout is not one vtpin can read safely (ZGC, or unknown): the kernel view cannot "
            "tell which virtual thread a carrier ran when it slept; after attach a park is split at "
            "every sleep");
    if (!jthread_can_see_mounted(jni))
        log_warn("neither Thread.cont's known fields nor the GetVirtualThread extension: no sampled occupancy, "
                 "no native-block watchdog");
    session_hello(SINK_RECORD, 0);
    session_notices(SINK_RECORD); /* logged already */
    outputs_flush(clock_mono_ns(), counters_to_record);

    if ((*jni)->GetJavaVM(jni, &writer.vm) != 0)
        return -EINVAL;
    rc = writer_thread_start(writer.vm, writer_main, NULL);
    if (rc)
        return rc;
    atomic_store(&running, 1);
    return 0;
}

int64_t writer_threshold_ns(void)
{
    if (!atomic_load(&running) || atomic_load(&finished) || !writer.cfg.options)
        return -1;
    return (int64_t)writer.cfg.options->threshold_ns;
}

int writer_sync(unsigned timeout_ms)
{
    if (!atomic_load(&running) || atomic_load(&stop_requested) || atomic_load(&finished))
        return -ESRCH;
    uint64_t ticket = atomic_fetch_add(&sync_asked, 1) + 1;
    atomic_fetch_add(&wake_word, 1);
    futex(&wake_word, FUTEX_WAKE_PRIVATE, 1, NULL);
    int64_t deadline = clock_mono_ns() + (int64_t)timeout_ms * 1000000;
    for (;;) {
        uint32_t seen = atomic_load(&sync_word);
        if (atomic_load(&sync_done) >= ticket)
            return 0;
        if (clock_mono_ns() >= deadline || atomic_load(&finished))
            return -ETIMEDOUT;
        /* at most 1 ms: a writer that finished meanwhile never bumps the word again */
        struct timespec ts = {0, 1000000};
        futex(&sync_word, FUTEX_WAIT_PRIVATE, seen, &ts);
    }
}

void writer_stop(unsigned timeout_ms, int final)
{
    if (!atomic_load(&running))
        return;
    atomic_store(&stop_requested, 1);
    atomic_fetch_add(&wake_word, 1);
    futex(&wake_word, FUTEX_WAKE_PRIVATE, 1, NULL);
    for (unsigned waited = 0; !atomic_load(&finished) && waited < timeout_ms; waited++)
        usleep(1000);
    if (final)
        writer_thread_forbid(); /* from VMDeath or unload on: the writer must not join the JVM again */
    if (!atomic_load(&finished))
        log_warn("the writer did not finish within %u ms; the last events may be missing", timeout_ms);
}

int writer_reset(void)
{
    if (atomic_load(&running) && !atomic_load(&finished))
        return -EBUSY;
    outputs_close();
    symbols_free(writer.symbols);
    active_pins_fini();
    watchdog_fini();
    sampler_fini(); /* the carriers stay registered; a block still going on is a pin of the new session */
    session_fini();
    memset(&writer, 0, sizeof(writer));
    atomic_store(&stop_requested, 0);
    atomic_store(&finished, 0);
    atomic_store(&running, 0);
    return 0;
}
