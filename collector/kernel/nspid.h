/* Thread ids across pid namespaces: an agent in a container reports the tids
 * of its own namespace; the kernel view needs the collector's (the host's). */
#ifndef VTPIN_KERNEL_NSPID_H
#define VTPIN_KERNEL_NSPID_H

#include <stdint.h>
#include <sys/types.h>

/* The tid, in the namespace of proc_root (normally "/proc"), of the thread of
 * process pid (as that namespace sees it, e.g. SO_PEERCRED's) whose innermost
 * namespace tid is ns_tid: scans proc_root/pid/task/x/status for "NSpid:".
 * 0 with *tid, -ESRCH when no thread matches, -errno. */
int nspid_host_tid(const char *proc_root, pid_t pid, int32_t ns_tid, int32_t *tid);

/* Process pid of proc_root's namespace as it sees itself: *ns_pid, its pid in
 * its innermost pid namespace (the last number of "NSpid:" in
 * proc_root/pid/status; pid itself when it shares proc_root's namespace), and
 * *pidns, the inode of that namespace (proc_root/pid/ns/pid; 0 when it cannot
 * be read). 0, or -errno when the status file cannot be read (*ns_pid -1). */
int nspid_process(const char *proc_root, pid_t pid, int64_t *ns_pid, uint64_t *pidns);

#endif
