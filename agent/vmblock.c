#include "vmblock.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bytecode.h"

/* /proc/self/task/TID/<file> into buf (NUL-terminated): its length, or -1.
 * The file stays open (*fd1 = fd + 1) and is read again with pread. */
static ssize_t read_task_file(int tid, const char *file, int *fd1, int *fd_tid, char *buf, size_t cap)
{
    if (tid <= 0)
        return -1;
    if (*fd1 > 0 && *fd_tid != tid) {
        close(*fd1 - 1);
        *fd1 = 0;
    }
    if (*fd1 <= 0) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/self/task/%d/%s", tid, file);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return -1;
        *fd1 = fd + 1;
        *fd_tid = tid;
    }
    ssize_t n = pread(*fd1 - 1, buf, cap - 1, 0);
    if (n <= 0) { /* the thread is gone */
        close(*fd1 - 1);
        *fd1 = 0;
        return -1;
    }
    buf[n] = '\0';
    return n;
}

int vmblock_thread_sleeps(int tid, int *fd1, int *fd_tid)
{
    char buf[512];
    if (read_task_file(tid, "stat", fd1, fd_tid, buf, sizeof(buf)) < 0)
        return -1;
    const char *p = strrchr(buf, ')'); /* the comm may hold anything; the state follows it */
    if (!p || p[1] != ' ')
        return -1;
    return p[2] == 'S' || p[2] == 'D' ? 1 : p[2] == 'R' ? 0 : -1;
}

int vmblock_thread_switches(int tid, int *fd1, int *fd_tid, uint64_t *out)
{
    char buf[4096];
    if (read_task_file(tid, "status", fd1, fd_tid, buf, sizeof(buf)) < 0)
        return -1;
    const char *p = strstr(buf, "\nvoluntary_ctxt_switches:");
    if (!p)
        return -1;
    char *end;
    unsigned long long v = strtoull(p + sizeof("\nvoluntary_ctxt_switches:") - 1, &end, 10);
    if (end == p + sizeof("\nvoluntary_ctxt_switches:") - 1)
        return -1;
    *out = v;
    return 0;
}

void vmblock_describe(jvmtiEnv *jvmti, jmethodID method, jlocation bci, char *out, size_t cap)
{
    out[0] = '\0';
    if (!method || bci < 0)
        return;
    jint code_len = 0, cp_count = 0, cp_bytes = 0;
    unsigned char *code = NULL, *cp = NULL;
    jclass klass = NULL;
    if ((*jvmti)->GetBytecodes(jvmti, method, &code_len, &code) != JVMTI_ERROR_NONE)
        return;
    if ((*jvmti)->GetMethodDeclaringClass(jvmti, method, &klass) == JVMTI_ERROR_NONE &&
        (*jvmti)->GetConstantPool(jvmti, klass, &cp_count, &cp_bytes, &cp) == JVMTI_ERROR_NONE) {
        char name[256];
        int op = bytecode_class_at(code, (size_t)code_len, (size_t)bci, cp, (size_t)cp_bytes, cp_count, name,
                                   sizeof(name));
        const char *what = op == BC_NEW           ? "new"
                           : op == BC_GETSTATIC   ? "getstatic"
                           : op == BC_PUTSTATIC   ? "putstatic"
                           : op == BC_INVOKESTATIC ? "invokestatic"
                                                   : NULL;
        if (what)
            snprintf(out, cap, "%s of %s (class initialization)", what, name);
        (*jvmti)->Deallocate(jvmti, cp);
    }
    (*jvmti)->Deallocate(jvmti, code);
}
