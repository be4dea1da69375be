/* The user-space native frames of a thread that sleeps in a system call, read
 * from outside with nothing stopped: where the JNI library and its function
 * that block a carrier are (zero-touch's NATIVE_BLOCK pins, docs/zero-touch.md).
 *
 * The thread's pc and stack pointer at the system call's entry come from
 * /proc/PID/task/TID/syscall. From them libdw (elfutils) unwinds by each
 * module's call frame information (.eh_frame), reading the stack through
 * /proc/PID/mem: the thread sleeps, so its stack holds still (its frame
 * pointer, which the syscall file does not give, comes from the caller). It
 * stops at the first frame outside the executable mappings of files (the JVM's
 * generated code: a JNI method's native wrapper), so the last frame is the JNI
 * function itself. The syscall
 * file must read the same after the unwind, else nothing is told (the thread
 * woke in the middle). Needs ptrace-read access to the process (root). */
#ifndef VTPIN_KERNEL_USTACK_H
#define VTPIN_KERNEL_USTACK_H

#include <stddef.h>
#include <stdint.h>

#define USTACK_MAX_FRAMES 32

struct ustack_frame {
    uint64_t pc;
    char symbol[128]; /* "" when the module has no symbol for it */
    char module[256]; /* the module's path as the process maps it, "" when none */
    uint64_t offset;  /* pc from the module's start */
};

/* Up to cap frames of thread tid of process pid (host numbers, as proc_root sees them), innermost
 * first: how many (0: none could be read), -EAGAIN when the thread did not hold still (not asleep in
 * a system call, or woke during the read), -errno. bp: its user rbp at the call, which the kernel
 * view reads at its switch out (the syscall file does not say it), 0 when not known: a function built
 * with frame pointers finds its caller through it, so without it the unwind ends at such a frame. */
int ustack_read(const char *proc_root, int32_t pid, int32_t tid, uint64_t bp, struct ustack_frame *out, int cap);

#endif
