/* The enums of why a carrier is off CPU, shared by the BPF program (offcpu.bpf.c), its
 * loader (kview.c) and the wire: its values are vtpin.v1.KernelState's (proto/vtpin.proto),
 * so a state goes from the kernel to a recording without a table, and its name comes from
 * wire_kernel_state_name (proto/wire_names.h). No typedefs here: the BPF side includes it too. */
#ifndef VTPIN_KERNEL_KSTATE_H
#define VTPIN_KERNEL_KSTATE_H

enum kernel_state {
    KSTATE_UNKNOWN = 0,  /* stopped, traced, ...: none of the below */
    KSTATE_RUNNABLE = 1, /* preempted or woken: waits on a run queue */
    KSTATE_SLEEPING = 2, /* TASK_INTERRUPTIBLE (S) */
    KSTATE_DISK = 3,     /* TASK_UNINTERRUPTIBLE (D) */
};

/* What the carrier's JavaThread was doing at switch out, as the kernel view
 * read it: vtpin.v1.JavaWait's values (kglue.c checks), the same way. */
enum java_wait {
    JAVA_WAIT_UNKNOWN = 0,
    JAVA_WAIT_BLOCKED = 1, /* _thread_blocked, no monitor, waiting on a condition: parked (or a VM monitor) */
    JAVA_WAIT_MONITOR_ENTER = 2,
    JAVA_WAIT_MONITOR_WAIT = 3,
    JAVA_WAIT_IN_NATIVE = 4,
    JAVA_WAIT_OTHER = 5, /* in Java or the VM, asleep in another system call than futex (or unknown) */
    JAVA_WAIT_VM = 6,    /* waiting on the VM (a safepoint, a VM lock or condition variable): not a park */
};

/* A parked JavaThread waits in pthread_cond_(timed)wait, which glibc makes a FUTEX_WAIT_BITSET;
 * HotSpot's safepoint barrier waits with a plain FUTEX_WAIT, its locks too (pthread_mutex_lock),
 * and its short sleeps (os::naked_short_sleep) are no futex at all. */
#define JAVA_WAIT_FUTEX_WAIT_BITSET 9
#define JAVA_WAIT_FUTEX_FLAGS (128 | 256) /* FUTEX_PRIVATE_FLAG, FUTEX_CLOCK_REALTIME */
#define JAVA_WAIT_NOT_FUTEX (-2)          /* java_wait_of's futex_op: asleep in a system call that is not futex */

/* The java_wait of a sleeping JavaThread: its _thread_state against the layout's blocked and
 * in-native values, its pending (contended entry) and waiting (Object.wait) monitors, and the
 * futex op it sleeps in (-1: not known; JAVA_WAIT_NOT_FUTEX: another system call). The BPF program
 * reads these at a switch out; the collector reads them through /proc for a thread already asleep
 * when it is tracked. */
static inline __attribute__((always_inline)) int java_wait_of(int thread_state, int state_blocked, int state_in_native,
                                                              unsigned long long pending, unsigned long long waiting,
                                                              long long futex_op)
{
    if (pending)
        return JAVA_WAIT_MONITOR_ENTER;
    if (waiting)
        return JAVA_WAIT_MONITOR_WAIT;
    if (thread_state == state_blocked &&
        (futex_op == JAVA_WAIT_NOT_FUTEX ||
         (futex_op >= 0 && (futex_op & ~JAVA_WAIT_FUTEX_FLAGS) != JAVA_WAIT_FUTEX_WAIT_BITSET)))
        return JAVA_WAIT_VM; /* a safepoint's barrier, a VM lock, a VM sleep: not a park */
    if (thread_state == state_blocked)
        return JAVA_WAIT_BLOCKED;
    if (thread_state == state_in_native)
        return JAVA_WAIT_IN_NATIVE;
    /* In the VM's own code (_thread_in_vm), asleep in a futex: a lock or condition variable taken
     * without a safepoint check (a thread start waiting for its child, a handshake), or the C
     * library's under it (malloc). Java code makes no system call. */
    if (futex_op >= 0)
        return JAVA_WAIT_VM;
    return JAVA_WAIT_OTHER;
}

/* java.lang.VirtualThread's states of a virtual thread that parks on its carrier (VirtualThread.java:
 * PINNED, TIMED_PINNED; the same values on 21-27). */
#define JAVA_VT_PINNED 5
#define JAVA_VT_TIMED_PINNED 8

/* A blocked carrier with a virtual thread mounted parks it (a pin) only when that virtual thread's
 * state says so; otherwise it waits on the VM in a condition variable that looks like a park (a GC
 * it asked for, a VM lock). wait from java_wait_of; vt_state_read 0 when the state was not read
 * (an agent's layout: the rule is java_wait_of's alone). */
static inline __attribute__((always_inline)) int java_wait_park(int wait, int vt_state_read, int vt_state)
{
    if (wait == JAVA_WAIT_BLOCKED && vt_state_read && vt_state != JAVA_VT_PINNED && vt_state != JAVA_VT_TIMED_PINNED)
        return JAVA_WAIT_VM;
    return wait;
}

/* Why a virtual thread that parks on its carrier could not unmount, as the JDK's freeze decides it
 * (continuationFreezeThaw.cpp, freeze_internal, 21-27): a critical section first (its
 * ContinuationEntry's _pin_count), then monitors held (JavaThread::_held_monitor_count, which 26 and
 * later no longer have), then a frame it cannot freeze: a native or VM frame. The two counts are read
 * from the JavaThread while it parks on its carrier, where they are what they were at the failed
 * freeze (its stack has not changed). */
enum park_why {
    PARK_WHY_UNKNOWN = 0,
    PARK_WHY_CRITICAL_SECTION = 1,
    PARK_WHY_MONITOR = 2,
    PARK_WHY_NATIVE = 3,
};

/* park_rule bits: what a JVM lets the kernel view read of that decision (collector/kernel/hotspot.c). */
#define PARK_RULE_PIN_COUNT 1u /* ContinuationEntry::_pin_count is read */
#define PARK_RULE_NO_CS 2u     /* it is not, and the JDK's own code enters no critical section (21, measured) */
#define PARK_RULE_HELD 4u      /* JavaThread::_held_monitor_count is read */
#define PARK_RULE_NO_HELD 8u   /* the JVM has no such count (26 and later: its freeze does not look) */

/* The reason of a park on the carrier, by the JDK's order; unknown when a step it needs was not read. */
static inline __attribute__((always_inline)) int park_why_of(unsigned int rule, unsigned int pin_count, long long held)
{
    if (rule & PARK_RULE_PIN_COUNT) {
        if (pin_count > 0)
            return PARK_WHY_CRITICAL_SECTION;
    } else if (!(rule & PARK_RULE_NO_CS)) {
        return PARK_WHY_UNKNOWN;
    }
    if (rule & PARK_RULE_HELD) {
        if (held > 0)
            return PARK_WHY_MONITOR;
    } else if (!(rule & PARK_RULE_NO_HELD)) {
        return PARK_WHY_UNKNOWN;
    }
    return PARK_WHY_NATIVE;
}

#endif
