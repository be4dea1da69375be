/* The kernel view inside the collector: opens it (--kernel=auto|on|off),
 * tracks the carriers agents announce (their tids translated to the
 * collector's pid namespace through /proc/PEER/task/x/status NSpid), writes
 * the off-CPU intervals that overlap pins into the owning connection's
 * recording (KernelInterval) and the carriers' kernel times when it ends
 * (KernelTimes), and answers status/top with per-carrier kernel times.
 *
 * The ring buffer and a 10 ms timer are in the collector's epoll loop; the
 * timer scans the tracked carriers so one staying off CPU is seen as it
 * crosses --kernel-min, not when it wakes. */
#ifndef VTPIN_KERNEL_KGLUE_H
#define VTPIN_KERNEL_KGLUE_H

#include <stdint.h>
#include <sys/types.h>

#include "common/json.h"
#include "kview.h"
#include "loop.h"
#include "wire.h"

enum kglue_mode { KGLUE_AUTO = 0, KGLUE_ON = 1, KGLUE_OFF = 2 };

struct kglue_config {
    enum kglue_mode mode;
    uint64_t min_ns;       /* --kernel-min: shortest interval recorded */
    unsigned max_carriers; /* tracked at once */
    const char *proc_root; /* "/proc" (tests may point elsewhere) */
    int64_t window_ns;     /* kernel occupancy percentages are over this sliding window (0: 60 s) */
};

/* Where intervals of a connection go (its recording); owner as given below. */
typedef void (*kglue_write)(void *owner, const uint8_t *frame, size_t len);

struct kglue;

/* Opens the kernel view per cfg->mode. auto: 0 even when unavailable (see
 * kglue_enabled/kglue_reason). on: -errno when unavailable, why[] says why.
 * off: 0, disabled. -ENOMEM. */
int kglue_open(struct kglue **out, const struct kglue_config *cfg, kglue_write write, char *why, size_t whylen);
void kglue_close(struct kglue *k);
int kglue_enabled(const struct kglue *k);
const char *kglue_reason(const struct kglue *k); /* why it is disabled ("" when enabled) */

/* Adds the ring buffer and the scan timer to the loop (no-op when disabled). */
int kglue_watch(struct kglue *k, struct loop *loop);
void kglue_unwatch(struct kglue *k, struct loop *loop);

/* An agent event of connection owner, whose process is peer_pid (SO_PEERCRED):
 * Carrier and PinStart track the carrier; PinStart/PinEnd delimit pins. */
/* An agent's Hello (connection owner): the layout its carriers' JavaThreads are read with. */
void kglue_agent_hello(struct kglue *k, const void *owner, const Vtpin__V1__Hello *h);
void kglue_agent_event(struct kglue *k, void *owner, pid_t peer_pid, const WireEvent *ev);
/* Connection owner ended: its carriers' KernelTimes are written, then untracked. */
void kglue_owner_gone(struct kglue *k, void *owner, int64_t now);

/* JVMs with no agent (zerotouch.h): process pid's new threads are tracked from their birth, and
 * owner reads its threads' JavaThreads with layout; cb is told
 * every interval of theirs: a finished one (end_ns > 0), and one in progress as it crosses
 * --kernel-min (end_ns 0); and, with ns_tid -1 and iv->born, that the process has a new thread.
 * cb may feed owner's frames back (kglue_agent_event) and close owner.
 * 0, -EEXIST, -ENOSYS (the kernel view is off), -ENOMEM. kglue_owner_gone forgets it. */
typedef void (*kglue_java_cb)(void *arg, void *owner, int32_t ns_tid, const struct kview_interval *iv);
int kglue_kernel_owner(struct kglue *k, void *owner, pid_t pid, const struct kview_java_layout *layout,
                       kglue_java_cb cb, void *arg);
/* Tracks thread ns_tid of process pid for owner, reading its JavaThread java_thread at each switch
 * out: 0 with *host_tid (may be NULL), or -errno. */
int kglue_track_java(struct kglue *k, void *owner, pid_t pid, int32_t ns_tid, uint64_t java_thread, int32_t *host_tid);
/* Off-CPU intervals the ring buffer had no room for, since the kernel view started (0 without one). */
uint64_t kglue_intervals_lost(struct kglue *k);
/* 1 with *off_since when tracked thread host_tid sleeps in an interval whose switch out had no
 * JavaThread to read (tracked from its birth, or while asleep), else 0. */
int kglue_unread_sleep(struct kglue *k, int32_t host_tid, int64_t *off_since);
/* What its JavaThread says, read from outside during that sleep: the interval that began at
 * off_since is told with it, as if read at its switch out (with the futex it sleeps in). 0, -EAGAIN
 * (it woke), -errno. */
struct kglue_java_now {
    int64_t vthread_id;    /* mounted, 0 none */
    int32_t vthread_state; /* its VirtualThread.state */
    int32_t thread_state;
    uint64_t pending_monitor, waiting_monitor;
    int park_why; /* enum park_why (kstate.h), for a park on the carrier */
};
int kglue_seed_java(struct kglue *k, void *owner, int32_t host_tid, int64_t off_since,
                    const struct kglue_java_now *java);
/* Reads the intervals waiting in the ring buffer now (a kernel-only owner about to end: its last pins). */
void kglue_drain(struct kglue *k);
/* cb(arg, pid) as soon as a process begins to run a program named java (a JVM starting); cb NULL: no
 * more. -ENOSYS (the kernel view is off), -ENOTSUP (the kernel refused the hook: only the caller's own
 * looks at /proc find JVMs). */
typedef void (*kglue_jvm_cb)(void *arg, int32_t pid);
int kglue_find_jvms(struct kglue *k, kglue_jvm_cb cb, void *arg);
/* Stops tracking owner's thread host_tid (it ended). */
void kglue_untrack_java(struct kglue *k, void *owner, int32_t host_tid);

/* Kernel occupancy (kjoin.h has the model): busy, held and idle time since
 * tracking began, and the part of it spent waiting for a CPU, summed over carriers. */
struct kglue_occ {
    uint64_t busy_ns, held_ns, idle_ns, runqueue_ns;         /* since tracked */
    uint64_t w_busy_ns, w_held_ns, w_idle_ns, w_runqueue_ns; /* over the sliding window */
    unsigned carriers;                                       /* how many were summed */
};
/* Adds carrier tid of owner at now to *sum: 0, or -ENOENT when the kernel view
 * does not track it (or is off). Reads the intervals waiting first, so that a
 * finished pin's asleep time is held, not idle. */
int kglue_occupancy_add(struct kglue *k, const void *owner, int32_t tid, int64_t now, struct kglue_occ *sum);
/* key: {carriers, busy_ns, held_ns, idle_ns, runqueue_ns (since tracked),
 * busy_pct, held_pct, idle_pct, runqueue_pct (over the window, of busy + held
 * + idle: runqueue is a part of them)}; null when no carrier was summed. */
void kglue_occupancy_json(struct json *js, const char *key, const struct kglue_occ *o);

/* Whether carrier tid of owner is asleep now (off CPU, sleeping or disk, not
 * runnable): 1 with *since (when it left the CPU), *state and *syscall (static
 * names, syscall NULL when none); 0 when not; -ENOENT when not tracked. */
int kglue_asleep(struct kglue *k, const void *owner, int32_t tid, int64_t now, int64_t *since, const char **state,
                 const char **syscall);

/* "kernel_view": {...} for status. */
void kglue_status_json(struct kglue *k, struct json *js, int64_t now);
/* "kernel": {...} for carrier tid of owner (null when not tracked). */
void kglue_carrier_json(struct kglue *k, struct json *js, const void *owner, int32_t tid, int64_t now);

#endif
