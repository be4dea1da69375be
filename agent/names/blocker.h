/* Who a pin waits for: the owner of the monitor a pinned virtual thread is
 * blocked entering, with its state and stack, or the object an Object.wait
 * waits to be notified on, or the thread running the static initializer a
 * class-initialization wait waits for, or the owner of the java.util.concurrent
 * lock a pinned park waits for. Looked up by the writer only, when a pin crosses
 * the threshold, never in a callback; at most BLOCKER_LOOKS_PER_SECOND looks
 * a second for monitors and locks together (the rest are counted), because JVMTI's
 * GetObjectMonitorUsage stops the JVM at a safepoint. */
#ifndef VTPIN_BLOCKER_H
#define VTPIN_BLOCKER_H

#include <jvmti.h>
#include <stdint.h>

#include "pin_rec.h"

#define BLOCKER_LOOKS_PER_SECOND 20
#define BLOCKER_CLASS_MAX 160
#define BLOCKER_CHAIN_MAX 3 /* hops past the owner: the chain names up to four threads */

enum blocker_what {
    BLOCKER_NONE = 0,
    BLOCKER_MONITOR = 1,    /* the owner of the monitor it is blocked entering */
    BLOCKER_NOTIFY = 2,     /* Object.wait: a notify on the object, which no thread owes */
    BLOCKER_CLASS_INIT = 3, /* the thread running the <clinit> of the class waited for */
    BLOCKER_LOCK = 4,       /* the exclusive owner of the j.u.c. lock a park waits for; none: held shared */
};

struct blocker {
    int what;                             /* enum blocker_what */
    char object_class[BLOCKER_CLASS_MAX]; /* the monitor's class, dotted; BLOCKER_CLASS_INIT: the class;
                                             BLOCKER_LOCK: the synchronizer's */
    int has_thread;                       /* the owner (the initializer) is known */
    char name[REC_NAME_MAX];
    int64_t id;
    int is_virtual;
    char carrier[REC_NAME_MAX]; /* a virtual owner's carrier when mounted, "" otherwise */
    int carrier_tid;            /* 0 unless mounted */
    const char *state;          /* "running", "sleeping", "parked", "waiting", "blocked", "in native", "waiting for a
                                   carrier" (a virtual thread, runnable and unmounted) */
    struct pin_rec *stack;      /* the owner's frames (frame_count 0: none); the module's own buffer */
};

/* What the owner itself waits for, then that one's owner, ...: hop i says what thread i waits for
 * (thread 0 the blocker's owner) and who holds it. Only a j.u.c. lock the thread is parked on (JNI
 * reads) or a monitor it is blocked entering (a look from the same budget) is followed. The chain
 * ends at a thread that waits for neither, an owner not known, the budget, BLOCKER_CHAIN_MAX hops,
 * or a thread already named (a cycle: cycle set, the deadlock check names it). */
struct blocker_hop {
    int what; /* BLOCKER_LOCK or BLOCKER_MONITOR */
    char object_class[BLOCKER_CLASS_MAX];
    int has_thread;
    char name[REC_NAME_MAX];
    int64_t id;
    int is_virtual;
    char carrier[REC_NAME_MAX];
    const char *state;
};
struct blocker_chain {
    struct blocker_hop hop[BLOCKER_CHAIN_MAX];
    int n;
    int cycle; /* the last hop's owner is a thread named before it */
};

int blocker_init(jvmtiEnv *jvmti, unsigned depth, unsigned jdk_feature); /* 0 or -ENOMEM */
void blocker_fini(void);

/* Looks at what the virtual thread waiter (mounted, pinned) waits for. 1 and *out filled, 0
 * nothing known (no contended monitor: the entry won meanwhile, or its Object.wait ended before or
 * between the looks; counted in blocker_skipped), -EAGAIN over this second's budget (counted in
 * blocker_skipped). chain: where not NULL, what the owner itself waits for (struct blocker_chain). */
int blocker_find(JNIEnv *jni, jthread waiter, int64_t now_ns, struct blocker *out, struct blocker_chain *chain);

/* A thread's JVMTI state in a word, as blockers and deadlocks say it: "sleeping", "parked",
 * "waiting", "blocked", "in native", "running"; a runnable virtual thread on no carrier is
 * "waiting for a carrier" (virtual_on_no_carrier). */
const char *blocker_state_name(jint state, int virtual_on_no_carrier);

/* Looks at the lock a parked virtual thread waiter (mounted, pinned) waits for: when its
 * parkBlocker is an AbstractOwnableSynchronizer (ReentrantLock, a ReentrantReadWriteLock, any AQS
 * lock), its exclusive owner, as blocker_find names a monitor's. 1 and *out filled (no owner: held
 * shared, or released meanwhile), 0 parked on nothing such (a sleep, a condition, a future),
 * -EAGAIN over this second's looks (counted in blocker_skipped). JNI field reads before the budget:
 * a park on no lock costs no look. chain as blocker_find's. */
int blocker_find_lock(JNIEnv *jni, jthread waiter, int64_t now_ns, struct blocker *out, struct blocker_chain *chain);
/* The owner of the monitor waiter is blocked entering, as blocker_find finds it (JVMTI, then on 24+
 * the carriers and the JDK's thread snapshots): a new local ref, with *monitor the monitor (a local
 * ref, the caller's to delete), or NULL (not blocked entering one, no owner known, or the looks of
 * this second spent). One look from blocker_find's budget. */
jthread blocker_monitor_owner(JNIEnv *jni, jthread waiter, int64_t now_ns, jobject *monitor);
/* The same without a look: 1 when thread is parked on such a lock, with *sync its synchronizer and
 * *owner its exclusive owner (local refs; *owner NULL: none), else 0. JNI reads only. */
int blocker_lock_of(JNIEnv *jni, jthread thread, jobject *sync, jthread *owner);
/* obj's class, dotted, into out[cap] ("" when JVMTI cannot say). */
void blocker_class_name(JNIEnv *jni, jobject obj, char *out, size_t cap);

/* Looks for the thread initializing the class a virtual thread waiter waits for (VM_BLOCK):
 * among the first BLOCKER_LOOK_THREADS platform threads and the carriers' mounted virtual
 * threads, one with a <clinit> of cls on its stack; cls "" (Class.forName: the bytecode does not
 * say), the one thread initializing a class when exactly one class is being initialized. 1 and
 * *out filled (object_class the class), 0 none found, -EAGAIN over BLOCKER_INIT_LOOKS_PER_SECOND
 * (counted in blocker_skipped). From the watchdog, on the writer thread, as the pin starts. */
#define BLOCKER_LOOK_THREADS 256
#define BLOCKER_INIT_LOOKS_PER_SECOND 10
int blocker_find_initializer(JNIEnv *jni, jthread waiter, const char *cls, int64_t now_ns, struct blocker *out);

uint64_t blocker_skipped(void);
/* A pin whose block was over before its look could begin (its thread no longer on the carrier):
 * counted with the skipped, as a look that found the block over is. */
void blocker_too_late(void);

#endif
