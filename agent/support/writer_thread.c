#include "writer_thread.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "clock.h"
#include "self_cost.h"

enum { FREE = 0, JOINED = 1, FORBIDDEN = 2 };

static JavaVM *vm;
static void (*thread_main)(void *);
static void *thread_arg;
static _Atomic int state;        /* FREE, JOINED or FORBIDDEN */
static _Atomic int forbid_later; /* forbidden while joined: takes effect at leave */
static _Atomic uint64_t joins;
static JNIEnv *env; /* writer thread only */
static struct {
    int in_round;    /* joined, with a local frame (1) or without (2), in this round */
    int64_t used_ns; /* last round that needed the JVM */
} round;             /* writer thread only */

static void *run(void *arg)
{
    (void)arg;
    self_cost_writer_started(); /* its CPU time is vtpin's own */
    thread_main(thread_arg);
    writer_thread_leave();
    return NULL;
}

int writer_thread_start(JavaVM *jvm, void (*main)(void *), void *arg)
{
    vm = jvm;
    thread_main = main;
    thread_arg = arg;
    pthread_attr_t attr;
    pthread_t t;
    if (pthread_attr_init(&attr))
        return -ENOMEM;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &attr, run, NULL);
    pthread_attr_destroy(&attr);
    if (rc)
        return -rc;
    pthread_setname_np(t, "vtpin writer");
    return 0;
}

JNIEnv *writer_thread_enter(void)
{
    if (env)
        return env;
    int expected = FREE;
    if (!atomic_compare_exchange_strong(&state, &expected, JOINED))
        return NULL; /* forbidden: the JVM is shutting down */
    JavaVMAttachArgs args = {JNI_VERSION_1_8, "vtpin writer", NULL};
    void *e = NULL;
    if ((*vm)->AttachCurrentThreadAsDaemon(vm, &e, &args) != JNI_OK || !e) {
        atomic_store(&state, FREE);
        return NULL;
    }
    atomic_fetch_add(&joins, 1);
    env = e;
    return env;
}

void writer_thread_leave(void)
{
    if (!env)
        return;
    (*vm)->DetachCurrentThread(vm);
    env = NULL;
    atomic_store(&state, FREE);
    int expected = FREE; /* a forbid that came while joined */
    if (atomic_load(&forbid_later))
        atomic_compare_exchange_strong(&state, &expected, FORBIDDEN);
}

void writer_thread_forbid(void)
{
    atomic_store(&forbid_later, 1);
    int expected = FREE;
    atomic_compare_exchange_strong(&state, &expected, FORBIDDEN);
}

uint64_t writer_thread_joins(void)
{
    return atomic_load(&joins);
}

JNIEnv *writer_thread_jni(void)
{
    if (round.in_round)
        return env;
    if (!writer_thread_enter())
        return NULL;
    round.in_round = (*env)->PushLocalFrame(env, 64) == 0 ? 1 : 2;
    round.used_ns = clock_mono_ns();
    return env;
}

/* Each join costs ~70 us of CPU and a ThreadStart/ThreadEnd for every agent:
 * at most about one per second. */
#define JVM_LINGER_NS 1000000000LL
void writer_thread_end_round(int64_t now, int64_t next_need_ns, int stopping)
{
    if (round.in_round == 1)
        (*env)->PopLocalFrame(env, NULL);
    round.in_round = 0;
    if (env && !stopping && (next_need_ns - now <= 50000000LL || now - round.used_ns < JVM_LINGER_NS))
        return;
    writer_thread_leave();
}
