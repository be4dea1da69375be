/* The one enum of why a carrier is off CPU, shared by the BPF program (offcpu.bpf.c), its
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

#endif
