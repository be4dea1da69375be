/* The watchdog's view of a carrier's OS thread and of where a virtual thread
 * blocked inside the JVM: runs on the writer thread only (it does file I/O
 * and JVMTI calls, never from a hot callback). */
#ifndef VTPIN_VMBLOCK_H
#define VTPIN_VMBLOCK_H

#include <jvmti.h>
#include <stddef.h>
#include <stdint.h>

/* /proc/self/task/TID/stat: 1 when the thread sleeps (S or D), 0 when it runs
 * or waits for a CPU (R), -errno when unknown (-ESRCH: no such thread).
 * *fd1 caches the open file (fd + 1,
 * 0 for none) for *fd_tid: it is read again with pread, not reopened, on
 * every sample; a different tid reopens it. */
int vmblock_thread_sleeps(int tid, int *fd1, int *fd_tid);

/* voluntary_ctxt_switches of /proc/self/task/TID/status into *out: 0, or -errno
 * when unknown. A parked carrier switches out once per park, so a count
 * that rose between two samples that both saw it parked means a new park.
 * *fd1 / *fd_tid: as above, for the status file. */
int vmblock_thread_switches(int tid, int *fd1, int *fd_tid, uint64_t *out);

/* The CPU time of the thread tid of this process, in ns: 0 when unknown. Two samples with the
 * same time saw a thread that had no CPU in between (asleep, or runnable and waiting for one). */
int64_t vmblock_thread_cpu_ns(int tid);

/* Where the kernel says thread tid sleeps, from /proc/self/task/TID/syscall
 * and wchan: "nanosleep (wchan hrtimer_nanosleep)", "syscall 999", "running
 * (on CPU)"; "" when unknown. System calls are named by <sys/syscall.h>
 * numbers, so the names are right on every architecture. */
void vmblock_blocked_in(int tid, char *out, size_t cap);

/* "getstatic of com.example.Slow" into out[cap] when the instruction at bci of
 * method names a class (new, getstatic, putstatic, invokestatic: the class the
 * JVM initializes there), and that class into cls[cls_cap]; "" otherwise, or
 * without can_get_bytecodes / can_get_constant_pool. A native method (bci -1)
 * blocked inside the JVM: "Class.forName (class initialization)" for
 * Class.forName0, else "inside the JVM under native X.m". Returns 1 when it is a class
 * initialization (cls then names the class when the bytecode does), 0 when it is not, -1 when
 * it cannot tell (no bytecodes or constant pool). */
int vmblock_describe(jvmtiEnv *jvmti, jmethodID method, jlocation bci, char *out, size_t cap, char *cls,
                     size_t cls_cap);

/* Whether the class named name (binary name, dots) that method's instruction refers to is
 * initialized, as the loader of method's class knows it: 1 yes, 0 not yet (being initialized,
 * or failed), -1 unknown (that loader has not resolved it, no JNI, or a JVMTI error). A thread
 * blocked in the JVM at that instruction while it is 1 waits for something else than its
 * initialization. Walks the loader's classes: writer only, and rarely. */
int vmblock_class_initialized(jvmtiEnv *jvmti, JNIEnv *jni, jmethodID method, const char *name);

/* method is declared by java.lang.Object (its native wait). */
int vmblock_is_object_method(jvmtiEnv *jvmti, jmethodID method);

#endif
