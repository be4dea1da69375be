/*
 * JNI part of the vtpin Java fixtures (libvtpinfixture.so).
 *
 *   JniSleep.sleepInNative(long ms)     -> calls back JniSleep.sleepCallback(ms) (Thread.sleep):
 *                                          a vthread that parks with a native frame on its
 *                                          stack is pinned on every JDK.
 *   JniLocked.enterInNative()           -> calls back JniLocked.enterCallback() (a contended
 *                                          synchronized block): pinned on every JDK.
 *   JniLocked.waitInNative(long ms)     -> calls back JniLocked.waitCallback(ms) (Object.wait):
 *                                          pinned on every JDK.
 *   LockOwner.enterInNative()           -> calls back LockOwner.enter() (a contended synchronized
 *                                          block whose owner the tests name).
 *   LockOwner.holdInNative()            -> calls back LockOwner.holdCallback() (holds the monitor,
 *                                          sleeping, pinned by this native frame).
 *   LockChain.lockInNative()            -> calls back LockChain.lockCallback() (a ReentrantLock's
 *                                          lock(), whose owner the tests name): pinned on every JDK.
 *   LockChain.holdInNative()            -> calls back LockChain.holdCallback() (holds the lock,
 *                                          sleeping, pinned by this native frame).
 *   StressPins.parkInNative()           -> calls back StressPins.parkCallback() (LockSupport.park
 *                                          until released): pinned on every JDK.
 *   NativeBlock.blockInNanosleep(long)  -> nanosleep() in C, never returns to Java meanwhile.
 *   NativeBlock.blockInRead(long ms)    -> read() of one byte from a pipe; a helper pthread
 *                                          writes that byte after ms.
 *   NativeBlock.blockInSleeps(long ms)  -> for ms, sleeps of 100 ms with 15 ms of CPU between them,
 *                                          in one call (a retry loop, as a busy timeout's).
 *   GcStall.holdCritical(byte[], long)  -> holds the array's critical region (the GC locker) ms;
 *   GcStall.criticalHeld()                 true meanwhile.
 *
 * Errors are reported as java.lang.IllegalStateException.
 */
#define _POSIX_C_SOURCE 200809L

#include <jni.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The native frame under a callback: calls cls.name()V back. */
static void call_back(JNIEnv *env, jclass cls, const char *name)
{
    jmethodID cb = (*env)->GetStaticMethodID(env, cls, name, "()V");
    if (cb == NULL) {
        return; /* NoSuchMethodError pending */
    }
    (*env)->CallStaticVoidMethod(env, cls, cb);
}

JNIEXPORT void JNICALL Java_StressPins_parkInNative(JNIEnv *env, jclass cls)
{
    call_back(env, cls, "parkCallback");
}

JNIEXPORT void JNICALL Java_JniLocked_enterInNative(JNIEnv *env, jclass cls)
{
    call_back(env, cls, "enterCallback");
}

JNIEXPORT void JNICALL Java_LockOwner_enterInNative(JNIEnv *env, jclass cls)
{
    call_back(env, cls, "enter");
}

JNIEXPORT void JNICALL Java_LockOwner_holdInNative(JNIEnv *env, jclass cls)
{
    call_back(env, cls, "holdCallback");
}

JNIEXPORT void JNICALL Java_LockChain_lockInNative(JNIEnv *env, jclass cls)
{
    call_back(env, cls, "lockCallback");
}

JNIEXPORT void JNICALL Java_LockChain_holdInNative(JNIEnv *env, jclass cls)
{
    call_back(env, cls, "holdCallback");
}

JNIEXPORT void JNICALL Java_JniLocked_waitInNative(JNIEnv *env, jclass cls, jlong ms)
{
    jmethodID cb = (*env)->GetStaticMethodID(env, cls, "waitCallback", "(J)V");
    if (cb == NULL) {
        return; /* NoSuchMethodError pending */
    }
    (*env)->CallStaticVoidMethod(env, cls, cb, ms);
}

static void throw_ise(JNIEnv *env, const char *what, int err)
{
    char msg[256];
    snprintf(msg, sizeof msg, "vtpinfixture: %s: %s", what, strerror(err));
    jclass cls = (*env)->FindClass(env, "java/lang/IllegalStateException");
    if (cls != NULL) {
        (*env)->ThrowNew(env, cls, msg);
    }
}

static struct timespec ms_to_timespec(jlong ms)
{
    struct timespec ts;
    if (ms < 0) {
        ms = 0;
    }
    ts.tv_sec = (time_t)(ms / 1000);
    ts.tv_nsec = (long)(ms % 1000) * 1000000L;
    return ts;
}

/* nanosleep for ms, resuming after EINTR with the remaining time. */
static int sleep_ms(jlong ms)
{
    struct timespec req = ms_to_timespec(ms);
    struct timespec rem;
    while (nanosleep(&req, &rem) != 0) {
        if (errno != EINTR) {
            return errno;
        }
        req = rem;
    }
    return 0;
}

JNIEXPORT void JNICALL Java_JniSleep_sleepInNative(JNIEnv *env, jclass cls, jlong ms)
{
    jmethodID cb = (*env)->GetStaticMethodID(env, cls, "sleepCallback", "(J)V");
    if (cb == NULL) {
        return; /* NoSuchMethodError pending */
    }
    /* An InterruptedException thrown by the callback stays pending and propagates. */
    (*env)->CallStaticVoidMethod(env, cls, cb, ms);
}

JNIEXPORT void JNICALL Java_NativeBlock_blockInNanosleep(JNIEnv *env, jclass cls, jlong ms)
{
    (void)cls;
    int err = sleep_ms(ms);
    if (err != 0) {
        throw_ise(env, "nanosleep", err);
    }
}

JNIEXPORT void JNICALL Java_NativeBlock_burnCpu(JNIEnv *env, jclass cls, jlong ms)
{
    (void)env;
    (void)cls;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    volatile uint64_t x = 88172645463325252ULL;
    do {
        for (int i = 0; i < 100000; i++) { /* xorshift: pure CPU, no syscalls */
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        clock_gettime(CLOCK_MONOTONIC, &now); /* vDSO: no sleep, no syscall */
    } while ((now.tv_sec - start.tv_sec) * 1000LL + (now.tv_nsec - start.tv_nsec) / 1000000LL < ms);
}

/* CPU for ms, no system call but the vDSO clock. */
static void burn_ms(jlong ms)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    volatile uint64_t x = 88172645463325252ULL;
    do {
        for (int i = 0; i < 10000; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec - start.tv_sec) * 1000LL + (now.tv_nsec - start.tv_nsec) / 1000000LL < ms);
}

JNIEXPORT void JNICALL Java_NativeBlock_blockInSleeps(JNIEnv *env, jclass cls, jlong ms)
{
    (void)cls;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    long long elapsed = 0;
    while (elapsed < ms) {
        int err = sleep_ms(100);
        if (err != 0) {
            throw_ise(env, "nanosleep", err);
            return;
        }
        burn_ms(15); /* awake between the sleeps: a sample or two sees it on CPU */
        clock_gettime(CLOCK_MONOTONIC, &now);
        elapsed = (now.tv_sec - start.tv_sec) * 1000LL + (now.tv_nsec - start.tv_nsec) / 1000000LL;
    }
}

struct writer_arg {
    int fd;
    jlong ms;
};

static void *delayed_writer(void *p)
{
    const struct writer_arg *a = p;
    (void)sleep_ms(a->ms);
    const char byte = 'x';
    ssize_t n;
    do {
        n = write(a->fd, &byte, 1);
    } while (n < 0 && errno == EINTR);
    return NULL;
}

JNIEXPORT void JNICALL Java_NativeBlock_blockInRead(JNIEnv *env, jclass cls, jlong ms)
{
    (void)cls;
    int fds[2];
    if (pipe(fds) != 0) {
        throw_ise(env, "pipe", errno);
        return;
    }
    struct writer_arg arg = { fds[1], ms };
    pthread_t writer;
    int err = pthread_create(&writer, NULL, delayed_writer, &arg);
    if (err != 0) {
        close(fds[0]);
        close(fds[1]);
        throw_ise(env, "pthread_create", err);
        return;
    }

    char byte;
    ssize_t n;
    do {
        n = read(fds[0], &byte, 1); /* blocks here for ~ms */
    } while (n < 0 && errno == EINTR);
    int read_err = n < 0 ? errno : 0;

    pthread_join(writer, NULL);
    close(fds[0]);
    close(fds[1]);
    if (read_err != 0) {
        throw_ise(env, "read", read_err);
    } else if (n != 1) {
        throw_ise(env, "read: unexpected EOF", EIO);
    }
}

static atomic_int critical_held;

JNIEXPORT void JNICALL Java_GcStall_holdCritical(JNIEnv *env, jclass cls, jbyteArray array, jlong ms)
{
    (void)cls;
    void *bytes = (*env)->GetPrimitiveArrayCritical(env, array, NULL);
    if (bytes == NULL) {
        return; /* OutOfMemoryError pending */
    }
    atomic_store(&critical_held, 1);
    int err = sleep_ms(ms); /* no JNI call inside the region */
    atomic_store(&critical_held, 0);
    (*env)->ReleasePrimitiveArrayCritical(env, array, bytes, JNI_ABORT);
    if (err != 0) {
        throw_ise(env, "nanosleep", err);
    }
}

JNIEXPORT jboolean JNICALL Java_GcStall_criticalHeld(JNIEnv *env, jclass cls)
{
    (void)env;
    (void)cls;
    return atomic_load(&critical_held) ? JNI_TRUE : JNI_FALSE;
}
