#include "jthread.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "self_cost.h"

static struct {
    jvmtiEnv *jvmti;
    jclass vthread_class;
    jfieldID tid_field, name_field, carrier_field;
    jfieldID park_blocker_field; /* Thread.parkBlocker; NULL: not in this JDK (no lock blockers) */
    jclass carrier_thread_class;
    jvmtiExtensionFunction get_virtual_thread;
    int looked_up_extension;
    int resolved; /* 0 not yet, 1 done, -ENOENT: the fields are missing (said once) */
} jthreads;

/* Per OS thread. A pinned virtual thread cannot leave its carrier, so the
 * carrier's name is read once per OS thread. */
static __thread struct {
    int tid;
    int name_known;
    char name[JTHREAD_NAME_MAX];
} self;

jclass jthread_global_class(JNIEnv *jni, const char *name)
{
    jclass local = (*jni)->FindClass(jni, name);
    if (!local) {
        (*jni)->ExceptionClear(jni);
        return NULL;
    }
    jclass global = (jclass)(*jni)->NewGlobalRef(jni, local);
    (*jni)->DeleteLocalRef(jni, local);
    return global;
}

/* A class the boot loader loaded, by its signature ("Ljava/lang/VirtualThread;"), as a global reference, without
 * initializing it: JNI's FindClass initializes the class it finds, and VirtualThread's static
 * initializer builds the default scheduler from system properties the application may still be
 * setting in main. NULL when not loaded. */
static jclass loaded_class(jvmtiEnv *jvmti, JNIEnv *jni, const char *signature)
{
    jint n = 0;
    jclass *classes = NULL;
    if ((*jvmti)->GetClassLoaderClasses(jvmti, NULL, &n, &classes) != JVMTI_ERROR_NONE)
        return NULL;
    jclass found = NULL;
    for (jint i = 0; i < n; i++) {
        char *sig = NULL;
        if (!found && (*jvmti)->GetClassSignature(jvmti, classes[i], &sig, NULL) == JVMTI_ERROR_NONE) {
            if (strcmp(sig, signature) == 0)
                found = (jclass)(*jni)->NewGlobalRef(jni, classes[i]);
            (*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
        }
        (*jni)->DeleteLocalRef(jni, classes[i]);
    }
    (*jvmti)->Deallocate(jvmti, (unsigned char *)classes);
    return found;
}

/* Links cls without initializing it: JVMTI lists the fields and methods of a prepared class only, and
 * the JVM loads VirtualThread at startup without linking it. Class.getDeclaredFields links the class
 * it reflects on and runs none of its code. 0, or -ENOENT (exception cleared). */
static int link_class(jvmtiEnv *jvmti, JNIEnv *jni, jclass cls)
{
    jint status = 0;
    if ((*jvmti)->GetClassStatus(jvmti, cls, &status) == JVMTI_ERROR_NONE && (status & JVMTI_CLASS_STATUS_PREPARED))
        return 0;
    jclass class_class = (*jni)->GetObjectClass(jni, cls);
    jmethodID declared_fields =
        (*jni)->GetMethodID(jni, class_class, "getDeclaredFields", "()[Ljava/lang/reflect/Field;");
    jobject fields = declared_fields ? (*jni)->CallObjectMethod(jni, cls, declared_fields) : NULL;
    (*jni)->ExceptionClear(jni);
    if (fields)
        (*jni)->DeleteLocalRef(jni, fields);
    (*jni)->DeleteLocalRef(jni, class_class);
    return (*jvmti)->GetClassStatus(jvmti, cls, &status) == JVMTI_ERROR_NONE && (status & JVMTI_CLASS_STATUS_PREPARED)
               ? 0
               : -ENOENT;
}

jfieldID jthread_field(jclass cls, const char *name, const char *sig)
{
    jvmtiEnv *jvmti = jthreads.jvmti;
    jint n = 0;
    jfieldID *fields = NULL;
    if (!cls || (*jvmti)->GetClassFields(jvmti, cls, &n, &fields) != JVMTI_ERROR_NONE)
        return NULL;
    jfieldID found = NULL;
    for (jint i = 0; i < n && !found; i++) {
        char *fname = NULL, *fsig = NULL;
        if ((*jvmti)->GetFieldName(jvmti, cls, fields[i], &fname, &fsig, NULL) != JVMTI_ERROR_NONE)
            continue;
        if (strcmp(fname, name) == 0 && strcmp(fsig, sig) == 0)
            found = fields[i];
        (*jvmti)->Deallocate(jvmti, (unsigned char *)fname);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)fsig);
    }
    (*jvmti)->Deallocate(jvmti, (unsigned char *)fields);
    return found;
}

jmethodID jthread_method(jclass cls, const char *name, const char *sig)
{
    jvmtiEnv *jvmti = jthreads.jvmti;
    jint n = 0;
    jmethodID *methods = NULL;
    jmethodID found = NULL;
    if (!cls || (*jvmti)->GetClassMethods(jvmti, cls, &n, &methods) != JVMTI_ERROR_NONE)
        return NULL;
    for (jint i = 0; i < n && !found; i++) {
        char *mname = NULL, *msig = NULL;
        if ((*jvmti)->GetMethodName(jvmti, methods[i], &mname, &msig, NULL) != JVMTI_ERROR_NONE)
            continue;
        if (strcmp(mname, name) == 0 && strcmp(msig, sig) == 0)
            found = methods[i];
        (*jvmti)->Deallocate(jvmti, (unsigned char *)mname);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)msig);
    }
    (*jvmti)->Deallocate(jvmti, (unsigned char *)methods);
    return found;
}

static void find_get_virtual_thread(jvmtiEnv *jvmti)
{
    jint n = 0;
    jvmtiExtensionFunctionInfo *fns = NULL;
    if ((*jvmti)->GetExtensionFunctions(jvmti, &n, &fns) != JVMTI_ERROR_NONE)
        return;
    for (jint i = 0; i < n; i++)
        if (strcmp(fns[i].id, "com.sun.hotspot.functions.GetVirtualThread") == 0)
            jthreads.get_virtual_thread = fns[i].func;
    /* The info's nested strings are JVMTI allocations too; a few bytes kept once. */
    (*jvmti)->Deallocate(jvmti, (unsigned char *)fns);
}

int jthread_init(jvmtiEnv *jvmti, JNIEnv *jni)
{
    jthreads.jvmti = jvmti;
    if (!jthreads.looked_up_extension) {
        jthreads.looked_up_extension = 1;
        find_get_virtual_thread(jvmti);
    }
    if (jthreads.resolved)
        return jthreads.resolved < 0 ? jthreads.resolved : 0;
    jthreads.resolved = -ENOENT;
    jthreads.vthread_class = loaded_class(jvmti, jni, "Ljava/lang/VirtualThread;");
    if (!jthreads.vthread_class) /* not loaded yet (the JVM loads it at startup): loading it initializes it */
        jthreads.vthread_class = jthread_global_class(jni, "java/lang/VirtualThread");
    jclass thread_class = (*jni)->FindClass(jni, "java/lang/Thread");
    if (!jthreads.vthread_class || !thread_class) {
        (*jni)->ExceptionClear(jni);
        log_error("java.lang.VirtualThread not found: no pin detection");
        return -ENOENT;
    }
    if (link_class(jvmti, jni, jthreads.vthread_class) != 0) {
        log_error("java.lang.VirtualThread could not be linked: no pin detection");
        return -ENOENT;
    }
    jthreads.tid_field = (*jni)->GetFieldID(jni, thread_class, "tid", "J");
    jthreads.name_field = (*jni)->GetFieldID(jni, thread_class, "name", "Ljava/lang/String;");
    jthreads.carrier_field = jthread_field(jthreads.vthread_class, "carrierThread", "Ljava/lang/Thread;");
    if (!jthreads.tid_field || !jthreads.name_field || !jthreads.carrier_field) {
        (*jni)->ExceptionClear(jni);
        log_error("Thread.tid/name or VirtualThread.carrierThread not found: no pin detection");
        return -ENOENT;
    }
    jthreads.carrier_thread_class = jthread_global_class(jni, "jdk/internal/misc/CarrierThread");
    jthreads.park_blocker_field = (*jni)->GetFieldID(jni, thread_class, "parkBlocker", "Ljava/lang/Object;");
    (*jni)->ExceptionClear(jni);
    jthreads.resolved = 1;
    return 0;
}

jclass jthread_vthread_class(void)
{
    return jthreads.vthread_class;
}

jclass jthread_carrier_class(void)
{
    return jthreads.carrier_thread_class;
}

int jthread_is_carrier(JNIEnv *jni, jthread thread)
{
    return jthreads.carrier_thread_class && thread && (*jni)->IsInstanceOf(jni, thread, jthreads.carrier_thread_class);
}

jobject jthread_park_blocker(JNIEnv *jni, jthread thread)
{
    return jthreads.park_blocker_field ? (*jni)->GetObjectField(jni, thread, jthreads.park_blocker_field) : NULL;
}

int64_t jthread_id(JNIEnv *jni, jobject thread)
{
    return jthreads.tid_field ? (*jni)->GetLongField(jni, thread, jthreads.tid_field) : 0;
}

/* Copies a Java String into a bounded buffer without allocating, in modified
 * UTF-8 as JVMTI gives names: a NUL as C0 80, so a name is not cut at it
 * (common/utf8.c decodes it; the reports show \x00 or \u0000). */
static void copy_java_string(JNIEnv *jni, jstring s, char *out, size_t cap)
{
    out[0] = '\0';
    if (!s)
        return;
    jchar chars[JTHREAD_NAME_MAX];
    jsize n = (*jni)->GetStringLength(jni, s);
    if (n > (jsize)(sizeof(chars) / sizeof(chars[0])))
        n = sizeof(chars) / sizeof(chars[0]);
    (*jni)->GetStringRegion(jni, s, 0, n, chars);
    if ((*jni)->ExceptionCheck(jni)) {
        (*jni)->ExceptionClear(jni);
        return;
    }
    size_t o = 0;
    for (jsize i = 0; i < n; i++) {
        jchar c = chars[i];
        if (c != 0 && c < 0x80) {
            if (o + 1 >= cap)
                break;
            out[o++] = (char)c;
        } else if (c < 0x800) {
            if (o + 2 >= cap)
                break;
            out[o++] = (char)(0xc0 | (c >> 6));
            out[o++] = (char)(0x80 | (c & 0x3f));
        } else {
            if (o + 3 >= cap)
                break;
            out[o++] = (char)(0xe0 | (c >> 12));
            out[o++] = (char)(0x80 | ((c >> 6) & 0x3f));
            out[o++] = (char)(0x80 | (c & 0x3f));
        }
    }
    out[o] = '\0';
}

void jthread_copy_name(JNIEnv *jni, jobject thread, char *out)
{
    jstring name = (jstring)(*jni)->GetObjectField(jni, thread, jthreads.name_field);
    copy_java_string(jni, name, out, JTHREAD_NAME_MAX);
    if (name)
        (*jni)->DeleteLocalRef(jni, name);
}

int jthread_self_tid(void)
{
    if (!self.tid)
        self.tid = (int)syscall(SYS_gettid);
    return self.tid;
}

const char *jthread_self_name_set(JNIEnv *jni, jthread thread)
{
    jthread_copy_name(jni, thread, self.name);
    self.name_known = 1;
    return self.name;
}

const char *jthread_self_carrier_name(JNIEnv *jni, jthread vthread)
{
    if (!self.name_known) {
        jobject carrier = (*jni)->GetObjectField(jni, vthread, jthreads.carrier_field);
        if (carrier) {
            jthread_copy_name(jni, carrier, self.name);
            self.name_known = 1;
            (*jni)->DeleteLocalRef(jni, carrier);
        }
    }
    return self.name;
}

/* HotSpot's GetVirtualThread: right on any JDK, but it holds up every carrier's
 * mounts and unmounts while it runs (an all-threads transition disabler). */
static int mounted_by_extension(jthread carrier, jthread *vt)
{
    *vt = NULL;
    if (!jthreads.get_virtual_thread)
        return -ENOSYS;
    if (COUNTED(CALL_GET_VIRTUAL_THREAD, jthreads.get_virtual_thread(jthreads.jvmti, carrier, vt)) !=
        JVMTI_ERROR_NONE) {
        *vt = NULL;
        return -EINVAL;
    }
    return 0;
}

/* The fields behind Thread.currentThread() as Java sees it on a carrier: the
 * carrier's innermost Continuation (Thread.cont, set by Continuation.run), whose
 * target, for a virtual thread, is VirtualThread$VThreadContinuation's Runnable
 * capturing the VirtualThread (val$vthread, the same on 21 and 25). Resolved
 * once, on the writer. */
static struct {
    int resolved; /* 0 not yet, 1 found, -1 not this JDK's layout */
    jfieldID thread_cont, cont_target, target_vthread;
    jclass target_class;
} by_fields;

static void resolve_by_fields(JNIEnv *jni)
{
    by_fields.resolved = -1;
    jclass thread_class = jthread_global_class(jni, "java/lang/Thread");
    jclass cont_class = jthread_global_class(jni, "jdk/internal/vm/Continuation");
    jclass target_class = jthread_global_class(jni, "java/lang/VirtualThread$VThreadContinuation$1");
    if (thread_class && cont_class && target_class) { /* a missing field: NULL and NoSuchFieldError, cleared */
        by_fields.thread_cont = (*jni)->GetFieldID(jni, thread_class, "cont", "Ljdk/internal/vm/Continuation;");
        (*jni)->ExceptionClear(jni);
        by_fields.cont_target = (*jni)->GetFieldID(jni, cont_class, "target", "Ljava/lang/Runnable;");
        (*jni)->ExceptionClear(jni);
        by_fields.target_vthread = (*jni)->GetFieldID(jni, target_class, "val$vthread", "Ljava/lang/VirtualThread;");
        (*jni)->ExceptionClear(jni);
    }
    if (thread_class)
        (*jni)->DeleteGlobalRef(jni, thread_class);
    if (cont_class)
        (*jni)->DeleteGlobalRef(jni, cont_class);
    if (by_fields.thread_cont && by_fields.cont_target && by_fields.target_vthread && jthreads.tid_field) {
        by_fields.target_class = target_class;
        by_fields.resolved = 1;
    } else {
        if (target_class)
            (*jni)->DeleteGlobalRef(jni, target_class);
        log_info("this JDK's Thread.cont layout is not the known one: the sampler and the watchdog ask JVMTI which "
                 "virtual thread each carrier runs (costlier on mount-heavy code)");
    }
}

/* 0 with *vt (NULL: no continuation mounted), or -ENOENT: the fields cannot tell. */
static int mounted_by_fields(JNIEnv *jni, jthread carrier, jthread *vt)
{
    *vt = NULL;
    if (by_fields.resolved == 0)
        resolve_by_fields(jni);
    if (by_fields.resolved < 0)
        return -ENOENT;
    jobject cont = (*jni)->GetObjectField(jni, carrier, by_fields.thread_cont);
    if (!cont)
        return 0; /* no continuation mounted: the carrier runs its own code or waits for work */
    jobject target = (*jni)->GetObjectField(jni, cont, by_fields.cont_target);
    /* the field id is only valid on its class: anything else (a nested or foreign continuation) goes to JVMTI */
    if (target && (*jni)->IsInstanceOf(jni, target, by_fields.target_class))
        *vt = (jthread)(*jni)->GetObjectField(jni, target, by_fields.target_vthread);
    if (target)
        (*jni)->DeleteLocalRef(jni, target);
    (*jni)->DeleteLocalRef(jni, cont);
    return *vt ? 0 : -ENOENT;
}

int jthread_mounted(JNIEnv *jni, jthread carrier, jthread *vt)
{
    if (mounted_by_fields(jni, carrier, vt) == 0)
        return 0;
    return mounted_by_extension(carrier, vt);
}

int jthread_can_see_mounted(JNIEnv *jni)
{
    if (by_fields.resolved == 0)
        resolve_by_fields(jni);
    return by_fields.resolved > 0 || jthreads.get_virtual_thread != NULL;
}
