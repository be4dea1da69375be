#include "blocker.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bytecode.h"
#include "carriers.h"
#include "clock.h"
#include "jthread.h"

static struct {
    jvmtiEnv *jvmti;
    unsigned depth;
    struct rec *stack;
    struct per_second budget;
    uint64_t skipped;
} blk;

int blocker_init(jvmtiEnv *jvmti, unsigned depth)
{
    blk.jvmti = jvmti;
    blk.depth = depth;
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

static void class_of(JNIEnv *jni, jobject obj, char *out, size_t cap)
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

static const char *state_name(jint st)
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
    return "running";
}

/* A virtual owner's carrier, when it is mounted: the carriers' mounted virtual threads by id. */
static void carrier_of(JNIEnv *jni, int64_t vid, struct blocker *out)
{
    for (unsigned i = 0; i < carriers_capacity(); i++) {
        struct carrier_slot *c = carriers_slot(i);
        jthread vt = NULL;
        if (!c || atomic_load(&c->state) != SLOT_LIVE || jthread_mounted(jni, c->thread, &vt) != 0 || !vt)
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
 * 24+ GetObjectMonitorUsage names no virtual owner, mounted or not. A new local ref, or NULL. */
static jthread mounted_owner(JNIEnv *jni, jobject monitor, jthread waiter)
{
    jvmtiEnv *jvmti = blk.jvmti;
    for (unsigned i = 0; i < carriers_capacity(); i++) {
        struct carrier_slot *c = carriers_slot(i);
        jthread vt = NULL;
        if (!c || atomic_load(&c->state) != SLOT_LIVE || jthread_mounted(jni, c->thread, &vt) != 0 || !vt)
            continue;
        jint n = 0;
        jobject *owned = NULL;
        int owns = 0;
        if (!(*jni)->IsSameObject(jni, vt, waiter) &&
            (*jvmti)->GetOwnedMonitorInfo(jvmti, vt, &n, &owned) == JVMTI_ERROR_NONE) {
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

int blocker_find(JNIEnv *jni, jthread waiter, int64_t now_ns, struct blocker *out)
{
    jvmtiEnv *jvmti = blk.jvmti;
    memset(out, 0, sizeof(*out));
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
    if ((*jvmti)->GetThreadState(jvmti, waiter, &st) != JVMTI_ERROR_NONE)
        return 0;
    if ((*jvmti)->GetCurrentContendedMonitor(jvmti, waiter, &monitor) != JVMTI_ERROR_NONE || !monitor) {
        /* 24+: a virtual thread in Object.wait under a native frame has no contended monitor for JVMTI */
        out->what = st & JVMTI_THREAD_STATE_IN_OBJECT_WAIT ? BLOCKER_NOTIFY : BLOCKER_NONE;
        return out->what != BLOCKER_NONE;
    }
    class_of(jni, monitor, out->object_class, sizeof(out->object_class));
    if (st & (JVMTI_THREAD_STATE_IN_OBJECT_WAIT | JVMTI_THREAD_STATE_WAITING)) {
        out->what = BLOCKER_NOTIFY; /* waits to be notified (and then to re-enter) */
        (*jni)->DeleteLocalRef(jni, monitor);
        return 1;
    }
    out->what = BLOCKER_MONITOR;
    jvmtiMonitorUsage usage;
    memset(&usage, 0, sizeof(usage));
    if ((*jvmti)->GetObjectMonitorUsage(jvmti, monitor, &usage) == JVMTI_ERROR_NONE) {
        jthread owner = usage.owner ? usage.owner : mounted_owner(jni, monitor, waiter);
        if (owner && !(*jni)->IsSameObject(jni, owner, waiter)) {
            out->has_thread = 1;
            jthread_copy_name(jni, owner, out->name);
            out->id = jthread_id(jni, owner);
            out->is_virtual = (*jni)->IsVirtualThread(jni, owner);
            jint ost = 0;
            out->state = (*jvmti)->GetThreadState(jvmti, owner, &ost) == JVMTI_ERROR_NONE ? state_name(ost) : NULL;
            jint count = 0;
            if ((*jvmti)->GetStackTrace(jvmti, owner, 0, (jint)blk.depth, blk.stack->frames, &count) ==
                JVMTI_ERROR_NONE) {
                blk.stack->frame_count = (uint32_t)count;
                blk.stack->truncated = count == (jint)blk.depth;
                memset(rec_monitors(blk.stack, blk.depth), 0, blk.depth * sizeof(uint16_t));
            }
            if (out->is_virtual)
                carrier_of(jni, out->id, out);
        }
        if (owner)
            (*jni)->DeleteLocalRef(jni, owner);
        for (jint i = 0; i < usage.waiter_count; i++)
            (*jni)->DeleteLocalRef(jni, usage.waiters[i]);
        for (jint i = 0; i < usage.notify_waiter_count; i++)
            (*jni)->DeleteLocalRef(jni, usage.notify_waiters[i]);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)usage.waiters);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)usage.notify_waiters);
    }
    (*jni)->DeleteLocalRef(jni, monitor);
    return 1;
}
