/* The enums of why a carrier is off CPU, shared by the BPF program (offcpu.bpf.c), its
 * loader (kview.c) and the wire: its values are vtpin.v1.KernelState's (proto/vtpin.proto),
 * so a state goes from the kernel to a recording without a table, and its name comes from
 * wire_kernel_state_name (proto/wire_names.h). No types here: the BPF side includes it too. */
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
    JAVA_WAIT_OTHER = 5,
    JAVA_WAIT_VM = 6, /* _thread_blocked on the VM (a safepoint, a VM lock): not a park */
};

#endif
