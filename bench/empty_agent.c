/* The floor of bench/run.sh: an agent that only creates a JVMTI environment.
 *
 * No capabilities, no events, no threads. Creating any JVMTI env is enough to
 * turn on HotSpot's virtual-thread mount/unmount notification path
 * (/work/shared/docs/JVMTI-FACTS.md), so this is the least any JVMTI agent can
 * cost; vtpin's configurations are compared to it as well as to no agent.
 * JVMTI_VERSION_21, as vtpin asks: the same kind of environment.
 *
 * Option "thread" (configuration floor-thread, not run by default): also start
 * one idle JVMTI agent thread (RunAgentThread at VMInit, sleeping 200 ms at a
 * time), like vtpin's writer thread. On JDK 25 that alone makes mount/unmount
 * ~1.5x slower than the plain floor (bench/README.md); that was mostly thread parity
 * (docs/performance.md).
 *
 * Options "caps" and "caps-nolocals" (configurations floor-caps, floor-caps-nolocals,
 * not run by default): also hold the capabilities vtpin takes at load, with and
 * without can_access_local_variables/can_suspend (vtpin's downcalls=marked), and
 * no event: what holding them costs compiled code (docs/performance.md).
 *
 * Option "count" (not a benchmark configuration): count the ThreadStart and
 * ThreadEnd events this agent sees and print them at VMDeath, to see what
 * another agent sees of vtpin's writer joining and leaving the JVM. */
#define _POSIX_C_SOURCE 200809L /* nanosleep under -std=c11 */
#include <jvmti.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static jvmtiEnv *env;
static _Atomic unsigned long started, ended;

static void JNICALL on_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)jvmti;
    (void)jni;
    (void)thread;
    started++;
}

static void JNICALL on_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)jvmti;
    (void)jni;
    (void)thread;
    ended++;
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
    (void)jvmti;
    (void)jni;
    fprintf(stderr, "emptyagent: ThreadStart %lu ThreadEnd %lu\n", (unsigned long)started, (unsigned long)ended);
}

static void JNICALL idle_main(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
    (void)jvmti;
    (void)jni;
    (void)arg;
    for (;;) {
        struct timespec ts = {0, 200 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)thread;
    jclass cls = (*jni)->FindClass(jni, "java/lang/Thread");
    jmethodID ctor = cls ? (*jni)->GetMethodID(jni, cls, "<init>", "(Ljava/lang/String;)V") : NULL;
    jstring name = (*jni)->NewStringUTF(jni, "bench idle agent thread");
    jobject t = ctor && name ? (*jni)->NewObject(jni, cls, ctor, name) : NULL;
    if (t)
        (*jvmti)->RunAgentThread(jvmti, t, idle_main, NULL, JVMTI_THREAD_NORM_PRIORITY);
    else
        (*jni)->ExceptionClear(jni);
}

/* vtpin's capability set (agent/agent.c), every one the VM offers. */
static int add_vtpin_capabilities(int locals)
{
    jvmtiCapabilities potential, want;
    memset(&want, 0, sizeof(want));
    if ((*env)->GetPotentialCapabilities(env, &potential) != JVMTI_ERROR_NONE)
        return -1;
    want.can_support_virtual_threads = potential.can_support_virtual_threads;
    want.can_generate_breakpoint_events = potential.can_generate_breakpoint_events;
    want.can_get_bytecodes = potential.can_get_bytecodes;
    want.can_get_constant_pool = potential.can_get_constant_pool;
    want.can_generate_monitor_events = potential.can_generate_monitor_events;
    want.can_get_owned_monitor_stack_depth_info = potential.can_get_owned_monitor_stack_depth_info;
    want.can_get_owned_monitor_info = potential.can_get_owned_monitor_info;
    want.can_generate_native_method_bind_events = potential.can_generate_native_method_bind_events;
    want.can_get_line_numbers = potential.can_get_line_numbers;
    want.can_get_source_file_name = potential.can_get_source_file_name;
    if (locals) {
        want.can_access_local_variables = potential.can_access_local_variables;
        want.can_suspend = potential.can_suspend;
    }
    return (*env)->AddCapabilities(env, &want) == JVMTI_ERROR_NONE ? 0 : -1;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    if ((*vm)->GetEnv(vm, (void **)&env, JVMTI_VERSION_21) != JNI_OK)
        return JNI_ERR;
    if (options && strcmp(options, "thread") == 0) {
        jvmtiEventCallbacks cb;
        memset(&cb, 0, sizeof(cb));
        cb.VMInit = on_vm_init;
        if ((*env)->SetEventCallbacks(env, &cb, sizeof(cb)) != JVMTI_ERROR_NONE ||
            (*env)->SetEventNotificationMode(env, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL) != JVMTI_ERROR_NONE)
            return JNI_ERR;
    }
    if (options && (strcmp(options, "caps") == 0 || strcmp(options, "caps-nolocals") == 0) &&
        add_vtpin_capabilities(strcmp(options, "caps") == 0) != 0)
        return JNI_ERR;
    if (options && strcmp(options, "count") == 0) {
        jvmtiEventCallbacks cb;
        memset(&cb, 0, sizeof(cb));
        cb.ThreadStart = on_thread_start;
        cb.ThreadEnd = on_thread_end;
        cb.VMDeath = on_vm_death;
        if ((*env)->SetEventCallbacks(env, &cb, sizeof(cb)) != JVMTI_ERROR_NONE ||
            (*env)->SetEventNotificationMode(env, JVMTI_ENABLE, JVMTI_EVENT_THREAD_START, NULL) != JVMTI_ERROR_NONE ||
            (*env)->SetEventNotificationMode(env, JVMTI_ENABLE, JVMTI_EVENT_THREAD_END, NULL) != JVMTI_ERROR_NONE ||
            (*env)->SetEventNotificationMode(env, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL) != JVMTI_ERROR_NONE)
            return JNI_ERR;
    }
    return JNI_OK;
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
    (void)vm;
}
