#include "kglue.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "clog.h"
#include "kjoin.h"
#include "kstate.h"
#include "ksyms.h"
#include "kview.h"
#include "nspid.h"
#include "procthread.h"
#include "syscalls.h"

/* The scan runs every KGLUE_SCAN_NS while an agent's carrier is tracked, else every KGLUE_SLOW_SCAN_NS.
 * A thread of a JVM with no agent is looked at every KGLUE_CARRIER_NS once it carried a virtual
 * thread (a pin in progress shows within that; its end comes from the ring buffer), every
 * KGLUE_QUIET_NS before (a first pin that never ends is still seen): an idle JVM costs little. */
#define KGLUE_SCAN_NS (10 * 1000000LL)
#define KGLUE_SLOW_SCAN_NS (100 * 1000000LL)
#define KGLUE_CARRIER_NS (100 * 1000000LL)
#define KGLUE_QUIET_NS (1000 * 1000000LL)
#define KGLUE_STACK_MAX 32

/* An agent's ThreadLayout (its Hello): how to read its carriers' JavaThreads. */
struct owner_layout {
    struct owner_layout *next;
    const void *owner;
    struct kview_java_layout layout;
    kglue_java_cb cb; /* a kernel-only owner's (kglue_kernel_owner): its threads' intervals */
    void *cb_arg;
    pid_t pid; /* its process, watched from the threads' birth */
};

struct kglue {
    struct kglue_config cfg;
    struct owner_layout *layouts; /* one per connected agent that sent one */
    kglue_write write;
    kglue_jvm_cb jvm_cb; /* kglue_find_jvms */
    void *jvm_arg;
    struct kview *kv;
    struct kjoin *join;
    struct ksyms *syms; /* NULL: /proc/kallsyms unreadable */
    char reason[256];
    int timer_fd;
    int slow; /* the scan runs every KGLUE_SLOW_SCAN_NS: no agent's carrier is tracked */
    struct loop_watch rb_watch, timer_watch;
    /* counters for status */
    uint64_t intervals, recorded, crossings, untranslated, refused;
    int64_t consumed_at; /* the query time the ring buffer was last read for occupancy */
    int consuming;       /* inside kview_consume: a callback must not read the ring buffer again */
    int64_t next_snap;   /* when the scan next snapshots every carrier's occupancy */
    char proc_root[256];
};

int kglue_enabled(const struct kglue *k)
{
    return k && k->kv != NULL;
}

const char *kglue_reason(const struct kglue *k)
{
    return k ? k->reason : "not started";
}

/* The kernel's symbols, to name kernel stacks: read once, at open. */
static void load_symbols(struct kglue *k)
{
    FILE *f = fopen("/proc/kallsyms", "re");
    if (f)
        setvbuf(f, NULL, _IOFBF, 1 << 16); /* ~5 MB: not in 1 KiB reads */
    int rc = f ? ksyms_load(&k->syms, f) : -errno;
    if (f)
        fclose(f);
    if (rc)
        clog_warn("kernel view: cannot read /proc/kallsyms (%s): kernel stacks stay as addresses",
                  rc == -ENOENT ? "all addresses hidden" : strerror(-rc));
}

int kglue_open(struct kglue **out, const struct kglue_config *cfg, kglue_write write, char *why, size_t whylen)
{
    struct kglue *k = calloc(1, sizeof(*k));
    if (!k)
        return -ENOMEM;
    k->cfg = *cfg;
    k->write = write;
    k->timer_fd = -1;
    k->rb_watch.fd = k->timer_watch.fd = -1;
    if (k->cfg.window_ns <= 0)
        k->cfg.window_ns = 60 * 1000000000LL;
    snprintf(k->proc_root, sizeof(k->proc_root), "%s", cfg->proc_root ? cfg->proc_root : "/proc");
    *out = k;
    if (cfg->mode == KGLUE_OFF) {
        snprintf(k->reason, sizeof(k->reason), "turned off (--kernel=off)");
        return 0;
    }
    int rc = kview_open(&k->kv, cfg->min_ns, k->reason, sizeof(k->reason));
    if (rc == 0 && !(k->join = kjoin_new(cfg->max_carriers ? cfg->max_carriers : 1024))) {
        rc = -ENOMEM;
        snprintf(k->reason, sizeof(k->reason), "out of memory");
    }
    if (rc == 0) {
        k->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        struct itimerspec its = {.it_interval = {.tv_nsec = KGLUE_SCAN_NS}, .it_value = {.tv_nsec = KGLUE_SCAN_NS}};
        if (k->timer_fd < 0 || timerfd_settime(k->timer_fd, 0, &its, NULL) != 0) {
            rc = -errno;
            snprintf(k->reason, sizeof(k->reason), "timerfd: %s", strerror(errno));
        }
    }
    if (rc) {
        kview_close(k->kv);
        k->kv = NULL;
        kjoin_free(k->join);
        k->join = NULL;
        snprintf(why, whylen, "%s", k->reason);
        if (cfg->mode == KGLUE_ON) {
            kglue_close(k);
            *out = NULL;
            return rc;
        }
        return 0;
    }
    k->reason[0] = '\0';
    /* Now, before the collector serves anyone: loaded at the first interval, the ~120k symbols
     * stalled the loop for 0.1-0.5 s just as the first pins came in (8 of 100 back-to-back 20 ms
     * pins never showed in `top`, and the rest waited up to 14 ms). */
    load_symbols(k);
    return 0;
}

void kglue_close(struct kglue *k)
{
    if (!k)
        return;
    if (k->timer_fd >= 0)
        close(k->timer_fd);
    kjoin_free(k->join);
    kview_close(k->kv);
    ksyms_free(k->syms);
    while (k->layouts) {
        struct owner_layout *l = k->layouts;
        k->layouts = l->next;
        free(l);
    }
    free(k);
}

/* ---- intervals to KernelInterval frames ---- */

/* enum kernel_state is the wire's enum, value for value. */
_Static_assert((int)JAVA_WAIT_UNKNOWN == (int)VTPIN__V1__JAVA_WAIT__JAVA_WAIT_UNKNOWN &&
                   (int)JAVA_WAIT_BLOCKED == (int)VTPIN__V1__JAVA_WAIT__JAVA_BLOCKED &&
                   (int)JAVA_WAIT_MONITOR_ENTER == (int)VTPIN__V1__JAVA_WAIT__JAVA_MONITOR_ENTER &&
                   (int)JAVA_WAIT_MONITOR_WAIT == (int)VTPIN__V1__JAVA_WAIT__JAVA_MONITOR_WAIT &&
                   (int)JAVA_WAIT_IN_NATIVE == (int)VTPIN__V1__JAVA_WAIT__JAVA_IN_NATIVE &&
                   (int)JAVA_WAIT_OTHER == (int)VTPIN__V1__JAVA_WAIT__JAVA_OTHER &&
                   (int)JAVA_WAIT_VM == (int)VTPIN__V1__JAVA_WAIT__JAVA_VM_WAIT,
               "collector/kernel/offcpu.h and vtpin.v1.JavaWait differ");

_Static_assert((int)KSTATE_UNKNOWN == (int)VTPIN__V1__KERNEL_STATE__KERNEL_STATE_UNKNOWN &&
                   (int)KSTATE_RUNNABLE == (int)VTPIN__V1__KERNEL_STATE__KERNEL_RUNNABLE &&
                   (int)KSTATE_SLEEPING == (int)VTPIN__V1__KERNEL_STATE__KERNEL_SLEEPING &&
                   (int)KSTATE_DISK == (int)VTPIN__V1__KERNEL_STATE__KERNEL_DISK,
               "collector/kernel/kstate.h and vtpin.v1.KernelState differ");

static Vtpin__V1__KernelState wire_state(int state)
{
    return state >= KSTATE_UNKNOWN && state <= KSTATE_DISK ? (Vtpin__V1__KernelState)state
                                                           : VTPIN__V1__KERNEL_STATE__KERNEL_STATE_UNKNOWN;
}

static void emit(void *arg, const struct kjoin_carrier *c, const struct kview_interval *iv)
{
    struct kglue *k = arg;
    uint64_t ips[KGLUE_STACK_MAX];
    char names[KGLUE_STACK_MAX][160];
    char *stack[KGLUE_STACK_MAX];
    int n = 0;
    if (iv->stack_id == KVIEW_STACK_PROC && c->proc_stack) {
        /* tracked while asleep: the stack /proc showed then */
        for (const char *p = c->proc_stack; *p && n < KGLUE_STACK_MAX; n++) {
            size_t len = strcspn(p, "\n");
            snprintf(names[n], sizeof(names[n]), "%.*s", (int)len, p);
            stack[n] = names[n];
            p += len + (p[len] == '\n');
        }
    } else {
        n = kview_stack(k->kv, iv->stack_id, ips, KGLUE_STACK_MAX);
        const struct ksyms *syms = n > 0 ? k->syms : NULL;
        for (int i = 0; i < n; i++)
            stack[i] = (char *)ksyms_format(syms, ips[i], names[i], sizeof(names[i]));
    }
    Vtpin__V1__KernelInterval m = VTPIN__V1__KERNEL_INTERVAL__INIT;
    m.carrier_tid = c->ns_tid;
    m.start_ns = iv->start_ns;
    m.end_ns = iv->end_ns;
    m.has_state = 1;
    m.state = wire_state(iv->state);
    if (iv->syscall >= 0) {
        m.has_syscall = 1;
        m.syscall = iv->syscall;
        m.syscall_name = (char *)syscalls_name(iv->syscall);
    }
    m.n_stack = (size_t)n;
    m.stack = stack;
    m.has_runqueue_ns = 1;
    m.runqueue_ns = iv->rq_ns;
    m.has_host_tid = 1;
    m.host_tid = c->host_tid;
    if (iv->vthread_id >= 0 && iv->java_wait > JAVA_WAIT_UNKNOWN && iv->java_wait <= JAVA_WAIT_VM) {
        m.has_vthread_id = m.has_java_wait = 1;
        m.vthread_id = iv->vthread_id;
        m.java_wait = (Vtpin__V1__JavaWait)iv->java_wait;
    }
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_KERNEL_INTERVAL;
    ev.kernel_interval = &m;
    uint8_t buf[8192];
    ssize_t len = wire_pack(&ev, buf, sizeof(buf), sizeof(buf));
    if (len > 0) {
        k->recorded++;
        k->write(c->owner, buf, (size_t)len);
    }
}

static const struct owner_layout *owner_entry(const struct kglue *k, const void *owner)
{
    for (const struct owner_layout *l = k->layouts; l; l = l->next)
        if (l->owner == owner)
            return l;
    return NULL;
}

static void on_interval(void *arg, const struct kview_interval *iv)
{
    struct kglue *k = arg;
    if (iv->jvm) { /* a JVM starting */
        if (k->jvm_cb)
            k->jvm_cb(k->jvm_arg, iv->tgid);
        return;
    }
    if (iv->born) { /* a new thread of a kernel-only owner's process: it looks for its JavaThread */
        for (const struct owner_layout *l = k->layouts; l; l = l->next)
            if (l->cb && l->pid == iv->tgid) {
                l->cb(l->cb_arg, (void *)l->owner, -1, iv);
                break;
            }
        return;
    }
    k->intervals++;
    struct kjoin_carrier *c = kjoin_interval(k->join, iv, emit, k);
    if (!c || !c->watcher)
        return;
    /* a kernel-only owner makes its pins from it (after kjoin has it: the pin it makes joins it) */
    if (iv->vthread_id > 0 && c->look_every_ns > KGLUE_CARRIER_NS)
        c->look_every_ns = KGLUE_CARRIER_NS;
    const struct owner_layout *l = c->watcher;
    l->cb(l->cb_arg, (void *)l->owner, c->ns_tid, iv);
}

/* Reads the intervals waiting, unless a callback of a read in progress asks. */
static int consume(struct kglue *k)
{
    if (k->consuming)
        return 0;
    k->consuming = 1;
    int rc = kview_consume(k->kv, on_interval, k);
    k->consuming = 0;
    return rc;
}

static void drain_ring(struct kglue *k)
{
    int rc = consume(k);
    if (rc < 0)
        clog_error("kernel view: ring buffer: %s", strerror(-rc));
}

static void on_ring(struct loop *l, struct loop_watch *w, uint32_t events)
{
    (void)l;
    (void)events;
    drain_ring(w->data);
}

/* The scan's period: KGLUE_SLOW_SCAN_NS when no agent's carrier is tracked. */
static void scan_pace(struct kglue *k, int slow)
{
    if (slow == k->slow)
        return;
    int64_t ns = slow ? KGLUE_SLOW_SCAN_NS : KGLUE_SCAN_NS;
    struct itimerspec its = {.it_interval = {.tv_nsec = ns}, .it_value = {.tv_nsec = ns}};
    if (timerfd_settime(k->timer_fd, 0, &its, NULL) == 0)
        k->slow = slow;
    /* an agent's pins are joined to intervals as they come, as before JVMs with no agent were watched */
    kview_wake_each(k->kv, !slow);
}

/* Every 10 ms (100 ms with no agent's carrier): the ring buffer is read, and a carrier off CPU for
 * longer than --kernel-min right now is seen (and counted) as it crosses, not when it wakes. */
static void on_scan(struct loop *l, struct loop_watch *w, uint32_t events)
{
    (void)l;
    (void)events;
    struct kglue *k = w->data;
    uint64_t expirations;
    if (read(k->timer_fd, &expirations, sizeof(expirations)) < 0)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    int snap = now >= k->next_snap;
    /* with no agent's carrier the ring buffer wakes the loop only when it fills up: read at every scan */
    consume(k);
    if (snap) /* the window's step: every carrier's occupancy, finished intervals in */
        k->next_snap = now + k->cfg.window_ns / (KJOIN_SNAPS - 1);
    /* kernel-only owners' crossings, told after the walk: what they do may untrack carriers */
    enum { CROSSINGS_MAX = 64 };
    struct {
        const struct owner_layout *l;
        int32_t ns_tid;
        struct kview_interval iv;
    } told[CROSSINGS_MAX];
    unsigned n_told = 0;
    size_t pos = 0;
    struct kjoin_carrier *c;
    size_t agents = 0; /* agents' carriers looked at: the fast pace */
    while ((c = kjoin_next(k->join, &pos))) {
        struct kview_times t;
        agents += !c->look_every_ns;
        if (!snap && c->look_every_ns && now < c->next_look)
            continue;
        if (c->look_every_ns)
            c->next_look = now + c->look_every_ns;
        if (kview_times(k->kv, c->host_tid, now, &t) != 0)
            continue;
        if (t.off_since && t.vthread_id > 0 && c->look_every_ns > KGLUE_CARRIER_NS)
            c->look_every_ns = KGLUE_CARRIER_NS;
        if (snap) {
            struct kjoin_occ o;
            kjoin_occupancy(c, &t, now, &o);
            kjoin_snapshot(c, now, k->cfg.window_ns, &o);
        }
        if (!t.off_since)
            continue;
        if (now - t.off_since < (int64_t)k->cfg.min_ns)
            continue;
        if (c->crossed_since != t.off_since) {
            c->crossed_since = t.off_since;
            k->crossings++;
            const struct owner_layout *l = c->watcher;
            if (l && n_told < CROSSINGS_MAX) /* more at once are seen when they end */
                told[n_told++] = (__typeof__(told[0])){
                    .l = l,
                    .ns_tid = c->ns_tid,
                    .iv = {.tid = c->host_tid,
                           .state = t.state,
                           .start_ns = t.off_since,
                           .syscall = t.syscall,
                           .stack_id = t.stack_id,
                           .vthread_id = t.vthread_id,
                           .java_wait = t.java_wait,
                           .park_why = t.park_why,
                           .user_bp = t.user_bp},
                };
            if (c->pin_open)
                clog_debug("kernel view: carrier tid %" PRId32 " (host %" PRId32 ") off CPU (%s) for %" PRId64
                           " us while pinned",
                           c->ns_tid, c->host_tid, wire_kernel_state_name(t.state), (now - t.off_since) / 1000);
        }
    }
    /* the intervals that ended before these began come first; an owner told may be gone by the next */
    if (n_told)
        consume(k);
    for (unsigned i = 0; i < n_told; i++)
        if (owner_entry(k, told[i].l->owner) == told[i].l)
            told[i].l->cb(told[i].l->cb_arg, (void *)told[i].l->owner, told[i].ns_tid, &told[i].iv);
    scan_pace(k, agents == 0);
}

int kglue_watch(struct kglue *k, struct loop *loop)
{
    if (!kglue_enabled(k))
        return 0;
    int rc = loop_watch(loop, &k->rb_watch, kview_fd(k->kv), EPOLLIN, on_ring, k);
    if (!rc)
        rc = loop_watch(loop, &k->timer_watch, k->timer_fd, EPOLLIN, on_scan, k);
    return rc;
}

void kglue_unwatch(struct kglue *k, struct loop *loop)
{
    if (!kglue_enabled(k))
        return;
    loop_unwatch(loop, &k->rb_watch);
    loop_unwatch(loop, &k->timer_watch);
}

/* ---- agents ---- */

static int64_t mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Tracks ns_tid of owner (process peer_pid). A thread asleep already starts its interval now, as
 * far as /proc can tell; one the program tracks from its birth (kview_watch_process) has its own. */
static struct kjoin_carrier *track(struct kglue *k, void *owner, pid_t peer_pid, int32_t ns_tid)
{
    struct kjoin_carrier *c = kjoin_by_ns(k->join, owner, ns_tid);
    if (c)
        return c;
    int32_t host;
    int rc = nspid_host_tid(k->proc_root, peer_pid, ns_tid, &host);
    if (rc) {
        if (k->untranslated++ == 0)
            clog_warn("kernel view: carrier tid %" PRId32 " of peer pid %ld not found in %s/%ld/task (%s): not "
                      "tracked (said once)",
                      ns_tid, (long)peer_pid, k->proc_root, (long)peer_pid, strerror(-rc));
        return NULL;
    }
    rc = kjoin_add(k->join, owner, host, ns_tid);
    char state = 'R';
    int32_t nr = -1;
    struct kview_seed seed = {.vthread_id = -1}, *asleep = NULL;
    if (rc == 1 && procthread_state(k->proc_root, host, &state, &nr, NULL) == 0 && (state == 'S' || state == 'D')) {
        asleep = &seed; /* already off CPU: its interval starts now as far as we can tell */
        seed.off_since = mono_now();
        seed.state = state == 'D' ? KSTATE_DISK : KSTATE_SLEEPING;
        seed.syscall = nr;
    }
    if (rc == 1) {
        rc = kview_track(k->kv, host, asleep);
        if (rc == 1) { /* tracked from its birth: the program has its interval, start and stack */
            rc = 0;
            asleep = NULL;
        }
    }
    if (rc == 0 && asleep) {
        struct kjoin_carrier *c = kjoin_by_host(k->join, host);
        free(c->proc_stack);
        c->proc_stack = procthread_stack(k->proc_root, host);
    }
    if (rc < 0) {
        if (k->refused++ == 0)
            clog_warn("kernel view: cannot track carrier tid %" PRId32 ": %s (said once)", ns_tid,
                      rc == -ENOSPC ? "too many carriers tracked" : strerror(-rc));
        return NULL;
    }
    return kjoin_by_host(k->join, host);
}

static const struct kview_java_layout *layout_of(const struct kglue *k, const void *owner)
{
    const struct owner_layout *l = owner_entry(k, owner);
    return l ? &l->layout : NULL;
}

void kglue_agent_hello(struct kglue *k, const void *owner, const Vtpin__V1__Hello *h)
{
    const Vtpin__V1__ThreadLayout *t = h->thread_layout;
    if (!kglue_enabled(k) || !t || layout_of(k, owner))
        return;
    /* each offset is read as 8 bytes at most from a JavaThread or an object: a layout
     * beyond a few pages is not HotSpot's (the reads could not harm, but say nothing) */
    const uint32_t limit = 1u << 16;
    if (t->thread_obj_offset >= limit || t->vthread_offset >= limit || t->pending_monitor_offset >= limit ||
        t->waiting_monitor_offset >= limit || t->thread_state_offset >= limit || t->tid_offset >= limit)
        return;
    struct owner_layout *l = calloc(1, sizeof(*l));
    if (!l)
        return; /* its intervals say nothing of the JavaThread, as without a layout */
    l->owner = owner;
    l->layout = (struct kview_java_layout){
        .thread_obj = t->thread_obj_offset,
        .vthread = t->vthread_offset,
        .pending_monitor = t->pending_monitor_offset,
        .waiting_monitor = t->waiting_monitor_offset,
        .thread_state = t->thread_state_offset,
        .tid = t->tid_offset,
        .state_blocked = t->state_blocked,
        .state_in_native = t->state_in_native,
        /* a park is a pin only when the virtual thread says PINNED (kstate.h java_wait_park) */
        .vt_state = t->has_vthread_state_offset && t->vthread_state_offset < limit ? t->vthread_state_offset : 0,
    };
    l->next = k->layouts;
    k->layouts = l;
}

static void forget_layout(struct kglue *k, const void *owner)
{
    for (struct owner_layout **p = &k->layouts; *p; p = &(*p)->next)
        if ((*p)->owner == owner) {
            struct owner_layout *l = *p;
            if (l->cb)
                kview_watch_process(k->kv, l->pid, 0);
            *p = l->next;
            free(l);
            return;
        }
}

/* A kernel-only owner's pins (zerotouch.c) come from this ring buffer's intervals, sent from
 * their callbacks: reading the ring buffer again for them would hand its next intervals back
 * while the pin is being started. The end of a pin being started was lost so (its interval
 * ended between its crossing and its start: zt_first_second, 5 of 25 runs under ASan). */
static int from_kernel(const struct kglue *k, const void *owner)
{
    const struct owner_layout *l = owner_entry(k, owner);
    return l && l->cb;
}

void kglue_agent_event(struct kglue *k, void *owner, pid_t peer_pid, const WireEvent *ev)
{
    if (!kglue_enabled(k))
        return;
    switch (ev->body_case) {
    case VTPIN__V1__EVENT__BODY_CARRIER: {
        struct kjoin_carrier *c = track(k, owner, peer_pid, ev->carrier->tid);
        if (c && !c->look_every_ns)
            scan_pace(k, 0); /* an agent's carrier: crossings as they happen */
        const struct kview_java_layout *l = layout_of(k, owner);
        if (c && l && ev->carrier->has_java_thread && ev->carrier->java_thread &&
            kview_java(k->kv, c->host_tid, ev->carrier->java_thread, l) != 0 && k->refused++ == 0)
            clog_warn("kernel view: cannot follow carrier tid %" PRId32 "'s JavaThread (said once)", ev->carrier->tid);
        break;
    }
    case VTPIN__V1__EVENT__BODY_PIN_START: {
        const Vtpin__V1__PinStart *p = ev->pin_start;
        if (!p->has_carrier_tid)
            break;
        /* The intervals that ended before this event was read come first, whatever
         * order the loop found the socket and the ring buffer ready in: a collector
         * that reads an agent's batch of pins late would otherwise join the kernel's
         * intervals to pins that have long ended (only the last KJOIN_PAST are known).
         * Reading an empty ring buffer is two memory loads. */
        if (!from_kernel(k, owner))
            drain_ring(k);
        struct kjoin_carrier *c = track(k, owner, peer_pid, p->carrier_tid);
        if (c && !c->look_every_ns)
            scan_pace(k, 0);
        if (c)
            kjoin_pin_start(k->join, c, p->pin_id, p->start_ns, emit, k);
        break;
    }
    case VTPIN__V1__EVENT__BODY_PIN_END:
        if (!from_kernel(k, owner))
            drain_ring(k);
        kjoin_pin_end(k->join, owner, ev->pin_end->pin_id, ev->pin_end->end_ns);
        break;
    default:
        break;
    }
}

static void untrack(void *arg, int32_t host_tid)
{
    kview_untrack(arg, host_tid);
}

void kglue_owner_gone(struct kglue *k, void *owner, int64_t now)
{
    if (!kglue_enabled(k))
        return;
    /* the intervals still in the ring buffer first, then the held sleeps no pin claimed */
    consume(k);
    kjoin_flush(k->join, owner, emit, k);
    forget_layout(k, owner);
    size_t n = 0, pos = 0;
    struct kjoin_carrier *c;
    while ((c = kjoin_next(k->join, &pos)))
        n += c->owner == owner;
    if (n) {
        int32_t *tids = calloc(n, sizeof(*tids));
        uint64_t *on = calloc(n, sizeof(*on)), *off = calloc(n, sizeof(*off)), *rq = calloc(n, sizeof(*rq));
        size_t i = 0;
        pos = 0;
        while (tids && on && off && rq && (c = kjoin_next(k->join, &pos))) {
            struct kview_times t;
            if (c->owner != owner || kview_times(k->kv, c->host_tid, now, &t) != 0)
                continue;
            tids[i] = c->ns_tid;
            on[i] = t.on_ns;
            off[i] = t.off_ns;
            rq[i] = t.rq_ns;
            i++;
        }
        if (tids && on && off && rq && i) {
            Vtpin__V1__KernelTimes m = VTPIN__V1__KERNEL_TIMES__INIT;
            m.time_ns = now;
            m.n_carrier_tids = m.n_on_cpu_ns = m.n_off_cpu_ns = m.n_runqueue_ns = i;
            m.carrier_tids = tids;
            m.on_cpu_ns = on;
            m.off_cpu_ns = off;
            m.runqueue_ns = rq;
            WireEvent ev = VTPIN__V1__EVENT__INIT;
            ev.body_case = VTPIN__V1__EVENT__BODY_KERNEL_TIMES;
            ev.kernel_times = &m;
            size_t size = wire_packed_size(&ev);
            uint8_t *buf = malloc(size);
            ssize_t len = buf ? wire_pack(&ev, buf, size, size) : -ENOMEM;
            if (len > 0)
                k->write(owner, buf, (size_t)len);
            free(buf);
        }
        free(tids);
        free(on);
        free(off);
        free(rq);
    }
    kjoin_remove_owner(k->join, owner, untrack, k->kv);
}

/* ---- JVMs with no agent ---- */

void kglue_drain(struct kglue *k)
{
    if (kglue_enabled(k))
        drain_ring(k);
}

int kglue_find_jvms(struct kglue *k, kglue_jvm_cb cb, void *arg)
{
    if (!kglue_enabled(k))
        return -ENOSYS;
    int rc = kview_find_jvms(k->kv, cb != NULL);
    if (rc == 0) {
        k->jvm_cb = cb;
        k->jvm_arg = arg;
    }
    return rc;
}

int kglue_kernel_owner(struct kglue *k, void *owner, pid_t pid, const struct kview_java_layout *layout,
                       kglue_java_cb cb, void *arg)
{
    if (!kglue_enabled(k))
        return -ENOSYS;
    if (owner_entry(k, owner))
        return -EEXIST;
    struct owner_layout *l = calloc(1, sizeof(*l));
    if (!l)
        return -ENOMEM;
    l->owner = owner;
    l->layout = *layout;
    l->cb = cb;
    l->cb_arg = arg;
    l->pid = pid;
    l->next = k->layouts;
    k->layouts = l;
    kview_watch_process(k->kv, pid, 1); /* its new threads from their birth */
    return 0;
}

int kglue_track_java(struct kglue *k, void *owner, pid_t pid, int32_t ns_tid, uint64_t java_thread, int32_t *host_tid)
{
    const struct owner_layout *l = kglue_enabled(k) ? owner_entry(k, owner) : NULL;
    if (!l)
        return -ENOSYS;
    int known = kjoin_by_ns(k->join, owner, ns_tid) != NULL;
    struct kjoin_carrier *c = track(k, owner, pid, ns_tid);
    if (!c)
        return -ENOSPC;
    if (!known)
        c->look_every_ns = KGLUE_QUIET_NS;
    c->watcher = l->cb ? l : NULL; /* its intervals go to the owner's callback */
    int rc = kview_java(k->kv, c->host_tid, java_thread, &l->layout);
    if (rc == 0 && host_tid)
        *host_tid = c->host_tid;
    return rc;
}

uint64_t kglue_intervals_lost(struct kglue *k)
{
    return kglue_enabled(k) ? kview_lost(k->kv) : 0;
}

int kglue_unread_sleep(struct kglue *k, int32_t host_tid, int64_t *off_since)
{
    struct kview_times t;
    if (!kglue_enabled(k) || kview_times(k->kv, host_tid, mono_now(), &t) != 0)
        return 0;
    *off_since = t.off_since;
    return t.off_since && t.state != KSTATE_RUNNABLE && t.java_wait == JAVA_WAIT_UNKNOWN;
}

int kglue_seed_java(struct kglue *k, void *owner, int32_t host_tid, int64_t off_since,
                    const struct kglue_java_now *java)
{
    const struct kview_java_layout *l = kglue_enabled(k) ? layout_of(k, owner) : NULL;
    char state;
    int32_t nr;
    int64_t op;
    if (!l)
        return -ENOSYS;
    int rc = procthread_state(k->proc_root, host_tid, &state, &nr, &op);
    if (rc)
        return rc;
    if (state != 'S' && state != 'D')
        return -EAGAIN; /* it woke: that interval is over */
    int64_t futex_op = nr == 202 /* futex */ ? op : -1;
    if (nr >= 0 && nr != 202)
        futex_op = JAVA_WAIT_NOT_FUTEX;
    int wait = java_wait_of(java->thread_state, l->state_blocked, l->state_in_native, java->pending_monitor,
                            java->waiting_monitor, futex_op);
    wait = java_wait_park(wait, l->vt_state && java->vthread_id > 0, java->vthread_state);
    return kview_seed_java(k->kv, host_tid, off_since, java->vthread_id, wait,
                           wait == JAVA_WAIT_BLOCKED ? java->park_why : PARK_WHY_UNKNOWN);
}

void kglue_untrack_java(struct kglue *k, void *owner, int32_t host_tid)
{
    if (kglue_enabled(k))
        kjoin_remove(k->join, owner, host_tid, untrack, k->kv);
}

/* ---- queries ---- */

void kglue_status_json(struct kglue *k, struct json *js, int64_t now)
{
    (void)now;
    if (!k) {
        json_kv_null(js, "kernel_view");
        return;
    }
    json_key(js, "kernel_view");
    json_object_begin_inline(js);
    json_kv_bool(js, "enabled", kglue_enabled(k));
    if (!kglue_enabled(k)) {
        json_kv_string(js, "reason", kglue_reason(k));
        json_object_end(js);
        return;
    }
    json_kv_uint(js, "min_ns", k->cfg.min_ns);
    json_kv_uint(js, "carriers_tracked", kjoin_count(k->join));
    json_kv_uint(js, "intervals", k->intervals);
    json_kv_uint(js, "intervals_recorded", k->recorded);
    json_kv_uint(js, "crossings", k->crossings);
    json_kv_uint(js, "intervals_lost", kview_lost(k->kv));
    json_kv_uint(js, "carriers_untranslated", k->untranslated);
    json_kv_uint(js, "kernel_symbols", k->syms ? ksyms_count(k->syms) : 0);
    json_object_end(js);
}

int kglue_occupancy_add(struct kglue *k, const void *owner, int32_t tid, int64_t now, struct kglue_occ *sum)
{
    struct kjoin_carrier *c = kglue_enabled(k) && owner ? kjoin_by_ns(k->join, owner, tid) : NULL;
    struct kview_times t;
    if (!c)
        return -ENOENT;
    if (k->consumed_at != now) { /* once per query */
        k->consumed_at = now;
        consume(k);
    }
    if (kview_times(k->kv, c->host_tid, now, &t) != 0)
        return -ENOENT;
    struct kjoin_occ o, w;
    kjoin_occupancy(c, &t, now, &o);
    kjoin_window(c, now, k->cfg.window_ns, &o, &w);
    sum->busy_ns += o.busy_ns;
    sum->held_ns += o.held_ns;
    sum->idle_ns += o.idle_ns;
    sum->runqueue_ns += o.runqueue_ns;
    sum->w_busy_ns += w.busy_ns;
    sum->w_held_ns += w.held_ns;
    sum->w_idle_ns += w.idle_ns;
    sum->w_runqueue_ns += w.runqueue_ns;
    sum->carriers++;
    return 0;
}

int kglue_asleep(struct kglue *k, const void *owner, int32_t tid, int64_t now, int64_t *since, const char **state,
                 const char **syscall)
{
    struct kjoin_carrier *c = kglue_enabled(k) && owner ? kjoin_by_ns(k->join, owner, tid) : NULL;
    struct kview_times t;
    if (!c || kview_times(k->kv, c->host_tid, now, &t) != 0)
        return -ENOENT;
    if (!t.off_since || t.state == KSTATE_RUNNABLE)
        return 0;
    *since = t.off_since;
    *state = wire_kernel_state_name(t.state);
    *syscall = t.syscall >= 0 ? syscalls_name(t.syscall) : NULL;
    return 1;
}

/* A percentage with one decimal (json.h has no floating-point values). */
static void kv_pct(struct json *js, const char *key, uint64_t part, uint64_t total)
{
    json_key(js, key);
    fprintf(js->out, "%.1f", total ? 100.0 * (double)part / (double)total : 0.0);
    js->after_key = 0;
}

void kglue_occupancy_json(struct json *js, const char *key, const struct kglue_occ *o)
{
    if (!o || !o->carriers) {
        json_kv_null(js, key);
        return;
    }
    uint64_t total = o->w_busy_ns + o->w_held_ns + o->w_idle_ns; /* runqueue is a part of them */
    json_key(js, key);
    json_object_begin_inline(js);
    json_kv_uint(js, "carriers", o->carriers);
    json_kv_uint(js, "busy_ns", o->busy_ns);
    json_kv_uint(js, "held_ns", o->held_ns);
    json_kv_uint(js, "idle_ns", o->idle_ns);
    json_kv_uint(js, "runqueue_ns", o->runqueue_ns);
    kv_pct(js, "busy_pct", o->w_busy_ns, total);
    kv_pct(js, "held_pct", o->w_held_ns, total);
    kv_pct(js, "idle_pct", o->w_idle_ns, total);
    kv_pct(js, "runqueue_pct", o->w_runqueue_ns, total);
    json_object_end(js);
}

void kglue_carrier_json(struct kglue *k, struct json *js, const void *owner, int32_t tid, int64_t now)
{
    struct kjoin_carrier *c = k && kglue_enabled(k) && owner ? kjoin_by_ns(k->join, owner, tid) : NULL;
    struct kview_times t;
    if (!c || kview_times(k->kv, c->host_tid, now, &t) != 0) {
        json_kv_null(js, "kernel");
        return;
    }
    json_key(js, "kernel");
    json_object_begin_inline(js);
    json_kv_int(js, "host_tid", c->host_tid);
    json_kv_uint(js, "on_cpu_ns", t.on_ns);
    json_kv_uint(js, "off_cpu_ns", t.off_ns);
    json_kv_uint(js, "runqueue_ns", t.rq_ns);
    json_kv_uint(js, "switches", t.switches);
    if (t.off_since) {
        json_kv_string(js, "state", wire_kernel_state_name(t.state));
        json_kv_int(js, "off_cpu_for_ns", now - t.off_since);
        json_kv_string(js, "syscall", syscalls_name(t.syscall));
    } else {
        json_kv_string(js, "state", "running");
        json_kv_null(js, "off_cpu_for_ns");
        json_kv_null(js, "syscall");
    }
    struct kglue_occ o = {0};
    kglue_occupancy_add(k, owner, tid, now, &o);
    kglue_occupancy_json(js, "occupancy", &o);
    /* every held millisecond explained: finished sleeps with a virtual thread mounted, against the pins
     * as the agent streamed them (a pin is reported at its threshold: a sleep waits for it until then) */
    if (c->java_known) {
        json_kv_uint(js, "held_ns", c->mounted_ns);
        json_kv_uint(js, "held_in_pins_ns", c->mounted_in_pins_ns);
        json_kv_uint(js, "unexplained_ns", c->mounted_ns - c->mounted_in_pins_ns);
    } else {
        json_kv_null(js, "held_ns");
        json_kv_null(js, "held_in_pins_ns");
        json_kv_null(js, "unexplained_ns");
    }
    json_object_end(js);
}
