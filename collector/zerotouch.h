/* Zero-touch (docs/zero-touch.md): the HotSpot JVMs of the host that no agent
 * speaks for, watched with nothing loaded into them.
 *
 * Every second it lists /proc: a process that maps a libjvm.so is a JVM. It
 * reads that JVM's layout and thread list from outside (kernel/hotspot.h), and
 * has the kernel view track each Java thread, reading its JavaThread at every
 * switch out. A pin is a thread with a virtual thread mounted that sleeps
 * (not runnable, not on the VM itself) for at least --kernel-min: parked on
 * its carrier (the reason needs the agent: unknown), entering a monitor, in
 * Object.wait, or in native code. It is seen as it crosses the minimum, and
 * ends when the thread runs again.
 *
 * A JVM's first pin opens its session. The session's frames (Hello, Carrier,
 * StringDef, PinStart, PinEnd, Goodbye) are made here and handed to the host,
 * which treats them as an agent's: status, top, metrics, alerts and
 * recordings see such a JVM as any other. A JVM with the vtpin agent in it is
 * the agent's: it is not watched, and its agent's Hello ends a watch.
 *
 * With --attach-on-pin (ztattach.h) a JVM that pins long enough gets the
 * agent, which speaks for it from then on.
 *
 * Never ptrace, never stops a JVM, never guesses a layout: a JVM it cannot
 * read is listed with why. */
#ifndef VTPIN_COLLECTOR_ZEROTOUCH_H
#define VTPIN_COLLECTOR_ZEROTOUCH_H

#include <stdint.h>
#include <sys/types.h>

#include "common/json.h"
#include "wire.h"
#include "ztattach.h"

struct kglue;
struct loop;

/* What zero-touch needs of the collector. */
struct zt_host {
    void *arg;
    /* A hidden peer for JVM pid (a host pid) run by uid: the kernel view's owner of its threads
     * and, once its Hello is handed over, its session. NULL: cannot (said in the log). */
    void *(*open)(void *arg, int32_t pid, uid_t uid);
    /* One frame as if owner had sent it. 0, or -1 when owner was closed (e.g. refused). */
    int (*frame)(void *arg, void *owner, const uint8_t *frame, size_t len);
    /* Ends owner: the JVM exited, or an agent speaks for it now. */
    void (*close)(void *arg, void *owner, const char *why);
};

struct zt_config {
    const char *proc_root;         /* "/proc" */
    uint64_t min_ns;               /* --kernel-min: the shortest pin */
    const char *version;           /* the collector's, for the Hello */
    unsigned max_jvms;             /* watched at once */
    struct ztattach_config attach; /* --attach-on-pin (min_ns < 0: off) */
    int32_t under_pid;             /* --jvms=under:PID: only JVMs descended from it (vtpin run's); 0: all */
};

struct zerotouch;

/* 0, -ENOMEM. k must be enabled (kglue_enabled). */
int zerotouch_new(struct zerotouch **out, struct kglue *k, const struct zt_host *host, const struct zt_config *cfg);
/* Ends every watch (host->close for each). */
void zerotouch_free(struct zerotouch *z);
/* Adds its timer to the loop: every second it lists /proc and follows the JVMs' thread lists; every
 * 10 ms for a while after a JVM made a thread. 0 or -errno. */
int zerotouch_watch(struct zerotouch *z, struct loop *loop);
void zerotouch_unwatch(struct zerotouch *z, struct loop *loop);
/* Finds JVMs that started, forgets those that ended, and follows each one's threads. */
void zerotouch_scan(struct zerotouch *z);
/* An agent of this collector speaks for JVM pid (a host pid) now: its watch ends. Its Hello's layout
 * (NULL: none) is checked against the one read from outside, if one was: status says whether they agree
 * (`agent_layout`), and a disagreement is logged, field by field. */
void zerotouch_agent_hello(struct zerotouch *z, int64_t pid, const Vtpin__V1__ThreadLayout *layout);
/* "zero_touch": {jvms watched, each with its state and why}; only uid's when mine_only. */
void zerotouch_status_json(struct zerotouch *z, struct json *js, int mine_only, uid_t uid);

#endif
