#include "deferred_stack.h"

#include <errno.h>
#include <stdlib.h>

#include "carriers.h"
#include "jthread.h"
#include "writer_thread.h"

static struct {
    jvmtiEnv *jvmti;
    struct rec *scratch;
} late;

int deferred_stack_init(jvmtiEnv *jvmti, unsigned depth)
{
    late.jvmti = jvmti;
    late.scratch = calloc(1, pins_record_size(depth));
    return late.scratch ? 0 : -ENOMEM;
}

void deferred_stack_fini(void)
{
    free(late.scratch);
    late.scratch = NULL;
}

static int is_blocked(jthread vt)
{
    jint state = 0;
    if ((*late.jvmti)->GetThreadState(late.jvmti, vt, &state) != JVMTI_ERROR_NONE)
        return 0;
    return (state & (JVMTI_THREAD_STATE_WAITING | JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER)) != 0;
}

/* Only from a thread blocked before and after: frames and monitors are read
 * in two calls, and a running thread's would not match (a monitor blamed on
 * the frame below). */
int deferred_stack_take(int carrier_tid, int64_t vthread_id, int through_park, const struct rec **out)
{
    struct carrier_slot *c = carriers_by_tid(carrier_tid);
    JNIEnv *jni = c ? writer_thread_jni() : NULL;
    jthread vt = NULL;
    int rc = -EAGAIN;
    if (jni && jthread_mounted(jni, c->thread, &vt) == 0 && vt && jthread_id(jni, vt) == vthread_id && is_blocked(vt)) {
        struct rec *r = late.scratch;
        r->frame_count = 0;
        r->truncated = 0;
        pins_capture_stack(vt, r);
        int in_park = 0;
        jmethodID park = pins_park_method();
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
