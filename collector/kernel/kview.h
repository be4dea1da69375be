/* The kernel view: loads offcpu.bpf.c, tracks carrier threads by host tid and
 * hands out their off-CPU intervals and times. Needs CAP_BPF and CAP_PERFMON
 * (or root) and a kernel with BTF; kview_open says why when it cannot. */
#ifndef VTPIN_KERNEL_KVIEW_H
#define VTPIN_KERNEL_KVIEW_H

#include <stddef.h>
#include <stdint.h>

#include "kstate.h"

/* A finished off-CPU interval of a tracked thread, or one in progress. */
struct kview_interval {
    int32_t tid; /* host tid */
    int state;   /* enum kernel_state */
    int64_t start_ns, end_ns, rq_ns;
    int32_t syscall; /* -1: none */
    int stack_id;    /* < 0: none */
    /* the carrier's JavaThread at switch out (kview_java): */
    int64_t vthread_id; /* the virtual thread mounted, 0: none, -1: not known */
    int java_wait;      /* enum java_wait (offcpu.h), 0: not known */
    int park_why;       /* enum park_why (kstate.h) of a park on the carrier, 0: not known */
    uint64_t user_bp;   /* in progress (kview_times): its user rbp at the switch out, 0: not read */
    /* born: not an interval, but thread tid of watched process tgid was just created (kview_watch_process) */
    int born;
    /* jvm: not an interval, but process tgid just began to run java (kview_find_jvms) */
    int jvm;
    int32_t tgid;
};

struct kview_times {
    uint64_t on_ns, off_ns, rq_ns, switches; /* the interval in progress included */
    uint64_t preempt_ns;                     /* off_ns switched out runnable (a part of rq_ns) */
    int64_t off_since;                       /* 0 while on CPU */
    int state;                               /* of the interval in progress */
    int32_t syscall;
    int stack_id;
    int64_t vthread_id; /* of the interval in progress, as kview_interval's */
    int java_wait;
    int park_why;
    uint64_t user_bp; /* of the interval in progress: its user rbp at the switch out, 0: not read */
};

struct kview;

/* Opens, loads and attaches the program. 0, or -errno with why[] saying why
 * in words (no privilege, no BTF, built without it, load failure). */
int kview_open(struct kview **out, uint64_t kernel_min_ns, char *why, size_t whylen);
void kview_close(struct kview *kv);
/* A descriptor that is readable when intervals wait (for epoll). */
int kview_fd(const struct kview *kv);
/* Tracks tid. A thread already asleep when tracked has no switch out to
 * start its interval: asleep (NULL: it is not) seeds one from what /proc says
 * (off_since > 0, state, syscall; its stack id is then KVIEW_STACK_PROC) and,
 * for a thread whose JavaThread was read from outside, what it was doing
 * (vthread_id -1 and java_wait 0: not known). */
#define KVIEW_STACK_PROC (-2)
struct kview_seed {
    int64_t off_since;
    int state;
    int32_t syscall;
    int64_t vthread_id;
    int java_wait;
};
/* 0, 1 when tid was tracked already (e.g. from its birth, kview_watch_process: asleep is not used), -errno. */
int kview_track(struct kview *kv, int32_t tid, const struct kview_seed *asleep);
/* on: from now on every new thread of process tgid is tracked from its birth (its first sleep has
 * its start), and one that ends before kview_java was given for it is untracked; off: no more. */
int kview_watch_process(struct kview *kv, int32_t tgid, int on);
/* on: a process that begins to run a program named java is told at once (a kview_interval with jvm
 * set); off: no more. -ENOTSUP when the kernel refused that hook. */
int kview_find_jvms(struct kview *kv, int on);
/* What tid's JavaThread said, read from outside, while it sleeps in the interval that began at
 * off_since, when its switch out had nothing to read it with: that interval says it. 0 or -errno. */
int kview_seed_java(struct kview *kv, int32_t tid, int64_t off_since, int64_t vthread_id, int java_wait, int park_why);
int kview_untrack(struct kview *kv, int32_t tid);
/* Where tid's JavaThread keeps what is read at each switch out (the agent's
 * ThreadLayout, offsets in bytes): from then on its intervals say which virtual
 * thread was mounted and what it waited for. 0 or -errno. */
struct kview_java_layout {
    uint32_t thread_obj, vthread, pending_monitor, waiting_monitor, thread_state, tid;
    int32_t state_blocked, state_in_native;
    uint32_t vt_state; /* VirtualThread.state's offset, 0: not read (kstate.h java_wait_park) */
    /* why a park on the carrier could not unmount (kstate.h park_why_of): JavaThread::_held_monitor_count,
     * JavaThread::_cont_entry, ContinuationEntry::_pin_count (0: not read) and PARK_RULE_* */
    uint32_t held_monitors, cont_entry, pin_count, park_rule;
};
int kview_java(struct kview *kv, int32_t tid, uint64_t java_thread, const struct kview_java_layout *l);
/* Times of a tracked thread at now (CLOCK_MONOTONIC). 0 or -ENOENT. */
int kview_times(struct kview *kv, int32_t tid, int64_t now, struct kview_times *out);
/* Calls cb for every finished interval waiting. Returns how many, or -errno. */
typedef void (*kview_cb)(void *arg, const struct kview_interval *iv);
int kview_consume(struct kview *kv, kview_cb cb, void *arg);
/* The kernel stack stack_id, innermost first: up to cap addresses; returns
 * how many (0 when unknown). */
int kview_stack(struct kview *kv, int stack_id, uint64_t *ips, int cap);
/* on (the default): every interval wakes the reader of kview_fd; off: only a ring buffer a quarter
 * full does, and the caller reads it on its own schedule (kview_consume). */
void kview_wake_each(struct kview *kv, int on);
/* Intervals lost to a full ring buffer. */
uint64_t kview_lost(struct kview *kv);

#endif
