#include "stack_read.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "carriers.h"
#include "jthread.h"
#include "self_cost.h"
#include "writer_thread.h"

static struct {
    jvmtiEnv *jvmti;
    unsigned depth;
    int have_monitor_depths;
} reader;

/* The writer's: its scratch record for stack_read_take. */
static struct {
    struct pin_rec *scratch;
} late;

void stack_read_setup(jvmtiEnv *jvmti, unsigned depth, int have_monitor_depths)
{
    reader.jvmti = jvmti;
    reader.depth = depth;
    reader.have_monitor_depths = have_monitor_depths;
}

static jint capture_frames(jthread thread, struct pin_rec *r)
{
    unsigned depth = reader.depth;
    jint count = 0;
    if (COUNTED(CALL_GET_STACK_TRACE,
                (*reader.jvmti)->GetStackTrace(reader.jvmti, thread, 0, (jint)depth, r->frames, &count)) !=
        JVMTI_ERROR_NONE)
        count = 0;
    r->frame_count = (uint32_t)count;
    memset(pin_rec_monitors(r, depth), 0, (size_t)count * sizeof(uint16_t));
    if (count == (jint)depth) {
        jint total = 0;
        if ((*reader.jvmti)->GetFrameCount(reader.jvmti, thread, &total) == JVMTI_ERROR_NONE && total > count)
            r->truncated = 1;
    }
    return count;
}

void stack_read_frames(jthread thread, struct pin_rec *r)
{
    capture_frames(thread, r);
}

void stack_read_full(jthread thread, struct pin_rec *r)
{
    unsigned depth = reader.depth;
    uint16_t *monitors = pin_rec_monitors(r, depth);
    jint count = capture_frames(thread, r);
    if (!reader.have_monitor_depths || count == 0)
        return;
    jint n = 0;
    jvmtiMonitorStackDepthInfo *info = NULL;
    /* Only the depths are read, never info[i].monitor: before 24, for a virtual thread read from another
     * thread (stack_read_take), JDK 21's handshake makes those refs in the target's carrier (see
     * blocker.c's mounted_owner), whose next native call reuses them. */
    if (COUNTED(CALL_GET_OWNED_MONITOR_STACK_DEPTH_INFO,
                (*reader.jvmti)->GetOwnedMonitorStackDepthInfo(reader.jvmti, thread, &n, &info)) != JVMTI_ERROR_NONE)
        return;
    for (jint i = 0; i < n; i++) {
        if (info[i].stack_depth >= 0 && info[i].stack_depth < count && monitors[info[i].stack_depth] < UINT16_MAX)
            monitors[info[i].stack_depth]++;
    }
    (*reader.jvmti)->Deallocate(reader.jvmti, (unsigned char *)info);
}

int stack_read_writer_init(unsigned depth)
{
    late.scratch = calloc(1, pins_record_size(depth));
    return late.scratch ? 0 : -ENOMEM;
}

void stack_read_writer_fini(void)
{
    free(late.scratch);
    late.scratch = NULL;
}

static int is_blocked(jthread vt)
{
    jint state = 0;
    if (COUNTED(CALL_GET_THREAD_STATE, (*reader.jvmti)->GetThreadState(reader.jvmti, vt, &state)) != JVMTI_ERROR_NONE)
        return 0;
    return (state & (JVMTI_THREAD_STATE_WAITING | JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER)) != 0;
}

/* Only from a thread blocked before and after: frames and monitors are read
 * in two calls, and a running thread's would not match (a monitor blamed on
 * the frame below). */
int stack_read_take(int carrier_tid, int64_t vthread_id, int through_park, jmethodID park, const struct pin_rec **out)
{
    struct carrier_slot *c = carriers_by_tid(carrier_tid);
    JNIEnv *jni = c ? writer_thread_jni() : NULL;
    jthread vt = NULL;
    int rc = -EAGAIN;
    if (jni && jthread_mounted(jni, c->thread, &vt) == 0 && vt && jthread_id(jni, vt) == vthread_id && is_blocked(vt)) {
        struct pin_rec *r = late.scratch;
        r->frame_count = 0;
        r->truncated = 0;
        stack_read_full(vt, r);
        int in_park = 0;
        for (uint32_t i = 0; i < r->frame_count && park; i++)
            in_park |= r->frames[i].method == park;
        /* A park pin's stack runs through parkOnCarrierThread (else the thread parks elsewhere). */
        if (r->frame_count && (!through_park || in_park) && is_blocked(vt)) {
            *out = r;
            rc = 0;
        }
    }
    if (vt)
        (*jni)->DeleteLocalRef(jni, vt);
    return rc;
}
