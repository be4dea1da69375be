/* Java threads as the agent reads them: a thread's id and name, the carrier
 * of a virtual thread, the CarrierThread class, and the virtual thread a
 * carrier runs. Shared by the pin callbacks (pins.c), the carrier registry
 * (carriers.c) and the writer. Every call here but jthread_mounted (writer
 * only) is safe from a hot callback: JNI field reads and local references
 * only, no lock, no allocation, no I/O. */
#ifndef VTPIN_JTHREAD_H
#define VTPIN_JTHREAD_H

#include <jvmti.h>
#include <stdint.h>

#define JTHREAD_NAME_MAX 64

/* Resolves Thread.tid/name, VirtualThread.carrierThread, CarrierThread and
 * GetVirtualThread (once; later calls return at once). VirtualThread is linked,
 * not initialized: its static initializer is the application's to run (it
 * reads the scheduler's system properties). Returns 0, or -ENOENT when the
 * fields pin detection needs are missing (logged). */
int jthread_init(jvmtiEnv *jvmti, JNIEnv *jni);

/* A global reference to a class by JNI name, NULL (exception cleared) when not found. JNI's
 * FindClass initializes the class. */
jclass jthread_global_class(JNIEnv *jni, const char *name);

jclass jthread_vthread_class(void); /* java.lang.VirtualThread (global ref), NULL before init */
/* A field of cls (instance or static) by name and signature, NULL when it has none. Through JVMTI,
 * which does not initialize cls as JNI's GetFieldID does. Not for a hot callback (it allocates). */
jfieldID jthread_field(jclass cls, const char *name, const char *sig);
jmethodID jthread_method(jclass cls, const char *name, const char *sig); /* the same for a method */
jclass jthread_carrier_class(void); /* jdk.internal.misc.CarrierThread, NULL if not found */
int jthread_is_carrier(JNIEnv *jni, jthread thread);

int64_t jthread_id(JNIEnv *jni, jobject thread); /* Thread.tid, 0 when unknown */
/* What thread is parked on (Thread.parkBlocker, LockSupport.park's blocker): a local ref, NULL when none. */
jobject jthread_park_blocker(JNIEnv *jni, jthread thread);
void jthread_copy_name(JNIEnv *jni, jobject thread, char *out); /* out: JTHREAD_NAME_MAX bytes, UTF-8 */

/* The calling OS thread, cached in a thread-local: its tid, and its name as
 * a carrier (set at its ThreadStart, else read once from the virtual thread
 * it carries). */
int jthread_self_tid(void);
const char *jthread_self_name_set(JNIEnv *jni, jthread self);
const char *jthread_self_carrier_name(JNIEnv *jni, jthread vthread);

/* The virtual thread mounted on carrier into *vt (a local ref, NULL when none),
 * read through JNI field reads of the carrier's current continuation: no JVMTI
 * call, so no virtual-thread transition is held up. HotSpot's GetVirtualThread,
 * which holds up every carrier's, answers only when this JDK's fields are not
 * the known ones or the mounted continuation is not a virtual thread's.
 * Returns 0, -ENOSYS without the extension, -EINVAL when the JVM refuses.
 * Writer thread only. */
int jthread_mounted(JNIEnv *jni, jthread carrier, jthread *vt);
/* Whether jthread_mounted can answer at all (the fields or the extension). */
int jthread_can_see_mounted(JNIEnv *jni);

#endif
