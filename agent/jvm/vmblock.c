#include "vmblock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bytecode.h"
#include "clock.h"

/* /proc/self/task/TID/<file> into buf (NUL-terminated): its length, or -errno.
 * The file stays open (*fd1 = fd + 1) and is read again with pread. */
static ssize_t read_task_file(int tid, const char *file, int *fd1, int *fd_tid, char *buf, size_t cap)
{
    if (tid <= 0)
        return -ESRCH;
    if (*fd1 > 0 && *fd_tid != tid) {
        close(*fd1 - 1);
        *fd1 = 0;
    }
    if (*fd1 <= 0) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/self/task/%d/%s", tid, file);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return -errno;
        *fd1 = fd + 1;
        *fd_tid = tid;
    }
    ssize_t n = pread(*fd1 - 1, buf, cap - 1, 0);
    if (n <= 0) { /* the thread is gone */
        int err = n < 0 ? -errno : -ESRCH;
        close(*fd1 - 1);
        *fd1 = 0;
        return err;
    }
    buf[n] = '\0';
    return n;
}

int vmblock_thread_sleeps(int tid, int *fd1, int *fd_tid)
{
    char buf[512];
    ssize_t n = read_task_file(tid, "stat", fd1, fd_tid, buf, sizeof(buf));
    if (n < 0)
        return (int)n;
    const char *p = strrchr(buf, ')'); /* the comm may hold anything; the state follows it */
    if (!p || p[1] != ' ')
        return -EINVAL;
    return p[2] == 'S' || p[2] == 'D' ? 1 : p[2] == 'R' ? 0 : -EINVAL;
}

int vmblock_thread_switches(int tid, int *fd1, int *fd_tid, uint64_t *out)
{
    char buf[4096];
    ssize_t n = read_task_file(tid, "status", fd1, fd_tid, buf, sizeof(buf));
    if (n < 0)
        return (int)n;
    const char *p = strstr(buf, "\nvoluntary_ctxt_switches:");
    if (!p)
        return -EINVAL;
    char *end;
    unsigned long long v = strtoull(p + sizeof("\nvoluntary_ctxt_switches:") - 1, &end, 10);
    if (end == p + sizeof("\nvoluntary_ctxt_switches:") - 1)
        return -EINVAL;
    *out = v;
    return 0;
}

/* The system calls a blocked carrier is commonly found in, by this
 * architecture's numbers (/proc/.../syscall gives the native number).
 * Calls an architecture lacks (aarch64 has no poll, select, pause, ...) are
 * left out there; an unlisted call reads "syscall N". */
#define CALL(name)                                                                                                     \
    {                                                                                                                  \
        SYS_##name, #name                                                                                              \
    }
static const struct {
    long nr;
    const char *name;
} blocking_calls[] = {
    CALL(read),        CALL(write),   CALL(pread64),         CALL(nanosleep), CALL(connect),
    CALL(accept),      CALL(sendto),  CALL(recvfrom),        CALL(sendmsg),   CALL(recvmsg),
    CALL(wait4),       CALL(futex),   CALL(clock_nanosleep), CALL(pselect6),  CALL(ppoll),
    CALL(epoll_pwait), CALL(accept4),
#ifdef SYS_poll
    CALL(poll),
#endif
#ifdef SYS_select
    CALL(select),
#endif
#ifdef SYS_pause
    CALL(pause),
#endif
#ifdef SYS_epoll_wait
    CALL(epoll_wait),
#endif
};
#undef CALL

static void read_line(const char *path, char *buf, size_t cap)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    if (!fgets(buf, (int)cap, f))
        buf[0] = '\0';
    fclose(f);
}

void vmblock_blocked_in(int tid, char *out, size_t cap)
{
    out[0] = '\0';
    if (tid <= 0)
        return;
    char path[64], buf[128], wchan[64];
    snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
    read_line(path, buf, sizeof(buf));
    snprintf(path, sizeof(path), "/proc/self/task/%d/wchan", tid);
    read_line(path, wchan, sizeof(wchan));
    const char *what = NULL;
    char number[32] = "";
    if (strncmp(buf, "running", 7) == 0)
        what = "running (on CPU)";
    else if (buf[0] >= '0' && buf[0] <= '9') {
        long nr = strtol(buf, NULL, 10);
        for (size_t i = 0; i < sizeof(blocking_calls) / sizeof(blocking_calls[0]) && !what; i++)
            if (blocking_calls[i].nr == nr)
                what = blocking_calls[i].name;
        if (!what) {
            snprintf(number, sizeof(number), "syscall %ld", nr);
            what = number;
        }
    }
    int has_wchan = wchan[0] && strcmp(wchan, "0") != 0;
    snprintf(out, cap, "%s%s%s%s", what ? what : "", has_wchan ? (what ? " (wchan " : "wchan ") : "",
             has_wchan ? wchan : "", has_wchan && what ? ")" : "");
}

static void method_owner(jvmtiEnv *jvmti, jmethodID method, char *cls, size_t cap, char *name, size_t name_cap)
{
    jclass klass = NULL;
    char *sig = NULL, *mname = NULL;
    cls[0] = name[0] = '\0';
    if ((*jvmti)->GetMethodDeclaringClass(jvmti, method, &klass) == JVMTI_ERROR_NONE &&
        (*jvmti)->GetClassSignature(jvmti, klass, &sig, NULL) == JVMTI_ERROR_NONE) {
        bytecode_class_name(sig, cls, cap);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
    }
    if ((*jvmti)->GetMethodName(jvmti, method, &mname, NULL, NULL) == JVMTI_ERROR_NONE) {
        snprintf(name, name_cap, "%s", mname);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)mname);
    }
}

int vmblock_is_object_method(jvmtiEnv *jvmti, jmethodID method)
{
    char owner[64], name[16];
    method_owner(jvmti, method, owner, sizeof(owner), name, sizeof(name));
    return strcmp(owner, "java.lang.Object") == 0;
}

int vmblock_describe(jvmtiEnv *jvmti, jmethodID method, jlocation bci, char *out, size_t cap, char *cls, size_t cls_cap)
{
    out[0] = '\0';
    cls[0] = '\0';
    if (!method)
        return -1;
    if (bci < 0) { /* a native method that called into the JVM, which blocks there */
        char owner[256], name[128];
        method_owner(jvmti, method, owner, sizeof(owner), name, sizeof(name));
        if (strcmp(owner, "java.lang.Class") == 0 && strcmp(name, "forName0") == 0) {
            snprintf(out, cap, "Class.forName (class initialization)");
            return 1;
        }
        snprintf(out, cap, "inside the JVM under native %s.%s", owner, name);
        return 0;
    }
    jint code_len = 0, cp_count = 0, cp_bytes = 0;
    unsigned char *code = NULL, *cp = NULL;
    jclass klass = NULL;
    int class_init = -1;
    if ((*jvmti)->GetBytecodes(jvmti, method, &code_len, &code) != JVMTI_ERROR_NONE)
        return -1;
    if ((*jvmti)->GetMethodDeclaringClass(jvmti, method, &klass) == JVMTI_ERROR_NONE &&
        (*jvmti)->GetConstantPool(jvmti, klass, &cp_count, &cp_bytes, &cp) == JVMTI_ERROR_NONE) {
        char name[256];
        int op =
            bytecode_class_at(code, (size_t)code_len, (size_t)bci, cp, (size_t)cp_bytes, cp_count, name, sizeof(name));
        const char *what = op == BC_NEW            ? "new"
                           : op == BC_GETSTATIC    ? "getstatic"
                           : op == BC_PUTSTATIC    ? "putstatic"
                           : op == BC_INVOKESTATIC ? "invokestatic"
                                                   : NULL;
        class_init = what != NULL;
        if (what) {
            snprintf(out, cap, "%s of %s (class initialization)", what, name);
            snprintf(cls, cls_cap, "%s", name);
        }
        (*jvmti)->Deallocate(jvmti, cp);
    }
    (*jvmti)->Deallocate(jvmti, code);
    return class_init;
}

int vmblock_class_initialized(jvmtiEnv *jvmti, JNIEnv *jni, jmethodID method, const char *name)
{
    jclass holder = NULL;
    jobject loader = NULL;
    if (!jni || !method || !name[0] || (*jvmti)->GetMethodDeclaringClass(jvmti, method, &holder) != JVMTI_ERROR_NONE)
        return -1;
    jvmtiError err = (*jvmti)->GetClassLoader(jvmti, holder, &loader);
    (*jni)->DeleteLocalRef(jni, holder);
    if (err != JVMTI_ERROR_NONE)
        return -1;
    char want[512];
    int n = snprintf(want, sizeof(want), "L%s;", name);
    if (n < 0 || (size_t)n >= sizeof(want))
        return -1;
    for (char *p = want; *p; p++)
        if (*p == '.')
            *p = '/';
    /* the classes that loader resolved by name: the constant pool's class is among them once resolved */
    jint count = 0;
    jclass *classes = NULL;
    err = (*jvmti)->GetClassLoaderClasses(jvmti, loader, &count, &classes);
    if (loader)
        (*jni)->DeleteLocalRef(jni, loader);
    if (err != JVMTI_ERROR_NONE)
        return -1;
    if ((*jni)->EnsureLocalCapacity(jni, count + 8) != 0) /* count local refs at once: -Xcheck:jni warns */
        (*jni)->ExceptionClear(jni);                      /* its OutOfMemoryError: the refs exist anyway */
    int found = -1;
    for (jint i = 0; i < count; i++) {
        char *sig = NULL;
        jint status = 0;
        if (found < 0 && (*jvmti)->GetClassSignature(jvmti, classes[i], &sig, NULL) == JVMTI_ERROR_NONE) {
            if (strcmp(sig, want) == 0 && (*jvmti)->GetClassStatus(jvmti, classes[i], &status) == JVMTI_ERROR_NONE)
                found = (status & JVMTI_CLASS_STATUS_INITIALIZED) != 0;
            (*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
        }
        (*jni)->DeleteLocalRef(jni, classes[i]);
    }
    (*jvmti)->Deallocate(jvmti, (unsigned char *)classes);
    return found;
}

/* The thread's CPU clock, which is what pthread_getcpuclockid(3) returns, built from the tid (the
 * kernel's MAKE_THREAD_CPUCLOCK): the writer knows carriers by tid, and attach finds them so. */
int64_t vmblock_thread_cpu_ns(int tid)
{
    enum { CPUCLOCK_SCHED = 2, CPUCLOCK_PERTHREAD = 4 };
    clockid_t clock = (clockid_t)((~(unsigned)tid << 3) | CPUCLOCK_PERTHREAD | CPUCLOCK_SCHED);
    struct timespec ts;
    if (tid <= 0 || clock_gettime(clock, &ts) != 0)
        return 0;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
