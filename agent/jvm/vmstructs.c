#include "vmstructs.h"

#include <dlfcn.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "jthread.h"

static int resolved; /* 0 not tried, 1 usable, -1 unusable */
static long osthread_offset = -1, thread_id_offset = -1, thread_state_offset = -1;
static long state_in_native = -1, state_in_native_trans = -1, state_blocked = -1;
static jfieldID eetop_field;
static long thread_obj_offset = -1, vthread_offset = -1, pending_offset = -1, waiting_offset = -1;
static struct vm_thread_layout layout;
static int layout_ok;

static uintptr_t exported(const char *name)
{
    void *p = dlsym(RTLD_DEFAULT, name);
    return p ? *(uintptr_t *)p : 0;
}

static long exported_long(const char *name, int *ok)
{
    void *p = dlsym(RTLD_DEFAULT, name);
    if (!p)
        *ok = 0;
    return p ? *(long *)p : 0;
}

/* HotSpot's JavaThreadState values, from its exported integer constants. */
static void resolve_states(void)
{
    uintptr_t entries = exported("gHotSpotVMIntConstants");
    int ok = 1;
    long name_off = exported_long("gHotSpotVMIntConstantEntryNameOffset", &ok);
    long value_off = exported_long("gHotSpotVMIntConstantEntryValueOffset", &ok);
    long stride = exported_long("gHotSpotVMIntConstantEntryArrayStride", &ok);
    if (!entries || !ok || stride <= 0)
        return;
    for (uintptr_t e = entries;; e += (uintptr_t)stride) {
        const char *name = *(const char **)(e + (uintptr_t)name_off);
        if (!name)
            break;
        long value = *(int32_t *)(e + (uintptr_t)value_off);
        if (strcmp(name, "_thread_in_native") == 0)
            state_in_native = value;
        else if (strcmp(name, "_thread_in_native_trans") == 0)
            state_in_native_trans = value;
        else if (strcmp(name, "_thread_blocked") == 0)
            state_blocked = value;
    }
}

/* Reads len bytes at addr of this process without faulting (an address that
 * is not what it seems gives -1, not a crash). */
static int safe_read(uintptr_t addr, void *out, size_t len)
{
    struct iovec local = {out, len}, remote = {(void *)addr, len};
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

/* What the kernel view does at a context switch, done here on the calling
 * thread: its thread object through _threadObj, the same through _vthread (no
 * virtual thread mounted), and its tid where the layout says. */
static int layout_reads_right(JNIEnv *jni, jobject self, jfieldID tid_field)
{
    uintptr_t jt = (uintptr_t)(*jni)->GetLongField(jni, self, eetop_field);
    jlong want = (*jni)->GetLongField(jni, self, tid_field);
    uintptr_t h_obj, h_vt, obj, vt;
    int64_t tid;
    if (!jt || safe_read(jt + (uintptr_t)thread_obj_offset, &h_obj, sizeof(h_obj)) ||
        safe_read(jt + (uintptr_t)vthread_offset, &h_vt, sizeof(h_vt)) || !h_obj || !h_vt ||
        safe_read(h_obj, &obj, sizeof(obj)) || safe_read(h_vt, &vt, sizeof(vt)) || !obj || obj != vt ||
        safe_read(obj + layout.tid, &tid, sizeof(tid)))
        return 0;
    return tid == want;
}

/* An instance field's offset from its jfieldID: HotSpot encodes it there, shifted past two tag
 * bits (jfieldIDWorkaround; a checked one keeps a small offset). resolve_layout checks the
 * decoding on a live thread with Thread.tid. */
static uint32_t field_offset(jfieldID field)
{
    uintptr_t f = (uintptr_t)field;
    return (uint32_t)(f & 1 ? (f >> 2) & 0x7f : (f >> 2) & 0xfff);
}

/* java.lang.VirtualThread.state's offset, 0 when the JDK has no such int field: the kernel view
 * reads it to tell a park on the carrier (PINNED) from a VM wait that looks like one. Decoded as
 * tid's is, which the live check proves for this JVM. */
static uint32_t vthread_state_offset(void)
{
    jclass vt_class = jthread_vthread_class(); /* jthread_init ran first (agent.c) */
    jfieldID state = vt_class ? jthread_field(vt_class, "state", "I") : NULL;
    uint32_t off = state ? field_offset(state) : 0;
    return off >= 8 && off % 4 == 0 ? off : 0; /* past the object header, an int's alignment */
}

static void resolve_layout(JNIEnv *jni, jclass thread_class)
{
    if (thread_obj_offset < 0 || vthread_offset < 0 || pending_offset < 0 || waiting_offset < 0 ||
        thread_state_offset < 0 || state_blocked < 0 || state_in_native < 0)
        return;
    jfieldID tid_field = (*jni)->GetFieldID(jni, thread_class, "tid", "J");
    jmethodID current = (*jni)->GetStaticMethodID(jni, thread_class, "currentThread", "()Ljava/lang/Thread;");
    jobject self = tid_field && current ? (*jni)->CallStaticObjectMethod(jni, thread_class, current) : NULL;
    if ((*jni)->ExceptionCheck(jni) || !self) {
        (*jni)->ExceptionClear(jni);
        return;
    }
    /* the reads below check every offset on a live thread */
    layout = (struct vm_thread_layout){
        .thread_obj = (uint32_t)thread_obj_offset,
        .vthread = (uint32_t)vthread_offset,
        .pending_monitor = (uint32_t)pending_offset,
        .waiting_monitor = (uint32_t)waiting_offset,
        .thread_state = (uint32_t)thread_state_offset,
        .tid = field_offset(tid_field),
        .vt_state = vthread_state_offset(),
        .state_blocked = (int32_t)state_blocked,
        .state_in_native = (int32_t)state_in_native,
    };
    /* a collection can move the object between two reads: a few tries */
    for (int i = 0; i < 3 && !layout_ok; i++)
        layout_ok = layout_reads_right(jni, self, tid_field);
    (*jni)->DeleteLocalRef(jni, self);
}

static void resolve(JNIEnv *jni)
{
    resolved = -1;
    uintptr_t entries = exported("gHotSpotVMStructs");
    int ok = 1;
    long type_off = exported_long("gHotSpotVMStructEntryTypeNameOffset", &ok);
    long field_off = exported_long("gHotSpotVMStructEntryFieldNameOffset", &ok);
    long offset_off = exported_long("gHotSpotVMStructEntryOffsetOffset", &ok);
    long stride = exported_long("gHotSpotVMStructEntryArrayStride", &ok);
    if (!entries || !ok || stride <= 0)
        return;
    for (uintptr_t e = entries;; e += (uintptr_t)stride) {
        const char *type = *(const char **)(e + (uintptr_t)type_off);
        const char *field = *(const char **)(e + (uintptr_t)field_off);
        if (!type)
            break;
        if (!field)
            continue;
        long off = (long)*(uint64_t *)(e + (uintptr_t)offset_off);
        /* JavaThread::_osthread up to 24; Thread::_osthread from 25 on */
        if ((strcmp(type, "JavaThread") == 0 || strcmp(type, "Thread") == 0) && strcmp(field, "_osthread") == 0)
            osthread_offset = off;
        else if (strcmp(type, "OSThread") == 0 && strcmp(field, "_thread_id") == 0)
            thread_id_offset = off;
        else if (strcmp(type, "JavaThread") == 0 && strcmp(field, "_thread_state") == 0)
            thread_state_offset = off;
        else if (strcmp(type, "JavaThread") == 0 && strcmp(field, "_threadObj") == 0)
            thread_obj_offset = off;
        else if (strcmp(type, "JavaThread") == 0 && strcmp(field, "_vthread") == 0)
            vthread_offset = off;
        else if (strcmp(type, "JavaThread") == 0 && strcmp(field, "_current_pending_monitor") == 0)
            pending_offset = off;
        else if (strcmp(type, "JavaThread") == 0 && strcmp(field, "_current_waiting_monitor") == 0)
            waiting_offset = off;
    }
    resolve_states();
    jclass thread_class = (*jni)->FindClass(jni, "java/lang/Thread");
    eetop_field = thread_class ? (*jni)->GetFieldID(jni, thread_class, "eetop", "J") : NULL;
    if (!eetop_field)
        (*jni)->ExceptionClear(jni);
    if (osthread_offset >= 0 && thread_id_offset >= 0 && eetop_field)
        resolved = 1;
    if (resolved == 1 && thread_class)
        resolve_layout(jni, thread_class);
}

int vmstructs_thread_tid(JNIEnv *jni, jobject thread)
{
    if (!resolved)
        resolve(jni);
    if (resolved != 1 || !thread)
        return 0;
    uintptr_t java_thread = (uintptr_t)(*jni)->GetLongField(jni, thread, eetop_field);
    if (!java_thread)
        return 0; /* not started or already gone */
    uintptr_t osthread = *(uintptr_t *)(java_thread + (uintptr_t)osthread_offset);
    if (!osthread)
        return 0;
    return (int)*(pid_t *)(osthread + (uintptr_t)thread_id_offset);
}

void vmstructs_init(JNIEnv *jni)
{
    if (!resolved)
        resolve(jni);
}

uintptr_t vmstructs_java_thread(JNIEnv *jni, jobject thread)
{
    if (!resolved)
        resolve(jni);
    if (!eetop_field || !thread)
        return 0;
    return (uintptr_t)(*jni)->GetLongField(jni, thread, eetop_field);
}

enum vm_state vmstructs_thread_state(uintptr_t java_thread)
{
    if (!java_thread || thread_state_offset < 0 || state_in_native < 0 || state_blocked < 0)
        return VM_STATE_UNKNOWN;
    long st = *(volatile int32_t *)(java_thread + (uintptr_t)thread_state_offset);
    if (st == state_in_native || st == state_in_native_trans)
        return VM_STATE_NATIVE;
    return st == state_blocked ? VM_STATE_BLOCKED : VM_STATE_OTHER;
}

int vmstructs_thread_layout(struct vm_thread_layout *out)
{
    if (!layout_ok)
        return 0;
    *out = layout;
    return 1;
}
