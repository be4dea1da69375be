/* What /proc says about one thread: its scheduler state, the syscall in
 * progress and its kernel stack. Used to seed the kernel view for a carrier
 * that is already asleep when it starts being tracked. */
#ifndef VTPIN_KERNEL_PROCTHREAD_H
#define VTPIN_KERNEL_PROCTHREAD_H

#include <stdint.h>

/* State letter of proc_root/tid/stat (R, S, D, ...) and, when the thread is
 * blocked in one, the syscall number of proc_root/tid/syscall (-1 otherwise)
 * and its second argument into *arg1 (may be NULL; -1 when none): a futex's op.
 * 0 or -errno. */
int procthread_state(const char *proc_root, int32_t tid, char *state, int32_t *syscall, int64_t *arg1);
/* proc_root/tid/stack as "func+0x1f\nfunc2+0x8" (innermost first), malloc'ed;
 * NULL when unreadable (it needs root) or empty. */
char *procthread_stack(const char *proc_root, int32_t tid);

#endif
