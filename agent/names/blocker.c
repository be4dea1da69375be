#include "blocker.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bytecode.h"
#include "carriers.h"
#include "clock.h"
#include "jthread.h"
#include "self_cost.h"
#include "vowner.h"

/* The JDKs that mounted_owner asks GetOwnedMonitorInfo of a virtual thread on: 24+ need it, and there its
 * refs are the caller's (25 and 27 under -Xcheck:jni here; 21's are made in the target's carrier). */
#define JVMTI_OWNED_MONITORS_OF_VIRTUAL 24

static struct {
    jvmtiEnv *jvmti;
    unsigned depth;
    unsigned jdk_feature;
    struct pin_rec *stack;
    struct per_second budget, init_budget;
    uint64_t skipped;
} blk;

/* java.util.concurrent's lock owners: resolved at the first look, kept for the JVM's life (a
 * bootstrap class is never unloaded, so the next attach reuses them). */
static struct {
    int resolved;   /* 0 not yet, 1 found, -1 not in this JDK */
    jclass owned;   /* AbstractOwnableSynchronizer: ReentrantLock's, ReentrantReadWriteLock's, any AQS */
    jfieldID owner; /* its exclusiveOwnerThread */
} locks;

int blocker_init(jvmtiEnv *jvmti, unsigned depth, unsigned jdk_feature)
{
    blk.jvmti = jvmti;
    blk.depth = depth;
    blk.jdk_feature = jdk_feature;
    blk.stack = calloc(1, pins_record_size(depth));
    return blk.stack ? 0 : -ENOMEM;
}

void blocker_fini(void)
{
    free(blk.stack);
    memset(&blk, 0, sizeof(blk));
}

uint64_t blocker_skipped(void)
{
    return blk.skipped;
}

void blocker_too_late(void)
{
    blk.skipped++;
}

void blocker_class_name(JNIEnv *jni, jobject obj, char *out, size_t cap)
{
    out[0] = '\0';
    jclass cls = (*jni)->GetObjectClass(jni, obj);
    char *sig = NULL;
    if (cls && (*blk.jvmti)->GetClassSignature(blk.jvmti, cls, &sig, NULL) == JVMTI_ERROR_NONE) {
        bytecode_class_name(sig, out, cap);
        (*blk.jvmti)->Deallocate(blk.jvmti, (unsigned char *)sig);
    }
    if (cls)
        (*jni)->DeleteLocalRef(jni, cls);
}

const char *blocker_state_name(jint st, int virtual_on_no_carrier)
{
    if (st & JVMTI_THREAD_STATE_SLEEPING)
        return "sleeping";
    if (st & JVMTI_THREAD_STATE_PARKED)
        return "parked";
    if (st & JVMTI_THREAD_STATE_IN_OBJECT_WAIT)
        return "waiting";
    if (st & JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER)
        return "blocked";
    if (st & JVMTI_THREAD_STATE_IN_NATIVE)
        return "in native";
    if (st & JVMTI_THREAD_STATE_WAITING)
        return "waiting";
    /* runnable but on no carrier: it waits for one, which the pinned carriers may never free */
    return virtual_on_no_carrier ? "waiting for a carrier" : "running";
}

/* The virtual thread mounted on carrier slot i (a new local ref, *slot its slot), or NULL. */
static jthread mounted_on(JNIEnv *jni, unsigned i, struct carrier_slot **slot)
{
    struct carrier_slot *c = carriers_slot(i);
    jthread vt = NULL;
    if (!c || atomic_load(&c->state) != SLOT_LIVE || jthread_mounted(jni, c->thread, &vt) != 0)
        return NULL;
    *slot = c;
    return vt;
}

/* A virtual owner's carrier, when it is mounted: the carriers' mounted virtual threads by id. */
static void carrier_of(JNIEnv *jni, int64_t vid, struct blocker *out)
{
    for (unsigned i = 0; i < carriers_capacity(); i++) {
        struct carrier_slot *c = NULL;
        jthread vt = mounted_on(jni, i, &c);
        if (!vt)
            continue;
        int same = jthread_id(jni, vt) == vid;
        (*jni)->DeleteLocalRef(jni, vt);
        if (same) {
            memcpy(out->carrier, c->name, REC_NAME_MAX);
            out->carrier_tid = c->tid;
            return;
        }
    }
}

/* A mounted virtual thread owning monitor, found through the carriers (GetOwnedMonitorInfo): on
 * 24+ GetObjectMonitorUsage names no virtual owner, mounted or not. A new local ref, or NULL.
 * 24+ only (JVMTI_OWNED_MONITORS_OF_VIRTUAL): before, GetOwnedMonitorInfo of a virtual thread makes
 * its local refs in the target's carrier, not the caller (JDK 21's
 * VirtualThreadGetOwnedMonitorInfoClosure passes the target as the calling thread), and the carrier
 * reuses those slots at its next native call: deleting them wrote NULL into the carrier's own local
 * refs. On 21-23 GetObjectMonitorUsage names a mounted virtual owner itself. */
static jthread mounted_owner(JNIEnv *jni, jobject monitor, jthread waiter)
{
    jvmtiEnv *jvmti = blk.jvmti;
    if (blk.jdk_feature < JVMTI_OWNED_MONITORS_OF_VIRTUAL)
        return NULL;
    for (unsigned i = 0; i < carriers_capacity(); i++) {
        struct carrier_slot *c = NULL;
        jthread vt = mounted_on(jni, i, &c);
        if (!vt)
            continue;
        jint n = 0;
        jobject *owned = NULL;
        int owns = 0;
        if (!(*jni)->IsSameObject(jni, vt, waiter) &&
            COUNTED(CALL_GET_OWNED_MONITOR_INFO, (*jvmti)->GetOwnedMonitorInfo(jvmti, vt, &n, &owned)) ==
                JVMTI_ERROR_NONE) {
            for (jint k = 0; k < n; k++) {
                owns |= (*jni)->IsSameObject(jni, owned[k], monitor);
                (*jni)->DeleteLocalRef(jni, owned[k]);
            }
            (*jvmti)->Deallocate(jvmti, (unsigned char *)owned);
        }
        if (owns)
            return vt;
        (*jni)->DeleteLocalRef(jni, vt);
    }
    return NULL;
}

/* The thread t in out: its name, id, virtual or not, carrier, state, and with_stack its stack (into
 * blk.stack). Its JVMTI state, -1 when JVMTI did not say. */
static jint describe_thread(JNIEnv *jni, jthread t, struct blocker *out, int with_stack)
{
    jvmtiEnv *jvmti = blk.jvmti;
    out->has_thread = 1;
    jthread_copy_name(jni, t, out->name);
    out->id = jthread_id(jni, t);
    out->is_virtual = (*jni)->IsVirtualThread(jni, t);
    jint st = 0;
    jvmtiError state_err = COUNTED(CALL_GET_THREAD_STATE, (*jvmti)->GetThreadState(jvmti, t, &st));
    jint count = 0;
    if (with_stack &&
        COUNTED(CALL_GET_STACK_TRACE,
                (*jvmti)->GetStackTrace(jvmti, t, 0, (jint)blk.depth, blk.stack->frames, &count)) == JVMTI_ERROR_NONE) {
        blk.stack->frame_count = (uint32_t)count;
        blk.stack->truncated = count == (jint)blk.depth;
        memset(pin_rec_monitors(blk.stack, blk.depth), 0, blk.depth * sizeof(uint16_t));
    }
    if (out->is_virtual)
        carrier_of(jni, out->id, out);
    out->state = state_err == JVMTI_ERROR_NONE ? blocker_state_name(st, out->is_virtual && !out->carrier_tid) : NULL;
    return state_err == JVMTI_ERROR_NONE ? st : -1;
}

/* The owner of the monitor waiter is blocked entering (a new local ref), NULL when none is known
 * (or JVMTI could not look). GetObjectMonitorUsage stops the JVM at a safepoint. */
static jthread monitor_owner(JNIEnv *jni, jobject monitor, jthread waiter)
{
    jvmtiEnv *jvmti = blk.jvmti;
    jvmtiMonitorUsage usage;
    memset(&usage, 0, sizeof(usage));
    if (COUNTED(CALL_GET_OBJECT_MONITOR_USAGE, (*jvmti)->GetObjectMonitorUsage(jvmti, monitor, &usage)) !=
        JVMTI_ERROR_NONE)
        return NULL;
    jthread owner = usage.owner ? usage.owner : mounted_owner(jni, monitor, waiter);
    if (!owner && blk.jdk_feature >= 24) /* an unmounted virtual owner, which JVMTI leaves out */
        owner = vowner_find(jni, monitor, waiter, clock_mono_ns());
    for (jint i = 0; i < usage.waiter_count; i++)
        (*jni)->DeleteLocalRef(jni, usage.waiters[i]);
    for (jint i = 0; i < usage.notify_waiter_count; i++)
        (*jni)->DeleteLocalRef(jni, usage.notify_waiters[i]);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)usage.waiters);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)usage.notify_waiters);
    if (owner && (*jni)->IsSameObject(jni, owner, waiter)) {
        (*jni)->DeleteLocalRef(jni, owner);
        return NULL;
    }
    return owner;
}

/* What thread t (in state st) itself waits for, into *h: a j.u.c. lock it is parked on, or a monitor
 * it is blocked entering. Its owner (a new local ref, NULL: none known), with *h filled; 0 in
 * *found when t waits for neither (or the budget is spent). */
static jthread next_hop(JNIEnv *jni, jthread t, jint st, int64_t now_ns, struct blocker_hop *h, int *found)
{
    jvmtiEnv *jvmti = blk.jvmti;
    jobject what = NULL;
    jthread owner = NULL;
    *found = 0;
    if (st & JVMTI_THREAD_STATE_PARKED) {
        if (!blocker_lock_of(jni, t, &what, &owner))
            return NULL;
        h->what = BLOCKER_LOCK;
    } else if (st & JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER) {
        if (!per_second_take(&blk.budget, now_ns, BLOCKER_LOOKS_PER_SECOND))
            return NULL; /* the chain ends here: the owner itself was named */
        if (COUNTED(CALL_GET_CURRENT_CONTENDED_MONITOR, (*jvmti)->GetCurrentContendedMonitor(jvmti, t, &what)) !=
                JVMTI_ERROR_NONE ||
            !what)
            return NULL;
        owner = monitor_owner(jni, what, t);
        h->what = BLOCKER_MONITOR;
    } else {
        return NULL;
    }
    *found = 1;
    blocker_class_name(jni, what, h->object_class, sizeof(h->object_class));
    (*jni)->DeleteLocalRef(jni, what);
    return owner;
}

/* The chain past owner (in state st), named out->id, for waiter (blocker.h struct blocker_chain). */
static void follow(JNIEnv *jni, jthread owner, jint st, jthread waiter, int64_t now_ns, const struct blocker *out,
                   struct blocker_chain *chain)
{
    memset(chain, 0, sizeof(*chain));
    int64_t named[BLOCKER_CHAIN_MAX + 2] = {jthread_id(jni, waiter), out->id};
    int n_named = 2;
    jthread t = (*jni)->NewLocalRef(jni, owner);
    while (t && st >= 0 && chain->n < BLOCKER_CHAIN_MAX) {
        struct blocker_hop *h = &chain->hop[chain->n];
        int found;
        jthread next = next_hop(jni, t, st, now_ns, h, &found);
        (*jni)->DeleteLocalRef(jni, t);
        t = NULL;
        if (!found)
            break;
        chain->n++;
        if (!next)
            break;
        struct blocker who;
        memset(&who, 0, sizeof(who));
        st = describe_thread(jni, next, &who, 0);
        h->has_thread = 1;
        memcpy(h->name, who.name, sizeof(h->name));
        h->id = who.id;
        h->is_virtual = who.is_virtual;
        memcpy(h->carrier, who.carrier, sizeof(h->carrier));
        h->state = who.state;
        for (int i = 0; i < n_named; i++)
            chain->cycle |= named[i] == who.id;
        if (chain->cycle) {
            (*jni)->DeleteLocalRef(jni, next);
            break;
        }
        named[n_named++] = who.id;
        t = next;
    }
    if (t)
        (*jni)->DeleteLocalRef(jni, t);
}

int blocker_find(JNIEnv *jni, jthread waiter, int64_t now_ns, struct blocker *out, struct blocker_chain *chain)
{
    jvmtiEnv *jvmti = blk.jvmti;
    memset(out, 0, sizeof(*out));
    if (chain)
        memset(chain, 0, sizeof(*chain));
    out->stack = blk.stack;
    blk.stack->frame_count = 0;
    if (!jvmti || !blk.stack)
        return 0;
    if (!per_second_take(&blk.budget, now_ns, BLOCKER_LOOKS_PER_SECOND)) {
        blk.skipped++;
        return -EAGAIN;
    }
    jobject monitor = NULL;
    jint st = 0;
    if (COUNTED(CALL_GET_THREAD_STATE, (*jvmti)->GetThreadState(jvmti, waiter, &st)) != JVMTI_ERROR_NONE) {
        blk.skipped++;
        return 0;
    }
    if (COUNTED(CALL_GET_CURRENT_CONTENDED_MONITOR, (*jvmti)->GetCurrentContendedMonitor(jvmti, waiter, &monitor)) !=
            JVMTI_ERROR_NONE ||
        !monitor) {
        if (!(st & JVMTI_THREAD_STATE_IN_OBJECT_WAIT)) {
            blk.skipped++; /* the block was over at the look: the entry won, or the wait ended */
            return 0;
        }
        /* 24+: a virtual thread in Object.wait under a native frame has no contended monitor for
         * JVMTI. Or the look fell where the thread's state says Object.wait and its waited monitor is
         * not set yet or any more (the wait begins or ends: a late look under load, ASan at ctest -j2
         * had two on 21). Still waiting on 24+, it is the former; on 21-23 there is no former, and a
         * wait that goes on has its monitor at a second look; else too late to say, and counted as
         * not looked up */
        jint now_st = 0;
        if (COUNTED(CALL_GET_THREAD_STATE, (*jvmti)->GetThreadState(jvmti, waiter, &now_st)) != JVMTI_ERROR_NONE ||
            !(now_st & JVMTI_THREAD_STATE_IN_OBJECT_WAIT)) {
            blk.skipped++;
            return 0;
        }
        if (blk.jdk_feature >= 24) {
            out->what = BLOCKER_NOTIFY;
            return 1;
        }
        if (COUNTED(CALL_GET_CURRENT_CONTENDED_MONITOR,
                    (*jvmti)->GetCurrentContendedMonitor(jvmti, waiter, &monitor)) != JVMTI_ERROR_NONE ||
            !monitor) {
            blk.skipped++;
            return 0;
        }
        st = now_st;
    }
    blocker_class_name(jni, monitor, out->object_class, sizeof(out->object_class));
    if (st & (JVMTI_THREAD_STATE_IN_OBJECT_WAIT | JVMTI_THREAD_STATE_WAITING)) {
        out->what = BLOCKER_NOTIFY; /* waits to be notified (and then to re-enter) */
        (*jni)->DeleteLocalRef(jni, monitor);
        return 1;
    }
    out->what = BLOCKER_MONITOR;
    jthread owner = monitor_owner(jni, monitor, waiter);
    if (owner) {
        jint owner_st = describe_thread(jni, owner, out, 1);
        if (chain)
            follow(jni, owner, owner_st, waiter, now_ns, out, chain);
        (*jni)->DeleteLocalRef(jni, owner);
    }
    (*jni)->DeleteLocalRef(jni, monitor);
    return 1;
}

jthread blocker_monitor_owner(JNIEnv *jni, jthread waiter, int64_t now_ns, jobject *monitor)
{
    jvmtiEnv *jvmti = blk.jvmti;
    *monitor = NULL;
    if (!jvmti)
        return NULL;
    if (!per_second_take(&blk.budget, now_ns, BLOCKER_LOOKS_PER_SECOND))
        return NULL;
    if (COUNTED(CALL_GET_CURRENT_CONTENDED_MONITOR, (*jvmti)->GetCurrentContendedMonitor(jvmti, waiter, monitor)) !=
            JVMTI_ERROR_NONE ||
        !*monitor) {
        *monitor = NULL;
        return NULL;
    }
    return monitor_owner(jni, *monitor, waiter);
}

static int resolve_locks(JNIEnv *jni)
{
    if (!locks.resolved) {
        locks.owned = jthread_global_class(jni, "java/util/concurrent/locks/AbstractOwnableSynchronizer");
        locks.owner =
            locks.owned ? (*jni)->GetFieldID(jni, locks.owned, "exclusiveOwnerThread", "Ljava/lang/Thread;") : NULL;
        (*jni)->ExceptionClear(jni);
        locks.resolved = locks.owner ? 1 : -1;
    }
    return locks.resolved == 1;
}

int blocker_lock_of(JNIEnv *jni, jthread thread, jobject *sync, jthread *owner)
{
    *sync = jthread_park_blocker(jni, thread);
    *owner = NULL;
    if (!*sync)
        return 0;
    if (!resolve_locks(jni) || !(*jni)->IsInstanceOf(jni, *sync, locks.owned)) {
        (*jni)->DeleteLocalRef(jni, *sync);
        *sync = NULL;
        return 0;
    }
    *owner = (*jni)->GetObjectField(jni, *sync, locks.owner);
    return 1;
}

int blocker_find_lock(JNIEnv *jni, jthread waiter, int64_t now_ns, struct blocker *out, struct blocker_chain *chain)
{
    memset(out, 0, sizeof(*out));
    if (chain)
        memset(chain, 0, sizeof(*chain));
    out->stack = blk.stack;
    if (!blk.jvmti || !blk.stack)
        return 0;
    blk.stack->frame_count = 0;
    jobject sync = NULL;
    jthread owner = NULL;
    if (!blocker_lock_of(jni, waiter, &sync, &owner))
        return 0;
    int rc = 1;
    if (!per_second_take(&blk.budget, now_ns, BLOCKER_LOOKS_PER_SECOND)) {
        blk.skipped++;
        rc = -EAGAIN;
    } else {
        out->what = BLOCKER_LOCK;
        blocker_class_name(jni, sync, out->object_class, sizeof(out->object_class));
        if (owner && !(*jni)->IsSameObject(jni, owner, waiter)) {
            jint owner_st = describe_thread(jni, owner, out, 1);
            if (chain)
                follow(jni, owner, owner_st, waiter, now_ns, out, chain);
        }
    }
    if (owner)
        (*jni)->DeleteLocalRef(jni, owner);
    (*jni)->DeleteLocalRef(jni, sync);
    return rc;
}

/* The classes whose <clinit> runs on t's top frames (innermost first), into cls[max][BLOCKER_CLASS_MAX]:
 * how many. */
static int clinits_of(jthread t, char (*cls)[BLOCKER_CLASS_MAX], int max)
{
    jvmtiEnv *jvmti = blk.jvmti;
    jvmtiFrameInfo frames[64];
    jint count = 0;
    int n = 0;
    if (COUNTED(CALL_GET_STACK_TRACE, (*jvmti)->GetStackTrace(jvmti, t, 0, 64, frames, &count)) != JVMTI_ERROR_NONE)
        return 0;
    for (jint f = 0; f < count && n < max; f++) {
        char *name = NULL, *sig = NULL;
        jclass klass = NULL;
        if ((*jvmti)->GetMethodName(jvmti, frames[f].method, &name, NULL, NULL) != JVMTI_ERROR_NONE)
            continue;
        int clinit = strcmp(name, "<clinit>") == 0;
        (*jvmti)->Deallocate(jvmti, (unsigned char *)name);
        if (clinit && (*jvmti)->GetMethodDeclaringClass(jvmti, frames[f].method, &klass) == JVMTI_ERROR_NONE &&
            (*jvmti)->GetClassSignature(jvmti, klass, &sig, NULL) == JVMTI_ERROR_NONE) {
            bytecode_class_name(sig, cls[n], BLOCKER_CLASS_MAX);
            n += cls[n][0] != '\0';
            (*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
        }
    }
    return n;
}

/* t initializes cls (any <clinit> of it on its stack), or, cls "", exactly one class (innermost
 * <clinit>) written into found: 1, else 0. */
static int initializes(jthread t, const char *cls, char *found)
{
    char on[8][BLOCKER_CLASS_MAX];
    int n = clinits_of(t, on, 8);
    for (int i = 0; i < n; i++)
        if (cls[0] ? strcmp(on[i], cls) == 0 : i == 0) {
            memcpy(found, on[i], BLOCKER_CLASS_MAX);
            return 1;
        }
    return 0;
}

int blocker_find_initializer(JNIEnv *jni, jthread waiter, const char *cls, int64_t now_ns, struct blocker *out)
{
    jvmtiEnv *jvmti = blk.jvmti;
    memset(out, 0, sizeof(*out));
    out->stack = blk.stack;
    if (!jvmti || !blk.stack)
        return 0;
    blk.stack->frame_count = 0;
    if (!per_second_take(&blk.init_budget, now_ns, BLOCKER_INIT_LOOKS_PER_SECOND)) {
        blk.skipped++;
        return -EAGAIN;
    }
    /* the platform threads, then the carriers' mounted virtual threads */
    jint n = 0;
    jthread *threads = NULL;
    if (COUNTED(CALL_GET_ALL_THREADS, (*jvmti)->GetAllThreads(jvmti, &n, &threads)) != JVMTI_ERROR_NONE)
        return 0;
    jthread initializer = NULL;
    int seen = 0; /* threads initializing, when the class is not known: exactly one may be named */
    char found[BLOCKER_CLASS_MAX], one[BLOCKER_CLASS_MAX] = "";
    for (jint i = 0; i < n; i++) {
        if (i < BLOCKER_LOOK_THREADS && seen < 2 && !(*jni)->IsSameObject(jni, threads[i], waiter) &&
            initializes(threads[i], cls, found) && (seen == 0 || strcmp(found, one) != 0)) {
            seen++;
            memcpy(one, found, sizeof(one));
            if (!initializer)
                initializer = (*jni)->NewLocalRef(jni, threads[i]);
        }
        (*jni)->DeleteLocalRef(jni, threads[i]);
    }
    (*jvmti)->Deallocate(jvmti, (unsigned char *)threads);
    for (unsigned i = 0; i < carriers_capacity() && seen < 2; i++) {
        struct carrier_slot *c = NULL;
        jthread vt = mounted_on(jni, i, &c);
        if (!vt)
            continue;
        if (!(*jni)->IsSameObject(jni, vt, waiter) && initializes(vt, cls, found) &&
            (seen == 0 || strcmp(found, one) != 0)) {
            seen++;
            memcpy(one, found, sizeof(one));
            if (!initializer) {
                initializer = vt;
                continue;
            }
        }
        (*jni)->DeleteLocalRef(jni, vt);
    }
    int named = initializer && (cls[0] || seen == 1);
    if (named) {
        out->what = BLOCKER_CLASS_INIT;
        memcpy(out->object_class, one, sizeof(out->object_class));
        describe_thread(jni, initializer, out, 1);
    }
    if (initializer)
        (*jni)->DeleteLocalRef(jni, initializer);
    return named;
}
