/* Syscall numbers to names, for the host's architecture (generated at build
 * time from <asm/unistd_64.h>; x86-64 only for now). */
#ifndef VTPIN_KERNEL_SYSCALLS_H
#define VTPIN_KERNEL_SYSCALLS_H

/* "nanosleep" for 35 on x86-64; NULL when unknown (or nr < 0). */
const char *syscalls_name(long nr);

#endif
