// SPDX-License-Identifier: GPL-2.0
/* Off-CPU accounting of the carrier threads the collector tracks.
 *
 * tp_btf/sched_switch: an untracked thread costs one hash lookup for prev and
 * one for next. A tracked thread gets its on-CPU, off-CPU and run-queue time
 * summed in its map value, and every off-CPU interval of at least kernel_min
 * is sent to the ring buffer with its state, syscall and kernel stack (taken
 * at switch out, when the stack is prev's; not for a carrier with no virtual
 * thread mounted). sched_wakeup(_new) marks when a
 * sleeping carrier became runnable, so the rest of the interval is run-queue
 * time. The program only reads the kernel. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "offcpu.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u64 kernel_min = 1000000; /* ns */

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, OFFCPU_MAX_TRACKED);
    __type(key, __u32);
    __type(value, struct offcpu_carrier);
} tracked SEC(".maps");

/* The tracked carriers' JavaThreads, where the agent gave them (host tid). */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, OFFCPU_MAX_TRACKED);
    __type(key, __u32);
    __type(value, struct offcpu_java);
} java SEC(".maps");

/* Processes whose threads are tracked from their birth (JVMs watched with no agent): tgid -> 1. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, OFFCPU_MAX_WATCHED);
    __type(key, __u32);
    __type(value, __u8);
} watched SEC(".maps");

/* What the collector read of a sleeping thread's JavaThread (struct offcpu_seed), by host tid. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, OFFCPU_MAX_TRACKED);
    __type(key, __u32);
    __type(value, struct offcpu_seed);
} seeds SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_STACK_TRACE);
    __uint(max_entries, OFFCPU_STACKS);
    __uint(key_size, sizeof(__u32));
    __uint(value_size, OFFCPU_STACK_DEPTH * sizeof(__u64));
} stacks SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, 256 * 1024);
} events SEC(".maps");

/* 1 while an agent's carrier is tracked: each record wakes the collector. 0 (only JVMs with no agent):
 * the collector reads the ring buffer at each of its scans (every 100 ms), not woken by every record
 * (an idle host's threads make hundreds of short sleeps a second), and is woken when a quarter of
 * the buffer waits, so a burst is read before it fills. */
__u32 wake_each = 1;

static __always_inline __u64 wakeup_flags(void)
{
    if (wake_each)
        return 0;
    return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= 64 * 1024 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

/* Intervals lost because the ring buffer was full. */
__u64 events_lost = 0;

/* task_struct.state before 5.14 */
struct task_struct___old {
    long state;
} __attribute__((preserve_access_index));

static __always_inline __u32 task_state(struct task_struct *t)
{
    long s;
    if (bpf_core_field_exists(t->__state))
        s = BPF_CORE_READ(t, __state);
    else
        s = BPF_CORE_READ((struct task_struct___old *)t, state);
    if (s == 0)
        return KSTATE_RUNNABLE;
    if (s & 0x1) /* TASK_INTERRUPTIBLE */
        return KSTATE_SLEEPING;
    if (s & 0x2) /* TASK_UNINTERRUPTIBLE (TASK_IDLE included) */
        return KSTATE_DISK;
    return KSTATE_UNKNOWN;
}

#define SYS_FUTEX 202 /* x86-64 */

static __always_inline int read_u64(__u64 addr, __u64 *out)
{
    return bpf_probe_read_user(out, sizeof(*out), (const void *)addr);
}

/* Why a virtual thread parked on its carrier could not unmount (kstate.h park_why_of): the counts
 * the JDK's freeze looked at, read where the JVM lets them be read. */
static __always_inline __u32 read_park_why(const struct offcpu_java *j, __u64 jt)
{
    __u32 rule = j->park_rule, pin_count = 0;
    __s64 held = 0;
    __u64 entry;
    if (rule & PARK_RULE_PIN_COUNT) {
        if (read_u64(jt + j->cont_entry, &entry) || !entry ||
            bpf_probe_read_user(&pin_count, sizeof(pin_count), (const void *)(entry + j->pin_count)))
            return PARK_WHY_UNKNOWN;
    }
    if ((rule & PARK_RULE_HELD) && bpf_probe_read_user(&held, sizeof(held), (const void *)(jt + j->held_monitors)))
        return PARK_WHY_UNKNOWN;
    return park_why_of(rule, pin_count, held);
}

/* What the JavaThread of a carrier that leaves the CPU asleep is doing, read
 * from the JVM's memory (prev's: this runs in its context) per the agent's
 * layout. A read that fails leaves it unknown; nothing is written. */
static __always_inline void read_java(const struct offcpu_java *j, struct offcpu_carrier *c, __s64 futex_op)
{
    __u64 jt = j->java_thread, pending, waiting, h_obj, h_vt, obj, vt;
    __s32 st;
    __s64 tid;
    if (bpf_probe_read_user(&st, sizeof(st), (const void *)(jt + j->thread_state)) ||
        read_u64(jt + j->pending_monitor, &pending) || read_u64(jt + j->waiting_monitor, &waiting) ||
        read_u64(jt + j->thread_obj, &h_obj) || read_u64(jt + j->vthread, &h_vt) || read_u64(h_obj, &obj) ||
        read_u64(h_vt, &vt))
        return;
    /* the same thread object, or the same thread's (a collector that colours its pointers can
     * hold one object under two values): the carrier runs itself */
    __s64 own;
    if (vt == obj)
        tid = 0;
    else if (bpf_probe_read_user(&tid, sizeof(tid), (const void *)(vt + j->tid)) ||
             bpf_probe_read_user(&own, sizeof(own), (const void *)(obj + j->tid)))
        return;
    else if (tid == own)
        tid = 0;
    c->vthread_id = tid;
    c->java_wait = java_wait_of(st, j->state_blocked, j->state_in_native, pending, waiting, futex_op);
    __s32 vt_state = -1;
    if (tid > 0 && j->vt_state && c->java_wait == JAVA_WAIT_BLOCKED &&
        bpf_probe_read_user(&vt_state, sizeof(vt_state), (const void *)(vt + j->vt_state)) == 0)
        c->java_wait = java_wait_park(c->java_wait, 1, vt_state);
    if (c->java_wait == JAVA_WAIT_BLOCKED && vt_state >= 0)
        c->park_why = read_park_why(j, jt);
}

/* Closes the off-CPU interval from c->off_since to end: its times, and the ring buffer when it
 * lasted kernel_min. rq: its run-queue part, for a sleep (a preempted interval is all of it). */
static __always_inline void close_interval(struct offcpu_carrier *c, __u32 tid, __u64 end, __u64 rq)
{
    __u64 since = c->off_since;
    __u64 off = end - since;
    if (c->state == KSTATE_RUNNABLE) {
        rq = off;
        c->preempt_ns += off;
    }
    c->off_ns += off;
    c->rq_ns += rq;
    if (off < kernel_min)
        return;
    struct offcpu_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
    if (!e) {
        __sync_fetch_and_add(&events_lost, 1);
        return;
    }
    e->start_ns = since;
    e->end_ns = end;
    e->rq_ns = rq;
    e->tid = tid;
    e->state = c->state;
    e->syscall = c->syscall;
    e->stack_id = c->stack_id;
    e->vthread_id = c->vthread_id;
    e->java_wait = c->java_wait;
    e->park_why = c->park_why;
    if (c->java_wait == JAVA_WAIT_UNKNOWN) { /* nothing to read it with at its switch out: the collector's word */
        struct offcpu_seed *s = bpf_map_lookup_elem(&seeds, &tid);
        if (s && s->off_since == since) {
            e->vthread_id = s->vthread_id;
            e->java_wait = s->java_wait;
            e->park_why = s->park_why;
        }
    }
    e->kind = OFFCPU_INTERVAL;
    e->tgid = 0;
    bpf_ringbuf_submit(e, wakeup_flags());
}

static __always_inline void switch_out(void *ctx, bool preempt, struct task_struct *prev, struct offcpu_carrier *c,
                                       __u64 now)
{
    /* Off CPU still: no sched_switch named it next since it went to sleep, yet it runs. Seen on
     * 6.18 under load (ftrace's sched_switch agrees: a carrier's 15 ms park, then its next
     * switch out, no switch in between). Its sleep ended when it was woken; the run-queue part
     * after that is not known. Without this the switch out below overwrote the sleep unsent. */
    if (c->off_since && c->woken_at > c->off_since && c->woken_at <= now) {
        close_interval(c, prev->pid, c->woken_at, 0);
    } else if (c->off_since) {
        /* Neither its switch in nor its wakeup seen (about 1 sleep in 500 beside a CI run): it has
         * run since its scheduler entity was last picked, for the CPU time summed since then. */
        __u64 ran = BPF_CORE_READ(prev, se.sum_exec_runtime) - BPF_CORE_READ(prev, se.prev_sum_exec_runtime);
        if (ran < now - c->off_since) {
            close_interval(c, prev->pid, now - ran, 0);
            c->on_ns += ran;
        }
    }
    if (c->on_since)
        c->on_ns += now - c->on_since;
    c->on_since = 0;
    c->off_since = now;
    c->woken_at = 0;
    c->switches++;
    c->state = preempt ? KSTATE_RUNNABLE : task_state(prev);
    c->syscall = -1;
    c->stack_id = -1;
    c->vthread_id = -1;
    c->java_wait = JAVA_WAIT_UNKNOWN;
    c->park_why = PARK_WHY_UNKNOWN;
    c->user_bp = 0;
    if (c->state == KSTATE_RUNNABLE)
        return; /* preempted: no stack or syscall wanted, and cheaper */
    struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(prev);
    __s64 futex_op = -1; /* not known */
    if (regs) {
        c->syscall = (__s32)BPF_CORE_READ(regs, orig_ax);
        c->user_bp = BPF_CORE_READ(regs, bp);
        if (c->syscall == SYS_FUTEX)
            futex_op = (__s64)(BPF_CORE_READ(regs, si) & 0xffffffff);
        else if (c->syscall >= 0)
            futex_op = JAVA_WAIT_NOT_FUTEX;
    }
    __u32 tid = prev->pid;
    struct offcpu_java *j = bpf_map_lookup_elem(&java, &tid);
    if (j)
        read_java(j, c, futex_op);
    /* the kernel stack says where a carrier that holds a virtual thread sleeps (a pin, an unexplained
     * hold); an idle carrier's sleep, the most common switch of a JVM that sleeps, is not worth its walk
     * (about a microsecond: zero-touch's service bench paid 7 % more CPU in the JVM for them) */
    if (c->vthread_id != 0)
        c->stack_id = bpf_get_stackid(ctx, &stacks, 0);
}

static __always_inline void switch_in(struct offcpu_carrier *c, __u32 tid, __u64 now)
{
    __u64 since = c->off_since;
    c->on_since = now;
    if (!since)
        return; /* first switch in since tracked */
    close_interval(c, tid, now, c->woken_at && c->woken_at <= now ? now - c->woken_at : 0);
    c->off_since = 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
    __u64 now = bpf_ktime_get_ns();
    __u32 ptid = prev->pid, ntid = next->pid;
    struct offcpu_carrier *c = bpf_map_lookup_elem(&tracked, &ptid);
    if (c)
        switch_out(ctx, preempt, prev, c, now);
    c = bpf_map_lookup_elem(&tracked, &ntid);
    if (c)
        switch_in(c, ntid, now);
    return 0;
}

static __always_inline void woken(struct task_struct *p)
{
    __u32 tid = p->pid;
    struct offcpu_carrier *c = bpf_map_lookup_elem(&tracked, &tid);
    if (c && c->off_since && !c->woken_at)
        c->woken_at = bpf_ktime_get_ns();
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(offcpu_wakeup, struct task_struct *p)
{
    woken(p);
    return 0;
}

/* A record that is no interval (enum offcpu_kind), sent at once: rare, and the collector acts on it now
 * (a new thread's first sleep may be a pin; a JVM starting is watched from its start). */
static __always_inline void tell(__u32 kind, __u32 tid, __u32 tgid)
{
    struct offcpu_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
    if (!e) {
        __sync_fetch_and_add(&events_lost, 1);
        return;
    }
    __builtin_memset(e, 0, sizeof(*e));
    e->start_ns = bpf_ktime_get_ns();
    e->tid = tid;
    e->tgid = tgid;
    e->kind = kind;
    e->syscall = -1;
    e->stack_id = -1;
    e->vthread_id = -1;
    bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

/* A new thread of a watched process is tracked from its birth, so that its first sleep (a new
 * carrier's first pin) has its start; the collector learns its JavaThread a moment later. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(offcpu_fork, struct task_struct *parent, struct task_struct *child)
{
    __u32 tgid = child->tgid, tid = child->pid;
    if (tgid == tid || !bpf_map_lookup_elem(&watched, &tgid))
        return 0;
    struct offcpu_carrier born = {.syscall = -1, .stack_id = -1, .vthread_id = -1};
    if (bpf_map_update_elem(&tracked, &tid, &born, BPF_NOEXIST) != 0)
        return 0;
    /* the collector looks for its JavaThread now, not at its next look at the thread list */
    tell(OFFCPU_BORN, tid, tgid);
    return 0;
}

/* A thread of a watched process that ends before the collector claimed it (gave its JavaThread):
 * no one else would untrack it. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(offcpu_exit, struct task_struct *p)
{
    __u32 tgid = p->tgid, tid = p->pid;
    if (!bpf_map_lookup_elem(&watched, &tgid) || bpf_map_lookup_elem(&java, &tid))
        return 0;
    bpf_map_delete_elem(&tracked, &tid);
    bpf_map_delete_elem(&seeds, &tid);
    return 0;
}

/* 1 while the collector watches the JVMs with no agent (zero-touch): a process that runs a program
 * named java is told as it does, so that the collector looks at it until it is a JVM, and watches it
 * from its start, not from its next look at /proc (every second: a JVM's first pins would be
 * missed). The kernel names the process after the file it runs (comm) before this tracepoint. */
__u32 find_jvms = 0;

SEC("tp_btf/sched_process_exec")
int BPF_PROG(offcpu_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
    if (!find_jvms)
        return 0;
    char comm[TASK_COMM_LEN];
    if (bpf_probe_read_kernel_str(comm, sizeof(comm), p->comm) != 5 || comm[0] != 'j' || comm[1] != 'a' ||
        comm[2] != 'v' || comm[3] != 'a')
        return 0;
    tell(OFFCPU_JVM, p->pid, p->tgid); /* lost to a full buffer: the next look at /proc finds it */
    return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(offcpu_wakeup_new, struct task_struct *p)
{
    woken(p);
    return 0;
}
