/* Types shared by the off-CPU BPF program (offcpu.bpf.c) and its loader
 * (kview.c). Fixed-width fields only: the BPF side sees them through
 * vmlinux.h, the user side through <linux/types.h>. */
#ifndef VTPIN_KERNEL_OFFCPU_H
#define VTPIN_KERNEL_OFFCPU_H

#define OFFCPU_MAX_TRACKED 4096
#define OFFCPU_STACK_DEPTH 32
#define OFFCPU_STACKS 4096

#include "kstate.h" /* why a carrier is off CPU: enum kernel_state; enum java_wait */

/* Value of the tracked map, one per carrier (host tid). The collector puts a
 * zeroed one in to track a thread; the program keeps it up to date. */
struct offcpu_carrier {
    __u64 on_ns, off_ns, rq_ns; /* cumulative since tracked (closed intervals) */
    __u64 switches;             /* switched out */
    __u64 on_since;             /* last switch in, 0 before the first */
    __u64 off_since;            /* last switch out, 0 while on CPU */
    __u64 woken_at;             /* last wakeup while off CPU, 0 if none */
    __u64 preempt_ns;           /* the part of off_ns switched out runnable (preempted) */
    __u32 state;                /* enum kernel_state of the interval in progress */
    __s32 syscall;              /* in progress at switch out, -1 if none */
    __s32 stack_id;             /* kernel stack at switch out, < 0 if none */
    __u32 java_wait;            /* enum java_wait at switch out (JAVA_WAIT_UNKNOWN: not read) */
    __s64 vthread_id;           /* mounted at switch out: 0 none, -1 not read */
    __u32 park_why;             /* enum park_why of a park on the carrier at switch out (kstate.h) */
    __u32 pad;
    __u64 user_bp; /* its user rbp at switch out (the frame pointer a native unwind needs: ustack.h), 0: none */
};

/* Value of the java map, one per carrier whose JavaThread the agent gave
 * (host tid): where to read it at switch out (the wire's ThreadLayout). */
struct offcpu_java {
    __u64 java_thread;
    __u32 thread_obj, vthread, pending_monitor, waiting_monitor, thread_state, tid; /* offsets */
    __s32 state_blocked, state_in_native;
    __u32 vt_state; /* VirtualThread.state in the object, 0: not read (java_wait_park) */
    /* why a park on the carrier could not unmount (kstate.h park_why_of); offsets 0: not read */
    __u32 held_monitors, cont_entry, pin_count; /* JavaThread's, JavaThread's, ContinuationEntry's */
    __u32 park_rule;                            /* PARK_RULE_* */
    __u32 pad;
};

/* Value of the seeds map: what the collector read, from outside, of a tracked thread's JavaThread
 * while it slept in the interval that began at off_since, whose switch out had nothing to read it
 * with (a thread tracked from its birth, before its JavaThread was known). Used for that interval
 * only, in place of the switch out's read. */
struct offcpu_seed {
    __u64 off_since;
    __s64 vthread_id;
    __u32 java_wait;
    __u32 park_why;
};

#define OFFCPU_MAX_WATCHED 1024

/* Ring buffer record: one finished off-CPU interval of at least kernel_min. */
struct offcpu_event {
    __u64 start_ns, end_ns; /* CLOCK_MONOTONIC */
    __u64 rq_ns;            /* the part spent runnable (woken, waiting for a CPU) */
    __u32 tid;              /* host tid */
    __u32 state;            /* enum kernel_state */
    __s32 syscall;
    __s32 stack_id;
    __s64 vthread_id; /* as in offcpu_carrier */
    __u32 java_wait;
    __u32 kind;     /* enum offcpu_kind */
    __u32 tgid;     /* OFFCPU_BORN: the watched process; OFFCPU_JVM: the process that runs java */
    __u32 park_why; /* enum park_why, for a park on the carrier (java_wait BLOCKED, a virtual thread PINNED) */
};

/* What a ring buffer record is. */
enum offcpu_kind {
    OFFCPU_INTERVAL = 0, /* an off-CPU interval */
    OFFCPU_BORN = 1,     /* a thread of a watched process was created (start_ns: then), and is tracked */
    OFFCPU_JVM = 2,      /* a process began to run a program named java (find_jvms): a JVM is starting */
};

#endif
