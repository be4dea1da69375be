/* Which kernel intervals belong to which pin: the carriers the kernel view
 * tracks (host tid -> the connection that announced it and its own tid), the
 * pin in progress on each, and a few recent intervals waiting for a pin.
 *
 * An interval is kept (emitted) when it overlaps a pin of its carrier: the
 * pin in progress, one of the last KJOIN_PAST that ended, or, for an interval that ended
 * before the agent reported the pin (pins are reported at their threshold),
 * a pin starting later that it overlaps. Idle carriers' parks are not kept.
 *
 * Pure: no I/O, no clock. */
#ifndef VTPIN_KERNEL_KJOIN_H
#define VTPIN_KERNEL_KJOIN_H

#include <stddef.h>
#include <stdint.h>

#include "kview.h"

#define KJOIN_RECENT 64
#define KJOIN_PAST 16     /* ended pins remembered per carrier */
#define KJOIN_SNAPS 61    /* kernel occupancy snapshots: a window in 60 steps, and its start */
#define KJOIN_CREDITED 16 /* intervals held by the pin in progress, corrected when its end comes */

/* A carrier's cumulative kernel occupancy at t (kjoin_occupancy). */
struct kjoin_occ {
    uint64_t busy_ns, held_ns, idle_ns, runqueue_ns;
};
struct kjoin_snap {
    int64_t t;
    struct kjoin_occ occ;
};

struct kjoin_carrier {
    int32_t host_tid, ns_tid;
    void *owner;                /* the connection that announced it */
    int pin_open;               /* a pin in progress */
    uint64_t pin_id;            /* the latest pin */
    int64_t pin_start, pin_end; /* of the latest pin (pin_end 0 while open) */
    /* the last pins that ended, oldest first: the ring buffer can deliver an interval
     * after the agent's events for several back-to-back pins (after attach the
     * sampler splits a loop at each new park) */
    int64_t past_start[KJOIN_PAST], past_end[KJOIN_PAST];
    unsigned n_past;
    int64_t crossed_since;    /* off-CPU interval last seen crossing the minimum (kglue's scan) */
    int64_t look_every_ns;    /* kglue's scan looks at it this often (0: every scan, an agent's carrier) */
    int64_t next_look;        /* ... next at this time */
    char *proc_stack;         /* kernel stack from /proc when tracked asleep (KVIEW_STACK_PROC), "\n"-separated */
    const void *watcher;      /* the tracker's own, NULL for an agent's carrier (kglue: its kernel-only owner) */
    uint64_t held_ns;         /* finished off-CPU intervals: their part inside a pin (kernel occupancy) */
    uint64_t held_preempt_ns; /* the part of held_ns preempted (runnable) */
    /* Every held millisecond explained: finished mounted sleeps (kjoin_mounted_sleep), whole, and their
     * part inside pins. Counted once the JavaThread is known (java_known: some interval said). */
    uint64_t mounted_ns, mounted_in_pins_ns;
    int java_known;
    struct {
        int64_t start, end;
        uint64_t held;
        int preempt, mounted;
    } credited[KJOIN_CREDITED]; /* the latest intervals held by the open pin, oldest first */
    unsigned n_credited;
    struct kview_interval recent[KJOIN_RECENT]; /* not emitted yet, oldest first */
    unsigned n_recent;
    struct kjoin_snap snaps[KJOIN_SNAPS]; /* ring, oldest at snap_head once full */
    unsigned n_snaps, snap_head;
};

struct kjoin;

typedef void (*kjoin_emit)(void *arg, const struct kjoin_carrier *c, const struct kview_interval *iv);

/* max: carriers tracked at once. NULL on ENOMEM. */
struct kjoin *kjoin_new(size_t max);
void kjoin_free(struct kjoin *j);
size_t kjoin_count(const struct kjoin *j);

/* Tracks host_tid for owner (ns_tid: the agent's name for it). 1 when added,
 * 0 when already tracked, -ENOSPC at max, -ENOMEM. */
int kjoin_add(struct kjoin *j, void *owner, int32_t host_tid, int32_t ns_tid);
struct kjoin_carrier *kjoin_by_host(const struct kjoin *j, int32_t host_tid);
struct kjoin_carrier *kjoin_by_ns(const struct kjoin *j, const void *owner, int32_t ns_tid);
/* Forgets every carrier of owner, calling gone(arg, host_tid) for each. */
void kjoin_remove_owner(struct kjoin *j, const void *owner, void (*gone)(void *arg, int32_t host_tid), void *arg);
/* Removes owner's carrier host_tid (a thread that ended), calling gone for it. */
void kjoin_remove(struct kjoin *j, const void *owner, int32_t host_tid, void (*gone)(void *arg, int32_t host_tid),
                  void *arg);
/* Iteration: *pos = 0 to start; NULL at the end. */
struct kjoin_carrier *kjoin_next(const struct kjoin *j, size_t *pos);

/* A sleep (S or D) with a virtual thread mounted, not a wait on the VM itself (a
 * safepoint, a GC, a VM lock): the carrier held, as a pin holds it. The
 * kernel view counts every such sleep against the pins (mounted_ns,
 * mounted_in_pins_ns). An interval whose JavaThread was not read is not one. */
int kjoin_mounted_sleep(const struct kview_interval *iv);

/* A finished interval of a tracked carrier: emitted now when it overlaps a
 * pin, else kept for a pin reported later. Unknown tids are ignored. A
 * mounted sleep no pin claimed is emitted too when it leaves the kept ones
 * (the oldest of KJOIN_RECENT, or kjoin_flush): the recording holds every
 * held sleep, explained or not. Returns its carrier, NULL for an unknown tid. */
struct kjoin_carrier *kjoin_interval(struct kjoin *j, const struct kview_interval *iv, kjoin_emit emit, void *arg);
/* A pin started on c: the kept intervals that end after start, or after the
 * previous pin of c ended, are emitted. */
void kjoin_pin_start(struct kjoin *j, struct kjoin_carrier *c, uint64_t pin_id, int64_t start, kjoin_emit emit,
                     void *arg);
/* The part of iv inside c's latest pin: held time for the kernel occupancy. A
 * pin found while its carrier was asleep (it started inside iv) holds all of iv. An off-CPU interval lies inside at
 * most one pin (a pin starts and ends on CPU), so one pin is enough. Intervals emitted by kjoin_interval and
 * kjoin_pin_start are added to c->held_ns. */
uint64_t kjoin_held_part(const struct kjoin_carrier *c, const struct kview_interval *iv);

/* Kernel occupancy of a carrier since it was tracked; busy + held + idle is
 * all of that time:
 *   busy     on CPU, or preempted (runnable, switched out by the scheduler)
 *            outside a pin: a virtual thread mounted, or the pool's worker
 *            looking for work for a moment before it parks;
 *   held     off CPU inside a pin (pinned, native- or VM-blocked), from c->held_ns
 *            plus the interval in progress while a pin is open; it includes the
 *            wait for a CPU after the wakeup, and preemptions inside the pin;
 *   idle     the rest: parked with nothing mounted (an unpinned virtual thread
 *            unmounts before it parks), and off-CPU intervals inside pins shorter
 *            than --kernel-min, which are not seen one by one;
 *   runqueue the part of the three spent runnable, waiting for a CPU (preempted,
 *            or woken and not yet running): what no JVM tool sees.
 * t: the carrier's kernel times at now (kview_times). Pure. */
void kjoin_occupancy(const struct kjoin_carrier *c, const struct kview_times *t, int64_t now, struct kjoin_occ *out);

/* Sliding window: kjoin_snapshot keeps occ (c's occupancy at now) when at
 * least window_ns / (KJOIN_SNAPS - 1) has passed since the last snapshot.
 * kjoin_window gives occ minus the oldest snapshot no older than window_ns
 * (a window between window_ns minus one step and window_ns); all of occ (since
 * tracked) while no older snapshot was taken or none was dropped yet. Pure. */
void kjoin_snapshot(struct kjoin_carrier *c, int64_t now, int64_t window_ns, const struct kjoin_occ *occ);
void kjoin_window(const struct kjoin_carrier *c, int64_t now, int64_t window_ns, const struct kjoin_occ *occ,
                  struct kjoin_occ *out);

/* Emits the mounted sleeps of owner's carriers still kept (no pin claimed
 * them), and forgets them: before the connection's last word. */
void kjoin_flush(struct kjoin *j, const void *owner, kjoin_emit emit, void *arg);

/* Pin pin_id of owner ended at end (unknown ids are ignored). */
void kjoin_pin_end(struct kjoin *j, const void *owner, uint64_t pin_id, int64_t end);

#endif
