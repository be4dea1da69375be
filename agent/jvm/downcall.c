#include "downcall.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/frames_kind.h"
#include "self_cost.h"

#define STUB_TARGET_SLOT 1 /* invoke(SegmentAllocator, MemorySegment target, args...), static */

#define DOWNCALL_SITES 64

static int can_read_locals;
static struct downcall_site {
    jmethodID caller;
    int32_t bci;
    int ambiguous; /* called two targets: never recalled */
    struct downcall_target target;
} sites[DOWNCALL_SITES];
static unsigned n_sites;
static jclass segment_class;      /* java.lang.foreign.MemorySegment, global ref */
static jmethodID segment_address; /* MemorySegment.address()J */

void downcall_configure(int can)
{
    can_read_locals = can;
}

int downcall_can_resolve(void)
{
    return can_read_locals;
}

int downcall_name(uint64_t address, struct downcall_target *out)
{
    Dl_info info;
    void *target = (void *)(uintptr_t)address; /* NOLINT(performance-no-int-to-ptr): a C address from Java */
    out->address = address;
    out->symbol[0] = out->library[0] = '\0';
    if (!address || !dladdr(target, &info))
        return -ENOENT;
    if (info.dli_fname)
        snprintf(out->library, sizeof(out->library), "%s", info.dli_fname);
    if (info.dli_sname && info.dli_saddr == target)
        snprintf(out->symbol, sizeof(out->symbol), "%s", info.dli_sname);
    else if (info.dli_sname && info.dli_saddr)
        snprintf(out->symbol, sizeof(out->symbol), "%s+0x%llx", info.dli_sname,
                 (unsigned long long)(address - (uint64_t)(uintptr_t)info.dli_saddr));
    return 0;
}

static struct downcall_site *find_site(jmethodID caller, int32_t bci)
{
    for (unsigned i = 0; i < n_sites; i++)
        if (sites[i].caller == caller && sites[i].bci == bci)
            return &sites[i];
    return NULL;
}

void downcall_site_learn(jmethodID caller, int32_t bci, const struct downcall_target *target)
{
    if (!caller || !target->address)
        return;
    struct downcall_site *site = find_site(caller, bci);
    if (site) {
        site->ambiguous |= site->target.address != target->address;
        return;
    }
    if (n_sites == DOWNCALL_SITES)
        return;
    site = &sites[n_sites++];
    site->caller = caller;
    site->bci = bci;
    site->ambiguous = 0;
    site->target = *target;
}

int downcall_site_recall(jmethodID caller, int32_t bci, struct downcall_target *out)
{
    const struct downcall_site *site = find_site(caller, bci);
    if (!site || site->ambiguous)
        return -ENOENT;
    *out = site->target;
    return 0;
}

int downcall_name_jna(const char *symbol, struct downcall_target *out)
{
    memset(out, 0, sizeof(*out));
    out->api = NATIVE_API_JNA;
    if (!symbol || !*symbol)
        return -ENOENT;
    snprintf(out->symbol, sizeof(out->symbol), "%s", symbol);
    void *target = dlsym(RTLD_DEFAULT, symbol); /* the first definition in the global scope */
    Dl_info info;
    if (!target || !dladdr(target, &info) || !info.dli_fname)
        return -ENOENT;
    out->address = (uint64_t)(uintptr_t)target;
    snprintf(out->library, sizeof(out->library), "%s", info.dli_fname);
    return 0;
}

static int resolve_segment_class(JNIEnv *jni)
{
    if (segment_address)
        return 0;
    jclass local = (*jni)->FindClass(jni, "java/lang/foreign/MemorySegment");
    if (!local) {
        (*jni)->ExceptionClear(jni);
        return -EIO;
    }
    jmethodID address = (*jni)->GetMethodID(jni, local, "address", "()J");
    jclass global = address ? (jclass)(*jni)->NewGlobalRef(jni, local) : NULL;
    (*jni)->DeleteLocalRef(jni, local);
    if (!global) {
        (*jni)->ExceptionClear(jni);
        return -EIO;
    }
    segment_class = global;
    segment_address = address;
    return 0;
}

int downcall_resolve(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jint depth, jmethodID stub,
                     struct downcall_target *out)
{
    out->address = 0;
    out->symbol[0] = out->library[0] = '\0';
    if (!can_read_locals)
        return -ENOTSUP;
    if (resolve_segment_class(jni))
        return -EIO;
    /* A virtual thread's locals are readable only while it is suspended: for
     * the few microseconds of one read, while it is blocked anyway. */
    if ((*jvmti)->SuspendThread(jvmti, thread) != JVMTI_ERROR_NONE)
        return -EIO;
    jmethodID method = NULL;
    jlocation location = 0;
    jobject segment = NULL;
    int rc = -EIO;
    if (COUNTED(CALL_GET_FRAME_LOCATION, (*jvmti)->GetFrameLocation(jvmti, thread, depth, &method, &location)) !=
            JVMTI_ERROR_NONE ||
        method != stub)
        rc = -ESTALE;
    else if (COUNTED(CALL_GET_LOCAL_OBJECT,
                     (*jvmti)->GetLocalObject(jvmti, thread, depth, STUB_TARGET_SLOT, &segment)) == JVMTI_ERROR_NONE &&
             segment)
        rc = 0;
    (*jvmti)->ResumeThread(jvmti, thread);
    if (rc)
        return rc;
    rc = -EIO;
    if ((*jni)->IsInstanceOf(jni, segment, segment_class)) {
        jlong address = (*jni)->CallLongMethod(jni, segment, segment_address);
        if ((*jni)->ExceptionCheck(jni))
            (*jni)->ExceptionClear(jni);
        else if (address) {
            downcall_name((uint64_t)address, out); /* an address dladdr cannot name is still the target */
            rc = 0;
        }
    }
    (*jni)->DeleteLocalRef(jni, segment);
    return rc;
}
