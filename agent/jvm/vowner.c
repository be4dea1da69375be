#include "vowner.h"

#include "clock.h"
#include "jthread.h"
#include "self_cost.h"

#define CONTAINERS_MAX 256 /* thread containers walked a look: the root and its descendants */

/* The JDK's classes and members, resolved at the first look (global refs, kept for the JVM's life:
 * bootstrap classes are never unloaded). */
static struct {
    int resolved; /* 0 not yet, 1 found, -1 not in this JDK */
    jclass containers, container, stream, snapshot, lock;
    jmethodID root, children, threads, to_array, of;
    jfieldID locks, lock_obj, carrier;
    struct per_second budget;
    jweak last_monitor, last_owner; /* the last owner found, and its monitor: its other waiters check it first */
} vo;

static int resolve(JNIEnv *jni)
{
    if (vo.resolved)
        return vo.resolved == 1;
    vo.resolved = -1;
    vo.containers = jthread_global_class(jni, "jdk/internal/vm/ThreadContainers");
    vo.container = jthread_global_class(jni, "jdk/internal/vm/ThreadContainer");
    vo.stream = jthread_global_class(jni, "java/util/stream/Stream");
    vo.snapshot = jthread_global_class(jni, "jdk/internal/vm/ThreadSnapshot");
    vo.lock = jthread_global_class(jni, "jdk/internal/vm/ThreadSnapshot$ThreadLock");
    jclass vthread = jthread_vthread_class();
    if (!vo.containers || !vo.container || !vo.stream || !vo.snapshot || !vo.lock || !vthread)
        return 0;
    vo.root = (*jni)->GetStaticMethodID(jni, vo.containers, "root", "()Ljdk/internal/vm/ThreadContainer;");
    vo.children = (*jni)->GetMethodID(jni, vo.container, "children", "()Ljava/util/stream/Stream;");
    vo.threads = (*jni)->GetMethodID(jni, vo.container, "threads", "()Ljava/util/stream/Stream;");
    vo.to_array = (*jni)->GetMethodID(jni, vo.stream, "toArray", "()[Ljava/lang/Object;");
    vo.of = (*jni)->GetStaticMethodID(jni, vo.snapshot, "of", "(Ljava/lang/Thread;)Ljdk/internal/vm/ThreadSnapshot;");
    vo.locks = (*jni)->GetFieldID(jni, vo.snapshot, "locks", "[Ljdk/internal/vm/ThreadSnapshot$ThreadLock;");
    vo.lock_obj = (*jni)->GetFieldID(jni, vo.lock, "obj", "Ljava/lang/Object;");
    vo.carrier = (*jni)->GetFieldID(jni, vthread, "carrierThread", "Ljava/lang/Thread;");
    (*jni)->ExceptionClear(jni);
    if (vo.root && vo.children && vo.threads && vo.to_array && vo.of && vo.locks && vo.lock_obj && vo.carrier)
        vo.resolved = 1;
    return vo.resolved == 1;
}

/* obj.method() (a Stream), as an array: a local ref, NULL on an exception (cleared). */
static jobjectArray stream_array(JNIEnv *jni, jobject obj, jmethodID method)
{
    jobject stream = (*jni)->CallObjectMethod(jni, obj, method);
    jobjectArray out = NULL;
    if (stream && !(*jni)->ExceptionCheck(jni))
        out = (jobjectArray)(*jni)->CallObjectMethod(jni, stream, vo.to_array);
    if ((*jni)->ExceptionCheck(jni)) {
        (*jni)->ExceptionClear(jni);
        if (out)
            (*jni)->DeleteLocalRef(jni, out);
        out = NULL;
    }
    if (stream)
        (*jni)->DeleteLocalRef(jni, stream);
    return out;
}

/* Does the unmounted virtual thread t hold monitor (ThreadSnapshot.of(t).locks[i].obj)? */
static int holds(JNIEnv *jni, jthread t, jobject monitor)
{
    self_cost_count(CALL_THREAD_SNAPSHOT);
    jobject snap = (*jni)->CallStaticObjectMethod(jni, vo.snapshot, vo.of, t);
    if ((*jni)->ExceptionCheck(jni)) {
        (*jni)->ExceptionClear(jni);
        return 0;
    }
    int found = 0;
    jobjectArray locks = snap ? (jobjectArray)(*jni)->GetObjectField(jni, snap, vo.locks) : NULL;
    for (jsize i = 0, n = locks ? (*jni)->GetArrayLength(jni, locks) : 0; i < n && !found; i++) {
        jobject lock = (*jni)->GetObjectArrayElement(jni, locks, i);
        jobject obj = lock ? (*jni)->GetObjectField(jni, lock, vo.lock_obj) : NULL;
        found = obj && (*jni)->IsSameObject(jni, obj, monitor);
        if (obj)
            (*jni)->DeleteLocalRef(jni, obj);
        if (lock)
            (*jni)->DeleteLocalRef(jni, lock);
    }
    if (locks)
        (*jni)->DeleteLocalRef(jni, locks);
    if (snap)
        (*jni)->DeleteLocalRef(jni, snap);
    return found;
}

/* The owner among container's threads (a new local ref, or NULL); *budget the snapshots left. */
static jthread owner_in(JNIEnv *jni, jobject container, jobject monitor, jthread waiter, int *budget)
{
    jobjectArray threads = stream_array(jni, container, vo.threads);
    jthread owner = NULL;
    for (jsize i = 0, n = threads ? (*jni)->GetArrayLength(jni, threads) : 0; i < n && !owner && *budget > 0; i++) {
        jthread t = (jthread)(*jni)->GetObjectArrayElement(jni, threads, i);
        if (!t)
            continue;
        jobject carrier = NULL;
        int candidate = (*jni)->IsVirtualThread(jni, t) && !(*jni)->IsSameObject(jni, t, waiter) &&
                        !(carrier = (*jni)->GetObjectField(jni, t, vo.carrier)); /* a mounted one: the carriers' */
        if (carrier)
            (*jni)->DeleteLocalRef(jni, carrier);
        if (candidate && (--*budget, holds(jni, t, monitor)))
            owner = t;
        else
            (*jni)->DeleteLocalRef(jni, t);
    }
    if (threads)
        (*jni)->DeleteLocalRef(jni, threads);
    return owner;
}

/* The last owner found, when it is monitor's and still holds it (one snapshot): a new local ref, or NULL. */
static jthread last_owner(JNIEnv *jni, jobject monitor, jthread waiter)
{
    if (!vo.last_monitor || !(*jni)->IsSameObject(jni, vo.last_monitor, monitor))
        return NULL;
    jthread owner = (jthread)(*jni)->NewLocalRef(jni, vo.last_owner); /* NULL once collected */
    jobject carrier = owner ? (*jni)->GetObjectField(jni, owner, vo.carrier) : NULL;
    if (owner && !carrier && !(*jni)->IsSameObject(jni, owner, waiter) && holds(jni, owner, monitor))
        return owner;
    if (carrier)
        (*jni)->DeleteLocalRef(jni, carrier);
    if (owner)
        (*jni)->DeleteLocalRef(jni, owner);
    return NULL;
}

static void remember(JNIEnv *jni, jobject monitor, jthread owner)
{
    if (vo.last_monitor)
        (*jni)->DeleteWeakGlobalRef(jni, vo.last_monitor);
    if (vo.last_owner)
        (*jni)->DeleteWeakGlobalRef(jni, vo.last_owner);
    vo.last_monitor = (*jni)->NewWeakGlobalRef(jni, monitor);
    vo.last_owner = (*jni)->NewWeakGlobalRef(jni, owner);
}

jthread vowner_find(JNIEnv *jni, jobject monitor, jthread waiter, int64_t now_ns)
{
    if (!resolve(jni))
        return NULL;
    jthread known = last_owner(jni, monitor, waiter); /* the same monitor's other waiters: no look */
    if (known || !per_second_take(&vo.budget, now_ns, VOWNER_LOOKS_PER_SECOND))
        return known;
    if ((*jni)->PushLocalFrame(jni, 64) != 0) {
        (*jni)->ExceptionClear(jni);
        return NULL;
    }
    /* breadth first from the root: pending[head, tail) are the containers still to walk */
    jobject pending[CONTAINERS_MAX];
    int head = 0, tail = 0, budget = VOWNER_THREADS_MAX;
    jobject root = (*jni)->CallStaticObjectMethod(jni, vo.containers, vo.root);
    if ((*jni)->ExceptionCheck(jni))
        (*jni)->ExceptionClear(jni);
    else if (root)
        pending[tail++] = root;
    jthread owner = NULL;
    while (head < tail && !owner && budget > 0) {
        jobject c = pending[head++];
        owner = owner_in(jni, c, monitor, waiter, &budget);
        jobjectArray kids = owner ? NULL : stream_array(jni, c, vo.children);
        for (jsize i = 0, n = kids ? (*jni)->GetArrayLength(jni, kids) : 0; i < n && tail < CONTAINERS_MAX; i++) {
            jobject k = (*jni)->GetObjectArrayElement(jni, kids, i);
            if (k)
                pending[tail++] = k;
        }
        if (kids)
            (*jni)->DeleteLocalRef(jni, kids);
    }
    if (owner)
        remember(jni, monitor, owner);
    /* every local ref of the look goes with its frame, but the owner's */
    return (jthread)(*jni)->PopLocalFrame(jni, owner);
}
