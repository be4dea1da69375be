/* The native side of the Java API (dev.vtpin.Vtpin, java/): JNI functions that the JVM
 * binds from this library when the class first calls them, as it binds any agent
 * library's (HotSpot looks in the agents' libraries after the class loader's). A JVM
 * without the agent finds none of them, and the Java side says what to add. Called on
 * Java threads only, never from a JVMTI callback: they may wait for the writer. */
#include <errno.h>
#include <jni.h>
#include <stdlib.h>
#include <string.h>

#include "api_pins.h"
#include "clock.h"
#include "writer.h"

#define EXPORT __attribute__((visibility("default")))
#define SYNC_TIMEOUT_MS 5000
#define NOT_DETECTING                                                                                                  \
    "vtpin: the agent is loaded but not detecting (stopped by `vtpin stop`, or it failed to start: see its log)"

static void throw_state(JNIEnv *jni, const char *text)
{
    jclass c = (*jni)->FindClass(jni, "java/lang/IllegalStateException");
    if (c)
        (*jni)->ThrowNew(jni, c, text);
}

/* Everything committed so far is reported; 0, or an exception is pending. */
static int sync_or_throw(JNIEnv *jni)
{
    if (api_pins_enable()) {
        throw_state(jni, "vtpin: out of memory for the Java API's pins");
        return -1;
    }
    int rc = writer_sync(SYNC_TIMEOUT_MS);
    if (rc == -ESRCH)
        throw_state(jni, NOT_DETECTING);
    else if (rc)
        throw_state(jni, "vtpin: the agent's writer stopped, or did not answer within 5 s");
    return rc ? -1 : 0;
}

EXPORT JNIEXPORT jstring JNICALL Java_dev_vtpin_Vtpin_version0(JNIEnv *jni, jclass cls)
{
    (void)cls;
    return (*jni)->NewStringUTF(jni, VTPIN_VERSION);
}

EXPORT JNIEXPORT jlong JNICALL Java_dev_vtpin_Vtpin_threshold0(JNIEnv *jni, jclass cls)
{
    (void)jni;
    (void)cls;
    return writer_threshold_ns();
}

EXPORT JNIEXPORT jlong JNICALL Java_dev_vtpin_Vtpin_mark0(JNIEnv *jni, jclass cls)
{
    (void)cls;
    /* No sync: the pins since are those that start after the clock is read, and the API keeps
     * pins from now on, so every one of them ends once it is on. */
    if (api_pins_enable()) {
        throw_state(jni, "vtpin: out of memory for the Java API's pins");
        return 0;
    }
    if (writer_threshold_ns() < 0) {
        throw_state(jni, NOT_DETECTING);
        return 0;
    }
    return clock_mono_ns();
}

EXPORT JNIEXPORT jlong JNICALL Java_dev_vtpin_Vtpin_evictions0(JNIEnv *jni, jclass cls)
{
    (void)jni;
    (void)cls;
    return (jlong)api_pins_evictions();
}

EXPORT JNIEXPORT void JNICALL Java_dev_vtpin_Vtpin_flush0(JNIEnv *jni, jclass cls)
{
    (void)cls;
    sync_or_throw(jni);
}

EXPORT JNIEXPORT jbyteArray JNICALL Java_dev_vtpin_Vtpin_pinsSince0(JNIEnv *jni, jclass cls, jlong since_ns,
                                                                    jlong evictions_before)
{
    (void)cls;
    if (sync_or_throw(jni))
        return NULL;
    size_t len = 0;
    char *records = api_pins_since(since_ns, (uint64_t)evictions_before, &len);
    if (!records || len > INT32_MAX) {
        free(records);
        throw_state(jni, "vtpin: out of memory for the pins asked");
        return NULL;
    }
    jbyteArray out = (*jni)->NewByteArray(jni, (jsize)len);
    if (out)
        (*jni)->SetByteArrayRegion(jni, out, 0, (jsize)len, (const jbyte *)records);
    free(records);
    return out;
}
